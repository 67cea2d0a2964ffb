//! The file's shape, as written, and how it resolves into a [`Config`].

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::env::EnvVars;
use super::store::FileStore;
use super::{
    API_KEY_ENV, BinaryPolicy, CacheConfig, Config, LimitsConfig, LlmConfig, MapReduceConfig, Mode,
    ProxyConfig, Rule, StructuredContentPolicy, ToolRule,
};
use crate::error::ConfigError;
use crate::tokens::Encoding;

/// The file's shape, as written; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct FileConfig {
    defaults: FileRule,
    llm: Option<FileLlm>,
    mapreduce: FileMapReduce,
    cache: FileCache,
    limits: FileLimits,
    prompts: FilePrompts,
    tools: Vec<ToolRule>,
    proxy: FileProxy,
    store: FileStore,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileRule {
    threshold_tokens: Option<usize>,
    budget_tokens: Option<usize>,
    mode: Option<Mode>,
    deadline_ms: Option<u64>,
    encoding: Option<Encoding>,
    structured_content: Option<StructuredContentPolicy>,
    query_argument: Option<bool>,
    binary: Option<BinaryPolicy>,
    binary_max_bytes: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileLlm {
    base_url: Option<String>,
    model: Option<String>,
    api_key_env: Option<String>,
    max_concurrency: Option<usize>,
    timeout_ms: Option<u64>,
    max_retries: Option<u32>,
    context_window: Option<usize>,
    temperature: Option<f32>,
    redact_secrets: Option<bool>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileMapReduce {
    direct_max_tokens: Option<usize>,
    chunk_tokens: Option<usize>,
    overlap_tokens: Option<usize>,
    strategy: Option<super::ChunkStrategy>,
    group_size: Option<usize>,
    reduce_concurrency: Option<usize>,
    max_passes: Option<usize>,
    critique_rounds: Option<usize>,
    verify_facts: Option<bool>,
    chunk_cache_max_bytes: Option<u64>,
}

impl FileMapReduce {
    /// `max_concurrency` is `[llm]`'s, which the merge lane defaults to half of.
    fn resolve(self, max_concurrency: usize) -> MapReduceConfig {
        let d = MapReduceConfig::default();
        MapReduceConfig {
            direct_max_tokens: self.direct_max_tokens.unwrap_or(d.direct_max_tokens),
            chunk_tokens: self.chunk_tokens.unwrap_or(d.chunk_tokens),
            overlap_tokens: self.overlap_tokens.unwrap_or(d.overlap_tokens),
            strategy: self.strategy.unwrap_or(d.strategy),
            group_size: self.group_size.unwrap_or(d.group_size),
            reduce_concurrency: self
                .reduce_concurrency
                .unwrap_or_else(|| super::default_reduce_concurrency(max_concurrency)),
            max_passes: self.max_passes.unwrap_or(d.max_passes),
            critique_rounds: self.critique_rounds.unwrap_or(d.critique_rounds),
            verify_facts: self.verify_facts.unwrap_or(d.verify_facts),
            chunk_cache_max_bytes: self
                .chunk_cache_max_bytes
                .unwrap_or(d.chunk_cache_max_bytes),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileCache {
    max_bytes: Option<u64>,
    ttl_s: Option<u64>,
    originals_max_bytes: Option<u64>,
    originals_ttl_s: Option<u64>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileLimits {
    max_input_bytes: Option<usize>,
    max_inflight_bytes: Option<usize>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileProxy {
    query_argument_name: Option<String>,
    upstream_timeout_ms: Option<u64>,
    restart_backoff_initial_ms: Option<u64>,
    restart_backoff_max_ms: Option<u64>,
    max_sessions: Option<usize>,
    session_idle_timeout_ms: Option<u64>,
    read_timeout_ms: Option<u64>,
    allowed_origins: Option<Vec<String>>,
    auth_token_env: Option<String>,
    allow_unauthenticated: Option<bool>,
    added_tools: Option<Vec<String>>,
}

impl FileProxy {
    /// The schema has checked each key's range; what it cannot check is the pair of backoff
    /// delays.
    fn resolve(self, origin: &str) -> Result<ProxyConfig, ConfigError> {
        let d = ProxyConfig::default();
        let proxy = ProxyConfig {
            query_argument_name: self.query_argument_name.unwrap_or(d.query_argument_name),
            upstream_timeout: match self.upstream_timeout_ms {
                None => d.upstream_timeout,
                Some(0) => None,
                Some(millis) => Some(Duration::from_millis(millis)),
            },
            restart_backoff_initial: self
                .restart_backoff_initial_ms
                .map_or(d.restart_backoff_initial, Duration::from_millis),
            restart_backoff_max: self
                .restart_backoff_max_ms
                .map_or(d.restart_backoff_max, Duration::from_millis),
            max_sessions: self.max_sessions.unwrap_or(d.max_sessions),
            session_idle_timeout: self
                .session_idle_timeout_ms
                .map_or(d.session_idle_timeout, Duration::from_millis),
            read_timeout: self
                .read_timeout_ms
                .map_or(d.read_timeout, Duration::from_millis),
            allowed_origins: self.allowed_origins.unwrap_or(d.allowed_origins),
            auth_token_env: self.auth_token_env.or(d.auth_token_env),
            allow_unauthenticated: self
                .allow_unauthenticated
                .unwrap_or(d.allow_unauthenticated),
            added_tools: self.added_tools.unwrap_or(d.added_tools),
        };
        if proxy.restart_backoff_max < proxy.restart_backoff_initial {
            return Err(ConfigError::Invalid {
                origin: origin.to_owned(),
                key: "proxy.restart_backoff_max_ms".into(),
                message: format!(
                    "{} ms must not be below proxy.restart_backoff_initial_ms ({} ms)",
                    proxy.restart_backoff_max.as_millis(),
                    proxy.restart_backoff_initial.as_millis()
                ),
            });
        }
        Ok(proxy)
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FilePrompts {
    dir: Option<PathBuf>,
}

impl FileConfig {
    /// `overridden` maps the JSON pointers set from the environment to their variables, so a
    /// value that fails here is reported under the variable that set it.
    pub(super) fn resolve(
        self,
        origin: &str,
        env: &EnvVars,
        overridden: &BTreeMap<String, String>,
    ) -> Result<Config, ConfigError> {
        if let Some(base_url) = self.llm.as_ref().and_then(|llm| llm.base_url.as_deref()) {
            check_base_url(base_url, origin, overridden)?;
        }
        let defaults = ToolRule {
            pattern: "*".into(),
            threshold_tokens: self.defaults.threshold_tokens,
            budget_tokens: self.defaults.budget_tokens,
            mode: self.defaults.mode,
            deadline_ms: self.defaults.deadline_ms,
            encoding: self.defaults.encoding,
            structured_content: self.defaults.structured_content,
            query_argument: self.defaults.query_argument,
            binary: self.defaults.binary,
            binary_max_bytes: self.defaults.binary_max_bytes,
        }
        .apply(Rule::default());
        let max_concurrency = self
            .llm
            .as_ref()
            .and_then(|llm| llm.max_concurrency)
            .unwrap_or(5);
        let redact_secrets = self
            .llm
            .as_ref()
            .and_then(|llm| llm.redact_secrets)
            .unwrap_or(true);
        let llm = self.llm.and_then(|llm| {
            let base_url = llm.base_url?;
            let api_key_env = llm.api_key_env.unwrap_or_else(|| "LITELLM_API_KEY".into());
            let api_key = env
                .get(API_KEY_ENV)
                .or_else(|| env.get(&api_key_env))
                .filter(|k| !k.is_empty());
            Some(LlmConfig {
                base_url,
                model: llm.model.unwrap_or_else(|| "summarizer".into()),
                api_key_env,
                api_key,
                max_concurrency,
                timeout: Duration::from_millis(llm.timeout_ms.unwrap_or(30_000)),
                max_retries: llm.max_retries.unwrap_or(2),
                context_window: llm.context_window.unwrap_or(128_000),
                temperature: llm.temperature.unwrap_or(0.0),
            })
        });
        let cache_defaults = CacheConfig::default();
        let proxy = self.proxy.resolve(origin)?;
        let store = self.store.resolve(origin, overridden)?;
        Ok(Config {
            defaults,
            tools: self.tools,
            llm,
            mapreduce: self.mapreduce.resolve(max_concurrency),
            cache: CacheConfig {
                max_bytes: self.cache.max_bytes.unwrap_or(cache_defaults.max_bytes),
                ttl: self
                    .cache
                    .ttl_s
                    .map(Duration::from_secs)
                    .unwrap_or(cache_defaults.ttl),
                originals_max_bytes: self
                    .cache
                    .originals_max_bytes
                    .unwrap_or(cache_defaults.originals_max_bytes),
                originals_ttl: self
                    .cache
                    .originals_ttl_s
                    .map(Duration::from_secs)
                    .unwrap_or(cache_defaults.originals_ttl),
            },
            limits: LimitsConfig {
                max_input_bytes: self
                    .limits
                    .max_input_bytes
                    .unwrap_or(LimitsConfig::default().max_input_bytes),
                max_inflight_bytes: self
                    .limits
                    .max_inflight_bytes
                    .unwrap_or(LimitsConfig::default().max_inflight_bytes),
            },
            store,
            proxy,
            prompts_dir: self.prompts.dir,
            redact_secrets,
            origin: origin.to_owned(),
        })
    }
}

/// A `base_url` the client could not use is a configuration error at load, naming the variable
/// when `CONDENSE_LLM_BASE_URL` set it. The URL itself is not echoed: it may carry a password.
fn check_base_url(
    base_url: &str,
    origin: &str,
    overridden: &BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    let Err(error) = crate::llm::chat_completions_url(base_url) else {
        return Ok(());
    };
    let message = match error {
        crate::llm::LlmError::InvalidConfig(message) => message,
        other => other.to_string(),
    };
    Err(match overridden.get("/llm/base_url") {
        Some(var) => ConfigError::Env {
            var: var.clone(),
            message,
        },
        None => ConfigError::Invalid {
            origin: origin.to_owned(),
            key: "llm.base_url".into(),
            message,
        },
    })
}
