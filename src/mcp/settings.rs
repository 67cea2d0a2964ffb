//! What the proxy decides per tool: thresholds, budgets, the query channel and the
//! `structuredContent` policy, read from the `condense.toml` the rest of the crate uses.
//!
//! Only the keys the proxy acts on are read here, leniently: the crate's configuration loader
//! owns validation of the whole file. Rules are matched by glob on the tool name, first match
//! wins, and every key of a rule falls back to `[defaults]`.

use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

use super::error::ProxyError;
use crate::config::glob_matches;

/// The default name of the argument each listed tool gains for the model's query.
pub const DEFAULT_QUERY_ARGUMENT: &str = "condense_query";

/// What happens to a tool result's `structuredContent` when the tool declares an
/// `outputSchema`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StructuredContentPolicy {
    /// Remove the `outputSchema` from the listed tool, and drop `structuredContent` from the
    /// results that are condensed (small results keep it). The default: a client that shows
    /// `structuredContent` to the model would otherwise get the whole payload back, and no
    /// generic shrinking keeps the meaning of a value that a schema describes.
    #[default]
    Drop,
    /// Forward `structuredContent` and the schema untouched, even when the text is condensed.
    Keep,
    /// Shrink `structuredContent` (drop array items from the end, largest arrays first) while
    /// it still validates against the tool's `outputSchema`; keep it whole when no smaller
    /// valid value exists.
    Condense,
}

/// What condensing mode a tool uses: the engine's [`Mode`](crate::config::Mode); the proxy
/// itself only acts on `passthrough`.
pub type ToolMode = crate::config::Mode;

/// The settings that apply to one tool, after rule matching.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolSettings {
    /// Above this many tokens a result is condensed.
    pub threshold_tokens: usize,
    /// The condensed result's size in tokens.
    pub budget_tokens: usize,
    /// The condensing mode.
    pub mode: ToolMode,
    /// Whether the tool's input schema gains the query argument.
    pub query_argument: bool,
    /// What to do with `structuredContent`.
    pub structured_content: StructuredContentPolicy,
}

impl Default for ToolSettings {
    fn default() -> Self {
        ToolSettings {
            threshold_tokens: 4000,
            budget_tokens: 1500,
            mode: ToolMode::Auto,
            query_argument: true,
            structured_content: StructuredContentPolicy::Drop,
        }
    }
}

/// The default first delay before restarting a crashed upstream server.
pub const DEFAULT_RESTART_BACKOFF_INITIAL: Duration = Duration::from_millis(100);

/// The default longest delay between restarts of a crashing upstream server.
pub const DEFAULT_RESTART_BACKOFF_MAX: Duration = Duration::from_secs(30);

/// The proxy's view of the configuration file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxySettings {
    /// The settings for tools no rule matches.
    pub defaults: ToolSettings,
    /// The name of the query argument added to every tool's input schema.
    pub query_argument_name: String,
    /// How long a request relayed to the upstream may take before it is cancelled upstream and
    /// answered with a timeout error. Default: none (the client's own timeout and
    /// cancellation apply).
    pub upstream_timeout: Option<Duration>,
    /// The first delay before a crashed upstream server is started again; it doubles with
    /// every failure in a row. Default: 100 ms.
    pub restart_backoff_initial: Duration,
    /// The longest delay between restarts. Default: 30 s.
    pub restart_backoff_max: Duration,
    rules: Vec<Rule>,
}

impl Default for ProxySettings {
    fn default() -> Self {
        ProxySettings::new()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    pattern: String,
    overrides: Overrides,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
struct Overrides {
    threshold_tokens: Option<usize>,
    budget_tokens: Option<usize>,
    mode: Option<ToolMode>,
    query_argument: Option<bool>,
    structured_content: Option<StructuredContentPolicy>,
}

#[derive(Debug, Default, Deserialize)]
struct FileShape {
    #[serde(default)]
    defaults: Overrides,
    #[serde(default)]
    proxy: ProxySection,
    #[serde(default)]
    tools: Vec<RuleShape>,
}

#[derive(Debug, Default, Deserialize)]
struct ProxySection {
    query_argument_name: Option<String>,
    upstream_timeout_ms: Option<u64>,
    restart_backoff_initial_ms: Option<u64>,
    restart_backoff_max_ms: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct RuleShape {
    #[serde(rename = "match")]
    pattern: String,
    #[serde(flatten)]
    overrides: Overrides,
}

impl ProxySettings {
    /// The settings when no configuration file is given.
    pub fn new() -> Self {
        ProxySettings {
            defaults: ToolSettings::default(),
            query_argument_name: DEFAULT_QUERY_ARGUMENT.to_owned(),
            upstream_timeout: None,
            restart_backoff_initial: DEFAULT_RESTART_BACKOFF_INITIAL,
            restart_backoff_max: DEFAULT_RESTART_BACKOFF_MAX,
            rules: Vec::new(),
        }
    }

    /// Parses the proxy's keys from the text of a `condense.toml`.
    ///
    /// # Errors
    ///
    /// A [`ProxyError::Config`] naming the file when the text is not TOML or a key the proxy
    /// reads has the wrong type.
    pub fn from_toml(text: &str, path: &Path) -> Result<Self, ProxyError> {
        Self::from_toml_with_env(text, path, std::iter::empty())
    }

    /// Like [`ProxySettings::from_toml`], with the `CONDENSE_PROXY_<KEY>` overrides read from
    /// `vars` as if they were the process environment.
    ///
    /// ```
    /// use std::path::Path;
    /// use std::time::Duration;
    /// use condense::mcp::ProxySettings;
    ///
    /// let settings = ProxySettings::from_toml_with_env(
    ///     "[proxy]\nupstream_timeout_ms = 1000\n",
    ///     Path::new("condense.toml"),
    ///     [("CONDENSE_PROXY_UPSTREAM_TIMEOUT_MS".to_owned(), "60000".to_owned())],
    /// )?;
    /// assert_eq!(settings.upstream_timeout, Some(Duration::from_secs(60)));
    /// assert_eq!(settings.restart_backoff_max, Duration::from_secs(30));
    /// # Ok::<(), condense::mcp::ProxyError>(())
    /// ```
    ///
    /// # Errors
    ///
    /// As [`ProxySettings::from_toml`], and when an override holds a value of the wrong type
    /// (the error names the variable).
    pub fn from_toml_with_env(
        text: &str,
        path: &Path,
        vars: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, ProxyError> {
        let invalid = |message: String| ProxyError::Config {
            path: path.to_owned(),
            message,
        };
        let mut shape: FileShape =
            toml::from_str(text).map_err(|error| invalid(error.to_string()))?;
        let overrides = crate::config::section_env_overrides("proxy", vars)
            .map_err(|error| invalid(error.to_string()))?;
        if !overrides.is_empty() {
            let overrides: ProxySection = serde_json::from_value(overrides.into())
                .map_err(|error| invalid(error.to_string()))?;
            shape.proxy.apply(overrides);
        }
        let mut settings = ProxySettings::new();
        settings.defaults = apply(&ToolSettings::default(), &shape.defaults);
        if let Some(name) = shape.proxy.query_argument_name {
            if name.is_empty() {
                return Err(invalid(
                    "proxy.query_argument_name must not be empty".into(),
                ));
            }
            settings.query_argument_name = name;
        }
        settings.upstream_timeout = shape
            .proxy
            .upstream_timeout_ms
            .filter(|millis| *millis > 0)
            .map(Duration::from_millis);
        if let Some(millis) = shape.proxy.restart_backoff_initial_ms {
            if millis == 0 {
                return Err(invalid(
                    "proxy.restart_backoff_initial_ms must be at least 1".into(),
                ));
            }
            settings.restart_backoff_initial = Duration::from_millis(millis);
        }
        if let Some(millis) = shape.proxy.restart_backoff_max_ms {
            settings.restart_backoff_max = Duration::from_millis(millis);
        }
        if settings.restart_backoff_max < settings.restart_backoff_initial {
            return Err(invalid(format!(
                "proxy.restart_backoff_max_ms ({} ms) must not be below proxy.restart_backoff_initial_ms ({} ms)",
                settings.restart_backoff_max.as_millis(),
                settings.restart_backoff_initial.as_millis()
            )));
        }
        settings.rules = shape
            .tools
            .into_iter()
            .map(|rule| Rule {
                pattern: rule.pattern,
                overrides: rule.overrides,
            })
            .collect();
        Ok(settings)
    }

    /// Reads and parses a configuration file.
    ///
    /// # Errors
    ///
    /// A [`ProxyError::Config`] when the file cannot be read or parsed.
    pub fn load(path: &Path) -> Result<Self, ProxyError> {
        let text = std::fs::read_to_string(path).map_err(|error| ProxyError::Config {
            path: path.to_owned(),
            message: error.to_string(),
        })?;
        Self::from_toml(&text, path)
    }

    /// The settings for `tool`: the first rule whose glob matches, over the defaults.
    pub fn for_tool(&self, tool: &str) -> ToolSettings {
        match self
            .rules
            .iter()
            .find(|rule| glob_matches(&rule.pattern, tool))
        {
            Some(rule) => apply(&self.defaults, &rule.overrides),
            None => self.defaults.clone(),
        }
    }
}

impl ProxySection {
    /// Takes every key `overrides` sets.
    fn apply(&mut self, overrides: ProxySection) {
        let ProxySection {
            query_argument_name,
            upstream_timeout_ms,
            restart_backoff_initial_ms,
            restart_backoff_max_ms,
        } = overrides;
        self.query_argument_name = query_argument_name.or(self.query_argument_name.take());
        self.upstream_timeout_ms = upstream_timeout_ms.or(self.upstream_timeout_ms);
        self.restart_backoff_initial_ms =
            restart_backoff_initial_ms.or(self.restart_backoff_initial_ms);
        self.restart_backoff_max_ms = restart_backoff_max_ms.or(self.restart_backoff_max_ms);
    }
}

fn apply(base: &ToolSettings, overrides: &Overrides) -> ToolSettings {
    ToolSettings {
        threshold_tokens: overrides.threshold_tokens.unwrap_or(base.threshold_tokens),
        budget_tokens: overrides.budget_tokens.unwrap_or(base.budget_tokens),
        mode: overrides.mode.unwrap_or(base.mode),
        query_argument: overrides.query_argument.unwrap_or(base.query_argument),
        structured_content: overrides
            .structured_content
            .unwrap_or(base.structured_content),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> ProxySettings {
        ProxySettings::from_toml(text, Path::new("condense.toml")).expect("valid settings")
    }

    #[test]
    fn glob_star_and_question_mark_match() {
        assert!(glob_matches("read_*", "read_file"));
        assert!(glob_matches("*", ""));
        assert!(glob_matches("get_?", "get_x"));
        assert!(!glob_matches("get_?", "get_xy"));
        assert!(glob_matches("*_file*", "read_text_file"));
        assert!(!glob_matches("read_*", "write_file"));
    }

    #[test]
    fn first_matching_rule_wins_over_defaults() {
        let settings = parse(
            r#"
            [defaults]
            threshold_tokens = 100
            [[tools]]
            match = "read_*"
            threshold_tokens = 8000
            [[tools]]
            match = "read_secret"
            mode = "passthrough"
            "#,
        );
        assert_eq!(settings.for_tool("read_secret").threshold_tokens, 8000);
        assert_eq!(settings.for_tool("read_secret").mode, ToolMode::Auto);
        assert_eq!(settings.for_tool("echo").threshold_tokens, 100);
    }

    #[test]
    fn query_argument_and_structured_policy_are_per_tool() {
        let settings = parse(
            r#"
            [proxy]
            query_argument_name = "goal"
            [[tools]]
            match = "echo"
            query_argument = false
            structured_content = "keep"
            "#,
        );
        assert_eq!(settings.query_argument_name, "goal");
        let echo = settings.for_tool("echo");
        assert!(!echo.query_argument);
        assert_eq!(echo.structured_content, StructuredContentPolicy::Keep);
        let other = settings.for_tool("other");
        assert!(other.query_argument);
        assert_eq!(other.structured_content, StructuredContentPolicy::Drop);
    }

    #[test]
    fn unknown_keys_are_left_to_the_main_loader() {
        let settings = parse("[llm]\nbase_url = \"http://x\"\n[cache]\nttl_s = 5\n");
        assert_eq!(settings, ProxySettings::new());
    }

    #[test]
    fn one_file_serves_the_proxy_and_the_engine() {
        let text = "[defaults]\nthreshold_tokens = 5\nstructured_content = \"keep\"\n[proxy]\nquery_argument_name = \"q\"\n[[tools]]\nmatch = \"x\"\nquery_argument = false\n";
        let settings = parse(text);
        assert_eq!(settings.query_argument_name, "q");
        assert_eq!(
            settings.defaults.structured_content,
            StructuredContentPolicy::Keep
        );
        assert!(!settings.for_tool("x").query_argument);
        let config = crate::Config::from_toml_str(text, "t").expect("the engine accepts it");
        assert_eq!(config.defaults.threshold_tokens, 5);
    }

    #[test]
    fn the_schema_checks_the_proxy_keys_for_the_engine_loader_too() {
        for (text, key) in [
            ("[proxy]\nbogus = 1\n", "proxy.bogus"),
            (
                "[proxy]\nrestart_backoff_initial_ms = 0\n",
                "proxy.restart_backoff_initial_ms",
            ),
            (
                "[[tools]]\nmatch = \"x\"\nstructured_content = \"shrink\"\n",
                "tools[0].structured_content",
            ),
        ] {
            let message = crate::Config::from_toml_str(text, "t.toml")
                .expect_err(text)
                .to_string();
            assert!(message.contains(key), "{text}: {message}");
        }
    }

    #[test]
    fn upstream_keys_default_to_no_timeout_and_100_ms_doubling_to_30_s() {
        let settings = parse("");
        assert_eq!(settings.upstream_timeout, None);
        assert_eq!(settings.restart_backoff_initial, Duration::from_millis(100));
        assert_eq!(settings.restart_backoff_max, Duration::from_secs(30));
    }

    #[test]
    fn upstream_keys_are_read_and_zero_timeout_means_none() {
        let settings = parse(
            "[proxy]\nupstream_timeout_ms = 2500\nrestart_backoff_initial_ms = 50\nrestart_backoff_max_ms = 800\n",
        );
        assert_eq!(settings.upstream_timeout, Some(Duration::from_millis(2500)));
        assert_eq!(settings.restart_backoff_initial, Duration::from_millis(50));
        assert_eq!(settings.restart_backoff_max, Duration::from_millis(800));
        assert_eq!(
            parse("[proxy]\nupstream_timeout_ms = 0\n").upstream_timeout,
            None
        );
    }

    #[test]
    fn backoff_cap_below_the_initial_delay_is_an_error_naming_both_keys() {
        let error = ProxySettings::from_toml(
            "[proxy]\nrestart_backoff_initial_ms = 500\nrestart_backoff_max_ms = 100\n",
            Path::new("c.toml"),
        )
        .expect_err("a cap below the first delay is invalid");
        let message = error.to_string();
        assert!(
            message.contains("restart_backoff_max_ms") && message.contains("c.toml"),
            "{message}"
        );
    }

    #[test]
    fn environment_overrides_the_proxy_keys() {
        let settings = ProxySettings::from_toml_with_env(
            "[proxy]\nupstream_timeout_ms = 1000\n",
            Path::new("c.toml"),
            [
                (
                    "CONDENSE_PROXY_UPSTREAM_TIMEOUT_MS".to_owned(),
                    "3000".to_owned(),
                ),
                (
                    "CONDENSE_PROXY_RESTART_BACKOFF_MAX_MS".to_owned(),
                    "5000".to_owned(),
                ),
            ],
        )
        .expect("valid overrides");
        assert_eq!(settings.upstream_timeout, Some(Duration::from_secs(3)));
        assert_eq!(settings.restart_backoff_max, Duration::from_secs(5));
    }

    #[test]
    fn bad_environment_value_names_the_variable() {
        let error = ProxySettings::from_toml_with_env(
            "",
            Path::new("c.toml"),
            [(
                "CONDENSE_PROXY_UPSTREAM_TIMEOUT_MS".to_owned(),
                "soon".to_owned(),
            )],
        )
        .expect_err("not a number");
        assert!(
            error
                .to_string()
                .contains("CONDENSE_PROXY_UPSTREAM_TIMEOUT_MS"),
            "{error}"
        );
    }

    #[test]
    fn wrong_type_is_an_error_naming_the_file() {
        let error = ProxySettings::from_toml(
            "[defaults]\nthreshold_tokens = \"many\"",
            Path::new("c.toml"),
        )
        .expect_err("a string threshold is invalid");
        assert!(error.to_string().contains("c.toml"), "{error}");
    }
}
