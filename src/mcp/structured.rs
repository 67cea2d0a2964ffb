//! `structuredContent` of condensed results: keep, shrink while valid, or drop.
//!
//! A tool that declares an `outputSchema` promises results whose `structuredContent` validates
//! against it. Whatever the proxy returns must keep that promise; see
//! [`StructuredContentPolicy`] for the choices and the default.

use rmcp::model::{JsonObject, Tool};
use serde_json::Value;

use super::settings::StructuredContentPolicy;
use crate::TokenCounter;

/// The listed tool under `policy`: with `Drop` the output schema is removed, so the client no
/// longer expects `structuredContent`.
pub(crate) fn list_tool(tool: &mut Tool, policy: StructuredContentPolicy) {
    if policy == StructuredContentPolicy::Drop {
        tool.output_schema = None;
    }
}

/// The `structuredContent` to return with a condensed result.
///
/// `schema` is the tool's `outputSchema` as the upstream listed it, if known.
pub(crate) fn for_condensed_result(
    structured: Option<Value>,
    schema: Option<&JsonObject>,
    policy: StructuredContentPolicy,
    budget_tokens: usize,
    counter: &TokenCounter,
) -> Option<Value> {
    let structured = structured?;
    match policy {
        StructuredContentPolicy::Keep => Some(structured),
        StructuredContentPolicy::Drop => None,
        StructuredContentPolicy::Condense => Some(shrink_while_valid(
            structured,
            schema,
            budget_tokens,
            counter,
        )),
    }
}

/// Drops items from the end of the largest arrays until the compact JSON fits `budget_tokens`,
/// keeping only steps after which the value still validates against `schema`. Returns the
/// original when no smaller valid value is found.
fn shrink_while_valid(
    value: Value,
    schema: Option<&JsonObject>,
    budget_tokens: usize,
    counter: &TokenCounter,
) -> Value {
    let validator =
        match schema.map(|schema| jsonschema::validator_for(&Value::Object(schema.clone()))) {
            Some(Ok(validator)) => Some(validator),
            // A schema the validator cannot compile gives no way to prove a smaller value valid.
            Some(Err(_)) => return value,
            None => None,
        };
    let is_valid = |candidate: &Value| validator.as_ref().is_none_or(|v| v.is_valid(candidate));
    let fits = |candidate: &Value| {
        !counter.exceeds(
            &serde_json::to_string(candidate).unwrap_or_default(),
            budget_tokens,
        )
    };
    let mut current = value;
    // Each step removes at least one item, so the loop ends; the cap bounds the work on huge values.
    for _ in 0..64 {
        if fits(&current) {
            break;
        }
        let mut candidate = current.clone();
        if !halve_largest_array(&mut candidate) || !is_valid(&candidate) {
            break;
        }
        current = candidate;
    }
    current
}

/// Halves the longest array in `value` (at least one item removed). `false` if none is left.
fn halve_largest_array(value: &mut Value) -> bool {
    fn longest<'v>(value: &'v mut Value, best: &mut Option<&'v mut Vec<Value>>) {
        match value {
            Value::Array(items) => {
                let len = items.len();
                if best.as_ref().is_none_or(|b| b.len() < len) && len > 0 {
                    // Recurse into the items first would need a second borrow; arrays of
                    // arrays are rare in tool output, so the outer array is taken.
                    *best = Some(items);
                } else {
                    for item in items.iter_mut() {
                        longest(item, best);
                    }
                }
            }
            Value::Object(map) => {
                for item in map.values_mut() {
                    longest(item, best);
                }
            }
            _ => {}
        }
    }
    let mut best = None;
    longest(value, &mut best);
    match best {
        Some(items) => {
            let keep = items.len() / 2;
            items.truncate(keep);
            true
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> JsonObject {
        value.as_object().cloned().expect("object schema")
    }

    fn big_value() -> Value {
        json!({"total": 500, "items": (0..500).map(|i| json!({"id": i, "name": format!("item-{i}")})).collect::<Vec<_>>()})
    }

    #[test]
    fn drop_policy_removes_structured_content_and_schema() {
        let mut tool: Tool = serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}
        }))
        .expect("tool");
        list_tool(&mut tool, StructuredContentPolicy::Drop);
        assert!(tool.output_schema.is_none());
        let out = for_condensed_result(
            Some(big_value()),
            None,
            StructuredContentPolicy::Drop,
            100,
            &TokenCounter::default(),
        );
        assert!(out.is_none());
    }

    #[test]
    fn keep_policy_keeps_value_and_schema() {
        let mut tool: Tool = serde_json::from_value(json!({
            "name": "t", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"}
        }))
        .expect("tool");
        list_tool(&mut tool, StructuredContentPolicy::Keep);
        assert!(tool.output_schema.is_some());
        let out = for_condensed_result(
            Some(big_value()),
            None,
            StructuredContentPolicy::Keep,
            100,
            &TokenCounter::default(),
        );
        assert_eq!(out, Some(big_value()));
    }

    #[test]
    fn condense_policy_shrinks_and_still_validates() {
        let schema = schema(json!({
            "type": "object",
            "properties": {
                "total": {"type": "integer"},
                "items": {"type": "array", "items": {"type": "object", "required": ["id"]}}
            },
            "required": ["total", "items"]
        }));
        let counter = TokenCounter::default();
        let out = for_condensed_result(
            Some(big_value()),
            Some(&schema),
            StructuredContentPolicy::Condense,
            300,
            &counter,
        )
        .expect("kept");
        assert!(jsonschema::is_valid(&Value::Object(schema), &out));
        assert!(counter.count(&out.to_string()) <= 300, "{out}");
        assert_eq!(out["total"], 500);
    }

    #[test]
    fn condense_policy_stops_before_breaking_min_items() {
        let schema = schema(json!({
            "type": "object",
            "properties": {"items": {"type": "array", "minItems": 400}}
        }));
        let out = for_condensed_result(
            Some(big_value()),
            Some(&schema),
            StructuredContentPolicy::Condense,
            10,
            &TokenCounter::default(),
        )
        .expect("kept");
        assert!(jsonschema::is_valid(&Value::Object(schema), &out));
        assert_eq!(out["items"].as_array().map(Vec::len), Some(500));
    }

    #[test]
    fn absent_structured_content_stays_absent() {
        let out = for_condensed_result(
            None,
            None,
            StructuredContentPolicy::Keep,
            10,
            &TokenCounter::default(),
        );
        assert!(out.is_none());
    }
}
