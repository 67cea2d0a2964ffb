//! The last rung: token-exact head and tail, with a marker saying what was cut.

use crate::tokens::TokenCounter;

/// Keeps the head and tail of `text` within `budget` tokens by `counter`, cut on line
/// boundaries where one is near (else on a character boundary), with a marker between them
/// naming how many lines and bytes were cut and the `reference` to retrieve them.
///
/// Returns the text unchanged when it fits. Never returns more than `budget` tokens.
///
/// ```
/// use condense::methods::truncate::truncate;
/// use condense::TokenCounter;
///
/// let counter = TokenCounter::default();
/// let text: String = (1..=2000).map(|i| format!("line {i}\n")).collect();
/// let cut = truncate(&text, 100, &counter, Some("cx_0123456789abcdef"));
/// assert!(counter.count(&cut) <= 100);
/// assert!(cut.starts_with("line 1\n") && cut.ends_with("line 2000\n"));
/// assert!(cut.contains("cx_0123456789abcdef"));
/// ```
pub fn truncate(
    text: &str,
    budget: usize,
    counter: &TokenCounter,
    reference: Option<&str>,
) -> String {
    if !counter.exceeds(text, budget) {
        return text.to_owned();
    }
    // The marker's size depends on the numbers in it; reserve for the largest they can be.
    let worst = marker(text.lines().count(), text.len(), reference);
    let reserve = counter.count(&worst) + 2;
    if reserve >= budget {
        return counter.prefix_within(text, budget).to_owned();
    }
    let room = budget - reserve;
    let head_budget = room * 2 / 3;
    let tail_budget = room - head_budget;
    let head = snap_head_to_line(counter.prefix_within(text, head_budget));
    let rest = &text[head.len()..];
    let tail = snap_tail_to_line(counter.suffix_within(rest, tail_budget));
    let cut = &rest[..rest.len() - tail.len()];
    let mut out = String::with_capacity(head.len() + tail.len() + worst.len() + 2);
    out.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&marker(count_lines(cut), cut.len(), reference));
    out.push('\n');
    out.push_str(tail);
    // Joining pieces can merge tokens differently at the seams; make sure.
    if counter.exceeds(&out, budget) {
        return counter.prefix_within(&out, budget).to_owned();
    }
    out
}

fn marker(lines: usize, bytes: usize, reference: Option<&str>) -> String {
    match reference {
        Some(reference) => format!(
            "[… {} lines ({} bytes) cut; the original is kept as {reference} …]",
            group(lines),
            group(bytes)
        ),
        None => format!("[… {} lines ({} bytes) cut …]", group(lines), group(bytes)),
    }
}

fn count_lines(text: &str) -> usize {
    if text.is_empty() {
        0
    } else {
        text.lines().count()
    }
}

/// Drops a partial last line when a line boundary is in the last fifth of the head.
fn snap_head_to_line(head: &str) -> &str {
    match head.rfind('\n') {
        Some(i) if i + 1 >= head.len() * 4 / 5 => &head[..i + 1],
        _ => head,
    }
}

/// Drops a partial first line when a line boundary is in the first fifth of the tail.
fn snap_tail_to_line(tail: &str) -> &str {
    match tail.find('\n') {
        Some(i) if i < tail.len() / 5 && i + 1 < tail.len() => &tail[i + 1..],
        _ => tail,
    }
}

/// `1234567` → `1,234,567`.
pub(crate) fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_unchanged() {
        let counter = TokenCounter::default();
        assert_eq!(truncate("short", 10, &counter, None), "short");
    }

    #[test]
    fn keeps_head_and_tail_within_budget() {
        let counter = TokenCounter::default();
        let text: String = (0..5000)
            .map(|i| format!("{i} the quick brown fox\n"))
            .collect();
        for budget in [50, 120, 1000] {
            let out = truncate(&text, budget, &counter, Some("cx_00"));
            assert!(counter.count(&out) <= budget, "{budget}");
            assert!(out.starts_with("0 the quick"));
            assert!(out.ends_with("4999 the quick brown fox\n"));
            assert!(out.contains("lines ("));
        }
    }

    #[test]
    fn tiny_budgets_still_fit() {
        let counter = TokenCounter::default();
        let text = "x y z ".repeat(1000);
        for budget in [1, 5, 20] {
            assert!(counter.count(&truncate(&text, budget, &counter, Some("cx_1"))) <= budget);
        }
    }

    #[test]
    fn groups_thousands() {
        assert_eq!(group(0), "0");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(group(1234567), "1,234,567");
    }
}
