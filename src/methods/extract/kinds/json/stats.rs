//! What sibling records say about each other: keys and types, values that never change, values
//! that set one record apart (rarity, failures), and a template of near-identical records.

use std::fmt::Write as _;

use serde_json::Value;
use xxhash_rust::xxh3::Xxh3DefaultBuilder;

use super::MAX_CATEGORY_BYTES;
use super::render::for_each_scalar;
use crate::methods::extract::doc::{Field, FieldValue, Level};

/// Maps of keys and values, hashed fast: they are filled once per field of every record, and
/// nothing here depends on their order.
type HashMap<K, V> = std::collections::HashMap<K, V, Xxh3DefaultBuilder>;
type HashSet<K> = std::collections::HashSet<K, Xxh3DefaultBuilder>;

pub(super) fn field_value(v: &Value) -> Option<FieldValue> {
    match v {
        Value::Number(n) => n.as_f64().map(FieldValue::Number),
        Value::Bool(b) => Some(FieldValue::Category(u64::from(*b))),
        Value::Null => Some(FieldValue::Category(2)),
        Value::String(s) if s.len() <= MAX_CATEGORY_BYTES => Some(FieldValue::Category(
            xxhash_rust::xxh3::xxh3_64(s.as_bytes()),
        )),
        _ => None,
    }
}

/// Words that, as a whole value, say a run or item went wrong.
pub(super) fn is_failure_word(s: &str) -> bool {
    matches!(
        s.to_ascii_lowercase().as_str(),
        "failure"
            | "failed"
            | "fail"
            | "error"
            | "errored"
            | "fatal"
            | "cancelled"
            | "canceled"
            | "timed_out"
            | "timeout"
            | "crashed"
            | "critical"
            | "broken"
            | "rejected"
    )
}

/// At least two elements and most of them objects, given whether each element is one.
pub(super) fn is_record_array(is_object: impl Iterator<Item = bool>) -> bool {
    let (n, objects) = is_object.fold((0, 0), |(n, objects), object| {
        (n + 1, objects + usize::from(object))
    });
    n >= 2 && objects * 10 >= n * 8
}

pub(super) fn record_level(item: &Value) -> Level {
    let mut level = Level::None;
    for_each_scalar(item, "", 0, &mut |_, value| {
        if let Value::String(s) = value {
            if is_failure_word(s) {
                level = Level::Error;
            } else if level == Level::None && s.eq_ignore_ascii_case("warning") {
                level = Level::Warn;
            } else if s.ends_with('\n') && s.trim_end().lines().count() == 1 {
                // One line of a program's output (`go test -json`'s `Output`, a log event's
                // line): its words say how it went, as a text line's do.
                level = level.max(crate::methods::extract::doc::level_from_words(s));
            }
        }
    });
    if let Value::Object(map) = item {
        for key in ["error", "errors", "exception"] {
            if map.get(key).is_some_and(|v| {
                !v.is_null()
                    && v != &Value::Bool(false)
                    && v.as_array().is_none_or(|a| !a.is_empty())
            }) {
                level = Level::Error;
            }
        }
    }
    level
}

/// Records with the same keys and the same short categorical values are near-identical.
/// A nested field counts too when `stats` says its values are categories (a message's
/// `message.level`: an error and a note of one shape are two templates).
pub(super) fn record_template(item: &Value, stats: &KeyStats) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    if let Value::Object(map) = item {
        for (k, v) in map {
            hasher.update(k.as_bytes());
            match v {
                Value::Bool(b) => hasher.update(if *b { b"t" } else { b"f" }),
                Value::String(s) if s.len() <= 24 && !s.bytes().any(|b| b.is_ascii_digit()) => {
                    hasher.update(s.as_bytes())
                }
                Value::Object(inner) => {
                    // Which members a nested object has is the record's shape too: a release
                    // whose changes hold a `major` list is another kind than a patch.
                    for nested in inner.keys() {
                        hasher.update(nested.as_bytes());
                    }
                    let Some(categories) = stats.nested_categories.get(k.as_str()) else {
                        continue;
                    };
                    for (nested, x) in inner {
                        if let Value::String(s) = x
                            && categories.contains(nested.as_str())
                        {
                            hasher.update(s.as_bytes());
                        }
                    }
                }
                _ => {}
            }
        }
    }
    hasher.digest()
}

/// A text value the same in every record is stated once from this many bytes (a path, a
/// package id); a shorter one (a status, a kind) is its record's own.
const MIN_CONSTANT_TEXT_BYTES: usize = 24;

/// A constant text is stated up to this many bytes.
const MAX_STATED_BYTES: usize = 200;

/// The most keys a description of records names: the most common ones, in their order.
const MAX_LISTED_KEYS: usize = 24;

/// Keys of sibling records: order of first appearance, types, and which never change.
pub(super) struct KeyStats {
    /// Each key, its types, and how many records have it.
    keys: Vec<(String, Vec<&'static str>, usize)>,
    /// Keys with one and the same value in every record that has them, three in four records
    /// or more: a list or a map, or a long text, which the description then states once.
    pub(super) constant: HashMap<String, Option<String>>,
    /// Per key, how often each short scalar value occurs; only for keys where values repeat
    /// enough for one to be notable.
    values: HashMap<String, HashMap<u64, usize>>,
    /// Top-level keys whose values are all short text, all alike or all different, and nested
    /// paths whose values are all one short text: no record stands out by them, so scoring is
    /// not given their values.
    silent: HashSet<String>,
    /// Nested short texts whose few values each recur: inner keys by outer key, so a record's
    /// template is hashed without building a path.
    nested_categories: HashMap<String, HashSet<String>>,
    records: usize,
}

/// [`KeyStats`] being gathered, one record at a time, so that records need not all be parsed
/// at once.
#[derive(Default)]
pub(super) struct KeyStatsBuilder {
    keys: Vec<(String, Vec<&'static str>, usize)>,
    index: HashMap<String, usize>,
    /// Per key: its first value, whether every later one equals it, and how many records
    /// have the key.
    first_value: HashMap<String, (Value, bool, usize)>,
    values: HashMap<String, HashMap<u64, usize>>,
    /// Per dotted path of a nested scalar: the one short text value every record has had
    /// there so far, or `None` once values differ or one is a number.
    nested: HashMap<String, Option<u64>>,
    /// Per dotted path of a nested short text: how often each value occurs.
    nested_counts: HashMap<String, HashMap<u64, usize>>,
    records: usize,
}

impl KeyStatsBuilder {
    pub(super) fn add(&mut self, item: &Value) {
        self.records += 1;
        for_each_scalar(item, "", 0, &mut |path, value_ref| {
            if !path.contains('.') {
                return;
            }
            let value = match field_value(value_ref) {
                Some(FieldValue::Category(hash)) => Some(hash),
                Some(FieldValue::Number(_)) => None,
                // Not a field value at all (a long text): scoring never sees it.
                None => return,
            };
            if let (Some(hash), Value::String(_)) = (value, value_ref) {
                let counts = match self.nested_counts.get_mut(path) {
                    Some(counts) => counts,
                    None => self.nested_counts.entry(path.to_owned()).or_default(),
                };
                *counts.entry(hash).or_default() += 1;
            }
            match self.nested.get_mut(path) {
                Some(same) if *same != value => *same = None,
                Some(_) => {}
                None => {
                    self.nested.insert(path.to_owned(), value);
                }
            }
        });
        let Value::Object(map) = item else { return };
        for (k, v) in map {
            let i = match self.index.get(k.as_str()) {
                Some(&i) => i,
                None => {
                    self.keys.push((k.clone(), Vec::new(), 0));
                    self.index.insert(k.clone(), self.keys.len() - 1);
                    self.keys.len() - 1
                }
            };
            let t = type_name(v);
            self.keys[i].2 += 1;
            if !self.keys[i].1.contains(&t) {
                self.keys[i].1.push(t);
            }
            if let Some(FieldValue::Category(h)) = field_value(v) {
                let counts = match self.values.get_mut(k.as_str()) {
                    Some(counts) => counts,
                    None => self.values.entry(k.clone()).or_default(),
                };
                *counts.entry(h).or_default() += 1;
            }
            match self.first_value.get_mut(k.as_str()) {
                Some(entry) => {
                    entry.2 += 1;
                    if entry.1 && entry.0 != *v {
                        entry.1 = false;
                    }
                }
                None => {
                    self.first_value.insert(k.clone(), (v.clone(), true, 1));
                }
            }
        }
    }

    pub(super) fn finish(mut self) -> KeyStats {
        let n = self.records;
        // A key a few records lack (a run's closing message among its diagnostics) is as
        // constant in the others.
        let constant = self
            .first_value
            .into_iter()
            .filter(|(_, (v, same, count))| {
                *same
                    && *count * 4 >= n * 3
                    && n >= 3
                    && (v.is_object()
                        || v.is_array()
                        || v.as_str()
                            .is_some_and(|t| t.len() >= MIN_CONSTANT_TEXT_BYTES))
            })
            .map(|(k, (v, _, _))| (k, v.as_str().map(str::to_owned)))
            .collect();
        let keys = &self.keys;
        let index = &self.index;
        let silent = self
            .values
            .iter()
            .filter(|(k, counts)| {
                let numeric = index
                    .get(k.as_str())
                    .is_some_and(|&i| keys[i].1.iter().any(|t| matches!(*t, "int" | "float")));
                let total: usize = counts.values().sum();
                // A dotted key would share its path with a nested one.
                !numeric && !k.contains('.') && (counts.len() <= 1 || counts.len() == total)
            })
            .map(|(k, _)| k.clone())
            .chain(
                self.nested
                    .iter()
                    .filter(|(_, same)| same.is_some())
                    .map(|(path, _)| path.clone()),
            )
            .collect();
        // Where more than half the records differ, no value is notable (see `is_notable`):
        // the counts of an id-like key are as many as the records, and not needed.
        self.values.retain(|_, counts| counts.len() * 2 <= n);
        // A nested text is a category when a few values each recur: a level, a kind.
        let mut nested_categories: HashMap<String, HashSet<String>> = HashMap::default();
        for (path, counts) in self.nested_counts {
            if counts.len() > 1
                && counts.len() * 4 <= n
                && let Some((outer, inner)) = path.split_once('.')
            {
                nested_categories
                    .entry(outer.to_owned())
                    .or_default()
                    .insert(inner.to_owned());
            }
        }
        KeyStats {
            nested_categories,
            keys: self.keys,
            constant,
            values: self.values,
            silent,
            records: n,
        }
    }
}

impl KeyStats {
    /// Whether the values under the key or dotted path `key` can set no record apart.
    pub(super) fn is_silent(&self, key: &str) -> bool {
        self.silent.contains(key)
    }

    /// Whether `v` under key `k` sets its record apart: a failure word, or a value few
    /// siblings share in a field where values repeat.
    pub(super) fn is_notable(&self, k: &str, v: &Value) -> bool {
        if matches!(v, Value::String(s) if is_failure_word(s)) {
            return true;
        }
        let (Some(FieldValue::Category(h)), Some(counts)) = (field_value(v), self.values.get(k))
        else {
            return false;
        };
        let count = counts.get(&h).copied().unwrap_or(0);
        counts.len() * 2 <= self.records && count * 5 <= self.records
    }

    pub(super) fn describe(&self, path: &str, count: usize) -> String {
        let mut text = format!(
            "{}{} records",
            if path.is_empty() {
                String::new()
            } else {
                format!("{path}: ")
            },
            count
        );
        if !self.keys.is_empty() {
            text.push_str("; keys: ");
            // Records of many shapes (a metadata dump of images, fonts and documents) have
            // hundreds of keys between them, a list longer than the records it describes: it
            // names those most records have, and counts the others, which the records show.
            let listed = if self.keys.len() > MAX_LISTED_KEYS {
                let mut common: Vec<usize> = (0..self.keys.len()).collect();
                common.sort_by_key(|&i| std::cmp::Reverse(self.keys[i].2));
                common.truncate(MAX_LISTED_KEYS);
                common.sort_unstable();
                common
            } else {
                (0..self.keys.len()).collect()
            };
            for (n, &i) in listed.iter().enumerate() {
                if n > 0 {
                    text.push_str(", ");
                }
                let (k, types, _) = &self.keys[i];
                let _ = write!(text, "{k}:{}", types.join("|"));
            }
            if listed.len() < self.keys.len() {
                let _ = write!(
                    text,
                    ", and {} keys fewer records have",
                    self.keys.len() - listed.len()
                );
            }
        }
        let mut same: Vec<String> = self
            .keys
            .iter()
            .filter_map(|(k, _, _)| match self.constant.get(k)? {
                // A text is stated, as no record repeats it.
                Some(text) => {
                    let mut stated = String::new();
                    super::render::render_string(&mut stated, text, MAX_STATED_BYTES, None, None);
                    Some(format!("{k}={stated}"))
                }
                None => Some(k.clone()),
            })
            .collect();
        if !same.is_empty() {
            same.sort_unstable();
            let _ = write!(text, "; same in all (not repeated): {}", same.join(", "));
        }
        text
    }
}

pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a field can neither set a record apart nor be an extreme: text values all alike, or
/// all different (names, urls). Scoring finds no signal in such a field, so its values are not
/// kept: on a large array they would cost more memory than the records' text.
pub(super) fn says_nothing(field: &Field) -> bool {
    let mut seen = HashSet::default();
    for (_, value) in field.iter() {
        let FieldValue::Category(hash) = value else {
            return false;
        };
        seen.insert(hash);
    }
    seen.len() <= 1 || seen.len() == field.len()
}
