//! Markdown (and the text HTML is turned into): headings frame sections; paragraphs, list items
//! and code-block lines are the units, each with its heading as context.

use std::borrow::Cow;

use crate::methods::extract::detect::{ContentKind, is_setext_underline};
use crate::methods::extract::doc::{self, Doc, Level, Unit};

/// A paragraph longer than this is cut into pieces at sentence ends, so a match keeps its
/// sentence and not a whole page-long paragraph.
const MAX_PARAGRAPH_BYTES: usize = 480;
/// The same for a block of text made from HTML, which is one paragraph on one line: a page's
/// paragraphs are dense, and a match should keep its sentence rather than its neighbours.
const MAX_BLOCK_LINE_BYTES: usize = 200;
/// Lines of a fenced code block per unit.
const CODE_LINES_PER_UNIT: usize = 2;

pub(crate) fn build(source: Cow<'_, str>, kind: ContentKind) -> Doc<'_> {
    // Text made from HTML has one block element (a `<p>`, a `<dd>`) per line: each line is a
    // paragraph of its own, not the wrapped continuation of the one above.
    let units = cut(&source, kind == ContentKind::Html);
    Doc {
        kind,
        source,
        units,
        overview: None,
        noun: "lines",
        fields: Vec::new(),
        fuller: Default::default(),
    }
}

fn cut(text: &str, line_per_block: bool) -> Vec<Unit> {
    let spans = doc::line_spans(text);
    let mut units: Vec<Unit> = Vec::with_capacity(spans.len() / 2 + 1);
    // Open headings: (level, unit).
    let mut headings: Vec<(usize, usize)> = Vec::new();
    let mut section: u32 = 0;
    let mut in_fence = false;
    // Lines of code, not comments, in the open unit of a code block.
    let mut code_lines = 0;
    // The paragraph being gathered: its unit index, if one is open.
    let mut open: Option<usize> = None;
    let mut i = 0;
    while i < spans.len() {
        let span = spans[i].clone();
        let line = &text[span.clone()];
        let trimmed = line.trim();
        let heading_parent = headings.last().map(|&(_, u)| u);
        if is_fence(trimmed, in_fence) && (in_fence || closes_later(text, &spans[i + 1..])) {
            in_fence = !in_fence;
            open = None;
            i += 1;
            continue;
        }
        if in_fence {
            if !trimmed.is_empty() {
                // A comment says what the line under it is (`// Retry a failed fetch`
                // over `retry: boolean = true;`): it opens a unit the line joins.
                let comment = super::code::is_comment(trimmed) || trimmed.starts_with("<!--");
                let joins = if comment {
                    code_lines == 0
                } else {
                    code_lines < CODE_LINES_PER_UNIT
                };
                match open {
                    Some(u) if joins => {
                        units[u].span.set_end(span.end);
                        units[u].weight += 1;
                    }
                    _ => {
                        units.push(content_unit(span, heading_parent, section, line));
                        open = Some(units.len() - 1);
                        code_lines = 0;
                    }
                }
                code_lines += usize::from(!comment);
            }
            i += 1;
            continue;
        }
        if trimmed.is_empty() {
            open = None;
            i += 1;
            continue;
        }
        if let Some((level, end)) = heading_at(text, &spans, i) {
            while headings.last().is_some_and(|&(l, _)| l >= level) {
                headings.pop();
            }
            section += 1;
            let parent = headings.last().map(|&(_, u)| u);
            units.push(Unit {
                span: (span.start..spans[end].end).into(),
                parent: parent.into(),
                block: Some(section),
                prior: match level {
                    1 => 3.0,
                    2 => 2.5,
                    3 => 2.0,
                    _ => 1.5,
                },
                weight: (end - i + 1) as u32,
                ..Unit::default()
            });
            headings.push((level, units.len() - 1));
            open = None;
            i = end + 1;
            continue;
        }
        let starts_item = is_list_item(trimmed);
        match open {
            Some(u)
                if !starts_item
                    && !line_per_block
                    && span.end - units[u].span.start() <= MAX_PARAGRAPH_BYTES =>
            {
                units[u].span.set_end(span.end);
                units[u].weight += 1;
                if units[u].level < doc::level_from_words(line) {
                    units[u].level = doc::level_from_words(line);
                }
            }
            _ => {
                let max = if line_per_block {
                    MAX_BLOCK_LINE_BYTES
                } else {
                    MAX_PARAGRAPH_BYTES
                };
                // Each sentence of a long paragraph is a unit, with its own words' level: an
                // error named in one sentence says nothing of the others.
                for piece in sentences(text, span.clone(), max) {
                    let sentence = &text[piece.clone()];
                    units.push(content_unit(piece, heading_parent, section, sentence));
                }
                open = Some(units.len() - 1);
            }
        }
        i += 1;
    }
    for unit in &mut units {
        if unit.level == Level::Error && unit.prior == 0.0 {
            // Prose mentions errors in passing; they count, but less than in a log.
            unit.prior = 1.0;
        }
    }
    units
}

fn content_unit(
    span: std::ops::Range<usize>,
    parent: Option<usize>,
    section: u32,
    line: &str,
) -> Unit {
    Unit {
        span: span.into(),
        parent: parent.into(),
        block: Some(section),
        // The same line again (`use std::process::Command;` atop every example) is a repeat.
        template: Some(doc::template_of(line)),
        level: doc::level_from_words(line),
        weight: 1,
        ..Unit::default()
    }
}

/// A heading starting at line `i`: its level and its last line.
fn heading_at(text: &str, spans: &[std::ops::Range<usize>], i: usize) -> Option<(usize, usize)> {
    let line = text[spans[i].clone()].trim_end();
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    if (1..=6).contains(&hashes) && line[hashes..].starts_with(' ') {
        return Some((hashes, i));
    }
    if let Some(next) = spans.get(i + 1) {
        let next = &text[next.clone()];
        if !is_list_item(line.trim()) && is_setext_underline(next) && !line.trim().is_empty() {
            return Some((if next.trim().starts_with('=') { 1 } else { 2 }, i + 1));
        }
    }
    // An HTML heading inside markdown: `<h3 name="x">`, its text, `</h3>`.
    let lower = line.trim_start().as_bytes();
    if lower.len() >= 3
        && lower[0] == b'<'
        && (lower[1] | 0x20) == b'h'
        && (b'1'..=b'6').contains(&lower[2])
    {
        let level = (lower[2] - b'0') as usize;
        let close = format!("</h{level}>");
        let end = (i..spans.len().min(i + 4))
            .find(|&j| text[spans[j].clone()].to_ascii_lowercase().contains(&close))
            .unwrap_or(i);
        return Some((level, end));
    }
    None
}

/// Whether `trimmed` opens a fenced code block (or, `in_fence`, closes one). A line that
/// starts with backticks and has more of them later is inline code (```` ```Fanotify``` struct
/// ````), not a fence: an opening fence's info string holds no backtick. A closing fence
/// with text after it still closes (```` ``` (#2642) ````), as its writer meant.
fn is_fence(trimmed: &str, in_fence: bool) -> bool {
    if trimmed.starts_with("~~~") {
        return true;
    }
    let Some(rest) = trimmed.strip_prefix("```") else {
        return false;
    };
    in_fence || !rest.trim_start_matches('`').contains('`')
}

/// Whether a fence opened before `rest` closes in it. A fence that never closes is a line
/// of prose quoting a command between backticks (restic's changelog: "``` restic -r … init"
/// on one line, "/srv/restic-repo ```" ending the next), not a block running to the end.
fn closes_later(text: &str, rest: &[std::ops::Range<usize>]) -> bool {
    rest.iter()
        .any(|span| is_fence(text[span.clone()].trim(), true))
}

fn is_list_item(trimmed: &str) -> bool {
    if trimmed.starts_with("- ") || trimmed.starts_with("* ") || trimmed.starts_with("+ ") {
        return true;
    }
    let digits = trimmed.bytes().take_while(|b| b.is_ascii_digit()).count();
    digits > 0 && digits < 4 && trimmed[digits..].starts_with(". ")
}

/// `span` cut at sentence ends into pieces of at most about `max` bytes.
fn sentences(text: &str, span: std::ops::Range<usize>, max: usize) -> Vec<std::ops::Range<usize>> {
    if span.len() <= max {
        return vec![span];
    }
    let mut pieces = Vec::new();
    let mut start = span.start;
    let bytes = text.as_bytes();
    let mut last_end = None;
    let mut i = span.start;
    while i + 1 < span.end {
        if matches!(bytes[i], b'.' | b'!' | b'?') && bytes[i + 1] == b' ' {
            last_end = Some(i + 1);
            // A sentence end once the piece is long enough, or the last one before the limit.
            if (i + 1).saturating_sub(start) >= max / 2 {
                pieces.push(start..i + 1);
                start = i + 2;
                last_end = None;
            }
        } else if i.saturating_sub(start) >= max
            && let Some(end) = last_end.take()
        {
            pieces.push(start..end);
            start = end + 1;
        }
        i += 1;
    }
    if start < span.end {
        pieces.push(start..span.end);
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The heading `line` of the Markdown `text` sits under.
    fn heading_of(text: &str, line: &str) -> Option<String> {
        let doc = build(text.into(), ContentKind::Markdown);
        let item = doc.units.iter().position(|u| text[u.span.range()] == *line);
        let parent = item.and_then(|i| doc.units[i].parent.get());
        parent.map(|p| doc.text(p).to_owned())
    }

    #[test]
    fn content_has_its_heading_as_context() {
        let text = "# Title\n\nintro\n\n## Part\n\n- item one\n- item two\n";
        assert_eq!(heading_of(text, "- item two").as_deref(), Some("## Part"));
    }

    #[test]
    fn inline_triple_backticks_open_no_code_block() {
        // A changelog quoting names in triple backticks, and a fence closed with a link after.
        let text = "## 0.29.0\n\n- Exposed a method for\n  ```nix::Fanotify``` struct\n- Example:\n  ```\n  let x = 1;\n  ``` (#2642)\n\n## 0.27.0\n\n- The MSRV is now 1.65\n";
        assert_eq!(
            heading_of(text, "- The MSRV is now 1.65").as_deref(),
            Some("## 0.27.0")
        );
    }

    #[test]
    fn setext_and_html_headings_are_headings() {
        let text = "2.20.0 (2018-10-18)\n-------------------\n\n- fix\n\n<h3 name=\"x\">\nWhy?\n</h3>\n\nBecause.\n";
        let doc = build(text.into(), ContentKind::Markdown);
        let parents: Vec<Option<&str>> = doc
            .units
            .iter()
            .filter(|u| u.prior == 0.0)
            .map(|u| u.parent.get().map(|p| doc.text(p)))
            .collect();
        assert_eq!(
            parents,
            [
                Some("2.20.0 (2018-10-18)\n-------------------"),
                Some("<h3 name=\"x\">\nWhy?\n</h3>")
            ]
        );
    }

    #[test]
    fn a_fence_that_never_closes_is_a_line_of_prose() {
        // A changelog quoting a command between backticks over two lines, then a release.
        let text = "Changelog for tool 0.14.0\n=========================\n\n * Change #1: use\n   ``` tool -r /srv/repo init\n   /srv/repo ```\n\nChangelog for tool 0.11.0\n=========================\n\n * Enh #340: Add VSS support\n";
        let doc = build(text.into(), ContentKind::Markdown);
        let vss = (0..doc.units.len())
            .find(|&u| doc.text(u).contains("VSS"))
            .unwrap();
        let parent = doc.units[vss].parent.get().map(|p| doc.text(p));
        assert_eq!(
            parent,
            Some("Changelog for tool 0.11.0\n=========================")
        );
        // A fence that closes is still a block.
        let doc = build(
            "# A\n\n```\n# not a heading\n```\n".into(),
            ContentKind::Markdown,
        );
        assert_eq!(doc.units.iter().filter(|u| u.prior > 0.0).count(), 1);
    }

    #[test]
    fn each_line_of_text_from_html_is_its_own_paragraph() {
        // rustdoc: a method's summary and its note are two `<p>`s, so two lines.
        let html = "<h4>pub fn output(&amp;mut self)</h4><p>Executes the command as a child process, waiting for it to finish and collecting all of its output.</p>\n<p>By default, stdout and stderr are captured (and used to provide the resulting output). Stdin is not inherited from the parent and any attempt by the child process to read from the stdin stream will result in the stream immediately closing.</p>";
        let text = super::super::html::to_text(html);
        let doc = build(text.as_str().into(), ContentKind::Html);
        let texts: Vec<&str> = (0..doc.units.len()).map(|i| doc.text(i)).collect();
        assert!(texts.contains(&"By default, stdout and stderr are captured (and used to provide the resulting output)."), "{texts:?}");
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("Stdin is not inherited"))
        );
        assert!(
            texts
                .iter()
                .any(|t| t.starts_with("Executes the command") && !t.contains("By default"))
        );
    }

    #[test]
    fn long_paragraphs_are_cut_at_sentence_ends() {
        let text = "Word word word. ".repeat(100);
        let doc = build(text.as_str().into(), ContentKind::Markdown);
        assert!(doc.units.len() > 2);
        assert!(
            doc.units
                .iter()
                .all(|u| u.span.len() <= MAX_PARAGRAPH_BYTES + 1)
        );
        assert!(doc.text(0).ends_with('.'));
    }

    #[test]
    fn each_sentence_of_a_long_paragraph_has_its_own_level() {
        let text = format!(
            "Both versions are shipped with the library. {}The older one prints an error \
             message when a method is missing. {}",
            "The newer one is faster on every platform it supports today. ".repeat(7),
            "Either reads the same configuration files at start-up. ".repeat(12),
        );
        let doc = build(text.as_str().into(), ContentKind::Markdown);
        assert!(doc.units.len() > 2);
        for (u, unit) in doc.units.iter().enumerate() {
            let error = doc.text(u).contains("error");
            assert_eq!(unit.level == Level::Error, error, "{}", doc.text(u));
        }
    }

    #[test]
    fn a_comment_in_a_code_block_opens_the_unit_of_the_line_it_explains() {
        let text = "## Options\n\n```ts\ninterface Settings {\n  // Retry a failed fetch\n  retry: boolean = true;\n  // Cache what was fetched\n  cache: boolean = false;\n  /* Where results go\n   * when given */\n  target?: string;\n}\n```\n";
        let doc = build(text.into(), ContentKind::Markdown);
        let texts: Vec<&str> = (0..doc.units.len()).map(|u| doc.text(u)).collect();
        assert!(
            texts.contains(&"  // Retry a failed fetch\n  retry: boolean = true;"),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"  // Cache what was fetched\n  cache: boolean = false;"),
            "{texts:?}"
        );
        assert!(
            texts.contains(&"  /* Where results go\n   * when given */\n  target?: string;\n}"),
            "{texts:?}"
        );
    }
}
