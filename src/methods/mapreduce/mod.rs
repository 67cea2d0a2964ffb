//! Map-reduce summaries for outputs larger than the model's window.
//!
//! [`MapReduce::run`] cuts the text into chunks that fit the model ([`chunk`](super::chunk)),
//! summarizes every chunk concurrently with at most
//! [`max_concurrency`](MapReduceOptions::max_concurrency) LLM calls in flight (the **map**), then
//! merges the summaries in groups of [`group_size`](MapReduceOptions::group_size), level by
//! level, until the result fits the budget (the **reduce**). The merge of the last group is told
//! it is final and gets the whole budget.
//!
//! - **Schedule.** The tree climbs while the map runs: a merge starts as soon as its group is in
//!   and its level is known not to fit, in a lane of
//!   [`reduce_concurrency`](MapReduceOptions::reduce_concurrency) calls of its own. With a fixed
//!   latency `L`, a run over `N` chunks takes about `(⌈N / max_concurrency⌉ + levels) · L`.
//! - **Budgets.** Each map and intermediate merge answer gets a share of the budget (see
//!   [`ChunkBudget`]), capped so that a group of answers, the merge prompt and the merge's own
//!   answer fit the model's window. Chunks are made small enough that a chunk, its prompt and
//!   its answer fit too. Answers longer than their share are cut to it.
//! - **Early stop.** When the summaries of a level, joined, already fit the budget, they are the
//!   answer: no merge is spent on text that needs no shrinking.
//! - **Cache.** With a [`ChunkCache`], every successful map and merge answer is kept under a
//!   128-bit hash of what produced it (chunk or parts, query, tool, schema hint, prompt
//!   fingerprint, model, budget), so a second call on a grown log re-maps only the new chunks.
//! - **Failures.** A chunk whose LLM call fails (after the summarizer's own retries) is
//!   replaced by the extractive condensing of that chunk and listed in
//!   [`MapReduceOutcome::fallbacks`]; a failed merge is replaced the same way. A panicking
//!   summarizer counts as a failed call.
//! - **Deadline.** When the deadline passes before the reduce is done, all calls in flight are
//!   cancelled and the extractive condensing of the whole text is the answer
//!   ([`MapReduceOutcome::timed_out`]): never nothing. Answers that arrived before the deadline
//!   are in the cache, so a retry resumes where the late run stopped.
//! - **Critique.** Optionally (off by default, at most [`MAX_CRITIQUE_ROUNDS`]), the summary is
//!   sent back with [`MapReducePrompts::critique`]; an answer starting with `PASS` accepts it,
//!   any other answer replaces it.
//! - **Facts guard.** Last, the engine's facts guard appends the error
//!   lines and the identifiers the query names that the summary lost. The text is at most the
//!   budget by the counter, always.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Duration;
//! use condense::TokenCounter;
//! use condense::llm::{BoxFuture, CompletionRequest, LlmError, Summarizer};
//! use condense::methods::chunk::Chunk;
//! use condense::methods::mapreduce::{Hints, MapReduce, MapReduceOptions, MapReducePrompts};
//!
//! /// Answers every request with its first words.
//! #[derive(Debug)]
//! struct FirstWords;
//! impl Summarizer for FirstWords {
//!     fn complete(&self, request: CompletionRequest) -> BoxFuture<'_, Result<String, LlmError>> {
//!         let words: Vec<&str> = request.user.split_whitespace().take(5).collect();
//!         let answer = words.join(" ");
//!         Box::pin(async move { Ok(answer) })
//!     }
//!     fn context_window(&self) -> usize { 8192 }
//!     fn model(&self) -> &str { "first-words" }
//! }
//!
//! #[derive(Debug)]
//! struct Prompts;
//! impl MapReducePrompts for Prompts {
//!     fn map(&self, chunk: &Chunk, _: &Hints<'_>, budget: usize) -> CompletionRequest {
//!         CompletionRequest::new("Summarize.", chunk.text(), budget as u32)
//!     }
//!     fn reduce(&self, parts: &[String], _: &Hints<'_>, budget: usize, _: bool) -> CompletionRequest {
//!         CompletionRequest::new("Merge.", parts.join("\n"), budget as u32)
//!     }
//!     fn fingerprint(&self) -> u64 { 1 }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let options = MapReduceOptions::default().with_chunk_tokens(500);
//! let engine = MapReduce::new(Arc::new(FirstWords), Arc::new(Prompts), options, TokenCounter::default());
//! let text = "the pump runs at forty PSI. ".repeat(2000);
//! let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
//! let outcome = engine.run(&text, &Hints::default(), 300, deadline).await;
//! assert!(outcome.chunks > 1);
//! assert_eq!(outcome.map_calls, outcome.chunks);
//! assert!(TokenCounter::default().count(&outcome.text) <= 300);
//! # });
//! ```

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout_at};
use tracing::{Instrument, debug, info, info_span, warn};

use crate::TokenCounter;
use crate::config::default_reduce_concurrency;
use crate::llm::{CompletionRequest, LlmError, Summarizer};
use crate::methods::chunk::{ChunkStrategy, chunk, detect_kind};
use crate::methods::contained::extract_contained;
use crate::methods::extract::extract;
use crate::methods::truncate::truncate;
use crate::methods::verify::guard_facts_counted;
use reduce_tree::{Filled, Merge, PartSizing, ReduceTree};

mod cache;
mod options;
mod reduce_tree;
mod sizing;
#[cfg(test)]
mod tests;

pub use cache::ChunkCache;
pub(crate) use cache::{ChunkSummaries, MemoryTier};
pub(crate) use options::ProgressFn;
pub use options::{
    ChunkBudget, Hints, MAX_CRITIQUE_ROUNDS, MapReduceOptions, MapReduceOutcome, MapReducePrompts,
    Progress,
};

/// The map-reduce driver. Cheap to clone; clones share the concurrency limit and the cache.
#[derive(Debug, Clone)]
pub struct MapReduce {
    llm: Arc<dyn Summarizer>,
    prompts: Arc<dyn MapReducePrompts>,
    options: MapReduceOptions,
    counter: TokenCounter,
    cache: Option<ChunkCache>,
    in_flight: Arc<Semaphore>,
    reduce_in_flight: Arc<Semaphore>,
}

/// Where a part sits in the reduce tree: (level, index); level 0 is the map.
type Slot = (usize, usize);

/// One LLM call to make: where its answer goes, its request, the budget its answer is cut to,
/// and its cache key.
#[derive(Debug)]
struct Job {
    slot: Slot,
    request: CompletionRequest,
    budget: usize,
    key: u128,
}

/// A call in flight.
#[derive(Debug)]
struct Running {
    slot: Slot,
    budget: usize,
    key: u128,
}

/// The calls of one run: those in flight, and answers (or their replacements) waiting to be
/// recorded in the tree. Dropping it cancels every call in flight.
#[derive(Default)]
struct Calls {
    tasks: JoinSet<Result<String, LlmError>>,
    running: HashMap<tokio::task::Id, Running>,
    arrived: VecDeque<(Slot, String)>,
}

impl MapReduce {
    /// A driver calling `llm` with requests rendered by `prompts`, counting with `counter`.
    /// Without [`with_cache`](MapReduce::with_cache) nothing is cached.
    pub fn new(
        llm: Arc<dyn Summarizer>,
        prompts: Arc<dyn MapReducePrompts>,
        options: MapReduceOptions,
        counter: TokenCounter,
    ) -> Self {
        let in_flight = Arc::new(Semaphore::new(options.max_concurrency.max(1)));
        let reduce_lane = options
            .reduce_concurrency
            .unwrap_or_else(|| default_reduce_concurrency(options.max_concurrency));
        let reduce_in_flight = Arc::new(Semaphore::new(reduce_lane.max(1)));
        MapReduce {
            llm,
            prompts,
            options,
            counter,
            cache: None,
            in_flight,
            reduce_in_flight,
        }
    }

    /// Keeps map and merge answers in `cache` (shared with every other holder of it).
    #[must_use]
    pub fn with_cache(mut self, cache: ChunkCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Counts this driver's map and critique calls against `limit` instead of its own
    /// [`max_concurrency`](MapReduceOptions::max_concurrency) permits, so that other callers of
    /// the same model share one bound.
    #[must_use]
    pub fn with_concurrency_limit(mut self, limit: Arc<Semaphore>) -> Self {
        self.in_flight = limit;
        self
    }

    /// Counts this driver's merge calls against `limit` instead of its own
    /// [`reduce_concurrency`](MapReduceOptions::reduce_concurrency) permits, so that other runs
    /// share one bound.
    #[must_use]
    pub fn with_reduce_limit(mut self, limit: Arc<Semaphore>) -> Self {
        self.reduce_in_flight = limit;
        self
    }

    /// The options this driver runs with.
    pub fn options(&self) -> &MapReduceOptions {
        &self.options
    }

    /// Summarizes `text` for `hints` into at most `budget` tokens, giving up on the LLM at
    /// `deadline` (see the module docs for each step). Never fails: the worst case is the
    /// extractive condensing of the whole text.
    pub async fn run(
        &self,
        text: &str,
        hints: &Hints<'_>,
        budget: usize,
        deadline: Instant,
    ) -> MapReduceOutcome {
        let span = info_span!(
            "map_reduce",
            input_bytes = text.len(),
            budget,
            model = self.llm.model(),
            chunks = tracing::field::Empty,
            map_calls = tracing::field::Empty,
            reduce_calls = tracing::field::Empty,
            cache_hits = tracing::field::Empty,
            fallbacks = tracing::field::Empty,
            levels = tracing::field::Empty,
            timed_out = tracing::field::Empty,
        );
        self.run_in(text, hints, budget, deadline, &span)
            .instrument(span.clone())
            .await
    }

    async fn run_in(
        &self,
        text: &str,
        hints: &Hints<'_>,
        budget: usize,
        deadline: Instant,
        span: &tracing::Span,
    ) -> MapReduceOutcome {
        let started = Instant::now();
        let mut outcome = MapReduceOutcome::default();
        if budget == 0 {
            return outcome;
        }
        if !self.counter.exceeds(text, budget) {
            outcome.text = text.to_owned();
            return outcome;
        }
        let summary =
            timeout_at(deadline, self.map_reduce(text, hints, budget, &mut outcome)).await;
        outcome.fallbacks.sort_unstable();
        let mut summary = match summary {
            Ok(summary) => summary,
            Err(_) => {
                warn!("deadline passed before the reduce was done; condensing extractively");
                outcome.timed_out = true;
                // Contained as the engine's extractive rung is, which takes this answer as its
                // own rather than condensing the text a second time.
                let whole: Arc<str> = Arc::from(text);
                extract_contained(whole, *hints, budget, self.counter)
                    .await
                    .unwrap_or_else(|| truncate(text, budget, &self.counter, None))
            }
        };
        if !outcome.timed_out {
            summary = self
                .critique(summary, hints, budget, deadline, &mut outcome)
                .await;
        }
        if self.options.verify_facts {
            let (guarded, kept) =
                guard_facts_counted(text, &summary, hints.query, budget, &self.counter);
            summary = guarded;
            outcome.kept_verbatim = kept;
        }
        outcome.text = self.counter.prefix_within(&summary, budget).to_owned();
        self.report(Progress::Finished);
        span.record("chunks", outcome.chunks);
        span.record("map_calls", outcome.map_calls);
        span.record("reduce_calls", outcome.reduce_calls);
        span.record("cache_hits", outcome.cache_hits);
        span.record(
            "fallbacks",
            outcome.fallbacks.len() + outcome.merge_fallbacks,
        );
        span.record("levels", outcome.levels);
        span.record("timed_out", outcome.timed_out);
        info!(
            elapsed_ms = started.elapsed().as_millis() as u64,
            kept_verbatim = outcome.kept_verbatim,
            "map-reduce finished"
        );
        outcome
    }

    /// Chunk, map, reduce. Cancel-safe: dropping it aborts the calls in flight.
    async fn map_reduce(
        &self,
        text: &str,
        hints: &Hints<'_>,
        budget: usize,
        outcome: &mut MapReduceOutcome,
    ) -> String {
        let kind = hints.kind.unwrap_or_else(|| detect_kind(text));
        let strategy = if hints.schema_hint.is_some() {
            ChunkStrategy::Semantic
        } else {
            self.options.chunking.strategy
        };
        let layout = self.layout(hints, budget);
        let chunking = self
            .options
            .chunking
            .with_chunk_tokens(layout.chunk_tokens)
            .with_strategy(strategy);
        let chunks = chunk(text, kind, &chunking, &self.counter);
        outcome.chunks = chunks.len();
        info!(
            chunks = chunks.len(),
            chunk_tokens = layout.chunk_tokens,
            ?kind,
            ?strategy,
            "chunked"
        );
        self.report(Progress::Chunked {
            chunks: chunks.len(),
        });
        if chunks.is_empty() {
            return String::new();
        }

        let sizing = PartSizing {
            chunk_budget: self.options.chunk_budget,
            part_cap: layout.part_cap,
        };
        let map_budget = if chunks.len() == 1 {
            budget
        } else {
            sizing.for_parts(budget, chunks.len())
        };
        let mut tree = ReduceTree::new(
            chunks.len(),
            map_budget,
            budget,
            self.options.group_size,
            self.options.max_passes,
            sizing,
            self.counter,
        );
        let mut calls = Calls::default();
        let mut opened = 0;
        for (i, chunk) in chunks.iter().enumerate() {
            let job = Job {
                slot: (0, i),
                request: self.prompts.map(chunk, hints, map_budget),
                budget: map_budget,
                key: self.key(
                    b"map",
                    &[&chunk.context, &chunk.body],
                    hints,
                    map_budget,
                    false,
                ),
            };
            self.start(job, &mut calls, outcome).await;
        }
        self.report(Progress::Mapped {
            done: 0,
            total: chunks.len(),
        });

        loop {
            while let Some(((level, index), text)) = calls.arrived.pop_front() {
                let filled = tree.fill(level, index, text);
                let (done, total) = tree.progress(level);
                self.report(if level == 0 {
                    Progress::Mapped { done, total }
                } else {
                    Progress::Reduced { level, done, total }
                });
                if level == 0 && done == total {
                    info!(
                        map_calls = outcome.map_calls,
                        cache_hits = outcome.cache_hits,
                        fallbacks = outcome.fallbacks.len(),
                        "mapped"
                    );
                }
                while opened < tree.levels() {
                    opened += 1;
                    let (_, merges) = tree.progress(opened);
                    debug!(level = opened, merges, "reduce level opened");
                }
                match filled {
                    Filled::Merges(merges) => {
                        for merge in merges {
                            outcome.levels = outcome.levels.max(merge.level);
                            let job = self.merge_job(merge, hints);
                            self.start(job, &mut calls, outcome).await;
                        }
                    }
                    // Merges still in flight above this level are cancelled with `calls`.
                    Filled::Fits { level, text } => {
                        outcome.levels = level;
                        return text;
                    }
                    Filled::PassLimit { level, joined } => {
                        warn!(levels = level, "reduce pass limit reached");
                        outcome.levels = level;
                        outcome.merge_fallbacks += 1;
                        return extract(&joined, hints, budget, &self.counter);
                    }
                }
            }
            let Some(finished) = calls.tasks.join_next_with_id().await else {
                break;
            };
            let (id, result) = match finished {
                Ok((id, result)) => (id, result),
                // A panicking summarizer is a failed call, not a failed run.
                Err(error) => (
                    error.id(),
                    Err(LlmError::InvalidResponse("the call panicked".into())),
                ),
            };
            let Some(call) = calls.running.remove(&id) else {
                continue;
            };
            let (level, index) = call.slot;
            let text = match self.settle(&call, result, &mut outcome.first_error).await {
                Some(answer) => answer,
                None => {
                    let source = if level == 0 {
                        outcome.fallbacks.push(chunks[index].index);
                        chunks[index].text()
                    } else {
                        outcome.merge_fallbacks += 1;
                        tree.group_text(level, index)
                    };
                    extract(&source, hints, call.budget, &self.counter)
                }
            };
            calls.arrived.push_back(((level, index), text));
        }
        // Not reached: every part arrives, and a complete level either fits, opens the level
        // above, or meets the pass limit.
        warn!("the reduce ended without an answer; condensing extractively");
        extract(text, hints, budget, &self.counter)
    }

    /// The call that runs `merge`.
    fn merge_job(&self, merge: Merge, hints: &Hints<'_>) -> Job {
        let texts: Vec<&str> = merge.parts.iter().map(String::as_str).collect();
        let key = self.key(b"reduce", &texts, hints, merge.budget, merge.is_final);
        Job {
            slot: (merge.level, merge.index),
            request: self
                .prompts
                .reduce(&merge.parts, hints, merge.budget, merge.is_final),
            budget: merge.budget,
            key,
        }
    }

    /// A finished call's answer, cut to its budget and cached; `None` when the call failed or
    /// answered nothing, so that the caller condenses its input extractively instead.
    async fn settle(
        &self,
        call: &Running,
        result: Result<String, LlmError>,
        first_error: &mut Option<LlmError>,
    ) -> Option<String> {
        let (level, part) = call.slot;
        match result.map(|answer| self.fit_answer(&answer, call.budget)) {
            Ok(Some(answer)) => {
                if let Some(cache) = &self.cache {
                    cache.insert(call.key, Arc::from(answer.as_str())).await;
                }
                Some(answer)
            }
            Ok(None) => {
                warn!(level, part, "empty LLM answer; condensing extractively");
                None
            }
            Err(error) => {
                warn!(level, part, %error, "LLM call failed; condensing extractively");
                first_error.get_or_insert(error);
                None
            }
        }
    }

    /// Starts `job`: from the cache when it has the answer, else as an LLM call in the map's
    /// or the merges' lane.
    async fn start(&self, job: Job, calls: &mut Calls, outcome: &mut MapReduceOutcome) {
        if let Some(cache) = &self.cache
            && let Some(hit) = cache.get(job.key).await
        {
            outcome.cache_hits += 1;
            calls.arrived.push_back((job.slot, hit.to_string()));
            return;
        }
        let lane = if job.slot.0 == 0 {
            outcome.map_calls += 1;
            Arc::clone(&self.in_flight)
        } else {
            outcome.reduce_calls += 1;
            Arc::clone(&self.reduce_in_flight)
        };
        let llm = Arc::clone(&self.llm);
        let request = job.request;
        let handle = calls.tasks.spawn(async move {
            // The semaphore is never closed; a closed one would only lift the bound.
            let _permit = lane.acquire_owned().await.ok();
            llm.complete(request).await
        });
        calls.running.insert(
            handle.id(),
            Running {
                slot: job.slot,
                budget: job.budget,
                key: job.key,
            },
        );
    }

    /// The answer trimmed and cut to `budget`; `None` when empty (an overflowing stream can
    /// answer nothing with success).
    fn fit_answer(&self, answer: &str, budget: usize) -> Option<String> {
        let answer = answer.trim();
        (!answer.is_empty()).then(|| {
            self.counter
                .prefix_within(answer, budget)
                .trim_end()
                .to_owned()
        })
    }

    /// Critique rounds, each bounded by the deadline; any failure keeps the summary as it is.
    async fn critique(
        &self,
        mut summary: String,
        hints: &Hints<'_>,
        budget: usize,
        deadline: Instant,
        outcome: &mut MapReduceOutcome,
    ) -> String {
        let rounds = self.options.critique_rounds.min(MAX_CRITIQUE_ROUNDS);
        for round in 1..=rounds {
            let Some(request) = self.prompts.critique(&summary, hints, budget) else {
                break;
            };
            let call = async {
                let _permit = self.in_flight.acquire().await.ok();
                self.llm.complete(request).await
            };
            outcome.critique_calls += 1;
            let answer = match timeout_at(deadline, call).await {
                Ok(Ok(answer)) => answer,
                Ok(Err(error)) => {
                    warn!(round, %error, "critique call failed; keeping the summary");
                    break;
                }
                Err(_) => {
                    warn!(
                        round,
                        "deadline passed during critique; keeping the summary"
                    );
                    break;
                }
            };
            self.report(Progress::Critiqued { round });
            let answer = answer.trim();
            if answer.is_empty() || answer.starts_with("PASS") {
                debug!(round, "critique passed");
                break;
            }
            debug!(round, "critique revised the summary");
            summary = self.counter.prefix_within(answer, budget).to_owned();
        }
        summary
    }

    fn report(&self, progress: Progress) {
        if let Some(callback) = &self.options.progress {
            (callback.0)(progress);
        }
    }
}
