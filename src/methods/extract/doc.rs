//! The common shape every kind of output is turned into: a source text cut into units.
//!
//! A unit is the smallest piece the compressor keeps or leaves out whole: a log entry, a
//! paragraph, a CSV row, a JSON record. Units point into one source text (the input itself for
//! line-based kinds, a rendering of it for HTML and JSON), so kept units are emitted as the exact
//! bytes they were.

use std::borrow::Cow;
use std::ops::Range;

use super::detect::ContentKind;
pub(crate) use super::field::{Field, FieldValue};
pub(crate) use severity::{is_exception_name, is_tap_result, level_from_words};

mod severity;

/// How severe a unit is, from its log level or the words in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub(crate) enum Level {
    #[default]
    None,
    Debug,
    Info,
    Warn,
    Error,
}

impl Level {
    /// The name used in omission markers.
    pub(crate) fn label(self) -> Option<&'static str> {
        match self {
            Level::None => None,
            Level::Debug => Some("DEBUG"),
            Level::Info => Some("INFO"),
            Level::Warn => Some("WARN"),
            Level::Error => Some("ERROR"),
        }
    }
}

/// One piece of the source that is kept or omitted whole.
///
/// 40 bytes: a log of short lines has a unit for every 40 or so bytes of input, so the unit's
/// size is what a log's peak memory grows with. Offsets and indices are 32-bit (a source is
/// far below 4 GiB: `[limits] max_input_bytes`), and optional ones keep `None` in the same
/// bytes.
#[derive(Debug, Clone, Default)]
pub(crate) struct Unit {
    /// Where the unit's text is in [`Doc::source`], without its trailing newline.
    pub(crate) span: Span,
    /// Units with the same template (numbers and ids masked) are repeats of one another.
    pub(crate) template: Option<Template>,
    /// A unit that gives this one its context (a heading, a parent line, a record's schema):
    /// kept whenever this one is.
    pub(crate) parent: Link,
    /// Units of one small block (a section, a commit, a paragraph) share part of their best
    /// score, so a match pulls in the rest of what it belongs to.
    pub(crate) block: Option<u32>,
    /// Importance without any query: errors, rare templates, headings, extremes.
    pub(crate) prior: f32,
    /// How many lines, rows or items the unit stands for, for omission markers.
    pub(crate) weight: u32,
    /// Structure that frames the whole (a schema, a header row): chosen before anything else.
    pub(crate) pinned: bool,
    /// Severity.
    pub(crate) level: Level,
}

/// A template: a hash, never 0, so that an absent one takes no room of its own.
pub(crate) type Template = std::num::NonZeroU64;

/// `hash` as a [`Template`] (0, one hash in 2^64, shares the template of 1).
pub(crate) fn template_id(hash: u64) -> Template {
    Template::new(hash).unwrap_or(Template::MIN)
}

/// A byte range of the source in 8 bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Span {
    start: u32,
    end: u32,
}

impl Span {
    /// The range as it indexes the source.
    pub(crate) fn range(self) -> Range<usize> {
        self.start as usize..self.end as usize
    }

    /// Where the range starts.
    pub(crate) fn start(self) -> usize {
        self.start as usize
    }

    /// Where the range ends (exclusive).
    pub(crate) fn end(self) -> usize {
        self.end as usize
    }

    /// How many bytes the range holds.
    pub(crate) fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    /// Moves the end, to take in what follows (a continuation line).
    pub(crate) fn set_end(&mut self, end: usize) {
        self.end = offset(end);
    }
}

impl From<Range<usize>> for Span {
    fn from(range: Range<usize>) -> Self {
        Span {
            start: offset(range.start),
            end: offset(range.end),
        }
    }
}

/// A source offset or unit index in 32 bits. Sources are cut at `[limits] max_input_bytes`,
/// far below 4 GiB; should one still reach it, this panics and [`super::extract_with_stats`]
/// answers with a truncation, as for any panic of the compressor.
pub(super) fn offset(n: usize) -> u32 {
    u32::try_from(n).expect("a source under 4 GiB")
}

/// An optional unit index in 4 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Link(u32);

impl Link {
    /// The unit linked to, if any.
    pub(crate) fn get(self) -> Option<usize> {
        (self.0 != u32::MAX).then_some(self.0 as usize)
    }
}

impl Default for Link {
    fn default() -> Self {
        Link(u32::MAX)
    }
}

impl From<Option<usize>> for Link {
    fn from(unit: Option<usize>) -> Self {
        unit.map_or(Link::default(), |u| Link(offset(u)))
    }
}

/// A text cut into units, ready to score and fill.
#[derive(Debug)]
pub(crate) struct Doc<'a> {
    pub(crate) kind: ContentKind,
    /// The text the units point into.
    pub(crate) source: Cow<'a, str>,
    /// Units in source order, without overlaps.
    pub(crate) units: Vec<Unit>,
    /// A one-line overview of the whole (counts, levels), emitted first when it fits.
    pub(crate) overview: Option<String>,
    /// What a unit's weight counts, for omission markers ("lines", "rows", "items").
    pub(crate) noun: &'static str,
    /// Field values of record-like units (CSV rows, JSON records), for rarity and extremes.
    pub(crate) fields: Vec<Field>,
    /// Fuller renderings of some units (a table row's whole record), for the room left when
    /// every unit fits.
    pub(crate) fuller: Fuller,
}

impl Doc<'_> {
    /// The text of unit `i`.
    pub(crate) fn text(&self, i: usize) -> &str {
        &self.source[self.units[i].span.range()]
    }

    /// A block id no unit has yet: where a rule that groups units starts numbering its own.
    pub(crate) fn next_block(&self) -> u32 {
        self.units.iter().filter_map(|u| u.block).max().unwrap_or(0) + 1
    }

    /// Whether a blank line stands between unit `u` and the one before it (units skip blank
    /// lines); never before the first.
    pub(crate) fn blank_line_before(&self, u: usize) -> bool {
        u > 0
            && self.source[self.units[u - 1].span.end()..self.units[u].span.start()]
                .matches('\n')
                .count()
                > 1
    }
}

/// Fuller renderings of some units, kept apart from the source so that nothing which reads the
/// units' text (the query's exact terms, rarity) sees them: a unit made compact to fit many of
/// its siblings (a record cut to a row of a table) can be shown this way instead when the
/// whole document fits and leaves room.
#[derive(Debug, Default)]
pub(crate) struct Fuller {
    text: String,
    /// Unit index and where its fuller rendering is in `text`, by unit.
    units: Vec<(u32, Span)>,
}

impl Fuller {
    /// Records `text` as the fuller rendering of `unit`, which comes after every unit recorded
    /// so far.
    pub(crate) fn push(&mut self, unit: usize, text: &str) {
        let start = self.text.len();
        self.text.push_str(text);
        self.units
            .push((offset(unit), (start..self.text.len()).into()));
    }

    /// The fuller rendering of `unit`, if it has one.
    pub(crate) fn get(&self, unit: usize) -> Option<&str> {
        let unit = u32::try_from(unit).ok()?;
        let i = self.units.binary_search_by_key(&unit, |&(u, _)| u).ok()?;
        Some(&self.text[self.units[i].1.range()])
    }

    /// Whether no unit has a fuller rendering.
    pub(crate) fn is_empty(&self) -> bool {
        self.units.is_empty()
    }

    /// Follows a renumbering of the units (`new_index[old]`).
    pub(crate) fn renumber(&mut self, new_index: &[usize]) {
        for (unit, _) in &mut self.units {
            *unit = offset(new_index[*unit as usize]);
        }
    }
}

/// Byte ranges of the lines of `text`, without their line terminators.
pub(crate) fn line_spans(text: &str) -> Vec<Range<usize>> {
    lines(text).collect()
}

/// The lines of `text` one at a time, as [`line_spans`] lists them: a builder that walks them
/// once holds no list of them (16 bytes a line, a third of a short log line's size).
pub(crate) fn lines(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let bytes = text.as_bytes();
    let mut start = 0;
    std::iter::from_fn(move || {
        if start >= bytes.len() {
            return None;
        }
        let (end, next) = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(i) => (start + i, start + i + 1),
            None => (bytes.len(), bytes.len()),
        };
        let trimmed = if next > end && end > start && bytes[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        let span = start..trimmed;
        start = next;
        Some(span)
    })
}

/// How many lines `text` has, as [`lines`] yields them: the room to reserve for one unit each.
pub(crate) fn line_count(text: &str) -> usize {
    let newlines = text.bytes().filter(|&b| b == b'\n').count();
    newlines + usize::from(!text.is_empty() && !text.ends_with('\n'))
}

/// A hash of `line` with every word that holds a digit masked, so that repeats of one log
/// statement with other numbers, ids and timestamps share it. Markup and assignments inside a
/// word (`<key>1.2</key>`, `key=42`, `"id":7`) are split at their punctuation first, so that
/// only the value is masked and two fields stay two templates.
pub(crate) fn template_of(line: &str) -> Template {
    let mut masked = Masked::default();
    for word in line.split_ascii_whitespace() {
        let bytes = word.as_bytes();
        let (mut digit, mut structure) = (false, false);
        for &b in bytes {
            digit |= b.is_ascii_digit();
            structure |= IS_STRUCTURE[b as usize];
        }
        if !digit {
            masked.push(bytes);
        } else if !structure {
            masked.push(b"#");
        } else {
            // Mask each piece between punctuation that holds a digit; keep the punctuation.
            let mut start = 0;
            let mut piece_digit = false;
            for (i, &b) in bytes.iter().enumerate() {
                if IS_STRUCTURE[b as usize] {
                    masked.push(if piece_digit { b"#" } else { &bytes[start..i] });
                    masked.push(&bytes[i..=i]);
                    start = i + 1;
                    piece_digit = false;
                } else {
                    piece_digit |= b.is_ascii_digit();
                }
            }
            masked.push(if piece_digit { b"#" } else { &bytes[start..] });
        }
        masked.push(b" ");
    }
    masked.digest()
}

/// A line's masked text on its way into the hasher, gathered on the stack so that the many
/// small pieces of a line cost one hasher update.
struct Masked {
    hasher: xxhash_rust::xxh3::Xxh3,
    buf: [u8; 256],
    len: usize,
}

impl Default for Masked {
    fn default() -> Self {
        Masked {
            hasher: xxhash_rust::xxh3::Xxh3::new(),
            buf: [0; 256],
            len: 0,
        }
    }
}

impl Masked {
    fn push(&mut self, bytes: &[u8]) {
        if self.len + bytes.len() > self.buf.len() {
            self.hasher.update(&self.buf[..self.len]);
            self.len = 0;
            if bytes.len() > self.buf.len() {
                self.hasher.update(bytes);
                return;
            }
        }
        self.buf[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    fn digest(mut self) -> Template {
        self.hasher.update(&self.buf[..self.len]);
        template_id(self.hasher.digest())
    }
}

/// The punctuation that separates a field's name from its value inside one word: markup
/// (`<a>1</a>`), assignments (`a=1`, `"a":1`) and lists. Not `/`: a path with a version in
/// it (`pkg-1.2/src/a.py`) is one masked word.
static IS_STRUCTURE: [bool; 256] = {
    let mut table = [false; 256];
    let marks = b"<>=:\"',;()[]{}";
    let mut i = 0;
    while i < marks.len() {
        table[marks[i] as usize] = true;
        i += 1;
    }
    table
};

/// A number as a tool prints a size or duration: `42`, `0.3874752`, `4.0K`, `2.5M`, `1.2G`,
/// `12ms`, `1,204,330`; binary and decimal size suffixes scale it, so `900K` < `2.5M` as it
/// should.
pub(crate) fn parse_quantity(token: &str) -> Option<f64> {
    let token = token.trim_matches(|c: char| "[](),;:=\"'".contains(c));
    let token = &*without_thousands_separators(token);
    let digits_end = token
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-' || c == '+'))
        .unwrap_or(token.len());
    let (number, suffix) = token.split_at(digits_end);
    if !number.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let scale = match suffix {
        "" | "B" | "s" | "ms" | "us" | "ns" | "%" => 1.0,
        "K" | "k" | "KB" | "KiB" | "kB" => 1e3,
        "M" | "MB" | "MiB" => 1e6,
        "G" | "GB" | "GiB" => 1e9,
        "T" | "TB" | "TiB" => 1e12,
        _ => return None,
    };
    // Durations in different units would compare wrongly; bring them to seconds.
    let scale = match suffix {
        "ms" => 1e-3,
        "us" => 1e-6,
        "ns" => 1e-9,
        _ => scale,
    };
    number
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .map(|n| n * scale)
}

/// `number` without the commas that group its thousands ("7,000 feet", "1,250,000"), as
/// English writes a large bound and many tools a count; any other comma is left, and the
/// number is then no number.
pub(crate) fn without_thousands_separators(number: &str) -> Cow<'_, str> {
    // Most tokens hold no comma: one scan tells.
    if !number.contains(',') {
        return Cow::Borrowed(number);
    }
    let (whole, fraction) = number.split_at(number.find('.').unwrap_or(number.len()));
    let mut groups = whole.split(',');
    let first = groups.next().unwrap_or_default();
    let grouped = whole.contains(',')
        && (1..=3).contains(&first.len())
        && first.bytes().all(|b| b.is_ascii_digit())
        && groups.all(|g| g.len() == 3 && g.bytes().all(|b| b.is_ascii_digit()));
    if grouped {
        Cow::Owned(format!("{}{fraction}", whole.replace(',', "")))
    } else {
        Cow::Borrowed(number)
    }
}

/// The longest runs of `bytes` whose every byte is a `member` (a line's words, its digit
/// groups), in order.
pub(crate) fn byte_runs(
    bytes: &[u8],
    member: fn(&u8) -> bool,
) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() && !member(&bytes[i]) {
            i += 1;
        }
        let start = i;
        while i < bytes.len() && member(&bytes[i]) {
            i += 1;
        }
        (start < i).then_some(start..i)
    })
}

/// Leading whitespace and tree-drawing characters, in characters: how deep a line is nested.
pub(crate) fn indent_of(line: &str) -> usize {
    line.chars()
        .take_while(|c| matches!(c, ' ' | '\t' | '│' | '├' | '└' | '─' | '┬' | '|' | '`'))
        .map(|c| if c == '\t' { 4 } else { 1 })
        .sum()
}

#[cfg(test)]
mod tests;
