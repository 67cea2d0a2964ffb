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

/// Whether `name` is an added tool that `enabled` (the configured `added_tools`) switches on:
/// only those are listed, answered by the proxy, and rename an upstream tool of their name.
pub(crate) fn is_enabled_added_tool(enabled: &[String], name: &str) -> bool {
    ADDED_TOOLS.contains(&name) && enabled.iter().any(|listed| listed == name)
}

/// The name an upstream tool named like an added one is listed under: its name with
/// `_upstream` appended (again, while `taken` says another tool has that name).
pub(crate) fn collision_free_name(name: &str, taken: impl Fn(&str) -> bool) -> String {
    let mut listed_as = format!("{name}_upstream");
    while taken(&listed_as) || ADDED_TOOLS.contains(&listed_as.as_str()) {
        listed_as.push_str("_upstream");
    }
    listed_as
}

/// What the query argument is for, as every listed tool describes it. It is sent once per tool
/// with every model request, so it is one short sentence; the server instructions say more.
const QUERY_ARGUMENT_DESCRIPTION: &str = "What you need; large results are condensed to it.";

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
        json!({"type": "string", "description": QUERY_ARGUMENT_DESCRIPTION}),
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

/// The definitions of the added tools named in `enabled`, as listed to the client.
///
/// Each definition is sent with every model request of a session, so descriptions are one
/// sentence and arguments are described only where their name does not say enough.
pub(crate) fn added_tools(enabled: &[String]) -> Vec<Tool> {
    let all = [
        tool(
            CALL_TOOL_SUMMARIZED,
            "Call a tool of this server with its arguments; a large result is condensed to \
             query within max_tokens.",
            json!({
                "type": "object",
                "properties": {
                    "tool": {"type": "string"},
                    "arguments": {"type": "object"},
                    "query": {"type": "string"},
                    "max_tokens": {"type": "integer"}
                },
                "required": ["tool"]
            }),
        ),
        tool(
            SUMMARIZE,
            "Condense content to max_output_tokens (0: the configured budget), keeping \
             focus_areas.",
            json!({
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "max_output_tokens": {"type": "integer"},
                    "focus_areas": {"type": "string"},
                    "strategy": {"enum": ["semantic", "token"]}
                },
                "required": ["content"]
            }),
        ),
        tool(
            SUMMARIZE_FOR_EXTRACTION,
            "Condense content for an extraction, keeping every detail that matches \
             schema_hint.",
            json!({
                "type": "object",
                "properties": {
                    "content": {"type": "string"},
                    "schema_hint": {"type": "string"},
                    "max_output_tokens": {"type": "integer"}
                },
                "required": ["content", "schema_hint"]
            }),
        ),
        tool(
            RETRIEVE,
            "Read a condensed result's original: lines, chars or pattern.",
            json!({
                "type": "object",
                "properties": {
                    "ref": {"type": "string"},
                    "offset": {"type": "integer"},
                    "lines": {"type": "integer"},
                    "chars": {"type": "integer"},
                    "pattern": {"type": "string"},
                    "ignore_case": {"type": "boolean"}
                },
                "required": ["ref"]
            }),
        ),
    ];
    all.into_iter()
        .filter(|tool| enabled.iter().any(|name| *name == tool.name))
        .collect()
}

/// The most tokens an added tool's answer may take, whatever the call or the configuration
/// asks: Claude Code replaces any MCP result over `MAX_MCP_OUTPUT_TOKENS` (25,000 by default,
/// counted with its own tokenizer) by an error, so answers stay well below it.
pub(crate) const MAX_ANSWER_TOKENS: usize = 20_000;

/// Claude Code's default `MAX_MCP_OUTPUT_TOKENS`.
const CLAUDE_CODE_MAX_MCP_OUTPUT_TOKENS: usize = 25_000;

// Its tokenizer is not ours: a fifth of the limit is kept spare.
const _: () = assert!(MAX_ANSWER_TOKENS * 5 <= CLAUDE_CODE_MAX_MCP_OUTPUT_TOKENS * 4);

/// The budget of an added tool's answer: `requested` (0 or `None`: `configured`), at most
/// [`MAX_ANSWER_TOKENS`].
pub(crate) fn answer_budget(requested: Option<usize>, configured: usize) -> usize {
    match requested {
        Some(tokens) if tokens > 0 => tokens,
        _ => configured,
    }
    .min(MAX_ANSWER_TOKENS)
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

/// An extraction is a summary whose focus is the schema hint, cut the configured way.
impl From<SummarizeForExtractionArgs> for SummarizeArgs {
    fn from(args: SummarizeForExtractionArgs) -> Self {
        SummarizeArgs {
            content: args.content,
            max_output_tokens: args.max_output_tokens,
            focus_areas: args.schema_hint,
            strategy: None,
        }
    }
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
    /// With `pattern`: characters of context around each match; without: read this many
    /// characters from character `offset` (for long lines).
    #[serde(default)]
    pub(crate) chars: Option<usize>,
    #[serde(default)]
    pub(crate) pattern: Option<String>,
    /// Match `pattern` ignoring case; by default case matters.
    #[serde(default)]
    pub(crate) ignore_case: bool,
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
        let all: Vec<String> = ADDED_TOOLS.iter().map(|&name| name.to_owned()).collect();
        let tools = added_tools(&all);
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, ADDED_TOOLS);
        for tool in &tools {
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
        }
    }

    #[test]
    fn only_enabled_added_tools_are_listed() {
        let tools = added_tools(&[RETRIEVE.to_owned()]);
        let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
        assert_eq!(names, [RETRIEVE]);
        assert!(added_tools(&[]).is_empty());
    }

    #[test]
    fn the_configured_added_tools_are_the_names_the_proxy_answers_to() {
        for name in crate::config::DEFAULT_ADDED_TOOLS {
            assert!(ADDED_TOOLS.contains(name), "{name}");
        }
        let schema: Value =
            serde_json::from_str(include_str!("../../schema/condense.schema.json")).expect("json");
        let allowed = &schema["properties"]["proxy"]["properties"]["added_tools"]["items"]["enum"];
        assert_eq!(allowed, &json!(ADDED_TOOLS));
    }

    #[test]
    fn answers_stay_below_claude_codes_default_output_limit() {
        let configured = crate::config::Rule::default().budget_tokens;
        assert!(
            configured <= MAX_ANSWER_TOKENS,
            "default budget {configured}"
        );
        assert_eq!(answer_budget(None, configured), configured);
        assert_eq!(answer_budget(Some(0), configured), configured);
        assert_eq!(answer_budget(Some(300), configured), 300);
        assert_eq!(
            answer_budget(Some(1_000_000), configured),
            MAX_ANSWER_TOKENS
        );
        assert_eq!(answer_budget(None, 90_000), MAX_ANSWER_TOKENS);
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
