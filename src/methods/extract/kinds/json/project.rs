//! Query-guided projection of a record too big to show whole: instead of folding its deep
//! parts to `[…1 items]`, keep the leaves the query touches — by a word of their key path
//! (`spec.containers[0].resources.requests.cpu` for "CPU request") or of their value — plus
//! the record's identity and the values that set it apart. Noise (digests, UUIDs, timestamps)
//! ranks low by its shape. The kept leaves are shown as the record's own JSON, pruned to them
//! (`{"spec":{"containers":[{"resources":{"requests":{"cpu":"250m"}}}]},…}`): each keeps its
//! path, and a member reads as the original prints it, so a line quoted from the original
//! (`"cpu": "250m"`) is found in it. A short list of scalars is one leaf, shown whole.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::Value;

use super::render::set_member_path;
use super::{compact, json_string};
use crate::methods::extract::query::Query;
use crate::methods::extract::terms::for_each_word;
use crate::methods::extract::tree::noise::opaque_share;

/// Leaves deeper than this are not visited: the path would cost more than the value.
const MAX_DEPTH: usize = 10;
/// How deep (in path segments after the first) a leaf the usual rendering leaves out must lie
/// for the record to be projected.
const MIN_FOLDED_DEPTH: usize = 3;
/// Distinct rare query words or exact strings the folded lists of a record must hold for it
/// to be projected.
const MIN_NAMED_IN_LISTS: usize = 2;
/// Items of one array visited per array.
const MAX_ITEMS: usize = 64;
/// Strings longer than this are content; their words are not matched one by one. A
/// paragraph (an entry's description) is shorter, and its words tell which entry answers.
const MAX_VALUE_WORDS_BYTES: usize = 400;
/// A leaf's string value is cut to this many bytes.
const MAX_LEAF_STRING: usize = 160;
/// A list of scalars this short (items, and bytes as compact JSON) is one leaf, shown whole:
/// a feature's `["std","perf"]` answers as a list, and its items cut apart would not.
const MAX_LIST_LEAF_ITEMS: usize = 16;
const MAX_LIST_LEAF_BYTES: usize = 160;

/// How a leaf earns its place.
const LAST_KEY_NAMED: i32 = 4;
const PARENT_KEY_NAMED: i32 = 1;
const VALUE_NAMED_EXACTLY: i32 = 5;
const VALUE_WORD_NAMED: i32 = 2;
const RARE_WORD_NAMED: i32 = 1;
const IDENTITY: i32 = 3;
/// A member keyed `value` is what its object holds when no member names the object: the
/// members beside it (`meta`, `$source`, `timestamp`) describe it.
const HELD_VALUE: i32 = 3;
const NOTABLE: i32 = 4;
const OPAQUE: i32 = -4;

/// One scalar of the record with its path.
struct Leaf<'v> {
    path: String,
    value: &'v Value,
    top_key: String,
    score: i32,
    /// Whether the query names the leaf's value or every word of its key: the leaf answers.
    strong: bool,
}

/// `item` projected to the leaves the query touches, within about `cap` bytes, as its JSON
/// pruned to them, with `…` in each object or list that lost some and `…+N` at its end for
/// the leaves left out; `None` when `usual` (the record rendered the usual way) already shows
/// every leaf that answers the query, or there is none.
pub(super) fn project(
    item: &Value,
    cap: usize,
    query: &Query,
    rarity: &Rarity<'_>,
    (usual, row): (&str, &str),
    exclude: &dyn Fn(&str) -> bool,
    notable: &dyn Fn(&str, &Value) -> bool,
) -> Option<String> {
    let mut leaves = Vec::new();
    let mut path = String::new();
    collect(item, &mut path, 0, 0, query, &mut leaves);
    leaves.retain(|l| !exclude(&l.top_key));
    // Only what lies deep is folded away by the usual rendering; a shallow leaf it leaves out
    // was outranked there by the record's other fields, and projecting would not bring it back.
    let deep_folded = leaves.iter().any(|l| {
        l.strong
            && l.path.matches(['.', '[']).count() >= MIN_FOLDED_DEPTH
            && !shows(usual, l.value, true)
    });
    // The items of a list the usual rendering folds (`"requires_dist":[…21 items]`) are lost
    // whatever their depth. Projecting brings them back when they answer more than one thing
    // the query asks (several rare words or exact names): one word in a list of conditions
    // (`extra == …`) is seldom the answer, and each projection costs its siblings' rows.
    let mut named_in_lists: Vec<String> = Vec::new();
    let folded_lists = if deep_folded {
        Vec::new()
    } else {
        folded_lists(usual)
    };
    if !folded_lists.is_empty() {
        for l in &leaves {
            if (inside_folded(&l.path, &folded_lists) || is_folded_list(l, &folded_lists))
                && !shows(usual, l.value, true)
                && !shows(row, l.value, false)
            {
                rare_names(l.value, query, rarity, &mut named_in_lists);
            }
        }
    }
    if !deep_folded && named_in_lists.len() < MIN_NAMED_IN_LISTS {
        return None;
    }
    // A leaf that answers from deep in a list keeps the name of the item it sits in
    // (`spec.containers[1].name` beside `spec.containers[1].image`).
    let answering: std::collections::HashSet<&str> = leaves
        .iter()
        .filter(|l| l.strong)
        .map(|l| parent_path(&l.path))
        .collect();
    let identities: Vec<usize> = (0..leaves.len())
        .filter(|&i| {
            let path = &leaves[i].path;
            let key = &path[parent_path(path).len()..].trim_start_matches('.');
            path.contains('[') && is_identity_key(key) && answering.contains(parent_path(path))
        })
        .collect();
    // At least an identity's score, never more: a name the query asks for elsewhere in the
    // record (`metadata.name`) still ranks first.
    for i in identities {
        leaves[i].score = leaves[i].score.max(IDENTITY);
    }
    // The record's own name (`metadata.name`) and its words are what single it out among its
    // siblings; inside it they tell no leaf apart (each of a package's paths holds its name).
    let mut own = OwnName::default();
    let is_own_name = |l: &Leaf<'_>| {
        let key = &l.path[parent_path(&l.path).len()..].trim_start_matches('.');
        l.path.matches(['.', '[']).count() <= 1 && is_identity_key(key)
    };
    for l in &leaves {
        if let Value::String(s) = l.value
            && is_own_name(l)
        {
            for_each_word(s, &mut String::new(), |w| {
                own.words.insert(w.to_owned());
            });
            own.names.push(s.to_ascii_lowercase());
        }
    }
    for leaf in &mut leaves {
        let own_here = if is_own_name(leaf) {
            &OwnName::default()
        } else {
            &own
        };
        leaf.score += rarity.adjust(leaf.value, query, own_here);
        if leaf.path == leaf.top_key && notable(&leaf.top_key, leaf.value) {
            leaf.score += NOTABLE;
        }
    }
    let mut order: Vec<usize> = (0..leaves.len()).filter(|&i| leaves[i].score > 0).collect();
    order.sort_by(|&a, &b| leaves[b].score.cmp(&leaves[a].score).then(a.cmp(&b)));
    // Each leaf costs its key and value, and the keys of the containers it is the first kept
    // leaf of: leaves of one object share its key.
    let mut kept: HashMap<&str, String> = HashMap::new();
    let mut within: HashSet<&str> = HashSet::new();
    let mut used = 2;
    for i in order {
        let path = leaves[i].path.as_str();
        let value = render_value(leaves[i].value);
        let mut cost = segment_len(path, path.len()) + value.len() + 4;
        let mut end = path.len();
        let mut opened = Vec::new();
        while let Some(at) = path[..end].rfind(['.', '[']) {
            if within.contains(&path[..at]) {
                break;
            }
            opened.push(&path[..at]);
            cost += segment_len(path, at) + 4;
            end = at;
        }
        if used + cost + 8 > cap {
            continue;
        }
        used += cost;
        within.extend(opened);
        kept.insert(path, value);
    }
    let mut out = String::new();
    let mut path = String::new();
    write_pruned(item, &mut path, (&kept, &within), &mut out);
    let left = leaves.len() - kept.len();
    if left > 0
        && let Some(close) = out.pop()
    {
        // The record's last mark says how many leaves it lost.
        if out.ends_with('…') {
            out.truncate(out.len() - '…'.len_utf8());
        } else if out.len() > 1 {
            out.push(',');
        }
        let _ = write!(out, "…+{left}{close}");
    }
    Some(out)
}

/// The length of the last segment of `path[..end]`: its key (quoted) or its index.
fn segment_len(path: &str, end: usize) -> usize {
    let head = &path[..end];
    head.len() - head.rfind(['.', '[']).map_or(0, |at| at + 1) + 2
}

/// Writes `v` at `path` pruned to the `kept` leaves (path to rendered value) and the
/// containers `within` that hold some: members and items in their order, `…` for the rest.
fn write_pruned(
    v: &Value,
    path: &mut String,
    (kept, within): (&HashMap<&str, String>, &HashSet<&str>),
    out: &mut String,
) {
    let (open, close) = if v.is_array() { ('[', ']') } else { ('{', '}') };
    out.push(open);
    let mut written = false;
    let mut skipped = false;
    for_each_child(v, path, usize::MAX, |key, x, path| {
        let leaf = kept.get(path.as_str());
        if leaf.is_none() && !within.contains(path.as_str()) {
            skipped = true;
            return;
        }
        if written {
            out.push(',');
        }
        written = true;
        if let Some(key) = key {
            out.push_str(&json_string(key));
            out.push(':');
        }
        match leaf {
            Some(value) => out.push_str(value),
            None => write_pruned(x, path, (kept, within), out),
        }
    });
    if skipped {
        if written {
            out.push(',');
        }
        out.push('…');
    }
    out.push(close);
}

/// Whether `text`, a rendering of the record, shows the leaf value `v` (its head at least),
/// as JSON or, in a table's row, as plain text.
fn shows(text: &str, v: &Value, json: bool) -> bool {
    let value = match v {
        Value::String(s) if !json => s.clone(),
        other => compact(other),
    };
    let probe = &value[..crate::tokens::floor_char_boundary(&value, 40)];
    text.contains(probe)
}

/// Adds to `names`, once each, the exact strings of the query that `v` holds and the query
/// words in it that `rare` says few records hold.
fn rare_names(v: &Value, query: &Query, rarity: &Rarity<'_>, names: &mut Vec<String>) {
    if let Value::Array(items) = v {
        for item in items {
            rare_names(item, query, rarity, names);
        }
        return;
    }
    let Value::String(s) = v else {
        return;
    };
    let mut add = |name: &str| {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_owned());
        }
    };
    query.for_each_exact_in(s, |i| {
        if !rarity.is_common_exact(i) {
            add(&query.exact[i]);
        }
    });
    if s.len() <= MAX_VALUE_WORDS_BYTES {
        for_each_word(s, &mut String::new(), |w| {
            if query.words.contains_key(w) && (rarity.rare_word)(w) {
                add(w);
            }
        });
    }
}

/// Which of the query's terms few of a record's siblings hold: those single a record's leaf
/// out, a term every record holds (`python` in each classifier) does not.
pub(super) struct Rarity<'a> {
    /// Whether a query word is held by few records.
    pub(super) rare_word: &'a dyn Fn(&str) -> bool,
    /// Per exact string of the query, whether most records hold it.
    pub(super) common_exact: &'a [bool],
}

impl Rarity<'_> {
    fn is_common_exact(&self, i: usize) -> bool {
        self.common_exact.get(i).copied().unwrap_or(false)
    }

    /// The change to a leaf's score for the rarity of the terms its value holds: an exact
    /// string every record holds, or the record's own name holds, scores as a word; a rare
    /// query word adds, unless the record's own name holds it.
    fn adjust(&self, v: &Value, query: &Query, own: &OwnName) -> i32 {
        if let Value::Array(items) = v {
            return (items.iter())
                .map(|item| self.adjust(item, query, own))
                .max()
                .unwrap_or(0);
        }
        let Value::String(s) = v else {
            return 0;
        };
        let mut change = 0;
        let singles_out = |i: usize| {
            !self.is_common_exact(i) && !own.names.iter().any(|n| n.contains(&query.exact[i]))
        };
        if query.mentions(s) && !query.mentions_where(s, singles_out) {
            change -= VALUE_NAMED_EXACTLY - VALUE_WORD_NAMED;
        }
        if s.len() <= MAX_VALUE_WORDS_BYTES {
            let mut rare = false;
            for_each_word(s, &mut String::new(), |w| {
                rare |=
                    query.words.contains_key(w) && (self.rare_word)(w) && !own.words.contains(w);
            });
            if rare {
                change += RARE_WORD_NAMED;
            }
        }
        change
    }
}

/// A record's own name (its identity values at its top, lowercased) and their words.
#[derive(Default)]
struct OwnName {
    names: Vec<String>,
    words: HashSet<String>,
}

/// `path` up to its last key: `spec.containers[1]` for `spec.containers[1].image`.
fn parent_path(path: &str) -> &str {
    path.rfind('.').map_or("", |at| &path[..at])
}

/// The keys of the lists `usual` folds to their size: `requires_dist` for
/// `"requires_dist":[…21 items]`. A folded object is not counted: the usual rendering folds a
/// record's big objects, and outranks the shallow leaves in them for good reasons.
fn folded_lists(usual: &str) -> Vec<String> {
    const MARK: &str = "\":[…";
    let mut keys = Vec::new();
    for (at, _) in usual.match_indices(MARK) {
        let before = &usual[..at];
        // The key's opening quote: the last quote before it (a key holding a quote is skipped).
        let Some(open) = before.rfind('"') else {
            continue;
        };
        if let Ok(key) = serde_json::from_str::<String>(&usual[open..=at]) {
            keys.push(key);
        }
    }
    keys
}

/// Whether a list on `path` (`metadata.requires_dist[5]`: `requires_dist`) is one of the
/// `folded` lists: its items are lost whatever their depth.
fn inside_folded(path: &str, folded: &[String]) -> bool {
    path.split('.').any(|segment| {
        segment
            .split_once('[')
            .is_some_and(|(key, _)| folded.iter().any(|f| f == key))
    })
}

/// Whether `leaf` is a short list the usual rendering folds whole (`"default":[…4 items]`).
fn is_folded_list(leaf: &Leaf<'_>, folded: &[String]) -> bool {
    leaf.value.is_array() && {
        let key = &leaf.path[parent_path(&leaf.path).len()..].trim_start_matches('.');
        folded.iter().any(|f| f == key)
    }
}

/// A leaf's value as compact JSON, a long string cut to its head.
fn render_value(value: &Value) -> String {
    match value {
        Value::String(s) if s.len() > MAX_LEAF_STRING => {
            let head = &s[..crate::tokens::floor_char_boundary(s, MAX_LEAF_STRING)];
            let quoted = json_string(head);
            format!("{}…\"", &quoted[..quoted.len() - 1])
        }
        other => compact(other),
    }
}

/// Walks `v`, pushing every scalar with its path and score; `named` is the score its
/// ancestors' keys give it.
fn collect<'v>(
    v: &'v Value,
    path: &mut String,
    depth: usize,
    named: i32,
    query: &Query,
    leaves: &mut Vec<Leaf<'v>>,
) {
    if depth > MAX_DEPTH {
        return;
    }
    // A pair's `value` (`{"name":"LOG_LEVEL","value":"debug"}`) says nothing without its name.
    let unnamed = v
        .as_object()
        .is_some_and(|map| !map.keys().any(|k| is_identity_key(k)));
    for_each_child(v, path, MAX_ITEMS, |key, x, path| {
        if is_leaf(x) {
            let mut leaf = leaf(path, x, key, depth, named, query);
            if unnamed && key.is_some_and(|k| k.eq_ignore_ascii_case("value")) {
                leaf.score += HELD_VALUE;
            }
            leaves.push(leaf);
        } else {
            let key_named = key.is_some_and(|k| key_words_named(k, query).1 > 0);
            let inherited = named + if key_named { PARENT_KEY_NAMED } else { 0 };
            collect(x, path, depth + 1, inherited, query, leaves);
        }
    });
}

/// Calls `f` with each member (its key) or item (no key, at most `max_items`) of `v`, `path`
/// extended to it (`spec.containers`, `spec.containers[0]`) and put back after.
fn for_each_child<'v>(
    v: &'v Value,
    path: &mut String,
    max_items: usize,
    mut f: impl FnMut(Option<&'v str>, &'v Value, &mut String),
) {
    let base = path.len();
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                set_member_path(path, base, k);
                f(Some(k), x, path);
            }
        }
        Value::Array(items) => {
            for (i, x) in items.iter().take(max_items).enumerate() {
                path.truncate(base);
                let _ = write!(path, "[{i}]");
                f(None, x, path);
            }
        }
        _ => {}
    }
    path.truncate(base);
}

/// The leaf `x` at `path`, under `key` (none for an array item), scored: by the query words
/// in its key and its ancestors' keys (`named`), by its value, as identity, or as noise.
fn leaf<'v>(
    path: &str,
    x: &'v Value,
    key: Option<&str>,
    depth: usize,
    named: i32,
    query: &Query,
) -> Leaf<'v> {
    let (key_words, key_named_words) = key.map_or((0, 0), |k| key_words_named(k, query));
    let key_named = key_named_words > 0;
    let mut score = named.min(PARENT_KEY_NAMED * 2);
    // `url` for "URL" says more than `followers_url` does.
    score += LAST_KEY_NAMED * key_named_words as i32 / key_words.max(1) as i32;
    if depth <= 1 && key.is_some_and(is_identity_key) {
        score += IDENTITY;
    }
    let (value, value_named, noisy) = value_score(x, query);
    score += value;
    // Noise unless asked for: a digest under a key the query names is the answer.
    if noisy && !key_named && named == 0 {
        score += OPAQUE;
    }
    Leaf {
        path: path.to_owned(),
        value: x,
        top_key: path.split(['.', '[']).next().unwrap_or("").to_owned(),
        score,
        strong: value_named || (key_named && key_named_words == key_words),
    }
}

fn is_scalar(v: &Value) -> bool {
    !v.is_object() && !v.is_array()
}

/// A scalar, or a short list of scalars: what is kept or left out as one.
fn is_leaf(v: &Value) -> bool {
    match v {
        Value::Array(items) => {
            !items.is_empty()
                && items.len() <= MAX_LIST_LEAF_ITEMS
                && items.iter().all(is_scalar)
                && compact(v).len() <= MAX_LIST_LEAF_BYTES
        }
        Value::Object(_) => false,
        _ => true,
    }
}

/// How many words the key has (split on punctuation and camelCase, stemmed) and how many of
/// them are query words.
pub(super) fn key_words_named(key: &str, query: &Query) -> (usize, usize) {
    let mut buf = String::new();
    let (mut words, mut named) = (0, 0);
    for_each_word(key, &mut buf, |w| {
        words += 1;
        named += usize::from(query.names_key_word(w));
    });
    (words, named)
}

/// Keys that name a record: kept so that a projected record still says which one it is.
fn is_identity_key(key: &str) -> bool {
    let lower = key.to_ascii_lowercase();
    matches!(
        lower.as_str(),
        "name" | "id" | "key" | "title" | "namespace" | "number" | "version" | "path" | "url"
    ) || lower.ends_with("name")
}

/// What a leaf's value says: named exactly, or by a word, by the query; or noise by its shape
/// (digests, UUIDs, base64, timestamps): its score from the query, whether the query names it,
/// and whether it is noise by its shape.
fn value_score(v: &Value, query: &Query) -> (i32, bool, bool) {
    match v {
        Value::String(s) => string_score(s, query),
        // A short list scores as its best item, and is noise only if all of them are.
        Value::Array(items) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|s| string_score(s, query))
            .fold((0, false, true), |(best, named, noisy), (s, n, o)| {
                (best.max(s), named || n, noisy && o)
            }),
        _ => (0, false, false),
    }
}

fn string_score(s: &str, query: &Query) -> (i32, bool, bool) {
    let mut score = 0;
    let mut named = false;
    if query.mentions(s) {
        score += VALUE_NAMED_EXACTLY;
        named = true;
    } else if s.len() <= MAX_VALUE_WORDS_BYTES {
        let mut buf = String::new();
        for_each_word(s, &mut buf, |w| named |= query.words.contains_key(w));
        if named {
            score += VALUE_WORD_NAMED;
        }
    }
    let noisy = !named && (opaque_share(s) >= 0.5 || is_timestamp(s));
    (score, named, noisy)
}

/// `2020-03-30T02:22:43Z` and the like: when something was created or changed is seldom what
/// is asked, unless the query names it.
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() >= 19
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[7] == b'-'
        && (b[10] == b'T' || b[10] == b' ')
        && b[13] == b':'
}

#[cfg(test)]
mod tests;
