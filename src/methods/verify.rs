//! The facts guard: a cheap check that a summary kept what matters most, and a repair.
//!
//! Two kinds of facts are checked against the summary:
//!
//! - **Identifiers the query names** that occur verbatim in the input: tokens that look like
//!   ids, versions, paths, hashes, dotted or snake_case names and numbers (two or more
//!   characters), and quoted strings. Plain words are not identifiers: a summary may rephrase
//!   them.
//! - **Error lines** of the input: lines with `ERROR`, `FATAL`, `CRITICAL`, `SEVERE`, `panic`,
//!   `Exception`, `Traceback`, `error[`, `error:`, `Error:`, `fatal:` or `failed`. Lines that
//!   differ only in their digits count once (the first is kept), so a log repeating one error a
//!   thousand times gives one fact.
//!
//! An identifier survives when the summary contains it; an error line survives when the summary
//! contains the line or its message (from the error word on). Missing facts are appended, most
//! important first (identifiers, then error lines in input order), as a `Kept verbatim:` tail of
//! input lines.
//!
//! The result never exceeds the budget. The tail may use whatever the summary leaves free, and
//! may take up to a third of the budget from the summary: then the summary's last lines are
//! dropped, because summaries lead with their main points, and a fact the query named or an
//! error the input reported is worth more than a summary's closing lines.

use std::collections::HashSet;

use crate::TokenCounter;
use crate::tokens::{ceil_char_boundary, floor_char_boundary};

/// The header of the appended tail.
pub(crate) const KEPT_VERBATIM: &str = "Kept verbatim:";

/// Distinct error lines looked at, in input order: beyond this a tail could not hold them all
/// anyway, and scanning stops early on huge logs full of errors.
const MAX_ERROR_FACTS: usize = 64;

/// Quoted input lines longer than this are cut to a window around the fact.
const MAX_QUOTED_CHARS: usize = 300;

/// Words that mark an error line, matched case-sensitively as substrings.
const ERROR_MARKERS: &[&str] = &[
    "ERROR",
    "FATAL",
    "CRITICAL",
    "SEVERE",
    "panic",
    "Exception",
    "Traceback",
    "error[",
    "error:",
    "Error:",
    "fatal:",
    "failed",
    "Failed",
    "FAILED",
];

/// What kind of fact was checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) enum FactKind {
    /// An identifier the query names that occurs in the input.
    QueryIdentifier,
    /// A line of the input that reports an error.
    ErrorLine,
}

/// A fact of the input that the summary does not contain.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct MissingFact {
    /// Why this fact matters.
    pub kind: FactKind,
    /// What was looked for in the summary.
    pub needle: String,
    /// The input line to quote for it (cut around the fact when long).
    pub line: String,
}

/// The facts of `original` (identifiers `query` names, error lines) missing from `summary`, most
/// important first.
pub(crate) fn missing_facts(
    original: &str,
    summary: &str,
    query: Option<&str>,
) -> Vec<MissingFact> {
    let mut missing = Vec::new();
    let mut quoted: HashSet<String> = HashSet::new();
    for id in query.map(query_identifiers).unwrap_or_default() {
        if summary.contains(&id) {
            continue;
        }
        let Some(line) = original.lines().find(|line| line.contains(&id)) else {
            continue;
        };
        let line = window_around(line.trim(), &id);
        if quoted.insert(line.clone()) {
            missing.push(MissingFact {
                kind: FactKind::QueryIdentifier,
                needle: id,
                line,
            });
        }
    }
    for (line, message) in error_lines(original) {
        if summary.contains(line) || summary.contains(message) {
            continue;
        }
        let line = window_around(line, message);
        // A line already quoted for an identifier is not quoted twice.
        if quoted.insert(line.clone()) {
            missing.push(MissingFact {
                kind: FactKind::ErrorLine,
                needle: message.to_owned(),
                line,
            });
        }
    }
    missing
}

/// `summary`, with the facts of `original` it misses appended in a `Kept verbatim:` tail, all
/// within `budget` tokens by `counter` (see the module docs for what is dropped to make room).
pub(crate) fn guard_facts(
    original: &str,
    summary: &str,
    query: Option<&str>,
    budget: usize,
    counter: &TokenCounter,
) -> String {
    guard_facts_counted(original, summary, query, budget, counter).0
}

/// [`guard_facts`], also returning how many facts the tail kept.
pub(crate) fn guard_facts_counted(
    original: &str,
    summary: &str,
    query: Option<&str>,
    budget: usize,
    counter: &TokenCounter,
) -> (String, usize) {
    let summary = summary.trim_end();
    let missing = missing_facts(original, summary, query);
    if missing.is_empty() {
        return (fit_lines(summary, budget, counter), 0);
    }
    let summary_tokens = counter.count(summary);
    // Free space, and at least a third of the budget taken from the summary if need be.
    let tail_budget = budget.saturating_sub(summary_tokens + 1).max(budget / 3);
    let mut tail = String::from(KEPT_VERBATIM);
    let mut kept = 0;
    for fact in &missing {
        let candidate = format!("{tail}\n- {}", fact.line);
        if counter.exceeds(&candidate, tail_budget) {
            continue;
        }
        tail = candidate;
        kept += 1;
    }
    if kept == 0 {
        return (fit_lines(summary, budget, counter), 0);
    }
    // The blank line between summary and tail costs a token at most.
    let room = budget.saturating_sub(counter.count(&tail) + 1);
    let head = fit_lines(summary, room, counter);
    let joined = if head.is_empty() {
        tail
    } else {
        format!("{head}\n\n{tail}")
    };
    // Counts of joined texts can differ by a token at the seam; the budget is a hard limit.
    (counter.prefix_within(&joined, budget).to_owned(), kept)
}

/// The leading whole lines of `text` that fit `budget`; a first line too long on its own is
/// cut at a token boundary.
fn fit_lines(text: &str, budget: usize, counter: &TokenCounter) -> String {
    if !counter.exceeds(text, budget) {
        return text.to_owned();
    }
    let head = counter.prefix_within(text, budget);
    match head.rfind('\n') {
        Some(end) => head[..end].trim_end().to_owned(),
        None => head.to_owned(),
    }
}

/// Identifier-like tokens and quoted strings of the query, each once, in query order.
fn query_identifiers(query: &str) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut push = |candidate: &str| {
        if !candidate.is_empty() && !found.iter().any(|f| f == candidate) {
            found.push(candidate.to_owned());
        }
    };
    for quote in ['"', '\'', '`'] {
        let parts: Vec<&str> = query.split(quote).collect();
        // Odd parts are inside quotes; an unmatched last quote opens nothing.
        for inside in parts.iter().skip(1).step_by(2).take((parts.len() - 1) / 2) {
            let inside = inside.trim();
            if (2..=200).contains(&inside.chars().count()) && !is_contraction(quote, inside) {
                push(inside);
            }
        }
    }
    for word in query.split_whitespace() {
        let word = word
            .trim_start_matches(|c: char| "([{<\"'`".contains(c))
            .trim_end_matches(|c: char| ",;:!?)]}>\"'`.".contains(c));
        if looks_like_identifier(word) {
            push(word);
        }
    }
    found
}

/// `'` inside "don't … it's" is an apostrophe, not a quote: a "quoted" span with spaces that
/// starts with a letter right after the apostrophe is prose.
fn is_contraction(quote: char, inside: &str) -> bool {
    quote == '\'' && inside.contains(' ') && inside.starts_with(|c: char| c.is_ascii_lowercase())
}

/// Ids, versions, paths, hashes, numbers, dotted and snake_case names; not plain words.
fn looks_like_identifier(word: &str) -> bool {
    if word.chars().count() < 2 {
        return false;
    }
    let has_digit = word.chars().any(|c| c.is_ascii_digit());
    let bytes = word.as_bytes();
    let inner_mark = (1..bytes.len().saturating_sub(1)).any(|i| {
        matches!(
            bytes[i],
            b'_' | b'.' | b'/' | b'\\' | b':' | b'@' | b'#' | b'='
        ) && bytes[i - 1].is_ascii_alphanumeric()
            && (bytes[i + 1].is_ascii_alphanumeric() || bytes[i + 1] == b'/')
    });
    let path_like = word.starts_with('/') || word.starts_with("./") || word.starts_with("~/");
    let camel = word
        .as_bytes()
        .windows(2)
        .skip(1)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    has_digit || inner_mark || path_like || camel
}

/// Distinct error lines (by their digit-free shape) as (trimmed line, message from the marker
/// on), in input order.
fn error_lines(original: &str) -> Vec<(&str, &str)> {
    let mut seen: HashSet<String> = HashSet::new();
    let mut found = Vec::new();
    for line in original.lines() {
        let Some(at) = ERROR_MARKERS.iter().filter_map(|m| line.find(m)).min() else {
            continue;
        };
        let shape: String = line
            .chars()
            .filter(|c| !c.is_ascii_digit())
            .take(MAX_QUOTED_CHARS)
            .collect();
        if !seen.insert(shape) {
            continue;
        }
        let trimmed = line.trim();
        let message = line[at..].trim();
        found.push((trimmed, message));
        if found.len() == MAX_ERROR_FACTS {
            break;
        }
    }
    found
}

/// `line` whole when short, otherwise a window of about [`MAX_QUOTED_CHARS`] bytes that starts
/// a little before `needle`, with `…` where it was cut.
fn window_around(line: &str, needle: &str) -> String {
    if line.len() <= MAX_QUOTED_CHARS {
        return line.to_owned();
    }
    let at = line.find(needle).unwrap_or(0);
    let start = floor_char_boundary(line, at.saturating_sub(MAX_QUOTED_CHARS / 4));
    let end = ceil_char_boundary(line, start + MAX_QUOTED_CHARS);
    let mut window = String::new();
    if start > 0 {
        window.push('…');
    }
    window.push_str(&line[start..end]);
    if end < line.len() {
        window.push('…');
    }
    window
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter() -> TokenCounter {
        TokenCounter::default()
    }

    #[test]
    fn a_lost_error_line_and_a_queried_id_are_appended_after_the_summary() {
        let input = "INFO start\nERROR disk /dev/sda1 full\nINFO block blk_42 stored\n";
        let summary = "The service started and stored blocks.";
        let guarded = guard_facts(
            input,
            summary,
            Some("what happened to blk_42?"),
            200,
            &counter(),
        );
        assert!(guarded.starts_with("The service started"));
        assert!(guarded.contains("Kept verbatim:"));
        assert!(guarded.contains("INFO block blk_42 stored"));
        assert!(guarded.contains("ERROR disk /dev/sda1 full"));
    }

    #[test]
    fn nothing_missing_leaves_the_summary_alone() {
        let input = "all good\nblk_1 stored\n";
        let out = guard_facts(input, "blk_1 was stored", Some("blk_1?"), 100, &counter());
        assert_eq!(out, "blk_1 was stored");
    }

    #[test]
    fn query_identifiers_are_ids_not_words() {
        let ids = query_identifiers(
            "Was block blk_-757 moved to 10.250.14.38:50010 by dfs.DataNode in v1.2.3 or \"hot spare\"?",
        );
        assert_eq!(
            ids,
            [
                "hot spare",
                "blk_-757",
                "10.250.14.38:50010",
                "dfs.DataNode",
                "v1.2.3"
            ]
        );
    }

    #[test]
    fn apostrophes_are_not_quotes() {
        assert!(query_identifiers("don't say it's broken").is_empty());
    }

    #[test]
    fn identifiers_absent_from_the_input_are_not_facts() {
        let missing = missing_facts("nothing here", "summary", Some("where is blk_9?"));
        assert!(missing.is_empty());
    }

    #[test]
    fn repeated_errors_count_once() {
        let input = "ERROR timeout after 10 ms\nERROR timeout after 20 ms\nERROR disk full\n";
        let missing = missing_facts(input, "", None);
        let lines: Vec<_> = missing.iter().map(|m| m.line.as_str()).collect();
        assert_eq!(lines, ["ERROR timeout after 10 ms", "ERROR disk full"]);
    }

    #[test]
    fn an_error_whose_message_is_in_the_summary_survives() {
        let input = "2024-01-01 ERROR disk full\n";
        assert!(missing_facts(input, "We saw: ERROR disk full", None).is_empty());
    }

    #[test]
    fn identifiers_come_before_errors() {
        let input = "ERROR boom\nid-7 ok\n";
        let missing = missing_facts(input, "", Some("status of id-7"));
        assert_eq!(missing[0].kind, FactKind::QueryIdentifier);
        assert_eq!(missing[1].kind, FactKind::ErrorLine);
    }

    #[test]
    fn the_guarded_summary_fits_the_budget_by_dropping_summary_tail_lines() {
        let input: String = (0..50)
            .map(|i| format!("ERROR failure number {i} kind {}\n", "x".repeat(i)))
            .collect();
        let summary: String = (0..40).map(|i| format!("summary line {i}\n")).collect();
        for budget in [10, 40, 120, 400] {
            let out = guard_facts(&input, &summary, None, budget, &counter());
            assert!(counter().count(&out) <= budget, "budget {budget}");
            if budget >= 40 {
                assert!(out.starts_with("summary line 0"));
                assert!(out.contains(KEPT_VERBATIM), "budget {budget}: {out}");
            }
        }
    }

    #[test]
    fn long_lines_are_quoted_around_the_fact() {
        let line = format!("{} blk_77 {}", "a".repeat(1000), "b".repeat(1000));
        let missing = missing_facts(&line, "", Some("blk_77"));
        assert!(missing[0].line.contains("blk_77"));
        assert!(missing[0].line.len() < MAX_QUOTED_CHARS + 10);
    }

    #[test]
    fn a_zero_budget_gives_nothing() {
        assert_eq!(guard_facts("ERROR x\n", "summary", None, 0, &counter()), "");
    }
}
