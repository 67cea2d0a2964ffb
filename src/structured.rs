//! `structuredContent` of condensed results: keep, shrink while valid, or drop.
//!
//! A tool that declares an `outputSchema` promises results whose `structuredContent` validates
//! against it. When the text of a result is condensed, its structured copy would bring the whole
//! payload back into the agent's context, so both front doors (the layer and the proxy) decide
//! what happens to it here, by the tool's [`StructuredContentPolicy`].

use serde::Deserialize;
use serde_json::Value;

use crate::tokens::TokenCounter;

/// What happens to a condensed result's `structuredContent` (config key
/// `structured_content`, per tool).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StructuredContentPolicy {
    /// Drop `structuredContent` from the results that are condensed (small results keep it);
    /// the proxy also removes the tool's `outputSchema` from its listing. The default: a client
    /// that shows `structuredContent` to the model would otherwise get the whole payload back,
    /// and no generic shrinking keeps the meaning of a value that a schema describes.
    #[default]
    Drop,
    /// Keep `structuredContent` (and the schema) untouched, even when the text is condensed.
    Keep,
    /// Shrink `structuredContent` (drop array items from the end, largest arrays first) while
    /// it still validates against the tool's `outputSchema`; keep it whole when no smaller
    /// valid value exists.
    Condense,
}

impl StructuredContentPolicy {
    /// The name used in config files.
    pub fn name(self) -> &'static str {
        match self {
            StructuredContentPolicy::Drop => "drop",
            StructuredContentPolicy::Keep => "keep",
            StructuredContentPolicy::Condense => "condense",
        }
    }

    /// The `structuredContent` to return with a condensed result: `structured` under this
    /// policy. `schema` is the tool's `outputSchema`, if known; `budget_tokens` bounds what
    /// [`Condense`](StructuredContentPolicy::Condense) keeps.
    pub fn apply(
        self,
        structured: Option<Value>,
        schema: Option<&Value>,
        budget_tokens: usize,
        counter: &TokenCounter,
    ) -> Option<Value> {
        let structured = structured?;
        match self {
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
}

/// Drops items from the end of the largest arrays until the compact JSON fits `budget_tokens`,
/// keeping only steps after which the value still validates against `schema`. Returns the
/// original when no smaller valid value is found.
fn shrink_while_valid(
    value: Value,
    schema: Option<&Value>,
    budget_tokens: usize,
    counter: &TokenCounter,
) -> Value {
    let validator = match schema.map(jsonschema::validator_for) {
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
                    // Recursing into the items first would need a second borrow; arrays of
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

    fn big_value() -> Value {
        json!({"total": 500, "items": (0..500).map(|i| json!({"id": i, "name": format!("item-{i}")})).collect::<Vec<_>>()})
    }

    #[test]
    fn drop_removes_and_keep_keeps() {
        let counter = TokenCounter::default();
        let dropped = StructuredContentPolicy::Drop.apply(Some(big_value()), None, 100, &counter);
        assert!(dropped.is_none());
        let kept = StructuredContentPolicy::Keep.apply(Some(big_value()), None, 100, &counter);
        assert_eq!(kept, Some(big_value()));
    }

    #[test]
    fn condense_shrinks_and_still_validates() {
        let schema = json!({
            "type": "object",
            "properties": {
                "total": {"type": "integer"},
                "items": {"type": "array", "items": {"type": "object", "required": ["id"]}}
            },
            "required": ["total", "items"]
        });
        let counter = TokenCounter::default();
        let out = StructuredContentPolicy::Condense
            .apply(Some(big_value()), Some(&schema), 300, &counter)
            .expect("kept");
        assert!(jsonschema::is_valid(&schema, &out));
        assert!(counter.count(&out.to_string()) <= 300, "{out}");
        assert_eq!(out["total"], 500);
    }

    #[test]
    fn condense_stops_before_breaking_min_items() {
        let schema = json!({
            "type": "object",
            "properties": {"items": {"type": "array", "minItems": 400}}
        });
        let out = StructuredContentPolicy::Condense
            .apply(
                Some(big_value()),
                Some(&schema),
                10,
                &TokenCounter::default(),
            )
            .expect("kept");
        assert!(jsonschema::is_valid(&schema, &out));
        assert_eq!(out["items"].as_array().map(Vec::len), Some(500));
    }

    #[test]
    fn absent_structured_content_stays_absent() {
        let out = StructuredContentPolicy::Keep.apply(None, None, 10, &TokenCounter::default());
        assert!(out.is_none());
    }
}
