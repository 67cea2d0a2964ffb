//! The bounds a question sets on a number ("above 7,000 feet", "300 or more home runs", "at
//! most 5"): the threshold, which side of it passes, and the words that name what it bounds.

use std::borrow::Cow;

use super::super::doc::{parse_quantity, without_thousands_separators};
use super::super::terms::{for_each_word, is_stopword};
use super::WordHash;
use super::phrases::{CLAUSE_ENDS, bare};

/// A bound the query sets on what the words before it name: "a graduation rate above 100".
#[derive(Debug)]
pub(crate) struct Bound {
    /// The words before the bound, normalized as the query's.
    pub(crate) words: std::collections::HashSet<String, WordHash>,
    /// The words of the one of them next to the bound (stopwords passed over): of two
    /// columns the words name alike, the one this names is bounded ("every airport whose
    /// altitude is above 7,000" bounds `Altitude`, not `AirportID`).
    pub(crate) nearest: std::collections::HashSet<String, WordHash>,
    pub(crate) value: f64,
    /// Whether the values asked for are over the bound, not under it.
    pub(crate) above: bool,
    /// Whether the bound itself is among them ("at least 300", "5 or fewer").
    pub(crate) inclusive: bool,
}

impl Bound {
    /// Whether `value` is past the bound, on the side asked for.
    pub(crate) fn is_passed_by(&self, value: f64) -> bool {
        match (self.above, self.inclusive) {
            (true, false) => value > self.value,
            (true, true) => value >= self.value,
            (false, false) => value < self.value,
            (false, true) => value <= self.value,
        }
    }
}

/// How many words before a bound name what it bounds: "(graduation rate or PhD share above
/// 100)".
const BOUND_WORDS_BEFORE: usize = 5;
/// How many words after one that comes after its number do: "300 or more career home runs".
const BOUND_WORDS_AFTER: usize = 4;

/// The bounds `text` sets on a number: a threshold word ("above", "over", "under", "more
/// than", "less than") followed by a number, with the words before it in its clause, which
/// name what it bounds; or a number followed by "or more" ("or less"), or after "at least"
/// ("at most"), with the words after it ("at least 300 home runs"), or before it when none
/// follow ("a score of at least 90.").
pub(super) fn bounds(text: &str) -> Vec<Bound> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let mut buf = String::new();
    thresholds(&tokens)
        .filter_map(|t| {
            let mut named = words_after(&tokens, t.words_after);
            let named_after = !named.is_empty();
            if !named_after {
                let mut from = t.at;
                while from > 0
                    && t.at - from < BOUND_WORDS_BEFORE
                    && !tokens[from - 1].ends_with(CLAUSE_ENDS)
                {
                    from -= 1;
                }
                named = &tokens[from..t.at];
            }
            let mut words = std::collections::HashSet::default();
            for token in named {
                for_each_word(token, &mut buf, |w| {
                    words.insert(w.to_owned());
                });
            }
            // The word next to the threshold, past its stopwords: "altitude" of "every
            // airport whose altitude is above 7,000".
            let mut nearest = std::collections::HashSet::default();
            let toward_threshold = |k: usize| if named_after { k } else { named.len() - 1 - k };
            for k in 0..named.len() {
                for_each_word(named[toward_threshold(k)], &mut buf, |w| {
                    if !is_stopword(w) {
                        nearest.insert(w.to_owned());
                    }
                });
                if !nearest.is_empty() {
                    break;
                }
            }
            (!words.is_empty()).then_some(Bound {
                words,
                nearest,
                value: t.value,
                above: t.above,
                inclusive: t.inclusive,
            })
        })
        .collect()
}

/// The words of `tokens` from `from` that name what a bound before them bounds: up to the end
/// of the clause or the next "and"/"or", at most [`BOUND_WORDS_AFTER`]; none if `from` is
/// `None`, or the number ended its clause.
fn words_after<'t>(tokens: &'t [&'t str], from: Option<usize>) -> &'t [&'t str] {
    let Some(from) = from.filter(|&f| f <= tokens.len()) else {
        return &[];
    };
    if from > 0 && tokens[from - 1].ends_with(CLAUSE_ENDS) {
        return &[];
    }
    let mut to = from;
    while to < tokens.len() && to - from < BOUND_WORDS_AFTER {
        if matches!(bare(tokens[to]).as_str(), "and" | "or") {
            break;
        }
        to += 1;
        if tokens[to - 1].ends_with(CLAUSE_ENDS) {
            break;
        }
    }
    &tokens[from..to]
}

/// `text` without the whole numbers of its thresholds: the 72 of "scored below 72 points" is
/// a bound on a column, not a word to find (a chain of 72 locations is not asked about). A
/// number with a point stays: "Python below 3.14" is also a version the output writes.
pub(super) fn without_threshold_numbers(text: &str) -> Cow<'_, str> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    let whole = |t: &str| {
        without_thousands_separators(t.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
            .bytes()
            .all(|b| b.is_ascii_digit())
    };
    let numbers: Vec<usize> = thresholds(&tokens)
        .map(|t| t.number_at)
        .filter(|&i| whole(tokens[i]))
        .collect();
    if numbers.is_empty() {
        return Cow::Borrowed(text);
    }
    let kept: Vec<&str> = (tokens.iter().enumerate())
        .filter(|(i, _)| !numbers.contains(i))
        .map(|(_, t)| *t)
        .collect();
    Cow::Owned(kept.join(" "))
}

/// A threshold of a query: the token of its word, the token of its number, that number, and
/// whether values above it pass.
struct Threshold {
    /// Where the threshold's words begin ("above", "more", "at", or the number of "300 or
    /// more").
    at: usize,
    number_at: usize,
    value: f64,
    above: bool,
    /// Whether the bound itself passes ("at least", "or more").
    inclusive: bool,
    /// Where the words naming what it bounds begin, when they follow it.
    words_after: Option<usize>,
}

/// Words after a number and "or" that make it a bound the number itself passes: "300 or
/// more", "5 or fewer".
const OR_ABOVE: &[&str] = &[
    "more", "greater", "higher", "larger", "longer", "above", "over",
];
const OR_BELOW: &[&str] = &[
    "less", "fewer", "lower", "smaller", "shorter", "below", "under",
];

/// The thresholds among `tokens`: a threshold word followed by a number, "at least" or "at
/// most" followed by one, a number followed by "or more" ("or less", also with its unit
/// between: "15 lines or more"), or "non-zero" (above 0) before what it bounds.
fn thresholds<'t>(tokens: &'t [&'t str]) -> impl Iterator<Item = Threshold> + 't {
    let number = |at: usize| {
        let token = tokens.get(at)?;
        // A sign written on the number ("profits below -10", "under −5") is kept: a loss
        // or a frost is the other side of zero.
        let signed = token
            .trim_start_matches(|c: char| "([\"'".contains(c))
            .starts_with(['-', '−']);
        let magnitude = token.trim_matches(|c: char| !c.is_ascii_alphanumeric());
        if !magnitude.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let value = parse_quantity(magnitude)?;
        Some(if signed { -value } else { value })
    };
    (0..tokens.len()).filter_map(move |i| {
        let word = bare(tokens[i]);
        let next = |k: usize| tokens.get(i + k).map(|t| bare(t)).unwrap_or_default();
        let than = next(1) == "than";
        let (above, number_at, inclusive, words_after) = match word.as_str() {
            "above" | "over" | "exceeds" | "exceeding" | "exceed" => (true, i + 1, false, None),
            "more" | "greater" | "higher" | "larger" | "longer" | "slower" if than => {
                (true, i + 2, false, None)
            }
            "below" | "under" => (false, i + 1, false, None),
            "less" | "fewer" | "lower" | "smaller" | "shorter" | "faster" if than => {
                (false, i + 2, false, None)
            }
            "at" if matches!(next(1).as_str(), "least" | "most") => {
                (next(1) == "least", i + 2, true, Some(i + 3))
            }
            _ if next(1) == "or" && OR_ABOVE.contains(&next(2).as_str()) => {
                (true, i, true, Some(i + 3))
            }
            _ if next(1) == "or" && OR_BELOW.contains(&next(2).as_str()) => {
                (false, i, true, Some(i + 3))
            }
            // The unit between the number and "or more": "15 lines or more".
            _ if next(2) == "or"
                && OR_ABOVE.contains(&next(3).as_str())
                && next(1).bytes().all(|b| b.is_ascii_alphabetic()) =>
            {
                (true, i, true, Some(i + 1))
            }
            _ if next(2) == "or"
                && OR_BELOW.contains(&next(3).as_str())
                && next(1).bytes().all(|b| b.is_ascii_alphabetic()) =>
            {
                (false, i, true, Some(i + 1))
            }
            // "which rules have non-zero packet counters": above 0, what follows bounded.
            "non-zero" | "nonzero" => {
                return Some(Threshold {
                    at: i,
                    number_at: i,
                    value: 0.0,
                    above: true,
                    inclusive: false,
                    words_after: Some(i + 1),
                });
            }
            _ => return None,
        };
        let value = number(number_at)?;
        Some(Threshold {
            at: i,
            number_at,
            value,
            above,
            inclusive,
            words_after,
        })
    })
}
