//! Sibling records of one array: a schema line, then a line per record (its row of the
//! table, its usual rendering or its projection), and the records' values as fields for
//! rarity and extremes (in `fields`).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::log_records::{LogShape, LogShapeBuilder, log_line};
use super::named::{
    count_exact_strings, is_key_named, names_a_part, names_an_entity_in, names_key,
    names_the_entity,
};
use super::raw::Element;
use super::render::{
    approx_len, for_each_scalar, json_string, labelled, named_values, named_values_where,
    render_within,
};
use super::stats::{KeyStats, KeyStatsBuilder, record_level, record_template, says_nothing};
use super::{
    Builder, FEW_RECORDS, INLINE_BYTES, MAX_CATEGORY_BYTES, NAMED_KEY_PRIOR, project, spacing,
    table,
};
use crate::methods::extract::doc::{Level, Unit};
use crate::methods::extract::query::Query;

mod fields;

/// Records are projected only when this many bytes are theirs: each projected leaf carries its
/// path, and below this the usual rendering's summary of the record reads better.
const MIN_PROJECTION_BYTES: usize = 600;
const CONTAINER_LINES: usize = 4;
/// How deep under a record [`holds_a_long_list`] looks for its list.
const MAX_LIST_DEPTH: usize = 3;
/// How deep under a record [`wraps_a_named_long_list`] follows its wrappers.
const MAX_WRAPPER_DEPTH: usize = 10;
/// Spreads a level's number over the bits of a template hash.
const LEVEL_MIX: u64 = 0x9E37_79B9_7F4A_7C15;
/// Rows of a table are given their record in full (for the room left when the whole document
/// fits) only while the document so far is up to this many times the largest unit: about
/// twice the budget, past which it cannot fit whole.
const FULLER_SOURCE_FACTOR: usize = 10;
/// Sibling records needed for the lists their rows show to count as values, rare or lacking.
const MIN_LISTED_RECORDS: usize = 20;
/// Objects a record's members must hold, as most of its members, for it to be a map of
/// records keyed by name: a tree of settings has a few sections, not dozens.
const MIN_KEYED_RECORDS: usize = 24;
/// Records a list needs for its schema line to be chosen before anything else.
const MIN_PINNED_RECORDS: usize = 4;
/// Prior of a record whose values say it failed.
const ERROR_PRIOR: f32 = 4.0;
/// The prior of a record in a warning state.
const WARNING_PRIOR: f32 = 2.0;
/// Prior of a record per short field value (up to two) that holds a string the query names.
const NAMED_VALUE_PRIOR: f32 = 3.0;
/// Records that must hold an exact string of the query for it to name a group of them (the
/// `pl.tablex` specs among a run's successes) rather than one record.
const GROUP_RECORDS: usize = 4;

/// Whether `item`, larger than `size`, is mostly lists of its own (members that are lists
/// holding half its size or more: a home's rooms, modules and schedules), or is itself a map
/// of many objects keyed by name or id (a PDF's objects, a lock file's packages): a container
/// of records, not a tree of settings.
fn holds_its_records(item: &Value, size: usize, query: Option<&Query>) -> bool {
    let Value::Object(map) = item else {
        return item.is_array();
    };
    let whole = approx_len(item, usize::MAX);
    let lists: usize = map
        .values()
        .filter(|v| v.is_array())
        .map(|v| approx_len(v, whole))
        .sum();
    let objects = map.values().filter(|v| v.is_object()).count();
    lists * 2 >= whole.max(size)
        || (objects >= MIN_KEYED_RECORDS && objects * 4 >= map.len() * 3)
        || query.is_some_and(|q| holds_a_named_long_list(item, whole, q))
        || query.is_some_and(|q| wraps_a_named_long_list(item, whole, q))
}

/// Whether `item`'s `whole` bytes are, through a chain of wrappers each of one member holding
/// most of them, one long list of records the query names by a key on the way or by a value
/// of one of them: a recorded exchange whose response body is a page of an API's results
/// (`response.body.data.repository.issues.nodes`, for "issue 1463"). The wrappers are an
/// envelope; what it carries is records. A list named by nothing is bookkeeping beside what
/// the query asks (a deployment's `metadata.managedFields`).
fn wraps_a_named_long_list(item: &Value, whole: usize, query: &Query) -> bool {
    list_under_wrappers(item, whole, query, MAX_WRAPPER_DEPTH, 4).is_some_and(|(items, named)| {
        is_long_record_list(items)
            && (named || items.iter().any(|record| names_a_value_of(query, record)))
    })
}

/// Whether a scalar of `record`, two levels of objects down, holds an exact string of the
/// query (`1463` of "issue 1463", an id, a path).
fn names_a_value_of(query: &Query, record: &Value) -> bool {
    let mut named = false;
    for_each_scalar(record, "", 0, &mut |_, value| {
        named |= match value {
            Value::String(s) => s.len() <= MAX_CATEGORY_BYTES && query.mentions(s),
            Value::Number(n) => query.mentions(&n.to_string()),
            _ => false,
        };
    });
    named
}

/// Whether most of `item`'s `whole` bytes are one long list of records, reached through
/// members that each hold most of them, one of whose keys the query names (a data package's
/// resource, whose `schema.fields` are a thousand field descriptors, for "the last field of
/// the schema"). A list the query does not name is bookkeeping beside what it asks (a
/// deployment's `metadata.managedFields`).
fn holds_a_named_long_list(item: &Value, whole: usize, query: &Query) -> bool {
    list_under_wrappers(item, whole, query, MAX_LIST_DEPTH, 2)
        .is_some_and(|(items, named)| named && is_long_record_list(items))
}

/// The list reached from `item` (of `whole` bytes) through at most `depth` members, each the
/// biggest of its map and holding at least `(share - 1) / share` of the bytes (one half for 2,
/// three quarters for 4), and whether the query names a key on the way.
fn list_under_wrappers<'v>(
    item: &'v Value,
    whole: usize,
    query: &Query,
    depth: usize,
    share: usize,
) -> Option<(&'v [Value], bool)> {
    let mut at = item;
    let mut named = false;
    for _ in 0..depth {
        let Value::Object(map) = at else {
            break;
        };
        let (key, biggest) = map.iter().max_by_key(|(_, v)| approx_len(v, whole))?;
        if approx_len(biggest, whole) * share < whole * (share - 1) {
            return None;
        }
        named |= is_key_named(query, key);
        at = biggest;
    }
    at.as_array().map(|items| (items.as_slice(), named))
}

/// Whether `items` are more than a few records.
fn is_long_record_list(items: &[Value]) -> bool {
    items.len() > FEW_RECORDS && items.iter().all(Value::is_object)
}

impl Builder<'_> {
    /// Sibling records: a schema line, then one line per record. Records given as text are
    /// parsed once for the schema and once for their line, one at a time.
    pub(super) fn records<E: Element>(
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
        let mut log_shape = LogShapeBuilder::default();
        let mut sizes = Sizes::new(CONTAINER_LINES * self.max_unit_bytes);
        for item in items.clone() {
            count += 1;
            item.with_value(&mut |v| {
                sizes.add(v);
                stats.add(v);
                log_shape.add(v);
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
        // One held by a few of them names that group, each of whose rows reads as well as
        // the whole record when the row shows the string.
        let grouped: Vec<bool> = exact_records
            .iter()
            .zip(&common)
            .map(|(&k, &common)| k >= GROUP_RECORDS && !common)
            .collect();
        let stats = stats.finish();
        let table = columns.finish(self.query);
        let log_shape = log_shape.finish();
        let mut schema_text = stats.describe(path, count);
        if let Some(table) = &table {
            let _ = write!(schema_text, "; {}", table.header());
        } else if let Some(shape) = &log_shape {
            let _ = write!(schema_text, "; {}", shape.header());
        }
        let schema = self.push(
            &schema_text,
            Unit {
                parent: parent.into(),
                // The schema of many records frames them; that of a function's two
                // parameters does not, and pinned with its path it would cost as much as the
                // records the query asks for, once per function.
                pinned: count >= MIN_PINNED_RECORDS,
                ..Unit::default()
            },
        );
        self.blocks += 1;
        self.units.reserve(count);
        let first_field = self.fields.len();
        let mut siblings = Siblings {
            stats: &stats,
            table: table.as_ref(),
            common: &common,
            grouped: &grouped,
            log_shape: log_shape.as_ref(),
            count,
            sizes,
            schema,
            first_field,
            field_index: HashMap::new(),
        };
        for (i, item) in items.enumerate() {
            item.with_value(&mut |item| self.record(item, &label(i), path, &mut siblings));
        }
        for field in &mut self.fields[first_field..] {
            if says_nothing(field) {
                field.clear();
            } else {
                field.shrink_to_fit();
            }
        }
    }

    /// Whether the query asks for a scalar member of `item` by its key (or a word of it).
    fn asks_a_member_of(&self, item: &Value) -> bool {
        item.as_object().is_some_and(|members| {
            members
                .iter()
                .any(|(key, value)| !value.is_object() && !value.is_array() && self.asks_key(key))
        })
    }

    /// One record's line, and its field values for rarity and extremes.
    fn record(&mut self, item: &Value, label: &str, path: &str, siblings: &mut Siblings<'_>) {
        if self.walks_into(item, label, siblings) {
            self.walk_value(item, &format!("{path}{label}"), Some(siblings.schema), 2);
            return;
        }
        // A log line states its level; other records say theirs in their values.
        let level = siblings
            .log_shape
            .and_then(|shape| shape.level_of(item))
            .unwrap_or_else(|| record_level(item));
        let named = self.query.map_or(0, |q| {
            named_values(q, item, siblings.common) + usize::from(names_the_entity(q, item))
        });
        let shown = self.record_body(item, label, level, named, siblings);
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
        let mut text = labelled(&label, &shown.body);
        if self.spacing.is_pretty() && (named > 0 || self.asks_a_member_of(item)) {
            // A pretty-printed record is one member a line, and an answer quotes a run of
            // them (`"count": 104, "line_number": 55`), which reads spaced once the line
            // breaks are taken as spaces. A record the query names by a value, or whose
            // scalar member it asks for by key, keeps the separators of its own members
            // spaced, not just the asked ones'; its nested values stay compact, as they cost
            // tokens and are seldom quoted with it.
            text = spacing::with_members_spaced(&text);
        }
        let prior = match level {
            // A log line's level is stated, and weighs as a log's stated level does.
            _ if siblings.log_shape.is_some() => {
                crate::methods::extract::kinds::log::level_prior(level, true)
            }
            Level::Error => ERROR_PRIOR,
            // A record in a warning state (an alarm raised among clear ones) is the next
            // thing an agent reads after a failure.
            Level::Warn => WARNING_PRIOR,
            _ => 0.0,
        } + NAMED_VALUE_PRIOR * named.min(2) as f32
            + if key_is_named { NAMED_KEY_PRIOR } else { 0.0 };
        let unit = self.push(
            &text,
            Unit {
                parent: Some(siblings.schema).into(),
                // Errors and warnings of one shape are two templates, as in a log: the first
                // and last error then count as the run's edges, not a note after it.
                template: Some(crate::methods::extract::doc::template_id(
                    self.template_of(item, siblings) ^ (level as u64).wrapping_mul(LEVEL_MIX),
                )),
                level,
                prior,
                ..Unit::default()
            },
        );
        // Only while the document may still fit whole: past that no row is ever shown in full.
        if let Some(whole) = shown.whole
            && self.source.len() <= FULLER_SOURCE_FACTOR * self.max_unit_bytes
        {
            // The row first, so a head of this keeps what the row shows; then the whole record.
            let fuller = format!("{text}\n{}", labelled(&label, &whole));
            self.fuller.push(unit, &self.respaced(&fuller));
        }
        self.record_fields(item, unit, shown.list_cells.as_deref(), siblings);
    }

    /// The shape of `item` among its siblings: its keys and categories, or, for a log line,
    /// its message's words, as a log's lines are told apart (a refused upload is no repeat
    /// of a missing kernel because both are warnings of one logger).
    fn template_of(&self, item: &Value, siblings: &Siblings<'_>) -> u64 {
        match siblings.log_shape.and_then(|shape| shape.message_of(item)) {
            Some(message) => crate::methods::extract::doc::template_of(message).get(),
            None => record_template(item, siblings.stats),
        }
    }

    /// Whether a record is walked as a tree of its own rather than made one line.
    fn walks_into(&self, item: &Value, label: &str, siblings: &Siblings<'_>) -> bool {
        let count = siblings.count;
        let container = CONTAINER_LINES * self.max_unit_bytes;
        if siblings.sizes.is_outsized(item) {
            // The one record a document's worth, larger than all its siblings together (a
            // medical image's content tree beside its forty short header fields): it is
            // where the document's substance is, and one line would show its first leaves.
            return true;
        }
        if count <= FEW_RECORDS
            && approx_len(item, container) > container
            && holds_its_records(item, container, self.query)
        {
            // A few records, each a document's worth that is mostly a list of records of its
            // own (the warnings of one linted file, a package's tree of dependencies): one
            // line, or a projection, would show a sliver of each. Each is walked instead, so
            // its inner records become rows of their own. A record that is a deep tree of
            // settings (a cluster's deployment) is projected to the leaves the query names.
            return true;
        }
        // A map's member a document's worth (a source file's declarations, keyed by the
        // file) that holds an entity the query names by its name: walked, so that entity's
        // own lines can be kept. The items of an array are alike, and projected alike.
        if self.project
            && label.starts_with('.')
            && approx_len(item, container) > container
            && self.query.is_some_and(|q| names_an_entity_in(q, item))
        {
            return true;
        }
        // A record too big for its line that the query names (by its key or a key inside
        // it): a line per part, so the part that answers is kept whole with its path instead
        // of being cut to fit one line, where the members that fit first (not the asked ones)
        // would keep their text.
        let cap = self.record_cap();
        self.project
            && self
                .query
                .is_some_and(|q| names_a_part(q, label, item) && approx_len(item, cap) > cap)
    }

    /// Records are many: a smaller cap than a unit's fits more of them, and the shortening
    /// keeps the fields the query names.
    fn record_cap(&self) -> usize {
        (self.max_unit_bytes * 2 / 3).max(INLINE_BYTES)
    }

    /// What a record's line shows: its row of the table, its usual rendering, or its
    /// projection to what the query touches.
    fn record_body(
        &self,
        item: &Value,
        label: &str,
        level: Level,
        named: usize,
        siblings: &Siblings<'_>,
    ) -> RecordBody {
        let (stats, table, common, count) = (
            siblings.stats,
            siblings.table,
            siblings.common,
            siblings.count,
        );
        let exclude = |k: &str| stats.constant.contains_key(k);
        let notable = |k: &str, v: &Value| stats.is_notable(k, v);
        let cap = self.record_cap();
        // A map member (a shape's documentation, keyed by name) is read for its content, so
        // its long strings keep the query's sentences; the items of an array are alike and
        // compared by their heads, and windows in each would blur which one the query means.
        let windows = label.starts_with('.');
        let render = |v: &Value, cap: usize| {
            render_within(v, cap, (self.query, windows, common), &exclude, &notable)
        };
        let usual = siblings
            .log_shape
            .and_then(|shape| log_line(item, shape, cap, &render))
            .unwrap_or_else(|| render(item, cap));
        let key_named = label
            .strip_prefix('.')
            .is_some_and(|k| self.query.is_some_and(|q| names_key(q, k)));
        // A record the query singles out (by a value it names, a leaf deep inside, or its
        // failure) keeps its full rendering; the others are a row of the table. So is one
        // named only as one of a group, when its row shows the name (checked below).
        let named_in_group = named > 0
            && self.query.is_some_and(|q| {
                let alone = |i: usize| !siblings.common[i] && !siblings.grouped[i];
                named_values_where(q, item, alone) == 0
            });
        let as_row = (named == 0 || named_in_group) && !key_named && level != Level::Error;
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
        // A row whose every cell is empty (a record with none of the table's columns) says
        // nothing: the record shows itself instead.
        let row = cells
            .as_deref()
            .filter(|cells| (as_row || projectable) && cells.iter().any(|c| !c.is_empty()))
            .map(table::row_of);
        let as_row = as_row
            && (!named_in_group
                || row.as_deref().is_some_and(|row| {
                    self.query
                        .is_some_and(|q| q.mentions_where(row, |i| siblings.grouped[i]))
                }));
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
                // The rare query words in the record, found once for both questions.
                let words = std::cell::OnceCell::new();
                let hidden = (!table.singles_out_by(item, self.query, &row, &words))
                    .then(|| table.hidden_asked_members_by(item, self.query, &key_named, &words));
                match hidden {
                    // Singled out by a word its row leaves out: the whole record.
                    None => (usual, None),
                    Some(hidden) if hidden.is_empty() => (row, Some(usual)),
                    // The row, then what it hides that is asked for: shorter than the whole
                    // record, which is kept for when there is room.
                    Some(hidden) => {
                        let extended = table::row_with_members(&row, &hidden);
                        if extended.len() < usual.len() {
                            (extended, Some(usual))
                        } else {
                            (usual, None)
                        }
                    }
                }
            }
            (_, projected) => (projected.unwrap_or(usual), None),
        };
        RecordBody {
            body,
            whole,
            list_cells: cells.filter(|_| lists_are_values),
        }
    }
}

/// What the records of one array share while each becomes a line.
struct Siblings<'a> {
    stats: &'a KeyStats,
    table: Option<&'a table::Table>,
    /// Which of the query's exact strings most records hold.
    common: &'a [bool],
    /// Which of them a few records hold: a group the query names.
    grouped: &'a [bool],
    /// The members that make the records log lines, when they are.
    log_shape: Option<&'a LogShape>,
    count: usize,
    sizes: Sizes,
    /// The array's schema line, the parent of every record.
    schema: usize,
    /// Where the records' fields start in the builder's, and each key's index among them.
    first_field: usize,
    field_index: HashMap<String, usize>,
}

/// A record's line before its label: the row or rendering shown, the whole record when only
/// its row is shown, and the cells of its lists when those count as values.
struct RecordBody {
    body: String,
    whole: Option<String>,
    list_cells: Option<Vec<String>>,
}

/// How the records' sizes compare: whether one of them is the document's substance.
struct Sizes {
    /// A record over this many bytes is a document's worth.
    container: usize,
    /// How many records are over `container`.
    outsized: usize,
    /// The bytes of the records up to `container`.
    rest: usize,
}

impl Sizes {
    fn new(container: usize) -> Self {
        Sizes {
            container,
            outsized: 0,
            rest: 0,
        }
    }

    fn add(&mut self, record: &Value) {
        let len = approx_len(record, self.container);
        if len > self.container {
            self.outsized += 1;
        } else {
            self.rest += len;
        }
    }

    /// Whether `record` is the one record over a document's worth (of two such, neither is
    /// the whole substance), larger than all its siblings together, by the many values it
    /// holds (a record made big by one long text is one value, and reads best as one line
    /// with a window on what the query names).
    fn is_outsized(&self, record: &Value) -> bool {
        let limit = self.rest.max(self.container);
        self.outsized == 1
            && approx_len(record, limit) > limit
            && holds_values(record, MIN_OUTSIZED_VALUES)
    }
}

/// Values a record must hold to be walked as the document's substance.
const MIN_OUTSIZED_VALUES: usize = 32;

/// Whether `value` holds at least `least` scalars, however deep.
fn holds_values(value: &Value, least: usize) -> bool {
    fn count(v: &Value, left: &mut usize) {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Object(map) => Box::new(map.values()),
            Value::Array(items) => Box::new(items.iter()),
            _ => {
                *left = left.saturating_sub(1);
                return;
            }
        };
        for child in children {
            if *left == 0 {
                return;
            }
            count(child, left);
        }
    }
    let mut left = least;
    count(value, &mut left);
    left == 0
}
