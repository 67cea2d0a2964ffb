//! What a record has or lacks: the records whose field the query asks them to lack ("which
//! component declares no license"), and those whose flag it names is on ("which seats had a
//! Liberal incumbent").

use super::super::doc::{Doc, Field, FieldValue};
use super::super::query::Query;

/// The most records raised as lacking a member or having a flag on: a budget's worth of rows.
/// More than that, and the query's other words say which ones it means.
const MAX_PICKED: usize = 16;

/// Values that say a record lacks what its field names: empty, or a flag that is off
/// (`"pie": "no"` of a binary "built without PIE").
const LACKING_VALUES: &[&[u8]] = &[b"", b"no", b"false", b"none", b"off", b"disabled"];

/// "Which component declares no license", "which binaries are built without PIE": the records
/// whose field the query asks them to lack is empty, null or an off flag score `weight`, as
/// much as the best match, when they are few.
pub(super) fn add_lacking(doc: &Doc<'_>, query: &Query, weight: f32, extreme: &mut [f32]) {
    /// JSON's `false` and `null` (see `json::stats::field_value`).
    const FALSE: u64 = 0;
    const NULL: u64 = 2;
    let lacking_values = value_hashes(LACKING_VALUES);
    let lacks = |h: u64| h == FALSE || h == NULL || lacking_values.contains(&h);
    for field in doc.fields.iter().filter(|f| query.asks_lacking(f.name())) {
        let mut lacking: Vec<usize> = field
            .iter()
            .filter(|(_, v)| matches!(v, FieldValue::Category(h) if lacks(*h)))
            .map(|(u, _)| u)
            .collect();
        // A record with no such member at all lacks it most ("the docs with no interface at
        // all"): its siblings under the same parent that the field has no value of, when they
        // are few. Where many lack it (the regions of every country), the query names which
        // ones by its other words.
        let without = without_the_field(doc, field);
        if without.len() <= MAX_PICKED {
            lacking.extend(without);
        }
        if lacking.len() * 2 < field.len() {
            for u in lacking {
                extreme[u] = extreme[u].max(weight);
            }
        }
    }
}

/// Values of a flag that is on, and of one that is off (JSON's `true` and `false` are
/// categories 1 and 0, see `json::stats::field_value`).
const ON_VALUES: &[&[u8]] = &[b"yes", b"true", b"y", b"on"];
const OFF_VALUES: &[&[u8]] = &[b"no", b"false", b"n", b"off"];

/// "Which constituencies had a Liberal incumbent", "which topic is pinned": the records whose
/// flag the query names (`libinc` of 0 and 1, `pinned` of `true` and `false`) is on score
/// `weight`, as much as the best match, when they are few: those are the ones it asks for.
pub(super) fn add_flagged(doc: &Doc<'_>, query: &Query, weight: f32, extreme: &mut [f32]) {
    let (on_values, off_values) = (value_hashes(ON_VALUES), value_hashes(OFF_VALUES));
    let state = |v: FieldValue| match v {
        FieldValue::Number(1.0) => Some(true),
        FieldValue::Number(0.0) => Some(false),
        FieldValue::Category(1) => Some(true),
        FieldValue::Category(0) => Some(false),
        FieldValue::Category(h) if on_values.contains(&h) => Some(true),
        FieldValue::Category(h) if off_values.contains(&h) => Some(false),
        _ => None,
    };
    // A flag the query negates ("not requested directly") asks for the records where it is
    // off; where the query asks records to lack it, `add_lacking` raises those.
    let flags = (doc.fields.iter()).filter(|f| {
        query.names_column(f.name()) && !query.asks_lacking(f.name()) && !query.negates(f.name())
    });
    for field in flags {
        let mut on = Vec::new();
        let mut is_flag = true;
        for (u, v) in field.iter() {
            match state(v) {
                Some(true) => on.push(u),
                Some(false) => {}
                None => {
                    is_flag = false;
                    break;
                }
            }
        }
        if is_flag && on.len() <= MAX_PICKED && on.len() * 2 < field.len() {
            for u in on {
                extreme[u] = extreme[u].max(weight);
            }
        }
    }
}

/// The category hashes of `values`, as fields hold them.
fn value_hashes(values: &[&[u8]]) -> Vec<u64> {
    values
        .iter()
        .map(|v| xxhash_rust::xxh3::xxh3_64(v))
        .collect()
}

/// The records beside `field`'s (under the same parent as its first record) that hold no
/// value of it: JSON records without the member.
fn without_the_field(doc: &Doc<'_>, field: &Field) -> Vec<usize> {
    let Some((first, _)) = field.iter().next() else {
        return Vec::new();
    };
    let Some(parent) = doc.units[first].parent.get() else {
        return Vec::new();
    };
    let mut has = vec![false; doc.units.len()];
    for (u, _) in field.iter() {
        has[u] = true;
    }
    (parent + 1..doc.units.len())
        .filter(|&u| !has[u] && doc.units[u].parent.get() == Some(parent))
        .collect()
}
