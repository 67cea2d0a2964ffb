//! CSV, TSV and drawn tables (`sqlite3 .mode table`, psql, MySQL, markdown): the header row
//! frames the table; each row is a unit; every column's values feed rarity and extremes (the
//! slowest run, the one odd count). The border lines of a drawn table are not rows.

use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{self, Doc, Field, FieldValue, Unit};
use crate::methods::extract::query::Query;
use crate::methods::extract::terms::for_each_word;

/// A line that only draws a table's frame: `+-----+----+`, `|---|:--|`, `------+------`.
pub(crate) fn is_border(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 3
        && t.contains(['-', '=', '─', '━'])
        && t.chars().all(|c| {
            matches!(
                c,
                '-' | '='
                    | '+'
                    | '|'
                    | ':'
                    | ' '
                    | '─'
                    | '━'
                    | '┼'
                    | '├'
                    | '┤'
                    | '┌'
                    | '┐'
                    | '└'
                    | '┘'
                    | '┬'
                    | '┴'
                    | '│'
            )
        })
}

/// At most this many lines may stand above a table's header: a title or a line of counts
/// (`569,30,malignant,benign` above scikit-learn's breast cancer table).
const MAX_PREAMBLE_LINES: usize = 2;

/// Whether every comma of `line` sits inside parentheses.
fn commas_all_in_parentheses(line: &str) -> bool {
    let mut depth = 0usize;
    for b in line.bytes() {
        match b {
            b'(' => depth += 1,
            b')' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => return false,
            _ => {}
        }
    }
    true
}

/// The delimiter of a table whose lines mostly split into the header's number of fields, and
/// how many of its first (non-border) lines are a preamble above the header.
fn layout(lines: &[&str]) -> Option<(u8, usize)> {
    let rows: Vec<&str> = lines.iter().copied().filter(|l| !is_border(l)).collect();
    (0..=MAX_PREAMBLE_LINES).find_map(|preamble| {
        let lines = rows.get(preamble..)?;
        let header = lines.first()?;
        let delimiter = [b'\t', b',', b';', b'|'].into_iter().find(|&d| {
            let columns = split(header, d).len();
            // Tabs and a drawn frame (`| a | b |`) are table syntax; commas also occur in prose.
            let framed = d == b'|' && header.trim_start().starts_with('|');
            let min_columns = if d == b'\t' || framed { 2 } else { 3 };
            // A line that opens with a tab and holds no other is indented, not a row of two
            // columns the first of them empty (`fc-list -v`'s `\tfamily: "Lato"(s)`).
            let indented = d == b'\t' && columns == 2 && header.starts_with('\t');
            // Commas that all sit inside parentheses part a call's arguments
            // (`make_file(src,*,2)` of a tool's trace), not cells.
            let call = d == b',' && commas_all_in_parentheses(header);
            columns >= min_columns && !indented && !call && {
                let same = lines
                    .iter()
                    .filter(|l| split(l, d).len() == columns)
                    .count();
                same * 10 >= lines.len() * 9 && lines.len() >= 3
            }
        })?;
        Some((delimiter, preamble))
    })
}

/// The delimiter of a table whose lines mostly split into the header's number of fields.
fn delimiter(lines: &[&str]) -> Option<u8> {
    layout(lines).map(|(delimiter, _)| delimiter)
}

/// Whether a sample of non-blank lines reads as a delimited table.
pub(crate) fn looks_like_csv(lines: &[&str]) -> bool {
    delimiter(lines).is_some()
}

/// The cells of one line, honouring double quotes; the outer pipes of a drawn table's row
/// (`| a | b |`) are its frame, not empty cells.
fn split(line: &str, delimiter: u8) -> Vec<&str> {
    let line = if delimiter == b'|' {
        let t = line.trim();
        let t = t.strip_prefix('|').unwrap_or(t);
        t.strip_suffix('|').unwrap_or(t)
    } else {
        line
    };
    let mut cells = Vec::new();
    let bytes = line.as_bytes();
    let mut start = 0;
    let mut quoted = false;
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'"' {
            quoted = !quoted;
        } else if b == delimiter && !quoted {
            cells.push(&line[start..i]);
            start = i + 1;
        }
    }
    cells.push(&line[start..]);
    cells
}

pub(crate) fn build(text: &str) -> Doc<'_> {
    let spans = || doc::lines(text).filter(|s| !text[s.clone()].trim().is_empty());
    let sample: Vec<&str> = spans().take(200).map(|s| &text[s]).collect();
    let (delim, preamble) = layout(&sample).unwrap_or((b',', 0));
    let rows = doc::line_count(text);
    let mut units = Vec::with_capacity(rows);
    let mut table_lines = sample.iter().filter(|l| !is_border(l)).skip(preamble);
    let header: Vec<&str> = table_lines
        .next()
        .map_or_else(Vec::new, |h| split(h, delim));
    let header_columns = header.len();
    // A text every cell of a column starts with (`import time:` before each self time of
    // `python -X importtime`) is the line's label, not part of the value.
    let sample_rows: Vec<Vec<&str>> = table_lines.map(|l| split(l, delim)).collect();
    let prefixes: Vec<&str> = (0..header_columns)
        .map(|column| {
            cell_label(
                sample_rows
                    .iter()
                    .filter_map(|row| row.get(column).copied()),
            )
        })
        .collect();
    let header: Vec<&str> = header
        .iter()
        .zip(&prefixes)
        .map(|(name, prefix)| name.strip_prefix(prefix.trim_end()).unwrap_or(name))
        .collect();
    // Each cell as a number when it reads as one, otherwise as a category: which of the two a
    // column is follows from all its cells, and keeping the cells' text until then would cost
    // several times the table.
    let mut columns: Vec<Field> = header
        .iter()
        .map(|name| Field::with_capacity(rows).with_name(name.trim().trim_matches('"')))
        .collect();
    let mut row = 0;
    let mut preamble_left = preamble;
    for span in spans() {
        let line = &text[span.clone()];
        if preamble_left > 0 && !is_border(line) {
            // Shown above the table as its title, never taken for a row.
            preamble_left -= 1;
            units.push(Unit {
                span: span.into(),
                pinned: true,
                weight: 0,
                ..Unit::default()
            });
            continue;
        }
        if is_border(line) {
            // The frame above and under the header is part of it; later borders are noise.
            units.push(Unit {
                span: span.into(),
                pinned: row <= 1,
                weight: 0,
                ..Unit::default()
            });
            continue;
        }
        let cells = split(line, delim);
        let index = units.len();
        let mut template = xxhash_rust::xxh3::Xxh3::new();
        if row > 0 {
            for (column, cell) in cells.iter().enumerate().take(header_columns) {
                let cell = cell.strip_prefix(prefixes[column]).unwrap_or(cell);
                columns[column].push(index, cell_value(cell));
                if cell.trim().parse::<f64>().is_err() {
                    template.update(cell.as_bytes());
                }
                template.update(b",");
            }
        }
        units.push(Unit {
            span: span.into(),
            pinned: row == 0,
            template: (row > 0).then(|| doc::template_id(template.digest())),
            level: doc::level_from_words(line),
            weight: 1,
            ..Unit::default()
        });
        row += 1;
    }
    let fields = columns
        .into_iter()
        .enumerate()
        .map(|(column, cells)| {
            column_field(cells, |unit| {
                let line = &text[units[unit].span.range()];
                split(line, delim)[column]
            })
        })
        .collect();
    let rows = units
        .iter()
        .filter(|u| u.weight > 0)
        .count()
        .saturating_sub(1);
    Doc {
        kind: ContentKind::Csv,
        source: text.into(),
        overview: Some(format!(
            "[table: {} rows × {} columns]",
            super::log::thousands(rows),
            header_columns
        )),
        units,
        noun: "rows",
        fields,
        fuller: Default::default(),
    }
}

/// A table this wide (columns) whose rows average this many bytes is read for a few columns:
/// a row is more than a line's worth, and most of its cells answer nothing.
const WIDE_COLUMNS: usize = 12;
const WIDE_ROW_BYTES: usize = 600;
/// Columns kept first in every row of a wide table: what names the row.
const IDENTITY_COLUMNS: usize = 2;
/// A column whose cells average more bytes than this (a geometry's WKT, a description) holds
/// content, not the row's name: the naming columns are the first others.
const MAX_NAMING_CELL_BYTES: usize = 64;

/// A table of long rows read for the cells that answer. A wide one's rows are shown as the
/// cells that name each row (its first two of short values) and the columns the query names
/// (`area`, `borders`, `callingCodes` for "calling codes"), with `…` where others were left
/// out; the header the same way. A narrower one loses only its columns of long content (a
/// geometry's WKT) the query does not name. The table is left as it is when its rows are
/// short, or a wide one's query names none of its columns, or most of them.
pub(crate) fn project_wide_rows<'a>(doc: Doc<'a>, query: &Query) -> Doc<'a> {
    let text: &str = &doc.source;
    let sample: Vec<&str> = doc::lines(text)
        .map(|s| &text[s])
        .filter(|l| !l.trim().is_empty())
        .take(200)
        .collect();
    let Some(delim) = delimiter(&sample) else {
        return doc;
    };
    let Some(header_unit) = doc.units.iter().position(|u| u.pinned && u.weight > 0) else {
        return doc;
    };
    let header = split(doc.text(header_unit), delim);
    let rows = doc.units.iter().filter(|u| u.weight > 0).count().max(1);
    let row_bytes = doc.units.iter().map(|u| u.span.len()).sum::<usize>() / rows;
    if row_bytes < WIDE_ROW_BYTES {
        return doc;
    }
    let mut buf = String::new();
    let names = |cell: &str, buf: &mut String| {
        let mut named = false;
        for_each_word(cell.trim().trim_matches('"'), buf, |w| {
            named |= query.words.contains_key(w)
        });
        named
    };
    // Per column, its cells' bytes over the sampled rows: the naming columns are short.
    let mut cell_bytes = vec![0usize; header.len()];
    let mut sampled_rows = 0;
    for line in sample.iter().skip(1) {
        let cells = split(line, delim);
        if cells.len() == header.len() {
            sampled_rows += 1;
            for (total, cell) in cell_bytes.iter_mut().zip(&cells) {
                *total += cell.len();
            }
        }
    }
    let long: Vec<bool> = (cell_bytes.iter())
        .map(|&bytes| bytes > MAX_NAMING_CELL_BYTES * sampled_rows.max(1))
        .collect();
    let named: Vec<bool> = header.iter().map(|cell| names(cell, &mut buf)).collect();
    let (kept, overview) = if header.len() >= WIDE_COLUMNS {
        let naming: Vec<usize> = (0..header.len())
            .filter(|&i| !long[i])
            .take(IDENTITY_COLUMNS)
            .collect();
        let asked = (0..header.len())
            .filter(|&i| named[i] && !naming.contains(&i))
            .count();
        if asked == 0 || asked * 2 > header.len() {
            return doc;
        }
        let kept: Vec<bool> = (0..header.len())
            .map(|i| naming.contains(&i) || named[i])
            .collect();
        let note = format!(
            "the first {} of short values and those the query names",
            naming.len()
        );
        (kept, note)
    } else {
        // A table of few columns whose rows are long for one column of content (a
        // geometry's WKT beside a country's figures): that column is left out of each row,
        // unless the query names it, and the row reads as its other cells.
        let kept: Vec<bool> = (0..header.len()).map(|i| !long[i] || named[i]).collect();
        if kept.iter().all(|&k| k) {
            return doc;
        }
        (
            kept,
            "those of short values and those the query names".to_owned(),
        )
    };
    let shown = kept.iter().filter(|&&k| k).count();
    let delim_char = char::from(delim);
    let mut source = String::with_capacity(text.len() / 4);
    let mut units = doc.units.clone();
    for unit in &mut units {
        let line = &text[unit.span.range()];
        let start = source.len();
        let cells = split(line, delim);
        if unit.weight == 0 || cells.len() != header.len() {
            source.push_str(line);
        } else {
            let mut gap = false;
            let mut first = true;
            for (cell, &keep) in cells.iter().zip(&kept) {
                if !keep {
                    gap = true;
                    continue;
                }
                if !first {
                    source.push(delim_char);
                }
                if gap {
                    source.push('…');
                    source.push(delim_char);
                    gap = false;
                }
                source.push_str(cell);
                first = false;
            }
            if gap {
                source.push(delim_char);
                source.push('…');
            }
        }
        unit.span = (start..source.len()).into();
        source.push('\n');
    }
    let overview = doc.overview.as_deref().map(|o| {
        format!(
            "{}; {shown} of {} columns shown: {overview}]",
            o.trim_end_matches(']'),
            header.len(),
        )
    });
    Doc {
        source: source.into(),
        units,
        overview,
        ..doc
    }
}

/// The label every one of `cells` starts with (`import time:` and the spaces after it), if
/// they share one that holds a letter: the digits of a number they share a start with
/// (`2024-01-03`, `2024-02-11`) are no label. Empty when none.
fn cell_label<'t>(mut cells: impl Iterator<Item = &'t str>) -> &'t str {
    let Some(first) = cells.next() else {
        return "";
    };
    let mut len = first.len();
    let mut count = 1;
    for cell in cells {
        len = first
            .bytes()
            .zip(cell.bytes())
            .take(len)
            .take_while(|(a, b)| a == b)
            .count();
        count += 1;
    }
    let len = crate::tokens::floor_char_boundary(first, len);
    let label = first[..len].trim_end_matches(|c: char| !c.is_ascii_whitespace() && c != ':');
    if count > 1 && label.chars().any(char::is_alphabetic) {
        label
    } else {
        ""
    }
}

/// A cell as a number when it reads as one, otherwise as a category.
fn cell_value(cell: &str) -> FieldValue {
    let v = cell.trim().trim_matches('"');
    match doc::parse_quantity(v) {
        Some(n) => FieldValue::Number(n),
        None => category(cell),
    }
}

fn category(cell: &str) -> FieldValue {
    let v = cell.trim().trim_matches('"');
    FieldValue::Category(xxhash_rust::xxh3::xxh3_64(v.as_bytes()))
}

/// A column as numbers when nearly all its cells that hold a value are numbers (the others
/// left out), otherwise as categories: the cells read as numbers are read again by
/// `cell_of(unit)` as text. Empty cells (a series that starts late, a value not measured)
/// make no column text.
fn column_field<'t>(cells: Field, cell_of: impl Fn(usize) -> &'t str) -> Field {
    let numeric = cells
        .iter()
        .filter(|(_, v)| matches!(v, FieldValue::Number(_)))
        .count();
    if numeric == 0 {
        return cells;
    }
    let empty = category("");
    let filled = cells.iter().filter(|&(_, v)| v != empty).count();
    let as_numbers = numeric * 10 >= filled * 9;
    let mut field = Field::with_capacity(if as_numbers { numeric } else { cells.len() })
        .with_name(cells.name());
    for (unit, value) in cells.iter() {
        match value {
            FieldValue::Number(_) if as_numbers => field.push(unit, value),
            FieldValue::Number(_) => field.push(unit, category(cell_of(unit))),
            FieldValue::Category(_) if as_numbers => {}
            FieldValue::Category(_) => field.push(unit, value),
        }
    }
    field
}

#[cfg(test)]
mod tests;
