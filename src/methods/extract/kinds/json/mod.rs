//! JSON: records (objects in an array, JSON Lines) are the units, framed by a schema line with
//! their keys, types and count. Each record is rendered compactly on one line, its long strings
//! and arrays shortened within a byte cap, and its fields feed rarity (the one failed run among
//! successes) and extremes (the largest change).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{Doc, Field, FieldValue, Fuller, Level, Unit};
use crate::methods::extract::query::Query;

mod grouped;
mod members;
mod named;
mod project;
mod raw;
mod render;
mod rich_text;
mod spacing;
mod stats;
mod table;

use raw::{Element, Item};
pub(crate) use raw::{PARSE_WHOLE_BYTES, is_document};
use spacing::Spacing;

use named::{count_exact_strings, is_key_named, names_a_part, names_key};
use render::{approx_len, for_each_scalar, named_values, render_within};
use render::{compact, json_string, labelled, summary};
use stats::{
    KeyStats, KeyStatsBuilder, field_value, is_record_array, record_level, record_template,
    says_nothing,
};

/// Arrays and objects bigger than this (compact bytes) are split into units of their own;
/// smaller ones are shown inline.
const INLINE_BYTES: usize = 200;
/// Bytes of a long string shown in its parent's line; the whole string is a unit of its own.
const SUMMARY_HEAD: usize = 120;
/// Strings are never cut shorter than this: an error message and its location fit.
pub(super) const MIN_STRING_BYTES: usize = 160;
/// Values kept from one field for rarity: longer strings are content, not categories.
pub(super) const MAX_CATEGORY_BYTES: usize = 64;
/// Records are projected only when this many bytes are theirs: each projected leaf carries its
/// path, and below this the usual rendering's summary of the record reads better.
const MIN_PROJECTION_BYTES: usize = 600;
/// An object whose line of short members overflows a unit is shown a member a line when it has
/// at least this many of them.
const MIN_MEMBER_LINES: usize = 8;
/// Sibling records this few, each many times a line's size, are containers (a linter's
/// report per file, a package's dependency tree): each is walked like a document of its own.
const FEW_RECORDS: usize = 8;
const CONTAINER_LINES: usize = 4;
/// Spreads a level's number over the bits of a template hash.
const LEVEL_MIX: u64 = 0x9E37_79B9_7F4A_7C15;
/// Rows of a table are given their record in full (for the room left when the whole document
/// fits) only while the document so far is up to this many times the largest unit: about
/// twice the budget, past which it cannot fit whole.
const FULLER_SOURCE_FACTOR: usize = 10;
/// Sibling records needed for the lists their rows show to count as values, rare or lacking.
const MIN_LISTED_RECORDS: usize = 20;
/// Prior of a record whose values say it failed.
const ERROR_PRIOR: f32 = 4.0;
/// Prior of a map member whose key the query names.
const NAMED_KEY_PRIOR: f32 = 3.0;
/// Prior of a record per short field value (up to two) that holds a string the query names.
const NAMED_VALUE_PRIOR: f32 = 3.0;

/// The last member name of the dotted path `key` (`body` of `data.body`).
fn last_segment(key: &str) -> &str {
    key.rsplit(['.', ']']).next().unwrap_or(key)
}

/// Whether `item`, larger than `size`, is mostly lists of its own (members that are lists
/// holding half its size or more: a home's rooms, modules and schedules): a container of
/// records, not a tree of settings.
fn holds_its_records(item: &Value, size: usize) -> bool {
    let Value::Object(map) = item else {
        return item.is_array();
    };
    let whole = approx_len(item, usize::MAX);
    let lists: usize = map
        .values()
        .filter(|v| v.is_array())
        .map(|v| approx_len(v, whole))
        .sum();
    lists * 2 >= whole.max(size)
}

/// Cuts the JSON document `text` (one valid object or array) into units. Documents up to
/// [`raw::PARSE_WHOLE_BYTES`] are parsed whole; larger ones are walked a level at a time, their
/// records parsed one by one, so memory stays near the text's own size.
pub(crate) fn build_document(
    text: &str,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'static> {
    let mut builder = Builder::new(query, max_unit_bytes);
    builder.spacing = Spacing::of(text);
    builder.walk(&Item::from_text(text.trim()), "", None, 0);
    builder.finish(ContentKind::Json)
}

/// Cuts a JSON value that is already parsed into units, rendered compactly (a tree read from
/// XML or YAML has no separators of its own to follow).
pub(crate) fn build_value(
    value: &Value,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'static> {
    build_tree(value, Spacing::default(), query, max_unit_bytes)
}

/// Cuts `value`, parsed from the JSON document `text`, into units rendered with the
/// separators `text` uses.
pub(crate) fn build_parsed(
    text: &str,
    value: &Value,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'static> {
    build_tree(value, Spacing::of(text), query, max_unit_bytes)
}

fn build_tree(
    value: &Value,
    spacing: Spacing,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'static> {
    let mut builder = Builder::new(query, max_unit_bytes);
    builder.spacing = spacing;
    // Rich-text trees read as their text; the caller's value is copied only to hold that.
    let flattened = rich_text::contains(value).then(|| {
        let mut copy = value.clone();
        rich_text::flatten(&mut copy);
        copy
    });
    builder.walk_value(flattened.as_ref().unwrap_or(value), "", None, 0);
    builder.finish(ContentKind::Json)
}

pub(crate) fn build_lines(
    text: &str,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'static> {
    let mut builder = Builder::new(query, max_unit_bytes);
    builder.project = false;
    builder.spacing = Spacing::of(text);
    let mut messages: Vec<&str> = Vec::new();
    let mut raw_lines = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        // Each message is parsed again when its unit is rendered: one at a time, so a large
        // file never holds the tree of every message at once.
        match serde_json::from_str::<serde::de::IgnoredAny>(line) {
            Ok(_) => messages.push(line),
            Err(_) => raw_lines.push(line),
        }
    }
    builder.tabulate = are_flat(&messages);
    builder.records(messages.iter(), &|_| String::new(), "", None);
    // Lines that are not JSON (a stray log line between messages) are kept as plain lines.
    for line in raw_lines {
        let level = crate::methods::extract::doc::level_from_words(line);
        builder.push(
            line,
            Unit {
                level,
                prior: if level == Level::Error { 3.0 } else { 0.0 },
                ..Unit::default()
            },
        );
    }
    builder.finish(ContentKind::JsonLines)
}

/// Whether JSON Lines `messages` are flat records: on average three in four of their
/// members scalars (a transfer's timings, an access log's fields beside its request), which
/// read as rows of a table, not messages that nest what they say (a compiler's diagnostic).
fn are_flat(messages: &[&str]) -> bool {
    /// The messages looked at.
    const SAMPLE: usize = 64;
    let (mut scalars, mut members) = (0usize, 0usize);
    for message in messages.iter().take(SAMPLE) {
        let Ok(Value::Object(map)) = serde_json::from_str::<Value>(message) else {
            continue;
        };
        members += map.len();
        scalars += map
            .values()
            .filter(|v| !v.is_object() && !v.is_array())
            .count();
    }
    members > 0 && scalars * 4 >= members * 3
}

struct Builder<'q> {
    source: String,
    units: Vec<Unit>,
    fields: Vec<Field>,
    /// Records shown as a row of a table, in full: for the room left when every unit fits.
    fuller: Fuller,
    query: Option<&'q Query>,
    max_unit_bytes: usize,
    blocks: u32,
    /// Whether oversized records may be projected to what the query touches. JSON Lines
    /// messages are events read whole (a compiler message, a request), not documents to
    /// descend into.
    project: bool,
    /// Whether sibling records may be shown as rows of a table. JSON Lines messages that
    /// nest their substance (a compiler message's spans and rendered text) are read whole.
    tabulate: bool,
    /// The separators of the original text, which every rendered unit follows.
    spacing: Spacing,
}

impl<'q> Builder<'q> {
    fn new(query: Option<&'q Query>, max_unit_bytes: usize) -> Self {
        Builder {
            source: String::new(),
            units: Vec::new(),
            fields: Vec::new(),
            fuller: Fuller::default(),
            query,
            max_unit_bytes: max_unit_bytes.max(INLINE_BYTES),
            blocks: 0,
            project: true,
            tabulate: true,
            spacing: Spacing::default(),
        }
    }

    fn finish(mut self, kind: ContentKind) -> Doc<'static> {
        // Built by appending: give back what the last doublings reserved but never used.
        self.source.shrink_to_fit();
        self.units.shrink_to_fit();
        Doc {
            kind,
            source: self.source.into(),
            units: self.units,
            // The schema line of each record array already gives counts.
            overview: None,
            noun: "items",
            fields: self.fields,
            fuller: self.fuller,
        }
    }

    /// `text` with the original's separators around the members whose key the query names
    /// (or a word of it), which are what an answer quotes with its key.
    fn respaced<'t>(&self, text: &'t str) -> std::borrow::Cow<'t, str> {
        match self.query {
            Some(q) => self.spacing.apply(text, &|key| {
                names_key(q, key) || project::key_words_named(key, q).1 > 0
            }),
            None => std::borrow::Cow::Borrowed(text),
        }
    }

    /// Appends `text` as one unit.
    fn push(&mut self, text: &str, unit: Unit) -> usize {
        let text = self.respaced(text);
        let start = self.source.len();
        self.source.push_str(&text);
        let end = self.source.len();
        self.source.push('\n');
        self.units.push(Unit {
            span: (start..end).into(),
            weight: 1,
            ..unit
        });
        self.units.len() - 1
    }

    fn walk(&mut self, item: &Item<'_>, path: &str, parent: Option<usize>, depth: usize) {
        match item {
            Item::Parsed(value) => self.walk_value(value, path, parent, depth),
            Item::Raw(raw) if raw.starts_with('[') => {
                let items = raw::elements(raw);
                if is_record_array(items.clone().map(|t| t.starts_with('{'))) {
                    self.records(items, &|i| format!("[{i}]"), path, parent);
                } else {
                    self.array(&items.collect::<Vec<_>>(), path, parent, depth);
                }
            }
            Item::Raw(raw) => {
                let members = raw::members(raw);
                let members: Vec<(&str, &str)> =
                    members.iter().map(|(k, v)| (k.as_str(), *v)).collect();
                self.object(&members, path, parent, depth);
            }
        }
    }

    fn walk_value(&mut self, value: &Value, path: &str, parent: Option<usize>, depth: usize) {
        let small = approx_len(value, INLINE_BYTES) <= INLINE_BYTES;
        match value {
            Value::Array(items)
                if is_record_array(items.iter().map(Value::is_object)) && !small =>
            {
                // Many records that each hold their own list of records (a linter's files and
                // their findings) are read as that list's items; a few are walked one by one
                // (see `record`), unless each holds a long text beside its list (the linted
                // file's source), which a walk would spend the budget on first.
                if let Some(ungrouped) = grouped::ungroup(items)
                    && (items.len() > FEW_RECORDS || ungrouped.leaves_out_texts())
                {
                    let note = self.push(
                        &ungrouped.describe(path),
                        Unit {
                            parent: parent.into(),
                            pinned: true,
                            ..Unit::default()
                        },
                    );
                    let labels = &ungrouped.labels;
                    self.records(
                        ungrouped.rows.iter(),
                        &|i| labels[i].clone(),
                        path,
                        Some(note),
                    );
                    return;
                }
                self.records(items.iter(), &|i| format!("[{i}]"), path, parent);
            }
            Value::Array(items) if !small => {
                let items: Vec<&Value> = items.iter().collect();
                self.array(&items, path, parent, depth);
            }
            Value::Object(map) if !small => {
                let members: Vec<(&str, &Value)> =
                    map.iter().map(|(k, v)| (k.as_str(), v)).collect();
                self.object(&members, path, parent, depth);
            }
            _ => {
                let text = labelled(path, &compact(value));
                self.push(
                    &text,
                    Unit {
                        parent: parent.into(),
                        pinned: depth == 0,
                        ..Unit::default()
                    },
                );
            }
        }
    }

    /// An array that is not a record array: nested containers walked on their own, runs of
    /// scalars grouped into chunks.
    fn array<E: Element>(&mut self, items: &[E], path: &str, parent: Option<usize>, depth: usize) {
        let mut chunk: Vec<Item<'_>> = Vec::new();
        let mut chunk_start = 0;
        let mut chunk_bytes = 0;
        for (i, element) in items.iter().enumerate() {
            let item = element.item();
            let len = item.approx_len(self.max_unit_bytes);
            if item.is_object() || item.is_array() && len > INLINE_BYTES {
                self.scalar_chunk(path, chunk_start, &chunk, parent);
                chunk.clear();
                self.walk(&item, &format!("{path}[{i}]"), parent, depth + 1);
                chunk_start = i + 1;
                chunk_bytes = 0;
                continue;
            }
            if chunk_bytes + len > self.max_unit_bytes / 2 && !chunk.is_empty() {
                self.scalar_chunk(path, chunk_start, &chunk, parent);
                chunk.clear();
                chunk_start = i;
                chunk_bytes = 0;
            }
            chunk.push(item);
            chunk_bytes += len + 1;
        }
        self.scalar_chunk(path, chunk_start, &chunk, parent);
    }

    /// An object: its members as records when most are objects, else its own line (scalars
    /// inline, big children summarised) with the big children walked under it.
    fn object<E: Element>(
        &mut self,
        members: &[(&str, E)],
        path: &str,
        parent: Option<usize>,
        depth: usize,
    ) {
        let object_members = members.iter().filter(|(_, v)| v.is_object()).count();
        if members.len() >= 8 && object_members * 10 >= members.len() * 8 {
            let values = members.iter().map(|(_, v)| v);
            self.records(values, &|i| format!(".{}", members[i].0), path, parent);
            return;
        }
        let mut line = String::new();
        let mut big = Vec::new();
        for (i, (k, v)) in members.iter().enumerate() {
            let item = v.item();
            let inline = item.approx_len(INLINE_BYTES) <= INLINE_BYTES;
            let _ = write!(line, "{}:", json_string(k));
            let digest = match &item {
                Item::Parsed(value) => value
                    .as_str()
                    .and_then(|s| render::elided_digest(s, self.query)),
                Item::Raw(_) => None,
            };
            if let Some(digest) = digest {
                line.push_str(&digest);
            } else if inline {
                line.push_str(&item.compact());
            } else {
                big.push(i);
                line.push_str(&item.summary());
            }
            line.push(',');
        }
        line.pop();
        let inline_members = members.len() - big.len();
        let unit = if line.len() > self.max_unit_bytes && inline_members >= MIN_MEMBER_LINES {
            // A map of many short values (build variables, settings, a package's scripts):
            // one line would be cut to windows that split members apart; a line a member
            // keeps each one whole, `"KEY": value`, as the original prints it.
            self.member_lines(members, &big, path, parent, depth)
        } else {
            let text = labelled(path, &format!("{{{line}}}"));
            self.push(
                &text,
                Unit {
                    parent: parent.into(),
                    pinned: depth <= 1,
                    ..Unit::default()
                },
            )
        };
        for i in big {
            let (k, v) = &members[i];
            let child = if path.is_empty() {
                (*k).to_owned()
            } else {
                format!("{path}.{k}")
            };
            let first = self.units.len();
            self.walk(&v.item(), &child, Some(unit), depth + 1);
            // A member the query names by its key (`zod` in a dependency tree, an endpoint's
            // path) is where the answer sits, however deep.
            if first < self.units.len() && self.query.is_some_and(|q| is_key_named(q, k)) {
                self.units[first].prior += NAMED_KEY_PRIOR;
            }
        }
    }

    /// Sibling records: a schema line, then one line per record. Records given as text are
    /// parsed once for the schema and once for their line, one at a time.
    fn records<E: Element>(
        &mut self,
        items: impl Iterator<Item = E> + Clone,
        label: &dyn Fn(usize) -> String,
        path: &str,
        parent: Option<usize>,
    ) {
        let mut stats = KeyStatsBuilder::default();
        let mut columns = table::TableBuilder::default();
        let mut count = 0;
        let mut exact_records = vec![0usize; self.query.map_or(0, |q| q.exact.len())];
        for item in items.clone() {
            count += 1;
            item.with_value(&mut |v| {
                stats.add(v);
                if self.tabulate {
                    columns.add(v, self.query);
                }
                if let Some(q) = self.query {
                    count_exact_strings(q, v, &mut exact_records);
                }
            });
        }
        // An exact string most records hold (the host in every link) singles none out.
        let common: Vec<bool> = exact_records
            .iter()
            .map(|&k| count >= table::MIN_RECORDS && k * 2 > count)
            .collect();
        let stats = stats.finish();
        let table = columns.finish(self.query);
        let mut schema_text = stats.describe(path, count);
        if let Some(table) = &table {
            let _ = write!(schema_text, "; {}", table.header());
        }
        let schema = self.push(
            &schema_text,
            Unit {
                parent: parent.into(),
                pinned: true,
                ..Unit::default()
            },
        );
        self.blocks += 1;
        self.units.reserve(count);
        let first_field = self.fields.len();
        let mut field_index: HashMap<String, usize> = HashMap::new();
        for (i, item) in items.enumerate() {
            item.with_value(&mut |item| {
                let label = label(i);
                self.record(
                    item,
                    &label,
                    path,
                    schema,
                    (&stats, table.as_ref(), &common, count),
                    first_field,
                    &mut field_index,
                );
            });
        }
        for field in &mut self.fields[first_field..] {
            if says_nothing(field) {
                field.clear();
            } else {
                field.shrink_to_fit();
            }
        }
    }

    /// One record's line, and its field values for rarity and extremes.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        item: &Value,
        label: &str,
        path: &str,
        schema: usize,
        (stats, table, common, count): (&KeyStats, Option<&table::Table>, &[bool], usize),
        first_field: usize,
        field_index: &mut HashMap<String, usize>,
    ) {
        let exclude = |k: &str| stats.constant.contains_key(k);
        let notable = |k: &str, v: &Value| stats.is_notable(k, v);
        // Records are many: a smaller cap fits more of them, and the shortening keeps the
        // fields the query names.
        let cap = (self.max_unit_bytes * 2 / 3).max(INLINE_BYTES);
        let container = CONTAINER_LINES * self.max_unit_bytes;
        if count <= FEW_RECORDS
            && approx_len(item, container) > container
            && holds_its_records(item, container)
        {
            // A few records, each a document's worth that is mostly a list of records of its
            // own (the warnings of one linted file, a package's tree of dependencies): one
            // line, or a projection, would show a sliver of each. Each is walked instead, so
            // its inner records become rows of their own. A record that is a deep tree of
            // settings (a cluster's deployment) is projected to the leaves the query names.
            self.walk_value(item, &format!("{path}{label}"), Some(schema), 2);
            return;
        }
        if self.project
            && let Some(q) = self.query
            && names_a_part(q, label, item)
            && approx_len(item, cap) > cap
        {
            // A record too big for its line that the query names (by its key or a key inside
            // it): a line per part, so the part that answers is kept whole with its path
            // instead of being cut to fit one line, where the members that fit first (not the
            // asked ones) would keep their text.
            self.walk_value(item, &format!("{path}{label}"), Some(schema), 2);
            return;
        }
        let level = record_level(item);
        let named = self.query.map_or(0, |q| named_values(q, item, common));
        // A map member (a shape's documentation, keyed by name) is read for its content, so
        // its long strings keep the query's sentences; the items of an array are alike and
        // compared by their heads, and windows in each would blur which one the query means.
        let windows = label.starts_with('.');
        let usual = render_within(item, cap, (self.query, windows, common), &exclude, &notable);
        let key_named = label
            .strip_prefix('.')
            .is_some_and(|k| self.query.is_some_and(|q| names_key(q, k)));
        // A record the query singles out (by a value it names, a leaf deep inside, or its
        // failure) keeps its full rendering; the others are a row of the table.
        let as_row = named == 0 && !key_named && level != Level::Error;
        let projectable =
            self.project && cap >= MIN_PROJECTION_BYTES && approx_len(item, cap) > cap;
        // A list a row shows (`licenses[].license.id`) is a value of the record too: the one
        // `Unlicense` among MIT licenses, or the record with no license, is rare. Among a few
        // records, each list is as rare as the next.
        let lists_are_values =
            count >= MIN_LISTED_RECORDS && table.is_some_and(table::Table::has_list_column);
        let cells = table
            .filter(|_| as_row || projectable || lists_are_values)
            .map(|t| t.cells(item));
        let row = cells
            .as_deref()
            .filter(|_| as_row || projectable)
            .map(table::row_of);
        // A record too big to show whole, whose usual rendering folds away a leaf the
        // query names, is projected to what the query touches instead.
        let projected = match self.query {
            Some(q) if projectable => {
                // Which query words few siblings hold: one of them in a folded list is the
                // answer, a word every record holds (`python` in each classifier) is not.
                let rare_word = |w: &str| table.is_some_and(|t| t.is_rare_word(w));
                let rarity = project::Rarity {
                    rare_word: &rare_word,
                    common_exact: common,
                };
                let shown = (usual.as_str(), row.as_deref().unwrap_or(""));
                project::project(item, cap, q, &rarity, shown, &exclude, &notable)
            }
            _ => None,
        };
        let (body, whole) = match (table.zip(row), projected) {
            (Some((table, row)), None) if as_row => {
                // Singled out only by a query word its row shows (a label, a state), a record
                // reads as well as a row, and leaves the budget to the rows of its siblings.
                let key_named = |k: &str| self.query.is_some_and(|q| is_key_named(q, k));
                if table.singles_out(item, self.query, &row)
                    || table.hides_what_is_asked(item, self.query, &key_named)
                {
                    (usual, None)
                } else {
                    (row, Some(usual))
                }
            }
            (_, projected) => (projected.unwrap_or(usual), None),
        };
        // Named by the member's own key, at any depth (the label is `.key` before the path).
        let key_is_named = label
            .strip_prefix('.')
            .is_some_and(|k| self.query.is_some_and(|q| is_key_named(q, k)));
        let label = match label.strip_prefix('.') {
            // A member the query names, of a pretty-printed text, is labelled by its key as the
            // text prints it (`"node_modules/semver": {`), so that a line quoted from it reads
            // the same.
            Some(key) if key_is_named && self.spacing.is_pretty() => {
                format!("{path}.{}", json_string(key))
            }
            _ => format!("{path}{label}"),
        };
        let mut text = labelled(&label, &body);
        if named > 0 && self.spacing.is_pretty() {
            // A record the query names by a value is what an answer quotes from: each of its
            // members keeps the space after its colon (`"name": "autocfg"`), as the
            // pretty-printed original has it, not just the asked ones.
            text = self.spacing.with_every_colon_spaced(&text);
        }
        let prior = if level == Level::Error {
            ERROR_PRIOR
        } else {
            0.0
        } + NAMED_VALUE_PRIOR * named.min(2) as f32
            + if key_is_named { NAMED_KEY_PRIOR } else { 0.0 };
        let unit = self.push(
            &text,
            Unit {
                parent: Some(schema).into(),
                // Errors and warnings of one shape are two templates, as in a log: the first
                // and last error then count as the run's edges, not a note after it.
                template: Some(crate::methods::extract::doc::template_id(
                    record_template(item, stats) ^ (level as u64).wrapping_mul(LEVEL_MIX),
                )),
                level,
                prior,
                ..Unit::default()
            },
        );
        // Only while the document may still fit whole: past that no row is ever shown in full.
        if let Some(whole) = whole
            && self.source.len() <= FULLER_SOURCE_FACTOR * self.max_unit_bytes
        {
            // The row first, so a head of this keeps what the row shows; then the whole record.
            let fuller = format!("{text}\n{}", labelled(&label, &whole));
            self.fuller.push(unit, &self.respaced(&fuller));
        }
        let mut add = |fields: &mut Vec<Field>, key: &str, value: FieldValue| {
            push_field(fields, (first_field, &mut *field_index), key, unit, value);
        };
        for_each_scalar(item, "", 0, &mut |key, value| {
            let value = match value {
                // "The longest body": a text the query ranks by is ranked by its length, though
                // its values all differ. Prose only: a link's length (`comments_url` of "the
                // most comments") says nothing.
                Value::String(text)
                    if text.contains(' ')
                        && self.query.is_some_and(|q| q.ranks(last_segment(key))) =>
                {
                    FieldValue::Number(text.chars().count() as f64)
                }
                _ if stats.is_silent(key) => return,
                _ => match field_value(value) {
                    Some(value) => value,
                    None => return,
                },
            };
            add(&mut self.fields, key, value);
        });
        if let (Some(table), Some(cells)) = (table.filter(|_| lists_are_values), &cells) {
            table.list_cells(cells, &mut |key, text| {
                let value = FieldValue::Category(xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
                add(&mut self.fields, key, value);
            });
        }
    }
}

/// Adds `value` of `unit` to the field `key` of the records, which holds its index in
/// `fields` (from `first_field` on) or is added.
fn push_field(
    fields: &mut Vec<Field>,
    (first_field, field_index): (usize, &mut HashMap<String, usize>),
    key: &str,
    unit: usize,
    value: FieldValue,
) {
    let index = match field_index.get(key) {
        Some(&index) => index,
        None => {
            let next = first_field + field_index.len();
            field_index.insert(key.to_owned(), next);
            next
        }
    };
    if index == fields.len() {
        fields.push(Field::default().with_name(key));
    }
    fields[index].push(unit, value);
}

#[cfg(test)]
mod tests;
