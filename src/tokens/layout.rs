//! The layout of a vocabulary's counting tables, shared by build.rs (which writes them) and the
//! library (which reads them in place from the binary, without copying or building anything).
//!
//! All integers are little-endian. After a header of [`HEADER_WORDS`] `u32`s (the magic, the
//! number of tokens, automaton states and outputs, and the pair table's size as a power of two)
//! come, each starting on a multiple of four bytes:
//!
//! - token lengths: one byte per token (no token is longer than 128 bytes);
//! - next prefix: per token, the token of the longest proper prefix of its bytes, or
//!   [`NONE`];
//! - splits: per token, the two tokens it was merged from (a byte's are itself twice);
//! - pairs: an open-addressing table of merges, three words per slot (left, right, merged),
//!   an empty slot's left being [`NONE`], found from [`pair_slot`] by linear probing;
//! - states: the leftmost-longest Aho-Corasick automaton over every token, three words per
//!   state (double-array base, failure link, output position << 8 | check byte), as
//!   `daachorse` builds it;
//! - outputs: per automaton output, the token it reports.

/// The first word of a table file: "CDV1".
pub(crate) const MAGIC: u32 = u32::from_le_bytes(*b"CDV1");

/// Words in the header.
pub(crate) const HEADER_WORDS: usize = 5;

/// "No token": an empty pair slot, or a token with no shorter prefix token.
pub(crate) const NONE: u32 = u32::MAX;

/// Words per pair slot and per automaton state.
pub(crate) const PAIR_WORDS: usize = 3;
/// Words per automaton state.
pub(crate) const STATE_WORDS: usize = 3;

/// The slot where the search for the merge of `left` and `right` starts, in a table of
/// `2^bits` slots (a Fibonacci hash of the pair).
pub(crate) fn pair_slot(left: u32, right: u32, bits: u32) -> usize {
    let key = (u64::from(left) << 32) | u64::from(right);
    (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// Bytes of padding that bring `len` to a multiple of four.
pub(crate) fn padding(len: usize) -> usize {
    (4 - len % 4) % 4
}
