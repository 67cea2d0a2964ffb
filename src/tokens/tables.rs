//! A vocabulary's counting tables, read in place from the bytes build.rs wrote into the binary
//! (layout in src/tokens/layout.rs).
//!
//! Nothing is decoded, copied or built when a vocabulary is first used: a lookup reads the
//! table where it lies, and the operating system maps in the pages that counting touches. That
//! is why a cold process can count without first spending milliseconds building hash maps and
//! automata (docs/benchmarks.md, "Cold start").

use super::layout::{self, HEADER_WORDS, NONE, PAIR_WORDS, STATE_WORDS};

/// The automaton's root state, and the state a failure link marks as dead.
const ROOT_STATE: u32 = 0;
const DEAD_STATE: u32 = 1;

/// Little-endian `u32`s, read in place.
#[derive(Clone, Copy)]
struct Words<'a>(&'a [u8]);

impl Words<'_> {
    #[inline(always)]
    fn get(self, index: usize) -> u32 {
        let at = index * 4;
        u32::from_le_bytes(
            self.0[at..at + 4]
                .try_into()
                .expect("a four-byte slice is four bytes"),
        )
    }
}

/// The tables of one vocabulary.
pub(super) struct Tables<'a> {
    token_lens: &'a [u8],
    next_prefix: Words<'a>,
    splits: Words<'a>,
    pairs: Words<'a>,
    pair_bits: u32,
    states: Words<'a>,
    outputs: Words<'a>,
}

impl<'a> Tables<'a> {
    /// The tables in `bytes`, which build.rs wrote for this very layout. Checks the header and
    /// the sizes, so a lookup can never read past a table.
    ///
    /// # Panics
    ///
    /// When `bytes` are not such tables: a build defect, not an input error.
    pub(super) fn new(bytes: &'a [u8]) -> Self {
        let header = Words(bytes);
        assert!(
            bytes.len() >= HEADER_WORDS * 4 && header.get(0) == layout::MAGIC,
            "build.rs wrote counting tables of another layout"
        );
        let [tokens, states, outputs, pair_bits] = [1, 2, 3, 4].map(|i| header.get(i) as usize);
        let mut rest = &bytes[HEADER_WORDS * 4..];
        let mut take = |len: usize| {
            let (head, tail) = rest.split_at(len);
            rest = &tail[layout::padding(len)..];
            head
        };
        let tables = Tables {
            token_lens: take(tokens),
            next_prefix: Words(take(tokens * 4)),
            splits: Words(take(tokens * 8)),
            pairs: Words(take((1 << pair_bits) * PAIR_WORDS * 4)),
            pair_bits: pair_bits as u32,
            states: Words(take(states * STATE_WORDS * 4)),
            outputs: Words(take(outputs * 4)),
        };
        assert!(rest.is_empty(), "build.rs wrote longer counting tables");
        tables
    }

    /// The number of bytes `token` stands for.
    #[inline(always)]
    pub(super) fn token_len(&self, token: u32) -> usize {
        usize::from(self.token_lens[token as usize])
    }

    /// The token of the longest proper prefix of `token`'s bytes, if any.
    #[inline(always)]
    pub(super) fn next_prefix(&self, token: u32) -> Option<u32> {
        let prefix = self.next_prefix.get(token as usize);
        (prefix != NONE).then_some(prefix)
    }

    /// The token the pair merges into, if BPE merges it.
    #[inline(always)]
    fn merged(&self, left: u32, right: u32) -> Option<u32> {
        let mask = (1usize << self.pair_bits) - 1;
        let mut slot = layout::pair_slot(left, right, self.pair_bits);
        loop {
            let at = slot * PAIR_WORDS;
            let slot_left = self.pairs.get(at);
            if slot_left == NONE {
                return None;
            }
            if slot_left == left && self.pairs.get(at + 1) == right {
                return Some(self.pairs.get(at + 2));
            }
            slot = (slot + 1) & mask;
        }
    }

    /// Whether BPE, run on the bytes of `left` followed by those of `right`, could end with
    /// exactly these two tokens: no merge across their boundary comes before the merges that
    /// made them. (The check of `bpe`'s backtracking encoder.)
    #[inline]
    pub(super) fn is_valid_pair(&self, mut left: u32, mut right: u32) -> bool {
        // The largest token that may still be chosen across the boundary.
        let mut limit = u32::MAX;
        loop {
            if self
                .merged(left, right)
                .is_some_and(|merged| merged < limit)
            {
                return false;
            }
            // Undo the later of the two merges.
            if left > right {
                limit = left;
                left = self.splits.get(left as usize * 2 + 1);
                if left == limit {
                    limit = right + 1;
                    right = self.splits.get(right as usize * 2);
                    if right + 1 == limit {
                        return true;
                    }
                }
            } else {
                limit = right + 1;
                right = self.splits.get(right as usize * 2);
                if right + 1 == limit {
                    limit = left;
                    left = self.splits.get(left as usize * 2 + 1);
                    if left == limit {
                        return true;
                    }
                }
            }
        }
    }

    /// The longest token that `text` starts with (every byte is a token, so there is one
    /// unless `text` is empty): the first leftmost-longest match of the automaton.
    #[inline]
    pub(super) fn longest_prefix_token(&self, text: &[u8]) -> Option<u32> {
        let mut state = ROOT_STATE;
        let mut found = None;
        for &byte in text {
            state = self.next_state(state, byte);
            if state == ROOT_STATE {
                if found.is_some() {
                    break;
                }
            } else if let Some(output) = self.output(state) {
                found = Some(output);
            }
        }
        found.map(|output| self.outputs.get(output))
    }

    /// The state after `byte`, following failure links (leftmost semantics: a dead link
    /// returns to the root).
    #[inline(always)]
    fn next_state(&self, mut state: u32, byte: u8) -> u32 {
        loop {
            if let Some(child) = self.child(state, byte) {
                return child;
            }
            if state == ROOT_STATE {
                return ROOT_STATE;
            }
            let fail = self.states.get(state as usize * STATE_WORDS + 1);
            if fail == DEAD_STATE {
                return ROOT_STATE;
            }
            state = fail;
        }
    }

    #[inline(always)]
    fn child(&self, state: u32, byte: u8) -> Option<u32> {
        let base = self.states.get(state as usize * STATE_WORDS);
        if base == 0 {
            return None;
        }
        let child = base ^ u32::from(byte);
        let check = self.states.get(child as usize * STATE_WORDS + 2) as u8;
        (check == byte).then_some(child)
    }

    /// The index of the output `state` reports, if it reports one.
    #[inline(always)]
    fn output(&self, state: u32) -> Option<usize> {
        let position = self.states.get(state as usize * STATE_WORDS + 2) >> 8;
        (position != 0).then(|| position as usize - 1)
    }
}
