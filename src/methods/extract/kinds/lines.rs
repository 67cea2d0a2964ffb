//! Command output, plain text and source code: one unit per line, with the line it is nested
//! under (by indentation or tree drawing) as its context.

use std::collections::HashMap;

use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{self, Doc, Field, FieldValue, Level, Template, Unit};
use crate::methods::extract::kinds::line_records::{
    are_headed_fields, field_name, first_word, record_key,
};
use crate::methods::extract::kinds::report_lines::{
    is_compiler_context, is_diagnostic_head, is_failed_test, is_horizontal_rule,
    is_located_message, is_pytest_error, is_run_tally,
};

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
/// The prior of a run's or a checker's tally (`3 failed, 97 passed`, `Found 57 errors in 6
/// files`): above any one failure's, as it is the one line that says how many there are.
const TALLY_PRIOR: f32 = 6.0;
/// How many last lines of a text may hold the rule over its summary.
const SUMMARY_LINES: usize = 4;
/// Added to the lines under a rule at the end of a text.
const SUMMARY_PRIOR: f32 = 2.0;

pub(crate) fn build(text: &str, style: Style) -> Doc<'_> {
    build_pieces(text, style, doc::lines(text))
}

/// As [`build`], with `text` cut into the pieces `lines` yields (its lines, or for markup its
/// lines with each wrapped start tag whole) rather than into lines.
pub(crate) fn build_pieces(
    text: &str,
    style: Style,
    lines: impl Iterator<Item = std::ops::Range<usize>>,
) -> Doc<'_> {
    let record_key = match style {
        Style::Text => record_key(text),
        Style::Code => None,
    };
    let headed_fields = style == Style::Text && record_key.is_none() && are_headed_fields(text);
    let mut units: Vec<Unit> = Vec::with_capacity(doc::line_count(text));
    // Open scopes: (indentation, unit) of lines that later, deeper lines are nested under.
    let mut scopes: Vec<(usize, usize)> = Vec::new();
    let mut block: u32 = 0;
    let mut blank_before = false;
    let mut record_root: Option<usize> = None;
    // A `dir:` line of `ls -lR` (or any unindented `name:` line after a blank): the lines
    // under it up to the next blank line are its entries.
    let mut heading: Option<usize> = None;
    let mut since_error: Option<usize> = None;
    // Whether the last line was an error that ends by introducing its detail (node's
    // `AssertionError: Expected values to be strictly equal:`, a blank line, then `'-3i' !==
    // '3i'`): the blank line after it does not end the detail.
    let mut error_introduces = false;
    // Whether the next line is that detail, set apart by a blank line: it is the error's
    // message, as much as the error's first line is.
    let mut introduced_detail = false;
    // The error line a located message below it concludes (Cython's `Error compiling Cython
    // file:` over a snippet, then `path:12:5: Cannot assign …`).
    let mut unconcluded_error: Option<usize> = None;
    // gcc's `file.c: In function ‘f’:` line: the function the diagnostics under it are in.
    let mut compiler_context: Option<usize> = None;
    // Whether the line before was indented: an unindented line after indented ones starts the
    // next record of an output without blank lines (a GC log's pause and its details).
    let mut previous_indented = false;
    let mut after_diagnostic_head = false;
    let mut lines = lines.peekable();
    while let Some(span) = lines.next() {
        let line = &text[span.clone()];
        let underlined = lines
            .peek()
            .is_some_and(|next| is_solid_rule(&text[next.clone()]));
        let outdented = |line: &str| previous_indented && doc::indent_of(line) == 0;
        let trimmed = line.trim();
        if trimmed.is_empty() {
            blank_before = true;
            heading = None;
            // Diagnostics are separated by blank lines: an error's detail ends there, unless
            // the error has just said its detail follows.
            if error_introduces {
                introduced_detail = true;
            } else {
                since_error = None;
            }
            unconcluded_error = None;
            after_diagnostic_head = false;
            continue;
        }
        let diagnostic = style == Style::Text && is_diagnostic_head(line);
        // rustc's `--> src/lib.rs:888:13` under a diagnostic's first line says where it is.
        // The unit this line is the location of, and whether it is that unit's message.
        let (location_of, concludes_error) = if after_diagnostic_head && trimmed.starts_with("--> ")
        {
            (Some(units.len() - 1), false)
        } else if style == Style::Text && is_located_message(line) {
            let head = unconcluded_error.take();
            (head, head.is_some())
        } else {
            (None, false)
        };
        after_diagnostic_head = diagnostic;
        let starts_record = record_key.is_some_and(|key| first_word(line) == Some(key))
            || (headed_fields
                && !line.starts_with(char::is_whitespace)
                && field_name(line).is_none());
        if starts_record {
            scopes.clear();
            block += 1;
            record_root = Some(units.len());
            // A record's own lines are under it, not under a heading before it.
            heading = None;
        } else if (blank_before && record_key.is_none())
            || diagnostic
            || (style == Style::Text && record_key.is_none() && outdented(line))
        {
            // A compiler or linter diagnostic is one block with its snippet and notes.
            block += 1;
        }
        let opens_heading = style == Style::Text
            && !starts_record
            && (blank_before || units.is_empty())
            && (is_heading(line) || (underlined && !is_solid_rule(line)));
        blank_before = false;
        let indent = doc::indent_of(line);
        previous_indented = indent > 0;
        while scopes.last().is_some_and(|&(i, _)| i >= indent) {
            scopes.pop();
        }
        // A location stands where its diagnostic's context stood, and becomes its context: a
        // kept diagnostic keeps its location, and its location's score stays its own.
        let parent = if let Some(head) = location_of {
            let context = units[head].parent;
            units[head].parent = Some(units.len()).into();
            context.get()
        } else {
            scopes.last().map(|&(_, u)| u).or(if starts_record {
                None
            } else if diagnostic {
                compiler_context.or(heading).or(record_root)
            } else {
                heading.or(record_root)
            })
        };
        let index = units.len();
        if style == Style::Text && is_compiler_context(line) {
            compiler_context = Some(index);
        }
        if opens_heading {
            heading = Some(index);
        }
        if !is_closing(trimmed) {
            scopes.push((indent, index));
        }
        let level = if style == Style::Text
            && (is_pytest_error(line) || is_failed_test(line) || concludes_error)
        {
            Level::Error
        } else {
            doc::level_from_words(line)
        };
        let mut prior = match (style, level) {
            // A test run's tally (`273 passing (430ms)`, `11 failing`) answers "how many".
            (Style::Text, _) if is_run_tally(line) => TALLY_PRIOR,
            (Style::Text, Level::Error) => 3.0,
            (Style::Text, _) if introduced_detail => 3.0,
            (Style::Text, Level::Warn) => 1.0,
            (Style::Code, _) if is_definition(trimmed) => 1.0,
            // A search hit that is a definition answers "where is it defined".
            (Style::Text, _) if grep_content(line).is_some_and(|c| is_definition(c.trim())) => 1.5,
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
            // A located warning (`file:12:3: warning: …`) has its snippet below it too.
            if level == Level::Error || (level == Level::Warn && diagnostic) {
                since_error = Some(0);
            }
            if level == Level::Error && !diagnostic && !concludes_error {
                unconcluded_error = Some(index);
            }
            error_introduces = level == Level::Error && trimmed.ends_with(':');
            introduced_detail = false;
        }
        units.push(Unit {
            span: span.into(),
            parent: parent.into(),
            block: Some(block),
            template: Some(doc::template_of(line)),
            prior,
            level,
            weight: 1,
            ..Unit::default()
        });
    }
    if style == Style::Text {
        // The first line is often a header, the last one a summary ("N passed", "error: …");
        // not when it is one more record of a repeated shape (the first pause of a GC log).
        let repeated = |unit: &Unit| {
            let template = unit.template;
            units
                .iter()
                .filter(|u| u.template == template)
                .nth(2)
                .is_some()
        };
        let first_header = units.first().is_some_and(|u| !repeated(u));
        let last_summary = units.last().is_some_and(|u| !repeated(u));
        if first_header && let Some(first) = units.first_mut() {
            first.prior += 1.5;
        }
        if last_summary && let Some(last) = units.last_mut() {
            last.prior += 1.5;
        }
        // A horizontal rule near the end sets the run's summary apart (pylint's
        // `Your code has been rated at 8.16/10` under its dashes): the lines below it are
        // what "how did it go" asks for.
        let tail = units.len().saturating_sub(SUMMARY_LINES)..units.len();
        let rule = tail
            .rev()
            .find(|&u| is_horizontal_rule(&text[units[u].span.range()]));
        if let Some(rule) = rule {
            for unit in &mut units[rule + 1..] {
                unit.prior += SUMMARY_PRIOR;
            }
        }
    }
    let fields = match style {
        Style::Text => numeric_fields(text, &units),
        Style::Code => Vec::new(),
    };
    Doc {
        kind: match style {
            Style::Text => ContentKind::Text,
            Style::Code => ContentKind::Code,
        },
        source: text.into(),
        units,
        overview: None,
        noun: "lines",
        fields,
        fuller: Default::default(),
    }
}

/// Lines of one template (the same words, other numbers) are records of one kind: a GC pause,
/// a `du` entry, a table row. The k-th number of each is a field, so that the longest pause
/// and the largest file stand out as the extremes of their column.
fn numeric_fields(text: &str, units: &[Unit]) -> Vec<Field> {
    /// Fewer lines than this are not a column worth comparing.
    const MIN_RECORDS: usize = 5;
    /// Numbers past this many in one line are ignored (a hex dump is not a record).
    const MAX_NUMBERS: usize = 8;
    // Most lines of command output are one of a kind: count templates first, and read
    // numbers only from lines whose template repeats enough to make a column.
    let mut repeats: HashMap<Template, usize> = HashMap::new();
    for template in units.iter().filter_map(|u| u.template) {
        *repeats.entry(template).or_default() += 1;
    }
    let mut columns: HashMap<(Template, usize), Field> = HashMap::new();
    for (u, unit) in units.iter().enumerate() {
        let Some(template) = unit
            .template
            .filter(|t| repeats.get(t).is_some_and(|&n| n >= MIN_RECORDS))
        else {
            continue;
        };
        let numbers = tokens(&text[unit.span.range()])
            .filter(|token| token.bytes().any(|b| b.is_ascii_digit()))
            .filter_map(doc::parse_quantity)
            .take(MAX_NUMBERS);
        for (k, value) in numbers.enumerate() {
            columns
                .entry((template, k))
                .or_default()
                .push(u, FieldValue::Number(value));
        }
    }
    // Only columns of mostly distinct values (sizes, durations) have extremes worth reading;
    // a column of a few repeated values (a count, an exit code) would only add noise.
    let mostly_distinct = |values: &Field| {
        let mut bits: Vec<u64> = values
            .iter()
            .map(|(_, v)| match v {
                FieldValue::Number(x) => x.to_bits(),
                FieldValue::Category(h) => h,
            })
            .collect();
        bits.sort_unstable();
        bits.dedup();
        bits.len() * 2 > values.len()
    };
    let mut columns: Vec<_> = columns
        .into_iter()
        .filter(|(_, values)| values.len() >= MIN_RECORDS && mostly_distinct(values))
        .collect();
    columns.sort_unstable_by_key(|(key, _)| *key);
    columns.into_iter().map(|(_, values)| values).collect()
}

/// The pieces of `line` between whitespace, `=` and `|`, where a number of a column sits
/// (`size=4096`, `| 12 +++`). Split by bytes when the line is ASCII, as most are.
fn tokens(line: &str) -> impl Iterator<Item = &str> {
    let separates = |c: char| c.is_whitespace() || c == '=' || c == '|';
    let (ascii, unicode) = if line.is_ascii() {
        (
            Some(line.as_bytes().split(move |&b| separates(char::from(b)))),
            None,
        )
    } else {
        (None, Some(line.split(separates)))
    };
    let from_bytes = ascii.into_iter().flatten().map(move |piece| {
        // A piece of an ASCII line: its offset in the line is a character boundary.
        let at = piece.as_ptr() as usize - line.as_ptr() as usize;
        &line[at..at + piece.len()]
    });
    from_bytes.chain(unicode.into_iter().flatten())
}

/// An unindented `name:` line that heads what follows: a directory in `ls -lR`, a section
/// of a report, a thread of a debugger's backtraces (`Thread 5 (Thread 0x7f… (LWP 25204) "relay"):`).
/// Sentences ending in a colon have spaces; these do not, or are short.
fn is_heading(line: &str) -> bool {
    /// A heading with spaces has at most this many words.
    const MAX_HEADING_WORDS: usize = 8;
    let Some(name) = line.strip_suffix(':') else {
        return false;
    };
    !line.starts_with(char::is_whitespace)
        && !name.is_empty()
        && (!name.contains(' ') || name.split_whitespace().count() <= MAX_HEADING_WORDS)
}

/// Whether `line` is a rule under a title (`────`, `====`): one unbroken run of a rule's
/// character. A table's header is ruled column by column, with spaces between.
fn is_solid_rule(line: &str) -> bool {
    let rule = line.trim_end();
    // Most lines fail at their first character.
    rule.chars()
        .all(|c| matches!(c, '-' | '=' | '─' | '━' | '═'))
        && rule.chars().nth(2).is_some()
}

/// The matched text of a `grep -n` line (`path:line:text`).
fn grep_content(line: &str) -> Option<&str> {
    let (path, rest) = line.split_once(':')?;
    if path.is_empty() || path.contains(' ') {
        return None;
    }
    let (number, content) = rest.split_once(':')?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())).then_some(content)
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
        "sub ",
    ];
    KEYWORDS.iter().any(|k| trimmed.starts_with(k))
        || (trimmed.ends_with('{') && trimmed.contains(": function"))
        || [
            "pub(crate) fn ",
            "pub(super) fn ",
            "pub(crate) struct ",
            "pub const fn ",
        ]
        .iter()
        .any(|k| trimmed.starts_with(k))
}

#[cfg(test)]
mod tests;
