//! A repeated message whose number is not the zero the message mostly says: "Sending exit
//! status 3" among sixteen "Sending exit status 0", `retries=4` among `retries=0`. When the
//! query asks about the message, the odd ones are what it is after: the command that failed,
//! the request that was retried.

use std::collections::HashMap;
use std::ops::Range;

use super::super::doc::{Doc, Template, byte_runs};

/// A message repeated fewer times than this has no usual number.
const MIN_REPEATS: usize = 5;
/// The usual number is said by at least this share of the message's lines …
const USUAL_SHARE: f32 = 0.6;
/// … and an odd one by at most this share.
const ODD_SHARE: f32 = 0.2;
/// What an odd line gains: this share of the query's best match.
const ODD_WEIGHT_SHARE: f32 = 0.5;

/// Raises the lines matching the query whose number is not the zero the other lines of their
/// message mostly say.
pub(in super::super) fn raise_odd_values(doc: &Doc<'_>, query_scores: &[f32], scores: &mut [f32]) {
    let best = query_scores.iter().copied().fold(0.0f32, f32::max);
    if best <= 0.0 {
        return;
    }
    let mut messages: HashMap<Template, Vec<usize>> = HashMap::new();
    for (u, unit) in doc.units.iter().enumerate() {
        if let Some(template) = unit.template
            && query_scores[u] > 0.0
        {
            messages.entry(template).or_default().push(u);
        }
    }
    for lines in messages.values().filter(|l| l.len() >= MIN_REPEATS) {
        let numbers: Vec<Vec<&str>> = lines
            .iter()
            .map(|&u| standalone_numbers(doc.text(u)))
            .collect();
        let slots = numbers.iter().map(Vec::len).min().unwrap_or(0);
        for slot in 0..slots {
            let mut counts: HashMap<&str, usize> = HashMap::new();
            for n in &numbers {
                *counts.entry(n[slot]).or_default() += 1;
            }
            let Some((&usual, &usual_count)) = counts.iter().max_by_key(|(_, c)| **c) else {
                continue;
            };
            // Zero is the usual outcome (an exit status, a count of errors or retries): a
            // number that is mostly something else (a size, a port) is no outcome.
            if usual != "0" || (usual_count as f32) < USUAL_SHARE * lines.len() as f32 {
                continue;
            }
            for (&u, n) in lines.iter().zip(&numbers) {
                let value = n[slot];
                if value != usual && (counts[value] as f32) <= ODD_SHARE * lines.len() as f32 {
                    scores[u] += best * ODD_WEIGHT_SHARE;
                }
            }
        }
    }
}

/// The numbers of `text` that stand as words or values (`status 3`, `retries=4`, `(7)`), not
/// the parts of a date, a time, a version or an address (`2026-11-28`, `10:28:08,240`,
/// `2.24.1`, `127.0.0.1`).
fn standalone_numbers(text: &str) -> Vec<&str> {
    let bytes = text.as_bytes();
    let mut numbers = Vec::new();
    for Range { start, end: i } in byte_runs(bytes, u8::is_ascii_digit) {
        let before = start.checked_sub(1).map(|b| bytes[b]);
        let after = bytes.get(i).copied();
        let opens = matches!(before, None | Some(b' ' | b'=' | b'(' | b'['));
        let closes = match after {
            None | Some(b' ' | b')' | b']' | b',' | b';') => true,
            // A full stop ends a sentence, not a version's part.
            Some(b'.') => !bytes.get(i + 1).is_some_and(u8::is_ascii_digit),
            _ => false,
        };
        if opens && closes {
            numbers.push(&text[start..i]);
        }
    }
    numbers
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_of_dates_times_and_versions_are_not_standalone() {
        assert_eq!(
            standalone_numbers(
                "2026-11-28 10:28:08,240 INFO [conn=2, chan=0] Sending exit status 3"
            ),
            vec!["2", "0", "3"]
        );
        assert!(standalone_numbers("version SSH-2.0-AsyncSSH_2.24.1 from 127.0.0.1").is_empty());
        assert_eq!(standalone_numbers("retried (4) times."), vec!["4"]);
    }

    #[test]
    fn the_line_whose_number_is_odd_among_its_message_s_ranks_first() {
        use crate::methods::extract::Hints;
        use crate::methods::extract::kinds::log;
        use crate::methods::extract::query::Query;
        let mut text = String::new();
        for i in 0..20 {
            let status = if i == 13 { 3 } else { 0 };
            text.push_str(&format!(
                "2026-11-28 10:28:{:02},240 INFO asyncssh: [conn={i}, chan=0] Sending exit status {status}\n",
                i + 10
            ));
        }
        let doc = log::build(&text);
        let query = Query::from_hints(&Hints::new().with_query(
            "which connections ran a command that exited with a non-zero exit status?",
        ))
        .unwrap();
        let scores = super::super::score(&doc, Some(&query));
        let top = (0..scores.len())
            .max_by(|&a, &b| scores[a].total_cmp(&scores[b]))
            .unwrap();
        assert!(
            doc.text(top).ends_with("exit status 3"),
            "{}",
            doc.text(top)
        );
    }
}
