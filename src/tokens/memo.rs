//! Counts of short pre-tokenizer pieces, remembered per thread.
//!
//! Tool output repeats its words, numbers and punctuation runs: most pieces a text is split
//! into were counted before. Encoding a piece allocates and searches the vocabulary's
//! automaton; looking its count up costs one hash. The count stored is the encoder's own, so
//! the total is exactly the one counting every piece gives.

use std::cell::RefCell;
use std::collections::HashMap;

use xxhash_rust::xxh3::Xxh3DefaultBuilder;

use super::Encoding;
use super::vocab::Tokenizer;

/// Pieces up to this many bytes are remembered: the ones that repeat.
const MAX_PIECE_BYTES: usize = 24;

/// Entries per thread and encoding; the table starts over when it is full, which bounds its
/// memory (a few MB) on text whose pieces do not repeat.
const MAX_ENTRIES: usize = 1 << 16;

type Table = HashMap<Box<[u8]>, u32, Xxh3DefaultBuilder>;

thread_local! {
    static TABLES: RefCell<[Table; 2]> = RefCell::new(Default::default());
}

/// The token count of `text` by `tokenizer` (the one of `encoding`), piece by piece.
pub(super) fn count(encoding: Encoding, tokenizer: &Tokenizer, text: &str) -> usize {
    let slot = match encoding {
        Encoding::Cl100kBase => 0,
        Encoding::O200kBase => 1,
    };
    TABLES.with(|tables| {
        let Ok(mut tables) = tables.try_borrow_mut() else {
            // Only reachable if counting re-entered itself on this thread; count plainly.
            return tokenizer.count(text);
        };
        let table = &mut tables[slot];
        tokenizer
            .split(text)
            .map(|piece| {
                let bytes = piece.as_bytes();
                if bytes.len() > MAX_PIECE_BYTES {
                    return tokenizer.count_piece(piece);
                }
                if let Some(&known) = table.get(bytes) {
                    return known as usize;
                }
                let counted = tokenizer.count_piece(piece);
                if table.len() >= MAX_ENTRIES {
                    table.clear();
                }
                table.insert(bytes.into(), counted as u32);
                counted
            })
            .sum()
    })
}
