//! Map-reduce driver: tree shape, concurrency, cache, failures, deadline, critique, chunker
//! properties. Time-based tests run on paused tokio time, so latencies cost nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use condense::TokenCounter;
use condense::llm::{BoxFuture, CompletionRequest, LlmError, Summarizer};
use condense::methods::chunk::{Chunk, ChunkOptions, ChunkStrategy, ContentKind, chunk};
use condense::methods::mapreduce::{
    ChunkCache, Hints, MapReduce, MapReduceOptions, MapReducePrompts, Progress,
};
use proptest::prelude::*;
use tokio::time::Instant;

const MAP_SYSTEM: &str = "map";
const REDUCE_SYSTEM: &str = "reduce";
const CRITIQUE_SYSTEM: &str = "critique";

/// A model with a fixed latency that answers `answer_tokens` words (at most `max_tokens`),
/// fails or panics on requests containing a marker, and counts what it sees.
#[derive(Debug)]
struct FakeLlm {
    latency: Duration,
    window: usize,
    answer_tokens: usize,
    fail_marker: Option<&'static str>,
    panic_marker: Option<&'static str>,
    critique_answer: &'static str,
    calls: AtomicUsize,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
    /// Per system prompt (map, reduce, critique): calls in flight now, and the most at once.
    lanes: Mutex<HashMap<String, (usize, usize)>>,
    requests: Mutex<Vec<CompletionRequest>>,
}

impl FakeLlm {
    fn new(latency_ms: u64) -> Self {
        FakeLlm {
            latency: Duration::from_millis(latency_ms),
            window: 1_000_000,
            answer_tokens: 80,
            fail_marker: None,
            panic_marker: None,
            critique_answer: "PASS",
            calls: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
            lanes: Mutex::new(HashMap::new()),
            requests: Mutex::new(Vec::new()),
        }
    }

    fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }

    /// The most calls with this system prompt that were in flight at once.
    fn max_in_flight_of(&self, system: &str) -> usize {
        self.lanes
            .lock()
            .unwrap()
            .get(system)
            .map_or(0, |lane| lane.1)
    }

    fn enter(&self, system: &str) {
        let mut lanes = self.lanes.lock().unwrap();
        let lane = lanes.entry(system.to_owned()).or_default();
        lane.0 += 1;
        lane.1 = lane.1.max(lane.0);
    }

    fn leave(&self, system: &str) {
        if let Some(lane) = self.lanes.lock().unwrap().get_mut(system) {
            lane.0 -= 1;
        }
    }

    fn users_of(&self, system: &str) -> Vec<String> {
        let requests = self.requests.lock().unwrap();
        requests
            .iter()
            .filter(|r| r.system == system)
            .map(|r| r.user.clone())
            .collect()
    }
}

impl Summarizer for FakeLlm {
    fn complete(&self, request: CompletionRequest) -> BoxFuture<'_, Result<String, LlmError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            self.enter(&request.system);
            self.requests.lock().unwrap().push(request.clone());
            tokio::time::sleep(self.latency).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            self.leave(&request.system);
            if self.panic_marker.is_some_and(|m| request.user.contains(m)) {
                panic!("summarizer bug");
            }
            if self.fail_marker.is_some_and(|m| request.user.contains(m)) {
                return Err(LlmError::Status {
                    status: 500,
                    message: "Connection error.".into(),
                    retry_after: None,
                });
            }
            if request.system == CRITIQUE_SYSTEM {
                return Ok(self.critique_answer.to_owned());
            }
            let words = self.answer_tokens.min(request.max_tokens as usize);
            Ok(" ok".repeat(words))
        })
    }

    fn context_window(&self) -> usize {
        self.window
    }

    fn model(&self) -> &str {
        "fake"
    }
}

#[derive(Debug)]
struct TestPrompts {
    critique: bool,
}

impl MapReducePrompts for TestPrompts {
    fn map(&self, chunk: &Chunk, hints: &Hints<'_>, budget: usize) -> CompletionRequest {
        let query = hints.query.unwrap_or_default();
        CompletionRequest::new(
            MAP_SYSTEM,
            format!("{query}\n{}", chunk.text()),
            budget as u32,
        )
    }

    fn reduce(&self, parts: &[String], _: &Hints<'_>, budget: usize, _: bool) -> CompletionRequest {
        CompletionRequest::new(REDUCE_SYSTEM, parts.join("\n---\n"), budget as u32)
    }

    fn critique(&self, summary: &str, _: &Hints<'_>, budget: usize) -> Option<CompletionRequest> {
        self.critique
            .then(|| CompletionRequest::new(CRITIQUE_SYSTEM, summary, budget as u32))
    }

    fn fingerprint(&self) -> u64 {
        7
    }
}

fn counter() -> TokenCounter {
    TokenCounter::default()
}

/// `n` log lines of 40 to 60 tokens each: with 64-token chunks, one line per chunk.
fn log_lines(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "2024-03-01T10:{:02}:{:02} INFO request {i} served from cache shard {} in {} ms with status ok and no retries needed at all\n",
                i / 60 % 60,
                i % 60,
                i % 7,
                i * 3 % 101
            )
        })
        .collect()
}

fn engine(llm: &Arc<FakeLlm>, options: MapReduceOptions) -> MapReduce {
    MapReduce::new(
        Arc::clone(llm) as Arc<dyn Summarizer>,
        Arc::new(TestPrompts { critique: false }),
        options,
        counter(),
    )
}

fn one_line_chunks() -> MapReduceOptions {
    MapReduceOptions::default()
        .with_chunk_tokens(64)
        .with_verify_facts(false)
}

fn far() -> Instant {
    Instant::now() + Duration::from_secs(3600)
}

/// Merges per level of a tree that merges groups of `group` until one part is left.
fn expected_levels(mut parts: usize, group: usize) -> Vec<usize> {
    let mut levels = Vec::new();
    while parts > 1 {
        parts = parts.div_ceil(group);
        levels.push(parts);
    }
    levels
}

#[tokio::test(start_paused = true)]
async fn reduce_tree_merges_in_groups_of_four_level_by_level() {
    // Smaller than one line, so that one chunk is still over budget.
    let budget = 20;
    for n in (1..=20).chain([31, 64, 65, 100, 255, 256, 257, 300]) {
        let llm = Arc::new(FakeLlm::new(0));
        let outcome = engine(&llm, one_line_chunks())
            .run(&log_lines(n), &Hints::default(), budget, far())
            .await;
        let levels = expected_levels(n, 4);
        assert_eq!(outcome.chunks, n, "chunks for {n}");
        assert_eq!(outcome.levels, levels.len(), "levels for {n}");
        assert_eq!(
            outcome.reduce_calls,
            levels.iter().sum::<usize>(),
            "merges for {n}"
        );
        assert_eq!(outcome.map_calls, n);
        assert_eq!(llm.calls(), outcome.map_calls + outcome.reduce_calls);
        assert!(counter().count(&outcome.text) <= budget);
    }
}

#[tokio::test(start_paused = true)]
async fn summaries_that_fit_together_need_no_merge() {
    let llm = Arc::new(FakeLlm {
        answer_tokens: 5,
        ..FakeLlm::new(0)
    });
    let outcome = engine(&llm, one_line_chunks())
        .run(&log_lines(10), &Hints::default(), 100, far())
        .await;
    assert_eq!(outcome.levels, 0);
    assert_eq!(outcome.reduce_calls, 0);
    assert_eq!(outcome.text.matches("ok").count(), 50);
}

#[tokio::test(start_paused = true)]
async fn map_and_merge_calls_each_stay_within_their_lane() {
    let llm = Arc::new(FakeLlm::new(50));
    let options = one_line_chunks()
        .with_max_concurrency(3)
        .with_reduce_concurrency(1);
    let outcome = engine(&llm, options)
        .run(&log_lines(40), &Hints::default(), 100, far())
        .await;
    assert!(outcome.reduce_calls > 1);
    assert_eq!(llm.max_in_flight_of(MAP_SYSTEM), 3);
    assert_eq!(llm.max_in_flight_of(REDUCE_SYSTEM), 1);
    // Merges ran while the map did: the tree climbs without waiting for the last chunk.
    assert_eq!(llm.max_in_flight.load(Ordering::SeqCst), 4);
}

#[tokio::test(start_paused = true)]
async fn the_merge_lane_defaults_to_half_the_map_lane() {
    let llm = Arc::new(FakeLlm::new(50));
    // 16 chunks map in one round, so the 4 merges of level 1 are ready at once.
    let options = one_line_chunks().with_max_concurrency(16);
    engine(&llm, options)
        .run(&log_lines(16), &Hints::default(), 100, far())
        .await;
    assert_eq!(llm.max_in_flight_of(MAP_SYSTEM), 16);
    assert_eq!(llm.max_in_flight_of(REDUCE_SYSTEM), 4);
    let llm = Arc::new(FakeLlm::new(50));
    let options = one_line_chunks().with_max_concurrency(5);
    engine(&llm, options)
        .run(&log_lines(64), &Hints::default(), 100, far())
        .await;
    assert!(llm.max_in_flight_of(REDUCE_SYSTEM) <= 3);
}

#[tokio::test(start_paused = true)]
async fn wall_time_is_the_map_rounds_plus_one_latency_per_reduce_level() {
    // The bound of the benchmark, (⌈N/C⌉ + levels) · L, exact on paused time: merges run in
    // their own lane as soon as their group is complete, so only the last group of each level
    // waits for the map to end.
    let latency = Duration::from_millis(50);
    for (n, c) in [(8, 5), (64, 5), (256, 5), (30, 8), (100, 4)] {
        let llm = Arc::new(FakeLlm::new(50));
        let started = Instant::now();
        let options = one_line_chunks().with_max_concurrency(c);
        let outcome = engine(&llm, options)
            .run(&log_lines(n), &Hints::default(), 100, far())
            .await;
        let levels = expected_levels(n, 4);
        assert_eq!(outcome.levels, levels.len(), "n={n}");
        assert_eq!(outcome.reduce_calls, levels.iter().sum::<usize>(), "n={n}");
        let rounds = n.div_ceil(c) + levels.len();
        assert_eq!(
            started.elapsed(),
            latency * rounds as u32,
            "n={n} c={c} {outcome:?}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn a_grown_log_re_maps_only_its_new_chunks() {
    let llm = Arc::new(FakeLlm::new(10));
    let cache = ChunkCache::new(16 << 20);
    let options = MapReduceOptions::default()
        .with_chunk_tokens(400)
        .with_verify_facts(false);
    let mr = engine(&llm, options).with_cache(cache.clone());
    let first = mr.run(&log_lines(200), &Hints::default(), 100, far()).await;
    let second = mr.run(&log_lines(260), &Hints::default(), 100, far()).await;
    assert!(first.chunks > 10);
    assert!(second.chunks > first.chunks);
    // The last chunk of the first run may have grown; every other chunk is a hit.
    assert!(
        second.map_calls <= second.chunks - first.chunks + 1,
        "{second:?}"
    );
    assert!(second.cache_hits >= first.chunks - 1);
}

#[tokio::test(start_paused = true)]
async fn the_cache_key_includes_the_query() {
    let llm = Arc::new(FakeLlm::new(0));
    let mr = engine(&llm, one_line_chunks()).with_cache(ChunkCache::new(1 << 20));
    let text = log_lines(6);
    mr.run(
        &text,
        &Hints::default().with_query("cache shard 3?"),
        100,
        far(),
    )
    .await;
    let other = mr
        .run(&text, &Hints::default().with_query("status?"), 100, far())
        .await;
    assert_eq!(other.cache_hits, 0);
    let same = mr
        .run(&text, &Hints::default().with_query("status?"), 100, far())
        .await;
    assert_eq!(same.map_calls + same.reduce_calls, 0);
    assert_eq!(same.text, other.text);
}

#[tokio::test(start_paused = true)]
async fn a_failed_chunk_falls_back_to_extractive_and_is_marked() {
    let llm = Arc::new(FakeLlm {
        fail_marker: Some("request 5 served"),
        ..FakeLlm::new(10)
    });
    let outcome = engine(&llm, one_line_chunks())
        .run(&log_lines(12), &Hints::default(), 100, far())
        .await;
    assert_eq!(outcome.fallbacks, vec![5]);
    assert_eq!(outcome.map_calls, 12);
    assert!(!outcome.timed_out);
    assert!(counter().count(&outcome.text) <= 100);
    // The extractive stand-in of chunk 5 reached the first merge.
    assert!(
        llm.users_of(REDUCE_SYSTEM)
            .iter()
            .any(|u| u.contains("request 5 served"))
    );
}

#[tokio::test(start_paused = true)]
async fn a_panicking_summarizer_is_a_failed_call() {
    let llm = Arc::new(FakeLlm {
        panic_marker: Some("request 2 served"),
        ..FakeLlm::new(10)
    });
    let outcome = engine(&llm, one_line_chunks())
        .run(&log_lines(6), &Hints::default(), 100, far())
        .await;
    assert_eq!(outcome.fallbacks, vec![2]);
}

#[tokio::test(start_paused = true)]
async fn a_failed_merge_falls_back_to_extractive() {
    let llm = Arc::new(FakeLlm {
        fail_marker: Some("---"),
        ..FakeLlm::new(10)
    });
    let outcome = engine(&llm, one_line_chunks())
        .run(&log_lines(8), &Hints::default(), 100, far())
        .await;
    assert!(outcome.fallbacks.is_empty());
    assert!(outcome.merge_fallbacks >= 2);
    assert!(!outcome.text.is_empty() && counter().count(&outcome.text) <= 100);
}

#[tokio::test(start_paused = true)]
async fn the_deadline_gives_the_extractive_condensing_of_the_whole() {
    let llm = Arc::new(FakeLlm::new(10_000));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(1);
    let text = log_lines(30);
    let outcome = engine(&llm, one_line_chunks())
        .run(&text, &Hints::default(), 100, deadline)
        .await;
    assert!(outcome.timed_out);
    assert_eq!(started.elapsed(), Duration::from_secs(1));
    assert!(!outcome.text.is_empty());
    assert!(counter().count(&outcome.text) <= 100);
    // Extractive: lines of the input itself, not a model's words.
    assert!(
        outcome
            .text
            .lines()
            .any(|line| !line.is_empty() && text.contains(line))
    );
}

#[tokio::test(start_paused = true)]
async fn answers_before_the_deadline_are_cached_for_a_retry() {
    let llm = Arc::new(FakeLlm::new(100));
    let options = one_line_chunks().with_max_concurrency(2);
    let mr = engine(&llm, options).with_cache(ChunkCache::new(1 << 20));
    let text = log_lines(10);
    // Two rounds of two calls finish by 200 ms; the third round is cut off.
    let late = mr
        .run(
            &text,
            &Hints::default(),
            20,
            Instant::now() + Duration::from_millis(250),
        )
        .await;
    assert!(late.timed_out);
    let retry = mr.run(&text, &Hints::default(), 20, far()).await;
    assert!(!retry.timed_out);
    // The four map answers come back from the cache (and, as every fake answer is the same,
    // a merge can find its twin's answer there too).
    assert_eq!(retry.map_calls, 6, "{late:?} {retry:?}");
    assert!(retry.cache_hits >= 4, "{retry:?}");
}

#[tokio::test(start_paused = true)]
async fn text_within_the_budget_is_returned_unchanged_without_calls() {
    let llm = Arc::new(FakeLlm::new(10));
    let outcome = engine(&llm, one_line_chunks())
        .run("short", &Hints::default(), 100, far())
        .await;
    assert_eq!(outcome.text, "short");
    assert_eq!(llm.calls(), 0);
}

#[tokio::test(start_paused = true)]
async fn extraction_mode_always_chunks_semantically() {
    let mut text = String::from("# Zone\n\n");
    for npc in 0..30 {
        text.push_str(&format!(
            "## NPC {npc}\n\nName: npc-{npc}. Faction: guild {}. Rank {npc}.\n\n",
            npc % 3
        ));
    }
    let llm = Arc::new(FakeLlm::new(0));
    let options = one_line_chunks().with_strategy(ChunkStrategy::Token);
    let hints = Hints::default().with_schema_hint("NPCs with factions");
    engine(&llm, options).run(&text, &hints, 100, far()).await;
    let maps = llm.users_of(MAP_SYSTEM);
    assert!(
        maps.iter().all(|u| u.contains("# Zone")),
        "header context missing"
    );
}

#[tokio::test(start_paused = true)]
async fn critique_stops_at_pass() {
    let llm = Arc::new(FakeLlm::new(0));
    let options = one_line_chunks().with_critique_rounds(2);
    let mr = MapReduce::new(
        llm.clone(),
        Arc::new(TestPrompts { critique: true }),
        options,
        counter(),
    );
    let outcome = mr.run(&log_lines(8), &Hints::default(), 100, far()).await;
    assert_eq!(outcome.critique_calls, 1);
}

#[tokio::test(start_paused = true)]
async fn critique_revisions_are_capped_at_two_rounds() {
    let llm = Arc::new(FakeLlm {
        critique_answer: "A revised summary.",
        ..FakeLlm::new(0)
    });
    let options = one_line_chunks().with_critique_rounds(5);
    let mr = MapReduce::new(
        llm.clone(),
        Arc::new(TestPrompts { critique: true }),
        options,
        counter(),
    );
    let outcome = mr.run(&log_lines(8), &Hints::default(), 100, far()).await;
    assert_eq!(outcome.critique_calls, 2);
    assert_eq!(outcome.text, "A revised summary.");
}

#[tokio::test(start_paused = true)]
async fn the_facts_guard_keeps_errors_and_query_ids() {
    let mut text = log_lines(20);
    text.push_str("2024-03-01T11:00:00 ERROR shard 4 lost replica r-991\n");
    let llm = Arc::new(FakeLlm::new(0));
    let options = MapReduceOptions::default().with_chunk_tokens(64);
    let hints = Hints::default().with_query("what happened to request 17?");
    let outcome = engine(&llm, options).run(&text, &hints, 200, far()).await;
    assert!(outcome.text.contains("ERROR shard 4 lost replica r-991"));
    assert!(outcome.text.contains("request 17 served"));
    assert_eq!(outcome.kept_verbatim, 2);
    assert!(counter().count(&outcome.text) <= 200);
}

#[tokio::test(start_paused = true)]
async fn progress_reports_every_phase_in_order() {
    let events = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let options = one_line_chunks().with_progress(move |p| sink.lock().unwrap().push(p));
    let llm = Arc::new(FakeLlm::new(5));
    engine(&llm, options)
        .run(&log_lines(8), &Hints::default(), 100, far())
        .await;
    let events = events.lock().unwrap();
    assert_eq!(events.first(), Some(&Progress::Chunked { chunks: 8 }));
    assert!(events.contains(&Progress::Mapped { done: 8, total: 8 }));
    assert!(events.contains(&Progress::Reduced {
        level: 2,
        done: 1,
        total: 1
    }));
    assert_eq!(events.last(), Some(&Progress::Finished));
}

#[tokio::test(start_paused = true)]
async fn chunks_are_sized_to_the_model_window() {
    let llm = Arc::new(FakeLlm {
        window: 2000,
        ..FakeLlm::new(0)
    });
    let options = MapReduceOptions::default()
        .with_chunk_tokens(4000)
        .with_verify_facts(false);
    let outcome = engine(&llm, options)
        .run(&log_lines(200), &Hints::default(), 300, far())
        .await;
    assert!(outcome.chunks > 1);
    for user in llm.users_of(MAP_SYSTEM) {
        assert!(counter().count(&user) < 2000 * 9 / 10);
    }
}

// Chunker properties, on generated markdown-ish text.

fn arb_document() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        3 => "[a-z]{1,12}( [a-z0-9]{1,10}){0,12}",
        1 => "#{1,3} [A-Z][a-z]{2,10}",
        1 => Just(String::new()),
        1 => Just("---".to_owned()),
        1 => "[a-z]{200,400}",
    ];
    prop::collection::vec(line, 1..60).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn every_chunk_fits_and_no_content_is_lost(
        text in arb_document(),
        size in 32usize..200,
        overlap in 0usize..40,
        token_strategy in any::<bool>(),
    ) {
        let strategy = if token_strategy { ChunkStrategy::Token } else { ChunkStrategy::Semantic };
        let options = ChunkOptions::default().with_chunk_tokens(size).with_overlap_tokens(overlap).with_strategy(strategy);
        let chunks = chunk(&text, ContentKind::Markdown, &options, &counter());
        let mut covered = vec![false; text.len()];
        for c in &chunks {
            prop_assert!(counter().count(&c.text()) <= size, "{} > {size}", c.tokens);
            let span = c.span.clone().unwrap();
            prop_assert_eq!(&text[span.clone()], c.body.as_str());
            covered[span].iter_mut().for_each(|b| *b = true);
        }
        for (i, byte) in text.bytes().enumerate() {
            prop_assert!(covered[i] || byte.is_ascii_whitespace(), "byte {i} lost");
        }
    }

    #[test]
    fn chunks_inside_a_section_carry_its_header(text in arb_document(), size in 48usize..200) {
        let options = ChunkOptions::default().with_chunk_tokens(size);
        for c in chunk(&text, ContentKind::Markdown, &options, &counter()) {
            let start = c.span.clone().unwrap().start;
            // The nearest header line before the chunk, if any.
            let nearest = text[..start].lines().rev().find(|l| l.starts_with('#'));
            if let Some(header) = nearest
                && !c.body.starts_with('#') && counter().count(header) <= size / 4 {
                    prop_assert!(c.context.lines().any(|l| l == header.trim()), "{header:?} not in {:?}", c.context);
                }
        }
    }
}
