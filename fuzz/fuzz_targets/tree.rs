//! XML, YAML, RFC 822 stanzas and aligned tables read as trees, and TOML lock files read by
//! sections: any text after a start that makes a list of records, so that the lenient readers
//! see arbitrary input where it matters; never a panic, never more than the budget.
#![no_main]

use condense::TokenCounter;
use condense::methods::extract::{Hints, extract_with_stats};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first byte chooses the format and the budget; the rest follows five records.
    let (choice, rest) = match data {
        [c, rest @ ..] => (*c, rest),
        _ => return,
    };
    let tail = String::from_utf8_lossy(rest);
    let mut text = String::new();
    match choice % 5 {
        0 => {
            text.push_str("items:\n");
            for i in 0..5 {
                text.push_str(&format!("- name: record-{i}\n  spec:\n    image: app:{i}\n"));
            }
        }
        1 => {
            text.push_str("<?xml version=\"1.0\"?>\n<suite>\n");
            for i in 0..5 {
                text.push_str(&format!("<case name=\"case{i}\"><time>0.{i}</time></case>\n"));
            }
        }
        2 => {
            for i in 0..5 {
                text.push_str(&format!(
                    "Package: record-{i}\nVersion: 1.{i}\nDescription: case{i}\n more\n\n"
                ));
            }
        }
        3 => {
            text.push_str("NAME        IMAGE     TIME\n");
            for i in 0..5 {
                text.push_str(&format!("record-{i}    app:{i}     0.{i}s\n"));
            }
        }
        _ => {
            for i in 0..5 {
                text.push_str(&format!(
                    "[[package]]\nname = \"record-{i}\"\nimage = {{ tag = \"app:{i}\" }}\n\n"
                ));
            }
        }
    }
    text.push_str(&tail);
    let budget = usize::from(choice / 5) * 8 + 1;
    let counter = TokenCounter::default();
    let hints = Hints::new().with_query("record-3 image case4 time");
    let out = extract_with_stats(&text, &hints, budget, &counter);
    assert!(counter.count(&out.text) <= budget, "over budget");
});
