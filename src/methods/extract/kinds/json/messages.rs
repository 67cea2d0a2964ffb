//! JSON Lines whose messages are parts of one document: columnar result sets, or batches of
//! records one array per line. Each is read as the one list of its records.

use serde_json::Value;

/// The records of JSON Lines `messages` that are each an array of them (a batch per line:
/// gcc's `-fdiagnostics-format=json` prints one array of diagnostics per file it compiles),
/// in order; empty batches hold nothing. `None` unless every message is an array and at
/// least two records are objects: read one line at a time, each batch would be a record
/// whose own records are folded away.
pub(super) fn batched(messages: &[&str]) -> Option<Vec<Value>> {
    if messages.is_empty() || !messages.iter().all(|m| m.trim_start().starts_with('[')) {
        return None;
    }
    let mut records = Vec::new();
    for message in messages {
        match serde_json::from_str::<Value>(message).ok()? {
            Value::Array(items) => records.extend(items),
            _ => return None,
        }
    }
    (records.iter().filter(|r| r.is_object()).count() >= 2).then_some(records)
}

/// JSON Lines `messages` read as records when they are columnar result sets (see
/// [`super::columnar`]); the first message decides whether all are parsed to find out.
pub(super) fn columnar(messages: &[&str]) -> Option<Vec<Value>> {
    let first: Value = serde_json::from_str(messages.first()?).ok()?;
    if !super::columnar::is_set(first.as_object()?) {
        return None;
    }
    let parsed: Vec<Value> = (messages.iter())
        .filter_map(|m| serde_json::from_str(m).ok())
        .collect();
    super::columnar::reshape_items(&parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_of_records_are_one_list() {
        let lines = [
            "[]",
            r#"[{"kind": "warning", "line": 3}, {"kind": "warning", "line": 9}]"#,
            r#"[{"kind": "error", "line": 1}]"#,
        ];
        let records = batched(&lines).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records[2]["kind"], "error");
    }

    /// A compiler's diagnostics, one array per file compiled: each diagnostic is a record of
    /// its own, read whole, not folded inside its file's batch.
    #[test]
    fn each_record_of_a_batch_is_a_unit_of_its_own() {
        let mut text = String::new();
        for file in 0..12 {
            text.push('[');
            for (i, message) in [
                "conversion may change the sign of the result",
                "cast discards const qualifier from pointer target type",
                "unused parameter",
            ]
            .iter()
            .enumerate()
            {
                if i > 0 {
                    text.push_str(", ");
                }
                text.push_str(&format!(
                    r#"{{"kind": "warning", "locations": [{{"caret": {{"line": {}, "file": "src/f{file}.c"}}}}], "message": "{message}"}}"#,
                    10 * file + i
                ));
            }
            text.push_str("]\n");
        }
        let hints = crate::methods::extract::Hints::new()
            .with_query("where does it warn about casting away const?");
        let query = crate::methods::extract::query::Query::from_hints(&hints).unwrap();
        let doc = super::super::build_lines(&text, Some(&query), 4096);
        let unit = (0..doc.units.len())
            .find(|&u| doc.text(u).contains("cast discards"))
            .expect("a unit of the named diagnostic");
        assert!(
            !doc.text(unit).contains("sign of the result"),
            "{}",
            doc.text(unit)
        );
    }

    #[test]
    fn messages_that_are_not_all_batches_are_no_list() {
        assert!(batched(&[r#"[1, 2]"#, r#"{"kind": "note"}"#]).is_none());
        assert!(batched(&["[1, 2]", "[3]"]).is_none());
        assert!(batched(&["[]", "[]"]).is_none());
    }
}
