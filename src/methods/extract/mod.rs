//! The extractive, query-aware compressor: no model, deterministic.
//!
//! It is the rung of the condensing ladder that needs nothing but the text: the default when no
//! LLM is configured and the answer when the LLM fails or is late. It works in five steps, one
//! module each:
//!
//! 1. **Detect** what the text is (JSON, JSON Lines, unified diff, log, CSV/TSV, markdown,
//!    HTML, code, or plain text), by shape from a sample and never failing ([`ContentKind`]).
//! 2. **Cut** it into units that fit the kind: records, log entries, rows, paragraphs, lines;
//!    each with its context (heading, parent line, schema), its severity and a template.
//! 3. **Score** the units: BM25 against the query and the tool's arguments, high weight for
//!    identifiers, numbers, versions, paths and quoted strings the query names; and, query or
//!    not, errors and their detail, rare templates, rare field values and numeric extremes.
//! 4. **Fold** repeats: the k-th repeat of a template scores less, so a budget holds variety,
//!    and an omitted run of repeats is one marker line with its count.
//! 5. **Fill** the budget: choose by score, emit in the original order with markers for what
//!    was left out (`[… 1,203 similar INFO lines omitted …]`), and fit to the budget by the
//!    exact counter, counting only what is emitted.
//!
//! Kept units are emitted byte for byte (JSON records are re-rendered compactly, HTML as text),
//! and the same input, hints and budget always give the same bytes.
//!
//! ```
//! use condense::methods::extract::{extract, Hints};
//! use condense::TokenCounter;
//!
//! let mut log = String::new();
//! for i in 0..2000 {
//!     log.push_str(&format!("2024-05-01 10:00:{:02} INFO heartbeat ok seq={i}\n", i % 60));
//! }
//! log.push_str("2024-05-01 10:01:00 ERROR disk /dev/sda1 is full\n");
//!
//! let counter = TokenCounter::default();
//! let hints = Hints::new().with_query("why did the service stop?");
//! let condensed = extract(&log, &hints, 200, &counter);
//!
//! assert!(counter.count(&condensed) <= 200);
//! assert!(condensed.contains("ERROR disk /dev/sda1 is full"));
//! assert!(condensed.contains("similar INFO lines omitted"));
//! ```

use std::panic::{self, AssertUnwindSafe};

use crate::TokenCounter;

mod detect;
mod doc;
mod extremes;
mod field;
mod fill;
mod kinds;
mod query;
mod score;
mod terms;
mod tree;
mod window;

pub use detect::ContentKind;

pub use crate::methods::Hints;

/// What one extraction did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ExtractStats {
    /// The kind of content detected.
    pub kind: ContentKind,
    /// How many units (records, entries, rows, paragraphs, lines) the text was cut into.
    pub units: usize,
    /// How many of them were kept.
    pub kept_units: usize,
    /// How many were left out (and summarised by omission markers).
    pub omitted_units: usize,
    /// Tokens of the output, by the counter given.
    pub tokens: usize,
    /// Whether the text already fit the budget and was returned unchanged.
    pub unchanged: bool,
}

/// A condensed text and what was done to get it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Extracted {
    /// The condensed text: at most the budget's tokens.
    pub text: String,
    /// What was kept and left out.
    pub stats: ExtractStats,
}

/// Condenses `text` to at most `budget` tokens by `counter`, keeping what `hints` ask for.
///
/// Deterministic: the same input, hints and budget give the same bytes. Never panics; valid
/// UTF-8 in, valid UTF-8 out. See the [module documentation](self) for how it chooses.
pub fn extract(text: &str, hints: &Hints<'_>, budget: usize, counter: &TokenCounter) -> String {
    extract_with_stats(text, hints, budget, counter).text
}

/// [`extract`], with stats on what was kept and left out.
///
/// ```
/// use condense::methods::extract::{extract_with_stats, ContentKind, Hints};
/// use condense::TokenCounter;
///
/// let runs: Vec<_> = (0..200)
///     .map(|i| serde_json::json!({"id": i, "conclusion": if i == 117 { "failure" } else { "success" }}))
///     .collect();
/// let text = serde_json::to_string_pretty(&runs).unwrap();
///
/// let out = extract_with_stats(&text, &Hints::new(), 300, &TokenCounter::default());
/// assert_eq!(out.stats.kind, ContentKind::Json);
/// assert!(out.stats.tokens <= 300);
/// assert!(out.text.contains(r#"[117]: {"id": 117,"conclusion": "failure"}"#));
/// ```
pub fn extract_with_stats(
    text: &str,
    hints: &Hints<'_>,
    budget: usize,
    counter: &TokenCounter,
) -> Extracted {
    // Small enough to count cheaply and within budget: nothing to do.
    if text.len() <= budget.saturating_mul(8)
        && let Some(tokens) = counter.count_up_to(text, budget)
    {
        return Extracted {
            text: text.to_owned(),
            stats: ExtractStats {
                kind: ContentKind::Text,
                units: 0,
                kept_units: 0,
                omitted_units: 0,
                tokens,
                unchanged: true,
            },
        };
    }
    // The steps below are written not to panic; should one still do so on some input, the
    // caller gets a truncation rather than a failed tool call.
    panic::catch_unwind(AssertUnwindSafe(|| condense(text, hints, budget, counter))).unwrap_or_else(
        |_| {
            let (text, tokens) = counter.prefix_within_counted(text, budget);
            Extracted {
                text: text.to_owned(),
                stats: ExtractStats {
                    kind: ContentKind::Text,
                    units: 0,
                    kept_units: 0,
                    omitted_units: 0,
                    tokens,
                    unchanged: false,
                },
            }
        },
    )
}

/// The kind of `text`, and its parsed value when it is a JSON document small enough to parse
/// whole. A large text is never parsed into a tree: a valid document is walked from its text,
/// and any other large text is told apart by a prefix, since a parse that fails at the end of
/// a cut document would first have built nearly all of its tree.
fn detect_bounded(text: &str) -> (ContentKind, Option<serde_json::Value>) {
    use kinds::json::{PARSE_WHOLE_BYTES, is_document};
    if text.len() <= PARSE_WHOLE_BYTES || !text.trim_start().starts_with(['{', '[']) {
        return detect::detect(text);
    }
    if is_document(text) {
        return (ContentKind::Json, None);
    }
    let prefix = &text[..crate::tokens::floor_char_boundary(text, PARSE_WHOLE_BYTES)];
    let prefix = &prefix[..prefix.rfind('\n').map_or(prefix.len(), |i| i + 1)];
    match detect::detect(prefix) {
        // The prefix alone is a whole document but the text is not: read it as text.
        (ContentKind::Json, _) => (ContentKind::Text, None),
        (kind, _) => (kind, None),
    }
}

fn condense(text: &str, hints: &Hints<'_>, budget: usize, counter: &TokenCounter) -> Extracted {
    let query = query::Query::from_hints(hints);
    let (kind, json) = detect_bounded(text);
    // No one unit may take more than about a fifth of the budget (at ~3.5 bytes a token).
    let max_unit_bytes = (budget.saturating_mul(7) / 10).clamp(160, 8000);
    let doc = kinds::build(text, kind, json, query.as_ref(), max_unit_bytes);
    let scores = score::score(&doc, query.as_ref());
    let mut filled = fill::fill(&doc, &scores, budget, counter);
    if kinds::is_reader_view(kind, &doc) && filled.omitted_units == 0 {
        with_source_tail(&mut filled, text, query.as_ref(), budget, counter);
    }
    Extracted {
        text: filled.text,
        stats: ExtractStats {
            kind,
            units: doc.units.len(),
            kept_units: filled.kept_units,
            omitted_units: filled.omitted_units,
            tokens: filled.tokens,
            unchanged: false,
        },
    }
}

/// The line between a reader's view and the part of its source that follows it.
const SOURCE_TAIL_MARK: &str = "[… the JSON it was read from, in part: …]";
/// The least room, in tokens, worth a source tail.
const MIN_TAIL_TOKENS: usize = 100;

/// A notebook's reader's view that fits whole with room to spare is followed by its JSON,
/// condensed to the room left: the cells the query names as the file holds them (a line
/// quoted from the file, `raise Exception(\"message\")`, reads the same), where the view
/// shows their text decoded. Added only when the whole still fits the budget.
fn with_source_tail(
    filled: &mut fill::Filled,
    text: &str,
    query: Option<&query::Query>,
    budget: usize,
    counter: &TokenCounter,
) {
    let room = budget.saturating_sub(filled.tokens + counter.count(SOURCE_TAIL_MARK) + 2);
    if room < MIN_TAIL_TOKENS {
        return;
    }
    let max_unit_bytes = (room.saturating_mul(7) / 10).clamp(160, 8000);
    let doc = kinds::json::build_document(text, query, max_unit_bytes);
    let scores = score::score(&doc, query);
    let tail = fill::fill(&doc, &scores, room, counter);
    if tail.kept_units == 0 {
        return;
    }
    let whole = format!("{}\n{SOURCE_TAIL_MARK}\n{}", filled.text, tail.text);
    if let Some(tokens) = counter.count_up_to(&whole, budget) {
        filled.text = whole;
        filled.tokens = tokens;
        filled.kept_units += tail.kept_units;
    }
}
