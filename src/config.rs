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

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::OnceLock;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::error::ConfigError;
use crate::tokens::Encoding;

/// The JSON Schema every configuration is validated against.
pub const CONFIG_SCHEMA: &str = include_str!("../schema/condense.schema.json");

/// The environment variable naming the config file when no path is given.
pub const CONFIG_PATH_ENV: &str = "CONDENSE_CONFIG";

/// The environment variable that holds the LLM API key directly, ahead of `[llm] api_key_env`.
pub const API_KEY_ENV: &str = "CONDENSE_LLM_API_KEY";

/// What to do with a result above its threshold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Mode {
    /// The LLM when one is configured and answers in time, else the extractive compressor, else
    /// truncation.
    #[default]
    Auto,
    /// The LLM first; the extractive compressor and truncation still answer if it fails.
    Llm,
    /// The extractive compressor, no model.
    Extract,
    /// Token-exact head and tail truncation.
    Truncate,
    /// Never condense.
    Passthrough,
}

impl Mode {
    /// The name used in config files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Llm => "llm",
            Mode::Extract => "extract",
            Mode::Truncate => "truncate",
            Mode::Passthrough => "passthrough",
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Mode::Auto),
            "llm" => Ok(Mode::Llm),
            "extract" => Ok(Mode::Extract),
            "truncate" => Ok(Mode::Truncate),
            "passthrough" => Ok(Mode::Passthrough),
            other => Err(format!(
                "unknown mode `{other}`: expected auto, llm, extract, truncate or passthrough"
            )),
        }
    }
}

/// The settings that apply to one tool: `[defaults]` with the first matching `[[tools]]` rule
/// laid over it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rule {
    /// Results above this many tokens are condensed. Default 4000.
    pub threshold_tokens: usize,
    /// The condensed result's size in tokens, header included. Default 1500.
    pub budget_tokens: usize,
    /// How to condense. Default [`Mode::Auto`].
    pub mode: Mode,
    /// The whole condense step's deadline. Default 20 s.
    pub deadline: Duration,
    /// The tokenizer. Default `cl100k_base`.
    pub encoding: Encoding,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            threshold_tokens: 4000,
            budget_tokens: 1500,
            mode: Mode::Auto,
            deadline: Duration::from_millis(20_000),
            encoding: Encoding::Cl100kBase,
        }
    }
}

/// A `[[tools]]` entry: a glob on the tool name and the keys it sets.
#[derive(Debug, Clone, PartialEq, Eq, Default, Deserialize)]
#[non_exhaustive]
pub struct ToolRule {
    /// The glob: `*` any run, `?` one character, `[abc]` a set, `\` escapes.
    #[serde(rename = "match")]
    pub pattern: String,
    /// Overrides `threshold_tokens`.
    pub threshold_tokens: Option<usize>,
    /// Overrides `budget_tokens`.
    pub budget_tokens: Option<usize>,
    /// Overrides `mode`.
    pub mode: Option<Mode>,
    /// Overrides `deadline_ms`.
    pub deadline_ms: Option<u64>,
    /// Overrides `encoding`.
    pub encoding: Option<Encoding>,
}

impl ToolRule {
    fn apply(&self, mut rule: Rule) -> Rule {
        if let Some(v) = self.threshold_tokens {
            rule.threshold_tokens = v;
        }
        if let Some(v) = self.budget_tokens {
            rule.budget_tokens = v;
        }
        if let Some(v) = self.mode {
            rule.mode = v;
        }
        if let Some(v) = self.deadline_ms {
            rule.deadline = Duration::from_millis(v);
        }
        if let Some(v) = self.encoding {
            rule.encoding = v;
        }
        rule
    }
}

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
    pub strategy: crate::methods::chunk::ChunkStrategy,
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
            strategy: crate::methods::chunk::ChunkStrategy::Semantic,
            group_size: 4,
            reduce_concurrency: crate::methods::mapreduce::default_reduce_concurrency(5),
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
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            max_input_bytes: 64 << 20,
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
    /// When the file cannot be read, is not TOML, or does not match the schema (the error names
    /// the file and the key), or an override variable holds a value of the wrong type.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let from_env = std::env::var_os(CONFIG_PATH_ENV).map(PathBuf::from);
        match path.map(Path::to_path_buf).or(from_env) {
            Some(path) => {
                let text = std::fs::read_to_string(&path).map_err(|source| ConfigError::Read {
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
                message: e.to_string(),
            })?;
        let mut doc = serde_json::to_value(table).map_err(|e| ConfigError::Toml {
            origin: origin.to_owned(),
            message: e.to_string(),
        })?;
        let overridden = apply_env_overrides(&mut doc, env)?;
        validate(&doc, origin, &overridden)?;
        remove_proxy_rule_keys(&mut doc);
        let file: FileConfig = serde_json::from_value(doc).map_err(|e| ConfigError::Invalid {
            origin: origin.to_owned(),
            key: String::new(),
            message: e.to_string(),
        })?;
        Ok(file.resolve(origin, env))
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

/// The file's shape, as written; every key optional.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileConfig {
    defaults: FileRule,
    llm: Option<FileLlm>,
    mapreduce: FileMapReduce,
    cache: FileCache,
    limits: FileLimits,
    prompts: FilePrompts,
    tools: Vec<ToolRule>,
    /// `[proxy]`: read by the MCP proxy (`condense::mcp`), validated here by the schema.
    #[serde(rename = "proxy")]
    _proxy: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileRule {
    threshold_tokens: Option<usize>,
    budget_tokens: Option<usize>,
    mode: Option<Mode>,
    deadline_ms: Option<u64>,
    encoding: Option<Encoding>,
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
    strategy: Option<crate::methods::chunk::ChunkStrategy>,
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
            reduce_concurrency: self.reduce_concurrency.unwrap_or_else(|| {
                crate::methods::mapreduce::default_reduce_concurrency(max_concurrency)
            }),
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
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FilePrompts {
    dir: Option<PathBuf>,
}

impl FileConfig {
    fn resolve(self, origin: &str, env: &EnvVars) -> Config {
        let defaults = ToolRule {
            pattern: "*".into(),
            threshold_tokens: self.defaults.threshold_tokens,
            budget_tokens: self.defaults.budget_tokens,
            mode: self.defaults.mode,
            deadline_ms: self.defaults.deadline_ms,
            encoding: self.defaults.encoding,
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
        Config {
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
            },
            prompts_dir: self.prompts.dir,
            redact_secrets,
            origin: origin.to_owned(),
        }
    }
}

/// Environment variables, from the process or given (for tests and embedding).
#[derive(Debug)]
struct EnvVars(Option<BTreeMap<String, String>>);

impl EnvVars {
    fn process() -> Self {
        EnvVars(None)
    }

    fn none() -> Self {
        EnvVars(Some(BTreeMap::new()))
    }

    fn from_pairs(pairs: impl IntoIterator<Item = (String, String)>) -> Self {
        EnvVars(Some(pairs.into_iter().collect()))
    }

    fn get(&self, name: &str) -> Option<String> {
        match &self.0 {
            None => std::env::var(name).ok(),
            Some(map) => map.get(name).cloned(),
        }
    }
}

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| serde_json::from_str(CONFIG_SCHEMA).expect("the shipped schema is JSON"))
}

fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        jsonschema::validator_for(schema()).expect("the shipped schema is a valid JSON Schema")
    })
}

/// Keys of `[defaults]` and `[[tools]]` that only `condense proxy` reads. The schema checks
/// them, so one file serves the proxy and the engine; they have no environment variables,
/// because only the proxy would see them.
const PROXY_RULE_KEYS: [&str; 2] = ["query_argument", "structured_content"];

/// Removes [`PROXY_RULE_KEYS`] from a validated document, for the engine's strict reader.
fn remove_proxy_rule_keys(doc: &mut Value) {
    let strip = |rule: &mut Value| {
        if let Some(rule) = rule.as_object_mut() {
            for key in PROXY_RULE_KEYS {
                rule.remove(key);
            }
        }
    };
    if let Some(defaults) = doc.get_mut("defaults") {
        strip(defaults);
    }
    if let Some(Value::Array(tools)) = doc.get_mut("tools") {
        tools.iter_mut().for_each(strip);
    }
}

/// Sets every `CONDENSE_…` variable that names a schema key into the document, typed by the
/// schema. Returns, per JSON pointer set, the variable it came from, so validation errors can
/// name the variable instead of the file.
fn apply_env_overrides(
    doc: &mut Value,
    env: &EnvVars,
) -> Result<BTreeMap<String, String>, ConfigError> {
    let mut set = BTreeMap::new();
    let schema = schema();
    let sections = schema["properties"].as_object().into_iter().flatten();
    for (section, section_schema) in sections {
        let Some(keys) = section_schema.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (key, key_schema) in keys {
            if section == "defaults" && PROXY_RULE_KEYS.contains(&key.as_str()) {
                continue;
            }
            let var = if section == "defaults" {
                format!("CONDENSE_{}", key.to_uppercase())
            } else {
                format!("CONDENSE_{}_{}", section.to_uppercase(), key.to_uppercase())
            };
            let Some(raw) = env.get(&var) else { continue };
            let key_schema = resolve_ref(key_schema);
            let value = typed_env_value(&raw, key_schema).ok_or_else(|| ConfigError::Env {
                var: var.clone(),
                message: format!(
                    "`{raw}` is not a valid {}",
                    key_schema["type"].as_str().unwrap_or("value")
                ),
            })?;
            if !doc.is_object() {
                *doc = Value::Object(Default::default());
            }
            let section_value = doc
                .as_object_mut()
                .expect("made an object above")
                .entry(section.clone())
                .or_insert_with(|| Value::Object(Default::default()));
            if let Some(map) = section_value.as_object_mut() {
                map.insert(key.clone(), value);
                set.insert(format!("/{section}/{key}"), var);
            }
        }
    }
    Ok(set)
}

/// The `CONDENSE_<SECTION>_<KEY>` overrides of one section, typed by the schema: for the keys
/// the MCP proxy reads itself.
#[cfg(feature = "mcp")]
pub(crate) fn section_env_overrides(
    section: &str,
    vars: impl IntoIterator<Item = (String, String)>,
) -> Result<serde_json::Map<String, Value>, ConfigError> {
    let mut doc = Value::Object(serde_json::Map::new());
    apply_env_overrides(&mut doc, &EnvVars::from_pairs(vars))?;
    Ok(match doc.get_mut(section).map(Value::take) {
        Some(Value::Object(keys)) => keys,
        _ => serde_json::Map::new(),
    })
}

fn resolve_ref(schema_node: &Value) -> &Value {
    match schema_node.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix("#/$defs/")
            .and_then(|name| schema()["$defs"].get(name))
            .unwrap_or(schema_node),
        None => schema_node,
    }
}

fn typed_env_value(raw: &str, key_schema: &Value) -> Option<Value> {
    let raw = raw.trim();
    match key_schema.get("type").and_then(Value::as_str) {
        Some("integer") => raw.parse::<u64>().ok().map(Value::from),
        Some("number") => raw.parse::<f64>().ok().map(Value::from),
        Some("boolean") => raw.parse::<bool>().ok().map(Value::from),
        _ => Some(Value::String(raw.to_owned())),
    }
}

fn validate(
    doc: &Value,
    origin: &str,
    overridden: &BTreeMap<String, String>,
) -> Result<(), ConfigError> {
    let Some(error) = validator().iter_errors(doc).next() else {
        return Ok(());
    };
    let pointer = error.instance_path().to_string();
    let mut key = pointer_to_key(&pointer);
    let mut message = error.to_string();
    // An unknown key is reported at its parent; name the key itself.
    if let jsonschema::error::ValidationErrorKind::AdditionalProperties { unexpected } =
        error.kind()
        && let Some(name) = unexpected.first()
    {
        key = if key.is_empty() {
            name.clone()
        } else {
            format!("{key}.{name}")
        };
        message = format!("unknown key `{name}`");
    }
    if let Some(var) = overridden.get(&pointer) {
        return Err(ConfigError::Env {
            var: var.clone(),
            message,
        });
    }
    Err(ConfigError::Invalid {
        origin: origin.to_owned(),
        key,
        message,
    })
}

/// `/tools/0/mode` → `tools[0].mode`.
fn pointer_to_key(pointer: &str) -> String {
    let mut key = String::new();
    for part in pointer.split('/').filter(|p| !p.is_empty()) {
        if part.chars().all(|c| c.is_ascii_digit()) {
            key.push_str(&format!("[{part}]"));
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(&part.replace("~1", "/").replace("~0", "~"));
        }
    }
    key
}

/// Matches a tool name against a glob: `*` any run (possibly empty), `?` one character,
/// `[abc]` / `[a-z]` / `[!abc]` a set, `\x` a literal `x`. Anything else matches itself, so a
/// tool name holding glob characters can be matched by escaping them.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    // Iterative matching with single-star backtracking: linear-ish, no recursion.
    let (mut p, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                star = Some((p, n));
                p += 1;
                continue;
            }
            Some('?') => {
                p += 1;
                n += 1;
                continue;
            }
            Some('[') => {
                if let Some((matched, next)) = match_set(&pattern, p, name[n]) {
                    if matched {
                        p = next;
                        n += 1;
                        continue;
                    }
                } else if name[n] == '[' {
                    p += 1;
                    n += 1;
                    continue;
                }
            }
            Some('\\') if p + 1 < pattern.len() && pattern[p + 1] == name[n] => {
                p += 2;
                n += 1;
                continue;
            }
            // An escaped character that differs: no match here (not a literal backslash).
            Some('\\') if p + 1 < pattern.len() => {}
            Some(&c) if c == name[n] => {
                p += 1;
                n += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, sn)) => {
                p = sp + 1;
                n = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// Matches `c` against the set starting at `pattern[start] == '['`: whether it matched and the
/// index after the set, or `None` when the set is not closed (then `[` is a literal).
fn match_set(pattern: &[char], start: usize, c: char) -> Option<(bool, usize)> {
    let mut i = start + 1;
    let negated = matches!(pattern.get(i), Some('!') | Some('^'));
    if negated {
        i += 1;
    }
    let mut matched = false;
    let mut first = true;
    while i < pattern.len() {
        let lo = pattern[i];
        if lo == ']' && !first {
            return Some((matched != negated, i + 1));
        }
        first = false;
        if i + 2 < pattern.len() && pattern[i + 1] == '-' && pattern[i + 2] != ']' {
            if lo <= c && c <= pattern[i + 2] {
                matched = true;
            }
            i += 3;
        } else {
            if lo == c {
                matched = true;
            }
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> String {
        Config::from_toml_str(text, "condense.toml")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn empty_file_gives_documented_defaults() {
        let config = Config::from_toml_str("", "condense.toml").unwrap();
        assert_eq!(config.defaults, Rule::default());
        assert_eq!(config.defaults.threshold_tokens, 4000);
        assert_eq!(config.defaults.budget_tokens, 1500);
        assert!(config.llm.is_none());
        assert_eq!(config.cache, CacheConfig::default());
    }

    #[test]
    fn unknown_key_is_named_with_the_file() {
        let message = err("[defaults]\nthreshhold_tokens = 10\n");
        assert!(message.contains("condense.toml"), "{message}");
        assert!(message.contains("defaults.threshhold_tokens"), "{message}");
    }

    #[test]
    fn wrong_type_is_named_with_its_path() {
        let message =
            err("[[tools]]\nmatch = \"a\"\n\n[[tools]]\nmatch = \"b\"\nmode = \"fast\"\n");
        assert!(message.contains("tools[1].mode"), "{message}");
        let message = err("[llm]\nbase_url = 5\n");
        assert!(message.contains("llm.base_url"), "{message}");
    }

    #[test]
    fn first_matching_rule_wins() {
        let config = Config::from_toml_str(
            "[[tools]]\nmatch = \"read_*\"\nthreshold_tokens = 8000\n\n[[tools]]\nmatch = \"read_file\"\nthreshold_tokens = 1\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(config.rule_for("read_file").threshold_tokens, 8000);
        assert_eq!(config.rule_for("list").threshold_tokens, 4000);
    }

    #[test]
    fn environment_overrides_the_file() {
        let config = Config::from_toml_str_with_env(
            "[defaults]\nbudget_tokens = 900\n[llm]\nbase_url = \"http://file\"\n",
            "t.toml",
            [
                ("CONDENSE_BUDGET_TOKENS".to_owned(), "700".to_owned()),
                (
                    "CONDENSE_LLM_BASE_URL".to_owned(),
                    "http://env:4000".to_owned(),
                ),
                ("CONDENSE_LLM_API_KEY".to_owned(), "sk-test".to_owned()),
            ],
        )
        .unwrap();
        assert_eq!(config.defaults.budget_tokens, 700);
        let llm = config.llm.unwrap();
        assert_eq!(llm.base_url, "http://env:4000");
        assert_eq!(llm.api_key.as_deref(), Some("sk-test"));
        assert!(!format!("{llm:?}").contains("sk-test"));
    }

    #[test]
    fn the_merge_lane_defaults_to_half_the_map_lane_and_can_be_set() {
        assert_eq!(Config::default().mapreduce.reduce_concurrency, 3);
        let derived = Config::from_toml_str_with_env(
            "[llm]\nbase_url = \"http://file\"\n",
            "t.toml",
            [("CONDENSE_LLM_MAX_CONCURRENCY".to_owned(), "8".to_owned())],
        )
        .unwrap();
        assert_eq!(derived.mapreduce.reduce_concurrency, 4);
        let set = Config::from_toml_str(
            "[llm]\nmax_concurrency = 8\n[mapreduce]\nreduce_concurrency = 1\n",
            "t.toml",
        )
        .unwrap();
        assert_eq!(set.mapreduce.reduce_concurrency, 1);
        let from_env = Config::from_toml_str_with_env(
            "",
            "t.toml",
            [(
                "CONDENSE_MAPREDUCE_REDUCE_CONCURRENCY".to_owned(),
                "2".to_owned(),
            )],
        )
        .unwrap();
        assert_eq!(from_env.mapreduce.reduce_concurrency, 2);
        let message = err("[mapreduce]\nreduce_concurrency = 0\n");
        assert!(message.contains("reduce_concurrency"), "{message}");
    }

    #[test]
    fn secrets_are_redacted_unless_turned_off_even_without_a_base_url() {
        assert!(Config::default().redact_secrets);
        assert!(Config::from_toml_str("", "t.toml").unwrap().redact_secrets);
        let off = Config::from_toml_str("[llm]\nredact_secrets = false\n", "t.toml").unwrap();
        assert!(!off.redact_secrets);
        assert!(off.llm.is_none());
        let from_env = Config::from_toml_str_with_env(
            "",
            "t.toml",
            [("CONDENSE_LLM_REDACT_SECRETS".to_owned(), "false".to_owned())],
        )
        .unwrap();
        assert!(!from_env.redact_secrets);
    }

    #[test]
    fn bad_environment_value_names_the_variable() {
        let message = Config::from_toml_str_with_env(
            "",
            "t.toml",
            [("CONDENSE_THRESHOLD_TOKENS".to_owned(), "lots".to_owned())],
        )
        .unwrap_err()
        .to_string();
        assert!(message.contains("CONDENSE_THRESHOLD_TOKENS"), "{message}");
        let message = Config::from_toml_str_with_env(
            "",
            "t.toml",
            [("CONDENSE_MODE".to_owned(), "fast".to_owned())],
        )
        .unwrap_err()
        .to_string();
        assert!(message.contains("CONDENSE_MODE"), "{message}");
    }

    #[test]
    fn globs_match_like_shell_patterns() {
        assert!(glob_matches("read_*", "read_file"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("*_logs", "search_logs"));
        assert!(glob_matches("get_?", "get_x"));
        assert!(!glob_matches("get_?", "get_xy"));
        assert!(glob_matches("[ab]*", "beta"));
        assert!(!glob_matches("[!ab]*", "beta"));
        assert!(glob_matches("tool\\*", "tool*"));
        assert!(!glob_matches("tool\\*", "toolx"));
        assert!(glob_matches("a*b*c", "a__b__b__c"));
        assert!(glob_matches("weird[name", "weird[name"));
    }
}
