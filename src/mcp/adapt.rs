//! rmcp's tool-call types as the layer's [`ToolRequest`] and [`ToolResponse`].
//!
//! This is the one place where rmcp's call and result types meet the core: the proxy's
//! `tools/call` path and the client adapter ([`McpTools`](super::McpTools)) both condense
//! through these implementations, so neither has condensing logic of its own.
//!
//! - [`McpCall`] wraps rmcp's `CallToolRequestParams` (a newtype: the arguments must be
//!   readable as one JSON value, and the query and budget travel beside the call, not in it).
//! - rmcp's `CallToolResult` is a [`ToolResponse`] directly: its text blocks and the text of
//!   embedded text resources are the parts; images, audio, blobs and resource links pass
//!   through untouched. Blocks keep their annotations and `_meta` when their text is condensed.
//! - rmcp's `CallToolResponse` (a result, an input request or a task) is a [`ToolResponse`]
//!   whose only parts are those of a complete result: input requests and tasks pass through.

use std::borrow::Cow;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonObject, MetaObject,
    ResourceContents,
};
use serde_json::Value;

use crate::engine::Condensed;
use crate::tool::{ToolRequest, ToolResponse, ToolResult};

/// An rmcp `tools/call` request as the layer sees it: the call as it goes to the server, plus
/// what the agent is looking for and an explicit budget, which never go to the server.
///
/// ```
/// use condense::ToolRequest;
/// use condense::mcp::McpCall;
/// use rmcp::model::CallToolRequestParams;
///
/// let mut params = CallToolRequestParams::new("read_file");
/// params.arguments = serde_json::json!({"path": "/var/log/syslog"}).as_object().cloned();
/// let call = McpCall::new(params).with_query("failed logins");
/// assert_eq!(call.tool_name(), "read_file");
/// assert_eq!(call.arguments().unwrap()["path"], "/var/log/syslog");
/// assert_eq!(call.into_params().arguments.unwrap()["path"], "/var/log/syslog");
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct McpCall {
    /// The call without its arguments, which live in `arguments` so they can be lent as one
    /// JSON value without a copy.
    params: CallToolRequestParams,
    arguments: Option<Value>,
    query: Option<String>,
    budget_tokens: Option<usize>,
    output_schema: Option<Value>,
    owner: Option<String>,
}

impl McpCall {
    /// The call `params`, with no query and the configured budget.
    pub fn new(mut params: CallToolRequestParams) -> Self {
        let arguments = params.arguments.take().map(Value::Object);
        McpCall {
            params,
            arguments,
            query: None,
            budget_tokens: None,
            output_schema: None,
            owner: None,
        }
    }

    /// Scopes the originals this call keeps to `owner` (see [`ToolRequest::owner`]), or
    /// leaves them readable by anyone with the ref when `None`.
    #[must_use]
    pub fn with_owner(mut self, owner: Option<String>) -> Self {
        self.owner = owner;
        self
    }

    /// Sets what the agent is looking for (never sent to the server).
    #[must_use]
    pub fn with_query(mut self, query: impl Into<String>) -> Self {
        self.query = Some(query.into());
        self
    }

    /// Sets what the agent is looking for, or clears it with `None`.
    #[must_use]
    pub fn with_query_opt(mut self, query: Option<String>) -> Self {
        self.query = query;
        self
    }

    /// Sets an explicit output budget in tokens, overriding the config (never sent to the
    /// server).
    #[must_use]
    pub fn with_budget_tokens(mut self, budget: usize) -> Self {
        self.budget_tokens = Some(budget);
        self
    }

    /// Sets the tool's `outputSchema` (as the server listed it): a condensed result's
    /// `structuredContent` is shrunk only while it still validates against it.
    #[must_use]
    pub fn with_output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// The call as it goes to the server.
    pub fn into_params(self) -> CallToolRequestParams {
        let McpCall {
            mut params,
            arguments,
            ..
        } = self;
        params.arguments = arguments.and_then(|arguments| match arguments {
            Value::Object(map) => Some(map),
            _ => None,
        });
        params
    }
}

impl From<CallToolRequestParams> for McpCall {
    fn from(params: CallToolRequestParams) -> Self {
        McpCall::new(params)
    }
}

impl ToolRequest for McpCall {
    fn tool_name(&self) -> &str {
        &self.params.name
    }

    fn arguments(&self) -> Option<&Value> {
        self.arguments.as_ref()
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

    fn owner(&self) -> Option<&str> {
        self.owner.as_deref()
    }
}

/// The condensable text of a block: a text block's text or an embedded text resource's text.
fn block_text(block: &ContentBlock) -> Option<&str> {
    match block {
        ContentBlock::Text(text) => Some(&text.text),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => Some(text),
            _ => None,
        },
        _ => None,
    }
}

fn block_text_mut(block: &mut ContentBlock) -> Option<&mut String> {
    match block {
        ContentBlock::Text(text) => Some(&mut text.text),
        ContentBlock::Resource(embedded) => match &mut embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => Some(text),
            _ => None,
        },
        _ => None,
    }
}

/// Writes the outcomes into `meta` under `condense`, in the very form the crate's own
/// [`ToolResult`] records them (one format, owned by `tool.rs`). Nothing is written when
/// nothing was condensed.
fn record_outcomes(meta: &mut Option<MetaObject>, outcomes: &[Condensed]) {
    let entry = ToolResult::default()
        .rebuild(Vec::new(), outcomes)
        .meta
        .and_then(|mut recorded| recorded.remove("condense"));
    if let Some(entry) = entry {
        meta.get_or_insert_with(|| MetaObject(JsonObject::new()))
            .0
            .insert("condense".into(), entry);
    }
}

impl ToolResponse for CallToolResult {
    fn text_parts(&self) -> Vec<Cow<'_, str>> {
        self.content
            .iter()
            .filter_map(block_text)
            .map(Cow::Borrowed)
            .collect()
    }

    fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }

    fn structured_content_mut(&mut self) -> Option<&mut Option<Value>> {
        Some(&mut self.structured_content)
    }

    fn rebuild(mut self, parts: Vec<Option<String>>, outcomes: &[Condensed]) -> Self {
        let mut parts = parts.into_iter();
        for block in &mut self.content {
            if let Some(text) = block_text_mut(block)
                && let Some(Some(condensed)) = parts.next()
            {
                *text = condensed;
            }
        }
        record_outcomes(&mut self.meta, outcomes);
        self
    }
}

impl ToolResponse for CallToolResponse {
    fn text_parts(&self) -> Vec<Cow<'_, str>> {
        match self {
            CallToolResponse::Complete(result) => result.text_parts(),
            // An input request or a task has no result text yet: nothing to condense.
            _ => Vec::new(),
        }
    }

    fn is_error(&self) -> bool {
        matches!(self, CallToolResponse::Complete(result) if result.is_error())
    }

    fn structured_content_mut(&mut self) -> Option<&mut Option<Value>> {
        match self {
            CallToolResponse::Complete(result) => result.structured_content_mut(),
            _ => None,
        }
    }

    fn rebuild(self, parts: Vec<Option<String>>, outcomes: &[Condensed]) -> Self {
        match self {
            CallToolResponse::Complete(result) => {
                CallToolResponse::Complete(result.rebuild(parts, outcomes))
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{EmbeddedResource, InputRequiredResult};
    use serde_json::json;

    fn result_of(value: Value) -> CallToolResult {
        serde_json::from_value(value).expect("a CallToolResult")
    }

    #[test]
    fn parts_are_text_blocks_and_text_resources_in_order() {
        let result = result_of(json!({
            "content": [
                {"type": "text", "text": "first"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "second"}},
                {"type": "resource", "resource": {"uri": "file:///a.bin", "blob": "AAEC"}},
                {"type": "text", "text": "third", "annotations": {"priority": 1.0}}
            ]
        }));
        assert_eq!(result.text_parts(), vec!["first", "second", "third"]);
    }

    #[test]
    fn rebuild_replaces_only_condensed_parts_and_keeps_annotations() {
        let result = result_of(json!({
            "content": [
                {"type": "text", "text": "keep me"},
                {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                {"type": "text", "text": "long", "annotations": {"priority": 1.0}}
            ],
            "structuredContent": {"n": 1}
        }));
        let rebuilt = result
            .clone()
            .rebuild(vec![None, Some("short".into())], &[]);
        assert_eq!(rebuilt.text_parts(), vec!["keep me", "short"]);
        let json = serde_json::to_value(&rebuilt).expect("json");
        assert_eq!(json["content"][2]["annotations"]["priority"], 1.0);
        assert_eq!(
            json["content"][1],
            serde_json::to_value(&result.content[1]).expect("json")
        );
        assert!(rebuilt.meta.is_none(), "no outcome, no metadata");
    }

    #[test]
    fn is_error_reads_the_flag() {
        assert!(result_of(json!({"content": [], "isError": true})).is_error());
        assert!(!result_of(json!({"content": []})).is_error());
    }

    #[test]
    fn input_requests_and_tasks_have_no_parts() {
        let complete =
            CallToolResponse::Complete(CallToolResult::success(vec![ContentBlock::text("body")]));
        assert_eq!(complete.text_parts(), vec!["body"]);
        let resource = CallToolResult::success(vec![ContentBlock::Resource(
            EmbeddedResource::new(ResourceContents::text("doc", "file:///d")),
        )]);
        assert_eq!(resource.text_parts(), vec!["doc"]);
        let input =
            CallToolResponse::InputRequired(InputRequiredResult::new(None, Some("state".into())));
        assert!(input.text_parts().is_empty());
        let rebuilt = input.rebuild(Vec::new(), &[]);
        assert!(
            matches!(rebuilt, CallToolResponse::InputRequired(r) if r.request_state.as_deref() == Some("state"))
        );
    }

    #[test]
    fn call_lends_arguments_and_gives_them_back() {
        let mut params = CallToolRequestParams::new("search");
        params.arguments = json!({"pattern": "ERROR"}).as_object().cloned();
        let call = McpCall::from(params.clone())
            .with_query("errors")
            .with_budget_tokens(300);
        assert_eq!(call.tool_name(), "search");
        assert_eq!(call.arguments(), Some(&json!({"pattern": "ERROR"})));
        assert_eq!(call.query(), Some("errors"));
        assert_eq!(call.budget_tokens(), Some(300));
        assert_eq!(call.into_params(), params);
    }
}
