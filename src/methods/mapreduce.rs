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
//! - **Facts guard.** Last, [`verify::guard_facts`](super::verify::guard_facts) appends the error
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
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio::time::{Instant, timeout_at};
use tracing::{Instrument, debug, info, info_span, warn};
use xxhash_rust::xxh3::Xxh3;

use super::chunk::{Chunk, ChunkOptions, ChunkStrategy, ContentKind, chunk};
use super::extract::{ExtractHints, extract};
use super::reduce_tree::{Filled, MIN_PART_TOKENS, Merge, PartSizing, ReduceTree};
use super::verify::guard_facts_counted;
use crate::TokenCounter;
use crate::llm::{CompletionRequest, LlmError, Summarizer};

/// The most critique rounds run, whatever the options say: beyond two, critiques of a model by
/// itself oscillate more than they improve (seed 003).
pub const MAX_CRITIQUE_ROUNDS: usize = 2;

/// Tokens a chat template adds around the system and user messages, reserved on top of the
/// rendered prompt when sizing chunks against the window.
const CHAT_TEMPLATE_TOKENS: usize = 16;

/// How the map-reduce prompts are rendered: implemented from the prompt templates for plain
/// summaries and for extraction mode (with a schema hint).
///
/// Rendering must not fail and should be cheap; it runs once per chunk and per merge.
pub trait MapReducePrompts: Send + Sync + fmt::Debug {
    /// The request that condenses one chunk to at most `budget` tokens.
    fn map(&self, chunk: &Chunk, hints: &Hints<'_>, budget: usize) -> CompletionRequest;

    /// The request that merges `parts` into at most `budget` tokens; `is_final` on the merge
    /// whose answer is the summary.
    fn reduce(
        &self,
        parts: &[String],
        hints: &Hints<'_>,
        budget: usize,
        is_final: bool,
    ) -> CompletionRequest;

    /// The request that reviews a finished `summary` against the query: its answer is `PASS`,
    /// or a revised summary of at most `budget` tokens. `None` (the default) turns critique off
    /// whatever the options say.
    fn critique(
        &self,
        summary: &str,
        hints: &Hints<'_>,
        budget: usize,
    ) -> Option<CompletionRequest> {
        let _ = (summary, hints, budget);
        None
    }

    /// A stable hash of the templates, part of every chunk-cache key.
    fn fingerprint(&self) -> u64;
}

/// What is known about the call besides the text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Hints<'a> {
    /// What the agent is looking for, if it said.
    pub query: Option<&'a str>,
    /// The tool that produced the text.
    pub tool: Option<&'a str>,
    /// Extraction mode: the categories of detail to keep (names, ids, relationships, numbers).
    /// Extraction always chunks semantically.
    pub schema_hint: Option<&'a str>,
    /// What kind of text this is; guessed with [`ContentKind::detect`] when `None`.
    pub kind: Option<ContentKind>,
}

impl<'a> Hints<'a> {
    /// Sets the query.
    #[must_use]
    pub fn with_query(mut self, query: &'a str) -> Self {
        self.query = Some(query);
        self
    }

    /// Sets the tool name.
    #[must_use]
    pub fn with_tool(mut self, tool: &'a str) -> Self {
        self.tool = Some(tool);
        self
    }

    /// Turns on extraction mode with this schema hint.
    #[must_use]
    pub fn with_schema_hint(mut self, schema_hint: &'a str) -> Self {
        self.schema_hint = Some(schema_hint);
        self
    }

    /// Sets the content kind.
    #[must_use]
    pub fn with_kind(mut self, kind: ContentKind) -> Self {
        self.kind = Some(kind);
        self
    }

    fn for_extract(&self) -> ExtractHints<'a> {
        ExtractHints {
            query: self.query,
            tool: self.tool,
            ..ExtractHints::default()
        }
    }
}

/// The merge lane that keeps up with a map of `max_concurrency` calls: half of it, rounded up,
/// at least 1. A tree in groups of 4 has about a third as many merges as chunks, so a map
/// finishing `C` chunks per latency needs about `C / 3` merges per latency; the rest is slack
/// for the bursts when a level's last groups complete together.
///
/// ```
/// use condense::methods::mapreduce::default_reduce_concurrency;
/// assert_eq!(default_reduce_concurrency(5), 3);
/// assert_eq!(default_reduce_concurrency(1), 1);
/// ```
pub fn default_reduce_concurrency(max_concurrency: usize) -> usize {
    max_concurrency.div_ceil(2).max(1)
}

/// How many tokens each map answer and each intermediate merge answer may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunkBudget {
    /// An equal share of the final budget among the parts of a level, but at least `floor`:
    /// `max(budget / parts, floor)`, never more than the budget. The default, with a floor of
    /// 500 (seed 000), so that a chunk summary has room to keep its facts even when there are
    /// hundreds of chunks; the reduce levels then shrink them.
    Share {
        /// The least tokens a part gets.
        floor: usize,
    },
    /// The same number of tokens for every part.
    Fixed(usize),
}

impl Default for ChunkBudget {
    fn default() -> Self {
        ChunkBudget::Share { floor: 500 }
    }
}

impl ChunkBudget {
    /// The budget of one part when `parts` parts share a final `budget`.
    pub fn for_parts(self, budget: usize, parts: usize) -> usize {
        match self {
            ChunkBudget::Share { floor } => (budget / parts.max(1)).max(floor).min(budget),
            ChunkBudget::Fixed(tokens) => tokens,
        }
    }
}

/// Where a run is, for a progress display.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Progress {
    /// The text was cut into this many chunks.
    Chunked {
        /// Number of chunks.
        chunks: usize,
    },
    /// Map answers received (cache hits included) out of the chunks.
    Mapped {
        /// Answers so far.
        done: usize,
        /// Chunks.
        total: usize,
    },
    /// Merges done at a reduce level (1 is the first above the map).
    Reduced {
        /// The level.
        level: usize,
        /// Merges done so far at this level.
        done: usize,
        /// Merges at this level.
        total: usize,
    },
    /// A critique round finished.
    Critiqued {
        /// The round, from 1.
        round: usize,
    },
    /// The run is over.
    Finished,
}

/// A progress callback, called from the task running [`MapReduce::run`]; it should return
/// quickly.
#[derive(Clone)]
pub struct ProgressFn(Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressFn {
    /// Wraps a callback.
    pub fn new(callback: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        ProgressFn(Arc::new(callback))
    }
}

impl fmt::Debug for ProgressFn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ProgressFn")
    }
}

/// Settings of a map-reduce run. Every field has a documented default.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct MapReduceOptions {
    /// The most tokens per chunk, context included. Default 4000. Lowered at run time when a
    /// chunk, the map prompt and the answer would not fit the model's window.
    pub chunk_tokens: usize,
    /// Overlap in tokens where a unit is cut at token boundaries. Default 200.
    pub overlap_tokens: usize,
    /// How to cut. Default semantic; extraction mode is always semantic.
    pub strategy: ChunkStrategy,
    /// The most map and critique calls in flight at once. Default 5 (seed 000).
    pub max_concurrency: usize,
    /// The most merge calls in flight at once, in a lane of their own beside the map's, so that
    /// the tree climbs while the map is still running. Default `None`: half of
    /// `max_concurrency`, rounded up ([`default_reduce_concurrency`]). At most
    /// `max_concurrency + reduce_concurrency` calls of a run are in flight.
    pub reduce_concurrency: Option<usize>,
    /// Parts merged by one reduce call. Default 4 (seed 003). At least 2.
    pub group_size: usize,
    /// The most reduce levels. Default 8 (room for 4⁸ chunks at the default group size). Parts
    /// left after the last level are condensed extractively.
    pub max_passes: usize,
    /// The budget of each map and intermediate merge answer. Default `Share { floor: 500 }`.
    pub chunk_budget: ChunkBudget,
    /// Critique rounds after the reduce. Default 0 (off); at most [`MAX_CRITIQUE_ROUNDS`].
    pub critique_rounds: usize,
    /// Whether the facts guard runs on the result. Default true.
    pub verify_facts: bool,
    /// Called as the run advances. Default none.
    pub progress: Option<ProgressFn>,
}

impl Default for MapReduceOptions {
    fn default() -> Self {
        let chunking = ChunkOptions::default();
        MapReduceOptions {
            chunk_tokens: chunking.chunk_tokens,
            overlap_tokens: chunking.overlap_tokens,
            strategy: chunking.strategy,
            max_concurrency: 5,
            reduce_concurrency: None,
            group_size: 4,
            max_passes: 8,
            chunk_budget: ChunkBudget::default(),
            critique_rounds: 0,
            verify_facts: true,
            progress: None,
        }
    }
}

impl MapReduceOptions {
    /// Sets the most tokens per chunk (default 4000).
    #[must_use]
    pub fn with_chunk_tokens(mut self, chunk_tokens: usize) -> Self {
        self.chunk_tokens = chunk_tokens;
        self
    }

    /// Sets the overlap for token-boundary cuts (default 200).
    #[must_use]
    pub fn with_overlap_tokens(mut self, overlap_tokens: usize) -> Self {
        self.overlap_tokens = overlap_tokens;
        self
    }

    /// Sets the chunking strategy (default semantic).
    #[must_use]
    pub fn with_strategy(mut self, strategy: ChunkStrategy) -> Self {
        self.strategy = strategy;
        self
    }

    /// Sets the most map and critique calls in flight (default 5; at least 1).
    #[must_use]
    pub fn with_max_concurrency(mut self, max_concurrency: usize) -> Self {
        self.max_concurrency = max_concurrency;
        self
    }

    /// Sets the most merge calls in flight (default half of `max_concurrency`, rounded up; at
    /// least 1).
    #[must_use]
    pub fn with_reduce_concurrency(mut self, reduce_concurrency: usize) -> Self {
        self.reduce_concurrency = Some(reduce_concurrency);
        self
    }

    /// Sets the parts per merge (default 4; at least 2).
    #[must_use]
    pub fn with_group_size(mut self, group_size: usize) -> Self {
        self.group_size = group_size;
        self
    }

    /// Sets the most reduce levels (default 8).
    #[must_use]
    pub fn with_max_passes(mut self, max_passes: usize) -> Self {
        self.max_passes = max_passes;
        self
    }

    /// Sets the per-part budget rule (default `Share { floor: 500 }`).
    #[must_use]
    pub fn with_chunk_budget(mut self, chunk_budget: ChunkBudget) -> Self {
        self.chunk_budget = chunk_budget;
        self
    }

    /// Sets the critique rounds (default 0; at most [`MAX_CRITIQUE_ROUNDS`]).
    #[must_use]
    pub fn with_critique_rounds(mut self, critique_rounds: usize) -> Self {
        self.critique_rounds = critique_rounds;
        self
    }

    /// Turns the facts guard on or off (default on).
    #[must_use]
    pub fn with_verify_facts(mut self, verify_facts: bool) -> Self {
        self.verify_facts = verify_facts;
        self
    }

    /// Sets the progress callback (default none).
    #[must_use]
    pub fn with_progress(mut self, progress: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(ProgressFn::new(progress));
        self
    }
}

/// A cache of map and merge answers, weighted by bytes. Cheap to clone; clones share entries,
/// so one cache serves every run of every [`MapReduce`] it is given to.
#[derive(Clone)]
pub struct ChunkCache {
    entries: moka::future::Cache<u128, Arc<str>>,
}

impl fmt::Debug for ChunkCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChunkCache")
            .field("entries", &self.entries.entry_count())
            .field("bytes", &self.entries.weighted_size())
            .finish()
    }
}

impl ChunkCache {
    /// A cache holding at most about `max_bytes` of answers, kept until evicted.
    pub fn new(max_bytes: u64) -> Self {
        Self::build(max_bytes, None)
    }

    /// A cache holding at most about `max_bytes` of answers, each for at most `ttl`.
    pub fn with_ttl(max_bytes: u64, ttl: Duration) -> Self {
        Self::build(max_bytes, Some(ttl))
    }

    fn build(max_bytes: u64, ttl: Option<Duration>) -> Self {
        let mut builder = moka::future::Cache::builder()
            .max_capacity(max_bytes)
            // The key and the entry's bookkeeping cost about as much as a short answer.
            .weigher(|_key: &u128, answer: &Arc<str>| {
                u32::try_from(answer.len() + 64).unwrap_or(u32::MAX)
            });
        if let Some(ttl) = ttl {
            builder = builder.time_to_live(ttl);
        }
        ChunkCache {
            entries: builder.build(),
        }
    }

    async fn get(&self, key: u128) -> Option<Arc<str>> {
        self.entries.get(&key).await
    }

    async fn insert(&self, key: u128, answer: Arc<str>) {
        self.entries.insert(key, answer).await;
    }
}

/// What a run produced, and what it took.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct MapReduceOutcome {
    /// The summary: at most the budget by the counter.
    pub text: String,
    /// Chunks the text was cut into.
    pub chunks: usize,
    /// LLM calls made for chunks (cache hits excluded).
    pub map_calls: usize,
    /// LLM calls made for merges (cache hits excluded).
    pub reduce_calls: usize,
    /// LLM calls made for critique.
    pub critique_calls: usize,
    /// Map and merge answers taken from the cache.
    pub cache_hits: usize,
    /// Indexes of the chunks whose summary is the extractive condensing of the chunk, because
    /// their LLM call failed.
    pub fallbacks: Vec<usize>,
    /// Merges whose answer is extractive because their LLM call failed, or parts condensed
    /// extractively after the last reduce level.
    pub merge_fallbacks: usize,
    /// Reduce levels run: those whose answer is the summary when the run finishes, else those
    /// started.
    pub levels: usize,
    /// The deadline passed before the reduce was done: the text is the extractive condensing of
    /// the whole input.
    pub timed_out: bool,
    /// Facts the facts guard appended.
    pub kept_verbatim: usize,
    /// The first failed LLM call's error: the cause to name when every chunk fell back (an
    /// endpoint that is down, a key that is refused).
    pub first_error: Option<LlmError>,
}

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

/// Sizes derived from the model's window and the prompts for one run.
#[derive(Debug, Clone, Copy)]
struct Layout {
    chunk_tokens: usize,
    /// The most tokens a map or intermediate merge answer may have so that a group of them
    /// still fits a final merge.
    part_cap: usize,
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
                extract(text, &hints.for_extract(), budget, &self.counter)
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
        let kind = hints.kind.unwrap_or_else(|| ContentKind::detect(text));
        let strategy = if hints.schema_hint.is_some() {
            ChunkStrategy::Semantic
        } else {
            self.options.strategy
        };
        let layout = self.layout(hints, budget);
        let chunking = ChunkOptions::default()
            .with_chunk_tokens(layout.chunk_tokens)
            .with_overlap_tokens(self.options.overlap_tokens)
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
                        return extract(&joined, &hints.for_extract(), budget, &self.counter);
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
                    extract(&source, &hints.for_extract(), call.budget, &self.counter)
                }
            };
            calls.arrived.push_back(((level, index), text));
        }
        // Not reached: every part arrives, and a complete level either fits, opens the level
        // above, or meets the pass limit.
        warn!("the reduce ended without an answer; condensing extractively");
        extract(text, &hints.for_extract(), budget, &self.counter)
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

    /// Chunk size and part cap for this model window, prompts and budget.
    fn layout(&self, hints: &Hints<'_>, budget: usize) -> Layout {
        // The model's own tokenizer may count more tokens than ours: keep a tenth spare.
        let window = self.llm.context_window() - self.llm.context_window() / 10;
        let map_prompt = self.request_tokens(&self.prompts.map(&Chunk::new(0, "", ""), hints, 0));
        let merge_prompt = self.request_tokens(&self.prompts.reduce(&[], hints, budget, true));
        let group_size = self.options.group_size.max(2);
        let part_cap = window
            .saturating_sub(merge_prompt.saturating_add(budget))
            .checked_div(group_size)
            .unwrap_or(0)
            .max(MIN_PART_TOKENS);
        let answer = part_cap.min(budget);
        let chunk_tokens = self
            .options
            .chunk_tokens
            .min(window.saturating_sub(map_prompt + answer));
        Layout {
            chunk_tokens,
            part_cap,
        }
    }

    fn request_tokens(&self, request: &CompletionRequest) -> usize {
        self.counter.count(&request.system)
            + self.counter.count(&request.user)
            + CHAT_TEMPLATE_TOKENS
    }

    /// A 128-bit key over everything that shapes an answer. Every field is length-prefixed so
    /// that no two different inputs hash the same bytes.
    fn key(
        &self,
        tag: &[u8],
        texts: &[&str],
        hints: &Hints<'_>,
        budget: usize,
        is_final: bool,
    ) -> u128 {
        let mut hasher = Xxh3::new();
        let mut field = |bytes: &[u8]| {
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(tag);
        field(&self.prompts.fingerprint().to_le_bytes());
        field(self.llm.model().as_bytes());
        for hint in [hints.query, hints.tool, hints.schema_hint] {
            field(hint.unwrap_or("\u{0}none").as_bytes());
        }
        field(&(budget as u64).to_le_bytes());
        field(&[u8::from(is_final)]);
        field(&(texts.len() as u64).to_le_bytes());
        for text in texts {
            field(text.as_bytes());
        }
        hasher.digest128()
    }

    fn report(&self, progress: Progress) {
        if let Some(callback) = &self.options.progress {
            (callback.0)(progress);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug)]
    struct Window(usize);

    impl Summarizer for Window {
        fn complete(
            &self,
            _: CompletionRequest,
        ) -> crate::llm::BoxFuture<'_, Result<String, LlmError>> {
            Box::pin(async { Ok(String::from("ok")) })
        }
        fn context_window(&self) -> usize {
            self.0
        }
        fn model(&self) -> &str {
            "window"
        }
    }

    #[derive(Debug)]
    struct Prompts(u64);

    impl MapReducePrompts for Prompts {
        fn map(&self, chunk: &Chunk, _: &Hints<'_>, budget: usize) -> CompletionRequest {
            CompletionRequest::new("map", chunk.text(), budget as u32)
        }
        fn reduce(
            &self,
            parts: &[String],
            _: &Hints<'_>,
            budget: usize,
            _: bool,
        ) -> CompletionRequest {
            CompletionRequest::new("reduce", parts.join("\n"), budget as u32)
        }
        fn fingerprint(&self) -> u64 {
            self.0
        }
    }

    fn driver(window: usize, fingerprint: u64) -> MapReduce {
        MapReduce::new(
            Arc::new(Window(window)),
            Arc::new(Prompts(fingerprint)),
            MapReduceOptions::default(),
            TokenCounter::default(),
        )
    }

    #[test]
    fn share_gives_an_equal_share_above_the_floor() {
        let rule = ChunkBudget::Share { floor: 500 };
        assert_eq!(rule.for_parts(1500, 2), 750);
        assert_eq!(rule.for_parts(1500, 64), 500);
        assert_eq!(rule.for_parts(300, 4), 300, "never more than the budget");
        assert_eq!(ChunkBudget::Fixed(42).for_parts(1500, 9), 42);
    }

    #[test]
    fn cache_keys_change_with_every_input() {
        let mr = driver(8192, 1);
        let hints = Hints::default().with_query("q");
        let base = mr.key(b"map", &["ctx", "body"], &hints, 100, false);
        assert_eq!(base, mr.key(b"map", &["ctx", "body"], &hints, 100, false));
        assert_ne!(base, mr.key(b"map", &["ctxb", "ody"], &hints, 100, false));
        assert_ne!(
            base,
            mr.key(b"map", &["ctx", "body"], &Hints::default(), 100, false)
        );
        assert_ne!(base, mr.key(b"map", &["ctx", "body"], &hints, 101, false));
        assert_ne!(
            base,
            mr.key(b"reduce", &["ctx", "body"], &hints, 100, false)
        );
        assert_ne!(
            base,
            driver(8192, 2).key(b"map", &["ctx", "body"], &hints, 100, false)
        );
    }

    #[test]
    fn chunks_shrink_to_fit_a_small_window() {
        let layout = driver(2048, 1).layout(&Hints::default(), 300);
        assert!(layout.chunk_tokens < 2048 - 300, "{layout:?}");
        assert!(layout.part_cap * 4 + 300 < 2048);
        let roomy = driver(128_000, 1).layout(&Hints::default(), 300);
        assert_eq!(roomy.chunk_tokens, 4000);
    }

    #[test]
    fn a_huge_budget_or_a_zero_window_does_not_overflow() {
        let layout = driver(0, 1).layout(&Hints::default(), usize::MAX);
        assert_eq!(layout.part_cap, MIN_PART_TOKENS);
        assert_eq!(
            layout.chunk_tokens, 0,
            "the chunker raises it to its minimum"
        );
    }

    #[test]
    fn empty_answers_are_failures() {
        let mr = driver(8192, 1);
        assert_eq!(mr.fit_answer("  \n", 10), None);
        assert_eq!(mr.fit_answer(" fine ", 10).as_deref(), Some("fine"));
    }
}
