//! Building a [`Condenser`]: its policy, LLM client, caches and hook.

use std::fmt;
use std::sync::Arc;

use super::{Condenser, Hook, Inner};
use crate::config::{Config, LlmConfig};
use crate::error::ConfigError;
use crate::limits::MemoryBudget;
use crate::llm::{LiteLlm, Summarizer};
use crate::methods::mapreduce::{ChunkCache, Progress, ProgressFn};
use crate::methods::prompts::Prompts;
use crate::policy::{Policy, RulesPolicy};
use crate::secrets::SecretRedactor;
use crate::store::{Store, StoreBackend};
/// Builds a [`Condenser`] with a custom policy, LLM backend or hook.
#[must_use]
pub struct CondenserBuilder {
    pub(super) config: Config,
    pub(super) policy: Option<Box<dyn Policy>>,
    pub(super) llm: Option<Option<Arc<dyn Summarizer>>>,
    pub(super) hook: Option<Arc<dyn Hook>>,
    pub(super) progress: Option<ProgressFn>,
    pub(super) store_backend: Option<Arc<dyn StoreBackend>>,
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

    /// Keeps originals in `backend` instead of the one `[store]` names (for a backend of your
    /// own, or a [`DiskStore`](crate::store::DiskStore) opened elsewhere).
    pub fn store_backend(mut self, backend: Arc<dyn StoreBackend>) -> Self {
        self.store_backend = Some(backend);
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
        if llm.is_some() {
            secrets.prepare();
        }
        let config = Arc::new(self.config);
        let policy = self
            .policy
            .unwrap_or_else(|| Box::new(RulesPolicy::from_shared(config.clone())));
        let mapreduce = &config.mapreduce;
        // Chunk summaries are kept in the store (memory, then its backend), so processes that
        // share the backend share them; without an LLM there are none to keep.
        let chunk_bytes = if llm.is_some() {
            mapreduce.chunk_cache_max_bytes
        } else {
            0
        };
        let store = Store::new(&config.cache, &config.store, self.store_backend)
            .with_chunk_summaries(chunk_bytes, config.cache.ttl);
        let chunk_cache = store
            .keeps_chunk_summaries()
            .then(|| ChunkCache::over(Arc::new(store.clone())));
        let concurrency = config.llm.as_ref().map_or(5, |llm| llm.max_concurrency);
        // Merges have a lane of their own, so the tree climbs while the map runs.
        Ok(Condenser {
            inner: Arc::new(Inner {
                store,
                memory: MemoryBudget::new(config.limits.max_inflight_bytes),
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
