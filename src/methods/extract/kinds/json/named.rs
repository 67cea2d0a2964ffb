//! What the query names in a record or a map member: its key (a package in a dependency tree,
//! a shape of an API model), a key inside it, the exact strings its short values hold, or the
//! query words its values hold (in any of them, or as a top-level member's whole value).

use serde_json::Value;
use xxhash_rust::xxh3::Xxh3DefaultBuilder;

use super::MAX_CATEGORY_BYTES;
use super::project;
use super::render::{for_each_scalar, is_naming_key};
use crate::methods::extract::query::Query;
use crate::methods::extract::terms::for_each_word;

type HashSet<K> = std::collections::HashSet<K, Xxh3DefaultBuilder>;

/// A top-level value this short, of one word, names what its record is (a method, a state).
const MAX_VALUE_WORD_BYTES: usize = 24;
/// How deep a record's text is searched for query words.
const MAX_WORD_DEPTH: usize = 6;

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

/// Whether every word of `key` is a query word, but for a prefix of one or two letters before
/// others (the `cc_` of cloud-init's `cc_ntp`, a module's namespace, not its name).
fn names_every_word(query: &Query, key: &str) -> bool {
    let (words, named) = project::key_words_named(key, query);
    if words > 0 && words == named {
        return true;
    }
    let Some((prefix, rest)) = key.split_once(['_', '-']) else {
        return false;
    };
    let (words, named) = project::key_words_named(rest, query);
    prefix.len() <= 2
        && prefix.bytes().all(|b| b.is_ascii_alphabetic())
        && words > 0
        && words == named
}

/// Whether `item` holds, at most [`NAMED_VALUE_MAX_DEPTH`] deep, an entity the query names by
/// its name: a naming member (`name`, `title`) whose short value's every word the query has
/// (`statusCodes` for "status codes", `retry`). A document's declaration of what was asked
/// sits there, however deep.
pub(super) fn names_an_entity_in(query: &Query, item: &Value) -> bool {
    fn go(v: &Value, query: &Query, depth: usize) -> bool {
        if depth > NAMED_VALUE_MAX_DEPTH {
            return false;
        }
        match v {
            Value::Object(map) => map.iter().any(|(k, x)| {
                short_name(k, x).is_some_and(|s| names_every_word(query, s))
                    || go(x, query, depth + 1)
            }),
            Value::Array(items) => items.iter().any(|x| go(x, query, depth + 1)),
            _ => false,
        }
    }
    go(item, query, 0)
}

/// Whether `item` is an entity the query names by its own name: a naming member of it
/// (`name`, `title`) of two words or more, every one of which the query has (`statusCodes`
/// for "status codes"). A name of one word may be the query's by chance (the tool's own
/// process among those it lists).
pub(super) fn names_the_entity(query: &Query, item: &Value) -> bool {
    item.as_object().is_some_and(|map| {
        map.iter().any(|(k, v)| {
            short_name(k, v).is_some_and(|s| {
                let (words, named) = project::key_words_named(s, query);
                words >= 2 && named == words
            })
        })
    })
}

/// The name member `key` gives its record: its value, when `key` is a naming key (`name`,
/// `title`) and the value a short string.
fn short_name<'v>(key: &str, value: &'v Value) -> Option<&'v str> {
    value
        .as_str()
        .filter(|s| is_naming_key(key) && s.len() <= MAX_CATEGORY_BYTES)
}

/// How deep [`names_an_entity_in`] looks: a document's declarations nest their members'
/// names about a dozen levels down.
const NAMED_VALUE_MAX_DEPTH: usize = 12;

/// How deep [`names_a_part`] looks for a key the query names.
const DESCENT_MAX_DEPTH: usize = 6;

/// The query words in `item`'s string values, each once.
pub(super) fn query_words_in(item: &Value, query: &Query) -> HashSet<String> {
    query_words_where(item, query, WordsIn::Values)
}

/// The query words in the keys of `item`'s members at any depth, each once: what a record
/// holds that others lack (an `_attachments` map, a `deleted` flag).
pub(super) fn query_key_words_in(item: &Value, query: &Query) -> HashSet<String> {
    query_words_where(item, query, WordsIn::Keys)
}

/// Where in a record its query words are looked for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum WordsIn {
    Values,
    Keys,
}

fn query_words_where(item: &Value, query: &Query, place: WordsIn) -> HashSet<String> {
    fn add(text: &str, query: &Query, buf: &mut String, out: &mut HashSet<String>) {
        for_each_word(text, buf, |w| {
            if query.words.contains_key(w) && !out.contains(w) {
                out.insert(w.to_owned());
            }
        });
    }
    fn go(
        v: &Value,
        query: &Query,
        place: WordsIn,
        depth: usize,
        buf: &mut String,
        out: &mut HashSet<String>,
    ) {
        match v {
            Value::String(s) if place == WordsIn::Values => add(s, query, buf, out),
            Value::Array(items) if depth < MAX_WORD_DEPTH => items
                .iter()
                .for_each(|x| go(x, query, place, depth + 1, buf, out)),
            Value::Object(map) if depth < MAX_WORD_DEPTH => {
                for (key, x) in map {
                    if place == WordsIn::Keys {
                        add(key, query, buf, out);
                    }
                    go(x, query, place, depth + 1, buf, out);
                }
            }
            _ => {}
        }
    }
    let mut out = HashSet::default();
    go(item, query, place, 0, &mut String::new(), &mut out);
    out
}

/// The short values of `item`'s top-level members that are query words and nothing else:
/// one word (`delete`, `failed`) or a name of a few (`harbor_pa` of "the Harbor PA sink"),
/// each given as its words joined by spaces.
pub(super) fn query_values_in(item: &Value, query: &Query) -> Vec<String> {
    /// Words of a name the query gives whole.
    const MAX_NAME_WORDS: usize = 3;
    let mut out = Vec::new();
    let Value::Object(map) = item else {
        return out;
    };
    let mut buf = String::new();
    for value in map.values() {
        let Some(s) = value.as_str().filter(|s| s.len() <= MAX_VALUE_WORD_BYTES) else {
            continue;
        };
        let mut words = 0;
        let mut named = String::new();
        let mut all_named = true;
        for_each_word(s, &mut buf, |w| {
            words += 1;
            all_named &= query.words.contains_key(w);
            if all_named && words <= MAX_NAME_WORDS {
                if !named.is_empty() {
                    named.push(' ');
                }
                named.push_str(w);
            }
        });
        if (1..=MAX_NAME_WORDS).contains(&words) && all_named && !out.contains(&named) {
            out.push(named);
        }
    }
    out
}
