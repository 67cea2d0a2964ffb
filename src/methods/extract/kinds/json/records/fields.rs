//! A record's values as fields of its siblings: its scalars, the numbers its strings write,
//! the extents of its ranges and its nested values, for rarity and extremes.

use std::collections::HashMap;

use serde_json::Value;

use super::super::render::for_each_scalar;
use super::super::render::set_member_path;
use super::super::stats::field_value;
use super::super::{Builder, last_segment};
use super::Siblings;
use crate::methods::extract::doc::{Field, FieldValue};

/// How deep in a record a column the query ranks by is looked for.
const MAX_NESTED_DEPTH: usize = 6;

impl Builder<'_> {
    /// A record's scalar values (and the lists its row shows) as fields of its siblings, for
    /// rarity and extremes.
    pub(super) fn record_fields(
        &mut self,
        item: &Value,
        unit: usize,
        list_cells: Option<&[String]>,
        siblings: &mut Siblings<'_>,
    ) {
        let stats = siblings.stats;
        let mut add = |fields: &mut Vec<Field>, key: &str, value: FieldValue| {
            let index = (siblings.first_field, &mut siblings.field_index);
            push_field(fields, index, key, unit, value);
        };
        let ranks = |key: &str| {
            self.query
                .is_some_and(|q| q.ranks(key) || q.ranks_implied(key))
        };
        for_each_scalar(item, "", 0, &mut |key, value| {
            // A number written as a string (`"FileSize": "368214"`) is ranked as one.
            if let Value::String(text) = value
                && ranks(key)
                && let Some(x) = number_in(text)
            {
                add(&mut self.fields, key, FieldValue::Number(x));
                return;
            }
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
        // A column the query ranks by, or bounds, may sit deeper than the fields above reach,
        // in a list of the record's parts (a file's tracks, a run's jobs, a firewall rule's
        // counter among its expressions): each record counts by its part at the end asked
        // about, or past the bound.
        if let Some(q) = self
            .query
            .filter(|q| !q.ranked.is_empty() || !q.bounds.is_empty())
        {
            let mut nested: Vec<(String, f64)> = Vec::new();
            // A pair of numbers in order is a range (`"lines": [6, 30]`): what the query
            // ranks or bounds it by is its extent, not the numbers at its ends.
            let mut ranges: Vec<String> = Vec::new();
            if let Value::Object(map) = item {
                for (key, value) in map {
                    if let Some(extent) = range_extent(value)
                        && (q.bound_on(key).is_some() || ranks(key))
                    {
                        ranges.push(format!("{key}[]"));
                        nested.push((key.clone(), extent));
                    }
                }
            }
            nested_scalars(item, &mut String::new(), 0, false, &mut |key, value| {
                if ranges.iter().any(|r| r == key) {
                    return;
                }
                let Some(x) = (match value {
                    Value::Number(n) => n.as_f64(),
                    Value::String(text) => number_in(text),
                    _ => None,
                }) else {
                    return;
                };
                let high = match q.bound_on(key) {
                    Some(bound) => bound.above,
                    None if ranks(key) => q.ends.high,
                    None => return,
                };
                match nested.iter_mut().find(|(k, _)| k == key) {
                    Some((_, kept)) if high => *kept = kept.max(x),
                    Some((_, kept)) => *kept = kept.min(x),
                    None => nested.push((key.to_owned(), x)),
                }
            });
            for (key, x) in nested {
                add(&mut self.fields, &key, FieldValue::Number(x));
            }
        }
        if let (Some(table), Some(cells)) = (siblings.table, list_cells) {
            table.list_cells(cells, &mut |key, text| {
                let value = FieldValue::Category(xxhash_rust::xxh3::xxh3_64(text.as_bytes()));
                add(&mut self.fields, key, value);
            });
        }
    }
}

/// The extent of `value` when it is a range, two numbers in order: `[6, 30]` spans 25 (lines
/// and other counted things include both ends), `[0.5, 2.0]` spans 1.5.
fn range_extent(value: &Value) -> Option<f64> {
    let [start, end] = value.as_array()?.as_slice() else {
        return None;
    };
    match (start.as_i64(), end.as_i64()) {
        (Some(a), Some(b)) if a <= b => Some((b - a + 1) as f64),
        _ => {
            let (a, b) = (start.as_f64()?, end.as_f64()?);
            (a <= b).then_some(b - a)
        }
    }
}

/// The number a string value writes (`"368214"`, `"-0.5"`), if that is all it holds.
fn number_in(text: &str) -> Option<f64> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    if !digits.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    text.parse::<f64>().ok().filter(|x| x.is_finite())
}

/// The scalars of `v` that [`for_each_scalar`] leaves out: those inside a list, or more than
/// one object deep. Their keys name a list's items with `[]` (`media.track[].FileSize`).
fn nested_scalars(
    v: &Value,
    path: &mut String,
    depth: usize,
    in_list: bool,
    f: &mut dyn FnMut(&str, &Value),
) {
    if depth > MAX_NESTED_DEPTH {
        return;
    }
    let base = path.len();
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                set_member_path(path, base, k);
                nested_scalars(x, path, depth + 1, in_list, f);
            }
        }
        Value::Array(items) => {
            path.push_str("[]");
            for x in items {
                nested_scalars(x, path, depth + 1, true, f);
            }
        }
        // The top object's members, and those of its objects, are already fields.
        _ if in_list || depth > 2 => f(path, v),
        _ => {}
    }
    path.truncate(base);
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
