//! The engine: decide → cache → the ladder of methods → verify → keep the original.
//!
//! A [`Condenser`] turns one tool output into either the same text (small enough) or a
//! condensed text that fits a token budget and starts with a one-line header naming the method,
//! the tokens before and after, and the ref under which the original is kept. It never fails:
//! when the LLM is absent, fails or is late, the extractive compressor answers; when that cannot
//! (it never should), truncation does.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;
use tracing::Instrument;

use crate::config::{Config, Mode};
use crate::error::{ConfigError, RetrieveError};
use crate::limits::{Considered, InputCut, MemoryBudget, cut_input};
use crate::llm::Summarizer;
use crate::methods::chunk::ChunkStrategy;
use crate::methods::mapreduce::{ChunkCache, ProgressFn};
use crate::policy::{Decision, Plan, Policy, Subject};
use crate::prompts::Prompts;
use crate::secrets::SecretRedactor;
use crate::store::{Selection, Store};
use crate::tokens::{Encoding, TokenCounter};

mod builder;
mod ladder;
mod response;
mod shared;
mod types;

use shared::{SharedText, Source};

pub use builder::CondenserBuilder;
pub use types::{CallInfo, CondenseMeta, Condensed, Hook, Method, Request, Verdict};

/// The engine. Cheap to clone: clones share the caches, the LLM client and its limits.
///
/// ```
/// use condense::{Condenser, Config, Method, Request};
///
/// # tokio_test_block_on(async {
/// let condenser = Condenser::new(Config::default()).unwrap();
/// let log: String = (0..5000)
///     .map(|i| format!("2024-01-01 00:00:{:02} INFO request {i} served in 3ms\n", i % 60))
///     .chain(["2024-01-01 00:01:00 ERROR disk /dev/sda1 is full\n".to_owned()])
///     .collect();
/// let out = condenser
///     .condense(&log, &Request::new("read_log").query(Some("why did it fail?")))
///     .await;
/// assert_eq!(out.method, Method::Extract);
/// assert!(out.tokens_after <= 1500);
/// assert!(out.text.contains("disk /dev/sda1 is full"));
/// assert!(condenser.retrieve(out.reference.as_deref().unwrap(), Default::default()).await.unwrap() == log);
/// # });
/// # fn tokio_test_block_on<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(f)
/// # }
/// ```
#[derive(Clone)]
pub struct Condenser {
    inner: Arc<Inner>,
}

struct Inner {
    config: Arc<Config>,
    policy: Box<dyn Policy>,
    llm: Option<Arc<dyn Summarizer>>,
    /// Map-reduce state shared by every call: chunk summaries, the bound on direct summaries
    /// and map calls in flight (`llm.max_concurrency`), and the merges' own lane
    /// (`mapreduce.reduce_concurrency`).
    chunk_cache: Option<ChunkCache>,
    call_limit: Arc<tokio::sync::Semaphore>,
    merge_limit: Arc<tokio::sync::Semaphore>,
    progress: Option<ProgressFn>,
    prompts: Prompts,
    /// Masks secrets in every text sent to the LLM: by shape when `redact_secrets` is on, and
    /// the configured API key always.
    secrets: SecretRedactor,
    store: Store,
    /// `[limits] max_inflight_bytes`, shared by every clone and every call.
    memory: Option<MemoryBudget>,
    hook: Option<Arc<dyn Hook>>,
}

impl fmt::Debug for Condenser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Condenser")
            .field("config", &self.inner.config.origin)
            .field("llm", &self.inner.llm)
            .field("store", &self.inner.store)
            .field("hook", &self.inner.hook.is_some())
            .finish()
    }
}

/// Tokens reserved for the header line; the exact header is counted afterwards.
const HEADER_RESERVE: usize = 40;

/// The smallest budget a method is asked to fill; smaller budgets are truncation only.
const MIN_METHOD_BUDGET: usize = 24;

impl Condenser {
    /// A condenser configured by `config`: its rules, its `[llm]` client, its caches.
    ///
    /// # Errors
    ///
    /// As [`CondenserBuilder::build`].
    pub fn new(config: Config) -> Result<Self, ConfigError> {
        Self::builder(config).build()
    }

    /// A builder, to set a custom policy, LLM backend or hook.
    pub fn builder(config: Config) -> CondenserBuilder {
        CondenserBuilder {
            config,
            policy: None,
            llm: None,
            hook: None,
            progress: None,
        }
    }

    /// The same engine (caches, originals, LLM client and its limits, hook) deciding with
    /// `policy` instead: for one front door, or one group of tools, that condenses by other
    /// rules than the rest.
    #[must_use]
    pub fn with_policy(&self, policy: impl Policy) -> Self {
        let inner = &self.inner;
        Condenser {
            inner: Arc::new(Inner {
                config: inner.config.clone(),
                policy: Box::new(policy),
                llm: inner.llm.clone(),
                chunk_cache: inner.chunk_cache.clone(),
                call_limit: inner.call_limit.clone(),
                merge_limit: inner.merge_limit.clone(),
                progress: inner.progress.clone(),
                prompts: inner.prompts.clone(),
                secrets: inner.secrets.clone(),
                store: inner.store.clone(),
                memory: inner.memory.clone(),
                hook: inner.hook.clone(),
            }),
        }
    }

    /// The configuration in use.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Whether an LLM rung is configured.
    pub fn has_llm(&self) -> bool {
        self.inner.llm.is_some()
    }

    /// Condenses `text` when the policy says so; otherwise returns it unchanged as a
    /// pass-through outcome. Never fails.
    pub async fn condense(&self, text: &str, request: &Request<'_>) -> Condensed {
        self.condense_source(Source::Borrowed(text), request).await
    }

    /// As [`Condenser::condense`], taking the text over: a large output is then kept, counted
    /// and condensed without ever being copied, so a call holds it in memory once.
    pub async fn condense_owned(&self, text: String, request: &Request<'_>) -> Condensed {
        self.condense_source(Source::Owned(Arc::new(text)), request)
            .await
    }

    async fn condense_source(&self, text: Source<'_>, request: &Request<'_>) -> Condensed {
        let started = Instant::now();
        let span = tracing::info_span!(
            "condense",
            tool = request.tool,
            tokens_before = tracing::field::Empty,
            tokens_after = tracing::field::Empty,
            method = tracing::field::Empty,
            cache_hit = tracing::field::Empty,
            elapsed_ms = tracing::field::Empty,
        );
        let outcome = self
            .condense_inner(&text, request, started)
            .instrument(span.clone())
            .await;
        span.record("tokens_before", outcome.tokens_before);
        span.record("tokens_after", outcome.tokens_after);
        span.record("method", outcome.method.name());
        span.record("cache_hit", outcome.cached);
        span.record("elapsed_ms", outcome.elapsed.as_millis() as u64);
        span.in_scope(|| {
            tracing::info!(
                fallback = outcome.fallback.as_deref(),
                "{} {} → {} tokens",
                outcome.method,
                outcome.tokens_before,
                outcome.tokens_after
            );
        });
        outcome
    }

    async fn condense_inner(
        &self,
        source: &Source<'_>,
        request: &Request<'_>,
        started: Instant,
    ) -> Condensed {
        let whole = source.as_str();
        let input = cut_input(
            whole,
            request.whole_bytes,
            self.inner.config.limits.max_input_bytes,
        );
        if input.is_cut() {
            tracing::warn!(
                considered_bytes = input.considered.len(),
                whole_bytes = input.whole_bytes,
                "input larger than [limits] max_input_bytes: only its start is considered"
            );
        }
        let text = input.considered;
        let counted = std::sync::OnceLock::new();
        let subject = Subject::new(request.tool, text)
            .with_error(request.is_error)
            .with_budget_hint(request.budget_tokens)
            .with_count_memo(&counted);
        // A text passed through is held too (its result's copies): it reserves them from the
        // memory budget like a condensed one, and is truncated like one when it cannot.
        let mut memory_refused = None;
        let mut plan = match self.inner.policy.decide(&subject) {
            Decision::Condense(plan) if request.mode != Some(Mode::Passthrough) => plan,
            _ => match self.reserve_pass_through(text.len()).await {
                Ok(_permit) => {
                    let counted = counted.get().copied();
                    return self
                        .pass_through(source, input, request, started, counted)
                        .await;
                }
                Err(refused) => {
                    tracing::warn!(bytes = text.len(), "{refused}");
                    memory_refused = Some(refused.to_string());
                    Plan {
                        mode: Mode::Truncate,
                        ..Plan::from_rule(&self.inner.config.rule_for(request.tool))
                    }
                }
            },
        };
        if let Some(mode) = request.mode.filter(|_| memory_refused.is_none()) {
            plan.mode = mode;
        }
        let (reference, cut, kept) = self.keep_original(source, input).await;
        // What is kept starts with the considered part: the methods read it from there.
        let text = SharedText::new(kept, input.considered.len());
        let note = cut.as_ref().map(|cut| cut.marker(&reference));
        let note = note.as_deref();
        let key = self.cache_key(&text, request, &plan, note);
        // Escape codes are noise to every rung; the kept original has them, and the header
        // counts it as the agent would have paid for it (docs/hostile-input.md).
        let read = match crate::ansi::strip_escapes(&text) {
            std::borrow::Cow::Owned(stripped) => SharedText::from_string(stripped),
            std::borrow::Cow::Borrowed(_) => text.clone(),
        };
        let input = ladder::Input {
            read,
            original: text,
        };
        // A truncation for want of memory is not cached: the next identical call may have it.
        let cache = self
            .inner
            .store
            .results()
            .filter(|_| memory_refused.is_none());
        let Some(cache) = cache else {
            let mut outcome = self
                .ladder(&input, request, plan, &reference, note, started)
                .await;
            outcome.elapsed = started.elapsed();
            outcome.input_cut = cut;
            if memory_refused.is_some() {
                outcome.fallback = memory_refused;
            }
            return outcome;
        };
        let fresh = std::sync::atomic::AtomicBool::new(false);
        let result = cache
            .try_get_with(key, async {
                fresh.store(true, std::sync::atomic::Ordering::Relaxed);
                let mut outcome = self
                    .ladder(&input, request, plan, &reference, note, started)
                    .await;
                outcome.input_cut = cut.clone();
                // A fallback caused by a passing LLM failure, or a truncation for want of
                // memory, is delivered but not kept: the next identical call should try again.
                let degraded = outcome.method == Method::Truncate && plan.mode != Mode::Truncate;
                if outcome.fallback.is_some()
                    && (matches!(plan.mode, Mode::Auto | Mode::Llm) || degraded)
                {
                    Err(outcome)
                } else {
                    Ok(Arc::new(outcome))
                }
            })
            .await;
        let mut outcome = match result {
            Ok(shared) => Condensed::clone(&shared),
            Err(shared) => Condensed::clone(&shared),
        };
        outcome.cached = !fresh.load(std::sync::atomic::Ordering::Relaxed);
        outcome.elapsed = started.elapsed();
        if outcome.cached {
            self.notify(&outcome, request);
        }
        outcome
    }

    /// Keeps the original for retrieval: the whole output when the caller handed all of it
    /// over and it fits the originals store, else the part considered. Returns the ref, what
    /// the result must say when the input was cut, and the text kept (shared, not copied, when
    /// the caller handed it over).
    async fn keep_original(
        &self,
        source: &Source<'_>,
        input: Considered<'_>,
    ) -> (String, Option<InputCut>, Arc<String>) {
        if !input.is_cut() {
            let kept = source.shared();
            return (self.inner.store.keep(kept.clone()).await, None, kept);
        }
        let whole = source.as_str();
        let whole_kept = whole.len() == input.whole_bytes
            && whole.len() as u64 <= self.inner.config.cache.originals_max_bytes;
        // Only what is kept is copied: never a whole output too large to keep.
        let kept = if whole_kept {
            source.shared()
        } else {
            Arc::new(input.considered.to_owned())
        };
        let reference = self.inner.store.keep(kept.clone()).await;
        let cut = InputCut {
            considered_bytes: input.considered.len(),
            whole_bytes: input.whole_bytes,
            whole_kept,
        };
        (reference, Some(cut), kept)
    }

    /// Reserves what passing `text_bytes` through holds; no permit is needed without a budget.
    async fn reserve_pass_through(
        &self,
        text_bytes: usize,
    ) -> Result<Option<crate::limits::MemoryPermit>, crate::limits::MemoryRefused> {
        match &self.inner.memory {
            Some(budget) => {
                let wait_until = tokio::time::Instant::now() + crate::limits::MEMORY_WAIT;
                budget
                    .reserve_pass_through(text_bytes, wait_until)
                    .await
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    /// The outcome for a text that is not condensed: the text itself, or, when it was larger
    /// than the input limit, its considered start and the marker line. `counted` is an exact
    /// count the policy already made, and by which encoding.
    async fn pass_through(
        &self,
        source: &Source<'_>,
        input: Considered<'_>,
        request: &Request<'_>,
        started: Instant,
        counted: Option<(Encoding, usize)>,
    ) -> Condensed {
        let encoding = self.inner.config.rule_for(request.tool).encoding;
        let counter = TokenCounter::new(encoding);
        // Counting never looks past the limit: only the considered part is counted, and only
        // once: the policy's count is taken when it was made with the same encoding.
        let tokens = match counted {
            Some((counted_with, tokens)) if counted_with == encoding => tokens,
            _ => counter.count(input.considered),
        };
        let mut outcome = Condensed {
            text: String::new(),
            method: Method::PassThrough,
            tokens_before: tokens,
            tokens_after: tokens,
            reference: None,
            cached: false,
            elapsed: Duration::ZERO,
            fallback: None,
            input_cut: None,
        };
        if input.is_cut() {
            let (reference, cut, _) = self.keep_original(source, input).await;
            let marker = cut
                .as_ref()
                .map(|cut| cut.marker(&reference))
                .unwrap_or_default();
            let separator = if input.considered.ends_with('\n') || input.considered.is_empty() {
                ""
            } else {
                "\n"
            };
            let tail = format!("{separator}{marker}\n");
            // The considered part is not counted twice: its count plus the marker's.
            outcome.tokens_after = tokens + counter.count(&tail);
            outcome.text = format!("{}{tail}", input.considered);
            outcome.reference = Some(reference);
            outcome.input_cut = cut;
        } else {
            outcome.text = input.considered.to_owned();
        }
        outcome.elapsed = started.elapsed();
        self.notify(&outcome, request);
        outcome
    }

    fn notify(&self, outcome: &Condensed, request: &Request<'_>) -> Verdict {
        match &self.inner.hook {
            Some(hook) => hook.on_outcome(outcome, request),
            None => Verdict::Keep,
        }
    }

    fn cache_key(
        &self,
        text: &str,
        request: &Request<'_>,
        plan: &Plan,
        note: Option<&str>,
    ) -> u128 {
        let mut h = xxhash_rust::xxh3::Xxh3::new();
        let mut field = |bytes: &[u8]| {
            h.update(&(bytes.len() as u64).to_le_bytes());
            h.update(bytes);
        };
        field(text.as_bytes());
        field(request.query.unwrap_or("").as_bytes());
        field(&[u8::from(request.query.is_some())]);
        field(request.tool.as_bytes());
        field(
            request
                .arguments
                .map(Value::to_string)
                .unwrap_or_default()
                .as_bytes(),
        );
        field(plan.mode.name().as_bytes());
        field(&(plan.budget_tokens as u64).to_le_bytes());
        field(plan.encoding.name().as_bytes());
        field(
            self.inner
                .llm
                .as_ref()
                .map(|l| l.model())
                .unwrap_or("")
                .as_bytes(),
        );
        field(&self.inner.prompts.fingerprint().to_le_bytes());
        field(&[u8::from(request.is_error)]);
        field(request.schema_hint.unwrap_or("").as_bytes());
        field(
            request
                .chunk_strategy
                .map_or("", ChunkStrategy::name)
                .as_bytes(),
        );
        field(note.unwrap_or("").as_bytes());
        h.digest128()
    }

    /// Returns the original kept under `reference`, or the selected part of it.
    ///
    /// # Errors
    ///
    /// When nothing is kept under the ref (never condensed here, or expired), or the selection
    /// does not fit the original.
    pub async fn retrieve(
        &self,
        reference: &str,
        selection: Selection,
    ) -> Result<String, RetrieveError> {
        self.inner.store.retrieve(reference, &selection).await
    }
}
