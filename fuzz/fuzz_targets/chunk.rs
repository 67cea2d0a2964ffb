//! The chunker, semantic and token, for JSON, markdown and plain text: every chunk fits.
#![no_main]

use condense::TokenCounter;
use condense::methods::chunk::{ChunkOptions, ChunkStrategy, ContentKind, MIN_CHUNK_TOKENS, chunk, detect_kind};
use libfuzzer_sys::fuzz_target;

const MAX_INPUT: usize = 4096;

fuzz_target!(|data: &[u8]| {
    let (size, text) = match data {
        [s, rest @ ..] => (usize::from(*s) + 20, rest),
        _ => return,
    };
    // Eight chunkings per input: past a few KiB an input costs seconds without reaching code
    // that a shorter one does not.
    let text = &text[..text.len().min(MAX_INPUT)];
    let text = String::from_utf8_lossy(text);
    let counter = TokenCounter::default();
    for strategy in [ChunkStrategy::Semantic, ChunkStrategy::Token] {
        let options = ChunkOptions::default()
            .with_chunk_tokens(size)
            .with_overlap_tokens(size / 8)
            .with_strategy(strategy);
        for kind in [
            detect_kind(&text),
            ContentKind::Json,
            ContentKind::Markdown,
            ContentKind::Text,
        ] {
            // Sizes below the documented floor are raised to it.
            let limit = size.max(MIN_CHUNK_TOKENS);
            for piece in chunk(&text, kind, &options, &counter) {
                assert!(counter.count(&piece.text()) <= limit, "chunk over its size");
            }
        }
    }
});
