//! A query that asks what failed ("which links are broken", "which requests were refused")
//! names no word of the lines that answer it: `Result     Error: URLError: …` says "error",
//! the query "broken". The lines whose words say they failed gain a share of the best match.

use std::collections::HashMap;

use crate::methods::extract::doc::{Doc, Level};
use crate::methods::extract::kinds::code::is_comment;
use crate::methods::extract::query::Query;
use crate::methods::extract::terms::for_each_word;

use super::MAX_RECORD_BLOCK;

/// Words of a query that ask about failures, as the query's words are kept (stemmed).
const FAILURE_WORDS: &[&str] = &[
    "broken", "broke", "fail", "failed", "failing", "fails", "failure", "failures", "error",
    "errors", "errored", "crash", "crashed", "crashes", "refused", "denied", "rejected", "wrong",
];
/// The share of the best query match a failed line gains.
const FAILURE_SHARE: f32 = 0.8;
/// Failed units are rare when at most one unit in this many is one.
const RARE_FAILURES: usize = 50;

/// Whether the query asks about what failed.
pub(super) fn asks_about_failures(query: &Query) -> bool {
    let mut buf = String::new();
    FAILURE_WORDS.iter().any(|w| {
        let mut asked = false;
        for_each_word(w, &mut buf, |stem| asked |= query.words.contains_key(stem));
        asked
    })
}

/// Raises the units that say they failed by [`FAILURE_SHARE`] of the best query score, when
/// the query asks about failures, and the other lines of their block (a record's fields, an
/// entry's lines) as much: they say what failed.
pub(super) fn raise_failures(
    doc: &Doc<'_>,
    query: &Query,
    query_scores: &[f32],
    scores: &mut [f32],
) {
    if !asks_about_failures(query) {
        return;
    }
    // A comment that says "error" documents one (a configuration's notes); it reports none.
    let reports_failure: Vec<bool> = (0..doc.units.len())
        .map(|u| doc.units[u].level == Level::Error && !is_comment(doc.text(u).trim()))
        .collect();
    // Failures among many lines that went well are what the query asks for; where many
    // lines failed (a compiler's errors), the query's words tell which it means.
    let failed = reports_failure.iter().filter(|&&f| f).count();
    if failed * RARE_FAILURES > doc.units.len() {
        return;
    }
    let best = query_scores.iter().copied().fold(0.0f32, f32::max);
    let raise = FAILURE_SHARE * best;
    // Per block: its units, and whether one of them failed.
    let mut blocks: HashMap<u32, (usize, bool)> = HashMap::new();
    for (u, unit) in doc.units.iter().enumerate() {
        if let Some(block) = unit.block {
            let entry = blocks.entry(block).or_default();
            entry.0 += 1;
            entry.1 |= reports_failure[u];
        }
    }
    for (u, unit) in doc.units.iter().enumerate() {
        let failed_block = unit
            .block
            .and_then(|b| blocks.get(&b))
            .is_some_and(|&(size, failed)| failed && size <= MAX_RECORD_BLOCK);
        if failed_block || reports_failure[u] {
            scores[u] += raise;
        }
    }
}
