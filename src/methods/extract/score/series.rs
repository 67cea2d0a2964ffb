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
    // Every shape of enough lines is a column of its own (`Function: … 75.00%` lines and the
    // `Total: 40.0%` line after each class's).
    let mut columns: Vec<Vec<(usize, f64)>> = series
        .into_values()
        .filter(|lines| lines.len() >= MIN_LINES)
        .collect();
    let numbered: usize = columns.iter().map(Vec::len).sum();
    if columns.is_empty() || (numbered as f32) < MIN_SHARE * n as f32 {
        return;
    }
    columns.sort_unstable_by_key(|lines| lines[0].0);
    let best = query_scores.iter().copied().fold(0.0f32, f32::max);
    let weight = best.max(MIN_WEIGHT);
    for mut values in columns {
        values.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        raise_asked_lines(query, &values, weight, scores);
    }
}

/// Raises the lines of one column, `values` sorted from the largest, that pass the query's
/// bound, or else those at the end its rank asks for.
fn raise_asked_lines(query: &Query, values: &[(usize, f64)], weight: f32, scores: &mut [f32]) {
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
    raise_asked_ends(values, query.ends, weight, &mut |u, gain| scores[u] += gain);
}

/// The number a line ends with, as a word of its own (`'_run' 141`, `75.00%`), not a version's or a
/// path's last digits.
fn last_number(line: &str) -> Option<f64> {
    let word = line.split_ascii_whitespace().next_back()?;
    // A share is a number too (`133.33%`).
    let last = word.strip_suffix('%').unwrap_or(word);
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

    /// A cohesion report: per class, a line per method and the class's total, both shares.
    fn cohesion_report() -> String {
        let mut text = String::new();
        for class in 0..24 {
            text.push_str(&format!("  Class: Widget{class} ({}:0)\n", 20 + class * 40));
            for f in 0..4 {
                let share = (class * 13 + f * 7) % 90;
                text.push_str(&format!("    Function: method_{f} {f}/4 {share}.00%\n"));
            }
            let total = if class == 9 { "133.33" } else { "41.5" };
            text.push_str(&format!("    Total: {total}%\n"));
        }
        text
    }

    #[test]
    fn each_numbered_shape_is_a_column_and_shares_are_numbers() {
        let text = cohesion_report();
        let q = "Which class has a total above 100%?";
        // Without the rule the totals all rank alike, after the classes.
        assert!(rank_of(&text, q, "Total: 133.33%") <= 1);
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
        assert_eq!(last_number("Total: 133.33%"), Some(133.33));
    }
}
