//! The backtracking BPE encoder, over the in-place tables.
//!
//! The algorithm is that of `bpe` 0.2's `BacktrackEncoder` (MIT licence, github/rust-gems),
//! which gives exactly the tokens of tiktoken's `encode_ordinary` for one pre-tokenizer piece:
//! take the longest token the rest of the piece starts with; if it cannot follow the previous
//! token under BPE's merge order, try the next shorter prefix token; if none can, drop the
//! previous token and mark that position as a dead end. The tests compare the counts with
//! tiktoken-rs on every corpus file and on adversarial text.
//!
//! Unlike `bpe`'s, this encoder keeps its buffers between pieces (a piece is usually a word:
//! allocating per piece was a fifth of counting), and can stop once a piece holds more tokens
//! than a caller cares about.

use std::cell::RefCell;

use super::tables::Tables;

/// The encoder's buffers, reused for every piece a thread encodes.
#[derive(Default)]
struct Scratch {
    tokens: Vec<u32>,
    /// One bit per byte position of the piece (and its end): cleared once the position is
    /// known to start no valid encoding of the rest.
    open: Vec<u64>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::default();
}

impl Scratch {
    /// Encodes `piece` into `self.tokens`. Stops early, returning `false`, once more than
    /// `cap` tokens are held; `true` when the piece is encoded whole.
    fn encode(&mut self, tables: &Tables<'_>, piece: &[u8], cap: usize) -> bool {
        self.tokens.clear();
        self.open.clear();
        self.open.resize((piece.len() + 1).div_ceil(64), u64::MAX);
        let mut pos = 0;
        let mut next = tables.longest_prefix_token(piece);
        while let Some(mut token) = next {
            let last = self.tokens.last().copied();
            loop {
                let end = pos + tables.token_len(token);
                let open = self.open[end / 64] & (1 << (end % 64)) != 0;
                if open && last.is_none_or(|last| tables.is_valid_pair(last, token)) {
                    self.tokens.push(token);
                    pos = end;
                    next = tables.longest_prefix_token(&piece[end..]);
                    break;
                } else if let Some(shorter) = tables.next_prefix(token) {
                    token = shorter;
                } else {
                    // No token from here fits after `last`: this position is a dead end.
                    self.open[pos / 64] &= !(1 << (pos % 64));
                    self.tokens.pop();
                    pos -= last.map_or(0, |last| tables.token_len(last));
                    next = last;
                    break;
                }
            }
            if self.tokens.len() > cap {
                return false;
            }
        }
        true
    }
}

/// Runs `f` with this thread's scratch buffers. Counting never re-enters itself on a thread,
/// but should it, fresh buffers serve.
fn with_scratch<T>(f: impl FnOnce(&mut Scratch) -> T) -> T {
    SCRATCH.with(|scratch| match scratch.try_borrow_mut() {
        Ok(mut scratch) => f(&mut scratch),
        Err(_) => f(&mut Scratch::default()),
    })
}

/// The number of tokens of one pre-tokenizer piece.
pub(super) fn count(tables: &Tables<'_>, piece: &[u8]) -> usize {
    with_scratch(|scratch| {
        scratch.encode(tables, piece, usize::MAX);
        scratch.tokens.len()
    })
}

/// The number of tokens of one piece when it is at most `limit`.
pub(super) fn count_up_to(tables: &Tables<'_>, piece: &[u8], limit: usize) -> Option<usize> {
    with_scratch(|scratch| {
        // Backtracking may drop tokens again, so the count is only over the limit for sure
        // some way past it (`bpe` allows ten).
        let whole = scratch.encode(tables, piece, limit.saturating_add(10));
        let tokens = scratch.tokens.len();
        (whole && tokens <= limit).then_some(tokens)
    })
}

/// Appends to `lengths` the byte length of each token of one piece, in order.
pub(super) fn token_lengths(tables: &Tables<'_>, piece: &[u8], lengths: &mut Vec<usize>) {
    with_scratch(|scratch| {
        scratch.encode(tables, piece, usize::MAX);
        lengths.extend(scratch.tokens.iter().map(|&token| tables.token_len(token)));
    });
}
