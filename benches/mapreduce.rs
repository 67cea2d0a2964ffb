//! Map-reduce wall time against concurrency, with a fake model of fixed latency, in real time.
//!
//! Run with `cargo bench --bench mapreduce`. Prints markdown tables:
//!
//! 1. For N chunks at map concurrency C with latency L: LLM calls (asserted to be chunks +
//!    merges), reduce levels, wall time, and the bound `(⌈N/C⌉ + levels) · L` times 1.1; once
//!    with merges in their own lane (the default), once with merges sharing the map's C.
//! 2. With `CONDENSE_CORPUS=DIR` (a directory of `*/input.txt`): chunking time of each input
//!    at the default chunk size.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use condense::TokenCounter;
use condense::config::default_reduce_concurrency;
use condense::llm::{BoxFuture, CompletionRequest, LlmError, Summarizer};
use condense::methods::chunk::{Chunk, ChunkOptions, chunk, detect_kind};
use condense::methods::mapreduce::{Hints, MapReduce, MapReduceOptions, MapReducePrompts};
use tokio::sync::Semaphore;

const LATENCY: Duration = Duration::from_millis(50);
const CONCURRENCY: usize = 5;
const GROUP: usize = 4;
/// Below one input line, so every level must merge down to one part.
const BUDGET: usize = 40;

#[derive(Debug)]
struct SleepyModel {
    calls: AtomicUsize,
}

impl Summarizer for SleepyModel {
    fn complete(&self, request: CompletionRequest) -> BoxFuture<'_, Result<String, LlmError>> {
        Box::pin(async move {
            self.calls.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(LATENCY).await;
            // The whole allowance: the worst case for the reduce tree.
            Ok(" ok".repeat(request.max_tokens as usize))
        })
    }

    fn context_window(&self) -> usize {
        128_000
    }

    fn model(&self) -> &str {
        "sleepy"
    }
}

#[derive(Debug)]
struct PlainPrompts;

impl MapReducePrompts for PlainPrompts {
    fn map(&self, chunk: &Chunk, _: &Hints<'_>, budget: usize) -> CompletionRequest {
        CompletionRequest::new("Summarize.", chunk.text(), budget as u32)
    }

    fn reduce(&self, parts: &[String], _: &Hints<'_>, budget: usize, _: bool) -> CompletionRequest {
        CompletionRequest::new("Merge.", parts.join("\n---\n"), budget as u32)
    }

    fn fingerprint(&self) -> u64 {
        0
    }
}

/// `n` log lines that each fill one 64-token chunk.
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

/// Merges per reduce level when groups of `GROUP` are merged until one part is left.
fn merges_per_level(mut parts: usize) -> Vec<usize> {
    let mut levels = Vec::new();
    while parts > 1 {
        parts = parts.div_ceil(GROUP);
        levels.push(parts);
    }
    levels
}

/// How merge calls are bounded in a row of the table.
#[derive(Clone, Copy)]
enum MergeLane {
    /// Their own lane, of the default size (half the map's, rounded up).
    Own,
    /// The map's lane: at most C calls of any kind in flight.
    Shared,
}

async fn wall_time_table() {
    println!(
        "| N | C | merge lane | L (ms) | calls | merges | levels | wall (ms) | (⌈N/C⌉+levels)·L (ms) | ×1.1 | ok |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let counter = TokenCounter::default();
    for lane in [MergeLane::Own, MergeLane::Shared] {
        for n in [8, 64, 256] {
            let model = Arc::new(SleepyModel {
                calls: AtomicUsize::new(0),
            });
            let options = MapReduceOptions::default()
                .with_chunk_tokens(64)
                .with_max_concurrency(CONCURRENCY)
                .with_group_size(GROUP)
                .with_verify_facts(false);
            let mut engine =
                MapReduce::new(model.clone(), Arc::new(PlainPrompts), options, counter);
            let lane_name = match lane {
                MergeLane::Own => format!("own, {}", default_reduce_concurrency(CONCURRENCY)),
                MergeLane::Shared => {
                    let limit = Arc::new(Semaphore::new(CONCURRENCY));
                    engine = engine
                        .with_concurrency_limit(limit.clone())
                        .with_reduce_limit(limit);
                    "shared".to_owned()
                }
            };
            let text = log_lines(n);
            let deadline = tokio::time::Instant::now() + Duration::from_secs(600);
            let started = Instant::now();
            let outcome = engine.run(&text, &Hints::default(), BUDGET, deadline).await;
            let wall = started.elapsed();

            let calls = model.calls.load(Ordering::Relaxed);
            assert_eq!(outcome.chunks, n, "one chunk per line");
            assert_eq!(
                calls,
                outcome.chunks + outcome.reduce_calls,
                "calls = chunks + merges"
            );
            assert_eq!(
                outcome.reduce_calls,
                merges_per_level(n).iter().sum::<usize>()
            );
            assert_eq!(outcome.levels, merges_per_level(n).len());
            let ms = |d: Duration| d.as_secs_f64() * 1000.0;
            let bound = ms(LATENCY) * (n.div_ceil(CONCURRENCY) + outcome.levels) as f64;
            let ok = if ms(wall) <= bound * 1.1 { "yes" } else { "no" };
            println!(
                "| {n} | {CONCURRENCY} | {lane_name} | {} | {calls} | {} | {} | {:.0} | {bound:.0} | {:.0} | {ok} |",
                LATENCY.as_millis(),
                outcome.reduce_calls,
                outcome.levels,
                ms(wall),
                bound * 1.1,
            );
        }
    }
}

fn chunking_table(dir: &str) {
    let counter = TokenCounter::default();
    let options = ChunkOptions::default();
    let mut inputs: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path().join("input.txt"))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    inputs.sort();
    println!();
    println!("| input | bytes | tokens | kind | chunks | chunking (ms) |");
    println!("|---|---|---|---|---|---|");
    for path in inputs {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let tokens = counter.count(&text);
        if tokens <= options.chunk_tokens {
            continue;
        }
        let kind = detect_kind(&text);
        let started = Instant::now();
        let chunks = chunk(&text, kind, &options, &counter);
        let elapsed = started.elapsed();
        let name = path
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!(
            "| {name} | {} | {tokens} | {kind:?} | {} | {:.1} |",
            text.len(),
            chunks.len(),
            elapsed.as_secs_f64() * 1000.0
        );
    }
}

fn main() {
    // `cargo bench` passes `--bench`; nothing else is accepted.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(wall_time_table());
    if let Ok(dir) = std::env::var("CONDENSE_CORPUS") {
        chunking_table(&dir);
    }
}
