//! The per-tool rule: `[defaults]` keys, the `[[tools]]` entries that override them, and the
//! values they take (`mode`, `binary`).

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use serde::Deserialize;

use crate::structured::StructuredContentPolicy;
use crate::tokens::Encoding;

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
    /// What happens to a condensed result's `structuredContent`. Default
    /// [`StructuredContentPolicy::Drop`].
    pub structured_content: StructuredContentPolicy,
    /// Whether the proxy adds the query argument (`[proxy] query_argument_name`) to the tool's
    /// input schema. Default true.
    pub query_argument: bool,
    /// What the proxy does with images, audio and binary resources in a result. Default
    /// [`BinaryPolicy::Replace`].
    pub binary: BinaryPolicy,
    /// Binary items up to this many (decoded) bytes are kept under
    /// [`BinaryPolicy::Replace`]. Default 16384.
    pub binary_max_bytes: usize,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            threshold_tokens: 4000,
            budget_tokens: 1500,
            mode: Mode::Auto,
            deadline: Duration::from_millis(20_000),
            encoding: Encoding::Cl100kBase,
            structured_content: StructuredContentPolicy::Drop,
            query_argument: true,
            binary: BinaryPolicy::Replace,
            binary_max_bytes: 16_384,
        }
    }
}

/// What the proxy does with an image, audio clip or binary resource in a `tools/call` result
/// (config key `binary`, per tool), in `content` and in its copies in `structuredContent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BinaryPolicy {
    /// Pass every item through untouched.
    Keep,
    /// Swap an item over `binary_max_bytes` for a one-line description (type, size, pixel
    /// size when cheap to read) with a ref; `condense_retrieve` returns the item itself. The
    /// default: most agents get base64 as text, which costs ~1 token per 3 bytes and tells the
    /// model nothing.
    #[default]
    Replace,
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
    /// Overrides `structured_content`.
    pub structured_content: Option<StructuredContentPolicy>,
    /// Overrides `query_argument`.
    pub query_argument: Option<bool>,
    /// Overrides `binary`.
    pub binary: Option<BinaryPolicy>,
    /// Overrides `binary_max_bytes`.
    pub binary_max_bytes: Option<usize>,
}

impl ToolRule {
    pub(super) fn apply(&self, mut rule: Rule) -> Rule {
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
        if let Some(v) = self.structured_content {
            rule.structured_content = v;
        }
        if let Some(v) = self.query_argument {
            rule.query_argument = v;
        }
        if let Some(v) = self.binary {
            rule.binary = v;
        }
        if let Some(v) = self.binary_max_bytes {
            rule.binary_max_bytes = v;
        }
        rule
    }
}
