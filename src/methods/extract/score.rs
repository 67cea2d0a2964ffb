//! Scores every unit: BM25 against the query words, boosts for exact strings the query names,
//! plus what matters with no query at all (the unit's prior, rare templates, rare field values
//! and numeric extremes), then pulls in the rest of a small block around a strong match and
//! lowers repeats of one template so that a budget holds variety.

use std::collections::HashMap;

use super::detect::ContentKind;
use super::doc::{Doc, FieldValue, Level};
use super::query::Query;
use super::terms::for_each_word_sized;

/// A unit that matches the query best scores this much from BM25.
const QUERY_WEIGHT: f32 = 10.0;
/// An exact string the query names, found in few units, adds up to this much.
const EXACT_WEIGHT: f32 = 6.0;
/// Exact-string boosts of one unit add up to at most this much.
const EXACT_CAP: f32 = 12.0;
/// A log template seen once scores this much more than one seen everywhere.
const RARE_TEMPLATE_WEIGHT: f32 = 3.0;
/// A field value rare among sibling records, or the column's largest or smallest value.
const RARE_VALUE_WEIGHT: f32 = 2.5;
const EXTREME_WEIGHT: f32 = 1.0;
/// The same, among the records that match the query: the outlier the question is about.
const MATCHED_RARE_WEIGHT: f32 = 3.0;
const MATCHED_EXTREME_WEIGHT: f32 = 3.0;
/// The share of the extreme weight the largest value and its runners-up get.
const RUNNER_UP_SHARES: [f32; 3] = [1.0, 0.7, 0.5];
/// How far a unit moves toward the best score of its block.
const BLOCK_PULL: f32 = 0.4;
/// Blocks bigger than this are sections of a document, not one thing; no pull.
const MAX_PULL_BLOCK: usize = 40;
/// How fast the score of the k-th repeat of a template falls.
const REPEAT_DECAY: f32 = 0.35;
/// The same for repeats of an error.
const ERROR_REPEAT_DECAY: f32 = 0.1;
/// The first and last of a repeated template gain this share of the template's best score.
const EDGE_SHARE: f32 = 0.2;

/// BM25 parameters, the usual ones.
const K1: f32 = 1.2;
const B: f32 = 0.75;

/// The score of each unit of `doc`, in unit order.
pub(crate) fn score(doc: &Doc<'_>, query: Option<&Query>) -> Vec<f32> {
    let n = doc.units.len();
    let mut scores: Vec<f32> = doc.units.iter().map(|u| u.prior).collect();
    let query_scores = query
        .map(|q| query_scores(doc, q))
        .unwrap_or_else(|| vec![0.0; n]);
    for (s, q) in scores.iter_mut().zip(&query_scores) {
        *s += q;
    }
    if doc.kind == ContentKind::Log {
        add_template_rarity(doc, &mut scores);
    }
    add_field_signals(doc, &query_scores, &mut scores);
    pull_blocks(doc, &mut scores);
    decay_repeats(doc, &mut scores);
    scores
}

/// BM25 over unit texts plus exact-string boosts.
fn query_scores(doc: &Doc<'_>, query: &Query) -> Vec<f32> {
    let n = doc.units.len();
    let mut scores = vec![0.0f32; n];
    if n == 0 {
        return scores;
    }
    if !query.words.is_empty() {
        let w = query.words.len();
        // Per unit: (word, term frequency) pairs, flattened; and the unit's length in words.
        let mut postings: Vec<(u32, u16, u16)> = Vec::new();
        let mut lengths_of_units = vec![0u32; n];
        let mut df = vec![0u32; w];
        let mut tf = vec![0u16; w];
        let mut touched: Vec<usize> = Vec::new();
        let mut buf = String::new();
        // Stemming strips at most a few bytes: words much longer or shorter than every query
        // word cannot match one.
        let shortest = query.words.keys().map(String::len).min().unwrap_or(0);
        let longest = query.words.keys().map(String::len).max().unwrap_or(0);
        let lengths = shortest..longest + 7;
        for (u, length) in lengths_of_units.iter_mut().enumerate() {
            let mut words = 0u32;
            for_each_word_sized(doc.text(u), &mut buf, lengths.clone(), |word| {
                words += 1;
                let Some(word) = word else { return };
                if let Some(&i) = query.words.get(word) {
                    if tf[i] == 0 {
                        touched.push(i);
                    }
                    tf[i] = tf[i].saturating_add(1);
                }
            });
            *length = words;
            for &i in &touched {
                postings.push((u as u32, i as u16, tf[i]));
                df[i] += 1;
                tf[i] = 0;
            }
            touched.clear();
        }
        let average =
            (lengths_of_units.iter().map(|&l| l as f64).sum::<f64>() / n as f64).max(1.0) as f32;
        let idf: Vec<f32> = df
            .iter()
            .map(|&d| (1.0 + (n as f32 - d as f32 + 0.5) / (d as f32 + 0.5)).ln())
            .collect();
        for &(u, i, f) in &postings {
            let f = f as f32;
            let norm = K1 * (1.0 - B + B * lengths_of_units[u as usize] as f32 / average);
            scores[u as usize] += idf[i as usize] * f * (K1 + 1.0) / (f + norm);
        }
        let max = scores.iter().copied().fold(0.0f32, f32::max);
        if max > 0.0 {
            for s in &mut scores {
                *s *= QUERY_WEIGHT / max;
            }
        }
    }
    if !query.exact.is_empty() {
        // A window of whole units at a time, lowercased into one buffer: a lowercased copy of
        // the whole source would be as large as the input.
        const WINDOW_BYTES: usize = 256 * 1024;
        let mut hits: Vec<Vec<u32>> = vec![Vec::new(); query.exact.len()];
        let mut lower = String::new();
        let mut first = 0;
        while first < n {
            let start = doc.units[first].span.start;
            let mut last = first;
            while last + 1 < n && doc.units[last + 1].span.end - start <= WINDOW_BYTES {
                last += 1;
            }
            let units = &doc.units[first..=last];
            lower.clear();
            lower.push_str(&doc.source[start..units[units.len() - 1].span.end]);
            lower.make_ascii_lowercase();
            for (term, term_hits) in query.exact.iter().zip(&mut hits) {
                for (at, _) in lower.match_indices(term.as_str()) {
                    let offset = start + at;
                    let Some(i) = units
                        .partition_point(|u| u.span.start <= offset)
                        .checked_sub(1)
                    else {
                        continue;
                    };
                    let unit = (first + i) as u32;
                    if offset < units[i].span.end && term_hits.last() != Some(&unit) {
                        term_hits.push(unit);
                    }
                }
            }
            first = last + 1;
        }
        let mut boosts = vec![0.0f32; n];
        let full = (1.0 + n as f32).ln();
        for hits in hits {
            if hits.is_empty() {
                continue;
            }
            let weight = EXACT_WEIGHT * (1.0 + n as f32 / hits.len() as f32).ln() / full;
            for u in hits {
                boosts[u as usize] += weight;
            }
        }
        for (s, b) in scores.iter_mut().zip(boosts) {
            *s += b.min(EXACT_CAP);
        }
    }
    scores
}

/// Log lines whose template is rare stand out: the one transfer among a thousand heartbeats.
fn add_template_rarity(doc: &Doc<'_>, scores: &mut [f32]) {
    let n = doc.units.len();
    if n < 20 {
        return;
    }
    let mut counts: HashMap<u64, u32> = HashMap::new();
    for unit in &doc.units {
        if let Some(t) = unit.template {
            *counts.entry(t).or_default() += 1;
        }
    }
    let full = (n as f32).ln();
    for (unit, s) in doc.units.iter().zip(scores.iter_mut()) {
        if let Some(count) = unit.template.and_then(|t| counts.get(&t)) {
            *s += RARE_TEMPLATE_WEIGHT * (1.0 - (*count as f32).ln() / full).max(0.0);
        }
    }
}

/// Rare values and extremes per field, over all records and over those the query matches.
fn add_field_signals(doc: &Doc<'_>, query_scores: &[f32], scores: &mut [f32]) {
    if doc.fields.is_empty() {
        return;
    }
    let best = query_scores.iter().copied().fold(0.0f32, f32::max);
    let matched: Vec<bool> = query_scores
        .iter()
        .map(|&q| best > 0.0 && q >= 0.35 * best)
        .collect();
    let mut rare = vec![0.0f32; scores.len()];
    let mut extreme = vec![0.0f32; scores.len()];
    for field in &doc.fields {
        let all = &field.values;
        signals(
            all,
            RARE_VALUE_WEIGHT,
            EXTREME_WEIGHT,
            &mut rare,
            &mut extreme,
        );
        let subset: Vec<(usize, FieldValue)> =
            all.iter().copied().filter(|(u, _)| matched[*u]).collect();
        if subset.len() >= 3 {
            signals(
                &subset,
                MATCHED_RARE_WEIGHT,
                MATCHED_EXTREME_WEIGHT,
                &mut rare,
                &mut extreme,
            );
        }
    }
    for ((s, r), e) in scores.iter_mut().zip(rare).zip(extreme) {
        // The strongest signal of each sort counts; many weak ones are noise.
        *s += r + e;
    }
}

fn signals(
    values: &[(usize, FieldValue)],
    rare_weight: f32,
    extreme_weight: f32,
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
        let mut keys: Vec<u64> = values.iter().map(|(_, v)| key(v)).collect();
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
        for (u, v) in values {
            let count = count_of(key(v));
            if (count as usize) * 5 <= n {
                let r = rare_weight * (1.0 - (count as f32).ln() / full);
                rare[*u] = rare[*u].max(r);
            }
        }
    }
    let numbers = values.iter().filter_map(|(u, v)| match v {
        FieldValue::Number(x) => Some((*u, *x)),
        FieldValue::Category(_) => None,
    });
    let mut numbers: Vec<(usize, f64)> = numbers.collect();
    if numbers.len() < 2 {
        return;
    }
    // Largest first, ties in unit order: the same input always gives the same choice.
    numbers.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let (hi, lo) = (numbers[0], numbers[numbers.len() - 1]);
    if hi.1 > lo.1 {
        extreme[lo.0] = extreme[lo.0].max(extreme_weight);
        // "The three largest", "which others exceeded": the runners-up count too, less.
        for (&(u, x), share) in numbers.iter().zip(RUNNER_UP_SHARES) {
            if x > lo.1 {
                extreme[u] = extreme[u].max(extreme_weight * share);
            }
        }
    }
}

/// Moves every unit of a small block part of the way to the block's best score, so that the
/// commit hash and stat line come with the matching commit message.
fn pull_blocks(doc: &Doc<'_>, scores: &mut [f32]) {
    let mut best: HashMap<u32, (f32, usize)> = HashMap::new();
    for (unit, &s) in doc.units.iter().zip(scores.iter()) {
        if let Some(b) = unit.block {
            let entry = best.entry(b).or_insert((f32::MIN, 0));
            entry.0 = entry.0.max(s);
            entry.1 += 1;
        }
    }
    for (unit, s) in doc.units.iter().zip(scores.iter_mut()) {
        if let Some(&(top, size)) = unit.block.and_then(|b| best.get(&b))
            && size <= MAX_PULL_BLOCK
            && top > *s
        {
            *s += BLOCK_PULL * (top - *s);
        }
    }
}

/// The k-th best repeat of a template scores less, and every repeat a little less than a new
/// template; the first and last of a template keep a little extra (where it began and ended).
fn decay_repeats(doc: &Doc<'_>, scores: &mut [f32]) {
    let mut groups: HashMap<u64, Vec<usize>> = HashMap::new();
    for (i, unit) in doc.units.iter().enumerate() {
        if let Some(t) = unit.template {
            groups.entry(t).or_default().push(i);
        }
    }
    let mut ordered: Vec<&Vec<usize>> = groups.values().filter(|g| g.len() > 1).collect();
    // Deterministic order of work (HashMap order is not), though each group is independent.
    ordered.sort_unstable_by_key(|g| g[0]);
    for members in ordered {
        let first = members[0];
        let last = members[members.len() - 1];
        let mut by_score = members.clone();
        by_score.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]).then(a.cmp(&b)));
        let original: Vec<f32> = by_score.iter().map(|&u| scores[u]).collect();
        let top = original[0].max(0.0);
        for (k, (&u, s)) in by_score.iter().zip(original).enumerate() {
            let k = k as f32;
            // Repeated errors are each worth reading; repeated routine lines are not.
            let decay = if doc.units[u].level == Level::Error {
                ERROR_REPEAT_DECAY
            } else {
                REPEAT_DECAY
            };
            scores[u] = s / (1.0 + decay * k) - 0.05 * (1.0 + k).ln();
        }
        scores[first] += 0.5 + EDGE_SHARE * top;
        scores[last] += 0.5 + EDGE_SHARE * top;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::ExtractHints;
    use crate::methods::extract::kinds::lines::{self, Style};

    fn scored(text: &str, query: &str) -> Vec<f32> {
        let doc = lines::build(text, Style::Text);
        let q = Query::from_hints(&ExtractHints::new().with_query(query));
        score(&doc, q.as_ref())
    }

    #[test]
    fn query_words_rank_matching_lines_first() {
        let s = scored(
            "alpha beta\ngamma delta\nreplicated block\n",
            "which block was replicated?",
        );
        assert!(s[2] > s[0] && s[2] > s[1]);
    }

    #[test]
    fn exact_identifiers_outrank_loose_word_matches() {
        let s = scored(
            "pkg semver 7.8.5\npkg semver@5.7.2\n",
            "who pulls in semver@5.7.2",
        );
        assert!(s[1] > s[0]);
    }

    #[test]
    fn repeats_of_a_template_score_less_than_the_first() {
        let s = scored("start 1\nx\nstart 2\ny\nstart 3\nz\nstart 4\n", "");
        assert!(s[0] > s[4]);
    }
}
