//! Scores every unit: BM25 against the query words, boosts for exact strings the query names,
//! plus what matters with no query at all (the unit's prior, rare templates, rare field values
//! and numeric extremes), then pulls in the rest of a small block around a strong match and
//! lowers repeats of one template so that a budget holds variety.

use std::collections::HashMap;
use std::ops::Range;

use super::detect::ContentKind;
use super::doc::{Doc, Level, Template};
use super::extremes::add_field_signals;
use super::kinds::access;
use super::query::Query;
use super::terms::{WordFilter, for_each_word_sized};
use crate::tokens::{ceil_char_boundary, floor_char_boundary};
use settings::{
    add_named_keys, asks_about_passes, lower_passed_tests, lower_prose_comments,
    raise_described_settings,
};

mod definitions;
mod dumps;
mod failures;
mod fields;
mod last_matches;
mod odd_values;
mod parts;
mod quantities;
mod records;
mod references;
mod reports;
mod restated;
mod rows;
mod series;
mod settings;
mod traces;

/// A unit that matches the query best scores this much from BM25.
const QUERY_WEIGHT: f32 = 10.0;
/// An exact string the query names, found in few units, adds up to this much.
const EXACT_WEIGHT: f32 = 6.0;
/// Exact-string boosts of one unit add up to at most this much.
const EXACT_CAP: f32 = 12.0;
/// A unit meeting every exact string and status the query names, when it names two or more,
/// gains this much beside them.
const ALL_CONSTRAINTS_WEIGHT: f32 = 6.0;
/// A log template seen once scores this much more than one seen everywhere.
const RARE_TEMPLATE_WEIGHT: f32 = 3.0;
/// Command output of this many lines is read like a log (a daemon's debug output, a trace):
/// its rare lines stand out from the many repeats.
const LOG_LIKE_UNITS: usize = 2000;
/// A listing entry whose own name is made of query words.
const NAMED_ENTRY_WEIGHT: f32 = 3.0;
/// Listing entries (`ls -l` has nine fields) have at most this many words.
const MAX_ENTRY_WORDS: usize = 10;
/// How far a unit moves toward the best score of its block.
const BLOCK_PULL: f32 = 0.4;
/// Blocks bigger than this are sections of a document, not one thing; no pull.
const MAX_PULL_BLOCK: usize = 40;
/// A block of at most this many units is one record or entry (a link checker's record, a
/// group of files under its size): what one of its lines says, the others explain. Larger
/// blocks are sections, whose lines rise alone.
const MAX_RECORD_BLOCK: usize = 12;
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
    let (mut query_scores, matches) = query
        .map(|q| query_scores(doc, q))
        .unwrap_or_else(|| (vec![0.0; n], Vec::new()));
    // Source code keeps its comments' match: there a comment often is the answer (what a
    // function returns, why), and its statements hold the query's identifiers themselves.
    if matches!(doc.kind, ContentKind::Text | ContentKind::Config) {
        raise_described_settings(doc, &mut query_scores);
        lower_prose_comments(doc, &mut query_scores);
    }
    if matches!(doc.kind, ContentKind::Text | ContentKind::Log) {
        dumps::raise_key_values(doc, &mut query_scores);
        dumps::raise_rows_of_named_tables(doc, &mut query_scores);
        reports::raise_failure_assertions(doc, &mut query_scores);
        reports::raise_tap_failures(doc, &mut query_scores);
        reports::raise_numbered_failures(doc, &mut query_scores);
        reports::raise_first_frames(doc, &mut query_scores);
        reports::pair_doctest_results(doc, &mut query_scores);
    }
    if matches!(
        doc.kind,
        ContentKind::Text | ContentKind::Config | ContentKind::Code | ContentKind::Markdown
    ) {
        references::raise_used_definitions(doc, &mut query_scores);
    }
    if let Some(q) = query
        && matches!(doc.kind, ContentKind::Text | ContentKind::Log)
        && !asks_about_passes(q)
    {
        lower_passed_tests(doc, &mut query_scores);
    }
    for (s, q) in scores.iter_mut().zip(&query_scores) {
        *s += q;
    }
    if let Some(q) = query
        && doc.kind != ContentKind::Code
    {
        failures::raise_failures(doc, q, &query_scores, &mut scores);
    }
    if query.is_some_and(|q| q.asks_about_the_end)
        && matches!(
            doc.kind,
            ContentKind::Log | ContentKind::JsonLines | ContentKind::Text
        )
    {
        last_matches::raise_last_matches(doc, &query_scores, &mut scores);
    }
    if query.is_some_and(|q| q.asks_about_the_end) && doc.kind == ContentKind::Csv {
        last_matches::raise_last_row(doc, &mut scores);
    }
    if let Some(q) = query
        && doc.kind == ContentKind::Log
    {
        traces::raise_traced_entries(doc, q, &matches, &query_scores, &mut scores);
    }
    // Records of one kind in command output (certificates, key records, commits).
    let records = if doc.kind == ContentKind::Text {
        records::records(doc)
    } else {
        Vec::new()
    };
    records::raise_named_records(doc, &records, &matches, &mut scores);
    if let Some(q) = query
        && matches!(doc.kind, ContentKind::Text | ContentKind::Csv)
    {
        add_named_entries(doc, q, &mut scores);
        rows::raise_named_rows(doc, q, &mut scores);
    }
    if let Some(q) = query
        && matches!(
            doc.kind,
            ContentKind::Text | ContentKind::Config | ContentKind::Code | ContentKind::Markdown
        )
    {
        add_named_keys(doc, q, &mut scores);
    }
    if doc.kind == ContentKind::Log
        || (doc.kind == ContentKind::Text && doc.units.len() >= LOG_LIKE_UNITS)
    {
        add_template_rarity(doc, &mut scores);
        odd_values::raise_odd_values(doc, &query_scores, &mut scores);
    }
    add_field_signals(doc, &query_scores, query, &mut scores);
    if let Some(q) = query
        && matches!(
            doc.kind,
            ContentKind::Log | ContentKind::JsonLines | ContentKind::Text
        )
    {
        quantities::raise_ranked_quantities(doc, q, &query_scores, &mut scores);
    }
    if let Some(q) = query
        && doc.kind == ContentKind::Text
    {
        series::raise_ranked_series(doc, q, &query_scores, &mut scores);
    }
    pull_blocks(doc, &records, &query_scores, &mut scores);
    if matches!(doc.kind, ContentKind::Text | ContentKind::Log) {
        dumps::lower_hex_dumps(doc, &query_scores, &mut scores);
    }
    if doc.kind == ContentKind::Text {
        dumps::raise_first_rows(doc, &mut scores);
    }
    if matches!(doc.kind, ContentKind::Markdown | ContentKind::Html) {
        parts::pull_leads(doc, &query_scores, &mut scores);
    }
    decay_repeats(doc, &mut scores);
    if query.is_some_and(|q| q.asks_about_the_end)
        && matches!(
            doc.kind,
            ContentKind::Log | ContentKind::JsonLines | ContentKind::Text
        )
    {
        last_matches::lead_with_last_repeats(doc, &query_scores, &mut scores);
    }
    if let Some(q) = query
        && matches!(doc.kind, ContentKind::Text | ContentKind::Config)
    {
        fields::raise_fields_of_named_records(doc, q, &mut scores);
    }
    if doc.kind == ContentKind::Log {
        restated::decay_restated_failures(doc, &mut scores);
        traces::raise_raised_exceptions(doc, &mut scores);
    }
    if let Some(q) = query {
        parts::raise_rare_word_units(doc, q, &matches, &mut scores);
    }
    if let Some(q) = query
        && doc.kind == ContentKind::Code
    {
        definitions::raise_named_definitions(doc, q, &mut scores);
    }
    if doc.kind == ContentKind::Code {
        definitions::pull_continued_statements(doc, &mut scores);
    }
    scores
}

/// BM25 over unit texts plus exact-string boosts; and every (unit, term) match, a term being
/// a query word's index or, past the words, an exact string's.
fn query_scores(doc: &Doc<'_>, query: &Query) -> (Vec<f32>, Vec<(u32, u32)>) {
    let n = doc.units.len();
    let mut scores = vec![0.0f32; n];
    let mut matches: Vec<(u32, u32)> = Vec::new();
    if n == 0 {
        return (scores, matches);
    }
    let mut constraints = Constraints {
        named: 0,
        met: vec![0; n],
        status: false,
    };
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
        // A root of a long query word (`japan` of "japanese") is as short as 5 letters.
        let shortest = query.index_words().map(str::len).min().unwrap_or(0).min(5);
        let longest = query.words.keys().map(String::len).max().unwrap_or(0);
        let filter = WordFilter::for_words(query.index_words(), shortest..longest + 7);
        for (u, length) in lengths_of_units.iter_mut().enumerate() {
            let mut words = 0u32;
            for_each_word_sized(doc.text(u), &mut buf, &filter, |word| {
                words += 1;
                let Some(word) = word else { return };
                if let Some(i) = query.word_index(word) {
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
            .enumerate()
            .map(|(i, &d)| {
                query.word_weight(i) * (1.0 + (n as f32 - d as f32 + 0.5) / (d as f32 + 0.5)).ln()
            })
            .collect();
        matches.extend(postings.iter().map(|&(u, i, _)| (u, u32::from(i))));
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
            let start = doc.units[first].span.start();
            let mut last = first;
            while last + 1 < n && doc.units[last + 1].span.end() - start <= WINDOW_BYTES {
                last += 1;
            }
            let units = &doc.units[first..=last];
            // One character either side too, so a number is told from a piece of a longer
            // one at the window's edges as anywhere else.
            let from = floor_char_boundary(&doc.source, start.saturating_sub(1));
            let to = ceil_char_boundary(&doc.source, units[units.len() - 1].span.end() + 1);
            lower.clear();
            lower.push_str(&doc.source[from..to]);
            lower.make_ascii_lowercase();
            for (term, term_hits) in query.exact.iter().zip(&mut hits) {
                for (at, _) in lower.match_indices(term.as_str()) {
                    if !whole_number_at(&lower, at, term) {
                        continue;
                    }
                    let offset = from + at;
                    let Some(i) = units
                        .partition_point(|u| u.span.start() <= offset)
                        .checked_sub(1)
                    else {
                        continue;
                    };
                    let unit = (first + i) as u32;
                    if offset < units[i].span.end() && term_hits.last() != Some(&unit) {
                        term_hits.push(unit);
                    }
                }
            }
            first = last + 1;
        }
        let mut boosts = vec![0.0f32; n];
        let words = query.words.len() as u32;
        for (term, hits) in hits.into_iter().enumerate() {
            if hits.is_empty() {
                continue;
            }
            matches.extend(hits.iter().map(|&u| (u, words + term as u32)));
            let weight = exact_weight(n, hits.len());
            constraints.named = constraints.named.saturating_add(1);
            for u in hits {
                boosts[u as usize] += weight;
                constraints.met[u as usize] = constraints.met[u as usize].saturating_add(1);
            }
        }
        for (s, b) in scores.iter_mut().zip(boosts) {
            *s += b.min(EXACT_CAP);
        }
    }
    if query.asks_status_class() {
        add_asked_statuses(doc, query, &mut scores, &mut constraints);
    }
    constraints.raise_units_meeting_all(&mut scores);
    (scores, matches)
}

/// A query naming a class of status names the requests it asks about: the exact strings it
/// names beside (a client, a path) narrow them. "Every request from client 127.0.0.8 that got
/// a 4xx" asks for the lines meeting both, not for the many that meet one. (Exact strings
/// alone are as often alternatives, or the parts of several questions, as narrowings.)
struct Constraints {
    /// How many the query names that some unit meets (hundreds, given a tool's arguments:
    /// counts stop at the top rather than wrap).
    named: u8,
    /// Per unit, how many it meets.
    met: Vec<u8>,
    /// Whether one of them is a class of status.
    status: bool,
}

impl Constraints {
    /// Units meeting every constraint of two or more, one of them a status, gain
    /// [`ALL_CONSTRAINTS_WEIGHT`].
    fn raise_units_meeting_all(&self, scores: &mut [f32]) {
        if self.named < 2 || !self.status {
            return;
        }
        for (s, &met) in scores.iter_mut().zip(&self.met) {
            if met >= self.named {
                *s += ALL_CONSTRAINTS_WEIGHT;
            }
        }
    }
}

/// What a term the query names exactly adds to each of the `hits` units of `n` holding it:
/// more the fewer they are.
fn exact_weight(n: usize, hits: usize) -> f32 {
    let n = n as f32;
    EXACT_WEIGHT * (1.0 + n / hits as f32).ln() / (1.0 + n).ln()
}

/// Requests whose status is in a class the query names ("which requests got a 5xx") answer
/// as a unit holding an exact string it names does, rarer ones weighing more; a refused
/// request is no answer to a question about failed ones.
fn add_asked_statuses(
    doc: &Doc<'_>,
    query: &Query,
    scores: &mut [f32],
    constraints: &mut Constraints,
) {
    let asked: Vec<usize> = (0..doc.units.len())
        .filter(|&u| access::unit_status(doc.text(u)).is_some_and(|s| query.asks_status(s)))
        .collect();
    if asked.is_empty() {
        return;
    }
    let weight = exact_weight(doc.units.len(), asked.len());
    constraints.named = constraints.named.saturating_add(1);
    constraints.status = true;
    for u in asked {
        scores[u] += weight;
        constraints.met[u] = constraints.met[u].saturating_add(1);
    }
}

/// In a listing (`du`, `ls`, `find`), the entry whose own name the query names is the thing
/// asked about, not the files under it: `… node_modules/x/node_modules/ajv` for "ajv".
fn add_named_entries(doc: &Doc<'_>, query: &Query, scores: &mut [f32]) {
    let mut buf = String::new();
    for (u, s) in scores.iter_mut().enumerate() {
        // An entry is a short line ending in a path; prose ending in a link is not one.
        let text = doc.text(u).trim_end();
        let last = text
            .rfind(|c: char| c.is_ascii_whitespace())
            .map_or(text, |at| &text[at + 1..]);
        let Some((_, name)) = last.trim_end_matches('/').rsplit_once('/') else {
            continue;
        };
        if last.contains("://") || text.split_ascii_whitespace().nth(MAX_ENTRY_WORDS).is_some() {
            continue;
        }
        if query.names_every_word(name, false, &mut buf) {
            *s += NAMED_ENTRY_WEIGHT;
        }
    }
}

/// Whether `term`, found at `at` in `text`, is not a piece of a longer number: `120` is not in
/// `1200` nor `v3.120`'s `3.12`, though `120` is in `120ms` and `x120`.
fn whole_number_at(text: &str, at: usize, term: &str) -> bool {
    let bytes = text.as_bytes();
    let digit_before =
        term.starts_with(|c: char| c.is_ascii_digit()) && at > 0 && bytes[at - 1].is_ascii_digit();
    let digit_after = term.ends_with(|c: char| c.is_ascii_digit())
        && bytes.get(at + term.len()).is_some_and(u8::is_ascii_digit);
    !digit_before && !digit_after
}

/// Log lines whose template is rare stand out: the one transfer among a thousand heartbeats.
fn add_template_rarity(doc: &Doc<'_>, scores: &mut [f32]) {
    let n = doc.units.len();
    if n < 20 {
        return;
    }
    let mut counts: HashMap<Template, u32> = HashMap::new();
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

/// Moves every unit of a small block part of the way to the block's best score, so that the
/// commit hash and stat line come with the matching commit message. In a bigger record of a
/// dump of indented fields (one `Certificate:` of `openssl x509 -text`) only the lines that
/// match the query themselves move: the serial number of the certificate the query names then
/// outranks the serial numbers of the others, while its other lines stay where they are.
fn pull_blocks(doc: &Doc<'_>, records: &[Range<usize>], query_scores: &[f32], scores: &mut [f32]) {
    // A dump's records are many of one kind: two sections of a report (`The following options
    // control …:`) are not records of one.
    // Per block: its best score, its size, and whether it is a record of a dump.
    let mut best: HashMap<u32, (f32, usize, bool)> = HashMap::new();
    for (u, (unit, &s)) in doc.units.iter().zip(scores.iter()).enumerate() {
        if let Some(b) = unit.block {
            let entry = best.entry(b).or_insert_with(|| {
                let dump = dumps::is_record_head(doc, u)
                    && records.binary_search_by_key(&u, |r| r.start).is_ok();
                (f32::MIN, 0, dump)
            });
            entry.0 = entry.0.max(s);
            entry.1 += 1;
        }
    }
    for ((unit, s), &q) in doc.units.iter().zip(scores.iter_mut()).zip(query_scores) {
        if let Some(&(top, size, dump)) = unit.block.and_then(|b| best.get(&b))
            && (size <= MAX_PULL_BLOCK || (dump && q > 0.0))
            && top > *s
        {
            *s += BLOCK_PULL * (top - *s);
        }
    }
}

/// The k-th best repeat of a template scores less, and every repeat a little less than a new
/// template; the first and last of a template keep a little extra (where it began and ended).
fn decay_repeats(doc: &Doc<'_>, scores: &mut [f32]) {
    // Unit indices as u32: on a table of many rows one group holds every row.
    let mut groups: HashMap<Template, Vec<u32>> = HashMap::new();
    for (i, unit) in doc.units.iter().enumerate() {
        if let Some(t) = unit.template {
            groups.entry(t).or_default().push(i as u32);
        }
    }
    let mut ordered: Vec<&mut Vec<u32>> = groups.values_mut().filter(|g| g.len() > 1).collect();
    // Deterministic order of work (HashMap order is not), though each group is independent.
    ordered.sort_unstable_by_key(|g| g[0]);
    for members in ordered {
        let first = members[0] as usize;
        let last = members[members.len() - 1] as usize;
        members.sort_by(|&a, &b| {
            scores[b as usize]
                .total_cmp(&scores[a as usize])
                .then(a.cmp(&b))
        });
        let top = scores[members[0] as usize].max(0.0);
        // Each member is read once, just before it is lowered: no copy of the scores needed.
        for (k, &u) in members.iter().enumerate() {
            let u = u as usize;
            let k = k as f32;
            // Repeated errors are each worth reading; repeated routine lines are not.
            let decay = if doc.units[u].level == Level::Error
                && !(doc.units[u].parent.get().is_some_and(|p| p < u)
                    && super::kinds::log::is_raised_exception(doc.text(u)))
            {
                ERROR_REPEAT_DECAY
            } else {
                REPEAT_DECAY
            };
            scores[u] = scores[u] / (1.0 + decay * k) - 0.05 * (1.0 + k).ln();
        }
        scores[first] += 0.5 + EDGE_SHARE * top;
        scores[last] += 0.5 + EDGE_SHARE * top;
    }
}

#[cfg(test)]
mod tests;
