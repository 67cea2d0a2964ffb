//! Lists of flat records in block YAML (`- regex: '…'` items, each a few `key: value` lines:
//! a parser's rules, a changelog's entries, a catalogue's packages), read as records whose
//! fields are their own lines. A fact quoted from YAML keeps YAML's own quoting
//! (`model_replacement: 'Tablet 7" 4G'`); the same record rendered as JSON reads
//! `"model_replacement":"Tablet 7\" 4G"` and no longer holds it. A tree of settings (a
//! cluster's objects, deep under each item) is not such a list, and goes the JSON way.

use std::ops::Range;

use super::records::{Layout, LineField, LineRecord, LineRecords, trimmed};
use crate::methods::extract::doc;

/// Items a sequence needs to be a list of records rather than a few settings.
const MIN_RECORDS: usize = 5;
/// The share of a list's lines (in percent) that must be its records' own fields: the rest
/// are nested values and continuation lines. A tree under each item falls short.
const MIN_FIELD_LINE_SHARE: usize = 60;
/// The share of the document's non-blank lines (in percent) the records must cover.
const MIN_COVERED_SHARE: usize = 60;
/// Keys longer than this are prose, not a field's name.
const MAX_KEY_BYTES: usize = 64;

/// One non-blank, non-comment line: its span in the text and its indentation.
struct Line {
    span: Range<usize>,
    indent: usize,
}

/// The flat record lists of block YAML `text`, as one list of records in source order, or
/// `None` when they do not cover most of it or are trees rather than records.
pub(crate) fn flat_lists(text: &str) -> Option<LineRecords> {
    let lines: Vec<Line> = doc::lines(text)
        .filter_map(|span| {
            let line = &text[span.clone()];
            let content = line.trim_start_matches(' ');
            (!content.trim().is_empty() && !content.starts_with('#')).then(|| Line {
                indent: line.len() - content.len(),
                span,
            })
        })
        .collect();
    let mut records = Vec::new();
    let (mut covered, mut field_lines) = (0usize, 0usize);
    let mut at = 0;
    while at < lines.len() {
        let Some(list) = sequence_at(text, &lines, at) else {
            at += 1;
            continue;
        };
        let end = list.last().map_or(at, |item| item.end);
        let parsed: Vec<LineRecord> = list
            .iter()
            .filter_map(|item| record(text, &lines[item.clone()]))
            .collect();
        let lines_in = end - at;
        let fields: usize = parsed
            .iter()
            .map(|r| {
                let mut spans: Vec<_> = r.fields.iter().map(|f| f.line.start).collect();
                spans.dedup();
                spans.len()
            })
            .sum();
        if parsed.len() == list.len() && fields * 100 >= lines_in * MIN_FIELD_LINE_SHARE {
            covered += lines_in;
            field_lines += fields;
            records.extend(parsed);
            at = end;
        } else {
            // Not a list of flat records here: its items may hold one.
            at += 1;
        }
    }
    (field_lines > 0 && covered * 100 >= lines.len() * MIN_COVERED_SHARE).then_some(LineRecords {
        layout: Layout::Lines,
        header: None,
        records,
        footer: None,
    })
}

/// The items of the sequence whose first item is `lines[at]`, each as a range of `lines`,
/// when it has [`MIN_RECORDS`] items or more and `lines[at]` starts it (no item of the same
/// sequence is just above).
fn sequence_at(text: &str, lines: &[Line], at: usize) -> Option<Vec<Range<usize>>> {
    let indent = lines[at].indent;
    let is_item_at =
        |i: usize| lines[i].indent == indent && is_item(&text[lines[i].span.clone()][indent..]);
    if !is_item_at(at) {
        return None;
    }
    // The first item: an earlier line at this indent or less ends any sequence above.
    if let Some(above) = (0..at).rev().find(|&i| lines[i].indent <= indent)
        && is_item_at(above)
    {
        return None;
    }
    let mut items = Vec::new();
    let mut start = at;
    let mut i = at + 1;
    loop {
        if i == lines.len()
            || lines[i].indent < indent
            || (lines[i].indent == indent && !is_item_at(i))
        {
            items.push(start..i);
            break;
        }
        if is_item_at(i) {
            items.push(start..i);
            start = i;
        }
        i += 1;
    }
    (items.len() >= MIN_RECORDS).then_some(items)
}

fn is_item(content: &str) -> bool {
    content.starts_with("- ")
}

/// One item's record: its first line's `- key: value` and each later line at the same
/// content indent a field; deeper lines continue the field above. `None` when the item is
/// not a map (`- plain value`) or a line at the content indent is no field.
fn record(text: &str, lines: &[Line]) -> Option<LineRecord> {
    let first = lines.first()?;
    let line = &text[first.span.clone()];
    let after_dash = &line[first.indent + 1..];
    let content_indent = first.indent + 1 + (after_dash.len() - after_dash.trim_start().len());
    let mut fields = vec![field(text, first.span.clone(), content_indent)?];
    for l in &lines[1..] {
        if l.indent == content_indent {
            fields.push(field(text, l.span.clone(), content_indent)?);
        } else if l.indent > content_indent {
            fields.last_mut()?.more.push(l.span.clone());
        } else {
            return None;
        }
    }
    Some(LineRecord { fields })
}

/// The field of `span`, whose key starts at byte `from` of its line: a plain key, `:`, then a
/// space and its value or the end of the line.
fn field(text: &str, span: Range<usize>, from: usize) -> Option<LineField> {
    let line = &text[span.clone()];
    let content = line.get(from..)?;
    let colon = content
        .match_indices(':')
        .map(|(i, _)| i)
        .find(|&i| content[i + 1..].is_empty() || content[i + 1..].starts_with(' '))?;
    let key = &content[..colon];
    let plain = !key.is_empty()
        && key.len() <= MAX_KEY_BYTES
        && !key.starts_with(['-', '[', '{', '#', '&', '*', '!', '|', '>', '?'])
        && key.split(' ').count() <= 3;
    if !plain {
        return None;
    }
    let key_start = span.start + from;
    Some(LineField {
        key: key_start..key_start + colon,
        value: trimmed(text, key_start + colon + 1..span.end),
        line: span,
        more: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(count: usize) -> String {
        let mut text = String::from("# Rules, most specific first.\nrules:\n");
        for i in 0..count {
            text.push_str(&format!(
                "  - regex: '(Tab{i}) Build'\n    model: 'Tab {i}\" LTE'\n    brand: 'Acme'\n"
            ));
        }
        text
    }

    #[test]
    fn a_list_of_flat_maps_is_records_of_their_own_lines() {
        let text = rules(6);
        let list = flat_lists(&text).unwrap();
        assert_eq!(list.records.len(), 6);
        let fields = &list.records[2].fields;
        assert_eq!(&text[fields[0].line.clone()], "  - regex: '(Tab2) Build'");
        assert_eq!(&text[fields[1].key.clone()], "model");
        assert_eq!(&text[fields[1].value.clone()], "'Tab 2\" LTE'");
    }

    #[test]
    fn several_lists_and_nested_values_are_read() {
        let mut text = rules(5);
        text.push_str("devices:\n");
        for i in 0..5 {
            text.push_str(&format!(
                "- name: dev{i}\n  tags:\n    - a\n  note: >\n    folded\n"
            ));
        }
        let list = flat_lists(&text).unwrap();
        assert_eq!(list.records.len(), 10);
        let tags = &list.records[7].fields[1];
        assert_eq!(&text[tags.key.clone()], "tags");
        assert_eq!(tags.more.len(), 1);
    }

    #[test]
    fn items_that_are_trees_of_settings_are_not_flat_records() {
        let mut text = String::from("items:\n");
        for i in 0..6 {
            text.push_str(&format!(
                "- metadata:\n    name: app{i}\n    labels:\n      tier: web\n  spec:\n    replicas: 2\n    template:\n      image: app:{i}\n"
            ));
        }
        assert!(flat_lists(&text).is_none());
    }

    #[test]
    fn a_rule_the_query_names_is_kept_in_yamls_own_quoting() {
        use crate::TokenCounter;
        use crate::methods::extract::{Hints, extract_with_stats};
        let text = rules(400);
        let hints = Hints::new().with_query("Which model does the Tab217 code map to?");
        let out = extract_with_stats(&text, &hints, 300, &TokenCounter::default()).text;
        assert!(out.contains("model: 'Tab 217\" LTE'"), "{out}");
    }

    #[test]
    fn a_few_items_are_settings_not_records() {
        assert!(flat_lists(&rules(3)).is_none());
    }
}
