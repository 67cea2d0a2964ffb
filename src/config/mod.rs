//! `condense.toml`: loading, validation against the shipped JSON Schema, environment overrides.
//!
//! Every key has a default, so an empty file (or no file) is a valid configuration. The file is
//! validated with the JSON Schema in `schema/condense.schema.json` before it is read, so an
//! unknown key or a wrong type is an error that names the key and the file. Environment
//! variables override the file: `CONDENSE_<KEY>` for `[defaults]` keys, `CONDENSE_<SECTION>_<KEY>`
//! for the others (`CONDENSE_LLM_BASE_URL`, `CONDENSE_CACHE_TTL_S`, …), and
//! `CONDENSE_LLM_API_KEY` for the key itself.
//!
//! ```
//! use condense::{Config, Mode};
//!
//! let config = Config::from_toml_str(
//!     r#"
//!     [defaults]
//!     threshold_tokens = 2000
//!
//!     [[tools]]
//!     match = "get_secret*"
//!     mode = "passthrough"
//!     "#,
//!     "example.toml",
//! )
//! .unwrap();
//! assert_eq!(config.rule_for("get_secret_value").mode, Mode::Passthrough);
//! assert_eq!(config.rule_for("read_file").threshold_tokens, 2000);
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
pub use crate::structured::StructuredContentPolicy;

mod env;
mod file;
mod glob;
mod read;
mod rule;
mod store;
#[cfg(test)]
mod tests;

use env::{EnvVars, apply_env_overrides, validate};
use file::FileConfig;
pub use glob::glob_matches;
pub use read::MAX_CONFIG_FILE_BYTES;
pub(crate) use read::read_regular_file;
pub use rule::{BinaryPolicy, Mode, Rule, ToolRule};
pub use store::{StoreBackendKind, StoreConfig};

/// The JSON Schema every configuration is validated against.
pub const CONFIG_SCHEMA: &str = include_str!("../../schema/condense.schema.json");

/// The environment variable naming the config file when no path is given.
pub const CONFIG_PATH_ENV: &str = "CONDENSE_CONFIG";

/// The environment variable that holds the LLM API key directly, ahead of `[llm] api_key_env`.
pub const API_KEY_ENV: &str = "CONDENSE_LLM_API_KEY";

/// `[llm]`: the endpoint of the LLM rung.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct LlmConfig {
    /// An OpenAI-compatible endpoint (a LiteLLM proxy).
    pub base_url: String,
    /// The model name or alias. Default `summarizer`.
    pub model: String,
    /// The variable the key was read from. Default `LITELLM_API_KEY`.
    pub api_key_env: String,
    /// The key, read from the environment, never from the file.
    pub api_key: Option<String>,
    /// Direct summaries and map calls in flight at once, across the process. Default 5.
    /// Merges have their own lane, [`MapReduceConfig::reduce_concurrency`].
    pub max_concurrency: usize,
    /// Per-request timeout. Default 30 s.
    pub timeout: Duration,
    /// Retries per request. Default 2.
    pub max_retries: u32,
    /// The model's context window in tokens. Default 128,000.
    pub context_window: usize,
    /// Sampling temperature. Default 0.
    pub temperature: f32,
}

impl fmt::Debug for LlmConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmConfig")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key_env", &self.api_key_env)
            .field("api_key", &self.api_key.as_ref().map(|_| "[redacted]"))
            .field("max_concurrency", &self.max_concurrency)
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .field("context_window", &self.context_window)
            .field("temperature", &self.temperature)
            .finish()
    }
}

/// How a text is cut into chunks (`[mapreduce] strategy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ChunkStrategy {
    /// At structural boundaries (headers, paragraphs, lines, JSON elements) first, and at token
    /// boundaries only when a single unit is larger than a chunk. The default.
    #[default]
    Semantic,
    /// At fixed token windows with overlap, whatever the structure.
    Token,
}

impl ChunkStrategy {
    /// The name used in config files and tool arguments; stable, so it can key a cache.
    pub fn name(self) -> &'static str {
        match self {
            ChunkStrategy::Semantic => "semantic",
            ChunkStrategy::Token => "token",
        }
    }
}

/// The default of `[mapreduce] reduce_concurrency`: the merge lane that keeps up with a map of `max_concurrency` calls: half of it, rounded up,
/// at least 1. A tree in groups of 4 has about a third as many merges as chunks, so a map
/// finishing `C` chunks per latency needs about `C / 3` merges per latency; the rest is slack
/// for the bursts when a level's last groups complete together.
///
/// ```
/// use condense::config::default_reduce_concurrency;
/// assert_eq!(default_reduce_concurrency(5), 3);
/// assert_eq!(default_reduce_concurrency(1), 1);
/// ```
pub fn default_reduce_concurrency(max_concurrency: usize) -> usize {
    max_concurrency.div_ceil(2).max(1)
}

/// `[mapreduce]`: LLM summaries of outputs too large for one call.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct MapReduceConfig {
    /// Outputs up to this many tokens (that fit the model) get one call. Default 8000.
    pub direct_max_tokens: usize,
    /// The most tokens per chunk. Default 4000.
    pub chunk_tokens: usize,
    /// Overlap where a unit is cut at token boundaries. Default 200.
    pub overlap_tokens: usize,
    /// Structural (`semantic`) or fixed-window (`token`) chunking. Default semantic.
    pub strategy: ChunkStrategy,
    /// Summaries merged per reduce call. Default 4.
    pub group_size: usize,
    /// Merge calls in flight at once, across the process, beside `llm.max_concurrency`: the
    /// reduce tree climbs while the map is still running. Default half of
    /// `llm.max_concurrency`, rounded up (3).
    pub reduce_concurrency: usize,
    /// The most reduce levels. Default 8.
    pub max_passes: usize,
    /// Critique rounds after the reduce. Default 0.
    pub critique_rounds: usize,
    /// Whether the facts guard runs on LLM summaries. Default true.
    pub verify_facts: bool,
    /// Chunk summaries kept, by bytes. Default 64 MiB.
    pub chunk_cache_max_bytes: u64,
}

impl Default for MapReduceConfig {
    fn default() -> Self {
        MapReduceConfig {
            direct_max_tokens: 8000,
            chunk_tokens: 4000,
            overlap_tokens: 200,
            strategy: ChunkStrategy::Semantic,
            group_size: 4,
            reduce_concurrency: default_reduce_concurrency(5),
            max_passes: 8,
            critique_rounds: 0,
            verify_facts: true,
            chunk_cache_max_bytes: 64 << 20,
        }
    }
}

/// `[cache]`: how much is kept, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CacheConfig {
    /// Condensed results kept, by bytes; 0 turns the cache off. Default 256 MiB.
    pub max_bytes: u64,
    /// How long a condensed result is kept. Default 1 h.
    pub ttl: Duration,
    /// Originals kept for retrieval, by bytes. Default 512 MiB.
    pub originals_max_bytes: u64,
    /// How long an original is kept. Default 1 h.
    pub originals_ttl: Duration,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            max_bytes: 256 << 20,
            ttl: Duration::from_secs(3600),
            originals_max_bytes: 512 << 20,
            originals_ttl: Duration::from_secs(3600),
        }
    }
}

/// `[limits]`: hard bounds that hold for every tool, so hostile output cannot exhaust memory
/// or time. A section of its own rather than a `[defaults]` key: a per-tool rule must not be
/// able to lift a bound that protects the whole process.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct LimitsConfig {
    /// The most bytes of one output that are counted, condensed or passed on; the rest is cut
    /// off and the result carries a marker saying so. Default 64 MiB.
    pub max_input_bytes: usize,
    /// The memory that condensing calls of one engine (a proxy, a layer) may hold at once,
    /// reckoned at four times each input's size. A call that would exceed it waits up to two
    /// seconds, then is truncated instead, and says so in its fallback reason. 0: no budget.
    /// Default 512 MiB.
    pub max_inflight_bytes: usize,
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_input_bytes: 64 << 20,
            max_inflight_bytes: 512 << 20,
        }
    }
}

/// The default name of the argument each listed tool gains for the model's query.
pub const DEFAULT_QUERY_ARGUMENT: &str = "condense_query";

/// The default longest wait for the upstream's answer to one relayed request.
pub const DEFAULT_UPSTREAM_TIMEOUT: Duration = Duration::from_secs(120);

/// The tools the proxy adds to the upstream's by default: only `condense_retrieve`, which
/// returns the originals that condensed results name. Every added tool's definition is sent
/// with each model request of a session, so the others (`call_tool_summarized`, `summarize`,
/// `summarize_for_extraction`) are listed only when configured.
pub const DEFAULT_ADDED_TOOLS: &[&str] = &["condense_retrieve"];

/// The default first delay before restarting a crashed upstream server.
pub const DEFAULT_RESTART_BACKOFF_INITIAL: Duration = Duration::from_millis(100);

/// The default longest delay between restarts of a crashing upstream server.
pub const DEFAULT_RESTART_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// The default number of client sessions an HTTP proxy serves at once.
pub const DEFAULT_MAX_SESSIONS: usize = 32;

/// The default time after which an HTTP session with no traffic is closed, with its upstream.
pub const DEFAULT_SESSION_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

/// The default time an HTTP client has to send a request's headers, and then its body.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// `[proxy]`: what only `condense proxy` reads: its query argument and how it handles a failing
/// upstream server. Overridden by `CONDENSE_PROXY_<KEY>`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxyConfig {
    /// The name of the query argument added to the listed tools' input schemas. Default
    /// [`DEFAULT_QUERY_ARGUMENT`].
    pub query_argument_name: String,
    /// How long a request relayed to the upstream may go without an answer or a progress
    /// update before it is cancelled upstream and answered with a timeout error. Default [`DEFAULT_UPSTREAM_TIMEOUT`]; `None`
    /// (`upstream_timeout_ms = 0`) waits as long as the client does.
    pub upstream_timeout: Option<Duration>,
    /// The first delay before a crashed upstream server is started again; it doubles with
    /// every failure in a row. Default 100 ms.
    pub restart_backoff_initial: Duration,
    /// The longest delay between restarts. Default 30 s; never below the first delay.
    pub restart_backoff_max: Duration,
    /// Over HTTP, the most client sessions served at once (each has its own upstream); an
    /// `initialize` beyond it is refused. Default [`DEFAULT_MAX_SESSIONS`].
    pub max_sessions: usize,
    /// Over HTTP, how long a session may go without a request before it is closed and its
    /// upstream stopped. Default [`DEFAULT_SESSION_IDLE_TIMEOUT`].
    pub session_idle_timeout: Duration,
    /// Over HTTP, how long a client has to send a request's headers (from connecting, or from
    /// its previous request), and then its body. Default [`DEFAULT_READ_TIMEOUT`].
    pub read_timeout: Duration,
    /// Over HTTP, the browser origins accepted besides loopback ones (`http://localhost:*`,
    /// `http://127.0.0.1:*`, `http://[::1]:*` and their `https` forms), e.g.
    /// `"https://app.example.com"` or `"http://10.0.0.5:*"`. A request with another `Origin` is
    /// refused; one without `Origin` is not browser traffic and passes. Default: none.
    pub allowed_origins: Vec<String>,
    /// Over HTTP, the environment variable holding the bearer token every MCP request must
    /// carry (`Authorization: Bearer <token>`). Default: none (no token asked for).
    pub auth_token_env: Option<String>,
    /// Over HTTP, whether to serve a non-loopback address without a token. Default false: the
    /// proxy refuses to start instead.
    pub allow_unauthenticated: bool,
    /// The tools the proxy adds to the upstream's list, by name (`condense_retrieve`,
    /// `call_tool_summarized`, `summarize`, `summarize_for_extraction`). Default
    /// [`DEFAULT_ADDED_TOOLS`]; a tool not named is neither listed nor answered by the proxy.
    pub added_tools: Vec<String>,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        ProxyConfig {
            query_argument_name: DEFAULT_QUERY_ARGUMENT.to_owned(),
            upstream_timeout: Some(DEFAULT_UPSTREAM_TIMEOUT),
            restart_backoff_initial: DEFAULT_RESTART_BACKOFF_INITIAL,
            restart_backoff_max: DEFAULT_RESTART_BACKOFF_MAX,
            max_sessions: DEFAULT_MAX_SESSIONS,
            session_idle_timeout: DEFAULT_SESSION_IDLE_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            allowed_origins: Vec::new(),
            auth_token_env: None,
            allow_unauthenticated: false,
            added_tools: DEFAULT_ADDED_TOOLS
                .iter()
                .map(|&name| name.to_owned())
                .collect(),
        }
    }
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Config {
    /// `[defaults]`.
    pub defaults: Rule,
    /// `[[tools]]`, in file order.
    pub tools: Vec<ToolRule>,
    /// `[llm]`, when a `base_url` is set.
    pub llm: Option<LlmConfig>,
    /// `[mapreduce]`.
    pub mapreduce: MapReduceConfig,
    /// `[cache]`.
    pub cache: CacheConfig,
    /// `[limits]`.
    pub limits: LimitsConfig,
    /// `[store]`.
    pub store: StoreConfig,
    /// `[proxy]`.
    pub proxy: ProxyConfig,
    /// `[prompts] dir`: overrides for the built-in prompts.
    pub prompts_dir: Option<PathBuf>,
    /// `[llm] redact_secrets`: whether secrets in tool output are replaced by placeholders
    /// before any text is sent to the LLM (see [`crate::secrets`]). Default true. It applies to
    /// whichever LLM the engine uses, a configured client or one given to the builder, so it is
    /// kept here rather than in [`LlmConfig`], which exists only with a `base_url`.
    pub redact_secrets: bool,
    /// Where the configuration came from, for messages.
    pub origin: String,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            defaults: Rule::default(),
            tools: Vec::new(),
            llm: None,
            mapreduce: MapReduceConfig::default(),
            cache: CacheConfig::default(),
            limits: LimitsConfig::default(),
            store: StoreConfig::default(),
            proxy: ProxyConfig::default(),
            prompts_dir: None,
            redact_secrets: true,
            origin: String::new(),
        }
    }
}

impl Config {
    /// Loads the configuration: from `path` if given, else from the file named by
    /// `CONDENSE_CONFIG`, else the defaults; then applies environment overrides.
    ///
    /// # Errors
    ///
    /// When the file cannot be read, is not a regular file (a FIFO, a device; a symlink is
    /// followed to its target), is larger than [`MAX_CONFIG_FILE_BYTES`], is not TOML, or does
    /// not match the schema (the error names the file and the key), or an override variable
    /// holds a value of the wrong type.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let from_env = std::env::var_os(CONFIG_PATH_ENV).map(PathBuf::from);
        match path.map(Path::to_path_buf).or(from_env) {
            Some(path) => {
                let text = read_regular_file(&path).map_err(|source| ConfigError::Read {
                    path: path.clone(),
                    source,
                })?;
                Self::parse(&text, &path.display().to_string(), &EnvVars::process())
            }
            None => Self::parse("", "defaults", &EnvVars::process()),
        }
    }

    /// Reads a configuration from TOML text, without environment overrides. `origin` names the
    /// text in errors (a file name).
    ///
    /// # Errors
    ///
    /// When the text is not TOML or does not match the schema.
    pub fn from_toml_str(text: &str, origin: &str) -> Result<Config, ConfigError> {
        Self::parse(text, origin, &EnvVars::none())
    }

    /// Like [`Config::from_toml_str`], with overrides read from `vars` as if they were the
    /// process environment.
    ///
    /// # Errors
    ///
    /// As [`Config::from_toml_str`], and when an override holds a value of the wrong type.
    pub fn from_toml_str_with_env(
        text: &str,
        origin: &str,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        Self::parse(text, origin, &EnvVars::from_pairs(vars))
    }

    fn parse(text: &str, origin: &str, env: &EnvVars) -> Result<Config, ConfigError> {
        let table: toml::Table = text
            .parse()
            .map_err(|e: toml::de::Error| ConfigError::Toml {
                origin: origin.to_owned(),
                message: toml_error_without_source(&e, text),
            })?;
        let mut doc = serde_json::to_value(table).map_err(|e| ConfigError::Toml {
            origin: origin.to_owned(),
            message: excerpt(&e.to_string()),
        })?;
        let overridden = apply_env_overrides(&mut doc, env)?;
        validate(&doc, origin, &overridden)?;
        let file: FileConfig = serde_json::from_value(doc).map_err(|e| ConfigError::Invalid {
            origin: origin.to_owned(),
            key: String::new(),
            message: excerpt(&e.to_string()),
        })?;
        file.resolve(origin, env, &overridden)
    }

    /// The settings for `tool`: the first `[[tools]]` rule whose glob matches, over
    /// `[defaults]`.
    pub fn rule_for(&self, tool: &str) -> Rule {
        match self.tools.iter().find(|r| glob_matches(&r.pattern, tool)) {
            Some(rule) => rule.apply(self.defaults.clone()),
            None => self.defaults.clone(),
        }
    }
}

/// The longest excerpt of a file's content an error may carry.
const MAX_EXCERPT_CHARS: usize = 120;

/// A parse error as the line and column and what the parser expected, without the source line
/// that `toml`'s own message quotes: text that is not TOML may be anything the path points at
/// (a password file behind a symlink), so none of it is repeated.
fn toml_error_without_source(error: &toml::de::Error, text: &str) -> String {
    let what = excerpt(error.message());
    match error.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
            format!("line {line}, column {column}: {what}")
        }
        None => what,
    }
}

/// A message that may quote the file's values (a schema error's `"fast" is not one of …`): on
/// one line, with secrets redacted, cut to [`MAX_EXCERPT_CHARS`].
pub(super) fn excerpt(message: &str) -> String {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .collect();
    let joined = lines.join("; ");
    let redacted = crate::secrets::SecretRedactor::new()
        .redact(&joined)
        .into_owned();
    if redacted.chars().count() <= MAX_EXCERPT_CHARS {
        return redacted;
    }
    let mut cut: String = redacted.chars().take(MAX_EXCERPT_CHARS).collect();
    cut.push('…');
    cut
}
