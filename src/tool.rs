//! Tool calls and tool results, and the two traits that let the layer wrap any tool client.
//!
//! [`ToolCall`] and [`ToolResult`] are MCP-shaped and ship with the crate; [`ToolRequest`] and
//! [`ToolResponse`] are what the layer actually needs, so a client with its own types implements
//! those two traits instead. Implementations ship for `ToolCall`/`ToolResult`, for plain
//! [`serde_json::Value`] results (rendered pretty-printed) and for `String` results.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::outcome::{CondenseMeta, Condensed};

/// What the layer needs to know about a tool call.
pub trait ToolRequest {
    /// The tool's name, matched against the config's per-tool rules.
    fn tool_name(&self) -> &str;

    /// The tool's arguments, if any. Values such as a search pattern or a path count as query
    /// terms for the extractive compressor.
    fn arguments(&self) -> Option<&Value> {
        None
    }

    /// What the agent is looking for in the result, if it said.
    fn query(&self) -> Option<&str> {
        None
    }

    /// An explicit output budget in tokens for this call, overriding the config.
    fn budget_tokens(&self) -> Option<usize> {
        None
    }

    /// The tool's `outputSchema`, if known: a condensed result's `structuredContent` is shrunk
    /// only while it still validates against it (the `condense` structured-content policy).
    fn output_schema(&self) -> Option<&Value> {
        None
    }

    /// Who may read the originals this call keeps: `None` (the default), anyone with the ref;
    /// `Some`, only [`Condenser::retrieve_as`](crate::Condenser::retrieve_as) with the same
    /// owner. A server with several users names the user or session here.
    fn owner(&self) -> Option<&str> {
        None
    }
}

/// What the layer needs to do with a tool result: read its text and put condensed text back.
pub trait ToolResponse: Sized {
    /// The parts of the result that are text and may be condensed, in order. Images, audio and
    /// binary data are not parts: they pass through untouched and are never counted.
    fn text_parts(&self) -> Vec<Cow<'_, str>>;

    /// Whether the tool reported an error.
    fn is_error(&self) -> bool {
        false
    }

    /// The result's structured copy (MCP's `structuredContent`), for types that carry one.
    /// When the text is condensed, the pipeline replaces it as the tool's
    /// [`StructuredContentPolicy`](crate::StructuredContentPolicy) says (by default it is
    /// dropped), before [`rebuild`](ToolResponse::rebuild). `None`: the type has no such slot.
    fn structured_content_mut(&mut self) -> Option<&mut Option<Value>> {
        None
    }

    /// Puts condensed text back: `parts[i]` is `Some` when text part `i` was condensed, `None`
    /// when it stays as it was. `outcomes` describes what was done, for a metadata slot.
    fn rebuild(self, parts: Vec<Option<String>>, outcomes: &[Condensed]) -> Self;
}

/// A tool call: a tool name, its arguments, and optionally what the agent is looking for.
///
/// ```
/// use condense::ToolCall;
/// use serde_json::json;
///
/// let call = ToolCall::new("read_file", json!({"path": "/var/log/syslog"}))
///     .with_query("root logins on a local console");
/// assert_eq!(call.name, "read_file");
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// The tool's arguments (a JSON object for MCP tools).
    pub arguments: Value,
    /// What the agent is looking for in the result.
    pub query: Option<String>,
    /// An explicit output budget in tokens, overriding the config.
    pub budget_tokens: Option<usize>,
    /// The tool's `outputSchema`, if known.
    pub output_schema: Option<Value>,
}

impl ToolCall {
    /// A call of `name` with `arguments`, no query and the configured budget.
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            name: name.into(),
            arguments,
            query: None,
            budget_tokens: None,
            output_schema: None,
        }
    }

    /// Sets what the agent is looking for.
    #[must_use]
    pub fn with_query(mut self, query: impl Into<String>) -> Self {
        self.query = Some(query.into());
        self
    }

    /// Sets an explicit output budget in tokens.
    #[must_use]
    pub fn with_budget_tokens(mut self, budget: usize) -> Self {
        self.budget_tokens = Some(budget);
        self
    }

    /// Sets the tool's `outputSchema`, which a shrunk `structuredContent` must still match.
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }
}

impl ToolRequest for ToolCall {
    fn tool_name(&self) -> &str {
        &self.name
    }

    fn arguments(&self) -> Option<&Value> {
        Some(&self.arguments)
    }

    fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    fn budget_tokens(&self) -> Option<usize> {
        self.budget_tokens
    }

    fn output_schema(&self) -> Option<&Value> {
        self.output_schema.as_ref()
    }
}

/// One content block of a tool result.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Content {
    /// Text: condensed when the result is too large.
    Text(String),
    /// An embedded text resource: its text is condensed, its URI and MIME type kept.
    Resource {
        /// The resource's URI.
        uri: String,
        /// The resource's MIME type, if given.
        mime_type: Option<String>,
        /// The resource's text.
        text: String,
    },
    /// Anything else — images, audio, binary resources, resource links — kept exactly as it
    /// came, as its MCP JSON. Never counted, never condensed.
    Other(Value),
}

impl Content {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        Content::Text(text.into())
    }

    /// The condensable text of this block, if it has any.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Content::Text(text) | Content::Resource { text, .. } => Some(text),
            Content::Other(_) => None,
        }
    }

    fn set_text(&mut self, new: String) {
        match self {
            Content::Text(text) | Content::Resource { text, .. } => *text = new,
            Content::Other(_) => {}
        }
    }

    /// Reads a block from its MCP JSON form (`{"type": "text", "text": …}`, …). Unknown shapes
    /// are kept as [`Content::Other`], so nothing is lost.
    pub fn from_mcp_json(value: &Value) -> Self {
        let kind = value.get("type").and_then(Value::as_str);
        let has_only = |keys: &[&str]| {
            value
                .as_object()
                .is_some_and(|o| o.keys().all(|k| keys.contains(&k.as_str())))
        };
        match (kind, value.get("text").and_then(Value::as_str)) {
            (Some("text"), Some(text)) if has_only(&["type", "text"]) => {
                Content::Text(text.to_owned())
            }
            (Some("resource"), _) if has_only(&["type", "resource"]) => {
                let resource = &value["resource"];
                match (
                    resource.get("uri").and_then(Value::as_str),
                    resource.get("text").and_then(Value::as_str),
                ) {
                    (Some(uri), Some(text))
                        if resource.as_object().is_some_and(|o| {
                            o.keys()
                                .all(|k| ["uri", "text", "mimeType"].contains(&k.as_str()))
                        }) =>
                    {
                        Content::Resource {
                            uri: uri.to_owned(),
                            mime_type: resource
                                .get("mimeType")
                                .and_then(Value::as_str)
                                .map(str::to_owned),
                            text: text.to_owned(),
                        }
                    }
                    _ => Content::Other(value.clone()),
                }
            }
            _ => Content::Other(value.clone()),
        }
    }

    /// The block's MCP JSON form.
    pub fn to_mcp_json(&self) -> Value {
        match self {
            Content::Text(text) => serde_json::json!({"type": "text", "text": text}),
            Content::Resource {
                uri,
                mime_type,
                text,
            } => {
                let mut resource = Map::new();
                resource.insert("uri".into(), Value::String(uri.clone()));
                if let Some(mime) = mime_type {
                    resource.insert("mimeType".into(), Value::String(mime.clone()));
                }
                resource.insert("text".into(), Value::String(text.clone()));
                serde_json::json!({"type": "resource", "resource": resource})
            }
            Content::Other(value) => value.clone(),
        }
    }
}

/// A tool result, shaped like MCP's `CallToolResult`.
///
/// ```
/// use condense::{Content, ToolResult};
///
/// let result = ToolResult::text("42 files changed");
/// assert_eq!(result.content, vec![Content::text("42 files changed")]);
/// assert!(!result.is_error);
/// ```
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct ToolResult {
    /// The content blocks, in order.
    pub content: Vec<Content>,
    /// Structured content, as the tool sent it. Kept as it is when the text is not
    /// condensed; otherwise handled by the tool's
    /// [`StructuredContentPolicy`](crate::StructuredContentPolicy) (dropped by default).
    pub structured_content: Option<Value>,
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// The result's `_meta`. Condensing adds a `condense` entry here.
    pub meta: Option<Map<String, Value>>,
}

impl ToolResult {
    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        ToolResult {
            content: vec![Content::text(text)],
            ..ToolResult::default()
        }
    }

    /// A result with these blocks.
    pub fn new(content: Vec<Content>) -> Self {
        ToolResult {
            content,
            ..ToolResult::default()
        }
    }

    /// Marks the result as an error (or not).
    #[must_use]
    pub fn with_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// Sets the structured content.
    #[must_use]
    pub fn with_structured_content(mut self, value: Value) -> Self {
        self.structured_content = Some(value);
        self
    }

    /// Reads a result from MCP's `CallToolResult` JSON. Missing fields take their defaults;
    /// blocks of unknown shape are kept as they are.
    pub fn from_mcp_json(value: &Value) -> Self {
        ToolResult {
            content: value
                .get("content")
                .and_then(Value::as_array)
                .map(|blocks| blocks.iter().map(Content::from_mcp_json).collect())
                .unwrap_or_default(),
            structured_content: value.get("structuredContent").cloned(),
            is_error: value
                .get("isError")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            meta: value.get("_meta").and_then(Value::as_object).cloned(),
        }
    }

    /// What condensing did to this result, read from its `_meta.condense` entry: one entry per
    /// text part that was condensed or cut, empty when the result came back whole.
    ///
    /// ```
    /// use condense::{ToolResult, Method};
    ///
    /// let result = ToolResult::from_mcp_json(&serde_json::json!({
    ///     "content": [{"type": "text", "text": "[condense: extract …]"}],
    ///     "_meta": {"condense": {"method": "extract", "tokens_before": 9000,
    ///         "tokens_after": 1400, "ref": "cx_1", "cached": false}}
    /// }));
    /// let meta = result.condense_meta();
    /// assert_eq!(meta[0].method, Method::Extract);
    /// assert_eq!(meta[0].reference.as_deref(), Some("cx_1"));
    /// ```
    pub fn condense_meta(&self) -> Vec<CondenseMeta> {
        self.meta
            .as_ref()
            .and_then(|meta| meta.get("condense"))
            .map(CondenseMeta::from_entry)
            .unwrap_or_default()
    }

    /// The result as MCP's `CallToolResult` JSON.
    pub fn to_mcp_json(&self) -> Value {
        let mut out = Map::new();
        out.insert(
            "content".into(),
            Value::Array(self.content.iter().map(Content::to_mcp_json).collect()),
        );
        if let Some(structured) = &self.structured_content {
            out.insert("structuredContent".into(), structured.clone());
        }
        if self.is_error {
            out.insert("isError".into(), Value::Bool(true));
        }
        if let Some(meta) = &self.meta {
            out.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(out)
    }
}

impl ToolResponse for ToolResult {
    fn text_parts(&self) -> Vec<Cow<'_, str>> {
        self.content
            .iter()
            .filter_map(Content::as_text)
            .map(Cow::Borrowed)
            .collect()
    }

    fn is_error(&self) -> bool {
        self.is_error
    }

    fn structured_content_mut(&mut self) -> Option<&mut Option<Value>> {
        Some(&mut self.structured_content)
    }

    fn rebuild(mut self, parts: Vec<Option<String>>, outcomes: &[Condensed]) -> Self {
        let mut parts = parts.into_iter();
        for block in &mut self.content {
            if block.as_text().is_some()
                && let Some(Some(text)) = parts.next()
            {
                block.set_text(text);
            }
        }
        if !outcomes.is_empty() {
            let entries: Vec<Value> = outcomes.iter().map(Condensed::to_meta).collect();
            let entry = if entries.len() == 1 {
                entries.into_iter().next().unwrap_or(Value::Null)
            } else {
                Value::Array(entries)
            };
            self.meta
                .get_or_insert_with(Map::new)
                .insert("condense".into(), entry);
        }
        self
    }
}

/// A function tool returning JSON: rendered pretty-printed (two-space indent, keys in the order
/// the tool sent them), and replaced by a JSON string holding the condensed text.
impl ToolResponse for Value {
    fn text_parts(&self) -> Vec<Cow<'_, str>> {
        vec![render_value(self)]
    }

    fn rebuild(self, parts: Vec<Option<String>>, _outcomes: &[Condensed]) -> Self {
        match parts.into_iter().next().flatten() {
            Some(text) => Value::String(text),
            None => self,
        }
    }
}

/// A function tool returning text.
impl ToolResponse for String {
    fn text_parts(&self) -> Vec<Cow<'_, str>> {
        vec![Cow::Borrowed(self.as_str())]
    }

    fn rebuild(self, parts: Vec<Option<String>>, _outcomes: &[Condensed]) -> Self {
        parts.into_iter().next().flatten().unwrap_or(self)
    }
}

/// How a JSON value becomes text: a string as it is, anything else pretty-printed.
pub(crate) fn render_value(value: &Value) -> Cow<'_, str> {
    match value {
        Value::String(text) => Cow::Borrowed(text),
        other => {
            Cow::Owned(serde_json::to_string_pretty(other).unwrap_or_else(|_| other.to_string()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mcp_json_round_trips_every_block_kind() {
        let result = json!({
            "content": [
                {"type": "text", "text": "hello"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "mimeType": "text/plain", "text": "body"}},
                {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAEC"}},
                {"type": "text", "text": "annotated", "annotations": {"priority": 1}}
            ],
            "structuredContent": {"n": 1},
            "isError": true,
            "_meta": {"x": 1}
        });
        let parsed = ToolResult::from_mcp_json(&result);
        assert_eq!(parsed.text_parts(), vec!["hello", "body"]);
        assert_eq!(parsed.to_mcp_json(), result);
    }

    #[test]
    fn value_renders_pretty_in_original_key_order() {
        let value = json!({"zeta": 1, "alpha": [1, 2]});
        assert_eq!(
            value.text_parts()[0],
            "{\n  \"zeta\": 1,\n  \"alpha\": [\n    1,\n    2\n  ]\n}"
        );
        assert_eq!(json!("plain").text_parts()[0], "plain");
    }

    #[test]
    fn rebuild_replaces_only_condensed_parts() {
        let result = ToolResult::new(vec![
            Content::text("a"),
            Content::Other(json!({"type": "image", "data": "x", "mimeType": "image/png"})),
            Content::text("b"),
        ]);
        let rebuilt = result.rebuild(vec![None, Some("B".into())], &[]);
        assert_eq!(rebuilt.text_parts(), vec!["a", "B"]);
        assert!(rebuilt.meta.is_none());
    }
}
