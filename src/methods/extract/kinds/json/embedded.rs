//! JSON sent as a string inside another document — a recorded HTTP exchange's body (a VCR
//! cassette, a HAR file), a queue message or log event whose payload is serialized JSON — is
//! read as the tree it is. As one string, its records are a single leaf: the walk can only
//! show its head and a few windows around the query's words, cutting the record the query
//! names mid-member, while the budget stays unspent. Decoded, its records are records: ranked,
//! projected and tabled like any others.

use serde_json::Value;

/// Strings shorter than this are shown whole in their parent's line anyway: decoding them
/// changes nothing but their quoting.
const MIN_EMBEDDED_BYTES: usize = 200;
/// Documents nested deeper than this are left as they are, and the walk's recursion stays
/// bounded. A payload inside a payload is decoded too (a cassette of queue messages).
const MAX_DEPTH: usize = 32;

/// Replaces every string in `value` that holds a JSON object or array by that value, and
/// tells whether any was replaced.
pub(super) fn decode(value: &mut Value) -> bool {
    decode_within(value, 0)
}

fn decode_within(value: &mut Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Value::String(text) => match parse_embedded(text) {
            Some(mut inner) => {
                decode_within(&mut inner, depth + 1);
                *value = inner;
                true
            }
            None => false,
        },
        Value::Array(items) => items.iter_mut().fold(false, |changed, item| {
            decode_within(item, depth + 1) | changed
        }),
        Value::Object(map) => map.values_mut().fold(false, |changed, member| {
            decode_within(member, depth + 1) | changed
        }),
        _ => false,
    }
}

/// Whether `value` holds a string of JSON anywhere: a parsed document borrowed from a caller
/// is copied only then.
pub(super) fn contains(value: &Value) -> bool {
    contains_within(value, 0)
}

fn contains_within(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Value::String(text) => looks_embedded(text) && parse_embedded(text).is_some(),
        Value::Array(items) => items.iter().any(|item| contains_within(item, depth + 1)),
        Value::Object(map) => map
            .values()
            .any(|member| contains_within(member, depth + 1)),
        _ => false,
    }
}

/// Whether `text` is long enough to matter and bracketed like an object or array of JSON:
/// the cheap test before a parse.
fn looks_embedded(text: &str) -> bool {
    let text = text.trim();
    text.len() >= MIN_EMBEDDED_BYTES
        && ((text.starts_with('{') && text.ends_with('}'))
            || (text.starts_with('[') && text.ends_with(']')))
}

/// The object or array `text` holds, when it is one whole JSON value.
fn parse_embedded(text: &str) -> Option<Value> {
    if !looks_embedded(text) {
        return None;
    }
    serde_json::from_str::<Value>(text.trim())
        .ok()
        .filter(|inner| inner.is_object() || inner.is_array())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn payload(records: usize) -> String {
        let items: Vec<Value> = (0..records)
            .map(|i| json!({"id": 500 + i, "name": format!("widget {i}"), "state": "open"}))
            .collect();
        json!({"items": items}).to_string()
    }

    #[test]
    fn a_string_holding_a_json_document_becomes_that_document() {
        let mut value = json!({"response": {"body": payload(6), "status": 200}});
        assert!(contains(&value));
        assert!(decode(&mut value));
        assert_eq!(value["response"]["body"]["items"][3]["id"], 503);
        assert_eq!(value["response"]["status"], 200);
    }

    #[test]
    fn a_payload_inside_a_payload_is_decoded_too() {
        let inner = payload(6);
        let middle = json!({"message": inner, "padding": "x".repeat(200)}).to_string();
        let mut value = json!({"records": [{"body": middle}]});
        decode(&mut value);
        assert_eq!(
            value["records"][0]["body"]["message"]["items"][0]["id"],
            500
        );
    }

    #[test]
    fn short_strings_and_text_that_only_looks_like_json_stay_strings() {
        let prose = format!("{{ this is a template, not JSON: {} }}", "word ".repeat(60));
        let mut value = json!({"small": "{\"a\": 1}", "prose": prose, "scalar": "[1]"});
        assert!(!contains(&value));
        assert!(!decode(&mut value));
        assert!(value["small"].is_string() && value["prose"].is_string());
    }
}
