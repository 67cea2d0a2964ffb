//! Writes, for each encoding condense counts with, the part of `bpe-openai`'s vocabulary that
//! counting reads, so that a cold process loads a fraction of it (docs/benchmarks.md, "Cold
//! start").
//!
//! `bpe-openai` ships a `bpe::BytePairEncoding` serialized whole (15 MB for `cl100k_base`): the
//! token bytes, a token-by-hash map and three Aho-Corasick automata. Counting (the backtracking
//! encoder) reads only the token lengths, the leftmost-longest automaton, the prefix and split
//! tables and the pair map. This keeps those, replaces the token bytes and the hash map by empty
//! ones and the two overlapping automata (used only by other encoders) by a 256-token one, and
//! writes the result in the same format, so `bpe` deserializes it with its own code.

use std::path::PathBuf;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::HashMap;

/// Field for field the serialized form of `bpe::byte_pair_encoding::BytePairEncoding` 0.2
/// (a MessagePack array in declaration order).
#[derive(Serialize, Deserialize)]
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

impl Serialize for Blob {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(&self.0)
    }
}

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
        let bytes = rmp_serde::to_vec(&counting).expect("a vocabulary serializes");
        std::fs::write(out.join(format!("{name}.counting")), bytes).expect("OUT_DIR is writable");
    }
}
