//! What matters among records with no query, and what a query about a column asks for: field
//! values rare among sibling records, each numeric column's largest and smallest values, over
//! all records, over those the query matches, and within a group of records that share a
//! category value the query names.

use std::collections::HashMap;

use super::doc::{Doc, Field, FieldValue};
use super::query::{Bound, Ends, Query};

mod flags;

/// A field value rare among sibling records, or the column's largest or smallest value.
const RARE_VALUE_WEIGHT: f32 = 2.5;
const EXTREME_WEIGHT: f32 = 1.0;
/// A rare value of a column the query names ("which are not under the MIT license", "the
/// status of the failed jobs") scores this share of the best match of the query: the few
/// records it sets apart are what the query asks about.
const NAMED_RARE_SHARE: f32 = 0.5;
/// A named column of more distinct values than this is a text, not a category, unless its
/// records are at least `CATEGORY_RECORDS_PER_VALUE` times as many (twenty licenses among 120
/// crates).
const MAX_NAMED_CATEGORY_VALUES: usize = 16;
const CATEGORY_RECORDS_PER_VALUE: usize = 5;
/// The same, among the records that match the query: the outlier the question is about.
const MATCHED_RARE_WEIGHT: f32 = 3.0;
const MATCHED_EXTREME_WEIGHT: f32 = 3.0;
/// The share of the extreme weight the largest value and its runners-up get.
const RUNNER_UP_SHARES: [f32; 3] = [1.0, 0.7, 0.5];
/// The same for a column the query names and ranks ("the largest area", "the most bytes"):
/// its values are the answer, and "which are the biggest" reads on past the third.
const NAMED_RUNNER_UP_SHARES: [f32; 6] = [1.0, 0.85, 0.75, 0.65, 0.55, 0.45];
/// The largest values a column keeps track of.
const TOP_KEPT: usize = NAMED_RUNNER_UP_SHARES.len();
/// A named and ranked column's ends score this share of the best match of the query: as
/// much as a record that holds its words.
const NAMED_EXTREME_SHARE: f32 = 1.0;

/// A ranked column's ends weigh this many times another column's at least: with no record
/// matching the query's words, they are still what it asks for.
const RANKED_OVER_UNNAMED: f32 = 2.0;

/// The share of that weight a ranked column's ends keep among all the records when the query
/// also names a group of them.
const GROUPED_RANKING_SHARE: f32 = 0.5;

/// How one field's values are weighed.
struct Weights {
    rare: f32,
    extreme: f32,
    shares: &'static [f32],
    /// Whether the query ranks by the column: records tied at its smallest value are each
    /// an answer ("the smallest enrollment" held by two districts).
    ranked: bool,
}
/// Records tied at a ranked column's smallest value that are each shown as its end.
const MAX_LOW_TIES: usize = 3;
/// The share of the extreme weight a column's ends get when the column only grows or shrinks.
const MONOTONIC_SHARE: f32 = 0.5;
/// The share of the extreme weight the end of a column the query did not ask for gets.
const UNASKED_END_SHARE: f32 = 0.3;

/// Rare values and extremes per field, over all records and over those the query matches.
pub(crate) fn add_field_signals(
    doc: &Doc<'_>,
    query_scores: &[f32],
    query: Option<&Query>,
    scores: &mut [f32],
) {
    if doc.fields.is_empty() {
        return;
    }
    let ends = query.map(|q| q.ends).unwrap_or_default();
    let ranked = ranked_fields(doc, query);
    // The header row names every column; the best match among records is the yardstick.
    let best = query_scores
        .iter()
        .zip(&doc.units)
        .filter(|(_, u)| !u.pinned)
        .map(|(&q, _)| q)
        .fold(0.0f32, f32::max);
    let matched: Vec<bool> = query_scores
        .iter()
        .map(|&q| best > 0.0 && q >= 0.35 * best)
        .collect();
    let mut rare = vec![0.0f32; scores.len()];
    let mut extreme = vec![0.0f32; scores.len()];
    let ranking = Weights {
        rare: 0.0,
        extreme: (EXTREME_WEIGHT * RANKED_OVER_UNNAMED).max(best * NAMED_EXTREME_SHARE),
        shares: &NAMED_RUNNER_UP_SHARES,
        ranked: true,
    };
    // With a group named too, the column's ends among all the records may still be asked
    // ("the highest mileage, and the heaviest European car"): they count, less.
    let grouped_ranking = Weights {
        rare: 0.0,
        extreme: ranking.extreme * GROUPED_RANKING_SHARE,
        shares: &RUNNER_UP_SHARES,
        ranked: true,
    };
    let touched: Vec<bool> = query_scores.iter().map(|&q| q > 0.0).collect();
    // A column the query ranks by is ranked among all the records, unless the query names a
    // group of them ("the slowest tool of this benchmark"): the group's own ends stand out
    // then, and which group a superlative is about is more than words next to it tell.
    // A query's exact string that is a whole value (`linux_no_literal`) names its records.
    let exact: Vec<u64> = query.map_or_else(Vec::new, |q| {
        q.exact
            .iter()
            .map(|e| xxhash_rust::xxh3::xxh3_64(e.as_bytes()))
            .collect()
    });
    let grouped = add_group_extremes(doc, query, (&touched, &exact), ends, &mut extreme);
    for (field, &ranked) in doc.fields.iter().zip(&ranked) {
        // A category of a few values (a license, a state), not a text of many (a message the
        // query asks to be given): its rare values are what sets records apart.
        let named = query.is_some_and(|q| q.names_column(field.name())) && {
            let distinct = distinct_values(field);
            distinct <= MAX_NAMED_CATEGORY_VALUES
                || distinct * CATEGORY_RECORDS_PER_VALUE <= field.len()
        };
        let weights = Weights {
            rare: if named {
                RARE_VALUE_WEIGHT.max(best * NAMED_RARE_SHARE)
            } else {
                RARE_VALUE_WEIGHT
            },
            extreme: EXTREME_WEIGHT,
            shares: &RUNNER_UP_SHARES,
            ranked: false,
        };
        signals(field, &weights, ends, &mut rare, &mut extreme);
        if ranked && !grouped {
            signals(field, &ranking, ends, &mut rare, &mut extreme);
        } else if ranked {
            signals(field, &grouped_ranking, ends, &mut rare, &mut extreme);
        }
        let subset = field.filtered(|u| matched[u]);
        if subset.len() >= 3 {
            let weights = Weights {
                rare: MATCHED_RARE_WEIGHT,
                extreme: MATCHED_EXTREME_WEIGHT,
                shares: &RUNNER_UP_SHARES,
                ranked: false,
            };
            signals(&subset, &weights, ends, &mut rare, &mut extreme);
        }
    }
    if let Some(q) = query {
        flags::add_lacking(doc, q, ranking.extreme, &mut extreme);
        flags::add_flagged(doc, q, ranking.extreme, &mut extreme);
        add_past_bounds(doc, q, ranking.extreme, &mut extreme);
    }
    for ((s, r), e) in scores.iter_mut().zip(rare).zip(extreme) {
        // The strongest signal of each sort counts; many weak ones are noise.
        *s += r + e;
    }
}

/// "Which rows have a PhD share above 100": the records whose value of a column the query
/// bounds is past the bound score `weight`, as much as the best match, when they are a
/// minority (a bound most records pass sets none apart).
fn add_past_bounds(doc: &Doc<'_>, query: &Query, weight: f32, extreme: &mut [f32]) {
    // Of the columns one bound names, those naming most of its words: `hruns`, not `runs`,
    // for "300 or more home runs".
    let bounded: Vec<(&Field, &Bound, usize)> = (doc.fields.iter())
        .filter_map(|f| {
            let bound = query.bound_on(f.name())?;
            Some((f, bound, query.bound_words_named(bound, f.name())))
        })
        .collect();
    let most_named = |bound: &Bound| {
        (bounded.iter())
            .filter(|(_, b, _)| std::ptr::eq(*b, bound))
            .map(|&(_, _, n)| n)
            .max()
            .unwrap_or(0)
    };
    // Of those, the ones naming the word next to the bound, when one does.
    let names_nearest = |bound: &Bound| {
        (bounded.iter()).any(|(f, b, n)| {
            std::ptr::eq(*b, bound)
                && *n == most_named(bound)
                && query.bound_names_nearest(bound, f.name())
        })
    };
    for &(field, bound, named) in &bounded {
        if named < most_named(bound)
            || (names_nearest(bound) && !query.bound_names_nearest(bound, field.name()))
        {
            continue;
        }
        let past: Vec<usize> = field
            .iter()
            .filter(|&(_, v)| matches!(v, FieldValue::Number(x) if bound.is_passed_by(x)))
            .map(|(u, _)| u)
            .collect();
        if past.len() * 2 < field.len() {
            for u in past {
                extreme[u] = extreme[u].max(weight);
            }
        }
    }
}

/// Per field, whether the query ranks records by it. The first of these that marks a numeric
/// field: the fields it names after a superlative (`area` of "the largest area",
/// `bytesInOutput` of "the most bytes", the column `2011` of "the highest rate in 2011");
/// those it names around one (before it, or in a parenthesis after it: "which directory is
/// largest"); those its superlative implies (`Length` for "the largest"); a table's only
/// numeric column (`du`: "which directory is largest").
fn ranked_fields(doc: &Doc<'_>, query: Option<&Query>) -> Vec<bool> {
    let Some(q) = query.filter(|q| !q.ranked.is_empty()) else {
        return vec![false; doc.fields.len()];
    };
    let numeric: Vec<bool> = doc.fields.iter().map(is_numeric).collect();
    // What follows a superlative is what it ranks by: "the year with the lowest life
    // expectancy" ranks by life expectancy, not year.
    let names: [&dyn Fn(&str) -> bool; 3] = [
        &|name| q.ranks_after(name),
        &|name| q.ranks(name),
        &|name| q.ranks_implied(name),
    ];
    let mut ranked = vec![false; doc.fields.len()];
    for named in names {
        for ((r, f), &numeric) in ranked.iter_mut().zip(&doc.fields).zip(&numeric) {
            *r = numeric && named(f.name());
        }
        if ranked.contains(&true) {
            return ranked;
        }
    }
    // Nothing names a column, but the tool sorted its listing by one, largest first (a
    // profile by self time, `sort -rn`): what it ordered by is what a superlative asks for.
    // Of several (a template's rows within the whole listing's), the one over most records.
    let sorted = (0..doc.fields.len())
        .filter(|&i| numeric[i] && sorts_largest_first(&doc.fields[i]))
        .max_by_key(|&i| (doc.fields[i].len(), std::cmp::Reverse(i)));
    if let Some(i) = sorted {
        ranked[i] = true;
        return ranked;
    }
    // Nothing names a column: a table's only numeric column, or the unnamed columns of a
    // listing without a header (an access log's status, size and duration) are what a
    // superlative can rank by.
    let numbers: Vec<usize> = (0..doc.fields.len()).filter(|&i| numeric[i]).collect();
    let unnamed = numbers.iter().all(|&i| doc.fields[i].name().is_empty());
    if numbers.len() == 1 || unnamed {
        for i in numbers {
            ranked[i] = true;
        }
    }
    ranked
}

/// A field value as a key equal values share: a number's bits, a category's hash.
fn value_key(value: FieldValue) -> u64 {
    match value {
        FieldValue::Number(x) => x.to_bits(),
        FieldValue::Category(h) => h,
    }
}

/// How many distinct values a field holds.
fn distinct_values(field: &Field) -> usize {
    let mut keys: Vec<u64> = field.iter().map(|(_, v)| value_key(v)).collect();
    keys.sort_unstable();
    keys.dedup();
    keys.len()
}

/// Whether a column's numbers only shrink down the records, from more than a few distinct
/// values (a sorted ranking, not a constant or a flag).
fn sorts_largest_first(field: &Field) -> bool {
    /// Values and distinct values a sorted ranking has at least.
    const MIN_VALUES: usize = 8;
    const MIN_DISTINCT: usize = 4;
    let mut previous: Option<(usize, f64)> = None;
    let (mut count, mut distinct) = (0, 0);
    for (u, value) in field.iter() {
        let FieldValue::Number(x) = value else {
            continue;
        };
        match previous {
            Some((p, last)) if p >= u || x > last => return false,
            Some((_, last)) if x < last => distinct += 1,
            None => distinct += 1,
            _ => {}
        }
        count += 1;
        previous = Some((u, x));
    }
    count >= MIN_VALUES && distinct >= MIN_DISTINCT
}

/// Whether most of a field's values are numbers.
fn is_numeric(field: &Field) -> bool {
    let numbers = field
        .iter()
        .filter(|(_, v)| matches!(v, FieldValue::Number(_)))
        .count();
    numbers >= 2 && numbers * 2 > field.len()
}

/// "The heaviest European car": the records that share a category value the query names
/// (nearly all of them match the query at all, most other records do not, and they are a
/// minority) form a group, and each numeric
/// column's extremes within the group stand out as the query's answer.
/// Returns whether a group the query ranks was found: one it quotes whole, or whose records
/// hold a word next to a superlative ("the heaviest European car", not "the heaviest car, and
/// Zimbabwe's population").
fn add_group_extremes(
    doc: &Doc<'_>,
    query: Option<&Query>,
    (touched, exact): (&[bool], &[u64]),
    ends: Ends,
    extreme: &mut [f32],
) -> bool {
    /// Groups smaller than this have no extremes worth the name.
    const MIN_GROUP: usize = 3;
    let numeric: Vec<&Field> = doc
        .fields
        .iter()
        .filter(|f| f.iter().any(|(_, v)| matches!(v, FieldValue::Number(_))))
        .collect();
    if numeric.is_empty() {
        return false;
    }
    let mut found = false;
    let mut in_group = vec![false; doc.units.len()];
    let mut unused = Vec::new();
    for field in &doc.fields {
        // Per category value: its first record, its records, and those the query touches.
        // Counted first, and only the named values' records gathered: a table's column of a
        // few values would otherwise hold every record in lists of its own.
        let mut counts: HashMap<u64, (usize, usize, usize)> = HashMap::new();
        let mut all_hits = 0;
        for (u, v) in field.iter() {
            all_hits += usize::from(touched[u]);
            if let FieldValue::Category(h) = v {
                let (_, members, hits) = counts.entry(h).or_insert((u, 0, 0));
                *members += 1;
                *hits += usize::from(touched[u]);
            }
        }
        let mut named: Vec<(usize, u64)> = counts
            .iter()
            .filter(|&(h, &(_, members, hits))| {
                let others = field.len() - members;
                // The value is what matched when its records match and most others do not,
                // or when the query quotes it whole.
                members >= MIN_GROUP
                    && members * 2 <= field.len()
                    && (exact.contains(h)
                        || hits * 10 >= members * 8 && (all_hits - hits) * 2 <= others)
            })
            .map(|(&h, &(first, _, _))| (first, h))
            .collect();
        if named.is_empty() {
            continue;
        }
        found |= named.iter().any(|&(first, h)| {
            exact.contains(&h) || query.is_some_and(|q| q.ranks_a_word_of(doc.text(first)))
        });
        named.sort_unstable();
        // Each named value's records, gathered in one scan of the field.
        let slot: HashMap<u64, usize> = named
            .iter()
            .enumerate()
            .map(|(i, &(_, h))| (h, i))
            .collect();
        let mut groups: Vec<Vec<u32>> = vec![Vec::new(); named.len()];
        for (u, v) in field.iter() {
            if let FieldValue::Category(h) = v
                && let Some(&i) = slot.get(&h)
            {
                groups[i].push(u as u32);
            }
        }
        unused.resize(doc.units.len(), 0.0f32);
        for members in groups {
            for &u in &members {
                in_group[u as usize] = true;
            }
            for column in &numeric {
                let subset = column.filtered(|u| in_group[u]);
                let weights = Weights {
                    rare: 0.0,
                    extreme: MATCHED_EXTREME_WEIGHT,
                    shares: &RUNNER_UP_SHARES,
                    ranked: false,
                };
                signals(&subset, &weights, ends, &mut unused, extreme);
            }
            for &u in &members {
                in_group[u as usize] = false;
            }
        }
    }
    found
}

/// A numeric column's largest values and its smallest, and whether it only grows or shrinks.
struct ColumnEnds {
    /// The largest values, largest first, ties in unit order.
    top: [Option<(usize, f64)>; TOP_KEPT],
    /// The smallest value; of ties, the last in unit order.
    lowest: (usize, f64),
    /// Whether the values, in unit order, only grow or only shrink down the text.
    monotonic: bool,
    /// Whether they only shrink: a ranking sorted largest first, when not a countdown.
    falling: bool,
}

/// The ends of the `(unit, value)` pairs `numbers`, or `None` for fewer than two.
fn column_ends(numbers: impl Iterator<Item = (usize, f64)>) -> Option<ColumnEnds> {
    // Largest first, ties in unit order: the same input always gives the same choice.
    let before = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut top = [None; TOP_KEPT];
    let mut lowest: Option<(usize, f64)> = None;
    let mut previous: Option<(usize, f64)> = None;
    let (mut count, mut in_order, mut rising, mut falling) = (0, true, true, true);
    for number in numbers {
        count += 1;
        // A column that only grows or only shrinks down the text is a clock or a counter
        // (uptime, sequence number): its ends are just the first and last records. Values
        // come in unit order from every builder; should they not, the column is not a clock.
        if let Some((u, x)) = previous {
            in_order &= u < number.0;
            rising &= x <= number.1;
            falling &= x >= number.1;
        }
        previous = Some(number);
        if lowest.is_none_or(|low| before(&low, &number).is_lt()) {
            lowest = Some(number);
        }
        // Into the largest values: each held value it outranks moves down one place.
        let mut carried = Some(number);
        for slot in &mut top {
            let Some(value) = carried else { break };
            match *slot {
                Some(held) if before(&held, &value).is_lt() => {}
                _ => carried = slot.replace(value),
            }
        }
    }
    (count >= 2).then(|| ColumnEnds {
        top,
        lowest: lowest.expect("a column of two numbers has a smallest"),
        monotonic: in_order && (rising || falling),
        falling: in_order && falling,
    })
}

fn signals(values: &Field, weights: &Weights, ends: Ends, rare: &mut [f32], extreme: &mut [f32]) {
    let n = values.len();
    if n < 3 {
        return;
    }
    // Counted by sorting rather than hashing: a field of ids has as many distinct values as
    // records, and a map of them would cost several times the field itself.
    let counts: Option<Vec<(u64, u32)>> = {
        let mut keys: Vec<u64> = values.iter().map(|(_, v)| value_key(v)).collect();
        keys.sort_unstable();
        let distinct = 1 + keys.windows(2).filter(|pair| pair[0] != pair[1]).count();
        // A field where most values differ (ids, urls, timings) says nothing by rarity.
        (distinct * 2 <= n && distinct > 1).then(|| {
            let mut counts: Vec<(u64, u32)> = Vec::with_capacity(distinct);
            for k in keys {
                match counts.last_mut() {
                    Some((last, count)) if *last == k => *count += 1,
                    _ => counts.push((k, 1)),
                }
            }
            counts
        })
    };
    if let Some(counts) = counts {
        let count_of = |k: u64| {
            counts
                .binary_search_by_key(&k, |&(key, _)| key)
                .map_or(0, |i| counts[i].1)
        };
        let full = (n as f32).ln();
        for (u, v) in values.iter() {
            let count = count_of(value_key(v));
            if (count as usize) * 5 <= n {
                let r = weights.rare * (1.0 - (count as f32).ln() / full);
                rare[u] = rare[u].max(r);
            }
        }
    }
    let numbers = values.iter().filter_map(|(u, v)| match v {
        FieldValue::Number(x) => Some((u, x)),
        FieldValue::Category(_) => None,
    });
    // One pass, nothing gathered: a table's numeric column is as long as the table.
    let Some(ColumnEnds {
        top,
        lowest: lo,
        monotonic,
        falling,
    }) = column_ends(numbers)
    else {
        return;
    };
    let hi = top[0].expect("a column of two numbers has a largest");
    if hi.1 > lo.1 {
        // A listing sorted largest first that the query ranks by is no clock: its top rows
        // are what is asked for.
        let weight = if monotonic && !(weights.ranked && falling) {
            weights.extreme * MONOTONIC_SHARE
        } else {
            weights.extreme
        };
        let (high, low) = if ends.high && ends.low {
            (weight, weight)
        } else if ends.high {
            (weight, weight * UNASKED_END_SHARE)
        } else {
            (weight * UNASKED_END_SHARE, weight)
        };
        extreme[lo.0] = extreme[lo.0].max(low);
        // A smallest value held by a few records is each one's; held by many (a zero of
        // most rows), it singles none out.
        if weights.ranked && ends.low {
            let tied: Vec<usize> = (values.iter())
                .filter(|(_, v)| matches!(v, FieldValue::Number(x) if *x == lo.1))
                .map(|(u, _)| u)
                .take(MAX_LOW_TIES + 1)
                .collect();
            if tied.len() <= MAX_LOW_TIES {
                for u in tied {
                    extreme[u] = extreme[u].max(low);
                }
            }
        }
        // "The three largest", "which others exceeded": the runners-up count too, less.
        for (&(u, x), share) in top.iter().flatten().zip(weights.shares) {
            if x > lo.1 {
                extreme[u] = extreme[u].max(high * share);
            }
        }
    }
}

#[cfg(test)]
mod tests;
