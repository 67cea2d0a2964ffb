//! What the query names in a record or a map member: its key (a package in a dependency tree,
//! a shape of an API model), a key inside it, or the exact strings its short values hold.

use serde_json::Value;

use super::MAX_CATEGORY_BYTES;
use super::project;
use super::render::for_each_scalar;
use crate::methods::extract::query::Query;

/// Whether the query names `item`, a member of a map: by its label, exactly
/// (`.ReceiveMessageRequest`) or by every word of it (`.walrus`), or exactly by a key inside
/// it, at any depth — an identifier or a name the query spells out is where the answer sits.
pub(super) fn names_a_part(query: &Query, label: &str, item: &Value) -> bool {
    fn any_key(v: &Value, query: &Query, depth: usize) -> bool {
        if depth > DESCENT_MAX_DEPTH {
            return false;
        }
        match v {
            Value::Object(map) => map
                .iter()
                .any(|(k, x)| query.mentions(k) || any_key(x, query, depth + 1)),
            Value::Array(items) => items.iter().any(|x| any_key(x, query, depth + 1)),
            _ => false,
        }
    }
    // Only members of a map: the items of an array are alike, and are projected to the same
    // fields instead (see `project`).
    let Some(key) = label.strip_prefix('.') else {
        return false;
    };
    is_key_named(query, key) || query.mentions(key) || any_key(item, query, 0)
}

/// Adds one to `records[i]` for every exact string `i` of the query that a short value of
/// `item` holds (each string once per record), as [`super::render::named_values`] reads them.
pub(super) fn count_exact_strings(query: &Query, item: &Value, records: &mut [usize]) {
    let mut held = vec![false; records.len()];
    for_each_scalar(item, "", 0, &mut |_, value| {
        if let Value::String(s) = value
            && s.len() <= MAX_CATEGORY_BYTES
        {
            query.for_each_exact_in(s, |i| held[i] = true);
        }
    });
    for (count, held) in records.iter_mut().zip(held) {
        *count += usize::from(held);
    }
}

/// Whether the query names `key`, a map member's name: within an exact string of it, or by
/// every word of it (`bcrypt`, `parse_int`).
pub(super) fn names_key(query: &Query, key: &str) -> bool {
    query.mentions(key) || names_every_word(query, key)
}

/// Whether the query names `key` itself: an exact string of it is the whole key, or every
/// word of the key is a query word. `MaxCountPerSecond` is not named by `MaxCount`. A key that
/// is a path (`node_modules/a/node_modules/zod` in a lock file, `src/lib/parse.rs`) is named
/// when its last part is: that is the thing it keys, the rest is where it sits.
pub(super) fn is_key_named(query: &Query, key: &str) -> bool {
    let names = |key: &str| {
        let lower = key.to_ascii_lowercase();
        query.exact.contains(&lower) || names_every_word(query, key)
    };
    names(key)
        || key
            .rsplit('/')
            .find(|part| !part.is_empty())
            .is_some_and(|last| last.len() < key.len() && names(last))
}

/// Whether every word of `key` is a query word.
fn names_every_word(query: &Query, key: &str) -> bool {
    let (words, named) = project::key_words_named(key, query);
    words > 0 && words == named
}

/// How deep [`names_a_part`] looks for a key the query names.
const DESCENT_MAX_DEPTH: usize = 6;
