//! The engine: render → measure → decide → cache → condense (the ladder of methods) → verify →
//! keep → rebuild, run by `pipeline.rs` (see docs/architecture.md).
//!
//! A [`Condenser`] turns one tool output into either the same text (small enough) or a
//! condensed text that fits a token budget and starts with a one-line header naming the method,
//! the tokens before and after, and the ref under which the original is kept. It never fails:
//! when the LLM is absent, fails or is late, the extractive compressor answers; when that cannot
//! (it never should), truncation does.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::config::Config;
use crate::error::{ConfigError, RetrieveError};
use crate::limits::{Considered, InputCut, MemoryBudget};
use crate::llm::Summarizer;
use crate::methods::chunk::ChunkStrategy;
use crate::methods::mapreduce::{ChunkCache, ProgressFn};
use crate::methods::prompts::Prompts;
use crate::policy::{Plan, Policy};
use crate::secrets::SecretRedactor;
use crate::store::{Page, Selection, Store};
use crate::tokens::TokenCounter;

mod builder;
mod ladder;
mod pipeline;
mod response;
mod review;
mod shared;
mod types;

use shared::{SharedText, Source};

pub use crate::outcome::{CondenseMeta, Condensed, Method};
pub use builder::CondenserBuilder;
pub use types::{CallInfo, Hook, Request, Verdict};

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
///     .condense(&log, &Request::new("read_log").with_query("why did it fail?"))
///     .await;
/// assert_eq!(out.method, Method::Extract);
/// assert!(out.tokens_after() <= 1500);
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
            store_backend: None,
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
        self.run(Source::Borrowed(text), request, None).await
    }

    /// As [`Condenser::condense`], taking the text over: a large output is then kept, counted
    /// and condensed without ever being copied, so a call holds it in memory once.
    pub async fn condense_owned(&self, text: String, request: &Request<'_>) -> Condensed {
        self.run(Source::Owned(Arc::new(text)), request, None).await
    }

    /// What is kept for retrieval: the whole output when the caller handed all of it over
    /// and it fits the originals store, else the part considered (shared, not copied, when the
    /// caller handed it over); and what the result must say when the input was cut. Nothing is
    /// kept yet: the pipeline keeps it once the result is made.
    fn original_to_keep(
        &self,
        source: &Source<'_>,
        input: Considered<'_>,
    ) -> (Arc<String>, Option<InputCut>) {
        if !input.is_cut() {
            return (source.shared(), None);
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
        let cut = InputCut {
            considered_bytes: input.considered.len(),
            whole_bytes: input.whole_bytes,
            whole_kept,
        };
        (kept, Some(cut))
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

    /// Keeps `original` in the store, as a condensed result's original is kept, and returns
    /// its ref (the proxy keeps the images and other binary items it does not pass on).
    #[cfg_attr(not(feature = "mcp"), allow(dead_code))]
    pub(crate) async fn keep_binary(&self, original: String, owner: Option<&str>) -> String {
        self.inner.store.keep(Arc::new(original), owner).await
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
        self.inner.store.retrieve(reference, None, &selection).await
    }

    /// Like [`Condenser::retrieve`], for an original kept with an owner
    /// ([`Request::owner`]): only the same owner reads it. Another owner's ref is answered
    /// as unknown, so a ref reveals nothing to whoever does not own it.
    ///
    /// # Errors
    ///
    /// As [`Condenser::retrieve`]; an original kept for another owner counts as not kept.
    pub async fn retrieve_as(
        &self,
        owner: Option<&str>,
        reference: &str,
        selection: Selection,
    ) -> Result<String, RetrieveError> {
        self.inner
            .store
            .retrieve(reference, owner, &selection)
            .await
    }

    /// A page of the original kept under `reference`: the selected part, cut to at most
    /// `max_tokens` (in the default encoding) at a line or match boundary where one fits, with
    /// the original's size and the selection that continues it.
    ///
    /// # Errors
    ///
    /// As [`Condenser::retrieve`].
    pub async fn retrieve_page(
        &self,
        reference: &str,
        selection: Selection,
        max_tokens: usize,
    ) -> Result<Page, RetrieveError> {
        self.retrieve_page_as(None, reference, selection, max_tokens)
            .await
    }

    /// Like [`Condenser::retrieve_page`], for an original kept with an owner
    /// ([`Request::owner`]): only the same owner reads it.
    ///
    /// # Errors
    ///
    /// As [`Condenser::retrieve_as`].
    pub async fn retrieve_page_as(
        &self,
        owner: Option<&str>,
        reference: &str,
        selection: Selection,
        max_tokens: usize,
    ) -> Result<Page, RetrieveError> {
        let counter = TokenCounter::new(self.inner.config.defaults.encoding);
        let fits = |part: &str| counter.prefix_within(part, max_tokens).len();
        self.inner
            .store
            .retrieve_page(reference, owner, &selection, &fits)
            .await
    }

    /// Waits until every original kept so far is written to the store's backend (disk or a
    /// shared server): writes run in the background, off the tool call's path, so a process
    /// about to exit calls this to keep the refs it handed out retrievable. The same as
    /// [`crate::store::flush`], which waits for every store of the process.
    pub async fn flush(&self) {
        crate::store::flush().await;
    }
}
