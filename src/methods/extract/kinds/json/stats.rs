//! What sibling records say about each other: keys and types, values that never change, values
//! that set one record apart (rarity, failures), and a template of near-identical records.

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::MAX_CATEGORY_BYTES;
use super::render::for_each_scalar;
use crate::methods::extract::doc::{FieldValue, Level};

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

pub(super) fn record_level(item: &Value) -> Level {
    let mut level = Level::None;
    for_each_scalar(item, "", 0, &mut |_, value| {
        if let Value::String(s) = value {
            if is_failure_word(s) {
                level = Level::Error;
            } else if level == Level::None && s.eq_ignore_ascii_case("warning") {
                level = Level::Warn;
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
pub(super) fn record_template(item: &Value) -> u64 {
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    if let Value::Object(map) = item {
        for (k, v) in map {
            hasher.update(k.as_bytes());
            match v {
                Value::Bool(b) => hasher.update(if *b { b"t" } else { b"f" }),
                Value::String(s) if s.len() <= 24 && !s.bytes().any(|b| b.is_ascii_digit()) => {
                    hasher.update(s.as_bytes())
                }
                _ => {}
            }
        }
    }
    hasher.digest()
}

/// Keys of sibling records: order of first appearance, types, and which never change.
pub(super) struct KeyStats {
    keys: Vec<(String, Vec<&'static str>)>,
    /// Keys present in every record with one and the same value.
    pub(super) constant: HashMap<String, ()>,
    /// Per key, how often each short scalar value occurs.
    values: HashMap<String, HashMap<u64, usize>>,
    records: usize,
}

impl KeyStats {
    pub(super) fn collect<'v>(items: impl Iterator<Item = &'v Value>) -> Self {
        let mut keys: Vec<(String, Vec<&'static str>)> = Vec::new();
        let mut index: HashMap<&str, usize> = HashMap::new();
        let mut first_value: HashMap<&str, (&Value, bool, usize)> = HashMap::new();
        let mut values: HashMap<String, HashMap<u64, usize>> = HashMap::new();
        let mut n = 0;
        for item in items {
            n += 1;
            let Value::Object(map) = item else { continue };
            for (k, v) in map {
                let i = *index.entry(k.as_str()).or_insert_with(|| {
                    keys.push((k.clone(), Vec::new()));
                    keys.len() - 1
                });
                let t = type_name(v);
                if !keys[i].1.contains(&t) {
                    keys[i].1.push(t);
                }
                if let Some(FieldValue::Category(h)) = field_value(v) {
                    *values.entry(k.clone()).or_default().entry(h).or_default() += 1;
                }
                let entry = first_value.entry(k.as_str()).or_insert((v, true, 0));
                entry.2 += 1;
                if entry.1 && entry.0 != v {
                    entry.1 = false;
                }
            }
        }
        let constant = first_value
            .into_iter()
            .filter(|(_, (v, same, count))| {
                *same && *count == n && n >= 3 && (v.is_object() || v.is_array())
            })
            .map(|(k, _)| (k.to_owned(), ()))
            .collect();
        KeyStats {
            keys,
            constant,
            values,
            records: n,
        }
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
            for (i, (k, types)) in self.keys.iter().enumerate() {
                if i > 0 {
                    text.push_str(", ");
                }
                let _ = write!(text, "{k}:{}", types.join("|"));
            }
        }
        let mut same: Vec<&str> = self
            .keys
            .iter()
            .map(|(k, _)| k.as_str())
            .filter(|k| self.constant.contains_key(*k))
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
