//! A real LiteLLM proxy in front of a backend that fails: the `faulty-backend` model of
//! `scripts/litellm/mock.yaml` forwards to an OpenAI-compatible fake that each test scripts on
//! the port `start.sh` exported (`CONDENSE_TEST_FAULT_BACKEND_PORT`), and `dead-backend` forwards
//! to a port where nothing listens.
//!
//! Every fault must end the same way for the agent: an answer within the deadline plus a small
//! margin, marked with the method that gave it, the original retrievable, and a bounded number of
//! requests reaching the backend (counted at the backend and, for condense's own attempts, at a
//! relay in front of LiteLLM).

use std::sync::Arc;
use std::time::{Duration, Instant};

use condense::llm::{Backoff, LiteLlm, RetryBudget, RetryPolicy};
use condense::{Condensed, Condenser, Config, Method, Request, Selection};

use crate::litellm::proxy;
use crate::support::fake_llm::{FakeLlm, Reply};
use crate::support::inputs::shard_log;
use crate::support::relay::CountingRelay;

/// The deadline of every call here, and what an answer may take beyond it.
const DEADLINE: Duration = Duration::from_millis(3000);
const MARGIN: Duration = Duration::from_millis(1500);
/// condense's retries after a first failed attempt.
const MAX_RETRIES: u32 = 2;

/// The scripted backend has one fixed port, so the tests that script it take turns.
static BACKEND: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

fn backend_port() -> u16 {
    std::env::var("CONDENSE_TEST_FAULT_BACKEND_PORT")
        .expect("start.sh exports CONDENSE_TEST_FAULT_BACKEND_PORT with the proxy's URL and key")
        .parse()
        .expect("CONDENSE_TEST_FAULT_BACKEND_PORT is a port number")
}

/// About 6,000 tokens of log with one error line the query asks about.
fn output() -> String {
    shard_log(300)
}

fn condenser(relay_url: &str, key: &str, model: &str) -> Condenser {
    let generous = RetryBudget::new(Duration::from_secs(10), 100, 0.2);
    condenser_with(relay_url, key, model, generous, DEADLINE)
}

/// A condenser whose LLM client goes to `model` through the relay, with `retry_budget` and a
/// per-call `deadline`.
fn condenser_with(
    relay_url: &str,
    key: &str,
    model: &str,
    retry_budget: RetryBudget,
    deadline: Duration,
) -> Condenser {
    let config = format!(
        "[defaults]\nthreshold_tokens = 400\nbudget_tokens = 300\ndeadline_ms = {}\n",
        deadline.as_millis()
    );
    let llm = LiteLlm::builder()
        .base_url(relay_url)
        .model(model)
        .api_key(Some(key.to_owned()))
        // Longer than the deadline: the deadline is what must cut a stalled call.
        .timeout(deadline * 2)
        .max_retries(MAX_RETRIES)
        .context_window(128_000)
        .retry_policy(
            RetryPolicy::default()
                .with_backoff(Backoff::new(
                    Duration::from_millis(20),
                    Duration::from_millis(100),
                ))
                .with_budget(retry_budget),
        )
        .build()
        .unwrap();
    Condenser::builder(Config::from_toml_str(&config, "faults.toml").unwrap())
        .summarizer(Arc::new(llm))
        .build()
        .unwrap()
}

fn request() -> Request<'static> {
    Request::new("read_log").with_query("which segment failed its checksum?")
}

/// `host:port` of a base URL such as `http://127.0.0.1:4000`.
fn authority(url: &str) -> String {
    let rest = url.split_once("://").map_or(url, |(_, rest)| rest);
    rest.split('/').next().unwrap_or(rest).to_owned()
}

/// Numbers each call's query, so that a backend counts only the requests of its own call: a
/// request LiteLLM still holds for an earlier test's call (one the deadline cut) may reach the
/// fixed port once the next test's backend listens there.
static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// One condensed call through the relay and LiteLLM, timed; and the mark its query carries.
async fn condense_through(model: &str) -> Option<(Condensed, Duration, usize, Condenser, String)> {
    let (url, key) = proxy()?;
    let relay = CountingRelay::start(authority(&url)).await;
    let condenser = condenser(relay.url(), &key, model);
    let mark = format!(
        "zzcall{}",
        CALLS.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
    );
    let query = format!("which segment failed its checksum? {mark}");
    let started = Instant::now();
    let outcome = condenser
        .condense(&output(), &Request::new("read_log").with_query(&query))
        .await;
    Some((
        outcome,
        started.elapsed(),
        relay.requests(),
        condenser,
        mark,
    ))
}

/// What every fault must leave the agent with: an extractive answer in time that still has the
/// error line, the reason, and the original behind its ref.
async fn assert_fell_back(outcome: &Condensed, elapsed: Duration, condenser: &Condenser) {
    assert_eq!(outcome.method, Method::Extract, "{:?}", outcome.fallback);
    assert!(elapsed < DEADLINE + MARGIN, "answered after {elapsed:?}");
    assert!(outcome.fallback.is_some(), "the reason is kept");
    assert!(
        outcome.text.contains("segment 777 checksum mismatch"),
        "{}",
        outcome.text
    );
    assert!(
        outcome.tokens_after() <= 300,
        "{} tokens",
        outcome.tokens_after()
    );
    let reference = outcome
        .reference
        .as_deref()
        .expect("a condensed result has a ref");
    let original = condenser.retrieve(reference, Selection::All).await.unwrap();
    assert_eq!(original, output());
}

/// Runs one call against the scripted backend answering every request with `reply`; returns
/// the outcome, its time, condense's attempts (at the relay) and the backend's request count.
async fn against_backend(reply: Reply) -> Option<(Condensed, Duration, usize, usize, Condenser)> {
    proxy()?;
    let _turn = BACKEND.lock().await;
    let backend = FakeLlm::with_handler_on(backend_port(), move |_| reply.clone()).await;
    let (outcome, elapsed, attempts, condenser, mark) = condense_through("faulty-backend").await?;
    let backend_requests = (backend.received().iter())
        .filter(|r| r.body.to_string().contains(&mark))
        .count();
    drop(backend);
    Some((outcome, elapsed, attempts, backend_requests, condenser))
}

#[tokio::test]
async fn a_backend_answering_500_falls_back_after_bounded_retries() {
    let Some((outcome, elapsed, attempts, backend, condenser)) =
        against_backend(Reply::status(500, "backend exploded")).await
    else {
        return;
    };
    assert_fell_back(&outcome, elapsed, &condenser).await;
    assert_eq!(attempts, 1 + MAX_RETRIES as usize, "condense's attempts");
    assert_eq!(
        backend, attempts,
        "LiteLLM adds no retries of its own (num_retries: 0)"
    );
}

#[tokio::test]
async fn a_rate_limited_backend_falls_back_after_bounded_retries() {
    for reply in [
        Reply::status(429, "slow down"),
        Reply::status(429, "slow down").with_header("retry-after", "1"),
    ] {
        let Some((outcome, elapsed, attempts, backend, condenser)) = against_backend(reply).await
        else {
            return;
        };
        assert_fell_back(&outcome, elapsed, &condenser).await;
        assert_eq!(attempts, 1 + MAX_RETRIES as usize);
        assert_eq!(backend, attempts);
    }
}

#[tokio::test]
async fn non_json_and_truncated_bodies_fall_back() {
    for body in [
        "<html><body>502 Bad Gateway</body></html>",
        r#"{"id":"x","choices":[{"mess"#,
    ] {
        let Some((outcome, elapsed, attempts, backend, condenser)) =
            against_backend(Reply::json(200, body)).await
        else {
            return;
        };
        assert_fell_back(&outcome, elapsed, &condenser).await;
        // LiteLLM turns an unparsable answer into a 500, which condense retries.
        assert!(attempts <= 1 + MAX_RETRIES as usize, "{attempts} attempts");
        assert_eq!(backend, attempts);
    }
}

#[tokio::test]
async fn empty_choices_fall_back() {
    let body = r#"{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[]}"#;
    let Some((outcome, elapsed, attempts, backend, condenser)) =
        against_backend(Reply::json(200, body)).await
    else {
        return;
    };
    assert_fell_back(&outcome, elapsed, &condenser).await;
    assert!(attempts <= 1 + MAX_RETRIES as usize, "{attempts} attempts");
    assert_eq!(backend, attempts);
}

#[tokio::test]
async fn a_stalled_backend_is_cut_by_the_deadline() {
    let Some((outcome, elapsed, attempts, backend, condenser)) =
        against_backend(Reply::stall()).await
    else {
        return;
    };
    assert_fell_back(&outcome, elapsed, &condenser).await;
    assert!(
        elapsed >= DEADLINE,
        "the LLM had the whole deadline: {elapsed:?}"
    );
    assert!(
        outcome.fallback.as_deref().unwrap().contains("deadline"),
        "{:?}",
        outcome.fallback
    );
    assert_eq!((attempts, backend), (1, 1), "no retry fits after a stall");
}

#[tokio::test]
async fn an_overlong_answer_is_cut_to_the_budget() {
    let rambling = "The segment 777 on shard-2 failed its checksum. ".repeat(2_000);
    let Some((outcome, elapsed, attempts, _, _)) =
        against_backend(Reply::completion(&rambling)).await
    else {
        return;
    };
    assert_eq!(outcome.method, Method::Llm, "{:?}", outcome.fallback);
    assert!(
        outcome.tokens_after() <= 300,
        "{} tokens",
        outcome.tokens_after()
    );
    assert!(elapsed < DEADLINE + MARGIN);
    assert_eq!(attempts, 1);
}

#[tokio::test]
async fn a_dead_backend_falls_back_after_bounded_retries() {
    let Some((outcome, elapsed, attempts, condenser, _)) = condense_through("dead-backend").await
    else {
        return;
    };
    assert_fell_back(&outcome, elapsed, &condenser).await;
    assert_eq!(attempts, 1 + MAX_RETRIES as usize);
}

#[tokio::test]
async fn a_failing_backend_does_not_multiply_load_across_many_calls() {
    // 40 different outputs at once against a backend that always fails: the retry budget (one
    // retry per ten calls here, no reserve) keeps the total near the number of calls instead of
    // calls × (1 + retries).
    let Some((url, key)) = proxy() else { return };
    let _turn = BACKEND.lock().await;
    let backend =
        FakeLlm::with_handler_on(backend_port(), |_| Reply::status(500, "backend exploded")).await;
    let relay = CountingRelay::start(authority(&url)).await;
    // One retry per ten calls, no reserve. A long deadline: the calls queue behind the client's
    // concurrency limit, and each must get its first attempt for the count to mean something.
    let condenser = condenser_with(
        relay.url(),
        &key,
        "faulty-backend",
        RetryBudget::new(Duration::from_secs(10), 0, 0.1),
        Duration::from_secs(60),
    );
    let calls = 40;
    let outputs: Vec<String> = (0..calls)
        .map(|i| format!("call {i}\n{}", output()))
        .collect();
    let mut calls_in_flight = tokio::task::JoinSet::new();
    for text in outputs {
        let condenser = condenser.clone();
        calls_in_flight.spawn(async move { condenser.condense(&text, &request()).await.method });
    }
    while let Some(method) = calls_in_flight.join_next().await {
        assert_eq!(method.unwrap(), Method::Extract);
    }
    // condense's attempts, counted at the relay, are what the retry budget bounds. Under a
    // loaded machine an attempt can time out while LiteLLM still holds it, so the backend may
    // see fewer requests than condense made, never more: LiteLLM adds no retries of its own.
    let attempts = relay.requests();
    let requests = backend.requests();
    assert!(
        attempts >= calls,
        "every call tried once: {attempts} attempts"
    );
    assert!(
        attempts <= calls + calls / 10,
        "{attempts} attempts for {calls} calls: retries were not budgeted"
    );
    assert!(
        requests <= attempts,
        "the backend saw {requests} requests for condense's {attempts} attempts"
    );
}
