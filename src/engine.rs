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

use crate::config::{Config, LlmConfig, Mode};
use crate::error::{ConfigError, RetrieveError};
use crate::limits::{Considered, InputCut, cut_input};
use crate::llm::{LiteLlm, LlmError, Summarizer};
use crate::methods::chunk::ChunkStrategy;
use crate::methods::extract::{ExtractHints, extract};
use crate::methods::mapreduce::{
    ChunkCache, Hints, MapReduce, MapReduceOptions, Progress, ProgressFn,
};
use crate::methods::truncate::{group, truncate};
use crate::methods::verify::guard_facts;
use crate::policy::{Decision, Plan, Policy, RulesPolicy, Subject};
use crate::prompts::{Prompts, Template, Vars};
use crate::secrets::SecretRedactor;
use crate::store::{Selection, Store};
use crate::tokens::{Encoding, TokenCounter};
use crate::tool::{ToolRequest, ToolResponse, render_value};

/// Which method produced a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Method {
    /// Not condensed: the original text.
    #[serde(rename = "passthrough")]
    PassThrough,
    /// An LLM summary in one call.
    #[serde(rename = "llm")]
    Llm,
    /// An LLM summary by map-reduce over chunks.
    #[serde(rename = "llm-map-reduce")]
    MapReduce,
    /// The extractive, query-aware compressor.
    #[serde(rename = "extract")]
    Extract,
    /// Head and tail truncation.
    #[serde(rename = "truncate")]
    Truncate,
}

impl Method {
    /// The method's name, as shown in headers, metadata and the CLI's JSON.
    pub fn name(self) -> &'static str {
        match self {
            Method::PassThrough => "passthrough",
            Method::Llm => "llm",
            Method::MapReduce => "llm-map-reduce",
            Method::Extract => "extract",
            Method::Truncate => "truncate",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The outcome of condensing one text.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Condensed {
    /// The text to hand the agent: the original, or the header line and the condensed body.
    pub text: String,
    /// The method that produced `text`.
    pub method: Method,
    /// Tokens in the original. For a pass-through result this is exact too.
    pub tokens_before: usize,
    /// Tokens in `text`, header included.
    pub tokens_after: usize,
    /// The ref under which the original is kept, when condensed.
    pub reference: Option<String>,
    /// Whether the result came from the cache.
    pub cached: bool,
    /// Time spent, including waiting for the LLM.
    pub elapsed: Duration,
    /// Why a higher rung did not answer, when one did not (e.g. the LLM's error).
    pub fallback: Option<String>,
    /// Set when the input was larger than `[limits] max_input_bytes` and only its start was
    /// considered; `text` then holds a marker line saying so.
    pub input_cut: Option<InputCut>,
}

impl Condensed {
    /// Whether the text was condensed (anything but pass-through).
    pub fn was_condensed(&self) -> bool {
        self.method != Method::PassThrough
    }

    /// Whether `text` differs from the input: condensed, or cut at the input limit.
    pub fn was_changed(&self) -> bool {
        self.was_condensed() || self.input_cut.is_some()
    }

    /// What a result's metadata says about this outcome.
    pub fn meta(&self) -> CondenseMeta {
        CondenseMeta {
            method: self.method,
            tokens_before: self.tokens_before,
            tokens_after: self.tokens_after,
            reference: self.reference.clone(),
            cached: self.cached,
            fallback: self.fallback.clone(),
            input_cut: self.input_cut.clone(),
        }
    }

    /// The outcome as a JSON object, for a result's metadata slot (`_meta.condense`).
    pub fn to_meta(&self) -> Value {
        self.meta().to_json()
    }
}

/// The typed form of a result's `_meta.condense` entry: what condensing did to one text part.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct CondenseMeta {
    /// The method that produced the text.
    pub method: Method,
    /// Tokens in the original.
    pub tokens_before: usize,
    /// Tokens in the text handed on, header included.
    pub tokens_after: usize,
    /// The ref under which the original is kept, when condensed or cut.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// Whether the result came from the cache.
    pub cached: bool,
    /// Why a higher rung did not answer, when one did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Set when only the start of a too-large input was considered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_cut: Option<InputCut>,
}

impl CondenseMeta {
    /// The entry as JSON, as it is written into `_meta.condense`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads a `_meta.condense` entry: one object, or an array of them for a result whose
    /// several parts were condensed. Entries of another shape are skipped.
    pub fn from_entry(entry: &Value) -> Vec<CondenseMeta> {
        let one = |value: &Value| serde_json::from_value::<CondenseMeta>(value.clone()).ok();
        match entry {
            Value::Array(entries) => entries.iter().filter_map(one).collect(),
            other => one(other).into_iter().collect(),
        }
    }
}

/// What the engine knows about one text to condense besides the text itself.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct Request<'a> {
    /// The tool's name; selects the config rule. Empty when unknown.
    pub tool: &'a str,
    /// What the agent is looking for.
    pub query: Option<&'a str>,
    /// The tool's arguments.
    pub arguments: Option<&'a Value>,
    /// An explicit budget, overriding the rule's (and its threshold, when lower).
    pub budget_tokens: Option<usize>,
    /// An explicit mode, overriding the rule's.
    pub mode: Option<Mode>,
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// Extraction mode: the kinds of detail the LLM must keep verbatim (names, ids,
    /// relationships, numbers). `None` is a plain query-aware summary.
    pub schema_hint: Option<&'a str>,
    /// The whole output's size in bytes when the text handed over is only its start (the
    /// caller stopped reading at `[limits] max_input_bytes`). `None`: the text is the whole
    /// output.
    pub whole_bytes: Option<usize>,
    /// How a map-reduce cuts this text, overriding `[mapreduce] strategy`. Only text too large
    /// for one LLM call is chunked; extraction mode always chunks semantically.
    pub chunk_strategy: Option<ChunkStrategy>,
}

impl<'a> Request<'a> {
    /// A request for output of `tool`.
    pub fn new(tool: &'a str) -> Self {
        Request {
            tool,
            ..Request::default()
        }
    }

    /// Sets the query.
    #[must_use]
    pub fn query(mut self, query: Option<&'a str>) -> Self {
        self.query = query;
        self
    }

    /// Sets the tool's arguments.
    #[must_use]
    pub fn arguments(mut self, arguments: Option<&'a Value>) -> Self {
        self.arguments = arguments;
        self
    }

    /// Sets an explicit budget.
    #[must_use]
    pub fn budget(mut self, budget: Option<usize>) -> Self {
        self.budget_tokens = budget;
        self
    }

    /// Sets an explicit mode.
    #[must_use]
    pub fn mode(mut self, mode: Option<Mode>) -> Self {
        self.mode = mode;
        self
    }

    /// Marks the output as a tool error.
    #[must_use]
    pub fn error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// Turns on extraction mode: the LLM keeps every detail of these kinds.
    #[must_use]
    pub fn schema_hint(mut self, hint: Option<&'a str>) -> Self {
        self.schema_hint = hint;
        self
    }

    /// Says that the text is only the start of an output of `bytes` bytes, so the result can
    /// say how much was left out.
    #[must_use]
    pub fn whole_bytes(mut self, bytes: Option<usize>) -> Self {
        self.whole_bytes = bytes;
        self
    }

    /// Sets how a map-reduce cuts this text, overriding the configured strategy.
    ///
    /// ```
    /// use condense::Request;
    /// use condense::methods::chunk::ChunkStrategy;
    ///
    /// let request = Request::new("read_file").chunk_strategy(Some(ChunkStrategy::Token));
    /// assert_eq!(request.chunk_strategy, Some(ChunkStrategy::Token));
    /// ```
    #[must_use]
    pub fn chunk_strategy(mut self, strategy: Option<ChunkStrategy>) -> Self {
        self.chunk_strategy = strategy;
        self
    }
}

/// A hook's answer about an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Deliver it.
    Keep,
    /// Do not deliver it: the next rung of the ladder answers instead. Ignored for pass-through
    /// results, cached results and the last rung.
    Veto,
}

/// Receives every outcome before it is delivered: to export metrics, or to veto a summary and
/// keep the fallback.
pub trait Hook: Send + Sync + 'static {
    /// Called once per candidate outcome.
    fn on_outcome(&self, outcome: &Condensed, request: &Request<'_>) -> Verdict;
}

impl<F> Hook for F
where
    F: Fn(&Condensed, &Request<'_>) -> Verdict + Send + Sync + 'static,
{
    fn on_outcome(&self, outcome: &Condensed, request: &Request<'_>) -> Verdict {
        self(outcome, request)
    }
}

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

/// Builds a [`Condenser`] with a custom policy, LLM backend or hook.
#[must_use]
pub struct CondenserBuilder {
    config: Config,
    policy: Option<Box<dyn Policy>>,
    llm: Option<Option<Arc<dyn Summarizer>>>,
    hook: Option<Arc<dyn Hook>>,
    progress: Option<ProgressFn>,
}

impl fmt::Debug for CondenserBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CondenserBuilder")
            .field("config", &self.config.origin)
            .field("custom_policy", &self.policy.is_some())
            .field("hook", &self.hook.is_some())
            .finish()
    }
}

impl CondenserBuilder {
    /// Replaces the config's rules with `policy`.
    pub fn policy(mut self, policy: impl Policy) -> Self {
        self.policy = Some(Box::new(policy));
        self
    }

    /// Uses `llm` as the LLM rung instead of the client the config's `[llm]` describes.
    pub fn summarizer(mut self, llm: Arc<dyn Summarizer>) -> Self {
        self.llm = Some(Some(llm));
        self
    }

    /// Turns the LLM rung off, whatever the config says.
    pub fn without_llm(mut self) -> Self {
        self.llm = Some(None);
        self
    }

    /// Calls `hook` with every outcome.
    pub fn hook(mut self, hook: impl Hook) -> Self {
        self.hook = Some(Arc::new(hook));
        self
    }

    /// Calls `progress` as map-reduce runs advance (chunks cut, chunks summarized, merges), for
    /// a progress display. It should return quickly.
    pub fn progress(mut self, progress: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(ProgressFn::new(progress));
        self
    }

    /// Builds the condenser.
    ///
    /// # Errors
    ///
    /// When the prompts directory holds a bad template, or the `[llm]` settings cannot make a
    /// client (a malformed `base_url`).
    pub fn build(self) -> Result<Condenser, ConfigError> {
        let prompts = Prompts::load(self.config.prompts_dir.as_deref())?;
        let llm = match self.llm {
            Some(llm) => llm,
            None => match &self.config.llm {
                Some(llm) => Some(client_from_config(
                    llm,
                    self.config.mapreduce.reduce_concurrency,
                    &self.config.origin,
                )?),
                None => None,
            },
        };
        let secrets = secret_redactor(&self.config);
        let config = Arc::new(self.config);
        let policy = self
            .policy
            .unwrap_or_else(|| Box::new(RulesPolicy::from_shared(config.clone())));
        let mapreduce = &config.mapreduce;
        let chunk_cache = (llm.is_some() && mapreduce.chunk_cache_max_bytes > 0)
            .then(|| ChunkCache::with_ttl(mapreduce.chunk_cache_max_bytes, config.cache.ttl));
        let concurrency = config.llm.as_ref().map_or(5, |llm| llm.max_concurrency);
        // Merges have a lane of their own, so the tree climbs while the map runs.
        Ok(Condenser {
            inner: Arc::new(Inner {
                store: Store::new(&config.cache),
                chunk_cache,
                call_limit: Arc::new(tokio::sync::Semaphore::new(concurrency.max(1))),
                merge_limit: Arc::new(tokio::sync::Semaphore::new(
                    mapreduce.reduce_concurrency.max(1),
                )),
                progress: self.progress,
                config,
                policy,
                llm,
                prompts,
                secrets,
                hook: self.hook,
            }),
        })
    }
}

/// The redactor for text sent to the LLM: every recognised secret when `redact_secrets` is on,
/// and the configured API key whatever it says — the model behind the endpoint has no business
/// seeing condense's own credential.
fn secret_redactor(config: &Config) -> SecretRedactor {
    let redactor = if config.redact_secrets {
        SecretRedactor::new()
    } else {
        SecretRedactor::only_known()
    };
    match config.llm.as_ref().and_then(|llm| llm.api_key.as_deref()) {
        Some(key) => redactor.with_known_secret(key),
        None => redactor,
    }
}

/// The configured client. Its own bound is the sum of the two lanes the engine holds calls to,
/// so it never queues a call the engine let through.
fn client_from_config(
    llm: &LlmConfig,
    reduce_concurrency: usize,
    origin: &str,
) -> Result<Arc<dyn Summarizer>, ConfigError> {
    let client = LiteLlm::builder()
        .base_url(&llm.base_url)
        .model(&llm.model)
        .api_key(llm.api_key.clone())
        .timeout(llm.timeout)
        .max_concurrency(llm.max_concurrency.saturating_add(reduce_concurrency))
        .max_retries(llm.max_retries)
        .context_window(llm.context_window)
        .temperature(llm.temperature)
        .build()
        .map_err(|e| ConfigError::Invalid {
            origin: origin.to_owned(),
            key: "llm.base_url".into(),
            message: e.to_string(),
        })?;
    Ok(Arc::new(client))
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
            .condense_inner(text, request, started)
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
        whole: &str,
        request: &Request<'_>,
        started: Instant,
    ) -> Condensed {
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
        let mut plan = match self.inner.policy.decide(&subject) {
            Decision::Condense(plan) if request.mode != Some(Mode::Passthrough) => plan,
            _ => {
                let counted = counted.get().copied();
                return self
                    .pass_through(whole, input, request, started, counted)
                    .await;
            }
        };
        if let Some(mode) = request.mode {
            plan.mode = mode;
        }
        let (reference, cut) = self.keep_original(whole, input).await;
        let note = cut.as_ref().map(|cut| cut.marker(&reference));
        let note = note.as_deref();
        let key = self.cache_key(text, request, &plan, note);
        let Some(cache) = self.inner.store.results() else {
            let mut outcome = self
                .ladder(text, request, plan, &reference, note, started)
                .await;
            outcome.elapsed = started.elapsed();
            outcome.input_cut = cut;
            return outcome;
        };
        let fresh = std::sync::atomic::AtomicBool::new(false);
        let result = cache
            .try_get_with(key, async {
                fresh.store(true, std::sync::atomic::Ordering::Relaxed);
                let mut outcome = self
                    .ladder(text, request, plan, &reference, note, started)
                    .await;
                outcome.input_cut = cut.clone();
                // A fallback caused by a passing LLM failure is delivered but not kept: the
                // next identical call should try the LLM again.
                if outcome.fallback.is_some() && matches!(plan.mode, Mode::Auto | Mode::Llm) {
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
    /// over and it fits the originals store, else the part considered. Returns the ref and,
    /// when the input was cut, what the result must say about it.
    async fn keep_original(
        &self,
        whole: &str,
        input: Considered<'_>,
    ) -> (String, Option<InputCut>) {
        if !input.is_cut() {
            return (self.inner.store.keep(input.considered).await, None);
        }
        let whole_kept = whole.len() == input.whole_bytes
            && whole.len() as u64 <= self.inner.config.cache.originals_max_bytes;
        let kept = if whole_kept { whole } else { input.considered };
        let reference = self.inner.store.keep(kept).await;
        let cut = InputCut {
            considered_bytes: input.considered.len(),
            whole_bytes: input.whole_bytes,
            whole_kept,
        };
        (reference, Some(cut))
    }

    /// The outcome for a text that is not condensed: the text itself, or, when it was larger
    /// than the input limit, its considered start and the marker line. `counted` is an exact
    /// count the policy already made, and by which encoding.
    async fn pass_through(
        &self,
        whole: &str,
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
            let (reference, cut) = self.keep_original(whole, input).await;
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
        field(format!("{:?}", request.chunk_strategy).as_bytes());
        field(note.unwrap_or("").as_bytes());
        h.digest128()
    }

    /// The ladder: LLM (when allowed and configured) → extractive → truncation, within the
    /// plan's deadline.
    async fn ladder(
        &self,
        text: &str,
        request: &Request<'_>,
        plan: Plan,
        reference: &str,
        note: Option<&str>,
        started: Instant,
    ) -> Condensed {
        let counter = TokenCounter::new(plan.encoding);
        let deadline = tokio::time::Instant::from_std(started + plan.deadline);
        // Count the original while the methods run: the header needs it, and on large inputs
        // it is the slowest part of the extractive path.
        let tokens_before = {
            let owned: Arc<str> = Arc::from(text);
            tokio::task::spawn_blocking(move || counter.count(&owned))
        };
        let body_budget = plan.budget_tokens.saturating_sub(HEADER_RESERVE);
        let mut fallback = None;
        let mut candidate: Option<(String, Method)> = None;

        let wants_llm = matches!(plan.mode, Mode::Auto | Mode::Llm);
        if wants_llm && body_budget >= MIN_METHOD_BUDGET {
            match &self.inner.llm {
                Some(llm) => {
                    let attempt = tokio::time::timeout_at(
                        deadline,
                        self.summarize(llm, text, request, body_budget, &counter, deadline),
                    )
                    .await;
                    match attempt {
                        Ok(Ok(summary)) => candidate = Some(summary),
                        Ok(Err(error)) => fallback = Some(format!("LLM failed: {error}")),
                        Err(_) => {
                            fallback = Some(format!(
                                "LLM missed the {} ms deadline",
                                plan.deadline.as_millis()
                            ))
                        }
                    }
                }
                None if plan.mode == Mode::Llm => {
                    fallback = Some("no LLM is configured".into());
                }
                None => {}
            }
        }

        let tokens_before = tokens_before.await.unwrap_or(text.len());
        if let Some((body, method)) = candidate.take() {
            let outcome = self.finish(
                &body,
                method,
                tokens_before,
                reference,
                note,
                &counter,
                plan,
            );
            match self.notify(&outcome, request) {
                Verdict::Keep => return with_fallback(outcome, fallback),
                Verdict::Veto => fallback = Some(format!("{method} result vetoed by the hook")),
            }
        }

        if plan.mode != Mode::Truncate && body_budget >= MIN_METHOD_BUDGET {
            let hints = ExtractHints {
                query: request.query,
                tool: Some(request.tool).filter(|t| !t.is_empty()),
                arguments: request.arguments,
            };
            let body = run_extract(text, hints, body_budget, counter).await;
            match body {
                Some(body) => {
                    let outcome = self.finish(
                        &body,
                        Method::Extract,
                        tokens_before,
                        reference,
                        note,
                        &counter,
                        plan,
                    );
                    match self.notify(&outcome, request) {
                        Verdict::Keep => return with_fallback(outcome, fallback),
                        Verdict::Veto => {
                            fallback = Some("extract result vetoed by the hook".into());
                        }
                    }
                }
                None => fallback = Some("the extractive compressor failed".into()),
            }
        }

        let body = truncate(text, body_budget.max(1), &counter, Some(reference));
        let outcome = self.finish(
            &body,
            Method::Truncate,
            tokens_before,
            reference,
            note,
            &counter,
            plan,
        );
        self.notify(&outcome, request);
        with_fallback(outcome, fallback)
    }

    /// The LLM rung: one call when the output fits (`direct_max_tokens` and the model's
    /// window), map-reduce otherwise or when the endpoint says the prompt overflowed. Then the
    /// facts guard.
    async fn summarize(
        &self,
        llm: &Arc<dyn Summarizer>,
        text: &str,
        request: &Request<'_>,
        body_budget: usize,
        counter: &TokenCounter,
        deadline: tokio::time::Instant,
    ) -> Result<(String, Method), LlmError> {
        // Everything below sends text to the model, or derives from what the model saw (the
        // facts guard quotes the redacted text, so a summary never mixes redacted and original
        // lines). The agent still reaches the original through retrieval.
        let secrets = &self.inner.secrets;
        let (text, redacted) = secrets.redact_counted(text);
        let text: &str = &text;
        let query = request.query.map(|query| secrets.redact(query));
        let schema_hint = request.schema_hint.map(|hint| secrets.redact(hint));
        let request = &Request {
            query: query.as_deref(),
            schema_hint: schema_hint.as_deref(),
            ..*request
        };
        if redacted > 0 {
            tracing::debug!(
                secrets_redacted = redacted,
                "secrets masked before the LLM call"
            );
        }
        let settings = &self.inner.config.mapreduce;
        let direct = match counter.count_up_to(text, settings.direct_max_tokens) {
            Some(_) => {
                self.summarize_direct(llm.as_ref(), text, request, body_budget, counter)
                    .await
            }
            None => Err(LlmError::ContextWindowExceeded {
                message: "larger than a direct call takes".into(),
            }),
        };
        let (summary, method) = match direct {
            Ok(summary) => (summary, Method::Llm),
            Err(error) if error.is_context_overflow() => {
                let outcome = self
                    .map_reduce(llm, counter, request.chunk_strategy)
                    .run(text, &self.hints(request), body_budget, deadline)
                    .await;
                if outcome.timed_out {
                    return Err(LlmError::Timeout);
                }
                if outcome.fallbacks.len() == outcome.chunks && outcome.chunks > 0 {
                    return Err(LlmError::InvalidResponse(format!(
                        "every one of {} chunk summaries failed",
                        outcome.chunks
                    )));
                }
                // The driver ran the facts guard itself when configured.
                return Ok((outcome.text, Method::MapReduce));
            }
            Err(error) => return Err(error),
        };
        let summary = if settings.verify_facts {
            guard_facts(text, &summary, request.query, body_budget, counter)
        } else {
            summary
        };
        Ok((summary, method))
    }

    async fn summarize_direct(
        &self,
        llm: &dyn Summarizer,
        text: &str,
        request: &Request<'_>,
        body_budget: usize,
        counter: &TokenCounter,
    ) -> Result<String, LlmError> {
        let mut vars = Vars::new(text, body_budget);
        if !request.tool.is_empty() {
            vars = vars.tool(request.tool);
        }
        if let Some(query) = request.query {
            vars = vars.query(query);
        }
        let template = match request.schema_hint {
            Some(hint) => {
                vars = vars.schema_hint(hint);
                Template::Extract
            }
            None => Template::Summarize,
        };
        let completion = self.inner.prompts.request(template, &vars);
        let prompt_tokens = counter.count(&completion.system) + counter.count(&completion.user);
        // A tenth of the window is left free: the model's tokenizer may count more than ours.
        if prompt_tokens + body_budget > llm.context_window() * 9 / 10 {
            return Err(LlmError::ContextWindowExceeded {
                message: format!(
                    "{} prompt tokens and {} for the answer exceed the {}-token window",
                    group(prompt_tokens),
                    group(body_budget),
                    group(llm.context_window())
                ),
            });
        }
        let summary = {
            // The semaphore is never closed; a closed one would only lift the bound.
            let _permit = self.inner.call_limit.acquire().await.ok();
            llm.complete(completion).await?
        };
        let summary = summary.trim();
        if summary.is_empty() {
            return Err(LlmError::EmptyAnswer);
        }
        Ok(counter.prefix_within(summary, body_budget).to_owned())
    }

    fn hints<'r>(&self, request: &Request<'r>) -> Hints<'r> {
        Hints {
            query: request.query,
            tool: Some(request.tool).filter(|t| !t.is_empty()),
            schema_hint: request.schema_hint,
            kind: None,
        }
    }

    /// The driver for one run; `strategy` overrides the configured one.
    fn map_reduce(
        &self,
        llm: &Arc<dyn Summarizer>,
        counter: &TokenCounter,
        strategy: Option<ChunkStrategy>,
    ) -> MapReduce {
        let settings = &self.inner.config.mapreduce;
        let mut options = MapReduceOptions::default()
            .with_chunk_tokens(settings.chunk_tokens)
            .with_overlap_tokens(settings.overlap_tokens)
            .with_strategy(strategy.unwrap_or(settings.strategy))
            .with_group_size(settings.group_size)
            .with_reduce_concurrency(settings.reduce_concurrency)
            .with_max_passes(settings.max_passes)
            .with_critique_rounds(settings.critique_rounds)
            .with_verify_facts(settings.verify_facts);
        options.progress = self.inner.progress.clone();
        let prompts: Arc<dyn crate::methods::mapreduce::MapReducePrompts> =
            Arc::new(self.inner.prompts.clone());
        let mut driver = MapReduce::new(llm.clone(), prompts, options, *counter)
            .with_concurrency_limit(self.inner.call_limit.clone())
            .with_reduce_limit(self.inner.merge_limit.clone());
        if let Some(cache) = &self.inner.chunk_cache {
            driver = driver.with_cache(cache.clone());
        }
        driver
    }

    /// Puts the header (and the input-cut marker, if any) on a body and makes sure the whole
    /// is within the budget.
    #[allow(clippy::too_many_arguments)]
    fn finish(
        &self,
        body: &str,
        method: Method,
        tokens_before: usize,
        reference: &str,
        note: Option<&str>,
        counter: &TokenCounter,
        plan: Plan,
    ) -> Condensed {
        let budget = plan.budget_tokens;
        let mut body = body;
        let mut after = budget;
        let note = note.map(|note| format!("{note}\n")).unwrap_or_default();
        for _ in 0..6 {
            let text = format!(
                "{}\n{note}{body}",
                header(method, tokens_before, after, reference)
            );
            let count = counter.count(&text);
            if count > budget {
                // Give the body fewer tokens by the excess, and try again.
                let body_tokens = counter.count(body);
                body = counter.prefix_within(body, body_tokens.saturating_sub(count - budget + 1));
                continue;
            }
            if count == after {
                return self.condensed(text, method, tokens_before, count, reference);
            }
            after = count;
        }
        // The header's own count keeps moving by a token: settle on a count-free header.
        let text = format!(
            "{}\n{note}{body}",
            header(method, tokens_before, after, reference)
        );
        let text = counter.prefix_within(&text, budget).to_owned();
        let count = counter.count(&text);
        self.condensed(text, method, tokens_before, count, reference)
    }

    fn condensed(
        &self,
        text: String,
        method: Method,
        tokens_before: usize,
        tokens_after: usize,
        reference: &str,
    ) -> Condensed {
        Condensed {
            text,
            method,
            tokens_before,
            tokens_after,
            reference: Some(reference.to_owned()),
            cached: false,
            elapsed: Duration::ZERO,
            fallback: None,
            input_cut: None,
        }
    }

    /// Condenses a whole tool response: its text parts share the budget by water-filling
    /// (short parts stay whole, the longest are condensed to a common cap), and images, audio
    /// and binary parts pass untouched. A condensed response's structured copy is handled by
    /// the tool's [`StructuredContentPolicy`](crate::StructuredContentPolicy).
    pub async fn condense_response<R: ToolResponse>(&self, call: &CallInfo, response: R) -> R {
        self.condense_response_with_outcomes(call, None, response)
            .await
            .0
    }

    /// As [`Condenser::condense_response`], and also returns what was done to each text part
    /// that was condensed or cut (empty when the response came back whole). `output_schema`
    /// is the tool's, which a shrunk `structuredContent` must still match.
    pub async fn condense_response_with_outcomes<R: ToolResponse>(
        &self,
        call: &CallInfo,
        output_schema: Option<&Value>,
        mut response: R,
    ) -> (R, Vec<Condensed>) {
        let parts: Vec<String> = response
            .text_parts()
            .into_iter()
            .map(|p| p.into_owned())
            .collect();
        let request = call.request().error(response.is_error());
        let (new_parts, outcomes) = match parts.len() {
            0 => return (response, Vec::new()),
            1 => {
                let outcome = self.condense(&parts[0], &request).await;
                if !outcome.was_changed() {
                    return (response, Vec::new());
                }
                (vec![Some(outcome.text.clone())], vec![outcome])
            }
            _ => self.condense_parts(parts, request).await,
        };
        if outcomes.is_empty() {
            return (response, outcomes);
        }
        if outcomes.iter().any(Condensed::was_condensed)
            && let Some(slot) = response.structured_content_mut()
            && slot.is_some()
        {
            let rule = self.inner.config.rule_for(&call.tool);
            let budget = call.budget_tokens.unwrap_or(rule.budget_tokens);
            *slot = rule.structured_content.apply(
                slot.take(),
                output_schema,
                budget,
                &TokenCounter::new(rule.encoding),
            );
        }
        (response.rebuild(new_parts, &outcomes), outcomes)
    }

    /// The multi-part response: decided once on the joined text, then each part too long for
    /// the shared budget condensed to the water level.
    async fn condense_parts(
        &self,
        parts: Vec<String>,
        request: Request<'_>,
    ) -> (Vec<Option<String>>, Vec<Condensed>) {
        let rule = self.inner.config.rule_for(request.tool);
        let counter = TokenCounter::new(rule.encoding);
        // Decide on the whole: joined, the parts are what the agent would read.
        let joined = parts.join("\n");
        let counted = std::sync::OnceLock::new();
        let subject = Subject::new(request.tool, &joined)
            .with_error(request.is_error)
            .with_budget_hint(request.budget_tokens)
            .with_count_memo(&counted);
        let budget = match self.inner.policy.decide(&subject) {
            Decision::Condense(plan) => plan.budget_tokens,
            _ => {
                let limit = self.inner.config.limits.max_input_bytes;
                if parts.iter().any(|part| part.len() > limit) {
                    return self.cut_long_parts(parts, request).await;
                }
                // The hook still sees the pass-through outcome.
                let input = cut_input(&joined, None, usize::MAX);
                let counted = counted.get().copied();
                self.pass_through(&joined, input, &request, Instant::now(), counted)
                    .await;
                return (Vec::new(), Vec::new());
            }
        };
        // Parts larger than the whole budget are capped whatever the water level: count only
        // up to it.
        let sizes: Vec<Option<usize>> = parts
            .iter()
            .map(|p| counter.count_up_to(p, budget))
            .collect();
        let cap = water_level(&sizes, budget).max(MIN_METHOD_BUDGET + HEADER_RESERVE);
        let mut new_parts = Vec::with_capacity(parts.len());
        let mut outcomes = Vec::new();
        for (part, size) in parts.iter().zip(&sizes) {
            if size.is_some_and(|s| s <= cap) {
                new_parts.push(None);
                continue;
            }
            let part_request = request.budget(Some(cap));
            let outcome = self.condense(part, &part_request).await;
            if outcome.was_changed() {
                new_parts.push(Some(outcome.text.clone()));
                outcomes.push(outcome);
            } else {
                new_parts.push(None);
            }
        }
        (new_parts, outcomes)
    }

    /// A pass-through response still hands on no part longer than the input limit: each such
    /// part goes through [`Condenser::condense`], which cuts it and says so.
    async fn cut_long_parts(
        &self,
        parts: Vec<String>,
        request: Request<'_>,
    ) -> (Vec<Option<String>>, Vec<Condensed>) {
        let limit = self.inner.config.limits.max_input_bytes;
        let mut new_parts = Vec::with_capacity(parts.len());
        let mut outcomes = Vec::new();
        for part in &parts {
            if part.len() <= limit {
                new_parts.push(None);
                continue;
            }
            let outcome = self.condense(part, &request).await;
            new_parts.push(Some(outcome.text.clone()));
            outcomes.push(outcome);
        }
        (new_parts, outcomes)
    }

    /// The seed contract: returns `(text, false)` when `value` (rendered: strings as they are,
    /// anything else pretty-printed JSON) has at most `max_tokens` tokens, else `(condensed,
    /// true)` with a condensed text of at most `min(max_tokens, max(500, max_tokens / 2))`
    /// tokens.
    pub async fn summarize_if_needed(
        &self,
        value: &Value,
        max_tokens: usize,
        query: Option<&str>,
        tool: Option<&str>,
    ) -> (String, bool) {
        let text = render_value(value);
        let counter = TokenCounter::new(self.inner.config.rule_for(tool.unwrap_or("")).encoding);
        if !counter.exceeds(&text, max_tokens) {
            return (text.into_owned(), false);
        }
        let budget = max_tokens.min(500.max(max_tokens / 2)).max(1);
        let request = Request::new(tool.unwrap_or(""))
            .query(query)
            .budget(Some(budget));
        let outcome = self.condense(&text, &request).await;
        if outcome.was_condensed() {
            (outcome.text, true)
        } else {
            // The rules say pass-through for this tool; honour the caller's limit anyway.
            let cut = truncate(&text, budget, &counter, None);
            (cut, true)
        }
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

fn with_fallback(mut outcome: Condensed, fallback: Option<String>) -> Condensed {
    outcome.fallback = fallback;
    outcome
}

/// Runs the extractive compressor off the async threads for large inputs, and contains a
/// panic (it must never have one, but a tool call must survive it if it does).
async fn run_extract(
    text: &str,
    hints: ExtractHints<'_>,
    budget: usize,
    counter: TokenCounter,
) -> Option<String> {
    const INLINE_BYTES: usize = 64 * 1024;
    if text.len() <= INLINE_BYTES {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            extract(text, &hints, budget, &counter)
        }))
        .ok();
    }
    let text: Arc<str> = Arc::from(text);
    let query = hints.query.map(str::to_owned);
    let tool = hints.tool.map(str::to_owned);
    let arguments = hints.arguments.cloned();
    tokio::task::spawn_blocking(move || {
        let hints = ExtractHints {
            query: query.as_deref(),
            tool: tool.as_deref(),
            arguments: arguments.as_ref(),
        };
        extract(&text, &hints, budget, &counter)
    })
    .await
    .ok()
}

/// The common cap for water-filling: the largest `c` with `Σ min(size, c) ≤ budget`, where an
/// unknown size (`None`) is larger than the budget.
fn water_level(sizes: &[Option<usize>], budget: usize) -> usize {
    let mut known: Vec<usize> = sizes.iter().map(|s| s.unwrap_or(usize::MAX)).collect();
    known.sort_unstable();
    let mut remaining = budget;
    let mut left = known.len();
    for size in known {
        let share = remaining / left.max(1);
        if size > share {
            return share;
        }
        remaining -= size;
        left -= 1;
    }
    budget
}

/// The header line of a condensed text.
fn header(method: Method, before: usize, after: usize, reference: &str) -> String {
    format!(
        "[condense: {method}, {} → {} tokens, original kept as {reference}]",
        group(before),
        group(after)
    )
}

/// What the layer captures from a request before the inner service consumes it.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CallInfo {
    /// The tool's name.
    pub tool: String,
    /// The tool's arguments.
    pub arguments: Option<Value>,
    /// What the agent is looking for.
    pub query: Option<String>,
    /// An explicit budget.
    pub budget_tokens: Option<usize>,
}

impl CallInfo {
    /// Captures what the engine needs from `request`.
    pub fn from_request<Q: ToolRequest>(request: &Q) -> Self {
        CallInfo {
            tool: request.tool_name().to_owned(),
            arguments: request.arguments().cloned(),
            query: request.query().map(str::to_owned),
            budget_tokens: request.budget_tokens(),
        }
    }

    /// The engine request for this call.
    pub fn request(&self) -> Request<'_> {
        Request::new(&self.tool)
            .query(self.query.as_deref())
            .arguments(self.arguments.as_ref())
            .budget(self.budget_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_level_keeps_short_parts_whole() {
        assert_eq!(water_level(&[Some(10), Some(20), None], 100), 70);
        assert_eq!(water_level(&[Some(10), Some(20)], 100), 100);
        assert_eq!(water_level(&[None, None], 100), 50);
        assert_eq!(water_level(&[Some(60), Some(60), Some(10)], 100), 45);
    }
}
