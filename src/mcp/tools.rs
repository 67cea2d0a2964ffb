//! The tools the proxy adds, and the query argument it adds to every listed tool.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::methods::chunk::ChunkStrategy;

/// The tool that calls another tool with an explicit query and budget.
pub(crate) const CALL_TOOL_SUMMARIZED: &str = "call_tool_summarized";
/// The general summarizer tool.
pub(crate) const SUMMARIZE: &str = "summarize";
/// The extraction-aware summarizer tool.
pub(crate) const SUMMARIZE_FOR_EXTRACTION: &str = "summarize_for_extraction";
/// The tool that pages or greps a condensed original.
pub(crate) const RETRIEVE: &str = "condense_retrieve";

/// Every tool name the proxy adds.
pub(crate) const ADDED_TOOLS: [&str; 4] = [
    CALL_TOOL_SUMMARIZED,
    SUMMARIZE,
    SUMMARIZE_FOR_EXTRACTION,
    RETRIEVE,
];

/// The name an upstream tool named like an added one is listed under: its name with
/// `_upstream` appended (again, while `taken` says another tool has that name).
pub(crate) fn collision_free_name(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut listed_as = format!("{name}_upstream");
    while taken(&listed_as) || ADDED_TOOLS.contains(&listed_as.as_str()) {
        listed_as.push_str("_upstream");
    }
    listed_as
}

/// Adds the optional query argument `name` to a tool's input schema.
///
/// Returns `false` and leaves the schema alone when the tool already has an argument of that
/// name: the upstream's argument wins, and the proxy then neither strips nor reads it.
pub(crate) fn add_query_argument(tool: &mut Tool, name: &str) -> bool {
    let mut schema: JsonObject = (*tool.input_schema).clone();
    let properties = schema
        .entry("properties")
        .or_insert_with(|| Value::Object(JsonObject::new()));
    let Value::Object(properties) = properties else {
        return false;
    };
    if properties.contains_key(name) {
        return false;
    }
    properties.insert(
        name.to_owned(),
        json!({
            "type": "string",
            "description": "Optional. What you are looking for in this tool's result. \
                If the result is large it is condensed to what matters for this; \
                the full result stays retrievable."
        }),
    );
    tool.input_schema = Arc::new(schema);
    true
}

/// Removes the query argument from call arguments, returning its text when it is a string.
pub(crate) fn take_query_argument(
    arguments: &mut Option<JsonObject>,
    name: &str,
) -> Option<String> {
    let value = arguments.as_mut()?.remove(name)?;
    match value {
        Value::String(query) if !query.trim().is_empty() => Some(query),
        _ => None,
    }
}

fn tool(name: &str, description: &str, input_schema: Value) -> Tool {
    // Built through serde: rmcp's `Tool` is non-exhaustive and its constructors move between
    // releases, while the wire shape is the spec's.
    serde_json::from_value(json!({
        "name": name,
        "description": description,
        "inputSchema": input_schema,
    }))
    .unwrap_or_default()
}

/// The definitions of the added tools, as listed to the client.
pub(crate) fn added_tools() -> Vec<Tool> {
    vec![
        tool(
            CALL_TOOL_SUMMARIZED,
            "Call another tool of this server and get its result condensed to at most \
             max_tokens, keeping what matters for the query. Use it when you expect a large \
             result and know what you need from it.",
            json!({
                "type": "object",
                "properties": {
                    "tool": {"type": "string", "description": "The name of the tool to call."},
                    "arguments": {"type": "object", "description": "The tool's arguments."},
                    "query": {"type": "string", "description": "What you are looking for in the result."},
                    "max_tokens": {"type": "integer", "minimum": 1, "description": "The most tokens the answer may take. Default: the configured budget."}
                },
                "required": ["tool"]
            }),
        ),
        tool(
            SUMMARIZE,
            "Summarize large text to a target size. Returns the text unchanged when it is \
             already small enough.",
            json!({
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "The text to summarize."},
                    "max_output_tokens": {"type": "integer", "minimum": 0, "default": 0, "description": "Target size in tokens; 0 uses the configured budget."},
                    "focus_areas": {"type": "string", "default": "", "description": "Comma-separated topics to emphasize; empty for a general summary."},
                    "strategy": {"type": "string", "enum": ["semantic", "token"], "default": "semantic", "description": "How to split content too large for one model call: at structural boundaries (semantic) or at fixed token counts (token)."}
                },
                "required": ["content"]
            }),
        ),
        tool(
            SUMMARIZE_FOR_EXTRACTION,
            "Summarize text for a later structured extraction: keeps every named entity, \
             relationship and detail that matches the schema hint and drops boilerplate.",
            json!({
                "type": "object",
                "properties": {
                    "content": {"type": "string", "description": "The text to summarize."},
                    "schema_hint": {"type": "string", "description": "What the extraction will look for, e.g. \"services, versions, error codes\"."},
                    "max_output_tokens": {"type": "integer", "minimum": 0, "default": 0, "description": "Target size in tokens; 0 uses the configured budget."}
                },
                "required": ["content", "schema_hint"]
            }),
        ),
        tool(
            RETRIEVE,
            "Read the original of a condensed tool result: page through its lines, or list \
             the lines that contain a pattern. The ref is in the condensed result's first line.",
            json!({
                "type": "object",
                "properties": {
                    "ref": {"type": "string", "description": "The ref named in the condensed result."},
                    "offset": {"type": "integer", "minimum": 0, "default": 0, "description": "The first line (or match) to return, from 0."},
                    "lines": {"type": "integer", "minimum": 1, "default": 200, "description": "How many lines (or matches) at most."},
                    "pattern": {"type": "string", "description": "Only lines containing this text, case-insensitive."}
                },
                "required": ["ref"]
            }),
        ),
    ]
}

/// Arguments of `call_tool_summarized`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct CallToolSummarizedArgs {
    pub(crate) tool: String,
    #[serde(default)]
    pub(crate) arguments: Option<JsonObject>,
    #[serde(default)]
    pub(crate) query: Option<String>,
    #[serde(default)]
    pub(crate) max_tokens: Option<usize>,
}

/// Arguments of `summarize`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SummarizeArgs {
    pub(crate) content: String,
    #[serde(default)]
    pub(crate) max_output_tokens: usize,
    #[serde(default)]
    pub(crate) focus_areas: String,
    #[serde(default, deserialize_with = "strategy_argument")]
    pub(crate) strategy: Option<ChunkStrategy>,
}

/// The `strategy` argument, with an error that names it: serde's own does not say which
/// argument held the unknown value.
fn strategy_argument<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ChunkStrategy>, D::Error> {
    let Some(name) = Option::<String>::deserialize(deserializer)? else {
        return Ok(None);
    };
    match name.as_str() {
        "semantic" => Ok(Some(ChunkStrategy::Semantic)),
        "token" => Ok(Some(ChunkStrategy::Token)),
        other => Err(serde::de::Error::custom(format!(
            "strategy must be \"semantic\" or \"token\", not {other:?}"
        ))),
    }
}

/// Arguments of `summarize_for_extraction`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SummarizeForExtractionArgs {
    pub(crate) content: String,
    pub(crate) schema_hint: String,
    #[serde(default)]
    pub(crate) max_output_tokens: usize,
}

/// Arguments of `condense_retrieve`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RetrieveArgs {
    #[serde(rename = "ref")]
    pub(crate) reference: String,
    #[serde(default)]
    pub(crate) offset: usize,
    #[serde(default)]
    pub(crate) lines: Option<usize>,
    #[serde(default)]
    pub(crate) pattern: Option<String>,
}

/// Parses a tool's arguments into `T`, as an error message for the model when they do not fit.
pub(crate) fn parse_args<T: for<'de> Deserialize<'de>>(
    tool: &str,
    arguments: Option<JsonObject>,
) -> Result<T, String> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default()))
        .map_err(|error| format!("invalid arguments for {tool}: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn upstream_tool(schema: Value) -> Tool {
        serde_json::from_value(json!({"name": "read_file", "inputSchema": schema})).expect("tool")
    }

    #[test]
    fn query_argument_is_added_as_optional_string() {
        let mut tool = upstream_tool(json!({
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
            "additionalProperties": false
        }));
        assert!(add_query_argument(&mut tool, "condense_query"));
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["properties"]["condense_query"]["type"], "string");
        assert_eq!(schema["required"], json!(["path"]));
    }

    #[test]
    fn query_argument_is_not_added_over_an_upstream_argument() {
        let mut tool = upstream_tool(json!({
            "type": "object",
            "properties": {"condense_query": {"type": "integer"}}
        }));
        assert!(!add_query_argument(&mut tool, "condense_query"));
        let schema = Value::Object((*tool.input_schema).clone());
        assert_eq!(schema["properties"]["condense_query"]["type"], "integer");
    }

    #[test]
    fn query_argument_is_removed_before_forwarding() {
        let mut arguments = Some(
            json!({"path": "/x", "condense_query": "errors"})
                .as_object()
                .cloned()
                .expect("object"),
        );
        let query = take_query_argument(&mut arguments, "condense_query");
        assert_eq!(query.as_deref(), Some("errors"));
        assert_eq!(
            Value::Object(arguments.expect("kept")),
            json!({"path": "/x"})
        );
    }

    #[test]
    fn blank_query_counts_as_none() {
        let mut arguments = json!({"condense_query": "  "}).as_object().cloned();
        assert_eq!(take_query_argument(&mut arguments, "condense_query"), None);
    }

    #[test]
    fn added_tools_have_names_and_object_schemas() {
        let tools = added_tools();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, ADDED_TOOLS);
        for tool in &tools {
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
        }
    }

    #[test]
    fn retrieve_args_parse_ref() {
        let args: RetrieveArgs = parse_args(
            RETRIEVE,
            json!({"ref": "abc", "pattern": "ERROR"})
                .as_object()
                .cloned(),
        )
        .expect("valid");
        assert_eq!(args.reference, "abc");
        assert_eq!(args.pattern.as_deref(), Some("ERROR"));
    }

    #[test]
    fn unknown_argument_is_a_readable_error() {
        let error =
            parse_args::<RetrieveArgs>(RETRIEVE, json!({"ref": "a", "x": 1}).as_object().cloned())
                .expect_err("unknown field");
        assert!(error.contains("condense_retrieve"), "{error}");
    }

    #[test]
    fn a_colliding_upstream_tool_gets_a_free_name() {
        assert_eq!(
            collision_free_name(RETRIEVE, |_| false),
            "condense_retrieve_upstream"
        );
        assert_eq!(
            collision_free_name(SUMMARIZE, |name| name == "summarize_upstream"),
            "summarize_upstream_upstream"
        );
    }
}
