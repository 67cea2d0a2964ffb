//! JSON: records (objects in an array, JSON Lines) are the units, framed by a schema line with
//! their keys, types and count. Each record is rendered compactly on one line, its long strings
//! and arrays shortened within a byte cap, and its fields feed rarity (the one failed run among
//! successes) and extremes (the largest change).

use std::collections::HashMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{Doc, Field, FieldValue, Level, Unit};
use crate::methods::extract::query::Query;

/// Arrays and objects bigger than this (compact bytes) are split into units of their own;
/// smaller ones are shown inline.
const INLINE_BYTES: usize = 200;
/// Strings are never cut shorter than this: an error message and its location fit.
const MIN_STRING_BYTES: usize = 160;
/// Values kept from one field for rarity: longer strings are content, not categories.
const MAX_CATEGORY_BYTES: usize = 64;
/// Prior of a record whose values say it failed.
const ERROR_PRIOR: f32 = 4.0;
/// Prior of a record per short field value (up to two) that holds a string the query names.
const NAMED_VALUE_PRIOR: f32 = 3.0;

pub(crate) fn build_document(
    value: &Value,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'static> {
    let mut builder = Builder::new(query, max_unit_bytes);
    builder.walk(value, "", None, 0);
    builder.finish(ContentKind::Json)
}

pub(crate) fn build_lines(
    text: &str,
    query: Option<&Query>,
    max_unit_bytes: usize,
) -> Doc<'static> {
    let mut builder = Builder::new(query, max_unit_bytes);
    let mut parsed: Vec<(String, Value)> = Vec::new();
    let mut raw_lines = Vec::new();
    for (i, line) in text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
    {
        match serde_json::from_str::<Value>(line) {
            Ok(v) => parsed.push((String::new(), v)),
            Err(_) => raw_lines.push((i, line)),
        }
    }
    let items: Vec<(String, &Value)> = parsed.iter().map(|(l, v)| (l.clone(), v)).collect();
    builder.records(&items, "", None);
    // Lines that are not JSON (a stray log line between messages) are kept as plain lines.
    for (_, line) in raw_lines {
        let level = crate::methods::extract::doc::level_from_words(line);
        builder.push(
            line,
            Unit {
                level,
                prior: if level == Level::Error { 3.0 } else { 0.0 },
                ..Unit::default()
            },
        );
    }
    builder.finish(ContentKind::JsonLines)
}

struct Builder<'q> {
    source: String,
    units: Vec<Unit>,
    fields: Vec<Field>,
    query: Option<&'q Query>,
    max_unit_bytes: usize,
    blocks: u32,
}

impl<'q> Builder<'q> {
    fn new(query: Option<&'q Query>, max_unit_bytes: usize) -> Self {
        Builder {
            source: String::new(),
            units: Vec::new(),
            fields: Vec::new(),
            query,
            max_unit_bytes: max_unit_bytes.max(INLINE_BYTES),
            blocks: 0,
        }
    }

    fn finish(self, kind: ContentKind) -> Doc<'static> {
        Doc {
            kind,
            source: self.source.into(),
            units: self.units,
            // The schema line of each record array already gives counts.
            overview: None,
            noun: "items",
            fields: self.fields,
        }
    }

    /// Appends `text` as one unit.
    fn push(&mut self, text: &str, unit: Unit) -> usize {
        let start = self.source.len();
        self.source.push_str(text);
        let end = self.source.len();
        self.source.push('\n');
        self.units.push(Unit {
            span: start..end,
            weight: 1,
            ..unit
        });
        self.units.len() - 1
    }

    fn walk(&mut self, value: &Value, path: &str, parent: Option<usize>, depth: usize) {
        let small = approx_len(value, INLINE_BYTES) <= INLINE_BYTES;
        match value {
            Value::Array(items) if is_record_array(items.iter()) && !small => {
                let items: Vec<(String, &Value)> = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (format!("[{i}]"), v))
                    .collect();
                self.records(&items, path, parent);
            }
            Value::Array(items) if !small => {
                let mut chunk: Vec<&Value> = Vec::new();
                let mut chunk_start = 0;
                let mut chunk_bytes = 0;
                for (i, item) in items.iter().enumerate() {
                    let len = approx_len(item, self.max_unit_bytes);
                    if item.is_object() || item.is_array() && len > INLINE_BYTES {
                        self.scalar_chunk(path, chunk_start, &chunk, parent);
                        chunk.clear();
                        self.walk(item, &format!("{path}[{i}]"), parent, depth + 1);
                        chunk_start = i + 1;
                        chunk_bytes = 0;
                        continue;
                    }
                    if chunk_bytes + len > self.max_unit_bytes / 2 && !chunk.is_empty() {
                        self.scalar_chunk(path, chunk_start, &chunk, parent);
                        chunk.clear();
                        chunk_start = i;
                        chunk_bytes = 0;
                    }
                    chunk.push(item);
                    chunk_bytes += len + 1;
                }
                self.scalar_chunk(path, chunk_start, &chunk, parent);
            }
            Value::Object(map) if !small => {
                let object_members = map.values().filter(|v| v.is_object()).count();
                if map.len() >= 8 && object_members * 10 >= map.len() * 8 {
                    let items: Vec<(String, &Value)> =
                        map.iter().map(|(k, v)| (format!(".{k}"), v)).collect();
                    self.records(&items, path, parent);
                    return;
                }
                // The object's own line: scalars inline, big children summarised and walked.
                let mut line = String::new();
                let mut big = Vec::new();
                for (k, v) in map {
                    let inline = approx_len(v, INLINE_BYTES) <= INLINE_BYTES;
                    if !inline {
                        big.push((k, v));
                    }
                    let _ = write!(line, "{}:", json_string(k));
                    if inline {
                        line.push_str(&compact(v));
                    } else {
                        line.push_str(&summary(v));
                    }
                    line.push(',');
                }
                line.pop();
                let text = labelled(path, &format!("{{{line}}}"));
                let unit = self.push(
                    &text,
                    Unit {
                        parent,
                        pinned: depth <= 1,
                        ..Unit::default()
                    },
                );
                for (k, v) in big {
                    let child = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    self.walk(v, &child, Some(unit), depth + 1);
                }
            }
            _ => {
                let text = labelled(path, &compact(value));
                self.push(
                    &text,
                    Unit {
                        parent,
                        pinned: depth == 0,
                        ..Unit::default()
                    },
                );
            }
        }
    }

    fn scalar_chunk(&mut self, path: &str, start: usize, items: &[&Value], parent: Option<usize>) {
        if items.is_empty() {
            return;
        }
        let body: Vec<String> = items.iter().map(|v| compact(v)).collect();
        let label = format!("{path}[{start}..{}]", start + items.len());
        let text = labelled(&label, &format!("[{}]", body.join(",")));
        let unit = self.push(
            &text,
            Unit {
                parent,
                ..Unit::default()
            },
        );
        self.units[unit].weight = items.len() as u32;
    }

    /// Sibling records: a schema line, then one line per record.
    fn records(&mut self, items: &[(String, &Value)], path: &str, parent: Option<usize>) {
        let stats = KeyStats::collect(items.iter().map(|(_, v)| *v));
        let schema = self.push(
            &stats.describe(path, items.len()),
            Unit {
                parent,
                pinned: true,
                ..Unit::default()
            },
        );
        self.blocks += 1;
        let first_field = self.fields.len();
        let mut field_index: HashMap<String, usize> = HashMap::new();
        for (label, item) in items {
            let exclude = |k: &str| stats.constant.contains_key(k);
            let notable = |k: &str, v: &Value| stats.is_notable(k, v);
            // Records are many: a smaller cap fits more of them, and the shortening keeps the
            // fields the query names.
            let cap = (self.max_unit_bytes * 2 / 3).max(INLINE_BYTES);
            let body = render_within(item, cap, self.query, &exclude, &notable);
            let text = if label.is_empty() {
                body
            } else {
                labelled(&format!("{path}{label}"), &body)
            };
            let level = record_level(item);
            let named = self.query.map_or(0, |q| named_values(q, item));
            let prior = if level == Level::Error {
                ERROR_PRIOR
            } else {
                0.0
            } + NAMED_VALUE_PRIOR * named.min(2) as f32;
            let unit = self.push(
                &text,
                Unit {
                    parent: Some(schema),
                    template: Some(record_template(item)),
                    level,
                    prior,
                    ..Unit::default()
                },
            );
            for_each_scalar(item, "", 0, &mut |key, value| {
                let Some(value) = field_value(value) else {
                    return;
                };
                let next = first_field + field_index.len();
                let index = match field_index.get(key) {
                    Some(&index) => index,
                    None => *field_index.entry(key.to_owned()).or_insert(next),
                };
                if index == self.fields.len() {
                    self.fields.push(Field::default());
                }
                self.fields[index].values.push((unit, value));
            });
        }
    }
}

/// `path: text`, or `text` alone at the root.
fn labelled(path: &str, text: &str) -> String {
    if path.is_empty() {
        text.to_owned()
    } else {
        format!("{path}: {text}")
    }
}

fn json_string(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| format!("\"{s}\""))
}

fn compact(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

/// `[…30 items]` or `{…12 keys}`: what a big child holds, for its parent's line.
fn summary(v: &Value) -> String {
    match v {
        Value::Array(a) => format!("[…{} items]", a.len()),
        Value::Object(m) => format!("{{…{} keys}}", m.len()),
        other => compact(other),
    }
}

/// At least two elements and most of them objects.
fn is_record_array<'v>(items: impl ExactSizeIterator<Item = &'v Value>) -> bool {
    let n = items.len();
    n >= 2 && items.filter(|v| v.is_object()).count() * 10 >= n * 8
}

/// The compact length of `v`, counted only up to a little past `limit`.
fn approx_len(v: &Value, limit: usize) -> usize {
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

/// What stays the same while rendering one record.
struct Ctx<'q> {
    query: Option<&'q Query>,
    /// Whether a top-level field's value is what sets the record apart (rare, a failure).
    notable: &'q dyn Fn(&str, &Value) -> bool,
    /// Strings are not cut shorter than this.
    min_string: usize,
}

/// `v` rendered compactly within `max_bytes`, tightening until it fits (a unit longer than
/// that is cut in pieces later, which reads worse than a record shortened here).
fn render_within(
    v: &Value,
    max_bytes: usize,
    query: Option<&Query>,
    exclude: &dyn Fn(&str) -> bool,
    notable: &dyn Fn(&str, &Value) -> bool,
) -> String {
    let mut ctx = Ctx {
        query,
        min_string: MIN_STRING_BYTES,
        notable,
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
fn render(
    out: &mut String,
    v: &Value,
    budget: usize,
    depth: usize,
    ctx: &Ctx<'_>,
    exclude: &dyn Fn(&str) -> bool,
) {
    let query = ctx.query;
    match v {
        Value::String(s) => render_string(out, s, budget.max(ctx.min_string), query),
        Value::Array(items) => {
            if budget < 24 || depth >= 4 {
                out.push_str(&summary(v));
                return;
            }
            let keep = |i: usize, item: &Value| i < 3 || query.is_some_and(|q| mentions(q, item));
            let kept: Vec<usize> = items
                .iter()
                .enumerate()
                .filter(|(i, x)| keep(*i, x))
                .map(|(i, _)| i)
                .take(8)
                .collect();
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
                    _ => render(out, x, string_cap, depth + 1, ctx, &|_| false),
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

fn render_string(out: &mut String, s: &str, cap: usize, query: Option<&Query>) {
    if s.len() <= cap {
        out.push_str(&json_string(s));
        return;
    }
    let head = &s[..crate::tokens::floor_char_boundary(s, cap)];
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
    let quoted = json_string(&text);
    out.push_str(&quoted[..quoted.len() - 1]);
    out.push_str("…\"");
}

/// The members of `map` to show when not all fit in `budget`: ranked by whether the query
/// names the key or the value, then by size, and taken while they fit.
fn choose_scalars<'m>(
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
    for (i, (k, x)) in map.iter().enumerate() {
        if exclude(k) {
            continue;
        }
        let size = k.len() + 4 + approx_len(x, string_cap).min(string_cap + 4);
        let mut rank = 0u8;
        if let Some(q) = query {
            let mut key_named = false;
            crate::methods::extract::terms::for_each_word(k, &mut buf, |w| {
                key_named |= q.words.contains_key(w);
            });
            if key_named || matches!(x, Value::String(s) if q.mentions(s)) {
                rank += 2;
            }
        }
        if size <= 64 {
            rank += 1;
        }
        if depth == 0 && (ctx.notable)(k, x) {
            rank += 3;
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

/// How many short field values of `item` contain a string the query names exactly: the
/// query names a value (a version, a state, an id), which says more than a mention in prose.
fn named_values(query: &Query, item: &Value) -> usize {
    let mut count = 0;
    for_each_scalar(item, "", 0, &mut |_, value| {
        if let Value::String(s) = value
            && s.len() <= MAX_CATEGORY_BYTES
            && query.mentions(s)
        {
            count += 1;
        }
    });
    count
}

/// Whether a query term appears in the scalar values of `v` (one level deep).
fn mentions(query: &Query, v: &Value) -> bool {
    match v {
        Value::String(s) => query.mentions(s),
        Value::Object(m) => m
            .values()
            .any(|x| matches!(x, Value::String(s) if query.mentions(s))),
        _ => false,
    }
}

/// Calls `f` with every scalar of `v` down to two levels of objects, keyed by its dotted path.
fn for_each_scalar(v: &Value, prefix: &str, depth: usize, f: &mut dyn FnMut(&str, &Value)) {
    let mut path = String::from(prefix);
    scalars_under(v, &mut path, depth, f);
}

/// Walks `v` with `path` as the dotted key so far, reusing one buffer for every key.
fn scalars_under(v: &Value, path: &mut String, depth: usize, f: &mut dyn FnMut(&str, &Value)) {
    let Value::Object(map) = v else { return };
    let base = path.len();
    for (k, x) in map {
        path.truncate(base);
        if base > 0 {
            path.push('.');
        }
        path.push_str(k);
        match x {
            Value::Object(_) if depth < 1 => scalars_under(x, path, depth + 1, f),
            Value::Object(_) | Value::Array(_) => {}
            _ => f(path, x),
        }
    }
    path.truncate(base);
}

fn field_value(v: &Value) -> Option<FieldValue> {
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
fn is_failure_word(s: &str) -> bool {
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

fn record_level(item: &Value) -> Level {
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
fn record_template(item: &Value) -> u64 {
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
struct KeyStats {
    keys: Vec<(String, Vec<&'static str>)>,
    /// Keys present in every record with one and the same value.
    constant: HashMap<String, ()>,
    /// Per key, how often each short scalar value occurs.
    values: HashMap<String, HashMap<u64, usize>>,
    records: usize,
}

impl KeyStats {
    fn collect<'v>(items: impl Iterator<Item = &'v Value>) -> Self {
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
    fn is_notable(&self, k: &str, v: &Value) -> bool {
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

    fn describe(&self, path: &str, count: usize) -> String {
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

fn type_name(v: &Value) -> &'static str {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_of(text: &str) -> Doc<'static> {
        build_document(
            &serde_json::from_str(text).unwrap_or(Value::Null),
            None,
            1000,
        )
    }

    #[test]
    fn record_arrays_get_a_schema_line_and_one_line_per_record() {
        let doc = doc_of(
            r#"{"total":3,"runs":[{"id":1,"conclusion":"success","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},{"id":2,"conclusion":"failure","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},{"id":3,"conclusion":"success","pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}]}"#,
        );
        let texts: Vec<&str> = (0..doc.units.len()).map(|i| doc.text(i)).collect();
        assert!(
            texts[0].starts_with(r#"{"total":3,"runs":[…3 items]"#),
            "{texts:?}"
        );
        assert!(
            texts[1].starts_with("runs: 3 records; keys: id:int, conclusion:str"),
            "{texts:?}"
        );
        assert!(
            texts[3].starts_with(r#"runs[1]: {"id":2,"conclusion":"failure""#),
            "{texts:?}"
        );
        assert_eq!(doc.units[3].level, Level::Error);
    }

    #[test]
    fn long_strings_are_cut_with_a_mark() {
        let mut out = String::new();
        render_string(&mut out, &"a".repeat(1000), 200, None);
        assert!(out.len() < 220 && out.ends_with("…\""));
    }

    #[test]
    fn constant_children_are_named_once_in_the_schema() {
        let item =
            r#"{"id":1,"repo":{"name":"x","url":"https://example.com/a/long/url/that/repeats"}}"#;
        let text = format!(
            "[{item},{},{}]",
            item.replace("\"id\":1", "\"id\":2"),
            item.replace("\"id\":1", "\"id\":3")
        );
        let doc = doc_of(&text);
        let texts: Vec<&str> = (0..doc.units.len()).map(|i| doc.text(i)).collect();
        assert!(
            texts[0].ends_with("same in all (not repeated): repo"),
            "{texts:?}"
        );
        assert_eq!(texts[1], r#"[0]: {"id":1}"#);
    }

    #[test]
    fn a_record_cut_to_fit_keeps_the_value_that_sets_it_apart() {
        let records: Vec<Value> = (0..20)
            .map(|i| {
                let mut record = serde_json::Map::new();
                // Many short fields, each as cheap as the one that matters, all before it.
                for f in 0..40 {
                    record.insert(
                        format!("field_{f}"),
                        Value::String(format!("value-{i}-{f}")),
                    );
                }
                record.insert(
                    "status".into(),
                    Value::String(if i == 7 { "cancelled" } else { "ok" }.into()),
                );
                Value::Object(record)
            })
            .collect();
        let doc = build_document(&Value::Array(records), None, 600);
        let failed = (0..doc.units.len())
            .map(|i| doc.text(i))
            .find(|t| t.starts_with("[7]:"));
        assert!(
            failed.is_some_and(|t| t.contains(r#""status":"cancelled""#)),
            "{failed:?}"
        );
    }
}
