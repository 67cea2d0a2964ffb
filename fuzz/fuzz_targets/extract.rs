//! Kind detection and extraction: any text, any budget, any query; never more than the budget.
#![no_main]

use condense::TokenCounter;
use condense::methods::extract::{Hints, extract_with_stats};
use libfuzzer_sys::fuzz_target;

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    let end = (0..=text.len().min(max))
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    &text[..end]
}

fuzz_target!(|data: &[u8]| {
    // The first two bytes choose the budget and the query; the rest is the tool output.
    let (budget, query, text) = match data {
        [b, q, rest @ ..] => (usize::from(*b) * 4 + 1, *q, rest),
        _ => return,
    };
    let text = String::from_utf8_lossy(text);
    let counter = TokenCounter::default();
    let hints = match query % 3 {
        0 => Hints::new(),
        1 => Hints::new().with_query("error id 42 \"failed\""),
        _ => Hints::new().with_query(prefix(&text, 40)),
    };
    let out = extract_with_stats(&text, &hints, budget, &counter);
    assert!(counter.count(&out.text) <= budget, "over budget");
});
