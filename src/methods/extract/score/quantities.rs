//! Quantities a log writes into its messages as `name=value` (`rss=182MB`, `took=1.25s`,
//! `queue=41`): no column holds them, yet when the query ranks by one ("how high did the RSS
//! get", "the slowest fetch") the entries holding its largest or smallest values answer, as
//! a ranked column's ends do in a table. So do the quantities it writes as a number and its
//! unit (`2050085 bytes each:` of `fdupes -S`) when the query ranks by that unit or by what it
//! measures ("the largest size").

use super::super::doc::{Doc, parse_quantity};
use super::super::query::{Ends, Query};
use super::MAX_RECORD_BLOCK;

/// The entries at a ranked quantity's asked end, best first, and the share of the weight
/// each gets: "how high did it get" reads on to the runners-up a little.
pub(super) const SHARES: [f32; 4] = [1.0, 0.8, 0.6, 0.45];
/// A quantity written by fewer entries than this is no series to rank.
const MIN_ENTRIES: usize = 3;
/// The weight of the top entry when no entry matches the query's words.
pub(super) const MIN_WEIGHT: f32 = 2.0;
/// Names are short identifiers (`rss`, `elapsed_ms`, `queue.depth`); a letter alone is a
/// URL's parameter more often than a quantity.
const MIN_NAME_BYTES: usize = 2;
const MAX_NAME_BYTES: usize = 32;

/// Raises the entries of `doc` holding the largest (or, when asked, smallest) values of each
/// `name=value` quantity the query ranks by, as much as its best match of words.
pub(in super::super) fn raise_ranked_quantities(
    doc: &Doc<'_>,
    query: &Query,
    query_scores: &[f32],
    scores: &mut [f32],
) {
    if query.ranked.is_empty() {
        return;
    }
    // Per quantity name: (unit, value) of every entry that writes it.
    let mut series: Vec<(&str, Vec<(usize, f64)>)> = Vec::new();
    for u in 0..doc.units.len() {
        let text = doc.text(u);
        for (name, value) in named_quantities(text).chain(counted_quantities(text)) {
            let at = match series.iter().position(|(n, _)| *n == name) {
                Some(at) => at,
                None if query.ranks(name) || query.ranks_implied(name) => {
                    series.push((name, Vec::new()));
                    series.len() - 1
                }
                None => continue,
            };
            series[at].1.push((u, value));
        }
    }
    let best = query_scores.iter().copied().fold(0.0f32, f32::max);
    let weight = best.max(MIN_WEIGHT);
    let ends = query.ends;
    for (_, mut values) in series {
        if values.len() < MIN_ENTRIES {
            continue;
        }
        values.sort_by(|a, b| b.1.total_cmp(&a.1));
        // The lines of its block come along (the files of a group under its size line, an
        // entry's continuation lines): they say what holds the quantity.
        raise_asked_ends(&values, ends, weight, &mut |u, gain| {
            for v in block_of(doc, u) {
                scores[v] += gain;
            }
        });
    }
}

/// Calls `raise` with the units of `values` (sorted largest first) at each end `ends` asks
/// for, best first, and their share of `weight` ([`SHARES`]).
pub(super) fn raise_asked_ends(
    values: &[(usize, f64)],
    ends: Ends,
    weight: f32,
    raise: &mut dyn FnMut(usize, f32),
) {
    if ends.high {
        for (&(u, _), share) in values.iter().zip(SHARES) {
            raise(u, weight * share);
        }
    }
    if ends.low {
        for (&(u, _), share) in values.iter().rev().zip(SHARES) {
            raise(u, weight * share);
        }
    }
}

/// `u` and the units around it of its block, when the block is small: the block of a
/// section is no one thing.
fn block_of(doc: &Doc<'_>, u: usize) -> std::ops::Range<usize> {
    let Some(block) = doc.units[u].block else {
        return u..u + 1;
    };
    let same = |v: &usize| doc.units[*v].block == Some(block);
    let start = (u.saturating_sub(MAX_RECORD_BLOCK)..u)
        .rev()
        .take_while(same)
        .last()
        .unwrap_or(u);
    let end = (u + 1..doc.units.len().min(u + MAX_RECORD_BLOCK + 1))
        .take_while(same)
        .last()
        .map_or(u + 1, |v| v + 1);
    if end - start > MAX_RECORD_BLOCK {
        u..u + 1
    } else {
        start..end
    }
}

/// The `name=value` pairs of `text` whose value is a number, with or without a unit
/// (`rss=182MB`, `deps=2`, `took=1.25s`), in a plain line or a JSON-escaped message.
fn named_quantities(text: &str) -> impl Iterator<Item = (&str, f64)> {
    let bytes = text.as_bytes();
    memchr::memchr_iter(b'=', bytes).filter_map(move |at| {
        let name_start = text[..at]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
            .map_or(0, |p| p + 1);
        let name = &text[name_start..at];
        if !(MIN_NAME_BYTES..=MAX_NAME_BYTES).contains(&name.len())
            || !name.starts_with(|c: char| c.is_ascii_alphabetic())
        {
            return None;
        }
        let rest = &text[at + 1..];
        let end = rest
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '"' | '\\' | ')' | '&'))
            .unwrap_or(rest.len());
        let value = &rest[..end];
        value
            .starts_with(|c: char| c.is_ascii_digit())
            .then(|| parse_quantity(value))
            .flatten()
            .map(|v| (name, v))
    })
}

/// The numbers of `text` written before their unit, a word (`2050085 bytes`, `12 ms`), as
/// (unit, value) pairs: the unit names the quantity.
fn counted_quantities(text: &str) -> impl Iterator<Item = (&str, f64)> {
    let mut tokens = text.split_ascii_whitespace().peekable();
    let is_number = |token: &str| {
        token.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && token.starts_with(|c: char| c.is_ascii_digit())
    };
    std::iter::from_fn(move || {
        while let Some(token) = tokens.next() {
            // A parenthesis opens a note: `(511 > 80 characters)`.
            let token = token.strip_prefix('(').unwrap_or(token);
            let &(mut next) = tokens.peek()?;
            if !is_number(token) {
                continue;
            }
            // A value over its limit (`511 > 80 characters` of a linter): the unit is the
            // value's.
            if matches!(next, ">" | "<" | ">=" | "<=") {
                tokens.next();
                match tokens.next() {
                    Some(limit) if is_number(limit) => next = tokens.peek()?,
                    _ => continue,
                }
            }
            let unit = next.trim_end_matches(|c: char| !c.is_ascii_alphabetic());
            if (MIN_NAME_BYTES..=MAX_NAME_BYTES).contains(&unit.len())
                && unit.bytes().all(|b| b.is_ascii_alphabetic())
                && let Ok(value) = token.parse::<f64>()
            {
                return Some((unit, value));
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_are_read_from_plain_and_escaped_messages() {
        let plain: Vec<_> = named_quantities("indexed accepts@2.0.0 deps=2 rss=53MB").collect();
        assert_eq!(plain, vec![("deps", 2.0), ("rss", 53e6)]);
        let escaped: Vec<_> =
            named_quantities(r#"{"message":"indexed amp deps=0 rss=55MB\n","type":"out"}"#)
                .collect();
        assert_eq!(escaped, vec![("deps", 0.0), ("rss", 55e6)]);
        assert_eq!(named_quantities("a == b, url=http://x?q=1").count(), 0);
        let counted: Vec<_> = counted_quantities("2050085 bytes each:").collect();
        assert_eq!(counted, vec![("bytes", 2050085.0)]);
        let over: Vec<_> =
            counted_quantities("  470:81  error  line too long (511 > 80 characters)").collect();
        assert_eq!(over, vec![("characters", 511.0)]);
        assert_eq!(counted_quantities("v1.2 bytes, 12x ms 3").count(), 0);
    }

    #[test]
    fn the_largest_group_of_a_report_of_sizes_stands_out() {
        use crate::methods::extract::Hints;
        use crate::methods::extract::kinds::lines::{self, Style};
        // `fdupes -r -S`: a size line heads each group of duplicate files.
        let mut text = String::new();
        for i in 0..80 {
            let size = if i == 57 {
                2_050_085
            } else {
                200 + (i * 7919) % 90_000
            };
            text.push_str(&format!(
                "{size} bytes each:\n/usr/share/doc/pkg{i}/copyright\n/usr/share/doc/pkg{i}-dev/copyright\n\n"
            ));
        }
        let doc = lines::build(&text, Style::Text);
        let query = Query::from_hints(
            &Hints::new().with_query("Which duplicate groups have the largest per-file size?"),
        )
        .unwrap();
        let scores = super::super::score(&doc, Some(&query));
        let peak = doc
            .units
            .iter()
            .position(|u| text[u.span.range()].starts_with("2050085 bytes"))
            .unwrap();
        let above = scores.iter().filter(|&&s| s > scores[peak]).count();
        assert!(above <= 2, "{above} lines rank above the peak");
    }

    #[test]
    fn the_peak_of_a_ranked_quantity_stands_out() {
        use crate::methods::extract::Hints;
        use crate::methods::extract::kinds::lines::{self, Style};
        let mut text = String::new();
        for i in 0..60 {
            text.push_str(&format!(
                "indexed pkg-{i}@1.0.{i} deps={} rss={}MB\n",
                i % 7,
                50 + i
            ));
            if i % 20 == 19 {
                text.push_str("indexer restarted by the watchdog\n");
            }
        }
        let doc = lines::build(&text, Style::Text);
        let query = Query::from_hints(
            &Hints::new()
                .with_query("why was the indexer restarted, and how high did its RSS get?"),
        )
        .unwrap();
        let scores = super::super::score(&doc, Some(&query));
        let peak = doc
            .units
            .iter()
            .position(|u| text[u.span.range()].contains("rss=109MB"));
        let peak = peak.unwrap();
        let above = scores.iter().filter(|&&s| s > scores[peak]).count();
        assert!(above <= 3, "{above} lines rank above the peak");
    }
}
