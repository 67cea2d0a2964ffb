//! Writes, for each encoding condense counts with, the part of `bpe-openai`'s vocabulary that
//! counting reads, so that a cold process loads a fraction of it (docs/benchmarks.md, "Cold
//! start").
//!
//! `bpe-openai` ships a `bpe::BytePairEncoding` serialized whole (15 MB for `cl100k_base`): the
//! token bytes, a token-by-hash map and three Aho-Corasick automata. Counting (the backtracking
//! encoder) reads only the token lengths, the leftmost-longest automaton, the prefix and split
//! tables and the pair map. This keeps those, replaces the token bytes and the hash map by empty
//! ones and the two overlapping automata (used only by other encoders) by a 256-token one, and
//! writes the result in the compact form src/tokens/compact.rs reads (fixed-width integers
//! instead of MessagePack), so `bpe` deserializes it with its own derived code.

use std::path::PathBuf;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use serde::{Deserialize, Deserializer};
use std::collections::HashMap;

/// Field for field the serialized form of `bpe::byte_pair_encoding::BytePairEncoding` 0.2
/// (a MessagePack array in declaration order).
#[derive(Deserialize)]
struct Encoding {
    all_tokens: Vec<u8>,
    token_starts: Vec<u32>,
    bytes_hash_to_token: HashMap<u32, u32>,
    split_table: Vec<(u32, u32)>,
    pair_lookup: HashMap<(u32, u32), u32>,
    longest_searcher: Blob,
    overlapping_searcher: Blob,
    overlapping_searcher_rev: Blob,
    next_prefix_match: Vec<u32>,
    hash_factor: u64,
}

/// A serialized automaton, kept as its bytes.
struct Blob(Vec<u8>);

impl<'de> Deserialize<'de> for Blob {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Bytes;
        impl serde::de::Visitor<'_> for Bytes {
            type Value = Blob;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("bytes")
            }
            fn visit_bytes<E>(self, v: &[u8]) -> Result<Blob, E> {
                Ok(Blob(v.to_vec()))
            }
        }
        d.deserialize_bytes(Bytes)
    }
}

fn decode(bpe: &BytePairEncoding) -> Encoding {
    let bytes = rmp_serde::to_vec(bpe).expect("a vocabulary serializes");
    rmp_serde::from_slice(&bytes).expect("bpe 0.2's serialized layout")
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    // The smallest valid automata: those of a vocabulary of the 256 single bytes.
    let bytes = BytePairEncoding::from_dictionary((0..=255u8).map(|b| vec![b]), None);
    let small = decode(&bytes);
    for (name, tokenizer) in [
        ("cl100k_base", bpe_openai::cl100k_base()),
        ("o200k_base", bpe_openai::o200k_base()),
    ] {
        let full = decode(&tokenizer.bpe);
        let counting = Encoding {
            all_tokens: Vec::new(),
            bytes_hash_to_token: HashMap::new(),
            overlapping_searcher: Blob(small.overlapping_searcher.0.clone()),
            overlapping_searcher_rev: Blob(small.overlapping_searcher_rev.0.clone()),
            ..full
        };
        std::fs::write(out.join(format!("{name}.counting")), compact(&counting))
            .expect("OUT_DIR is writable");
    }
}

/// `encoding` in the form src/tokens/compact.rs reads: fields in order, counts and integers as
/// little-endian `u32` (the hash factor `u64`), single bytes as themselves.
fn compact(encoding: &Encoding) -> Vec<u8> {
    fn count(out: &mut Vec<u8>, n: usize) {
        let n = u32::try_from(n).expect("a vocabulary's tables have fewer than 2^32 items");
        out.extend(n.to_le_bytes());
    }
    fn numbers(out: &mut Vec<u8>, values: impl ExactSizeIterator<Item = u32>) {
        count(out, values.len());
        values.for_each(|v| out.extend(v.to_le_bytes()));
    }
    let mut out = Vec::new();
    count(&mut out, encoding.all_tokens.len());
    out.extend(&encoding.all_tokens);
    numbers(&mut out, encoding.token_starts.iter().copied());
    count(&mut out, encoding.bytes_hash_to_token.len());
    for (hash, token) in &encoding.bytes_hash_to_token {
        out.extend(hash.to_le_bytes());
        out.extend(token.to_le_bytes());
    }
    count(&mut out, encoding.split_table.len());
    for (left, right) in &encoding.split_table {
        out.extend(left.to_le_bytes());
        out.extend(right.to_le_bytes());
    }
    // Sorted, so the file is the same on every build.
    let mut pairs: Vec<_> = encoding.pair_lookup.iter().collect();
    pairs.sort_unstable();
    count(&mut out, pairs.len());
    for ((left, right), merged) in pairs {
        out.extend(left.to_le_bytes());
        out.extend(right.to_le_bytes());
        out.extend(merged.to_le_bytes());
    }
    for automaton in [
        &encoding.longest_searcher,
        &encoding.overlapping_searcher,
        &encoding.overlapping_searcher_rev,
    ] {
        count(&mut out, automaton.0.len());
        out.extend(&automaton.0);
    }
    numbers(&mut out, encoding.next_prefix_match.iter().copied());
    out.extend(encoding.hash_factor.to_le_bytes());
    out
}
