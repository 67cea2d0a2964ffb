//! The two vocabularies, loaded with only what counting reads.
//!
//! build.rs writes, from `bpe-openai`'s serialized vocabularies, copies that keep the token
//! lengths, the leftmost-longest automaton and the merge tables and leave out the token bytes, a
//! hash map and two automata that only other encoders use, in a compact form read at memory speed
//! (src/tokens/compact.rs): loading one is a fraction of the work of `bpe_openai::cl100k_base()` (docs/benchmarks.md, "Cold start"). The tokenizers built
//! here count, split and encode with the backtracking encoder exactly as `bpe-openai`'s do (the
//! tests compare both with tiktoken-rs); decoding token ids back to bytes is not possible with
//! them, and condense never does.
//!
//! The pre-tokenizer patterns are `bpe-openai` 0.3's (MIT licence, github/rust-gems), which
//! rewrite tiktoken's negative look-ahead as a second pattern whose last character is dropped.

use std::sync::LazyLock;

use bpe_openai::Tokenizer;
use bpe_openai::byte_pair_encoding::BytePairEncoding;
use serde::Deserialize;

use super::compact::Reader;

static CL100K_BASE: LazyLock<Tokenizer> = LazyLock::new(|| {
    let patterns = [
        (
            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$",
            false,
        ),
        ("\\s+\\s", true),
        ("\\s+", false),
    ];
    load(
        include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.counting")),
        &patterns,
    )
});

static O200K_BASE: LazyLock<Tokenizer> = LazyLock::new(|| {
    let first = [
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
        "\\p{N}{1,3}",
        " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
        "\\s*[\\r\\n]+",
        "\\s+$",
    ]
    .join("|");
    let patterns = [(first.as_str(), false), ("\\s+\\s", true), ("\\s+", false)];
    load(
        include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.counting")),
        &patterns,
    )
});

/// `cl100k_base`, built on first use.
pub(super) fn cl100k_base() -> &'static Tokenizer {
    &CL100K_BASE
}

/// `o200k_base`, built on first use.
pub(super) fn o200k_base() -> &'static Tokenizer {
    &O200K_BASE
}

/// A tokenizer from a vocabulary in the compact form and the pre-tokenizer `patterns`.
///
/// Both are built into the binary by build.rs from the same crate versions that read them, so
/// neither can fail on any input; a failure is a build defect.
fn load(vocabulary: &[u8], patterns: &[(&str, bool)]) -> Tokenizer {
    let mut reader = Reader::new(vocabulary);
    let bpe =
        BytePairEncoding::deserialize(&mut reader).expect("build.rs wrote a valid vocabulary");
    assert!(reader.is_done(), "build.rs wrote a longer vocabulary");
    // Neither encoding normalizes its input (NFC is off), as in `bpe-openai`.
    Tokenizer::new_lookahead(bpe, patterns, false).expect("the pre-tokenizer patterns compile")
}
