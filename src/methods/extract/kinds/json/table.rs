//! Arrays of records of one shape (API list responses: issues, pods, packages, search hits) as
//! a table: the columns are chosen once per array by the shape of their values — short, present
//! in most records, and either telling records apart (ids, names, titles, urls) or sorting them
//! into a few kinds (states) — and each record the query does not single out is one line of
//! values under a header naming the columns. The budget then covers many more records.

use std::cmp::Ordering;

use memchr::memmem;
use serde_json::Value;
use xxhash_rust::xxh3::Xxh3DefaultBuilder;

use super::named::{query_key_words_in, query_values_in, query_words_in};
use crate::methods::extract::query::Query;
use crate::methods::extract::tree::noise::opaque_share;
use cells::{Cell, for_each_cell, shown_cell};
pub(super) use cells::{row_of, row_with_members};

mod asked;
mod cells;

/// Fewer records than this read as well in full.
pub(super) const MIN_RECORDS: usize = 4;
/// Records sampled to choose the columns: enough to see the shape, and memory stays bounded.
const SAMPLE: usize = 512;
/// Records looked at for values built from another column's: a relation of the shape shows in
/// the first few, and the search is quadratic in a record's fields.
const DERIVED_SAMPLE: usize = 64;
/// Bytes a row may spend on average: what a record costs as a line of a table.
const ROW_BYTES: usize = 200;
/// A table is used only when a record in full is this many times its row.
const MIN_SAVING: usize = 3;
/// The bytes of a row, and the columns, that columns the query does not name may take when
/// it names some.
const UNNAMED_ROW_BYTES: usize = 80;
const MAX_UNNAMED_COLUMNS: usize = 6;
/// Values longer than this on average are content (a body, a description), not a column.
const MAX_COLUMN_BYTES: usize = 90;
/// Records shorter than this on average are lines already.
const MIN_RECORD_BYTES: usize = 300;
/// A query word held by at most one record in this many singles those records out.
const RARE_SHARE: usize = 4;
/// The same for a query word in the records' keys: a key is rarer than a value before it sets
/// its records apart, as records of a few kinds (a fix and a sky report) each have their own.
const RARE_KEY_SHARE: usize = 20;
/// Records needed for a key to be rare among them.
const MIN_RARE_KEY_RECORDS: usize = 2 * RARE_KEY_SHARE;
/// Columns fewer than this say too little about a record.
const MIN_COLUMNS: usize = 2;
/// Values up to this long are searched for another value by scanning for its first byte;
/// longer ones by a two-way search, linear whatever the text.
const SHORT_HAYSTACK: usize = 256;

/// Maps of column paths and values, hashed fast: they are filled once per sampled field, and
/// nothing here depends on their order.
type HashMap<K, V> = std::collections::HashMap<K, V, Xxh3DefaultBuilder>;
type HashSet<K> = std::collections::HashSet<K, Xxh3DefaultBuilder>;

/// How a column earns its place: what its values tell about a record.
const NAMES_A_RECORD: i32 = 4;
const SORTS_RECORDS: i32 = 4;
const LIST_OF_NAMES: i32 = 3;
const LINK: i32 = 2;
const NUMBER: i32 = 2;
const OTHER: i32 = 1;
const NESTED: i32 = -1;
const KEY_NAMED: i32 = 5;
/// A record's own short text field keyed as its name (`name`, `jobName`): what a row is read
/// by, before other fields of its score. A longer one (an issue's `title`) is a sentence that
/// would crowd the row.
const NAMING_KEY: i32 = 1;
const MAX_NAME_BYTES: usize = 32;

/// The columns of one array of records.
pub(super) struct Table {
    columns: Vec<String>,
    /// The other text fields of the lists a column shows a field of, the most telling first:
    /// what a row shows where the record's items lack the column's field.
    stand_ins: Vec<String>,
    /// Query words few records hold: a record holding one is singled out by the query.
    rare_words: HashSet<String>,
    /// Query words few records hold as the whole value of a top-level member (a `method` of
    /// `delete` among `get`s and `post`s), though many may hold them deeper (`delete_repo`
    /// in every response's scopes): the query names such a record by what it is.
    rare_values: HashSet<String>,
    /// Query words in keys very few records have (the one doc with `_attachments`, the one
    /// change marked `deleted`): the query names such a record by what it holds.
    rare_key_words: HashSet<String>,
}

/// What the sampled records say about one candidate column.
#[derive(Default)]
struct ColumnStats {
    /// Order of first appearance.
    order: usize,
    present: usize,
    bytes: usize,
    distinct: HashSet<u64>,
    strings: usize,
    numbers: usize,
    floats: usize,
    links: usize,
    opaque: usize,
    /// Records where this column's value contains another string column's value (a link
    /// built from a login) or equals it, by that other column; among the first
    /// [`DERIVED_SAMPLE`] records, the `checked` ones that have this column.
    derived: HashMap<String, usize>,
    checked: usize,
}

/// Column statistics gathered one record at a time.
#[derive(Default)]
pub(super) struct TableBuilder {
    columns: HashMap<String, ColumnStats>,
    records: usize,
    record_bytes: usize,
    /// Per query word, how many sampled records hold it.
    word_records: HashMap<String, usize>,
    /// Per query word, how many sampled records hold it as a top-level member's whole value.
    value_records: HashMap<String, usize>,
    /// Per query word, how many sampled records hold it in a key.
    key_word_records: HashMap<String, usize>,
}

impl TableBuilder {
    /// Adds one record to the sample (records past the sample only count).
    pub(super) fn add(&mut self, item: &Value, query: Option<&Query>) {
        self.records += 1;
        // Every record's keys count: records of another shape may all come late (the comets
        // numbered after the unnumbered ones), and a key rare in the sample is common there.
        if let Some(q) = query {
            for word in query_key_words_in(item, q) {
                *self.key_word_records.entry(word).or_default() += 1;
            }
        }
        if self.records > SAMPLE {
            return;
        }
        if let Some(q) = query {
            for word in query_words_in(item, q) {
                *self.word_records.entry(word).or_default() += 1;
            }
            for word in query_values_in(item, q) {
                *self.value_records.entry(word).or_default() += 1;
            }
        }
        self.record_bytes += super::approx_len(item, 64 * 1024);
        let mut cells = Vec::new();
        for_each_cell(item, &mut |path, value, text| {
            cells.push((path.to_owned(), value, text))
        });
        let check_derived = self.records <= DERIVED_SAMPLE;
        // The values another value may be built from: strings of a few bytes at least.
        let sources: Vec<bool> = if check_derived {
            cells
                .iter()
                .map(|(_, value, text)| {
                    matches!(value, Cell::Scalar(Value::String(_))) && text.len() >= 3
                })
                .collect()
        } else {
            Vec::new()
        };
        for (place, (path, value, text)) in cells.iter().enumerate() {
            // Looked up before inserting: the path is cloned only for a new column.
            if !self.columns.contains_key(path) {
                let order = self.columns.len();
                let stats = ColumnStats {
                    order,
                    ..ColumnStats::default()
                };
                self.columns.insert(path.clone(), stats);
            }
            let Some(stats) = self.columns.get_mut(path) else {
                continue;
            };
            stats.present += 1;
            stats.bytes += text.len();
            stats
                .distinct
                .insert(xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
            match value {
                Cell::Scalar(Value::String(s)) => {
                    stats.strings += 1;
                    stats.links += usize::from(s.contains("://"));
                    stats.opaque += usize::from(opaque_share(s) >= 0.5);
                }
                Cell::Scalar(Value::Number(n)) => {
                    stats.numbers += 1;
                    stats.floats += usize::from(n.is_f64());
                }
                _ => {}
            }
            if !check_derived {
                continue;
            }
            stats.checked += 1;
            if let Cell::Scalar(Value::String(s)) = value {
                for (other_place, ((other, _, other_text), _)) in cells
                    .iter()
                    .zip(&sources)
                    .enumerate()
                    .filter(|(_, (_, source))| **source)
                {
                    // Cheapest test first: a longer value is never inside this one, and one
                    // as long only when equal. Of two equal values the one under the longer
                    // key is built from the other (a `fancy_title` from its `title`); of keys
                    // as long, the later from the earlier.
                    let (needle, haystack) = (other_text.as_bytes(), s.as_bytes());
                    let built_from = match needle.len().cmp(&haystack.len()) {
                        Ordering::Greater => false,
                        Ordering::Equal => {
                            needle == haystack && is_source_key((other_place, other), (place, path))
                        }
                        Ordering::Less => other != path && contains(haystack, needle),
                    };
                    if built_from {
                        *stats.derived.entry(other.clone()).or_default() += 1;
                    }
                }
            }
        }
    }

    /// The columns, or `None` when the records are few, already short, or have too few
    /// columns worth showing.
    pub(super) fn finish(self, query: Option<&Query>) -> Option<Table> {
        let n = self.records.min(SAMPLE);
        if self.records < MIN_RECORDS {
            return None;
        }
        let mut candidates: Vec<(i32, usize, usize, &String)> = Vec::new();
        // Columns the query names or ranks by are what a row is read for: the others fill a
        // narrower row beside them, so that more rows fit.
        let mut named: HashSet<&str> = HashSet::default();
        for (path, stats) in &self.columns {
            if let Some(score) = score(path, stats, self.empty_lists(path), n, query) {
                candidates.push((score, stats.bytes / stats.present.max(1), stats.order, path));
                if query.is_some_and(|q| {
                    key_named_share(path, q) == KEY_NAMED || q.ranks(super::last_segment(path))
                }) {
                    named.insert(path);
                }
            }
        }
        candidates.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(&b.2)));
        // A value built from another column's value (a link holding a login) says nothing new,
        // unless the query asks for it by its key ("the package URL" of a `purl`). A record's
        // own field is not built from a nested one: a test's full `name` holds its
        // `element.name` and says more, its group.
        let depth = |path: &str| path.bytes().filter(|&b| b == b'.').count();
        candidates.retain(|c| {
            query.is_some_and(|q| key_named_share(c.3, q) > 0)
                || !self.columns[c.3].derived.iter().any(|(source, &k)| {
                    depth(source) <= depth(c.3)
                        && k * 2 >= self.columns[c.3].checked
                        && self.columns.get(source).is_some_and(|s| {
                            score(source, s, self.empty_lists(source), n, query).is_some()
                        })
                })
        });
        let mut chosen: Vec<(usize, &String)> = Vec::new();
        let mut width = 0;
        let mut expected_width = 0;
        // One link and one field per list of objects: a second link to the record (its API
        // address beside its page) or a label's colour beside its name says little more. The
        // link kept is the record's own (not a nested object's: an avatar) and the shortest:
        // the page a reader opens more than the API's address.
        let is_link = |stats: &ColumnStats| stats.links * 2 > stats.present;
        let shortest_link = candidates
            .iter()
            .filter(|c| is_link(&self.columns[c.3]))
            .min_by_key(|c| (c.3.contains('.'), c.1, c.2))
            .map(|c| c.3);
        // A list's field is its most telling one: of equal scores, the one of most distinct
        // values (a license's `id`, not its `acknowledgement` that is always "declared").
        let mut list_field: HashMap<&str, (i32, usize, &str)> = HashMap::default();
        for &(score, _, _, path) in &candidates {
            if let Some(list) = list_of(path) {
                let distinct = self.columns[path].distinct.len();
                let best = list_field.entry(list).or_insert((score, distinct, path));
                if score == best.0 && distinct > best.1 {
                    *best = (score, distinct, path);
                }
            }
        }
        let mut lists_chosen: HashSet<&str> = HashSet::default();
        // A second link the row leaves out names nothing shown.
        let names_columns = candidates.iter().any(|c| {
            named.contains(c.3.as_str())
                && (!is_link(&self.columns[c.3]) || Some(c.3) == shortest_link)
        });
        // The field a row is read by (a record's `name`, or its one object's) stays beside
        // the named columns: rows no reader can tell apart answer nothing.
        if names_columns
            && let Some(at) = candidates
                .iter()
                .position(|c| self.names_each_record(c.3, n))
        {
            let naming = candidates.remove(at);
            named.insert(naming.3);
            candidates.insert(0, naming);
        }
        let (mut unnamed_width, mut unnamed_columns) = (0, 0);
        for (_, bytes, order, path) in candidates {
            let stats = &self.columns[path];
            let list = list_of(path);
            if (is_link(stats) && Some(path) != shortest_link)
                || list.is_some_and(|l| lists_chosen.contains(l) || list_field[l].2 != path)
            {
                continue;
            }
            if width + bytes + 1 > ROW_BYTES {
                continue;
            }
            if names_columns && !named.contains(path.as_str()) {
                if unnamed_width + bytes + 1 > UNNAMED_ROW_BYTES
                    || unnamed_columns == MAX_UNNAMED_COLUMNS
                {
                    continue;
                }
                unnamed_width += bytes + 1;
                unnamed_columns += 1;
            }
            width += bytes + 1;
            // A column few records hold widens few rows.
            expected_width += stats.bytes / n.max(1) + 1;
            lists_chosen.extend(list);
            chosen.push((order, path));
        }
        let average = self.record_bytes / n.max(1);
        if chosen.len() < MIN_COLUMNS
            || average < MIN_RECORD_BYTES
            || average < MIN_SAVING * expected_width.max(1)
        {
            return None;
        }
        chosen.sort();
        let rare = |counts: HashMap<String, usize>, share: usize| {
            counts
                .into_iter()
                .filter(|(_, count)| count * share <= n)
                .map(|(word, _)| word)
                .collect()
        };
        let columns: Vec<String> = chosen.into_iter().map(|(_, p)| p.clone()).collect();
        // Per list column, its list's other text fields, the most varied first, then the
        // longest (an `expression` before an `acknowledgement` that is always "declared").
        let mut stand_ins: Vec<(String, (usize, usize))> = Vec::new();
        for (path, stats) in &self.columns {
            let list = list_of(path);
            if list.is_some()
                && !columns.contains(path)
                && columns.iter().any(|c| list_of(c) == list)
            {
                let average = stats.bytes / stats.present.max(1);
                stand_ins.push((path.clone(), (stats.distinct.len(), average)));
            }
        }
        stand_ins.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        Some(Table {
            columns,
            stand_ins: stand_ins.into_iter().map(|(p, _)| p).collect(),
            rare_words: rare(self.word_records, RARE_SHARE),
            rare_values: rare(self.value_records, RARE_SHARE),
            // Among a few records, each with keys of its own (a tracer's maps, one a record),
            // each key is as rare as the next.
            rare_key_words: if n >= MIN_RARE_KEY_RECORDS {
                rare(self.key_word_records, RARE_KEY_SHARE)
            } else {
                HashSet::default()
            },
        })
    }
}

impl TableBuilder {
    /// Whether the column at `path` names each of the `n` sampled records: a short text under
    /// a naming key (`name`, `id`, `title`), outside any list, in nearly every record, each
    /// value its own.
    fn names_each_record(&self, path: &str, n: usize) -> bool {
        let stats = &self.columns[path];
        !path.contains("[]")
            && super::render::is_naming_key(super::last_segment(path))
            && stats.strings * 4 >= n * 3
            && stats.distinct.len() * 4 >= n * 3
            && stats.bytes / stats.present.max(1) <= MAX_COLUMN_BYTES
    }

    /// For a column of a list of objects (`labels[].name`), how many records hold that list
    /// empty: the column is present there too, with nothing in it.
    fn empty_lists(&self, path: &str) -> usize {
        match list_of(path) {
            Some(list) => self
                .columns
                .get(&format!("{list}[]"))
                .map_or(0, |c| c.present),
            None => 0,
        }
    }
}

/// A column's score, or `None` when it is no column: rare, constant, long, or opaque.
/// `empty` records hold the column's list empty.
fn score(
    path: &str,
    stats: &ColumnStats,
    empty: usize,
    n: usize,
    query: Option<&Query>,
) -> Option<i32> {
    let present = stats.present + empty;
    // An empty list is one more value: `bug` beside nothing sorts records in two.
    let distinct = stats.distinct.len() + usize::from(empty > 0);
    let average = stats.bytes / present.max(1);
    let named = query.map_or(0, |q| key_named_share(path, q));
    // A column the query names (`errormsg` of "with what error message") is shown however
    // few records hold it: those few are what it asks about.
    let shown = if named == KEY_NAMED {
        present > 0
    } else {
        present * 2 >= n && distinct > 1
    };
    if !shown || average > MAX_COLUMN_BYTES || average == 0 {
        return None;
    }
    // An opaque value (a digest) says nothing to a reader, unless the query asks for it by
    // its key ("what is that signature").
    if stats.opaque * 2 > present && named < KEY_NAMED {
        return None;
    }
    let list = path.contains("[]");
    let varied = distinct * 2 >= present;
    let category = distinct * 3 <= present.max(3);
    let mut score = if list {
        LIST_OF_NAMES
    } else if stats.links * 2 > present {
        LINK
    } else if stats.floats * 2 > present {
        OTHER
    } else if stats.numbers * 2 > present {
        NUMBER
    } else if stats.strings * 2 > present && (varied || category) {
        if varied {
            NAMES_A_RECORD
        } else {
            SORTS_RECORDS
        }
    } else {
        OTHER
    };
    if path.contains('.') {
        score += NESTED;
    } else if !list
        && stats.strings * 2 > present
        && average <= MAX_NAME_BYTES
        && super::render::is_naming_key(path)
    {
        score += NAMING_KEY;
    }
    Some(score + named)
}

/// The score a column's key earns by naming query words: [`KEY_NAMED`] times the share of
/// its words the query names. The last key says what the value is: `avatar_url` is an image
/// more than a URL; in a list of names (`labels[].name`) the list's key says it.
fn key_named_share(path: &str, query: &Query) -> i32 {
    let last = match list_of(path) {
        Some(list) => list.rsplit('.').next().unwrap_or(list),
        None => super::last_segment(path),
    };
    let (named, words) = query.key_words_named(last);
    KEY_NAMED * named as i32 / words.max(1) as i32
}

/// Of two columns holding equal values, whether `source` is the one the other is built
/// from: the one under the shorter key (a `title` beside its `fancy_title`), or of keys as
/// long, the one that comes first in the record. Each is given with its place there.
fn is_source_key(source: (usize, &str), other: (usize, &str)) -> bool {
    let key_len = |path: &str| super::last_segment(path).len();
    (key_len(source.1), source.0) < (key_len(other.1), other.0)
}

/// Whether `needle` (not empty) occurs in `haystack`. Record values are mostly short, where
/// building a searcher costs more than scanning for the needle's first byte.
fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let Some((&first, _)) = needle.split_first() else {
        return true;
    };
    if haystack.len() > SHORT_HAYSTACK {
        return memmem::find(haystack, needle).is_some();
    }
    let Some(last_start) = haystack.len().checked_sub(needle.len()) else {
        return false;
    };
    memchr::memchr_iter(first, &haystack[..=last_start])
        .any(|at| haystack[at..].starts_with(needle))
}

/// The list a column's path reads a field of: `labels` of `labels[].name`.
fn list_of(path: &str) -> Option<&str> {
    path.split_once("[].").map(|(list, _)| list)
}

impl Table {
    /// Whether `word`, a query word, is held by few of the records.
    pub(super) fn is_rare_word(&self, word: &str) -> bool {
        self.rare_words.contains(word)
    }

    /// The header: the columns' paths, in the order the cells follow.
    pub(super) fn header(&self) -> String {
        format!("one line per record: {}", self.columns.join(" | "))
    }

    /// Whether a column shows a list's field (`labels[].name`).
    pub(super) fn has_list_column(&self) -> bool {
        self.columns.iter().any(|c| c.contains("[]"))
    }

    /// Calls `f` with each list column (`labels[].name`) and its text among a record's
    /// `cells` (see [`Table::cells`]), empty where it has none.
    pub(super) fn list_cells(&self, cells: &[String], f: &mut dyn FnMut(&str, &str)) {
        for (column, text) in self.columns.iter().zip(cells) {
            if column.contains("[]") {
                f(column, text);
            }
        }
    }

    /// `item`'s cells, each shortened. A list column whose field the record's items lack
    /// shows another text field of theirs (a license given as an `expression` where the
    /// others give an `id`).
    pub(super) fn cells(&self, item: &Value) -> Vec<String> {
        let mut cells: Vec<String> = vec![String::new(); self.columns.len()];
        let mut stand_ins: Vec<Option<String>> = vec![None; self.stand_ins.len()];
        for_each_cell(item, &mut |path, _, text| {
            if let Some(i) = self.columns.iter().position(|c| c == path) {
                cells[i] = shown_cell(&text);
            } else if let Some(i) = self.stand_ins.iter().position(|c| c == path) {
                stand_ins[i] = Some(text);
            }
        });
        for (column, cell) in self.columns.iter().zip(&mut cells) {
            let Some(list) = list_of(column) else {
                continue;
            };
            if cell.is_empty()
                && let Some(text) = (self.stand_ins.iter().zip(&stand_ins))
                    .filter(|(path, _)| list_of(path) == Some(list))
                    .find_map(|(_, text)| text.as_deref().filter(|t| !t.is_empty()))
            {
                *cell = shown_cell(text);
            }
        }
        cells
    }
}

#[cfg(test)]
mod tests;
