//! A fast hasher for maps keyed by short texts: the query's words, a log's lines.

use std::hash::{BuildHasherDefault, Hasher};

/// The hasher of the query's word maps: every word of a document is looked up in them, and
/// SipHash's resistance to chosen keys buys nothing for a map of a few query words (a lookup
/// of a colliding text word only compares it with them).
pub(crate) type WordHash = BuildHasherDefault<WordHasher>;

/// A multiply-rotate hash over 8 bytes at a time (the scheme of rustc's `FxHasher`).
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WordHasher(u64);

impl WordHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for WordHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            self.add(u64::from_le_bytes(chunk.try_into().expect("8 bytes")));
        }
        let mut tail = [0u8; 8];
        let rest = chunks.remainder();
        tail[..rest.len()].copy_from_slice(rest);
        self.add(u64::from_le_bytes(tail) ^ rest.len() as u64);
    }

    fn write_u8(&mut self, byte: u8) {
        self.add(u64::from(byte));
    }

    fn finish(&self) -> u64 {
        // The table picks its buckets by the low bits and its tags by the high ones: the
        // rotation brings the product's best-mixed bits down.
        self.0.rotate_left(26)
    }
}
