//! Head-and-tail truncation: within budget, unchanged when it fits.
#![no_main]

use condense::TokenCounter;
use condense::methods::truncate::truncate;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (budget, text) = match data {
        [b, rest @ ..] => (usize::from(*b), rest),
        _ => return,
    };
    let text = String::from_utf8_lossy(text);
    let counter = TokenCounter::default();
    let cut = truncate(&text, budget, &counter, Some("cx_0123456789abcdef"));
    assert!(counter.count(&cut) <= budget, "over budget");
    if !counter.exceeds(&text, budget) {
        assert_eq!(cut, text, "a text that fits comes back unchanged");
    }
});
