//! The engine with a real HTTP LLM client against an in-process fake endpoint: every fault
//! still gets an answer, marked with the method that gave it.

use std::sync::Arc;
use std::time::Duration;

use condense::llm::{Backoff, LiteLlm, RetryBudget, RetryPolicy};
use condense::methods::chunk::ChunkStrategy;
use condense::{Condenser, Config, Method, Mode, Request, Selection, TokenCounter};

use crate::support::fake_llm::{FakeLlm, Reply, dead_url};
use crate::support::inputs::shard_log;

const CONFIG: &str =
    "[defaults]\nthreshold_tokens = 400\nbudget_tokens = 300\ndeadline_ms = 3000\n";

/// About 6,000 tokens: above the threshold, small enough for one direct call.
fn output() -> String {
    shard_log(300)
}

fn condenser_for(url: &str, timeout: Duration) -> Condenser {
    let llm = LiteLlm::builder()
        .base_url(url)
        .model("summarizer")
        .api_key(Some("sk-engine-test".into()))
        .timeout(timeout)
        .context_window(128_000)
        .retry_policy(
            RetryPolicy::default()
                .with_backoff(Backoff::new(
                    Duration::from_millis(5),
                    Duration::from_millis(20),
                ))
                .with_budget(RetryBudget::new(Duration::from_secs(10), 100, 0.2)),
        )
        .build()
        .unwrap();
    Condenser::builder(Config::from_toml_str(CONFIG, "test.toml").unwrap())
        .summarizer(Arc::new(llm))
        .build()
        .unwrap()
}

fn request() -> Request<'static> {
    Request::new("read_log").with_query("which segment failed its checksum?")
}

#[tokio::test]
async fn an_llm_summary_comes_back_with_its_header() {
    let server = FakeLlm::scripted([Reply::completion(
        "Segment 777 on shard-2 failed its checksum.",
    )])
    .await;
    let condenser = condenser_for(&server.url(), Duration::from_secs(5));
    let text = output();
    let out = condenser.condense(&text, &request()).await;
    assert_eq!(out.method, Method::Llm, "{:?}", out.fallback);
    assert!(out.text.starts_with("[condense: llm, "));
    assert!(
        out.text
            .contains("Segment 777 on shard-2 failed its checksum.")
    );
    // The facts guard adds the error line the summary did not quote verbatim.
    assert!(
        out.text
            .contains("ERROR shard-2 segment 777 checksum mismatch")
    );
    // The prompt carried the tool, the query and the fenced output.
    let body = &server.received()[0].body;
    let user = body["messages"][1]["content"].as_str().unwrap();
    assert!(user.contains("read_log") && user.contains("which segment failed"));
    assert!(user.contains("<<<TOOL_OUTPUT ") && user.contains("checksum mismatch"));
    assert!(body["max_tokens"].as_u64().unwrap() <= 300);
}

#[tokio::test]
async fn rate_limit_with_retry_after_then_success_is_a_summary() {
    let server = FakeLlm::scripted([
        Reply::status(429, "slow down").with_header("retry-after", "0"),
        Reply::completion("summary after retry"),
    ])
    .await;
    let out = condenser_for(&server.url(), Duration::from_secs(5))
        .condense(&output(), &request())
        .await;
    assert_eq!(out.method, Method::Llm);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn server_error_then_success_is_a_summary() {
    let server = FakeLlm::scripted([Reply::status(500, "boom"), Reply::completion("ok")]).await;
    let out = condenser_for(&server.url(), Duration::from_secs(5))
        .condense(&output(), &request())
        .await;
    assert_eq!(out.method, Method::Llm);
}

#[tokio::test]
async fn persistent_failures_fall_back_to_extract_and_keep_the_error() {
    let server = FakeLlm::scripted([
        Reply::status(500, "boom"),
        Reply::status(500, "boom"),
        Reply::status(500, "boom"),
        Reply::status(500, "boom"),
    ])
    .await;
    let out = condenser_for(&server.url(), Duration::from_secs(5))
        .condense(&output(), &request())
        .await;
    assert_eq!(out.method, Method::Extract);
    assert!(
        out.fallback.as_deref().unwrap().contains("500"),
        "{:?}",
        out.fallback
    );
    assert!(out.tokens_after() <= 300);
    assert!(
        server.requests() <= 3,
        "retries are bounded: {}",
        server.requests()
    );
}

#[tokio::test]
async fn a_stalled_llm_is_cut_by_the_request_timeout() {
    let server = FakeLlm::scripted(std::iter::repeat_n(Reply::stall(), 5)).await;
    let started = std::time::Instant::now();
    let out = condenser_for(&server.url(), Duration::from_millis(200))
        .condense(&output(), &request())
        .await;
    assert_eq!(out.method, Method::Extract);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn the_deadline_bounds_the_whole_step() {
    // Each request would time out only after 30 s; the 3 s deadline answers first.
    let server = FakeLlm::scripted(std::iter::repeat_n(Reply::stall(), 5)).await;
    let started = std::time::Instant::now();
    let out = condenser_for(&server.url(), Duration::from_secs(30))
        .condense(&output(), &request())
        .await;
    assert_eq!(out.method, Method::Extract);
    assert!(out.fallback.as_deref().unwrap().contains("deadline"));
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_secs(3) && elapsed < Duration::from_secs(4),
        "{elapsed:?}"
    );
}

#[tokio::test]
async fn garbage_and_empty_answers_fall_back() {
    for reply in [
        Reply::json(200, "this is not json"),
        Reply::json(200, r#"{"choices": []}"#),
        Reply::completion("   "),
    ] {
        let server = FakeLlm::scripted(std::iter::repeat_n(reply, 4)).await;
        let out = condenser_for(&server.url(), Duration::from_secs(5))
            .condense(&output(), &request())
            .await;
        assert_eq!(out.method, Method::Extract, "{:?}", out.fallback);
    }
}

#[tokio::test]
async fn a_refused_connection_falls_back() {
    let url = dead_url().await;
    let out = condenser_for(&url, Duration::from_secs(5))
        .condense(&output(), &request())
        .await;
    assert_eq!(out.method, Method::Extract);
    let reason = out.fallback.expect("the LLM rung did not answer");
    assert!(
        reason.contains("could not reach the LLM endpoint"),
        "{reason}"
    );
}

#[tokio::test]
async fn a_map_reduce_past_its_deadline_answers_extractively_and_says_why() {
    // Every chunk summary stalls: the 3 s deadline ends the map, and map-reduce's own
    // extractive answer is the result, made once.
    let server = FakeLlm::with_handler(|_| Reply::stall()).await;
    let condenser = condenser_with_window(&server.url(), 8192);
    let started = std::time::Instant::now();
    let out = condenser.condense(&shard_log(1500), &request()).await;
    let elapsed = started.elapsed();
    assert_eq!(out.method, Method::Extract, "{:?}", out.fallback);
    let reason = out
        .fallback
        .as_deref()
        .expect("the LLM rung did not answer");
    assert!(reason.contains("missed the 3000 ms deadline"), "{reason}");
    assert!(out.text.starts_with("[condense: extract, "), "{}", out.text);
    assert!(out.tokens_after() <= 300);
    assert!(
        elapsed >= Duration::from_secs(3) && elapsed < Duration::from_secs(5),
        "{elapsed:?}"
    );
    assert!(
        !server.received().is_empty(),
        "the input went to map-reduce"
    );
}

#[tokio::test]
async fn an_overlong_answer_is_cut_to_the_budget() {
    let long = "word ".repeat(5000);
    let server = FakeLlm::scripted([Reply::completion(&long)]).await;
    let out = condenser_for(&server.url(), Duration::from_secs(5))
        .condense(&output(), &request())
        .await;
    assert_eq!(out.method, Method::Llm);
    assert!(TokenCounter::default().count(&out.text) <= 300);
}

#[tokio::test]
async fn the_cache_makes_repeats_free_and_shares_concurrent_runs() {
    let server = FakeLlm::scripted(std::iter::repeat_n(
        Reply::completion("cached summary").after(Duration::from_millis(200)),
        10,
    ))
    .await;
    let condenser = condenser_for(&server.url(), Duration::from_secs(5));
    let text = Arc::new(output());
    let runs: Vec<_> = (0..5)
        .map(|_| {
            let (condenser, text) = (condenser.clone(), text.clone());
            tokio::spawn(async move { condenser.condense(&text, &request()).await })
        })
        .collect();
    let mut fresh = 0;
    for run in runs {
        let out = run.await.unwrap();
        assert_eq!(out.method, Method::Llm);
        fresh += usize::from(!out.cached);
    }
    assert_eq!(fresh, 1, "one run computes, the others wait for it");
    assert_eq!(server.requests(), 1);
    let again = condenser.condense(&text, &request()).await;
    assert!(again.cached);
    assert_eq!(server.requests(), 1);
    // A different query is a different summary.
    let other = condenser
        .condense(&text, &Request::new("read_log").with_query("shard-4"))
        .await;
    assert!(!other.cached);
    assert_eq!(server.requests(), 2);
}

#[tokio::test]
async fn fallbacks_are_not_cached_so_the_llm_is_tried_again() {
    let server = FakeLlm::scripted([
        Reply::status(400, "bad request"),
        Reply::completion("second time lucky"),
    ])
    .await;
    let condenser = condenser_for(&server.url(), Duration::from_secs(5));
    let text = output();
    assert_eq!(
        condenser.condense(&text, &request()).await.method,
        Method::Extract
    );
    let second = condenser.condense(&text, &request()).await;
    assert_eq!(second.method, Method::Llm);
    assert!(!second.cached);
}

#[tokio::test]
async fn originals_are_retrievable_after_any_method() {
    let url = dead_url().await;
    let condenser = condenser_for(&url, Duration::from_secs(1));
    let text = output();
    for mode in [Mode::Auto, Mode::Extract, Mode::Truncate] {
        let out = condenser.condense(&text, &request().with_mode(mode)).await;
        let reference = out.reference.clone().unwrap();
        assert!(out.text.contains(&reference));
        assert_eq!(
            condenser
                .retrieve(&reference, Selection::All)
                .await
                .unwrap(),
            text
        );
        let tail = condenser
            .retrieve(
                &reference,
                Selection::Lines {
                    start: 301,
                    end: 301,
                },
            )
            .await
            .unwrap();
        assert!(tail.contains("checksum mismatch"));
    }
}

#[tokio::test]
async fn the_config_alone_points_condense_at_an_endpoint() {
    let server = FakeLlm::scripted([Reply::completion("from config")]).await;
    let config = Config::from_toml_str_with_env(
        CONFIG,
        "test.toml",
        [
            ("CONDENSE_LLM_BASE_URL".to_owned(), server.url()),
            ("CONDENSE_LLM_MODEL".to_owned(), "my-alias".to_owned()),
            ("CONDENSE_LLM_API_KEY".to_owned(), "sk-from-env".to_owned()),
        ],
    )
    .unwrap();
    let out = Condenser::new(config)
        .unwrap()
        .condense(&output(), &request())
        .await;
    assert_eq!(out.method, Method::Llm);
    let received = &server.received()[0];
    assert_eq!(received.body["model"], "my-alias");
    assert_eq!(received.headers["authorization"], "Bearer sk-from-env");
}

fn condenser_with_window(url: &str, window: usize) -> Condenser {
    let llm = LiteLlm::builder()
        .base_url(url)
        .api_key(Some("sk-engine-test".into()))
        .context_window(window)
        .build()
        .unwrap();
    Condenser::builder(Config::from_toml_str(CONFIG, "test.toml").unwrap())
        .summarizer(Arc::new(llm))
        .build()
        .unwrap()
}

#[tokio::test]
async fn outputs_larger_than_the_window_are_summarized_by_map_reduce() {
    let server =
        FakeLlm::with_handler(|_| Reply::completion("shard-2 segment 777 failed its checksum"))
            .await;
    let condenser = condenser_with_window(&server.url(), 8192);
    let out = condenser.condense(&shard_log(1500), &request()).await;
    assert_eq!(out.method, Method::MapReduce, "{:?}", out.fallback);
    assert!(out.text.starts_with("[condense: llm-map-reduce, "));
    assert!(out.tokens_after() <= 300);
    let received = server.received();
    let maps = received
        .iter()
        .filter(|r| {
            r.body["messages"][1]["content"]
                .as_str()
                .unwrap()
                .contains("This is part ")
        })
        .count();
    assert!(
        maps >= 5,
        "a 33k-token output in ≤4k-token chunks: {maps} map calls"
    );
    // The facts guard keeps the error line the summary did not quote verbatim.
    assert!(out.text.contains("checksum mismatch"));
}

#[tokio::test]
async fn a_request_can_choose_the_chunking_strategy() {
    // Semantic chunking cuts a log at whole lines and never repeats one; token chunking cuts
    // fixed windows with an overlap, so lines at each seam are sent twice.
    let server =
        FakeLlm::with_handler(|_| Reply::completion("shard-2 segment 777 failed its checksum"))
            .await;
    let condenser = condenser_with_window(&server.url(), 8192);
    let text = shard_log(1500);
    let lines_sent_twice = |from: usize| {
        let received = server.received();
        let maps: Vec<String> = received[from..]
            .iter()
            .map(|r| {
                r.body["messages"][1]["content"]
                    .as_str()
                    .unwrap()
                    .to_owned()
            })
            .filter(|user| user.contains("This is part "))
            .collect();
        assert!(maps.len() > 1, "map-reduce ran: {} map calls", maps.len());
        text.lines()
            .filter(|line| {
                let sent_in = maps.iter().filter(|map| map.lines().any(|l| l == *line));
                sent_in.count() > 1
            })
            .count()
    };
    let semantic = condenser.condense(&text, &request()).await;
    assert_eq!(
        semantic.method,
        Method::MapReduce,
        "{:?}",
        semantic.fallback
    );
    assert_eq!(lines_sent_twice(0), 0);
    let before = server.received().len();
    let token = condenser
        .condense(&text, &request().with_chunk_strategy(ChunkStrategy::Token))
        .await;
    assert_eq!(token.method, Method::MapReduce, "{:?}", token.fallback);
    assert!(!token.cached, "another strategy is another result");
    assert!(lines_sent_twice(before) > 0);
}

#[tokio::test]
async fn a_schema_hint_uses_the_extraction_prompts() {
    let server = FakeLlm::scripted([Reply::completion("segment: 777")]).await;
    let condenser = condenser_for(&server.url(), Duration::from_secs(5));
    let text = output();
    let out = condenser
        .condense(
            &text,
            &request().with_schema_hint("segment ids and shard names"),
        )
        .await;
    assert_eq!(out.method, Method::Llm);
    let user = server.received()[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        user.contains("Keep these kinds of detail: segment ids and shard names"),
        "{user}"
    );
}

#[tokio::test]
async fn an_unreachable_endpoint_is_named_as_the_reason_for_a_map_reduce_input() {
    let url = dead_url().await;
    // About 16,000 tokens: above `direct_max_tokens`, so the LLM rung is map-reduce.
    let out = condenser_for(&url, Duration::from_secs(1))
        .condense(&shard_log(800), &request())
        .await;
    assert_eq!(out.method, Method::Extract);
    let reason = out.fallback.expect("the LLM rung did not answer");
    assert!(
        reason.contains("could not reach the LLM endpoint"),
        "{reason}"
    );
    assert!(!reason.contains("chunk summaries failed"), "{reason}");
}

#[tokio::test]
async fn summarize_if_needed_bounds_the_answer_by_max_tokens() {
    let condenser = Condenser::new(Config::default()).unwrap();
    let value = serde_json::Value::String(output());
    let counter = TokenCounter::default();
    let before = counter.count(&output());
    let outcome = condenser
        .summarize_if_needed_outcome(&value, 1200, Some("which shard failed"), None)
        .await;
    assert_eq!(outcome.method, Method::Extract);
    // The bound is the caller's max_tokens, not half of it.
    assert!(outcome.tokens_after() <= 1200, "{}", outcome.tokens_after());
    assert!(outcome.tokens_after() > 600, "{}", outcome.tokens_after());
    assert_eq!(counter.count(&outcome.text), outcome.tokens_after());
    assert_eq!(outcome.tokens_before(), before);
    let reference = outcome.reference.expect("the original is kept");
    let original = condenser
        .retrieve(&reference, Selection::All)
        .await
        .unwrap();
    assert_eq!(original, output());
    let (text, condensed) = condenser
        .summarize_if_needed(&value, 1200, None, None)
        .await;
    assert!(condensed);
    assert!(counter.count(&text) <= 1200);
    let whole = condenser
        .summarize_if_needed_outcome(&value, before, None, None)
        .await;
    assert_eq!(whole.method, Method::PassThrough);
    assert_eq!(whole.text, output());
    assert_eq!(whole.tokens_before(), before);
}
