//! A list of records read from a line format (RFC 822 stanzas, an aligned column table), with
//! every field's place in the source: the tree the record list parses to (the one JSON
//! parses to) decides which records and fields matter, and the kept fields are shown as their
//! own source lines, byte for byte.

use std::ops::Range;

use serde_json::{Map, Value};

/// How the records of a list sit in their source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Layout {
    /// Each field is a line of its own (`Key: value`, with continuation lines): a record is a
    /// block of lines, named by its first field.
    Lines,
    /// Each record is one line (a row), its fields cells under a header line.
    Rows,
    /// Each record is an XML element: its start tag names it and holds its attributes, each
    /// child element (whole, across lines or not) is a field. Lines are not the unit: a
    /// report may be one line.
    Elements,
}

/// One field of a record: its key and value as byte ranges of the source, and the piece of
/// the source that shows it (a line, or an XML element).
#[derive(Debug, Clone)]
pub(crate) struct LineField {
    /// The key (`Version`, a column's header cell).
    pub(crate) key: Range<usize>,
    /// The value on the field's first line, trimmed (a cell's text).
    pub(crate) value: Range<usize>,
    /// The field's first line, without its terminator (for [`Layout::Elements`], the element
    /// or start tag that holds it). Fields on their record's first piece share its range.
    pub(crate) line: Range<usize>,
    /// The lines that continue the value (a description's indented lines).
    pub(crate) more: Vec<Range<usize>>,
}

/// One record: its fields in source order, the first one naming it.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineRecord {
    /// The record's fields; never empty.
    pub(crate) fields: Vec<LineField>,
}

/// A list of records read from `source`.
#[derive(Debug, Clone)]
pub(crate) struct LineRecords {
    /// How the records are laid out.
    pub(crate) layout: Layout,
    /// The header line of a table (its column names), or the wrapper start tags above an XML
    /// record list, if any.
    pub(crate) header: Option<Range<usize>>,
    /// The records in source order.
    pub(crate) records: Vec<LineRecord>,
    /// A table's total: its last row, set apart from the rows by a border above it (the
    /// `TOTAL` of a coverage report), with that border.
    pub(crate) footer: Option<Range<usize>>,
}

impl LineRecords {
    /// The tree the records parse to: an array of objects, keys in source order, each value
    /// its text (continuation lines joined by newlines; a later repeat of a key in one record
    /// wins, as a lenient reader of a map does).
    pub(crate) fn to_value(&self, source: &str) -> Value {
        let records = self
            .records
            .iter()
            .map(|record| {
                let mut map = Map::new();
                for field in &record.fields {
                    let mut value = source[field.value.clone()].to_owned();
                    for line in &field.more {
                        value.push('\n');
                        value.push_str(source[line.clone()].trim());
                    }
                    map.insert(source[field.key.clone()].to_owned(), Value::String(value));
                }
                Value::Object(map)
            })
            .collect();
        Value::Array(records)
    }
}

/// `range` with the whitespace at both ends of `source[range]` left out.
pub(super) fn trimmed(source: &str, range: Range<usize>) -> Range<usize> {
    let text = &source[range.clone()];
    let start = range.start + (text.len() - text.trim_start().len());
    let end = range.end - (text.len() - text.trim_end().len());
    start..end.max(start)
}
