//! How a column's or key's name is told to name the query's words: whole, as a short form
//! (`Expend` of "expenditure"), as a compound ending with one (`poptotal`), as two short forms
//! run together (`testscr`), or as initials run into one (`hruns` of "home runs").

use std::collections::HashSet;

use super::WordHash;
use crate::methods::extract::terms::for_each_word;

/// Whether a word of `name` is one of `words`, or a short form of some of them.
pub(super) fn names_one_of(name: &str, words: &HashSet<String, WordHash>) -> bool {
    !words.is_empty() && words_named(name, words) > 0
}

/// How many of `words` the words of `name` name: each word that is one of them or a short
/// form of one names one, a key of two short forms run together two (`testscr` of "test
/// score"), and one of initials run into a word one more for each initial (`hruns` of "home
/// runs"). Of two columns a query names, the one naming more of its words is the one it means:
/// `hruns`, not `runs`, for "home runs".
pub(super) fn words_named(name: &str, words: &HashSet<String, WordHash>) -> usize {
    let mut named = 0;
    for_each_word(name, &mut String::new(), |w| {
        named += if words.contains(w) {
            1
        } else if short_forms_run_together(w, words) {
            2
        } else if compound_ends_with_one_of(w, words) || abbreviates_one_of(w, words) {
            1
        } else {
            initials_run_into_one_of(w, words)
        };
    });
    named
}

/// At most this many initials run into a word (`hruns`, `sbases` of "stolen bases") …
const MAX_INITIALS: usize = 2;
/// … which is this long at least.
const MIN_INITIALLED_WORD: usize = 3;

/// How many of `words` `word` names as the initials of some of them run into another one
/// whole (`hruns` of "home runs": 2): 0 if it is not one.
fn initials_run_into_one_of(word: &str, words: &HashSet<String, WordHash>) -> usize {
    if !word.bytes().all(|b| b.is_ascii_lowercase()) {
        return 0;
    }
    for initials in 1..=MAX_INITIALS.min(word.len().saturating_sub(MIN_INITIALLED_WORD)) {
        let (head, tail) = word.split_at(initials);
        if !words.contains(tail) {
            continue;
        }
        // Each initial begins a different word, none of them the whole one.
        let mut used: Vec<&str> = vec![tail];
        let all = head.bytes().all(|b| {
            let found = words
                .iter()
                .find(|w| w.as_bytes()[0] == b && !used.contains(&w.as_str()));
            found.map(|w| used.push(w)).is_some()
        });
        if all {
            return initials + 1;
        }
    }
    0
}

/// A column's word this long at least may be the first letters of a query word …
const MIN_ABBREVIATION: usize = 5;
/// … of at most this many times its length: a header's short form (`Expend` of
/// "expenditure", `Enroll` of "enrollment").
const MAX_ABBREVIATED_RATIO: usize = 2;

/// Whether `word` (a column's word) is the first letters of one of `words`.
fn abbreviates_one_of(word: &str, words: &HashSet<String, WordHash>) -> bool {
    word.len() >= MIN_ABBREVIATION
        && words.iter().any(|w| {
            w.len() > word.len()
                && w.len() <= word.len() * MAX_ABBREVIATED_RATIO
                && w.starts_with(word)
        })
}

/// Keys of two short forms run together (`testscr`, `enrltot`) are this long …
const MIN_SHORT_FORMS_LEN: usize = 6;
const MAX_SHORT_FORMS_LEN: usize = 12;
/// … and each short form this long at least.
const MIN_SHORT_FORM: usize = 3;

/// Whether `word`, a key of two short forms run together with no separator (`testscr` of
/// "test score", `enrltot` of "total enrollment"), is made of short forms of two of `words`:
/// each starts as its word does and keeps some of its letters, in order.
fn short_forms_run_together(word: &str, words: &HashSet<String, WordHash>) -> bool {
    if !(MIN_SHORT_FORMS_LEN..=MAX_SHORT_FORMS_LEN).contains(&word.len())
        || !word.bytes().all(|b| b.is_ascii_lowercase())
    {
        return false;
    }
    let is_short_form = |part: &str, of: &str| {
        let mut letters = of.bytes();
        part.len() >= MIN_SHORT_FORM
            && part.len() <= of.len()
            && part.as_bytes()[0] == of.as_bytes()[0]
            && part.bytes().all(|b| letters.any(|l| l == b))
    };
    (MIN_SHORT_FORM..=word.len() - MIN_SHORT_FORM).any(|at| {
        let (first, second) = word.split_at(at);
        words.iter().any(|a| {
            is_short_form(first, a) && words.iter().any(|b| b != a && is_short_form(second, b))
        })
    })
}

/// Compound keys are this long at least (`poptotal`); a word they end with, this long.
const MIN_COMPOUND_LEN: usize = 7;
const MIN_COMPOUND_PART: usize = 4;

/// Whether `word`, a key of words run together with no separator (`poptotal`,
/// `percbelowpoverty`), ends with one of `words`: the last word of such a key says what it
/// is, as `total` of "the smallest total population".
fn compound_ends_with_one_of(word: &str, words: &HashSet<String, WordHash>) -> bool {
    word.len() >= MIN_COMPOUND_LEN
        && word.bytes().all(|b| b.is_ascii_lowercase())
        && words.iter().any(|w| {
            w.len() >= MIN_COMPOUND_PART && w.len() < word.len() && word.ends_with(w.as_str())
        })
}
