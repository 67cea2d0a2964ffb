//! The token counter, both encodings: bounded counts agree with full ones, prefixes fit.
#![no_main]

use condense::{Encoding, TokenCounter};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (limit, text) = match data {
        [l, rest @ ..] => (usize::from(*l), rest),
        _ => return,
    };
    let text = String::from_utf8_lossy(text);
    for encoding in [Encoding::Cl100kBase, Encoding::O200kBase] {
        let counter = TokenCounter::new(encoding);
        let total = counter.count(&text);
        let bounded = counter.count_up_to(&text, limit);
        if let Some(n) = bounded {
            assert!(n <= limit, "bounded count over its limit");
        }
        // One chunk either way (see TokenCounter): the counts must agree exactly.
        if text.len() <= 1024 {
            assert_eq!(bounded, Some(total).filter(|&t| t <= limit));
        }
        let prefix = counter.prefix_within(&text, limit);
        assert!(text.starts_with(prefix));
        assert!(counter.count(prefix) <= limit, "prefix over the limit");
    }
});
