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
        (ContentKind::Csv, _) => csv::build(text),
        (ContentKind::Markdown, _) => markdown::build(text.into(), ContentKind::Markdown),
        (ContentKind::Html, _) => markdown::build(html::to_text(text).into(), ContentKind::Html),
        (ContentKind::Code, _) => code::build(text, query),
        (ContentKind::Diff, _) => diff::build(text, query),
        (ContentKind::Config, _) => super::tree::build_sections(text, query),
        // XML and YAML read as a tree go the JSON way, under their own name.
        (ContentKind::Xml | ContentKind::Yaml, Some(tree)) => Doc {
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
    doc.units = units;
}
