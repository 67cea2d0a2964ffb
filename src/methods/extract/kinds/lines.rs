//! Command output, plain text and source code: one unit per line, with the line it is nested
//! under (by indentation or tree drawing) as its context.

use std::collections::HashMap;

use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{self, Doc, Level, Unit};

/// How lines are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    /// Command output and plain text: error lines and what follows them matter, the first and
    /// last lines frame the output.
    Text,
    /// Source code: definitions frame the file; error words are ordinary identifiers.
    Code,
}

/// How many lines after an error line are treated as its detail (location, cause).
const ERROR_CONTEXT_LINES: usize = 6;

pub(crate) fn build(text: &str, style: Style) -> Doc<'_> {
    let spans = doc::line_spans(text);
    let record_key = match style {
        Style::Text => record_key(text, &spans),
        Style::Code => None,
    };
    let mut units: Vec<Unit> = Vec::with_capacity(spans.len());
    // Open scopes: (indentation, unit) of lines that later, deeper lines are nested under.
    let mut scopes: Vec<(usize, usize)> = Vec::new();
    let mut block: u32 = 0;
    let mut blank_before = false;
    let mut record_root: Option<usize> = None;
    let mut since_error: Option<usize> = None;
    for span in spans {
        let line = &text[span.clone()];
        let trimmed = line.trim();
        if trimmed.is_empty() {
            blank_before = true;
            // Diagnostics are separated by blank lines: an error's detail ends there.
            since_error = None;
            continue;
        }
        let starts_record = record_key.is_some_and(|key| first_word(line) == Some(key));
        if starts_record {
            scopes.clear();
            block += 1;
            record_root = Some(units.len());
        } else if blank_before && record_key.is_none() {
            block += 1;
        }
        blank_before = false;
        let indent = doc::indent_of(line);
        while scopes.last().is_some_and(|&(i, _)| i >= indent) {
            scopes.pop();
        }
        let parent =
            scopes
                .last()
                .map(|&(_, u)| u)
                .or(if starts_record { None } else { record_root });
        let index = units.len();
        if !is_closing(trimmed) {
            scopes.push((indent, index));
        }
        let level = doc::level_from_words(line);
        let mut prior = match (style, level) {
            (Style::Text, Level::Error) => 3.0,
            (Style::Text, Level::Warn) => 1.0,
            (Style::Code, _) if is_definition(trimmed) => 1.0,
            _ => 0.0,
        };
        // The lines right after an error usually say where and why.
        if style == Style::Text {
            if let Some(d) = since_error.as_mut() {
                *d += 1;
                if *d <= ERROR_CONTEXT_LINES {
                    prior += 2.0 * (1.0 - *d as f32 / (ERROR_CONTEXT_LINES + 1) as f32);
                }
            }
            if level == Level::Error {
                since_error = Some(0);
            }
        }
        units.push(Unit {
            span,
            parent,
            block: Some(block),
            template: Some(doc::template_of(line)),
            prior,
            level,
            weight: 1,
            ..Unit::default()
        });
    }
    if style == Style::Text {
        // The first line is often a header, the last one a summary ("N passed", "error: …").
        if let Some(first) = units.first_mut() {
            first.prior += 1.5;
        }
        if let Some(last) = units.last_mut() {
            last.prior += 1.5;
        }
    }
    Doc {
        kind: match style {
            Style::Text => ContentKind::Text,
            Style::Code => ContentKind::Code,
        },
        source: text.into(),
        units,
        overview: None,
        noun: "lines",
        fields: Vec::new(),
    }
}

/// The word that starts each record of a record-per-paragraph output (`commit` in `git log`,
/// `Package:` in `dpkg -s`): the first word of the first line, when it starts at least three
/// unindented lines.
fn record_key<'t>(text: &'t str, spans: &[std::ops::Range<usize>]) -> Option<&'t str> {
    let first_line = spans
        .iter()
        .map(|s| &text[s.clone()])
        .find(|l| !l.trim().is_empty())?;
    let key = first_word(first_line)?;
    if !key
        .chars()
        .all(|c| c.is_alphabetic() || c == ':' || c == '-' || c == '_')
    {
        return None;
    }
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for span in spans {
        if let Some(w) = first_word(&text[span.clone()]) {
            *counts.entry(w).or_default() += 1;
        }
    }
    (counts.get(key).copied().unwrap_or(0) >= 3).then_some(key)
}

/// The first word of an unindented line.
fn first_word(line: &str) -> Option<&str> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    line.split_whitespace().next()
}

/// A line that only closes a scope is nobody's context.
fn is_closing(trimmed: &str) -> bool {
    trimmed.starts_with(['}', ')', ']']) || trimmed == "end" || trimmed.starts_with("*/")
}

/// A line that defines a function, type or module: the map of a source file.
pub(crate) fn is_definition(trimmed: &str) -> bool {
    const KEYWORDS: &[&str] = &[
        "fn ",
        "pub fn ",
        "pub(crate) fn ",
        "async fn ",
        "pub async fn ",
        "impl ",
        "impl<",
        "struct ",
        "pub struct ",
        "enum ",
        "pub enum ",
        "trait ",
        "pub trait ",
        "mod ",
        "pub mod ",
        "def ",
        "async def ",
        "class ",
        "function ",
        "async function ",
        "export function ",
        "export class ",
        "export default ",
        "interface ",
        "func ",
        "type ",
    ];
    KEYWORDS.iter().any(|k| trimmed.starts_with(k))
        || (trimmed.ends_with('{') && trimmed.contains(": function"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_lines_have_their_parent_as_context() {
        let text = "root@1\n├─┬ a@1\n│ └── b@2\n└── c@3\n";
        let doc = build(text, Style::Text);
        assert_eq!(doc.units[2].parent, Some(1));
        assert_eq!(doc.units[1].parent, Some(0));
        assert_eq!(doc.units[3].parent, Some(0));
    }

    #[test]
    fn records_start_at_their_key_word() {
        let text = "commit a\nDate: x\n\n    msg a\n\ncommit b\nDate: y\n\n    msg b\n\ncommit c\n";
        let doc = build(text, Style::Text);
        // "msg b" is nested under "Date: y", which belongs to "commit b".
        assert_eq!(doc.units[5].parent.map(|p| doc.text(p)), Some("Date: y"));
        assert_eq!(
            doc.units[5].parent.and_then(|p| doc.units[p].parent),
            Some(3)
        );
        assert_eq!(doc.units[5].block, doc.units[3].block);
    }

    #[test]
    fn lines_after_an_error_gain_priority() {
        let text = "ok\nerror[E0308]: mismatched types\n  --> src/a.rs:1:2\nok\n";
        let doc = build(text, Style::Text);
        assert!(doc.units[2].prior > 0.0);
        assert!(doc.units[1].prior >= 3.0);
    }
}
