//! Writes, for each encoding condense counts with, the tables counting reads, in the layout the
//! library reads in place (src/tokens/layout.rs), so that a cold process builds nothing before
//! its first count (docs/benchmarks.md, "Cold start").
//!
//! `bpe-openai` ships a `bpe::BytePairEncoding` serialized whole (15 MB for `cl100k_base`): the
//! token bytes, a token-by-hash map, a pair map and three Aho-Corasick automata, all of which
//! must be decoded and rebuilt in memory before a count. Counting (the backtracking encoder)
//! reads only the token lengths, the leftmost-longest automaton, the prefix and split tables and
//! the pair map; this writes those as flat little-endian arrays, the pair map as an
//! open-addressing table.

use std::path::PathBuf;

// Shared with the library, which reads what this writes; the header size is the reader's.
#[allow(dead_code)]
#[path = "src/tokens/layout.rs"]
mod layout;

use bpe_openai::byte_pair_encoding::BytePairEncoding;
use serde::de::IgnoredAny;
use serde::{Deserialize, Deserializer};
use std::collections::HashMap;

/// Field for field the serialized form of `bpe::byte_pair_encoding::BytePairEncoding` 0.2
/// (a MessagePack array in declaration order).
#[derive(Deserialize)]
struct Encoding {
    _all_tokens: IgnoredAny,
    token_starts: Vec<u32>,
    _bytes_hash_to_token: IgnoredAny,
    split_table: Vec<(u32, u32)>,
    pair_lookup: HashMap<(u32, u32), u32>,
    longest_searcher: Blob,
    _overlapping_searcher: IgnoredAny,
    _overlapping_searcher_rev: IgnoredAny,
    next_prefix_match: Vec<u32>,
    _hash_factor: IgnoredAny,
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
    println!("cargo::rerun-if-changed=src/tokens/layout.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (name, tokenizer) in [
        ("cl100k_base", bpe_openai::cl100k_base()),
        ("o200k_base", bpe_openai::o200k_base()),
    ] {
        let encoding = decode(&tokenizer.bpe);
        std::fs::write(out.join(format!("{name}.tables")), tables(&encoding))
            .expect("OUT_DIR is writable");
    }
}

/// Little-endian `u32`s, appended.
fn words(out: &mut Vec<u8>, values: impl IntoIterator<Item = u32>) {
    values.into_iter().for_each(|v| out.extend(v.to_le_bytes()));
}

fn pad(out: &mut Vec<u8>) {
    out.resize(out.len() + layout::padding(out.len()), 0);
}

fn count(n: usize) -> u32 {
    u32::try_from(n).expect("a vocabulary's tables have fewer than 2^32 items")
}

/// `encoding`'s counting tables, in the layout of src/tokens/layout.rs.
fn tables(encoding: &Encoding) -> Vec<u8> {
    let tokens = encoding.token_starts.len() - 1;
    let automaton = Automaton::parse(&encoding.longest_searcher.0);
    // At most half full, so a search for a pair that is not there ends after a probe or two.
    let pair_bits = (encoding.pair_lookup.len() * 2)
        .next_power_of_two()
        .trailing_zeros();
    let mut pairs = vec![[layout::NONE; layout::PAIR_WORDS]; 1 << pair_bits];
    // Inserted in a fixed order, so the file is the same on every build.
    let mut sorted: Vec<_> = encoding.pair_lookup.iter().collect();
    sorted.sort_unstable();
    for (&(left, right), &merged) in sorted {
        let mut slot = layout::pair_slot(left, right, pair_bits);
        while pairs[slot][0] != layout::NONE {
            slot = (slot + 1) % pairs.len();
        }
        pairs[slot] = [left, right, merged];
    }

    let mut out = Vec::new();
    words(
        &mut out,
        [
            layout::MAGIC,
            count(tokens),
            count(automaton.states.len() / layout::STATE_WORDS),
            count(automaton.outputs.len()),
            pair_bits,
        ],
    );
    for token in 0..tokens {
        let len = encoding.token_starts[token + 1] - encoding.token_starts[token];
        out.push(u8::try_from(len).expect("no token is longer than 255 bytes"));
    }
    pad(&mut out);
    words(&mut out, encoding.next_prefix_match.iter().copied());
    words(
        &mut out,
        encoding
            .split_table
            .iter()
            .flat_map(|&(left, right)| [left, right]),
    );
    words(&mut out, pairs.into_iter().flatten());
    words(&mut out, automaton.states);
    words(&mut out, automaton.outputs);
    out
}

/// The parts of a serialized `daachorse` byte-wise automaton that a leftmost-longest search
/// reads: each state's base, failure link and packed output position and check byte, and each
/// output's value.
struct Automaton {
    states: Vec<u32>,
    outputs: Vec<u32>,
}

impl Automaton {
    /// Reads `daachorse` 1.x's serialization: the states (a `u32` count, then base, fail and
    /// output-position-and-check per state), the outputs (a `u32` count, then value, length and
    /// parent per output), the match kind (a byte) and the number of states (a `u32`).
    fn parse(bytes: &[u8]) -> Automaton {
        let mut rest = bytes;
        let mut word = || {
            let (head, tail) = rest.split_at(4);
            rest = tail;
            u32::from_le_bytes(head.try_into().expect("four bytes"))
        };
        let states = word() as usize;
        let states: Vec<u32> = (0..states * 3).map(|_| word()).collect();
        let outputs = word() as usize;
        let outputs: Vec<u32> = (0..outputs)
            .map(|_| {
                let [value, _length, _parent] = [word(), word(), word()];
                value
            })
            .collect();
        assert_eq!(rest.len(), 5, "daachorse's serialized automaton layout");
        Automaton { states, outputs }
    }
}
