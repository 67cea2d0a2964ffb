//! Rendering one JSON record compactly within a byte cap: long strings keep their head and the
//! part the query names, long arrays their first items and those the query names, and a record
//! that is still too long keeps the fields the query names and the short ones first.

use std::fmt::Write as _;

use serde_json::Value;

use super::{INLINE_BYTES, MAX_CATEGORY_BYTES, MIN_STRING_BYTES, SUMMARY_HEAD};
use crate::methods::extract::query::Query;
use crate::methods::extract::tree::noise::opaque_share;

/// Opaque strings this long or longer are digests, shown by their head (see
/// [`elided_digest`]); shorter ones (a commit id, a UUID) are kept whole, as they are asked for.
const MIN_DIGEST_BYTES: usize = 64;
/// Bytes of a digest's head kept.
const DIGEST_HEAD: usize = 16;
/// Items of a long list shown: its first and those the query names.
const MAX_LIST_ITEMS: usize = 8;
/// The longest name of a name/value list (see [`is_name_value_list`]).
const MAX_NAME_BYTES: usize = 64;
/// The end of a traceback a cut text keeps is cut to this many bytes.
const MAX_TAIL_BYTES: usize = 200;

/// What stays the same while rendering one record.
pub(super) struct Ctx<'q> {
    query: Option<&'q Query>,
    /// Whether a top-level field's value is what sets the record apart (rare, a failure).
    notable: &'q dyn Fn(&str, &Value) -> bool,
    /// Strings are not cut shorter than this.
    min_string: usize,
    /// Whether long strings keep the sentences the query's words sit in (see `window`).
    windows: bool,
    /// The room of a text the query names, wherever it sits in the record (see [`text_cap`]).
    text_room: usize,
    /// Per exact query string: whether most of the record's siblings hold it, so that it
    /// singles out none of them (the host of every link).
    common: &'q [bool],
}

/// `v` rendered compactly within `max_bytes`, tightening until it fits (a unit longer than
/// that is cut in pieces later, which reads worse than a record shortened here). With
/// `windows`, long strings keep the sentences that hold the query's words past their head;
/// `common` marks the exact query strings most siblings of `v` hold.
pub(super) fn render_within(
    v: &Value,
    max_bytes: usize,
    (query, windows, common): (Option<&Query>, bool, &[bool]),
    exclude: &dyn Fn(&str) -> bool,
    notable: &dyn Fn(&str, &Value) -> bool,
) -> String {
    let mut ctx = Ctx {
        query,
        min_string: MIN_STRING_BYTES,
        notable,
        windows,
        text_room: max_bytes / 2,
        common,
    };
    let mut budget = max_bytes;
    let mut out = String::new();
    for _ in 0..5 {
        out.clear();
        render(&mut out, v, budget, 0, &ctx, exclude);
        if out.len() <= max_bytes {
            break;
        }
        budget = (budget as f64 * max_bytes as f64 / out.len() as f64 * 0.9) as usize;
        ctx.min_string = (ctx.min_string * 2 / 3).max(40);
        ctx.text_room = ctx.text_room * 2 / 3;
    }
    if out.len() > max_bytes {
        // Still too long: keep its head whole rather than emit it in disjoint pieces.
        out.truncate(crate::tokens::floor_char_boundary(
            &out,
            max_bytes.saturating_sub(4),
        ));
        out.push('…');
    }
    out
}

/// Writes `v` compactly within about `budget` bytes: scalars first, then containers share
/// what is left; long strings keep their head (and the part a query names), long arrays their
/// first items and the items a query names, and what does not fit is summarised.
pub(super) fn render(
    out: &mut String,
    v: &Value,
    budget: usize,
    depth: usize,
    ctx: &Ctx<'_>,
    exclude: &dyn Fn(&str) -> bool,
) {
    let query = ctx.query;
    match v {
        Value::String(s) if let Some(short) = elided_digest(s, query) => out.push_str(&short),
        Value::String(s) => render_string(
            out,
            s,
            budget.max(ctx.min_string),
            query.filter(|_| ctx.windows),
            query,
        ),
        Value::Array(items) => {
            if budget < 24 || depth >= 4 {
                out.push_str(&summary(v));
                return;
            }
            let kept: Vec<usize> = match query {
                Some(q) if is_name_value_list(items) => named_pairs(items, q),
                _ => items
                    .iter()
                    .enumerate()
                    .filter(|(i, x)| *i < 3 || query.is_some_and(|q| mentions(q, x)))
                    .map(|(i, _)| i)
                    .take(MAX_LIST_ITEMS)
                    .collect(),
            };
            let share = budget / kept.len().max(1);
            out.push('[');
            let mut last = None;
            for &i in &kept {
                if last.is_some_and(|l| l + 1 != i) {
                    out.push_str("…,");
                }
                render(out, &items[i], share, depth + 1, ctx, &|_| false);
                out.push(',');
                last = Some(i);
            }
            let left = items.len() - kept.len();
            if left > 0 {
                let _ = write!(out, "…+{left}");
            } else if !kept.is_empty() {
                out.pop();
            }
            out.push(']');
        }
        Value::Object(map) => {
            if budget < 24 || depth >= 4 {
                out.push_str(&summary(v));
                return;
            }
            // Scalars are cheap and usually what is asked for; containers share the rest.
            let scalar_bytes: usize = map
                .iter()
                .filter(|(k, x)| !exclude(k) && !x.is_object() && !x.is_array())
                .map(|(k, x)| k.len() + 4 + approx_len(x, budget).min(budget / 3 + 8))
                .sum();
            let containers = map
                .iter()
                .filter(|(k, x)| !exclude(k) && (x.is_object() || x.is_array()))
                .count();
            let share = budget.saturating_sub(scalar_bytes) / containers.max(1);
            // A long text field is content; its head says what it is, and the query window (if
            // any) what matters in it.
            let string_cap = ctx.min_string;
            // When the scalars alone overflow, keep those the query names (by key or value)
            // and the short ones (ids, names, states, dates) before long ones (URLs, text).
            let keep = if scalar_bytes > budget {
                Some(choose_scalars(map, budget, string_cap, ctx, depth, exclude))
            } else {
                None
            };
            out.push('{');
            let mut any = false;
            let mut dropped = 0;
            for (k, x) in map {
                if exclude(k) {
                    continue;
                }
                if keep
                    .as_ref()
                    .is_some_and(|keep| !keep.contains(&k.as_str()))
                {
                    dropped += 1;
                    continue;
                }
                out.push_str(&json_string(k));
                out.push(':');
                match x {
                    Value::Object(_) | Value::Array(_) if approx_len(x, share) <= share => {
                        out.push_str(&compact(x))
                    }
                    Value::Object(_) | Value::Array(_) => {
                        render(out, x, share, depth + 1, ctx, &|_| false)
                    }
                    // A digest the query asks for by its key (the `parent` of "what was its
                    // parent") is the answer, whole.
                    Value::String(s)
                        if asks_by_key(k, query) && elided_digest(s, query).is_some() =>
                    {
                        out.push_str(&json_string(s))
                    }
                    _ => {
                        let cap = match x {
                            Value::String(s) => text_cap(s, string_cap, ctx),
                            _ => string_cap,
                        };
                        render(out, x, cap, depth + 1, ctx, &|_| false)
                    }
                }
                out.push(',');
                any = true;
            }
            if dropped > 0 {
                let _ = write!(out, "…+{dropped}");
            } else if any {
                out.pop();
            }
            out.push('}');
        }
        other => out.push_str(&compact(other)),
    }
}

/// The cap of a string member of a record: a text of several lines that the query names
/// exactly, by an identifier, path or number few siblings hold (a compiler message at the line
/// asked about, a traceback, a test failure's report), is what the record says, and may take
/// half the record's room wherever it sits; any other string is cut at `string_cap`.
fn text_cap(s: &str, string_cap: usize, ctx: &Ctx<'_>) -> usize {
    /// Line breaks that make a string a text rather than a value.
    const MIN_LINE_BREAKS: usize = 2;
    let Some(query) = ctx.query else {
        return string_cap;
    };
    let is_text = || {
        memchr::memchr_iter(b'\n', s.as_bytes())
            .nth(MIN_LINE_BREAKS - 1)
            .is_some()
    };
    // An identifier, path, number or call (`src/error.rs`, `115`, `iter().any()`); a quoted
    // plain word (`'bug'`) is found inside other words of any prose.
    let specific = |i: usize| {
        !ctx.common.get(i).copied().unwrap_or(false)
            && query.exact[i].bytes().any(|b| !b.is_ascii_alphabetic())
    };
    if s.len() > string_cap && is_text() && query.mentions_where(s, specific) {
        ctx.text_room.max(string_cap)
    } else {
        string_cap
    }
}

/// The line that ends a Python traceback (`FileNotFoundError: [Errno 2] No such file …`),
/// cut to [`MAX_TAIL_BYTES`], or `""` when `s` holds none: what went wrong is said last, and a
/// log record's text cut to its head would lose it.
fn traceback_tail(s: &str) -> &str {
    if !s.contains("Traceback (most recent call last):") {
        return "";
    }
    let last = s
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    &last[..crate::tokens::floor_char_boundary(last, MAX_TAIL_BYTES)]
}

/// A long digest or base64 run (an `integrity` hash, an image digest) the query does not
/// name, as its head and a mark: it costs many tokens and hardly ever answers, and its head
/// still tells two apart.
pub(super) fn elided_digest(s: &str, query: Option<&Query>) -> Option<String> {
    if s.len() < MIN_DIGEST_BYTES || opaque_share(s) < 0.5 || query.is_some_and(|q| q.mentions(s)) {
        return None;
    }
    let quoted = json_string(&s[..crate::tokens::floor_char_boundary(s, DIGEST_HEAD)]);
    Some(format!("{}…\"", &quoted[..quoted.len() - 1]))
}

/// [`elided_digest`] for a member's value: a digest the query asks for by its key (the
/// `nextPageToken` of "is there a token for the next page") is kept whole.
pub(super) fn elided_member_digest(key: &str, s: &str, query: Option<&Query>) -> Option<String> {
    if asks_by_key(key, query) {
        return None;
    }
    elided_digest(s, query)
}

/// Whether `key` is mostly of query words (`next`, `page` and `token` of `nextPageToken`):
/// the query asks for its value.
fn asks_by_key(key: &str, query: Option<&Query>) -> bool {
    query.is_some_and(|q| {
        let (named, words) = q.key_words_named(key);
        named * 2 > words
    })
}

/// `window_query`, when given, is the query whose sentences are kept past the head.
pub(super) fn render_string(
    out: &mut String,
    s: &str,
    cap: usize,
    window_query: Option<&Query>,
    query: Option<&Query>,
) {
    if s.len() <= cap {
        out.push_str(&json_string(s));
        return;
    }
    // The sentences that hold the query's words are worth more than more of the head.
    if let Some(text) = window_query.and_then(|q| {
        crate::methods::extract::window::windowed(s, cap, q, crate::methods::extract::window::PROSE)
    }) {
        let quoted = json_string(&text);
        out.push_str(&quoted[..quoted.len() - 1]);
        out.push_str("…\"");
        return;
    }
    let tail = traceback_tail(s);
    let head = &s[..crate::tokens::floor_char_boundary(s, cap.saturating_sub(tail.len()))];
    let mut text = head.to_owned();
    // A part of the rest that the query names is worth more than more of the head.
    if let Some(q) = query
        && let Some(at) = q.first_exact_match(&s[head.len()..])
    {
        let at = head.len() + at;
        let from = crate::tokens::floor_char_boundary(s, at.saturating_sub(60).max(head.len()));
        let to = crate::tokens::floor_char_boundary(s, at + 100);
        text.push_str(" … ");
        text.push_str(&s[from..to]);
    }
    if !tail.is_empty() && !text.contains(tail) {
        text.push_str(" … ");
        text.push_str(tail);
    }
    let quoted = json_string(&text);
    out.push_str(&quoted[..quoted.len() - 1]);
    out.push_str("…\"");
}

/// Whether `items` alternate names and values, as the raw headers of an HTTP recording do
/// (`["Server", "GitHub.com", "Content-Type", "application/json", …]`): every even item is a
/// bare name, and some odd item is not one.
pub(super) fn is_name_value_list(items: &[Value]) -> bool {
    let is_name = |s: &str| {
        (1..=MAX_NAME_BYTES).contains(&s.len())
            && s.starts_with(|c: char| c.is_ascii_alphabetic())
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b))
    };
    items.len() >= 4
        && items.len().is_multiple_of(2)
        && items
            .iter()
            .step_by(2)
            .all(|x| x.as_str().is_some_and(is_name))
        && items.iter().skip(1).step_by(2).all(Value::is_string)
        && items
            .iter()
            .skip(1)
            .step_by(2)
            .any(|x| x.as_str().is_some_and(|s| !is_name(s)))
}

/// The items of a name/value list to show: whole pairs, those whose name the query quotes
/// most closely first (`X-RateLimit-Remaining` before a mere `GitHub` in a name), then those
/// whose value it quotes, then the first; in their order.
fn named_pairs(items: &[Value], query: &Query) -> Vec<usize> {
    let closeness = |x: &Value| {
        let mut longest = 0;
        if let Some(s) = x.as_str() {
            query.for_each_exact_in(s, |i| longest = longest.max(query.exact[i].len()));
        }
        longest
    };
    let mut ranked: Vec<(usize, usize, usize)> = (0..items.len())
        .step_by(2)
        .map(|i| (closeness(&items[i]), closeness(&items[i + 1]), i))
        .collect();
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
    let mut kept: Vec<usize> = ranked
        .iter()
        .take(MAX_LIST_ITEMS / 2)
        .flat_map(|&(_, _, i)| [i, i + 1])
        .collect();
    kept.sort_unstable();
    kept
}

/// The members of `map` to show when not all fit in `budget`: ranked by whether the query
/// names the key or the value, then by size, and taken while they fit.
pub(super) fn choose_scalars<'m>(
    map: &'m serde_json::Map<String, Value>,
    budget: usize,
    string_cap: usize,
    ctx: &Ctx<'_>,
    depth: usize,
    exclude: &dyn Fn(&str) -> bool,
) -> Vec<&'m str> {
    let query = ctx.query;
    let mut ranked: Vec<(u8, usize, usize, &str)> = Vec::new();
    let mut buf = String::new();
    let unnamed = !map.keys().any(|k| is_naming_key(k));
    for (i, (k, x)) in map.iter().enumerate() {
        if exclude(k) {
            continue;
        }
        let size = k.len() + 4 + approx_len(x, string_cap).min(string_cap + 4);
        let mut rank = 0u8;
        if let Some(q) = query {
            let mut key_named = false;
            crate::methods::extract::terms::for_each_word(k, &mut buf, |w| {
                key_named |= q.names_key_word(w);
            });
            if key_named || matches!(x, Value::String(s) if q.mentions(s)) {
                rank += 2;
            }
        }
        if size <= 64 {
            rank += 1;
        }
        // A record's first member is what names it (`SourceFile`, `name`, `id`): kept before
        // its notable values, even when long, so that what is shown says which record it is.
        // So is a member whose key says it names the record (`name`, `displayName`, `title`),
        // wherever it sits: a record's keys may come in alphabetical order.
        if depth == 0 && (i == 0 || is_naming_key(k)) && (x.is_string() || x.is_number()) {
            rank += 4;
        }
        if depth == 0 && (ctx.notable)(k, x) {
            rank += 3;
        }
        // A member keyed `value` is what its object holds, at any depth, when no member names
        // the object: the others of `{"meta":…,"value":"PALDISKI","$source":…}` describe it.
        if unnamed && k.eq_ignore_ascii_case("value") && !x.is_object() && !x.is_array() {
            rank += 4;
        }
        ranked.push((rank, size, i, k.as_str()));
    }
    ranked.sort_by(|a, b| b.0.cmp(&a.0).then(a.2.cmp(&b.2)));
    let mut used = 0;
    let mut keep = Vec::new();
    for (_, size, _, k) in ranked {
        if used + size <= budget {
            used += size;
            keep.push(k);
        }
    }
    keep
}

/// Whether a record's key says its value names the record: `name`, `id`, `title`, `label`,
/// or a compound ending in one of the words (`displayName`, `host_name`, `fileName`).
pub(crate) fn is_naming_key(key: &str) -> bool {
    // Compared as bytes, without a lowercased copy: it runs for every member of a record cut.
    let key = key.as_bytes();
    let ends_with = |word: &[u8]| {
        key.len() >= word.len() && key[key.len() - word.len()..].eq_ignore_ascii_case(word)
    };
    key.eq_ignore_ascii_case(b"id")
        || [&b"name"[..], b"title", b"label"]
            .into_iter()
            .any(ends_with)
}

/// How many short field values of `item` contain a string the query names exactly: the
/// query names a value (a version, a state, an id), which says more than a mention in prose.
/// An exact string marked in `common` does not count: most of the record's siblings hold it
/// (the host in every link), so it tells none of them apart.
pub(super) fn named_values(query: &Query, item: &Value, common: &[bool]) -> usize {
    named_values_where(query, item, |i| !common.get(i).copied().unwrap_or(false))
}

/// How many short field values of `item` contain an exact string of the query that `counts`
/// accepts, by its index.
pub(super) fn named_values_where(
    query: &Query,
    item: &Value,
    counts: impl Fn(usize) -> bool,
) -> usize {
    let mut count = 0;
    for_each_scalar(item, "", 0, &mut |_, value| {
        if let Value::String(s) = value
            && s.len() <= MAX_CATEGORY_BYTES
            && query.mentions_where(s, &counts)
        {
            count += 1;
        }
    });
    count
}

/// Whether a query term appears in the scalar values of `v` (one level deep).
pub(super) fn mentions(query: &Query, v: &Value) -> bool {
    match v {
        Value::String(s) => query.mentions(s),
        Value::Object(m) => m
            .values()
            .any(|x| matches!(x, Value::String(s) if query.mentions(s))),
        _ => false,
    }
}

/// Calls `f` with every scalar of `v` down to two levels of objects, keyed by its dotted path.
pub(super) fn for_each_scalar(
    v: &Value,
    prefix: &str,
    depth: usize,
    f: &mut dyn FnMut(&str, &Value),
) {
    let mut path = String::from(prefix);
    scalars_under(v, &mut path, depth, f);
}

/// Sets `path`, cut back to `base` (its parent's path), to member `key` under it:
/// `spec.containers`, or `key` alone at the top.
pub(super) fn set_member_path(path: &mut String, base: usize, key: &str) {
    path.truncate(base);
    if base > 0 {
        path.push('.');
    }
    path.push_str(key);
}

/// Walks `v` with `path` as the dotted key so far, reusing one buffer for every key.
pub(super) fn scalars_under(
    v: &Value,
    path: &mut String,
    depth: usize,
    f: &mut dyn FnMut(&str, &Value),
) {
    let Value::Object(map) = v else { return };
    let base = path.len();
    for (k, x) in map {
        set_member_path(path, base, k);
        match x {
            Value::Object(_) if depth < 1 => scalars_under(x, path, depth + 1, f),
            Value::Object(_) | Value::Array(_) => {}
            _ => f(path, x),
        }
    }
    path.truncate(base);
}

/// The compact length of `v`, counted only up to a little past `limit`.
pub(super) fn approx_len(v: &Value, limit: usize) -> usize {
    fn go(v: &Value, limit: usize, acc: &mut usize) {
        if *acc > limit {
            return;
        }
        match v {
            Value::Null => *acc += 4,
            Value::Bool(_) => *acc += 5,
            Value::Number(_) => *acc += 8,
            Value::String(s) => *acc += s.len() + 2,
            Value::Array(a) => {
                *acc += 2;
                for x in a {
                    go(x, limit, acc);
                    *acc += 1;
                    if *acc > limit {
                        return;
                    }
                }
            }
            Value::Object(m) => {
                *acc += 2;
                for (k, x) in m {
                    *acc += k.len() + 4;
                    go(x, limit, acc);
                    if *acc > limit {
                        return;
                    }
                }
            }
        }
    }
    let mut acc = 0;
    go(v, limit, &mut acc);
    acc
}
/// `path: text`, or `text` alone at the root.
pub(super) fn labelled(path: &str, text: &str) -> String {
    if path.is_empty() {
        text.to_owned()
    } else {
        format!("{path}: {text}")
    }
}

pub(super) fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

pub(super) fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `[…30 items]`, `{…12 keys}` or a long string's head: what a big child holds, for its
/// parent's line (the child itself is a unit of its own).
pub(super) fn summary(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("[…{} items]", a.len()),
        Value::Object(m) => format!("{{…{} keys}}", m.len()),
        Value::String(s) if s.len() > INLINE_BYTES => {
            let quoted = json_string(&s[..crate::tokens::floor_char_boundary(s, SUMMARY_HEAD)]);
            format!("{}…\"", &quoted[..quoted.len() - 1])
        }
        other => compact(other),
    }
}
