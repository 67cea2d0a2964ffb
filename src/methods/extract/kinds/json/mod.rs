//! JSON: records (objects in an array, JSON Lines) are the units, framed by a schema line with
//! their keys, types and count. Each record is rendered compactly on one line, its long strings
//! and arrays shortened within a byte cap, and its fields feed rarity (the one failed run among
//! successes) and extremes (the largest change).

use std::fmt::Write as _;

use serde_json::Value;

use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{Doc, Field, Fuller, Level, Unit};
use crate::methods::extract::query::Query;

mod columnar;
mod embedded;
mod grouped;
mod log_records;
mod members;
mod messages;
mod named;
mod project;
mod raw;
mod readable;
mod records;
mod render;
mod rich_text;
mod shared;
mod spacing;
mod stats;
mod table;

use raw::{Element, Item};
pub(crate) use raw::{PARSE_WHOLE_BYTES, is_document, parse_stream, parse_value};
pub(crate) use render::is_naming_key;
use spacing::Spacing;
pub(crate) use spacing::Strings;

use named::{is_key_named, names_key};
use render::{approx_len, compact, json_string, labelled, summary};
use stats::is_record_array;

/// Arrays and objects bigger than this (compact bytes) are split into units of their own;
/// smaller ones are shown inline.
const INLINE_BYTES: usize = 200;
/// Bytes of a long string shown in its parent's line; the whole string is a unit of its own.
const SUMMARY_HEAD: usize = 120;
/// Strings are never cut shorter than this: an error message and its location fit.
pub(super) const MIN_STRING_BYTES: usize = 160;
/// Values kept from one field for rarity: longer strings are content, not categories.
pub(super) const MAX_CATEGORY_BYTES: usize = 64;
/// An object whose line of short members overflows a unit is shown a member a line when it has
/// at least this many of them.
const MIN_MEMBER_LINES: usize = 8;
/// Sibling records this few, each many times a line's size, are containers (a linter's
/// report per file, a package's dependency tree): each is walked like a document of its own.
const FEW_RECORDS: usize = 8;
/// Prior of a map member whose key the query names.
const NAMED_KEY_PRIOR: f32 = 3.0;

/// The path of member `key` under `path` (`data.body`; `body` at the top).
fn child_path(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

/// The last member name of the dotted path `key` (`body` of `data.body`).
fn last_segment(key: &str) -> &str {
    key.rsplit(['.', ']']).next().unwrap_or(key)
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
    build_tree(value, None, query, max_unit_bytes)
}

/// Cuts `value`, parsed from the JSON document `text`, into units rendered with the
/// separators `text` uses.
pub(crate) fn build_parsed(
    text: &str,
    value: &Value,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'static> {
    build_tree(value, Some(text), query, max_unit_bytes)
}

/// Cuts `value` into units, rendered with the separators of `text`, the JSON text it was
/// parsed from, if any.
fn build_tree(
    value: &Value,
    text: Option<&str>,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'static> {
    let mut builder = Builder::new(query, max_unit_bytes);
    builder.spacing = text.map_or_else(Spacing::default, Spacing::of);
    // A string of JSON in a JSON text escapes its quotes: a text without `\"` holds none.
    let may_hold_json_strings = text.is_none_or(|t| t.contains("\\\""));
    let readable = readable::copy_if_read_otherwise(value, may_hold_json_strings);
    builder.walk_value(readable.as_ref().unwrap_or(value), "", None, 0);
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
    // A dump of tables, one message each as column names and rows of cells, or batches of
    // records, one array per line, are read as one document of their records.
    let document = messages::columnar(&messages).or_else(|| messages::batched(&messages));
    if let Some(records) = document {
        builder.project = true;
        builder.walk_value(&Value::Array(records), "", None, 0);
    } else {
        builder.tabulate = are_flat(&messages);
        builder.records(messages.iter(), &|_| String::new(), "", None);
    }
    for line in raw_lines {
        builder.push_raw_line(line);
    }
    builder.finish(ContentKind::JsonLines)
}

/// `item` as a map of records, when it is one: each member an object mostly of scalars (a
/// deeper map is a tree of settings).
fn map_of_records<'i>(item: &'i Item<'_>) -> Option<&'i serde_json::Map<String, Value>> {
    let is_record = |value: &Value| {
        value.as_object().is_some_and(|fields| {
            let scalars = fields
                .values()
                .filter(|v| !v.is_object() && !v.is_array())
                .count();
            scalars * 2 > fields.len()
        })
    };
    match item {
        Item::Parsed(value) => value
            .as_object()
            .filter(|map| !map.is_empty() && map.values().all(is_record)),
        Item::Raw(_) => None,
    }
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
        self.spacing.apply(text, &|key| self.asks_key(key))
    }

    /// Whether the query asks for the members of key `key`: names it, or a word of it.
    fn asks_key(&self, key: &str) -> bool {
        self.query
            .is_some_and(|q| names_key(q, key) || project::key_words_named(key, q).1 > 0)
    }

    /// Appends a line that is not JSON (a stray log line between messages) as a plain line.
    fn push_raw_line(&mut self, line: &str) {
        let level = crate::methods::extract::doc::level_from_words(line);
        self.push(
            line,
            Unit {
                level,
                prior: if level == Level::Error { 3.0 } else { 0.0 },
                ..Unit::default()
            },
        );
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
                // Tables sent as column names and rows of cells are read as their records.
                if let Some(reshaped) = columnar::reshape_items(items) {
                    self.walk_value(&Value::Array(reshaped), path, parent, depth);
                    return;
                }
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
                if let Some(records) = columnar::as_records(map) {
                    self.walk_value(&records, path, parent, depth);
                    return;
                }
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

    /// A map from keys to short lists of records (a routing table's paths per prefix, a
    /// lock file's entries per name), read as one list of those records, each labelled with
    /// its key (`.10.0.0.0/8[0]`): rows of one table instead of a line of keys, each summed
    /// up as `[…1 items]`. Returns whether `members` were such a map.
    fn keyed_record_lists<E: Element>(
        &mut self,
        members: &[(&str, E)],
        path: &str,
        parent: Option<usize>,
    ) -> bool {
        /// Lists longer than this are collections of their own, walked one by one.
        const MAX_LIST_RECORDS: usize = 8;
        let lists: Vec<Item<'_>> = members.iter().map(|(_, v)| v.item()).collect();
        let is_record_list = |item: &Item<'_>| match item {
            Item::Parsed(value) => value.as_array().is_some_and(|records| {
                !records.is_empty()
                    && records.len() <= MAX_LIST_RECORDS
                    && records.iter().all(Value::is_object)
            }),
            Item::Raw(_) => false,
        };
        let record_lists = lists.iter().filter(|item| is_record_list(item)).count();
        if record_lists * 10 < members.len() * 8 {
            return false;
        }
        let mut rows: Vec<&Value> = Vec::new();
        let mut labels: Vec<String> = Vec::new();
        let mut others: Vec<usize> = Vec::new();
        for (i, item) in lists.iter().enumerate() {
            match item {
                Item::Parsed(value) if is_record_list(item) => {
                    for (j, record) in value.as_array().into_iter().flatten().enumerate() {
                        rows.push(record);
                        labels.push(format!(".{}[{j}]", members[i].0));
                    }
                }
                _ => others.push(i),
            }
        }
        self.records(rows.iter(), &|i| labels[i].clone(), path, parent);
        for i in others {
            let (k, v) = &members[i];
            let child = child_path(path, k);
            self.walk(&v.item(), &child, parent, 1);
        }
        true
    }

    /// A map of maps of records (a monitor's services per host: `{host: {service: {…}}}`),
    /// read as one list of those records, each labelled with both keys
    /// (`.harbor-gw.Root Partition`): rows of one table, where the one service in a warning
    /// state among a dozen stands out, instead of a few records per host, compared with none.
    /// Returns whether `members` were such a map.
    fn keyed_record_maps<E: Element>(
        &mut self,
        members: &[(&str, E)],
        path: &str,
        parent: Option<usize>,
    ) -> bool {
        let items: Vec<Item<'_>> = members.iter().map(|(_, v)| v.item()).collect();
        let Some(maps) = items.iter().map(map_of_records).collect::<Option<Vec<_>>>() else {
            return false;
        };
        if maps.len() < 2 {
            return false;
        }
        let mut rows: Vec<&Value> = Vec::new();
        let mut labels: Vec<String> = Vec::new();
        for ((outer, _), map) in members.iter().zip(maps) {
            for (inner, record) in map {
                rows.push(record);
                labels.push(format!(".{outer}.{inner}"));
            }
        }
        if rows.len() <= FEW_RECORDS {
            return false;
        }
        self.records(rows.iter(), &|i| labels[i].clone(), path, parent);
        true
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
        if members.len() >= 8 && self.keyed_record_lists(members, path, parent) {
            return;
        }
        if object_members == members.len() && self.keyed_record_maps(members, path, parent) {
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
                    .and_then(|s| render::elided_member_digest(k, s, self.query)),
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
        // The big members that are records of one family: what each repeats is said once.
        // Only of a parsed document: members parsed from text here are parsed one at a time.
        let records: Vec<&serde_json::Map<String, Value>> = big
            .iter()
            .filter_map(|&i| members[i].1.as_value()?.as_object())
            .collect();
        let shared = if records.len() == big.len() {
            shared::shared_keys(&records)
        } else {
            Vec::new()
        };
        let inline_members = members.len() - big.len();
        let unit = if line.len() > self.max_unit_bytes && inline_members >= MIN_MEMBER_LINES {
            // A map of many short values (build variables, settings, a package's scripts):
            // one line would be cut to windows that split members apart; a line a member
            // keeps each one whole, `"KEY": value`, as the original prints it.
            self.member_lines(members, &big, path, parent, depth)
        } else {
            let mut text = labelled(path, &format!("{{{line}}}"));
            if let Some(first) = records.first().filter(|_| !shared.is_empty()) {
                let common = compact(&shared::members_of(first, &shared));
                let _ = write!(text, "; each holds {common}");
            }
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
            let child = child_path(path, k);
            let first = self.units.len();
            match v.as_value().and_then(Value::as_object) {
                Some(record) if !shared.is_empty() => {
                    let own = shared::without(record, &shared);
                    self.walk_value(&own, &child, Some(unit), depth + 1);
                }
                _ => self.walk(&v.item(), &child, Some(unit), depth + 1),
            }
            // A member the query names by its key (`zod` in a dependency tree, an endpoint's
            // path) is where the answer sits, however deep.
            if first < self.units.len() && self.query.is_some_and(|q| is_key_named(q, k)) {
                self.units[first].prior += NAMED_KEY_PRIOR;
            }
        }
    }
}

#[cfg(test)]
mod tests;
