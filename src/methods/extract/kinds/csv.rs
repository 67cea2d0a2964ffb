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
            columns >= min_columns && !indented && {
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

/// A wide table's rows shown as the cells that name each row (its first two of short values)
/// and the
/// columns the query names (`area`, `borders`, `callingCodes` for "calling codes"), with `…`
/// where others were left out; the header the same way. The table is left as it is when it is
/// not wide, or the query names none of its columns, or most of them.
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
    if header.len() < WIDE_COLUMNS || row_bytes < WIDE_ROW_BYTES {
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
    let naming: Vec<usize> = (0..header.len())
        .filter(|&i| cell_bytes[i] <= MAX_NAMING_CELL_BYTES * sampled_rows.max(1))
        .take(IDENTITY_COLUMNS)
        .collect();
    let named: Vec<bool> = header.iter().map(|cell| names(cell, &mut buf)).collect();
    let kept: Vec<bool> = (0..header.len())
        .map(|i| naming.contains(&i) || named[i])
        .collect();
    let asked = (0..header.len())
        .filter(|&i| named[i] && !naming.contains(&i))
        .count();
    if asked == 0 || asked * 2 > header.len() {
        return doc;
    }
    let delim_char = char::from(delim);
    let mut source = String::with_capacity(text.len() / 4);
    let mut units = doc.units.clone();
    let shown = asked + naming.len();
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
            "{}; {shown} of {} columns shown: the first {} of short values and those the query names]",
            o.trim_end_matches(']'),
            header.len(),
            naming.len()
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
mod tests {
    use super::*;

    #[test]
    fn quoted_delimiters_do_not_split_cells() {
        assert_eq!(split("a,\"b,c\",d", b','), ["a", "\"b,c\"", "d"]);
    }

    #[test]
    fn header_is_pinned_and_columns_become_fields() {
        let text = "name,duration\nrg,0.1\nag,0.3\ngrep,7.5\n";
        let doc = build(text);
        assert!(doc.units[0].pinned);
        assert_eq!(doc.fields.len(), 2);
        assert!(
            matches!(doc.fields[1].iter().nth(2), Some((3, FieldValue::Number(n))) if n == 7.5)
        );
    }

    #[test]
    fn a_series_that_starts_late_is_still_a_column_of_numbers() {
        // Monthly prices: GOOGL has no value before it listed, most rows of the file.
        let mut text = String::from("Date,IBM,GOOGL\n");
        for year in 1990..2004 {
            text.push_str(&format!("{year}-01-01,10.5,\n"));
        }
        for (year, price) in [(2004, 50.2), (2010, 300.4), (2021, 2960.9)] {
            text.push_str(&format!("{year}-01-01,12.5,{price}\n"));
        }
        let doc = build(&text);
        let googl = doc.fields.iter().find(|f| f.name() == "GOOGL").unwrap();
        assert_eq!(googl.len(), 3);
        assert!(
            googl
                .iter()
                .all(|(_, v)| matches!(v, FieldValue::Number(_)))
        );
    }

    #[test]
    fn a_label_every_cell_of_a_column_starts_with_is_not_its_value() {
        // `python -X importtime`: every line, the header too, starts with `import time:`.
        let text = "import time: self [us] | cumulative | imported package\n\
                    import time:       313 |        313 |   _io\n\
                    import time:        73 |         73 |   marshal\n\
                    import time:     31421 |      31906 |     sympy.simplify.sqrtdenest\n\
                    import time:       692 |        692 |   posix\n";
        let doc = build(text);
        assert_eq!(doc.fields[0].name(), "self [us]");
        assert!(
            matches!(doc.fields[0].iter().nth(2), Some((3, FieldValue::Number(n))) if n == 31421.0),
            "{:?}",
            doc.fields[0].iter().collect::<Vec<_>>()
        );
        assert_eq!(cell_label(["New York", "New Jersey"].into_iter()), "New ");
        assert_eq!(cell_label(["2024-01-03", "2024-02-11"].into_iter()), "");
    }

    #[test]
    fn a_drawn_table_is_a_table_of_its_cells() {
        let text = "+------+-----+\n| name | hp  |\n+------+-----+\n| a    | 90  |\n| b    | 132 |\n| c    | 75  |\n+------+-----+\n";
        let lines: Vec<&str> = text.lines().collect();
        assert!(looks_like_csv(&lines));
        let doc = build(text);
        assert!(doc.units[0].pinned && doc.units[1].pinned && doc.units[2].pinned);
        assert!(!doc.units[3].pinned);
        assert_eq!(doc.fields.len(), 2);
        assert!(
            doc.fields[1]
                .iter()
                .any(|v| matches!(v, (4, FieldValue::Number(n)) if n == 132.0))
        );
        assert_eq!(doc.overview.as_deref(), Some("[table: 3 rows × 2 columns]"));
    }

    #[test]
    fn a_wide_table_shows_the_columns_the_query_names() {
        let mut header = vec!["name".to_owned(), "official".to_owned()];
        header.extend((0..40).map(|i| format!("translation_{i}")));
        header.extend(["area".to_owned(), "borders".to_owned()]);
        let mut text = header.join(",") + "\n";
        for row in 0..6 {
            let mut cells = vec![format!("Land{row}"), format!("Republic of Land{row}")];
            cells.extend((0..40).map(|i| format!("Translated name {i} of land {row}")));
            cells.extend([format!("{}", 1000 * (row + 1)), "\"AAA,BBB\"".to_owned()]);
            text.push_str(&(cells.join(",") + "\n"));
        }
        let q = Query::from_hints(
            &crate::methods::extract::Hints::new().with_query("which land has the largest area?"),
        )
        .unwrap();
        let doc = project_wide_rows(build(&text), &q);
        assert_eq!(doc.text(0), "name,official,…,area,…");
        assert_eq!(doc.text(3), "Land2,Republic of Land2,…,3000,…");
        assert!(
            doc.overview
                .as_deref()
                .unwrap()
                .contains("3 of 44 columns shown")
        );
        // The fields still read the original cells.
        assert_eq!(doc.fields.len(), 44);
        // A query that names no column leaves the table as it is.
        let q =
            Query::from_hints(&crate::methods::extract::Hints::new().with_query("Land2?")).unwrap();
        let doc = project_wide_rows(build(&text), &q);
        assert!(doc.text(3).contains("Translated name 39 of land 2"));
    }

    #[test]
    fn a_wide_table_is_named_by_its_first_columns_of_short_values() {
        // A geographic table: each row's polygon first, as WKT, then its names.
        let mut header = vec!["WKT".to_owned(), "NAME".to_owned(), "STATE_NAME".to_owned()];
        header.extend((0..12).map(|i| format!("PO{i}")));
        header.push("HR8893".to_owned());
        let mut text = header.join(",") + "\n";
        for row in 0..6 {
            let polygon: Vec<String> = (0..60)
                .map(|i| format!("-90.{row}{i} 38.{i}{row}"))
                .collect();
            let mut cells = vec![
                format!("\"POLYGON (({}))\"", polygon.join(",")),
                format!("County{row}"),
                "Illinois".to_owned(),
            ];
            cells.extend((0..12).map(|i| format!("{}", 1000 * i + row)));
            cells.push(format!("{row}.25"));
            text.push_str(&(cells.join(",") + "\n"));
        }
        let q = Query::from_hints(
            &crate::methods::extract::Hints::new()
                .with_query("which county has the highest HR8893?"),
        )
        .unwrap();
        let doc = project_wide_rows(build(&text), &q);
        assert_eq!(doc.text(0), "…,NAME,STATE_NAME,…,HR8893");
        assert_eq!(doc.text(3), "…,County2,Illinois,…,2.25");
    }

    #[test]
    fn a_line_of_counts_above_the_header_is_a_preamble() {
        // scikit-learn's breast cancer table: rows, columns and class names, then the header.
        let mut text =
            "6,4,malignant,benign\nmean radius,mean texture,mean area,worst area,target\n"
                .to_owned();
        for (r, area) in [
            (17.99, 2019.0),
            (20.57, 1956.0),
            (9.5, 3432.0),
            (11.2, 880.0),
        ] {
            text.push_str(&format!("{r},10.38,1001,{area},0\n"));
        }
        text.push_str("8.1,12.0,200,290.5,1\n7.7,24.5,180,268.6,1\n");
        let lines: Vec<&str> = text.lines().collect();
        assert!(looks_like_csv(&lines));
        let doc = build(&text);
        assert!(doc.units[0].pinned && doc.units[0].weight == 0);
        assert!(doc.units[1].pinned && doc.units[1].weight > 0);
        assert_eq!(doc.fields.len(), 5);
        assert_eq!(doc.fields[3].name(), "worst area");
        assert!(
            doc.fields[3]
                .iter()
                .any(|v| matches!(v, (4, FieldValue::Number(n)) if n == 3432.0))
        );
        assert_eq!(doc.overview.as_deref(), Some("[table: 6 rows × 5 columns]"));
    }

    #[test]
    fn prose_with_commas_is_not_a_table() {
        let lines = ["Hello, world, again", "This is prose.", "More, prose here"];
        assert!(!looks_like_csv(&lines));
    }
}
