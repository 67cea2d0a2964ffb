//! Records that each hold a list of records of their own — a linter's report of one record per
//! file, its findings in a list (`[{"file": …, "messages": [{"line": …, "rule": …}, …]}, …]`)
//! — read as one list of the inner records, each with its outer record's short values
//! (`file`) beside its own. A file's findings then become rows of one table, where the rare
//! rule among them stands out, instead of each file being one line cut at its head.

use serde_json::{Map, Value};

/// An outer record's string longer than this (a file's whole source) is content, not a value
/// each of its inner records repeats.
const MAX_CARRIED_BYTES: usize = 200;

/// What a carried key is written with in a row that has a key of that name of its own.
const PARENT_PREFIX: &str = "../";

/// The inner records of a list of grouping records, and what they came from.
pub(super) struct Ungrouped {
    /// Each inner record, after the short values of its outer record.
    pub(super) rows: Vec<Value>,
    /// Each row's place in the original (`[3].messages[12]`).
    pub(super) labels: Vec<String>,
    /// The key of the list each outer record holds (`messages`).
    list_key: String,
    /// The outer records' keys each row carries (`file`, `time`).
    carried: Vec<String>,
    /// The carried keys some rows hold of their own, under which the outer record's value is
    /// `../key`.
    shadowed: Vec<String>,
    /// The outer records' keys of long texts no row carries (`source`).
    left_out: Vec<String>,
    /// How many outer records there were, and how many held none.
    outer: usize,
    empty: usize,
}

impl Ungrouped {
    /// Whether the outer records held long texts no row carries.
    pub(super) fn leaves_out_texts(&self) -> bool {
        !self.left_out.is_empty()
    }

    /// The line that says what the rows are: `26 records of file, time and messages[]: one
    /// row per item of messages, with its record's file, time (4 records hold none)`.
    pub(super) fn describe(&self, path: &str) -> String {
        let mut text = if path.is_empty() {
            String::new()
        } else {
            format!("{path}: ")
        };
        let carried = self.carried.join(", ");
        text.push_str(&format!(
            "{} records of {carried} and {key}[]: one row per item of {key}, with its record's {carried}",
            self.outer,
            key = self.list_key,
        ));
        if !self.shadowed.is_empty() {
            let names: Vec<String> = (self.shadowed.iter())
                .map(|k| format!("{PARENT_PREFIX}{k}"))
                .collect();
            text.push_str(&format!(" ({} beside a row's own)", names.join(", ")));
        }
        if self.empty > 0 {
            text.push_str(&format!(
                " ({} records hold none: a row of their own each)",
                self.empty
            ));
        }
        if !self.left_out.is_empty() {
            text.push_str(&format!("; their {} left out", self.left_out.join(", ")));
        }
        text
    }
}

/// `items` read as the items of the one list of records each holds, when they are records of
/// a few short values around such a list that holds most of their bytes; `None` otherwise.
pub(super) fn ungroup(items: &[Value]) -> Option<Ungrouped> {
    let list_key = common_list_key(items)?;
    // Outer records are thin: besides their list, only scalars (and empty lists), the short
    // ones carried into its rows, the long texts left out. A record with structure of its own (a test group's schema, a
    // package's licenses beside its references) is an entity, not a group.
    let thin = items.iter().all(|item| {
        item.as_object().is_some_and(|map| {
            map.iter().all(|(k, v)| {
                *k == list_key || v.is_string() || is_short_scalar(v) || is_empty_container(v)
            })
        })
    });
    if !thin {
        return None;
    }
    // A long text beside the list (the linted file's whole source) is content of its own,
    // which no row carries: it is left out, and said to be.
    let mut left_out: Vec<String> = Vec::new();
    let (mut list_bytes, mut all_bytes) = (0, 0);
    for item in items {
        let map = item.as_object()?;
        for (k, v) in map {
            if v.is_string() && !is_short_scalar(v) {
                if !left_out.contains(k) {
                    left_out.push(k.clone());
                }
                continue;
            }
            let bytes = super::approx_len(v, usize::MAX);
            all_bytes += bytes + k.len();
            if *k == list_key {
                list_bytes += bytes;
            }
        }
    }
    if list_bytes * 2 < all_bytes {
        return None;
    }
    let carried = carried_keys(items, &list_key);
    if carried.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    let mut empty = 0;
    let mut shadowed: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let map = item.as_object()?;
        let inner = map.get(&list_key).and_then(Value::as_array);
        let Some(inner) = inner.filter(|l| !l.is_empty()) else {
            // A record that holds none is still a record (a finding with no fix): a row of
            // its own values, so that nothing of it is lost.
            empty += 1;
            let row: Map<String, Value> = carried
                .iter()
                .filter_map(|key| map.get(key).map(|v| (key.clone(), v.clone())))
                .collect();
            rows.push(Value::Object(row));
            labels.push(format!("[{i}]"));
            continue;
        };
        for (j, x) in inner.iter().enumerate() {
            let Value::Object(own) = x else { continue };
            let mut row = Map::new();
            for key in &carried {
                if let Some(v) = map.get(key) {
                    // A row's own key of the same name (a lookup table's `Name` beside each
                    // of its values' `Name`) keeps its place; its record's is `../Name`.
                    if own.contains_key(key) {
                        row.insert(format!("{PARENT_PREFIX}{key}"), v.clone());
                        if !shadowed.contains(key) {
                            shadowed.push(key.clone());
                        }
                    } else {
                        row.insert(key.clone(), v.clone());
                    }
                }
            }
            for (k, v) in own {
                row.insert(k.clone(), v.clone());
            }
            rows.push(Value::Object(row));
            labels.push(format!("[{i}].{list_key}[{j}]"));
        }
    }
    Some(Ungrouped {
        rows,
        labels,
        list_key,
        carried,
        shadowed,
        left_out,
        outer: items.len(),
        empty,
    })
}

/// The key whose value is a non-empty list of objects in most of `items`, and in none of
/// them is anything else but a list.
fn common_list_key(items: &[Value]) -> Option<String> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    for item in items {
        for (k, v) in item.as_object()? {
            let is_records = v
                .as_array()
                .is_some_and(|l| !l.is_empty() && l.iter().all(Value::is_object));
            if is_records {
                match counts.iter_mut().find(|(key, _)| key == k) {
                    Some((_, n)) => *n += 1,
                    None => counts.push((k, 1)),
                }
            }
        }
    }
    let (key, n) = counts.into_iter().max_by_key(|&(_, n)| n)?;
    let lists_everywhere = items
        .iter()
        .all(|item| item.get(key).is_none_or(Value::is_array));
    (n * 2 >= items.len() && lists_everywhere).then(|| key.to_owned())
}

/// The outer keys every row carries: those whose value is a short scalar in most records.
fn carried_keys(items: &[Value], list_key: &str) -> Vec<String> {
    let mut keys: Vec<(String, usize)> = Vec::new();
    for item in items {
        let Some(map) = item.as_object() else {
            continue;
        };
        for (k, v) in map {
            let short = is_short_scalar(v);
            if k != list_key && short {
                match keys.iter_mut().find(|(key, _)| key == k) {
                    Some((_, n)) => *n += 1,
                    None => keys.push((k.clone(), 1)),
                }
            }
        }
    }
    keys.into_iter()
        .filter(|(_, n)| n * 2 >= items.len())
        .map(|(k, _)| k)
        .collect()
}

fn is_short_scalar(v: &Value) -> bool {
    match v {
        Value::String(s) => s.len() <= MAX_CARRIED_BYTES,
        Value::Number(_) | Value::Bool(_) => true,
        _ => false,
    }
}

fn is_empty_container(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
        Value::Null => true,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn report() -> Vec<Value> {
        (0..12)
            .map(|f| {
                let messages: Vec<Value> = (0..f % 4)
                    .map(|m| json!({"line": m + 1, "message": format!("Special characters must be escaped ({f}.{m})."), "rule": {"id": "spec-char-escape"}}))
                    .collect();
                json!({"file": format!("site/page{f}.html"), "messages": messages, "time": 20 + f})
            })
            .collect()
    }

    #[test]
    fn a_report_of_files_reads_as_its_findings_with_their_file() {
        let grouped = ungroup(&report()).expect("ungrouped");
        // 12 files holding 0, 1, 2, 3 findings in turn; one that holds none is a row alone.
        assert_eq!(grouped.rows.len(), 21);
        assert_eq!(
            grouped.rows[0],
            json!({"file": "site/page0.html", "time": 20})
        );
        assert_eq!(grouped.labels[0], "[0]");
        assert_eq!(grouped.rows[1]["file"], "site/page1.html");
        assert_eq!(grouped.rows[1]["line"], 1);
        assert_eq!(grouped.labels[1], "[1].messages[0]");
        assert_eq!(
            grouped.describe(""),
            "12 records of file, time and messages[]: one row per item of messages, with its record's file, time (3 records hold none: a row of their own each)"
        );
    }

    #[test]
    fn an_eslint_report_with_its_counts_and_empty_lists_is_ungrouped() {
        let report: Vec<Value> = (0..10)
            .map(|f| {
                let messages: Vec<Value> = (0..3)
                    .map(|m| json!({"ruleId": "no-unused-vars", "severity": 2, "message": format!("'x{m}' is defined but never used."), "line": 10 * m + f, "column": 7}))
                    .collect();
                json!({"filePath": format!("/src/lib/mod{f}.js"), "messages": messages, "suppressedMessages": [],
                       "errorCount": 3, "fatalErrorCount": 0, "warningCount": 0, "usedDeprecatedRules": []})
            })
            .collect();
        let grouped = ungroup(&report).expect("ungrouped");
        assert_eq!(grouped.rows.len(), 30);
        assert_eq!(grouped.rows[4]["filePath"], "/src/lib/mod1.js");
        assert_eq!(grouped.rows[4]["line"], 11);
    }

    #[test]
    fn a_report_that_holds_each_files_source_reads_as_its_findings_without_it() {
        // html-validate's report: a few files, each with its whole source beside its messages,
        // the source larger than the messages.
        let report: Vec<Value> = (0..4)
            .map(|f| {
                let messages: Vec<Value> = (0..5)
                    .map(|m| json!({"ruleId": "wcag/h37", "message": "<img> is missing required \"alt\" attribute", "line": 10 * m + f, "selector": format!("#top > tr > td:nth-child({m}) > img")}))
                    .collect();
                json!({"filePath": format!("/doc/page{f}.html"), "messages": messages, "errorCount": 5,
                       "source": "<html><body><table width=\"100%\"></table></body></html>\n".repeat(60)})
            })
            .collect();
        let grouped = ungroup(&report).expect("ungrouped");
        assert!(grouped.leaves_out_texts());
        assert_eq!(grouped.rows.len(), 20);
        assert_eq!(grouped.rows[6]["filePath"], "/doc/page1.html");
        assert!(grouped.rows.iter().all(|row| row.get("source").is_none()));
        assert!(
            grouped.describe("").ends_with("; their source left out"),
            "{}",
            grouped.describe("")
        );
    }

    #[test]
    fn a_row_with_a_key_of_its_record_s_name_keeps_both() {
        // A lookup table: each enumeration's `Name`, and each of its values' `Name`.
        let lookups: Vec<Value> = (0..12)
            .map(|e| {
                let values: Vec<Value> = (0..4)
                    .map(|v| json!({"Name": format!("State {e}.{v}"), "Value": v}))
                    .collect();
                json!({"Name": format!("ENUM_{e}"), "MaxValue": 15, "EnumValues": values})
            })
            .collect();
        let grouped = ungroup(&lookups).expect("ungrouped");
        assert_eq!(
            grouped.rows[5],
            json!({"../Name": "ENUM_1", "MaxValue": 15, "Name": "State 1.1", "Value": 1})
        );
        assert!(
            grouped
                .describe("")
                .ends_with("(../Name beside a row's own)"),
            "{}",
            grouped.describe("")
        );
    }

    #[test]
    fn entities_with_structure_of_their_own_stay_records() {
        // Packages of an SBOM: their references are the biggest list, but a license list and
        // a description make each a package, not a group of references.
        let components: Vec<Value> = (0..12)
            .map(|i| json!({"name": format!("pkg{i}"), "version": "1.0", "licenses": [{"license": {"id": "MIT"}}],
                            "externalReferences": (0..6).map(|r| json!({"type": "website", "url": format!("https://example.com/pkg{i}/{r}")})).collect::<Vec<_>>()}))
            .collect();
        assert!(ungroup(&components).is_none());
    }

    #[test]
    fn records_whose_list_is_a_small_part_stay_records() {
        // Issues with a label or two beside long bodies: the list is detail of the record.
        let issues: Vec<Value> = (0..12)
            .map(|i| json!({"number": i, "body": "A long description of the change. ".repeat(20), "labels": [{"name": "bug"}]}))
            .collect();
        assert!(ungroup(&issues).is_none());
    }
}
