//! Tool-name globs: any pattern against any name, never a panic; libFuzzer's timeout catches
//! backtracking that blows up.
#![no_main]

use condense::config::glob_matches;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // A NUL separates the pattern from the name; without one, the text is matched to itself.
    let (pattern, name) = text.split_once('\0').unwrap_or((&text, &text));
    let _ = glob_matches(pattern, name);
    // Every character escaped is a literal pattern: it matches exactly the name itself.
    let literal: String = name.chars().flat_map(|c| ['\\', c]).collect();
    assert!(
        glob_matches(&literal, name),
        "an escaped name does not match itself"
    );
    if !name.is_empty() {
        assert!(glob_matches("*", name) && glob_matches(&"?".repeat(name.chars().count()), name));
    }
});
