//! One module per kind of output, each cutting its text into [`Doc`] units that fit the kind.

use super::detect::ContentKind;
use super::doc::{Doc, Unit};

pub(crate) mod code;
pub(crate) mod csv;
pub(crate) mod diff;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod lines;
pub(crate) mod log;
pub(crate) mod markdown;

/// Cuts `text` of kind `kind` into units. `json` is the value detection already parsed, if any
/// (a large document is not parsed whole, and is walked from its text);
/// `max_unit_bytes` bounds any one unit so that no single piece can crowd out the rest.
pub(crate) fn build<'a>(
    text: &'a str,
    kind: ContentKind,
    json: Option<serde_json::Value>,
    query: Option<&super::query::Query>,
    max_unit_bytes: usize,
) -> Doc<'a> {
    let mut doc = match (kind, json) {
        (ContentKind::Json, Some(value)) => json::build_value(&value, query, max_unit_bytes),
        (ContentKind::Json, None) => json::build_document(text, query, max_unit_bytes),
        (ContentKind::JsonLines, _) => json::build_lines(text, query, max_unit_bytes),
        (ContentKind::Log, _) => log::build(text),
        // Stanzas and aligned tables read as a list of records keep their own lines.
        (ContentKind::Text | ContentKind::Csv, Some(_)) => {
            super::tree::build_line_records(text, kind, query)
                .unwrap_or_else(|| lines::build(text, lines::Style::Text))
        }
        (ContentKind::Csv, _) => csv::build(text),
        (ContentKind::Markdown, _) => markdown::build(text.into(), ContentKind::Markdown),
        (ContentKind::Html, _) => markdown::build(html::to_text(text).into(), ContentKind::Html),
        (ContentKind::Code, _) => code::build(text, query),
        (ContentKind::Diff, _) => diff::build(text, query),
        (ContentKind::Config, _) => super::tree::build_sections(text, query),
        // An XML list of records keeps its own bytes: start tags and child elements.
        (ContentKind::Xml, Some(tree)) => super::tree::build_xml_records(text, query)
            .unwrap_or_else(|| Doc {
                kind,
                ..json::build_value(&tree, query, max_unit_bytes)
            }),
        // YAML read as a tree goes the JSON way, under its own name.
        (ContentKind::Yaml, Some(tree)) => Doc {
            kind,
            ..json::build_value(&tree, query, max_unit_bytes)
        },
        _ => lines::build(text, lines::Style::Text),
    };
    split_oversized(&mut doc, max_unit_bytes);
    doc
}

/// Cuts units longer than `max_bytes` into pieces, preferring whitespace, so that one huge
/// line (minified code, a pasted blob) cannot be the only thing that fits or never fit at all.
fn split_oversized(doc: &mut Doc<'_>, max_bytes: usize) {
    let max_bytes = max_bytes.max(64);
    if doc.units.iter().all(|u| u.span.len() <= max_bytes) {
        return;
    }
    // Parents refer to unit indices; keep a map from old to new index for them.
    let mut units = Vec::with_capacity(doc.units.len() + 16);
    let mut new_index = Vec::with_capacity(doc.units.len());
    for unit in doc.units.drain(..) {
        new_index.push(units.len());
        if unit.span.len() <= max_bytes {
            units.push(unit);
            continue;
        }
        let mut start = unit.span.start();
        let end = unit.span.end();
        let mut first = true;
        while start < end {
            let mut cut =
                crate::tokens::floor_char_boundary(&doc.source, (start + max_bytes).min(end));
            if cut < end {
                // Back up to whitespace within the last quarter, if there is some.
                let window = &doc.source[start..cut];
                if let Some(ws) = window.rfind(|c: char| c.is_whitespace())
                    && ws > max_bytes * 3 / 4
                {
                    cut = start + ws;
                }
            }
            if cut <= start {
                cut = crate::tokens::ceil_char_boundary(&doc.source, start + 1);
            }
            units.push(Unit {
                span: (start..cut).into(),
                weight: if first { unit.weight } else { 0 },
                template: if first { unit.template } else { None },
                ..unit.clone()
            });
            first = false;
            start = cut;
            // Pieces start on a visible character: the whitespace at a cut is not emitted.
            while start < end && doc.source.as_bytes()[start].is_ascii_whitespace() {
                start += 1;
            }
        }
    }
    for unit in &mut units {
        unit.parent = unit.parent.get().map(|p| new_index[p]).into();
    }
    for field in &mut doc.fields {
        field.renumber(&new_index);
    }
    doc.fuller.renumber(&new_index);
    doc.units = units;
}

#[cfg(test)]
mod tests {
    use crate::TokenCounter;
    use crate::methods::extract::{ContentKind, Hints, extract_with_stats};

    /// The rare exact term every sample hides once, deep in its body.
    const TERM: &str = "zqx-7731";

    /// A text of kind `kind` with the term at about two thirds of the way, under `context`.
    fn sample(kind: ContentKind) -> (String, &'static str) {
        let mut text = String::new();
        let n = 150;
        let at = n * 2 / 3;
        match kind {
            ContentKind::Log => {
                for i in 0..n {
                    let what = if i == at { TERM } else { "batch" };
                    text.push_str(&format!(
                        "2024-03-01 12:{:02}:{:02} INFO worker-{i} processed {what} {i} in 12ms\n",
                        i / 60,
                        i % 60
                    ));
                }
                (text, "")
            }
            ContentKind::Csv => {
                text.push_str("id,name,status,duration_ms\n");
                for i in 0..n {
                    let name = if i == at {
                        TERM.to_owned()
                    } else {
                        format!("job{i}")
                    };
                    text.push_str(&format!("{i},{name},ok,{}\n", 100 + i));
                }
                (text, "id,name,status,duration_ms")
            }
            ContentKind::Markdown => {
                text.push_str("# Guide\n\n");
                for i in 0..n / 3 {
                    text.push_str(&format!("## Part {i}\n\nThe part {i} explains one setting of the service and how it is used day to day.\n\n"));
                    if i == at / 3 {
                        text.push_str(&format!("Set the token to {TERM} before the start.\n\n"));
                    }
                }
                (text, "## Part 33")
            }
            ContentKind::Code => {
                for i in 0..n / 3 {
                    let value = if i == at / 3 { TERM } else { "plain" };
                    text.push_str(&format!("fn handler_{i}(input: &str) -> String {{\n    let value = \"{value}\";\n    format!(\"{{input}}{{value}}\")\n}}\n\n"));
                }
                (text, "fn handler_33(input: &str) -> String {")
            }
            ContentKind::Config => {
                for i in 0..n / 2 {
                    let value = if i == at / 2 { TERM } else { "plain" };
                    text.push_str(&format!(
                        "[server{i}]\nhost = \"10.0.0.{i}\"\ntoken = \"{value}\"\n\n"
                    ));
                }
                (text, "[server50]")
            }
            ContentKind::Yaml => {
                text.push_str("items:\n");
                for i in 0..n / 3 {
                    let value = if i == at / 3 { TERM } else { "plain" };
                    text.push_str(&format!("- metadata:\n    name: pod-{i}\n  spec:\n    image: registry/app:{i}\n    token: {value}\n"));
                }
                (text, "pod-33")
            }
            ContentKind::Xml => {
                text.push_str("<suite>\n");
                for i in 0..n / 3 {
                    let value = if i == at / 3 { TERM } else { "plain" };
                    text.push_str(&format!(
                        "  <case name=\"case{i}\" time=\"0.{i}\"><note>{value}</note></case>\n"
                    ));
                }
                text.push_str("</suite>\n");
                (text, "case33")
            }
            ContentKind::Json => {
                let records: Vec<serde_json::Value> = (0..n / 3)
                    .map(|i| {
                        let value = if i == at / 3 { TERM } else { "plain" };
                        serde_json::json!({"name": format!("pod-{i}"), "uid": format!("{i:08x}-77aa-4bcd-9e0f-0123456789ab"),
                            "spec": {"image": format!("registry/app:{i}"), "token": value}})
                    })
                    .collect();
                let text = serde_json::to_string_pretty(&serde_json::json!({ "items": records }))
                    .unwrap_or_default();
                (text, "pod-33")
            }
            ContentKind::Diff => {
                for i in 0..n / 5 {
                    let value = if i == at / 5 { TERM } else { "plain" };
                    text.push_str(&format!("diff --git a/src/m{i}.rs b/src/m{i}.rs\n--- a/src/m{i}.rs\n+++ b/src/m{i}.rs\n@@ -10,3 +10,3 @@ fn setup_{i}() {{\n     let a = 1;\n-    let v = \"old\";\n+    let v = \"{value}\";\n"));
                }
                (text, "@@ -10,3 +10,3 @@ fn setup_20() {")
            }
            ContentKind::Html => {
                text.push_str("<!DOCTYPE html>\n<html><body>\n");
                for i in 0..n / 3 {
                    text.push_str(&format!("<h2>Part {i}</h2>\n<p>The part {i} explains one setting of the service and how it is used.</p>\n"));
                    if i == at / 3 {
                        text.push_str(&format!(
                            "<p>Set the token to {TERM} before the start.</p>\n"
                        ));
                    }
                }
                text.push_str("</body></html>\n");
                (text, "Part 33")
            }
            _ => {
                for i in 0..n / 3 {
                    let value = if i == at / 3 { TERM } else { "plain" };
                    text.push_str(&format!(
                        "Package: pkg{i}\nStatus: install ok installed\n Note: {value}\n\n"
                    ));
                }
                (text, "Package: pkg33")
            }
        }
    }

    /// Whatever the kind, a unit holding a rare exact term the query names is kept, with its
    /// nearest structural context (the record, heading, header row or definition it is in).
    #[test]
    fn a_rare_query_term_is_kept_with_its_context_in_every_kind() {
        let counter = TokenCounter::default();
        for kind in [
            ContentKind::Json,
            ContentKind::Diff,
            ContentKind::Html,
            ContentKind::Log,
            ContentKind::Csv,
            ContentKind::Markdown,
            ContentKind::Code,
            ContentKind::Config,
            ContentKind::Yaml,
            ContentKind::Xml,
            ContentKind::Text,
        ] {
            let (text, context) = sample(kind);
            let query = format!("what is set to {TERM}?");
            let hints = Hints::new().with_query(&query);
            let out = extract_with_stats(&text, &hints, 250, &counter);
            assert_eq!(
                out.stats.kind, kind,
                "{kind}: detected as {}",
                out.stats.kind
            );
            assert!(out.text.contains(TERM), "{kind}: term lost:\n{}", out.text);
            assert!(
                out.text.contains(context),
                "{kind}: context {context:?} lost:\n{}",
                out.text
            );
        }
    }
}
