//! Members every sibling record of a walked map holds with the same value (the tile URL and
//! attribution each of a provider's seven variants repeats): said once on the map's line, so
//! that each variant's line is what sets it apart and the budget reaches the next map.

use serde_json::{Map, Value};

use super::render::approx_len;

/// Sibling records this few are not a family whose shared members are worth hoisting.
const MIN_SIBLINGS: usize = 3;
/// A shared value longer than this (compact bytes) is content, not a setting: left in place.
const MAX_SHARED_BYTES: usize = 200;
/// Hoisting pays when it saves at least this many bytes over the siblings' lines.
const MIN_SAVED_BYTES: usize = 120;

/// The keys (in the first sibling's order) that every one of `siblings` holds with one and the
/// same short value, when there are enough siblings and the keys are worth saying once.
pub(super) fn shared_keys(siblings: &[&Map<String, Value>]) -> Vec<String> {
    let Some((first, rest)) = siblings.split_first() else {
        return Vec::new();
    };
    if siblings.len() < MIN_SIBLINGS {
        return Vec::new();
    }
    let mut saved = 0;
    let mut keys = Vec::new();
    for (key, value) in *first {
        let len = approx_len(value, MAX_SHARED_BYTES);
        if len <= MAX_SHARED_BYTES && rest.iter().all(|other| other.get(key) == Some(value)) {
            saved += (len + key.len()) * rest.len();
            keys.push(key.clone());
        }
    }
    // A record made only of shared members would say nothing of its own on its line.
    if saved < MIN_SAVED_BYTES || keys.len() == first.len() {
        return Vec::new();
    }
    keys
}

/// `record` without the `shared` keys.
pub(super) fn without(record: &Map<String, Value>, shared: &[String]) -> Value {
    members_where(record, |key| !shared.iter().any(|s| s == key))
}

/// The shared members as one JSON object, in `record`'s order.
pub(super) fn members_of(record: &Map<String, Value>, shared: &[String]) -> Value {
    members_where(record, |key| shared.iter().any(|s| s == key))
}

/// The members of `record` whose key `keep` accepts, as an object of their own.
fn members_where(record: &Map<String, Value>, keep: impl Fn(&str) -> bool) -> Value {
    Value::Object(
        record
            .iter()
            .filter(|(key, _)| keep(key))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect(),
    )
}
