//! Units of JSON documents: schema lines, record lines, descent and templates.

use super::render::render_string;
use super::*;
use crate::methods::extract::doc::FieldValue;

mod lacking;
mod query_names;
mod tables;
mod walks;

fn doc_of(text: &str) -> Doc<'static> {
    build_value(
        &serde_json::from_str(text).unwrap_or(Value::Null),
        None,
        1000,
    )
}

/// The index of the first unit of `doc` whose text holds `needle`.
fn unit_holding(doc: &Doc<'_>, needle: &str) -> usize {
    (0..doc.units.len())
        .find(|&i| doc.text(i).contains(needle))
        .expect(needle)
}

/// The text of each unit of `doc`, in order.
fn unit_texts<'d>(doc: &'d Doc<'_>) -> Vec<&'d str> {
    (0..doc.units.len()).map(|i| doc.text(i)).collect()
}

#[test]
fn record_arrays_get_a_schema_line_and_one_line_per_record() {
    let doc = doc_of(
        r#"{"total":3,"runs":[{"id":1,"conclusion":"success","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},{"id":2,"conclusion":"failure","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},{"id":3,"conclusion":"success","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}]}"#,
    );
    let texts = unit_texts(&doc);
    assert!(
        texts[0].starts_with(r#"{"total":3,"runs":[…3 items]"#),
        "{texts:?}"
    );
    assert!(
        texts[1].starts_with("runs: 3 records; keys: id:int, conclusion:str"),
        "{texts:?}"
    );
    assert!(
        texts[3].starts_with(r#"runs[1]: {"id":2,"conclusion":"failure""#),
        "{texts:?}"
    );
    assert_eq!(doc.units[3].level, Level::Error);
}

#[test]
fn only_the_schema_of_many_records_is_pinned() {
    let record = |i: usize| {
        format!(
            r#"{{"name":"p{i}","kind":"positional","default":null,"doc":"{}"}}"#,
            "the value of this parameter, in the unit its caller chose. ".repeat(3)
        )
    };
    let list = |n: usize| (0..n).map(record).collect::<Vec<_>>().join(",");
    let doc = doc_of(&format!(
        r#"{{"hash":{{"parameters":[{}]}},"rows":[{}]}}"#,
        list(2),
        list(12)
    ));
    let schema = |path: &str| {
        (0..doc.units.len())
            .find(|&u| doc.text(u).starts_with(path) && doc.text(u).contains(" records;"))
            .expect("a schema line")
    };
    assert!(!doc.units[schema("hash.parameters:")].pinned);
    assert!(doc.units[schema("rows:")].pinned);
}

#[test]
fn records_of_many_shapes_name_their_common_keys_and_count_the_others() {
    // A metadata dump: every record has a path and a size, and tags of its own file type.
    let records: Vec<Value> = (0..30)
        .map(|i| {
            let mut record =
                serde_json::json!({"SourceFile": format!("/data/file{i}.bin"), "FileSize": i});
            for t in 0..20 {
                record[format!("Type{}:Tag{t}", i % 3)] = Value::from(t);
            }
            record
        })
        .collect();
    let doc = doc_of(&Value::Array(records).to_string());
    let schema = doc.text(0);
    assert!(
        schema.starts_with("30 records; keys: SourceFile:str, FileSize:int,"),
        "{schema}"
    );
    assert!(
        schema.contains("Type1:Tag1:int, and 38 keys fewer records have;"),
        "{schema}"
    );
}

#[test]
fn a_record_shown_in_part_keeps_the_member_that_names_it() {
    let mut record = serde_json::json!({
        "SourceFile": "/usr/share/doc/example/images/logos/a-rather-long-file-name.jpg",
    });
    for t in 0..60 {
        record[format!("Tag{t}")] = Value::from(format!("value number {t}"));
    }
    // Its notable members come first, then its short ones; its name before them all.
    let notable = |k: &str, _: &Value| k.starts_with("Tag5");
    let shown =
        super::render::render_within(&record, 300, (None, false, &[]), &|_| false, &notable);
    assert!(
        shown.starts_with(r#"{"SourceFile":"/usr/share/doc/example/images/logos/"#),
        "{shown}"
    );
}

#[test]
fn a_record_cut_to_fit_keeps_its_name_wherever_its_key_sorts() {
    // Transmission's `torrent-get`: keys in alphabetical order, the name among the last.
    let mut record = serde_json::Map::new();
    for t in 0..40 {
        record.insert(format!("a{t:02}Count"), Value::from(t));
    }
    record.insert("name".into(), Value::from("tcllib-1.21-subset"));
    let record = Value::Object(record);
    let shown = super::render::render_within(
        &record,
        200,
        (None, false, &[]),
        &|_| false,
        &|_: &str, _: &Value| false,
    );
    assert!(shown.contains(r#""name":"tcllib-1.21-subset""#), "{shown}");
}

#[test]
fn a_record_in_a_warning_state_stands_above_its_clear_siblings() {
    // Netdata's alarms: one raised among clear ones.
    let alarms: Vec<Value> = (0..12)
        .map(|i| {
            let status = if i == 7 { "WARNING" } else { "CLEAR" };
            serde_json::json!({"name": format!("alarm_{i}"), "status": status, "value": i})
        })
        .collect();
    let doc = doc_of(&Value::Array(alarms).to_string());
    let prior_of = |name: &str| {
        let u = (0..doc.units.len())
            .find(|&u| doc.text(u).contains(name))
            .expect(name);
        doc.units[u].prior
    };
    assert!(prior_of("alarm_7") > prior_of("alarm_6"));
}

#[test]
fn a_map_of_many_short_values_is_a_member_a_line() {
    // The shape of a build-variables dump: one flat map, far over a unit.
    let mut vars = serde_json::Map::new();
    for i in 0..200 {
        vars.insert(
            format!("VAR_{i:03}"),
            serde_json::json!(format!("-O{i} -g -Wall")),
        );
    }
    vars.insert("LIBDIR".into(), serde_json::json!("/usr/local/lib"));
    vars.insert("SHARED".into(), serde_json::json!(1));
    let text = serde_json::to_string_pretty(&serde_json::Value::Object(vars)).unwrap();
    let hints = crate::methods::extract::Hints::new().with_query("What is LIBDIR?");
    let query = Query::from_hints(&hints).unwrap();
    let doc = build_document(&text, Some(&query), 1400);
    let texts = unit_texts(&doc);
    assert_eq!(texts[0], "{…202 keys}", "{texts:#?}");
    // Each member as the pretty original prints it, a line each.
    assert!(
        texts.contains(&r#""LIBDIR": "/usr/local/lib""#),
        "{texts:#?}"
    );
    assert!(texts.contains(&r#""SHARED": 1"#), "{texts:#?}");
    assert_eq!(doc.units[1].parent, Some(0).into());
}

#[test]
fn a_nested_category_splits_templates_so_the_last_error_is_an_edge() {
    // The shape of `cargo build --message-format=json`: many errors, then a note.
    let mut lines: Vec<Value> = (0..9)
        .map(|i| {
            serde_json::json!({"reason": "compiler-message", "message": {
                "level": "error", "rendered": format!("error[E0599]: no method\n --> src/a.rs:{i}:5")}})
        })
        .collect();
    lines.push(serde_json::json!({"reason": "compiler-message", "message": {
        "level": "failure-note", "rendered": "For more information about this error, try `rustc --explain E0599`."}}));
    let doc = build_value(&Value::Array(lines), None, 1000);
    let templates: Vec<_> = doc.units[1..].iter().map(|u| u.template).collect();
    assert_eq!(templates.len(), 10);
    assert!(
        templates[..9].iter().all(|t| *t == templates[0]),
        "{templates:?}"
    );
    assert_ne!(templates[8], templates[9]);
}

#[test]
fn long_strings_are_cut_with_a_mark() {
    let mut out = String::new();
    render_string(&mut out, &"a".repeat(1000), 200, None, None);
    assert!(out.len() < 220 && out.ends_with("…\""));
}

#[test]
fn constant_children_are_named_once_in_the_schema() {
    let item =
        r#"{"id":1,"repo":{"name":"x","url":"https://example.com/a/long/url/that/repeats"}}"#;
    let text = format!(
        "[{item},{},{}]",
        item.replace("\"id\":1", "\"id\":2"),
        item.replace("\"id\":1", "\"id\":3")
    );
    let doc = doc_of(&text);
    let texts = unit_texts(&doc);
    assert!(
        texts[0].ends_with("same in all (not repeated): repo"),
        "{texts:?}"
    );
    assert_eq!(texts[1], r#"[0]: {"id":1}"#);
}

#[test]
fn a_record_cut_to_fit_keeps_the_value_that_sets_it_apart() {
    let records: Vec<Value> = (0..20)
        .map(|i| {
            let mut record = serde_json::Map::new();
            // Many short fields, each as cheap as the one that matters, all before it.
            for f in 0..40 {
                record.insert(
                    format!("field_{f}"),
                    Value::String(format!("value-{i}-{f}")),
                );
            }
            record.insert(
                "status".into(),
                Value::String(if i == 7 { "cancelled" } else { "ok" }.into()),
            );
            Value::Object(record)
        })
        .collect();
    let doc = build_value(&Value::Array(records), None, 600);
    let failed = (0..doc.units.len())
        .map(|i| doc.text(i))
        .find(|t| t.starts_with("[7]:"));
    assert!(
        failed.is_some_and(|t| t.contains(r#""status":"cancelled""#)),
        "{failed:?}"
    );
}

#[test]
fn an_exact_string_every_record_holds_singles_none_out() {
    // Every record links to the same host the query names; one holds the version it names.
    let items: Vec<Value> = (0..8)
        .map(|i| {
            serde_json::json!({
                "html_url": format!("https://example.org/o/r/issues/{i}"),
                "title": format!("Issue number {i} about the parser"),
                "version": if i == 5 { "v9.9.1" } else { "v1.0.0" },
                "body": format!("A long description of change {i} that nobody needs in a listing. ").repeat(4),
            })
        })
        .collect();
    let q = Query::from_hints(
        &crate::methods::extract::Hints::new().with_query("Which example.org issue is on v9.9.1?"),
    )
    .unwrap();
    let doc = build_value(&Value::Array(items), Some(&q), 1400);
    let full: Vec<&str> = (0..doc.units.len())
        .map(|i| doc.text(i))
        .filter(|t| t.contains("\"body\""))
        .collect();
    assert_eq!(full.len(), 1, "{full:?}");
    assert!(full[0].contains("v9.9.1"), "{full:?}");
}

#[test]
fn a_string_a_group_of_records_holds_leaves_each_its_row() {
    // A test run's successes: a third of them in the suite the query names, each record long
    // with its trace. Whole, four of them would fill the units; as rows, all fit.
    let items: Vec<Value> = (0..30)
        .map(|i| {
            let suite = if i % 3 == 0 { "pl.tablex" } else { "pl.stringx" };
            serde_json::json!({
                "name": format!("{suite} does thing number {i}"),
                "trace": {
                    "traceback": format!("stack traceback: spec/lib_spec.lua:{i}: in function"),
                    "currentline": i,
                    "source": "@spec/lib_spec.lua",
                    "notes": "what the runner recorded about the place it ran, at length ".repeat(3),
                },
                "duration": 0.001 * i as f64,
            })
        })
        .collect();
    let q = query_of("Which of the pl.tablex specs passed?");
    let doc = build_value(&Value::Array(items.clone()), Some(&q), 1400);
    let rows: Vec<&str> = (0..doc.units.len())
        .map(|i| doc.text(i))
        .filter(|t| t.contains("pl.tablex"))
        .collect();
    assert_eq!(rows.len(), 10, "{rows:?}");
    assert!(rows.iter().all(|t| !t.contains("at length")), "{rows:?}");
    // One record the query names alone keeps its whole rendering.
    let q = query_of("What does the run say of `pl.tablex does thing number 9`?");
    let doc = build_value(&Value::Array(items), Some(&q), 1400);
    let named = (0..doc.units.len())
        .map(|i| doc.text(i))
        .find(|t| t.contains("thing number 9\""))
        .expect("the named record");
    assert!(named.contains("at length"), "{named}");
}

/// The query of `text`.
fn query_of(text: &str) -> Query {
    Query::from_hints(&crate::methods::extract::Hints::new().with_query(text)).unwrap()
}

/// Compiler messages as JSON lines (`cargo --message-format=json`): each record nests the
/// crate it belongs to and a `message` whose `rendered` text ends with the suggestion.
fn compiler_messages() -> Value {
    let records: Vec<Value> = [(12, "legacy_numeric_constants"), (115, "needless_borrow"), (98, "get_first")]
        .iter()
        .map(|&(line, lint)| {
            let rendered = format!(
                "warning: a lint fired\n  --> src/error.rs:{line}:44\n   |\n{line} |     Error::Generic {{ msg }} => &msg,\n   |                                  ^^^^ help: change this to: `msg`\n   |\n   = help: for further information visit https://rust-lang.github.io/rust-clippy/index.html#{lint}\n   = note: `#[warn(clippy::{lint})]` on by default\n"
            );
            serde_json::json!({
                "reason": "compiler-message",
                "package_id": format!("path+file:///work/crate-{line}#crate@1.2.1"),
                "manifest_path": "/work/crate/Cargo.toml",
                "target": {"kind": ["lib"], "name": "crate", "src_path": "/work/crate/src/lib.rs", "edition": "2015"},
                "message": {
                    "rendered": rendered,
                    "level": "warning",
                    "spans": [{"file_name": "src/error.rs", "line_start": line, "line_end": line}],
                    "children": (0..4).map(|k| serde_json::json!({
                        "message": format!("a note number {k} that restates the warning in other words"),
                        "level": "note",
                    })).collect::<Vec<_>>(),
                    "code": {"code": format!("clippy::{lint}"), "explanation": null},
                },
            })
        })
        .collect();
    Value::Array(records)
}

#[test]
fn a_text_of_several_lines_the_query_names_keeps_its_tail() {
    let q = query_of("Which lint fires at src/error.rs line 115?");
    let doc = build_value(&compiler_messages(), Some(&q), 1400);
    let named = (0..doc.units.len())
        .map(|i| doc.text(i))
        .find(|t| t.contains("src/error.rs:115"))
        .expect("the record the query names");
    assert!(
        named.contains("#[warn(clippy::needless_borrow)]"),
        "{named}"
    );
    // Without a query, the same text keeps only its head.
    let doc = build_value(&compiler_messages(), None, 1400);
    let plain = (0..doc.units.len())
        .map(|i| doc.text(i))
        .find(|t| t.contains("src/error.rs:115"))
        .expect("the record");
    assert!(
        !plain.contains("#[warn(clippy::needless_borrow)]"),
        "{plain}"
    );
}

#[test]
fn an_event_s_output_line_says_how_it_went() {
    use super::stats::record_level;
    let event = |output: &str| serde_json::json!({"Action": "output", "Test": "TestParse", "Output": output});
    assert_eq!(
        record_level(&event("--- FAIL: TestParse/1e3 (0.00s)\n")),
        Level::Error
    );
    assert_eq!(
        record_level(&event("panic: runtime error: integer divide by zero\n")),
        Level::Error
    );
    assert_eq!(record_level(&event("=== RUN   TestParse\n")), Level::None);
    // A title or a description is not a line of output: its words name a topic.
    let issue = serde_json::json!({"title": "Fix error handling in the parser", "state": "open"});
    assert_eq!(record_level(&issue), Level::None);
}

#[test]
fn a_record_named_by_a_value_keeps_the_colon_spaces_of_a_pretty_original() {
    let components: Vec<Value> = (0..12)
        .map(|i| {
            serde_json::json!({
                "name": format!("crate{i}"),
                "version": format!("1.{i}.0"),
                "scope": if i == 7 { "excluded" } else { "required" },
                "description": "A crate of the build, described at some length here. ".repeat(3),
            })
        })
        .collect();
    let text =
        serde_json::to_string_pretty(&serde_json::json!({ "components": components })).unwrap();
    let q = query_of("Which components are \"excluded\"?");
    let doc = build_document(&text, Some(&q), 1400);
    let named = (0..doc.units.len())
        .map(|i| doc.text(i))
        .find(|t| t.contains("crate7"))
        .expect("the record the query names");
    assert!(
        named.contains(r#""name": "crate7", "version": "1.7.0""#),
        "{named}"
    );
    // The others keep the colons of their pretty lines, and compact commas.
    let other = (0..doc.units.len())
        .map(|i| doc.text(i))
        .find(|t| t.contains("crate3"))
        .expect("another record");
    assert!(other.contains(r#""name": "crate3","version""#), "{other}");
}

#[test]
fn a_record_whose_member_is_asked_by_key_reads_as_its_pretty_lines() {
    // A coverage report's lines, pretty-printed: an answer quotes a record's run of members,
    // which its line breaks read as `"count": 104, "excluded": false, "line_number": 55`.
    let lines: Vec<Value> = (0..80)
        .map(|i| {
            serde_json::json!({
                "hits": [i, 0, 2],
                "count": if i == 41 { 104 } else { i % 37 },
                "excluded": false,
                "line_number": i + 14,
            })
        })
        .collect();
    let text = serde_json::to_string_pretty(&serde_json::json!({ "lines": lines })).unwrap();
    let q = query_of("Which lines ran the most times? Give their counts.");
    let doc = build_document(&text, Some(&q), 1400);
    let hot = (0..doc.units.len())
        .map(|i| doc.text(i))
        .find(|t| t.starts_with("lines[41]: "))
        .expect("the record of line 55");
    assert!(
        hot.contains(r#""count": 104, "excluded": false, "line_number": 55"#),
        "{hot}"
    );
    // Its nested values stay compact: they are seldom quoted with it.
    assert!(hot.contains(r#""hits": [41,0,2]"#), "{hot}");
}

#[test]
fn a_header_the_query_names_keeps_its_value_in_a_name_value_list() {
    let mut headers = Vec::new();
    for i in 0..20 {
        headers.push(format!("X-Header-{i}"));
        headers.push(format!("value, number {i}"));
    }
    headers.push("X-Request-Id".to_owned());
    headers.push("0680:6A2B:1F50557".to_owned());
    let list: Vec<Value> = headers.into_iter().map(Value::String).collect();
    assert!(render::is_name_value_list(&list));
    let q = query_of("which X-Request-Id came back?");
    let shown = render::render_within(
        &Value::Array(list),
        400,
        (Some(&q), false, &[]),
        &|_| false,
        &|_, _| false,
    );
    assert!(
        shown.contains(r#""X-Request-Id","0680:6A2B:1F50557""#),
        "{shown}"
    );
    // A list of words is no name/value list.
    let words: Vec<Value> = ["alpha", "beta", "gamma", "delta"]
        .map(Value::from)
        .to_vec();
    assert!(!render::is_name_value_list(&words));
}

#[test]
fn a_cut_traceback_keeps_the_line_that_says_what_went_wrong() {
    let frames: String = (0..30)
        .map(|i| {
            format!(
                "  File \"/srv/app/mod{i}.py\", line {i}, in step{i}\n    step{}()\n",
                i + 1
            )
        })
        .collect();
    let text = format!(
        "An error has been caught in function 'main':\nTraceback (most recent call last):\n{frames}FileNotFoundError: [Errno 2] No such file or directory: '/srv/data/input.csv'\n"
    );
    let mut out = String::new();
    render_string(&mut out, &text, 400, None, None);
    assert!(
        out.contains("No such file or directory: '/srv/data/input.csv'"),
        "{out}"
    );
    assert!(out.starts_with("\"An error has been caught"), "{out}");
}

#[test]
fn a_markdown_tree_in_a_record_is_shown_as_its_text() {
    let entries: Vec<Value> = (0..6)
        .map(|i| serde_json::json!({"name": format!("method{i}"), "description": {"type": "root", "children": [
            {"type": "paragraph", "children": [{"type": "text", "value": format!("Does thing {i} to the file.")}]}]}}))
        .collect();
    let doc = build_value(&Value::Array(entries), None, 1000);
    let texts = unit_texts(&doc);
    assert!(
        texts
            .iter()
            .any(|t| t.contains(r#""description":"Does thing 4 to the file.""#)),
        "{texts:?}"
    );
}

#[test]
fn a_long_text_every_record_repeats_is_stated_once() {
    // A build's messages, each naming the same package and manifest; the closing one names
    // none.
    let mut lines: Vec<String> = (0..12)
        .map(|i| {
            serde_json::json!({
                "reason": "compiler-message",
                "manifest_path": "/home/me/src/widget/Cargo.toml",
                "message": {"rendered": format!("warning: unused variable `x{i}`"), "level": "warning"},
            })
            .to_string()
        })
        .collect();
    lines.push(r#"{"reason":"build-finished","success":true}"#.to_owned());
    let doc = super::build_lines(&lines.join("\n"), None, 1400);
    let texts = unit_texts(&doc);
    assert!(
        texts[0].contains(r#"manifest_path="/home/me/src/widget/Cargo.toml""#),
        "{texts:?}"
    );
    assert!(
        texts[1..].iter().all(|t| !t.contains("Cargo.toml")),
        "{texts:?}"
    );
}
