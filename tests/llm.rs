//! Fault tests of the LiteLLM client against an in-process fake endpoint.

use std::time::Duration;

use condense::llm::{
    Backoff, CompletionRequest, LiteLlm, LiteLlmBuilder, LlmError, RetryBudget, RetryPolicy,
    Summarizer,
};
use tokio::time::Instant;

use crate::support::fake_llm::{FakeLlm, Reply, dead_url};

const KEY: &str = "sk-condense-test-0123456789";

fn request() -> CompletionRequest {
    CompletionRequest::new("Summarize the data.", "some tool output", 100)
}

/// A client for `url` with short backoffs and a budget roomy enough not to interfere.
fn client(url: &str) -> LiteLlmBuilder {
    let retry = RetryPolicy::default()
        .with_backoff(Backoff::new(
            Duration::from_millis(10),
            Duration::from_millis(50),
        ))
        .with_budget(RetryBudget::new(Duration::from_secs(10), 100, 0.2));
    LiteLlm::builder()
        .base_url(url)
        .model("summarizer")
        .api_key(Some(KEY.to_owned()))
        .timeout(Duration::from_secs(5))
        .retry_policy(retry)
}

#[tokio::test]
async fn sends_an_openai_chat_completion_with_the_bearer_key() {
    let server = FakeLlm::scripted([Reply::completion("A summary.")]).await;
    let llm = client(&format!("{}/v1/", server.url())).build().unwrap();

    let answer = llm.complete(request()).await.unwrap();

    assert_eq!(answer, "A summary.");
    let received = server.received();
    assert_eq!(received.len(), 1);
    let sent = &received[0];
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.headers["authorization"], format!("Bearer {KEY}"));
    assert_eq!(sent.body["model"], "summarizer");
    assert_eq!(sent.body["max_tokens"], 100);
    assert_eq!(sent.body["stream"], false);
    assert_eq!(sent.body["temperature"], 0.0);
    assert_eq!(sent.body["messages"][0]["role"], "system");
    assert_eq!(sent.body["messages"][0]["content"], "Summarize the data.");
    assert_eq!(sent.body["messages"][1]["role"], "user");
    assert_eq!(sent.body["messages"][1]["content"], "some tool output");
}

#[tokio::test]
async fn sends_no_authorization_without_a_key() {
    let server = FakeLlm::scripted([Reply::completion("ok")]).await;
    let llm = client(&server.url()).api_key(None).build().unwrap();

    llm.complete(request()).await.unwrap();

    assert!(!server.received()[0].headers.contains_key("authorization"));
}

#[tokio::test(start_paused = true)]
async fn rate_limit_with_retry_after_waits_as_asked_then_succeeds() {
    let server = FakeLlm::scripted([
        Reply::status(429, "slow down").with_header("retry-after", "3"),
        Reply::completion("ok"),
    ])
    .await;
    let llm = client(&server.url()).build().unwrap();
    let started = Instant::now();

    let answer = llm.complete(request()).await.unwrap();

    assert_eq!(answer, "ok");
    assert_eq!(server.requests(), 2);
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(start_paused = true)]
async fn retry_after_longer_than_allowed_ends_the_call_at_once() {
    let server = FakeLlm::scripted([
        Reply::status(429, "come back tomorrow").with_header("retry-after", "86400"),
        Reply::completion("ok"),
    ])
    .await;
    let llm = client(&server.url()).build().unwrap();

    let error = llm.complete(request()).await.unwrap_err();

    assert!(error.is_rate_limited());
    assert_eq!(error.retry_after(), Some(Duration::from_secs(86400)));
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn rate_limit_without_retry_after_backs_off_then_succeeds() {
    let server = FakeLlm::scripted([
        Reply::error(429, "throttling_error", "rate limited"),
        Reply::completion("ok"),
    ])
    .await;
    let llm = client(&server.url()).build().unwrap();

    assert_eq!(llm.complete(request()).await.unwrap(), "ok");
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn persistent_rate_limit_gives_the_rate_limit_error_after_the_retries() {
    let server = FakeLlm::scripted([Reply::error(429, "throttling_error", "rate limited")]).await;
    let llm = client(&server.url()).max_retries(2).build().unwrap();

    let error = llm.complete(request()).await.unwrap_err();

    assert!(error.is_rate_limited(), "{error}");
    assert_eq!(error.status(), Some(429));
    assert_eq!(server.requests(), 3);
}

#[tokio::test]
async fn server_error_then_success_is_retried() {
    let server = FakeLlm::scripted([
        Reply::status(500, "Connection error."),
        Reply::completion("ok"),
    ])
    .await;
    let llm = client(&server.url()).build().unwrap();

    assert_eq!(llm.complete(request()).await.unwrap(), "ok");
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn backend_timeout_408_is_retried() {
    let server = FakeLlm::scripted([
        Reply::status(408, "Request timed out"),
        Reply::completion("ok"),
    ])
    .await;
    let llm = client(&server.url()).build().unwrap();

    assert_eq!(llm.complete(request()).await.unwrap(), "ok");
    assert_eq!(server.requests(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_stalled_answer_times_out_on_each_attempt() {
    let server = FakeLlm::scripted([Reply::stall()]).await;
    let llm = client(&server.url())
        .timeout(Duration::from_secs(2))
        .max_retries(1)
        .build()
        .unwrap();
    let started = Instant::now();

    let error = llm.complete(request()).await.unwrap_err();

    assert_eq!(error, LlmError::Timeout);
    assert!(error.is_timeout());
    assert_eq!(server.requests(), 2);
    let elapsed = started.elapsed();
    assert!(elapsed >= Duration::from_secs(4), "{elapsed:?}");
    assert!(elapsed < Duration::from_secs(60), "{elapsed:?}");
}

#[tokio::test(start_paused = true)]
async fn a_slow_answer_within_the_timeout_succeeds() {
    let server =
        FakeLlm::scripted([Reply::completion("late but fine").after(Duration::from_secs(3))]).await;
    let llm = client(&server.url())
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();

    assert_eq!(llm.complete(request()).await.unwrap(), "late but fine");
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_garbage_body_is_an_invalid_response_and_not_retried() {
    let server = FakeLlm::scripted([Reply::json(200, "<html>definitely not json")]).await;
    let llm = client(&server.url()).build().unwrap();

    let error = llm.complete(request()).await.unwrap_err();

    assert!(matches!(error, LlmError::InvalidResponse(_)), "{error}");
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn empty_choices_are_an_error_not_an_empty_summary() {
    let server = FakeLlm::scripted([Reply::json(200, r#"{"choices":[]}"#)]).await;
    let llm = client(&server.url()).build().unwrap();

    assert_eq!(
        llm.complete(request()).await.unwrap_err(),
        LlmError::EmptyAnswer
    );
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn an_empty_answer_is_an_error() {
    let server = FakeLlm::scripted([Reply::completion("")]).await;
    let llm = client(&server.url()).build().unwrap();

    assert_eq!(
        llm.complete(request()).await.unwrap_err(),
        LlmError::EmptyAnswer
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_connect_error_after_the_retries() {
    let llm = client(&dead_url().await).max_retries(1).build().unwrap();

    let error = llm.complete(request()).await.unwrap_err();

    assert!(matches!(error, LlmError::Connect { .. }), "{error}");
    // The transport's error is kept as a typed source, and says why.
    let cause = std::error::Error::source(&error).expect("the transport error");
    assert!(!cause.to_string().contains("127.0.0.1"), "{cause}");
    assert!(
        error.with_causes().to_lowercase().contains("refused"),
        "{}",
        error.with_causes()
    );
    assert!(error.is_retryable());
    assert!(!error.to_string().contains("127.0.0.1"), "{error}");
}

#[tokio::test]
async fn an_echoed_key_never_reaches_the_error() {
    let server = FakeLlm::scripted([Reply::echo_authorization(401)]).await;
    let llm = client(&server.url()).build().unwrap();

    let error = llm.complete(request()).await.unwrap_err();

    assert!(error.is_unauthorized(), "{error}");
    assert_eq!(server.requests(), 1, "a refused key is not retried");
    let shown = format!("{error} {error:?}");
    assert!(!shown.contains(KEY), "{shown}");
    assert!(!shown.contains("0123456789"), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");
}

#[tokio::test]
async fn litellm_wrong_key_without_database_is_unauthorized_and_not_retried() {
    let server =
        FakeLlm::scripted([Reply::error(400, "no_db_connection", "No connected db.")]).await;
    let llm = client(&server.url()).build().unwrap();

    let error = llm.complete(request()).await.unwrap_err();

    assert!(error.is_unauthorized(), "{error}");
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn context_window_exceeded_is_its_own_error_and_not_retried() {
    let server = FakeLlm::scripted([Reply::error(
        400,
        "invalid_request_error",
        "litellm.ContextWindowExceededError: litellm.BadRequestError: prompt too long",
    )])
    .await;
    let llm = client(&server.url()).build().unwrap();

    let error = llm.complete(request()).await.unwrap_err();

    assert!(error.is_context_overflow(), "{error}");
    assert_eq!(server.requests(), 1);
}

#[tokio::test]
async fn a_failing_backend_sees_at_most_one_plus_max_retries_requests_per_call() {
    let server = FakeLlm::scripted([Reply::status(503, "overloaded")]).await;
    let llm = client(&server.url()).max_retries(2).build().unwrap();

    for calls in 1..=3 {
        let error = llm.complete(request()).await.unwrap_err();
        assert_eq!(error.status(), Some(503));
        assert_eq!(server.requests(), calls * 3);
    }
}

#[tokio::test]
async fn the_retry_budget_caps_retries_across_calls() {
    let server = FakeLlm::scripted([Reply::status(500, "down")]).await;
    let retry = RetryPolicy::default()
        .with_max_retries(2)
        .with_backoff(Backoff::new(
            Duration::from_millis(1),
            Duration::from_millis(1),
        ))
        .with_budget(RetryBudget::new(Duration::from_secs(60), 0, 0.2));
    let llm = client(&server.url()).retry_policy(retry).build().unwrap();
    let calls = 20;

    for _ in 0..calls {
        assert!(llm.complete(request()).await.is_err());
    }

    // 20% of 20 calls earns 4 retries; without a budget there would be 40.
    let retries = server.requests() - calls;
    assert!(retries > 0, "the budget allows some retries");
    assert!(retries <= calls / 5, "{retries} retries");
}

#[tokio::test]
async fn clones_share_one_retry_budget() {
    let server = FakeLlm::scripted([Reply::status(500, "down")]).await;
    let retry = RetryPolicy::default()
        .with_backoff(Backoff::new(
            Duration::from_millis(1),
            Duration::from_millis(1),
        ))
        .with_budget(RetryBudget::new(Duration::from_secs(60), 0, 1.0));
    let llm = client(&server.url()).retry_policy(retry).build().unwrap();
    let clone = llm.clone();

    // One call earns one retry, which the first failure spends: the second retry is refused.
    assert!(llm.complete(request()).await.is_err());
    assert_eq!(server.requests(), 2);
    assert!(clone.complete(request()).await.is_err());
    assert_eq!(server.requests(), 4);
}

#[tokio::test]
async fn concurrency_to_the_endpoint_is_bounded_across_clones() {
    let server =
        FakeLlm::scripted([Reply::completion("ok").after(Duration::from_millis(50))]).await;
    let llm = client(&server.url()).max_concurrency(2).build().unwrap();

    let calls: Vec<_> = (0..6)
        .map(|_| {
            let llm = llm.clone();
            tokio::spawn(async move { llm.complete(request()).await })
        })
        .collect();
    for call in calls {
        assert_eq!(call.await.unwrap().unwrap(), "ok");
    }

    assert_eq!(server.requests(), 6);
    assert_eq!(server.max_in_flight(), 2);
}

#[tokio::test]
async fn an_error_status_without_a_body_still_explains_itself() {
    let server = FakeLlm::scripted([Reply::json(502, "")]).await;
    let llm = client(&server.url()).max_retries(0).build().unwrap();

    let error = llm.complete(request()).await.unwrap_err();

    assert_eq!(error.status(), Some(502));
    assert!(error.to_string().contains("502"), "{error}");
}

/// Every event the client logs, at every level, as text.
mod captured_events {
    use std::fmt::Write as _;
    use std::sync::{Arc, Mutex};

    use tracing::field::{Field, Visit};
    use tracing::span::{Attributes, Id, Record};
    use tracing::{Event, Metadata, Subscriber};

    #[derive(Clone, Default)]
    pub(crate) struct Capture {
        pub(crate) events: Arc<Mutex<Vec<String>>>,
    }

    struct Text<'a>(&'a mut String);

    impl Visit for Text<'_> {
        fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
            let _ = write!(self.0, "{}={:?} ", field.name(), value);
        }
    }

    impl Subscriber for Capture {
        fn enabled(&self, _: &Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &Attributes<'_>) -> Id {
            Id::from_u64(1)
        }
        fn record(&self, _: &Id, _: &Record<'_>) {}
        fn record_follows_from(&self, _: &Id, _: &Id) {}
        fn event(&self, event: &Event<'_>) {
            // Only the client's own events: hyper and reqwest log too.
            if !event.metadata().target().starts_with("condense") {
                return;
            }
            let mut text = format!("{} ", event.metadata().level());
            event.record(&mut Text(&mut text));
            self.events.lock().unwrap().push(text);
        }
        fn enter(&self, _: &Id) {}
        fn exit(&self, _: &Id) {}
    }
}

#[tokio::test(flavor = "current_thread")]
async fn logs_one_event_per_attempt_and_never_the_key() {
    let capture = captured_events::Capture::default();
    let _guard = tracing::subscriber::set_default(capture.clone());
    // Tests running in parallel register the client's log callsites with no subscriber in
    // scope, and a registration racing with `set_default` can leave one cached as disabled. Once
    // every callsite is registered (one failed and one good attempt), rebuilding the cache
    // makes them all see this thread's subscriber.
    let warm_up = FakeLlm::scripted([Reply::status(500, "warm-up"), Reply::completion("ok")]).await;
    let _ = client(&warm_up.url())
        .build()
        .unwrap()
        .complete(request())
        .await;
    tracing::callsite::rebuild_interest_cache();
    capture.events.lock().unwrap().clear();

    let server = FakeLlm::scripted([
        Reply::echo_authorization(500),
        Reply::echo_authorization(503),
        Reply::completion("ok"),
    ])
    .await;
    let llm = client(&server.url()).max_retries(2).build().unwrap();

    assert_eq!(llm.complete(request()).await.unwrap(), "ok");

    let events = capture.events.lock().unwrap().clone();
    let attempts: Vec<_> = events.iter().filter(|e| e.contains("attempt=")).collect();
    assert_eq!(attempts.len(), 3, "{events:#?}");
    assert!(attempts[0].contains("status=500"), "{}", attempts[0]);
    assert!(attempts[0].contains("retry_in_ms="), "{}", attempts[0]);
    assert!(attempts[2].contains("elapsed_ms="), "{}", attempts[2]);
    for event in &events {
        assert!(!event.contains("0123456789"), "{event}");
        assert!(
            !event.contains("some tool output"),
            "payload logged: {event}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn waiting_for_a_concurrency_slot_does_not_count_against_the_timeout() {
    let server = FakeLlm::scripted([Reply::completion("ok").after(Duration::from_secs(3))]).await;
    let llm = client(&server.url())
        .max_concurrency(1)
        .timeout(Duration::from_secs(4))
        .max_retries(0)
        .build()
        .unwrap();

    // The second call waits 3 s for the slot, then 3 s for its answer: 6 s, past the timeout.
    let (first, second) = tokio::join!(llm.complete(request()), llm.complete(request()));

    assert_eq!(first.unwrap(), "ok");
    assert_eq!(second.unwrap(), "ok");
    assert_eq!(server.max_in_flight(), 1);
}
