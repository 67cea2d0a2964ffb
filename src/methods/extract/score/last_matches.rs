//! A query about the end of an output ("what identified itself at the end", "the final
//! pass/fail counts", "under which pid did the last instance start") asks for the last of
//! the lines it describes, not for every one: the lines matching it best are many, and the
//! last of them, wherever they fall, are the answer. Of a table, it asks for its last row.

use std::collections::HashMap;

use super::super::doc::{Doc, Template};
use super::super::query::WordHash;

/// A line counts as one the query describes when it matches this share of the best match.
const MIN_MATCH_SHARE: f32 = 0.6;
/// The last matching line gains this share of the best match; each one before it less.
const LAST_SHARE: f32 = 0.6;
const EARLIER_FACTOR: f32 = 0.6;
/// Matching lines, counted back from the end, that gain anything.
const MAX_RAISED: usize = 6;

/// Raises the last lines of `doc` that match the query, the last one most.
pub(in super::super) fn raise_last_matches(
    doc: &Doc<'_>,
    query_scores: &[f32],
    scores: &mut [f32],
) {
    let best = query_scores.iter().copied().fold(0.0f32, f32::max);
    if best <= 0.0 {
        return;
    }
    let matching = (0..doc.units.len())
        .rev()
        .filter(|&u| query_scores[u] >= MIN_MATCH_SHARE * best);
    let mut share = LAST_SHARE;
    for u in matching.take(MAX_RAISED) {
        scores[u] += best * share;
        share *= EARLIER_FACTOR;
    }
}

/// Of one line restated as it changes (`There are now 7 jobs in the queue`), the last says
/// how things stood at the end. For a query about the end, each repeated line the query
/// matches trades its score with its last repeat's, so that the last stands for the others.
/// Run after repeats are lowered: it keeps their order, only changes which line leads.
///
/// Only a last repeat that matches the query as its best repeat does takes the lead: records
/// of one shape that name different things (one file each of a listing) share a template too,
/// and the last of them does not stand for the one the query named.
pub(in super::super) fn lead_with_last_repeats(
    doc: &Doc<'_>,
    query_scores: &[f32],
    scores: &mut [f32],
) {
    let mut last_of: HashMap<Template, (usize, usize), WordHash> = HashMap::default();
    for (u, unit) in doc.units.iter().enumerate() {
        if query_scores[u] <= 0.0 {
            continue;
        }
        if let Some(t) = unit.template {
            let (best, last) = last_of.entry(t).or_insert((u, u));
            if scores[u] > scores[*best] {
                *best = u;
            }
            *last = u;
        }
    }
    for (best, last) in last_of.into_values() {
        if best != last
            && scores[best] > scores[last]
            && query_scores[last] >= MIN_MATCH_SHARE * query_scores[best]
        {
            scores.swap(best, last);
        }
    }
}

/// A table's last row, for a query about the end of a table ("the first and last values of
/// the final probe in the table"): nothing in the row need match the query's words, its place
/// does. It gains as the last matching line of a log does.
pub(in super::super) fn raise_last_row(doc: &Doc<'_>, scores: &mut [f32]) {
    if let Some(last) = (0..doc.units.len()).rev().find(|&u| !doc.units[u].pinned) {
        scores[last] += LAST_SHARE * super::QUERY_WEIGHT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::kinds::log;

    #[test]
    fn the_last_matching_lines_gain_the_most_and_others_nothing() {
        let mut text = String::new();
        for i in 0..10 {
            text.push_str(&format!(
                "10:28:{i:02} [conn={i}] Received version SSH-2.0-x\n"
            ));
        }
        let doc = log::build(&text);
        // Every other line matches; the last line does not.
        let query_scores: Vec<f32> = (0..10)
            .map(|u| if u % 2 == 0 { 5.0 } else { 0.0 })
            .collect();
        let mut scores = vec![0.0; 10];
        raise_last_matches(&doc, &query_scores, &mut scores);
        assert!(scores[8] > scores[6] && scores[6] > scores[4], "{scores:?}");
        assert!(scores[8] > 0.0 && scores[9] == 0.0 && scores[7] == 0.0);
    }

    #[test]
    fn the_last_of_a_restated_count_stands_for_it_when_the_end_is_asked() {
        use crate::methods::extract::Hints;
        use crate::methods::extract::query::Query;
        use crate::methods::extract::score::score;

        let mut text = String::new();
        for i in 1..=20 {
            text.push_str(&format!(
                "worker 01:37:{i:02} POST /submit -> calling handler()\n"
            ));
            text.push_str(&format!(
                "worker 01:37:{i:02} There are now {i} jobs in the queue\n"
            ));
            text.push_str(&format!(
                "worker 01:37:{i:02} Computed checksum {i:04x} for job j{i}\n"
            ));
        }
        let doc = log::build(&text);
        let query = Query::from_hints(
            &Hints::new().with_query(
                "Which checksum was computed for job j7, and how many jobs were in the queue at the end?",
            ),
        )
        .unwrap();
        let scores = score(&doc, Some(&query));
        let at = |line: &str| {
            (0..doc.units.len())
                .find(|&u| doc.text(u).contains(line))
                .unwrap()
        };
        let (first, last) = (at("now 1 jobs"), at("now 20 jobs"));
        // Without the rule the first count leads its repeats: the line of another part of the
        // question matches best, so no count is among the last lines matching it.
        assert!(
            scores[last] > scores[first],
            "{} <= {}",
            scores[last],
            scores[first]
        );
    }

    #[test]
    fn the_last_record_of_a_listing_does_not_take_a_named_records_place() {
        use crate::methods::extract::Hints;
        use crate::methods::extract::kinds::json;
        use crate::methods::extract::query::Query;
        use crate::methods::extract::score::score;

        let mut text = String::new();
        for (i, name) in ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"]
            .iter()
            .cycle()
            .take(60)
            .enumerate()
        {
            let dir = if i == 7 { "ledger" } else { "pages" };
            text.push_str(&format!(
                "{{\"name\":\"{name}{i}.html\",\"type\":\"file\",\"path\":\"/site/{dir}/{name}{i}.html\",\"size\":{}}}\n",
                1000 + i * 37
            ));
        }
        let query = Query::from_hints(
            &Hints::new()
                .with_query("In the latest listing, how big is the file in the ledger folder?"),
        )
        .unwrap();
        let doc = json::build_lines(&text, Some(&query), 4000);
        let scores = score(&doc, Some(&query));
        let named = (0..doc.units.len())
            .find(|&u| doc.text(u).contains("ledger"))
            .unwrap();
        let best_other = (0..doc.units.len())
            .filter(|&u| u != named && !doc.units[u].pinned)
            .map(|u| scores[u])
            .fold(f32::MIN, f32::max);
        // Without the match test the named record traded places with the last record.
        assert!(
            scores[named] > best_other,
            "{} <= {best_other}",
            scores[named]
        );
    }

    #[test]
    fn a_query_about_the_end_of_a_table_raises_its_last_row() {
        use crate::methods::extract::Hints;
        use crate::methods::extract::kinds::csv;
        use crate::methods::extract::query::Query;
        use crate::methods::extract::score::score;

        let mut text = String::from("probe\tA\tB\tC\n");
        for i in 0..200 {
            text.push_str(&format!(
                "{}_at\t{}.5\t{}.25\t{}.75\n",
                31500 + i,
                i,
                i + 3,
                i * 2
            ));
        }
        let doc = csv::build(&text);
        let last = doc.units.len() - 1;
        assert!(doc.text(last).starts_with("31699_at"));
        let ask = |q: &str| {
            score(
                &doc,
                Query::from_hints(&Hints::new().with_query(q)).as_ref(),
            )
        };
        let at_the_end = ask("what are the values of the final probe in the table?");
        // Of the rows: the header is pinned, chosen first whatever it scores.
        let best_other = (0..last)
            .filter(|&u| !doc.units[u].pinned)
            .map(|u| at_the_end[u])
            .fold(f32::MIN, f32::max);
        assert!(
            at_the_end[last] > best_other,
            "{} <= {best_other}",
            at_the_end[last]
        );
        // Asked about no place, the last row is a row like the others.
        let anywhere = ask("what are the values of each probe?");
        assert!(anywhere[last] < at_the_end[last]);
    }
}
