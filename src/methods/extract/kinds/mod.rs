//! One module per kind of output, each cutting its text into [`Doc`] units that fit the kind.

use std::borrow::Cow;

use super::detect::ContentKind;
use super::doc::{Doc, Field, FieldValue, Unit};
use super::query::Query;
use super::window::{self, Windows};

/// Added to the lines of a configuration block the query names (see [`super::tree::braces`]).
const NAMED_BLOCK_PRIOR: f32 = 4.0;

pub(crate) mod access;
pub(crate) mod code;
pub(crate) mod csv;
pub(crate) mod diff;
pub(crate) mod html;
pub(crate) mod json;
pub(crate) mod line_records;
pub(crate) mod lines;
pub(crate) mod log;
pub(crate) mod markdown;
pub(crate) mod notebook;
pub(crate) mod report_lines;
mod search_hits;

/// Whether `doc`, built from a text detected as `detected`, is a reader's view of it rather
/// than the text's own lines: a notebook read as its document (see [`notebook`]).
pub(crate) fn is_reader_view(detected: ContentKind, doc: &Doc<'_>) -> bool {
    detected == ContentKind::Json && doc.kind == ContentKind::Markdown
}

/// `text` as lines of plain text, the blocks the query names (`[section]`, `name {`) weighed
/// up: what a text of no kind condense reads otherwise is cut into.
fn text_lines<'a>(text: &'a str, query: Option<&Query>) -> Doc<'a> {
    // Markup keeps each wrapped start tag whole.
    let markup = super::tree::looks_like_xml(text);
    let mut doc = if markup {
        lines::build_pieces(text, lines::Style::Text, super::tree::tag_lines(text))
    } else {
        lines::build(text, lines::Style::Text)
    };
    search_hits::group_hits(&mut doc);
    super::tree::group_listed_values(&mut doc, query);
    if let Some(query) = query {
        super::tree::raise_named_setting_runs(&mut doc, query);
        if markup {
            super::tree::weigh_named_elements(&mut doc, query);
        } else {
            super::tree::weigh_named_manual_items(&mut doc, query);
            super::tree::weigh_named_terms(&mut doc, query);
        }
        let comment: Vec<bool> = (0..doc.units.len())
            .map(|u| code::is_comment(doc.text(u).trim()))
            .collect();
        super::tree::braces::weigh_named_blocks(&mut doc, &comment, query, NAMED_BLOCK_PRIOR);
    }
    super::tree::weigh_documented_options(&mut doc, query);
    doc
}

/// Cuts `text` of kind `kind` into units. `json` is the value detection already parsed, if any
/// (a large document is not parsed whole, and is walked from its text);
/// `max_unit_bytes` bounds any one unit so that no single piece can crowd out the rest.
pub(crate) fn build<'a>(
    text: &'a str,
    kind: ContentKind,
    json: Option<serde_json::Value>,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'a> {
    // Whether the doc's long strings were windowed where they were rendered (the JSON way).
    let mut rendered_as_json = matches!(kind, ContentKind::Json | ContentKind::JsonLines);
    let mut doc = match (kind, json) {
        // A notebook is read as the document its reader sees (see `notebook`).
        (ContentKind::Json, Some(value)) if notebook::is_notebook(&value) => {
            rendered_as_json = false;
            markdown::build(notebook::to_text(&value).into(), ContentKind::Markdown)
        }
        (ContentKind::Json, Some(value)) => json::build_parsed(text, &value, query, max_unit_bytes),
        (ContentKind::Json, None) => match notebook::may_be_notebook(text)
            .then(|| json::parse_value(text))
            .flatten()
            .filter(notebook::is_notebook)
        {
            Some(value) => {
                rendered_as_json = false;
                markdown::build(notebook::to_text(&value).into(), ContentKind::Markdown)
            }
            None => json::build_document(text, query, max_unit_bytes),
        },
        (ContentKind::JsonLines, _) => json::build_lines(text, query, max_unit_bytes),
        (ContentKind::Log, _) => log::build(text),
        // Stanzas and aligned tables read as a list of records keep their own lines.
        (ContentKind::Text | ContentKind::Csv, Some(_)) => {
            super::tree::build_line_records(text, kind, query)
                .unwrap_or_else(|| lines::build(text, lines::Style::Text))
        }
        (ContentKind::Csv, _) => match query {
            Some(query) => csv::project_wide_rows(csv::build(text), query),
            None => csv::build(text),
        },
        (ContentKind::Markdown, _) => {
            let mut doc = markdown::build(text.into(), ContentKind::Markdown);
            if let Some(query) = query {
                super::tree::weigh_named_terms(&mut doc, query);
            }
            doc
        }
        (ContentKind::Html, _) => {
            let readable = html::to_text(text);
            if html::is_app_shell(text, &readable) {
                text_lines(text, query)
            } else {
                markdown::build(readable.into(), ContentKind::Html)
            }
        }
        (ContentKind::Code, _) => code::build(text, query),
        (ContentKind::Diff, _) => diff::build(text, query),
        (ContentKind::Config, _) => {
            let mut doc = super::tree::build_sections(text, query);
            super::tree::weigh_documented_options(&mut doc, query);
            doc
        }
        // An XML list of records keeps its own bytes (start tags and child elements), and so
        // do YAML lists of flat records (their lines); any other tree read from XML or YAML
        // goes the JSON way, under its own name.
        (ContentKind::Xml | ContentKind::Yaml, Some(tree)) => {
            let verbatim = if kind == ContentKind::Xml {
                super::tree::build_xml_records(text, query)
            } else {
                super::tree::build_yaml_records(text, query)
            };
            verbatim.unwrap_or_else(|| {
                rendered_as_json = true;
                Doc {
                    kind,
                    ..json::build_value(&tree, query, max_unit_bytes)
                }
            })
        }
        _ => text_lines(text, query),
    };
    // Files a concatenation of them names lead it, whatever their content (a configuration
    // file kind reads its own headers).
    if let Some(query) = query
        && matches!(
            kind,
            ContentKind::Text | ContentKind::Code | ContentKind::Log
        )
    {
        super::tree::weigh_named_files(&mut doc, query);
    }
    if let Some(query) = query
        && !query.ranked.is_empty()
        && matches!(kind, ContentKind::Text | ContentKind::Log)
    {
        // Columns of the whole listing rank its rows where the fields of repeated line
        // templates (rows whose names differ are templates of their own) cover few of them.
        let longest = doc.fields.iter().map(|f| f.len()).max().unwrap_or(0);
        let columns = token_columns(&doc);
        if columns.iter().any(|c| c.len() > 2 * longest) {
            doc.fields.extend(columns);
        }
    }
    let query_for_windows = query.filter(|_| !rendered_as_json);
    split_oversized(&mut doc, max_unit_bytes, query_for_windows);
    doc
}

/// The numeric columns of a listing (`ls -l`, `dpkg-deb -c`, `du`, `ps`): the k-th
/// whitespace-separated token of each line, where nearly every line has a number there (a
/// size, a count; `2025-01-03` and `11:15` are not numbers), named by the word of a header
/// line above at that place (see [`listing_header`]). A query that asks for the largest or
/// smallest then finds its extremes (see `extremes`).
fn token_columns(doc: &Doc<'_>) -> Vec<Field> {
    /// Tokens looked at per line: a listing's numbers come first, its names last; an access
    /// log's status, size and duration follow its address, time and request.
    const MAX_TOKENS: usize = 12;
    /// Lines needed for a column to be worth ranking.
    const MIN_LINES: usize = 8;
    let header = listing_header(doc);
    let mut columns: Vec<Field> = (0..MAX_TOKENS)
        .map(|k| {
            let name = header.as_ref().and_then(|(_, names)| names.get(k).copied());
            Field::default().with_name(name.unwrap_or_default())
        })
        .collect();
    let mut lines = 0;
    for (u, unit) in doc.units.iter().enumerate() {
        // The lines down to the header are a title or a report's settings, not rows.
        if unit.pinned || unit.weight == 0 || header.as_ref().is_some_and(|(h, _)| u <= *h) {
            continue;
        }
        let text = doc.text(u);
        // A rule of dashes above a totals line is no row of its own.
        let first_line = text
            .lines()
            .find(|l| !log::is_rule_of_dashes(l))
            .unwrap_or("");
        lines += 1;
        for (k, token) in cell_tokens(first_line).take(MAX_TOKENS).enumerate() {
            if let Some(n) = super::doc::parse_quantity(token) {
                columns[k].push(u, FieldValue::Number(n));
            }
        }
    }
    columns
        .into_iter()
        .filter(|c| lines >= MIN_LINES && c.len() * 10 >= lines * 9)
        .collect()
}

/// The whitespace-separated tokens of a line, where a quoted text (`"GET /a HTTP/1.1"`) or
/// a bracketed one (`[27/Nov/2026:17:26:57 +0000]`) is one token: the fields of an access log
/// after its request and time then sit at the same place on every line.
pub(super) fn line_tokens(line: &str) -> impl Iterator<Item = &str> {
    let mut rest = line.trim_start();
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let close = match rest.as_bytes()[0] {
            b'"' => Some('"'),
            b'[' => Some(']'),
            _ => None,
        };
        let end = close
            .and_then(|c| rest[1..].find(c).map(|i| i + 2))
            .filter(|&end| rest[end..].is_empty() || rest[end..].starts_with(char::is_whitespace))
            .unwrap_or_else(|| rest.find(char::is_whitespace).unwrap_or(rest.len()));
        let token = &rest[..end];
        rest = rest[end..].trim_start();
        Some(token)
    })
}

/// The cells of a listing's row: its [`line_tokens`], where a parenthesised group after a
/// cell (`1,204,330 (12.51%)`, `7 ( 0.30%)`) annotates it and takes no place of its own, so
/// that a cell with its share and a bare `0` beside it sit at the same place on every row.
fn cell_tokens(line: &str) -> impl Iterator<Item = &str> {
    let mut tokens = line_tokens(line);
    let mut first = true;
    std::iter::from_fn(move || {
        loop {
            let token = tokens.next()?;
            if std::mem::take(&mut first) || !token.starts_with('(') {
                return Some(token);
            }
            // Skip the annotation through its closing parenthesis.
            let mut closing = token;
            while !closing.ends_with(')') {
                closing = tokens.next()?;
            }
        }
    })
}

/// The header of a listing (`ps aux`'s `USER PID %CPU %MEM …`, `unzip -lv`'s `Length Method
/// Size …`, `pidstat -h`'s `# Time UID PID …`): among its first lines, one of at least three
/// words and no number, the last such before the first row with a number (a rule of dashes may
/// sit between; the first line may be a title with numbers). A report that gives its settings
/// and totals before its table (a profiler's) frames the table's header with rules of dashes:
/// a header-like line right above a rule, further down, is the header too. Returns its unit
/// and its words (without a leading `#`), which name the columns below it.
fn listing_header<'d>(doc: &'d Doc<'_>) -> Option<(usize, Vec<&'d str>)> {
    /// Lines from the top a header may sit at (after a title, a blank, an `Archive:` line).
    const MAX_HEADER_LINE: usize = 6;
    /// Lines from the top a header framed by a rule may sit at, past a report's settings.
    const MAX_FRAMED_HEADER_LINE: usize = 40;
    // A head unit may hold several lines (a title, the header, its rule).
    let lines: Vec<(usize, &str)> = (0..doc.units.len())
        .flat_map(|u| doc.text(u).lines().map(move |line| (u, line)))
        .filter(|(_, line)| !line.trim().is_empty())
        .take(MAX_FRAMED_HEADER_LINE + 1)
        .collect();
    let mut header: Option<(usize, Vec<&str>)> = None;
    let mut rows_begun = false;
    for (nth, &(u, line)) in lines.iter().enumerate() {
        let mut tokens: Vec<&str> = line.split_whitespace().collect();
        // A commented header (`# Time UID PID`) names the columns after its `#`.
        if tokens.first() == Some(&"#") {
            tokens.remove(0);
        }
        let has_number = tokens
            .iter()
            .any(|t| super::doc::parse_quantity(t).is_some());
        // The first line may be a title with numbers in it (`Linux 6.1.0 (host) … (2 CPU)`);
        // any later line with numbers is a row, and the header, if any, is above it.
        if !rows_begun && nth > MAX_HEADER_LINE {
            // No row came up in the first lines: no header above them names anything.
            header = None;
            rows_begun = true;
        }
        rows_begun |= has_number && nth > 0;
        let words = tokens
            .iter()
            .filter(|t| t.starts_with(|c: char| c.is_alphabetic() || c == '%'))
            .count();
        let header_like = tokens.len() >= 3 && !has_number && words * 2 > tokens.len();
        let framed = || {
            lines
                .get(nth + 1)
                .is_some_and(|(_, l)| log::is_rule_of_dashes(l))
        };
        if header_like && (!rows_begun || framed()) {
            header = Some((u, tokens));
        }
    }
    header
}

/// Cuts units longer than `max_bytes`, so that one huge line (minified code, a log line with a
/// payload, a pasted blob) can neither be the only thing that fits nor never fit at all.
///
/// When the query's terms sit past such a unit's head, its first piece is its windowed form
/// (see [`window`]): the head, which holds its context (a timestamp, a key, a row's first
/// cells), and a window around each match, marked off by ` … `. The rest of the unit, between
/// and after the windows, is cut blind into pieces that are still there to fill the budget.
/// Otherwise the unit is cut blind whole, the first piece carrying its weight.
///
/// `query` is `None` for a doc rendered the JSON way: its long strings have their windows
/// already, where they are rendered (`json`).
fn split_oversized(doc: &mut Doc<'_>, max_bytes: usize, query: Option<&Query>) {
    let max_bytes = max_bytes.max(64);
    if doc.units.iter().all(|u| u.span.len() <= max_bytes) {
        return;
    }
    let windowed: Vec<(usize, Windows)> = match query {
        Some(query) => doc
            .units
            .iter()
            .enumerate()
            .filter(|(_, u)| u.span.len() > max_bytes)
            .filter_map(|(i, u)| {
                window::find(&doc.source[u.span.range()], max_bytes, query, window::UNIT)
                    .map(|w| (i, w))
            })
            .collect(),
        None => Vec::new(),
    };
    let (new_source, forms) = with_forms(&doc.source, &doc.units, &windowed);
    let source: &str = new_source.as_deref().unwrap_or(&doc.source);
    // Parents refer to unit indices; keep a map from old to new index for them.
    let mut units = Vec::with_capacity(doc.units.len() + 16);
    let mut new_index = Vec::with_capacity(doc.units.len());
    let mut windowed = windowed.iter().zip(&forms).peekable();
    // How far the units from here on moved in the new source: the forms inserted before them.
    let mut shift = 0;
    for (i, unit) in doc.units.drain(..).enumerate() {
        new_index.push(units.len());
        if unit.span.len() <= max_bytes {
            let range = unit.span.range();
            units.push(Unit {
                span: (range.start + shift..range.end + shift).into(),
                ..unit
            });
            continue;
        }
        let range = unit.span.range();
        match windowed.next_if(|((w, _), _)| *w == i) {
            Some(((_, windows), form)) => {
                units.push(Unit {
                    span: form.clone().into(),
                    ..unit.clone()
                });
                shift = form.end + 1 - range.start;
                let rest = &Unit {
                    weight: 0,
                    template: None,
                    ..unit
                };
                let base = range.start;
                let mut from = base + windows.head_end;
                for &(w_from, w_to) in &windows.spans {
                    let gap = from + shift..base + w_from + shift;
                    blind_pieces(source, gap, max_bytes, rest, &mut units);
                    from = base + w_to;
                }
                let tail = from + shift..range.end + shift;
                blind_pieces(source, tail, max_bytes, rest, &mut units);
            }
            None => {
                let first = units.len();
                let span = range.start + shift..range.end + shift;
                let rest = Unit {
                    weight: 0,
                    template: None,
                    ..unit.clone()
                };
                blind_pieces(source, span.clone(), max_bytes, &rest, &mut units);
                if units.len() == first {
                    // Nothing but whitespace: the unit stays one, as it was.
                    units.push(Unit {
                        span: span.into(),
                        ..unit
                    });
                } else {
                    units[first].weight = unit.weight;
                    units[first].template = unit.template;
                }
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
    if let Some(source) = new_source {
        doc.source = Cow::Owned(source);
    }
}

/// The source with each windowed unit's form inserted before the unit, on a line of its own,
/// and where each form is in it; the source as it is (`None`) when no unit has windows.
fn with_forms(
    source: &str,
    units: &[Unit],
    windowed: &[(usize, Windows)],
) -> (Option<String>, Vec<std::ops::Range<usize>>) {
    if windowed.is_empty() {
        return (None, Vec::new());
    }
    let rendered: Vec<String> = windowed
        .iter()
        .map(|(i, windows)| windows.render(&source[units[*i].span.range()]))
        .collect();
    let extra: usize = rendered.iter().map(|form| form.len() + 1).sum();
    let mut out = String::with_capacity(source.len() + extra);
    let mut forms = Vec::with_capacity(windowed.len());
    let mut copied = 0;
    for ((i, _), form) in windowed.iter().zip(&rendered) {
        let range = units[*i].span.range();
        out.push_str(&source[copied..range.start]);
        let start = out.len();
        out.push_str(form);
        forms.push(start..out.len());
        out.push('\n');
        copied = range.start;
    }
    out.push_str(&source[copied..]);
    (Some(out), forms)
}

/// Pushes `span` of `source` cut into pieces of at most `max_bytes` (at whitespace within the
/// last quarter when there is some), each a copy of `unit` but for its span; pieces start on a
/// visible character.
fn blind_pieces(
    source: &str,
    span: std::ops::Range<usize>,
    max_bytes: usize,
    unit: &Unit,
    units: &mut Vec<Unit>,
) {
    let (mut start, end) = (span.start, span.end);
    let skip_space = |mut at: usize| {
        while at < end && source.as_bytes()[at].is_ascii_whitespace() {
            at += 1;
        }
        at
    };
    start = skip_space(start);
    while start < end {
        let mut cut = crate::tokens::floor_char_boundary(source, (start + max_bytes).min(end));
        if cut < end {
            // Back up to whitespace within the last quarter, if there is some.
            if let Some(ws) = source[start..cut].rfind(|c: char| c.is_whitespace())
                && ws > max_bytes * 3 / 4
            {
                cut = start + ws;
            }
        }
        if cut <= start {
            cut = crate::tokens::ceil_char_boundary(source, start + 1);
        }
        units.push(Unit {
            span: (start..cut).into(),
            ..unit.clone()
        });
        // Pieces start on a visible character: the whitespace at a cut is not emitted.
        start = skip_space(cut);
    }
}

#[cfg(test)]
mod tests;
