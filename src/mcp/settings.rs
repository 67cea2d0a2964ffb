//! What the proxy decides per tool: thresholds, budgets, the query channel and the
//! `structuredContent` policy, read from the `condense.toml` the rest of the crate uses.
//!
//! Only the keys the proxy acts on are read here, leniently: the crate's configuration loader
//! owns validation of the whole file. Rules are matched by glob on the tool name, first match
//! wins, and every key of a rule falls back to `[defaults]`.

use std::path::Path;

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

/// The proxy's view of the configuration file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProxySettings {
    /// The settings for tools no rule matches.
    pub defaults: ToolSettings,
    /// The name of the query argument added to every tool's input schema.
    pub query_argument_name: String,
    rules: Vec<Rule>,
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
        let invalid = |message: String| ProxyError::Config {
            path: path.to_owned(),
            message,
        };
        let shape: FileShape = toml::from_str(text).map_err(|error| invalid(error.to_string()))?;
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

/// The configuration text without the keys only the proxy reads (`[proxy]`, and
/// `query_argument` / `structured_content` in `[defaults]` and `[[tools]]`), for the engine's
/// strict loader.
pub(crate) fn without_proxy_keys(text: &str) -> Result<String, String> {
    let mut table: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
    table.remove("proxy");
    let strip = |rule: &mut toml::Table| {
        rule.remove("query_argument");
        rule.remove("structured_content");
    };
    if let Some(toml::Value::Table(defaults)) = table.get_mut("defaults") {
        strip(defaults);
    }
    if let Some(toml::Value::Array(tools)) = table.get_mut("tools") {
        for rule in tools {
            if let toml::Value::Table(rule) = rule {
                strip(rule);
            }
        }
    }
    toml::to_string(&table).map_err(|e| e.to_string())
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
    fn proxy_keys_are_hidden_from_the_engine_loader() {
        let text = "[defaults]\nthreshold_tokens = 5\nstructured_content = \"keep\"\n[proxy]\nquery_argument_name = \"q\"\n[[tools]]\nmatch = \"x\"\nquery_argument = false\n";
        let stripped = without_proxy_keys(text).expect("toml");
        assert!(
            !stripped.contains("proxy")
                && !stripped.contains("query_argument")
                && !stripped.contains("structured_content"),
            "{stripped}"
        );
        assert!(stripped.contains("threshold_tokens = 5"), "{stripped}");
        crate::Config::from_toml_str(&stripped, "t").expect("the engine accepts the rest");
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
