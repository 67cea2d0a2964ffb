//! A listing whose lines all end in a bare number no word names: `309:0: '_run' 141` of a
//! complexity checker, `  1204  src/main.rs` reversed, a score after each name. The number
//! is the listing's column, though no header says so. When the query ranks ("the highest
//! complexity") or bounds ("80 or more") a quantity, the lines at the asked end, or past the
//! bound, answer it.

use std::collections::HashMap;

use super::super::doc::Doc;
use super::super::query::Query;
use super::quantities::{MIN_WEIGHT, raise_asked_ends};

/// A listing has at least this many lines of one shape ending in a number …
const MIN_LINES: usize = 20;
/// … and they are at least this share of its lines: a few numbered lines among prose are no
/// column.
const MIN_SHARE: f32 = 0.3;
/// At most this many lines past a bound are raised: a bound most lines pass picks nothing.
const MAX_PASSING: usize = 24;

/// Raises the lines of the listing's numbered series that the query's rank or bound picks.
pub(in super::super) fn raise_ranked_series(
    doc: &Doc<'_>,
    query: &Query,
    query_scores: &[f32],
    scores: &mut [f32],
) {
    if query.ranked.is_empty() && query.bounds.is_empty() {
        return;
    }
    let n = doc.units.len();
    if n < MIN_LINES {
        return;
    }
    // Per shape, its lines and their last numbers.
    let mut series: HashMap<String, Vec<(usize, f64)>> = HashMap::new();
    for u in 0..n {
        let text = doc.text(u);
        if text.contains('\n') {
            continue;
        }
        if let Some(value) = last_number(text) {
            series.entry(shape(text)).or_default().push((u, value));
        }
    }
    let Some(mut values) = series
        .into_values()
        .max_by_key(|lines| (lines.len(), lines.first().map(|l| std::cmp::Reverse(l.0))))
    else {
        return;
    };
    if values.len() < MIN_LINES || (values.len() as f32) < MIN_SHARE * n as f32 {
        return;
    }
    let best = query_scores.iter().copied().fold(0.0f32, f32::max);
    let weight = best.max(MIN_WEIGHT);
    values.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    if let [bound] = query.bounds.as_slice() {
        let passing: Vec<usize> = values
            .iter()
            .filter(|(_, v)| bound.is_passed_by(*v))
            .map(|&(u, _)| u)
            .collect();
        if !passing.is_empty() && passing.len() <= MAX_PASSING {
            for u in passing {
                scores[u] += weight;
            }
            return;
        }
    }
    if query.ranked.is_empty() {
        return;
    }
    raise_asked_ends(&values, query.ends, weight, &mut |u, gain| {
        scores[u] += gain
    });
}

/// The number a line ends with, as a word of its own (`'_run' 141`), not a version's or a
/// path's last digits.
fn last_number(line: &str) -> Option<f64> {
    let last = line.split_ascii_whitespace().next_back()?;
    let plain = last.bytes().all(|b| b.is_ascii_digit() || b == b'.')
        && last.starts_with(|c: char| c.is_ascii_digit());
    plain.then(|| last.parse().ok()).flatten()
}

/// A line's shape: each run of digits one `#`, each run of letters and underscores one `a`,
/// punctuation and spacing kept (`309:0: '_run' 141` and `6677:0: '_checkAll' 102` are both
/// `#:#: 'a' #`).
fn shape(line: &str) -> String {
    let mut out = String::with_capacity(24);
    let mut last = ' ';
    for c in line.trim_end().chars() {
        let class = if c.is_ascii_digit() {
            '#'
        } else if c.is_alphabetic() || c == '_' {
            'a'
        } else if c.is_whitespace() {
            ' '
        } else {
            c
        };
        if !(class == last && matches!(class, '#' | 'a' | ' ')) {
            out.push(class);
        }
        last = class;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;
    use crate::methods::extract::kinds::lines::{self, Style};

    /// A complexity checker's listing: a file's name, then `line:col: 'function' score`.
    fn listing() -> String {
        let mut text = String::new();
        for file in 0..12 {
            text.push_str(&format!("modules/mod{file}.py\n"));
            for f in 0..6 {
                let score = if (file, f) == (7, 3) {
                    141
                } else if (file, f) == (2, 1) {
                    92
                } else {
                    8 + (file * 7 + f * 5) % 40
                };
                text.push_str(&format!("{}:0: 'func_{file}_{f}' {score}\n", 40 + f * 97));
            }
        }
        text
    }

    fn rank_of(text: &str, query: &str, line: &str) -> usize {
        let doc = lines::build(text, Style::Text);
        let query = Query::from_hints(&Hints::new().with_query(query)).unwrap();
        let scores = super::super::score(&doc, Some(&query));
        let at = doc
            .units
            .iter()
            .position(|u| text[u.span.range()].contains(line))
            .unwrap();
        scores.iter().filter(|&&s| s > scores[at]).count()
    }

    #[test]
    fn the_highest_numbers_of_an_unlabelled_column_stand_out() {
        let text = listing();
        let q = "Which functions have the highest cyclomatic complexity?";
        assert!(rank_of(&text, q, "'func_7_3' 141") <= 1);
        assert!(rank_of(&text, q, "'func_2_1' 92") <= 2);
        let bounded = "Which functions have a cyclomatic complexity of 90 or more?";
        assert!(rank_of(&text, bounded, "'func_2_1' 92") <= 2);
    }

    #[test]
    fn shapes_set_names_and_numbers_aside() {
        assert_eq!(
            shape("309:0: '_run' 141"),
            shape("6677:0: '_checkAllAdmx' 102")
        );
        assert_ne!(shape("309:0: '_run' 141"), shape("modules/file.py"));
        assert_eq!(last_number("309:0: '_run' 141"), Some(141.0));
        assert_eq!(last_number("libfoo-1.2"), None);
    }
}
