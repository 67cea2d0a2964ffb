//! The two vocabularies: their counting tables, in place in the binary, and their
//! pre-tokenizers.
//!
//! build.rs writes, from `bpe-openai`'s vocabularies, the tables the backtracking encoder reads
//! (src/tokens/layout.rs), and the library reads them where they lie (src/tokens/tables.rs):
//! the first count builds only the pre-tokenizer's regular expression. The encoder gives the
//! tokens of `bpe-openai`'s, which are tiktoken's (the tests compare the counts with
//! tiktoken-rs); decoding token ids back to bytes is not possible with these tables, and
//! condense never decodes.
//!
//! The pre-tokenizer patterns are `bpe-openai` 0.3's (MIT licence, github/rust-gems), which
//! rewrite tiktoken's negative look-ahead as a second pattern whose last character is dropped.

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{LazyLock, OnceLock};

use regex_automata::meta::{Cache, Regex};
use regex_automata::{Anchored, Input};

use super::ascii::{self, AsciiPieces};
use super::backtrack;
use super::tables::Tables;

/// A vocabulary's tables and pre-tokenizer.
pub(super) struct Tokenizer {
    tables: Tables<'static>,
    /// The patterns, compiled on first use: text the ASCII cut decides never needs them.
    patterns: Vec<String>,
    pieces: OnceLock<Regex>,
    /// Per pattern, whether its match ends with one look-ahead character to give back.
    lookahead: Vec<bool>,
    /// Which of each thread's search caches is this tokenizer's (each tokenizer has its own).
    cache_slot: usize,
    /// Pieces of ASCII text found without the expression (src/tokens/ascii.rs), when the
    /// patterns are `cl100k_base`'s.
    ascii_pieces: Option<AsciiPieces>,
}

thread_local! {
    /// Each thread's search state for each pre-tokenizer. The expression's own pool hands a
    /// cache to one thread cheaply and to every other through a lock, once per piece: the
    /// counts made beside the compressor spent a tenth of their time there.
    static SEARCH_CACHES: RefCell<Vec<Option<Cache>>> = const { RefCell::new(Vec::new()) };
}

/// `cl100k_base`'s pre-tokenizer patterns, each with whether it ends in a look-ahead character.
const CL100K_PATTERNS: [(&str, bool); 3] = [
    (
        "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+$",
        false,
    ),
    ("\\s+\\s", true),
    ("\\s+", false),
];

static CL100K_BASE: LazyLock<Tokenizer> = LazyLock::new(|| {
    Tokenizer::new(
        include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.tables")),
        &CL100K_PATTERNS,
    )
    .with_ascii_pieces(ascii::cl100k_piece)
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
    Tokenizer::new(
        include_bytes!(concat!(env!("OUT_DIR"), "/o200k_base.tables")),
        &patterns,
    )
});

/// `cl100k_base`, its pre-tokenizer built on first use.
pub(super) fn cl100k_base() -> &'static Tokenizer {
    &CL100K_BASE
}

/// `o200k_base`, its pre-tokenizer built on first use.
pub(super) fn o200k_base() -> &'static Tokenizer {
    &O200K_BASE
}

impl Tokenizer {
    /// Both arguments are built into the binary from the same crate versions, so neither can
    /// fail on any input; a failure is a build defect.
    fn new(tables: &'static [u8], patterns: &[(&str, bool)]) -> Self {
        static TOKENIZERS: AtomicUsize = AtomicUsize::new(0);
        let (patterns, lookahead) = patterns
            .iter()
            .map(|&(pattern, lookahead)| (pattern.to_owned(), lookahead))
            .unzip();
        Tokenizer {
            cache_slot: TOKENIZERS.fetch_add(1, Ordering::Relaxed),
            tables: Tables::new(tables),
            patterns,
            pieces: OnceLock::new(),
            lookahead,
            ascii_pieces: None,
        }
    }

    fn with_ascii_pieces(self, pieces: AsciiPieces) -> Self {
        Tokenizer {
            ascii_pieces: Some(pieces),
            ..self
        }
    }

    /// The pre-tokenizer's expression, compiled on first use (about a millisecond).
    fn expression(&self) -> &Regex {
        self.pieces.get_or_init(|| {
            Regex::new_many(&self.patterns).expect("the pre-tokenizer patterns compile")
        })
    }

    /// Compiles the expression now, if no count has yet.
    pub(super) fn prepare(&self) {
        let _ = self.expression();
    }

    /// Whether cutting `text` into pieces needs the expression: not for ASCII text when the
    /// ASCII cut serves these patterns.
    pub(super) fn needs_expression(&self, text: &str) -> bool {
        self.ascii_pieces.is_none() || !text.is_ascii()
    }

    /// The pre-tokenizer's match at the start of `input`, searched with this thread's cache.
    fn find_piece(&self, input: &Input<'_>) -> Option<regex_automata::Match> {
        SEARCH_CACHES.with(|caches| match caches.try_borrow_mut() {
            Ok(mut caches) => {
                if caches.len() <= self.cache_slot {
                    caches.resize_with(self.cache_slot + 1, || None);
                }
                let cache =
                    caches[self.cache_slot].get_or_insert_with(|| self.expression().create_cache());
                self.expression().search_with(cache, input)
            }
            Err(_) => self.expression().search(input),
        })
    }

    /// The pre-tokenizer pieces of `text`, in order; BPE merges never cross them.
    pub(super) fn split<'a>(&'a self, text: &'a str) -> Pieces<'a> {
        Pieces {
            tokenizer: self,
            text,
            at: 0,
            ascii_end: 0,
        }
    }

    /// The number of tokens of one piece.
    pub(super) fn count_piece(&self, piece: &str) -> usize {
        backtrack::count(&self.tables, piece.as_bytes())
    }

    /// The number of tokens of `text`, piece by piece.
    pub(super) fn count(&self, text: &str) -> usize {
        self.split(text).map(|piece| self.count_piece(piece)).sum()
    }

    /// The number of tokens of `text` when it is at most `limit`, stopping at the first piece
    /// that passes it.
    pub(super) fn count_till_limit(&self, text: &str, limit: usize) -> Option<usize> {
        self.split(text).try_fold(0, |counted: usize, piece| {
            backtrack::count_up_to(&self.tables, piece.as_bytes(), limit - counted)
                .map(|tokens| counted + tokens)
        })
    }

    /// Appends the byte length of each token of one piece to `lengths`.
    pub(super) fn token_lengths(&self, piece: &str, lengths: &mut Vec<usize>) {
        backtrack::token_lengths(&self.tables, piece.as_bytes(), lengths);
    }
}

/// The pieces of a text, as `bpe-openai`'s pre-tokenizer cuts them: each the anchored match of
/// the patterns at the end of the previous one, less its look-ahead character if the pattern
/// that matched has one.
pub(super) struct Pieces<'a> {
    tokenizer: &'a Tokenizer,
    text: &'a str,
    at: usize,
    /// Where the ASCII bytes from `at` end: the next non-ASCII byte or the end of the text
    /// (found again only once `at` passes it, so finding it is linear in the text).
    ascii_end: usize,
}

impl<'a> Pieces<'a> {
    /// The piece at `at` found on ASCII bytes alone, when that decides it.
    fn ascii_piece(&mut self, pieces: AsciiPieces) -> Option<&'a str> {
        let bytes = self.text.as_bytes();
        if self.at >= self.ascii_end {
            self.ascii_end = bytes[self.at..]
                .iter()
                .position(|b| !b.is_ascii())
                .map_or(bytes.len(), |offset| self.at + offset);
        }
        let ascii = &bytes[self.at..self.ascii_end];
        let len = pieces(ascii, self.ascii_end == bytes.len())?;
        let start = self.at;
        self.at += len;
        // ASCII bytes are characters: the cut is on a character boundary.
        Some(&self.text[start..self.at])
    }
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if let Some(pieces) = self.tokenizer.ascii_pieces
            && let Some(piece) = self.ascii_piece(pieces)
        {
            return Some(piece);
        }
        let input = Input::new(&self.text[self.at..]).anchored(Anchored::Yes);
        let found = self.tokenizer.find_piece(&input)?;
        let start = self.at;
        let mut end = start + found.range().end;
        if self.tokenizer.lookahead[found.pattern().as_usize()] {
            let last = self.text[start..end]
                .chars()
                .next_back()
                .expect("a look-ahead pattern matches at least one character");
            end -= last.len_utf8();
            assert_ne!(
                end, start,
                "a look-ahead pattern consumes a character besides its look-ahead"
            );
        }
        self.at = end;
        Some(&self.text[start..end])
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// `cl100k_base`'s pieces as the expression alone cuts them.
    fn pieces_by_expression(text: &str) -> Vec<&str> {
        static EXPRESSION_ONLY: LazyLock<Tokenizer> = LazyLock::new(|| {
            Tokenizer::new(
                include_bytes!(concat!(env!("OUT_DIR"), "/cl100k_base.tables")),
                &CL100K_PATTERNS,
            )
        });
        EXPRESSION_ONLY.split(text).collect()
    }

    /// Text of the characters where the ASCII cut could go wrong: apostrophe suffixes in both
    /// cases, every kind of ASCII white space and line break, digits, punctuation and control
    /// characters, and the non-ASCII letters, digits, spaces and case-folding characters that
    /// border them (`ſ` folds to `s`, U+0085 and U+00A0 are white space, `²` is a number).
    fn bordering_text() -> impl Strategy<Value = String> {
        let atoms = prop::sample::select(vec![
            "'", "s", "S", "t", "re", "RE", "ve", "m", "ll", "LL", "d", "'s", "'ll", "a", "Z",
            "word", "0", "12", "3456", " ", "  ", "\t", "\n", "\r", "\r\n", "\u{b}", "\u{c}", "!",
            "(", ")", ".", "-", "_", "/", "\u{0}", "\u{1b}", "\u{7f}", "ſ", "é", "ß", "\u{85}",
            "\u{a0}", "\u{2028}", "\u{3000}", "²", "½", "٣", "中", "😀", "\u{301}", "\u{212a}",
        ]);
        prop::collection::vec(atoms, 0..40).prop_map(|atoms| atoms.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn ascii_pieces_are_the_expressions_pieces(text in bordering_text()) {
            let fast: Vec<&str> = cl100k_base().split(&text).collect();
            prop_assert_eq!(fast, pieces_by_expression(&text));
        }
    }

    #[test]
    fn ascii_pieces_of_tool_output_are_the_expressions_pieces() {
        let text = "2026-11-24T10:00:01Z ERROR [svc-42] can't open '/var/log/x.log': \
                    No such file (os error 2)\r\n\n   \tat main.rs:17:5\n{\"id\": 12345678, \
                    \"ok\": false}   \n  It's   done... ";
        let fast: Vec<&str> = cl100k_base().split(text).collect();
        assert_eq!(fast, pieces_by_expression(text));
    }
}
