//! What a rung knows about the call besides the text.

use crate::methods::chunk::ContentKind;

/// What is known about the call besides the text: the one bag of hints every rung reads
/// (the LLM prompts, map-reduce and the extractive compressor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Hints<'a> {
    /// What the agent is looking for, if it said.
    pub query: Option<&'a str>,
    /// The tool that produced the text.
    pub tool: Option<&'a str>,
    /// Extraction mode: the categories of detail to keep (names, ids, relationships, numbers).
    /// Extraction always chunks semantically.
    pub schema_hint: Option<&'a str>,
    /// The tool's arguments: the extractive fallback ranks the text against them too.
    pub arguments: Option<&'a serde_json::Value>,
    /// What kind of text this is; guessed with [`detect_kind`](crate::methods::chunk::detect_kind) when `None`.
    pub kind: Option<ContentKind>,
}

impl<'a> Hints<'a> {
    /// No query, tool or arguments: each rung keeps what matters without a query.
    pub fn new() -> Self {
        Hints::default()
    }

    /// Sets the query.
    #[must_use]
    pub fn with_query(mut self, query: &'a str) -> Self {
        self.query = Some(query);
        self
    }

    /// Sets the tool name.
    #[must_use]
    pub fn with_tool(mut self, tool: &'a str) -> Self {
        self.tool = Some(tool);
        self
    }

    /// Turns on extraction mode with this schema hint.
    #[must_use]
    pub fn with_schema_hint(mut self, schema_hint: &'a str) -> Self {
        self.schema_hint = Some(schema_hint);
        self
    }

    /// Sets the tool's arguments.
    #[must_use]
    pub fn with_arguments(mut self, arguments: &'a serde_json::Value) -> Self {
        self.arguments = Some(arguments);
        self
    }

    /// Sets the content kind.
    #[must_use]
    pub fn with_kind(mut self, kind: ContentKind) -> Self {
        self.kind = Some(kind);
        self
    }
}
