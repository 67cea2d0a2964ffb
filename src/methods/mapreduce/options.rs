//! What a map-reduce run is given and gives back: options, hints, prompts, progress, the
//! chunk cache and the outcome.

use std::fmt;
use std::sync::Arc;

use crate::llm::{CompletionRequest, LlmError};
pub use crate::methods::Hints;
use crate::methods::chunk::{Chunk, ChunkOptions, ChunkStrategy};

/// The most critique rounds run, whatever the options say: beyond two, critiques of a model by
/// itself oscillate more than they improve (seed 003).
pub const MAX_CRITIQUE_ROUNDS: usize = 2;

/// Tokens a chat template adds around the system and user messages, reserved on top of the
/// rendered prompt when sizing chunks against the window.
pub(super) const CHAT_TEMPLATE_TOKENS: usize = 16;

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

/// A progress callback, called from the task running [`MapReduce::run`](super::MapReduce::run); it should return
/// quickly.
#[derive(Clone)]
pub(crate) struct ProgressFn(pub(super) Arc<dyn Fn(Progress) + Send + Sync>);

impl ProgressFn {
    /// Wraps a callback.
    pub(crate) fn new(callback: impl Fn(Progress) + Send + Sync + 'static) -> Self {
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
    /// How the text is cut ([`ChunkOptions`]' defaults). Its `chunk_tokens` is lowered at run
    /// time when a chunk, the map prompt and the answer would not fit the model's window;
    /// extraction mode always cuts semantically.
    pub chunking: ChunkOptions,
    /// The most map and critique calls in flight at once. Default 5 (seed 000).
    pub max_concurrency: usize,
    /// The most merge calls in flight at once, in a lane of their own beside the map's, so that
    /// the tree climbs while the map is still running. Default `None`: half of
    /// `max_concurrency`, rounded up ([`default_reduce_concurrency`](crate::config::default_reduce_concurrency)). At most
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
    /// Called as the run advances. Default none; set with
    /// [`MapReduceOptions::with_progress`].
    pub(crate) progress: Option<ProgressFn>,
}

impl Default for MapReduceOptions {
    fn default() -> Self {
        MapReduceOptions {
            chunking: ChunkOptions::default(),
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
        self.chunking = self.chunking.with_chunk_tokens(chunk_tokens);
        self
    }

    /// Sets the overlap for token-boundary cuts (default 200).
    #[must_use]
    pub fn with_overlap_tokens(mut self, overlap_tokens: usize) -> Self {
        self.chunking = self.chunking.with_overlap_tokens(overlap_tokens);
        self
    }

    /// Sets the chunking strategy (default semantic).
    #[must_use]
    pub fn with_strategy(mut self, strategy: ChunkStrategy) -> Self {
        self.chunking = self.chunking.with_strategy(strategy);
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
