//! What matters among records with no query, and what a query about a column asks for: field
//! values rare among sibling records, each numeric column's largest and smallest values, over
//! all records, over those the query matches, and within a group of records that share a
//! category value the query names.

use std::collections::HashMap;

use super::doc::{Doc, Field, FieldValue};
use super::query::Ends;

/// A field value rare among sibling records, or the column's largest or smallest value.
const RARE_VALUE_WEIGHT: f32 = 2.5;
const EXTREME_WEIGHT: f32 = 1.0;
/// The same, among the records that match the query: the outlier the question is about.
const MATCHED_RARE_WEIGHT: f32 = 3.0;
const MATCHED_EXTREME_WEIGHT: f32 = 3.0;
/// The share of the extreme weight the largest value and its runners-up get.
const RUNNER_UP_SHARES: [f32; 3] = [1.0, 0.7, 0.5];
/// The share of the extreme weight a column's ends get when the column only grows or shrinks.
const MONOTONIC_SHARE: f32 = 0.5;
/// The share of the extreme weight the end of a column the query did not ask for gets.
const UNASKED_END_SHARE: f32 = 0.3;

/// Rare values and extremes per field, over all records and over those the query matches.
pub(crate) fn add_field_signals(
    doc: &Doc<'_>,
    query_scores: &[f32],
    ends: Ends,
    scores: &mut [f32],
) {
    if doc.fields.is_empty() {
        return;
    }
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
    for field in &doc.fields {
        signals(
            field,
            RARE_VALUE_WEIGHT,
            EXTREME_WEIGHT,
            ends,
            &mut rare,
            &mut extreme,
        );
        let subset = field.filtered(|u| matched[u]);
        if subset.len() >= 3 {
            signals(
                &subset,
                MATCHED_RARE_WEIGHT,
                MATCHED_EXTREME_WEIGHT,
                ends,
                &mut rare,
                &mut extreme,
            );
        }
    }
    let touched: Vec<bool> = query_scores.iter().map(|&q| q > 0.0).collect();
    add_group_extremes(doc, &touched, ends, &mut extreme);
    for ((s, r), e) in scores.iter_mut().zip(rare).zip(extreme) {
        // The strongest signal of each sort counts; many weak ones are noise.
        *s += r + e;
    }
}

/// "The heaviest European car": the records that share a category value the query names
/// (nearly all of them match the query at all, most other records do not, and they are a
/// minority) form a group, and each numeric
/// column's extremes within the group stand out as the query's answer.
fn add_group_extremes(doc: &Doc<'_>, touched: &[bool], ends: Ends, extreme: &mut [f32]) {
    /// Groups smaller than this have no extremes worth the name.
    const MIN_GROUP: usize = 3;
    let numeric: Vec<&Field> = doc
        .fields
        .iter()
        .filter(|f| f.iter().any(|(_, v)| matches!(v, FieldValue::Number(_))))
        .collect();
    if numeric.is_empty() {
        return;
    }
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
            .filter(|&(_, &(_, members, hits))| {
                let others = field.len() - members;
                // The value is what matched when its records match and most others do not.
                members >= MIN_GROUP
                    && members * 2 <= field.len()
                    && hits * 10 >= members * 8
                    && (all_hits - hits) * 2 <= others
            })
            .map(|(&h, &(first, _, _))| (first, h))
            .collect();
        if named.is_empty() {
            continue;
        }
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
                signals(
                    &subset,
                    0.0,
                    MATCHED_EXTREME_WEIGHT,
                    ends,
                    &mut unused,
                    extreme,
                );
            }
            for &u in &members {
                in_group[u as usize] = false;
            }
        }
    }
}

/// A numeric column's largest values and its smallest, and whether it only grows or shrinks.
struct ColumnEnds {
    /// The largest values, largest first, ties in unit order.
    top: [Option<(usize, f64)>; RUNNER_UP_SHARES.len()],
    /// The smallest value; of ties, the last in unit order.
    lowest: (usize, f64),
    /// Whether the values, in unit order, only grow or only shrink down the text.
    monotonic: bool,
}

/// The ends of the `(unit, value)` pairs `numbers`, or `None` for fewer than two.
fn column_ends(numbers: impl Iterator<Item = (usize, f64)>) -> Option<ColumnEnds> {
    // Largest first, ties in unit order: the same input always gives the same choice.
    let before = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
    let mut top = [None; RUNNER_UP_SHARES.len()];
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
    })
}

fn signals(
    values: &Field,
    rare_weight: f32,
    extreme_weight: f32,
    ends: Ends,
    rare: &mut [f32],
    extreme: &mut [f32],
) {
    let n = values.len();
    if n < 3 {
        return;
    }
    let key = |v: &FieldValue| match *v {
        FieldValue::Number(x) => x.to_bits(),
        FieldValue::Category(h) => h,
    };
    // Counted by sorting rather than hashing: a field of ids has as many distinct values as
    // records, and a map of them would cost several times the field itself.
    let counts: Option<Vec<(u64, u32)>> = {
        let mut keys: Vec<u64> = values.iter().map(|(_, v)| key(&v)).collect();
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
            let count = count_of(key(&v));
            if (count as usize) * 5 <= n {
                let r = rare_weight * (1.0 - (count as f32).ln() / full);
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
    }) = column_ends(numbers)
    else {
        return;
    };
    let hi = top[0].expect("a column of two numbers has a largest");
    if hi.1 > lo.1 {
        let weight = if monotonic {
            extreme_weight * MONOTONIC_SHARE
        } else {
            extreme_weight
        };
        let (high, low) = if ends.high && ends.low {
            (weight, weight)
        } else if ends.high {
            (weight, weight * UNASKED_END_SHARE)
        } else {
            (weight * UNASKED_END_SHARE, weight)
        };
        extreme[lo.0] = extreme[lo.0].max(low);
        // "The three largest", "which others exceeded": the runners-up count too, less.
        for (&(u, x), share) in top.iter().flatten().zip(RUNNER_UP_SHARES) {
            if x > lo.1 {
                extreme[u] = extreme[u].max(high * share);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::column_ends;

    #[test]
    fn a_column_s_ends_are_its_largest_values_in_order_and_its_last_smallest() {
        let column = [(0, 5.0), (1, 9.0), (2, 1.0), (3, 9.0), (4, 7.0), (5, 1.0)];
        let ends = column_ends(column.into_iter()).unwrap();
        assert_eq!(ends.top, [Some((1, 9.0)), Some((3, 9.0)), Some((4, 7.0))]);
        assert_eq!(ends.lowest, (5, 1.0));
        assert!(!ends.monotonic);
    }

    #[test]
    fn a_column_that_only_grows_is_monotonic_and_one_value_has_no_ends() {
        let clock = [(0, 1.0), (1, 2.0), (2, 2.0), (3, 8.0)];
        let ends = column_ends(clock.into_iter()).unwrap();
        assert!(ends.monotonic);
        assert_eq!(ends.top[0], Some((3, 8.0)));
        assert_eq!(ends.lowest, (0, 1.0));
        assert!(column_ends([(0, 1.0)].into_iter()).is_none());
    }
}
