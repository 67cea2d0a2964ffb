//! Exact BPE token counts, with free byte-length bounds first.
//!
//! A byte-level BPE token covers at least 1 and at most [`MAX_TOKEN_BYTES`] bytes, so a text of
//! `len` bytes has between `len / 128` and `len` tokens. Most threshold decisions are settled by
//! those bounds alone, before any pre-tokenizer is compiled; the rest are counted only until the
//! running count passes the limit.
//!
//! The counter is `bpe-openai`'s algorithm (a backtracking BPE encoder) over `bpe-openai`'s
//! vocabularies: the same tokens as tiktoken's `encode_ordinary` for `cl100k_base` and
//! `o200k_base` (the tests compare both on the corpus and on adversarial text), several times
//! faster to count, and linear on inputs (megabyte runs of whitespace or of one letter) where
//! tiktoken's regex gives up or its merges go quadratic. Its tables are read in place from the
//! binary, so the first count builds nothing but the pre-tokenizer. docs/benchmarks.md has the
//! numbers.
//!
//! ```
//! use condense::{Encoding, TokenCounter};
//!
//! let counter = TokenCounter::new(Encoding::Cl100kBase);
//! assert_eq!(counter.count("hello world"), 2);
//! assert!(!counter.exceeds("hello world", 2));
//! assert!(counter.exceeds("hello world", 1));
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use serde::{Deserialize, Serialize};

mod ascii;
mod backtrack;
mod layout;
mod tables;
mod vocab;

use vocab::Tokenizer;

/// The longest byte sequence one token of `cl100k_base` or `o200k_base` stands for.
pub(crate) const MAX_TOKEN_BYTES: usize = 128;

/// Texts at least this large are counted in parts on several threads; below it, starting the
/// threads costs more than they save.
const PARALLEL_MIN_BYTES: usize = 256 * 1024;

/// The most threads one count uses.
const MAX_COUNT_THREADS: usize = 4;

/// The fewest cores on which a large text is counted in parts. The large count (the original's,
/// for the header) runs beside the extractive compressor, so on two cores no core is idle for
/// the parts: measured there, counting a 1 MB log in two parts ran at 20 MiB/s against 30–32
/// MiB/s on one thread (docs/benchmarks.md, "Counting").
const MIN_CORES_FOR_PARTS: usize = 3;

/// A BPE vocabulary that condense counts with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[non_exhaustive]
pub enum Encoding {
    /// `cl100k_base` (GPT-4, GPT-3.5, most embedding models). The default.
    #[default]
    #[serde(rename = "cl100k_base")]
    Cl100kBase,
    /// `o200k_base` (GPT-4o, o1 and later).
    #[serde(rename = "o200k_base")]
    O200kBase,
}

impl Encoding {
    /// The encoding's conventional name, as written in config files.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::O200kBase => "o200k_base",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Encoding {
    type Err = UnknownEncoding;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "cl100k_base" => Ok(Encoding::Cl100kBase),
            "o200k_base" => Ok(Encoding::O200kBase),
            other => Err(UnknownEncoding(other.to_owned())),
        }
    }
}

/// An encoding name that is neither `cl100k_base` nor `o200k_base`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown token encoding `{0}`: expected `cl100k_base` or `o200k_base`")]
pub struct UnknownEncoding(pub String);

/// Counts tokens exactly. Cheap to copy, and free to make: an encoding's pre-tokenizer is built
/// on the first count that needs it (once per process, then shared), so a decision the byte
/// length settles never pays for it.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    encoding: Encoding,
}

impl fmt::Debug for TokenCounter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TokenCounter")
            .field("encoding", &self.encoding)
            .finish()
    }
}

impl Default for TokenCounter {
    fn default() -> Self {
        TokenCounter::new(Encoding::default())
    }
}

impl TokenCounter {
    /// A counter for `encoding`. Builds nothing: the first count compiles the pre-tokenizer
    /// (about a millisecond; the vocabulary's tables are read in place from the binary),
    /// later ones share it.
    pub fn new(encoding: Encoding) -> Self {
        TokenCounter { encoding }
    }

    /// The encoding this counter counts with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// Builds this encoding's pre-tokenizer now, on the calling thread, if no count has yet: a
    /// process that will count can build it on a spare core while it does other start-up work.
    pub fn prepare(&self) {
        self.tokenizer().prepare();
    }

    /// Whether counting `text` can start at once, with nothing to build first: `cl100k_base`
    /// cuts ASCII text into pieces without its pre-tokenizer's expression, so counting ASCII
    /// text needs no [`prepare`](Self::prepare).
    ///
    /// ```
    /// use condense::{Encoding, TokenCounter};
    ///
    /// assert!(TokenCounter::new(Encoding::Cl100kBase).ready_for("plain ASCII log line"));
    /// ```
    pub fn ready_for(&self, text: &str) -> bool {
        !self.tokenizer().needs_expression(text)
    }

    /// The tokenizer, built on first use.
    fn tokenizer(&self) -> &'static Tokenizer {
        match self.encoding {
            Encoding::Cl100kBase => vocab::cl100k_base(),
            Encoding::O200kBase => vocab::o200k_base(),
        }
    }

    /// The exact number of tokens in `text`, the same as tiktoken's `encode_ordinary(text).len()`.
    ///
    /// Large texts are cut where no pre-tokenizer piece can span and the parts counted on
    /// several threads when the machine has at least three cores; the parts' counts add up to
    /// the whole's exactly.
    pub fn count(&self, text: &str) -> usize {
        if text.is_empty() {
            return 0;
        }
        let threads = parallelism();
        if threads > 1 && text.len() >= PARALLEL_MIN_BYTES {
            self.count_in_parts(text, threads)
        } else {
            self.count_serial(text)
        }
    }

    /// Whether `text` has more than `limit` tokens, counting no more than it must.
    pub fn exceeds(&self, text: &str, limit: usize) -> bool {
        if Self::trivially_within(text, limit) {
            return false;
        }
        self.count_up_to(text, limit).is_none()
    }

    /// The exact count when it is at most `limit`; `None` once it is known to be over.
    ///
    /// Decides from the byte length alone when it can (`len > 128·limit` is over), and
    /// otherwise stops counting at the first pre-tokenizer piece that passes `limit`, so the
    /// cost is about that of counting `limit` tokens whatever the text's size.
    pub fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        if text.is_empty() {
            return Some(0);
        }
        if text.len() > limit.saturating_mul(MAX_TOKEN_BYTES) {
            return None;
        }
        self.tokenizer().count_till_limit(text, limit)
    }

    /// The count of `head` followed by `tail`, given `tail`'s count: `head` alone is counted
    /// when it ends where no pre-tokenizer piece can span (see [`exact_parts`]), the whole
    /// otherwise. A header put on an already counted body is counted without the body again.
    pub(crate) fn count_joined(&self, head: &str, tail: &str, tail_count: usize) -> usize {
        if head.is_empty() {
            return tail_count;
        }
        if tail.is_empty() {
            return self.count(head);
        }
        if head.ends_with('\n') && starts_after_safe_cut(tail.as_bytes()) {
            self.count(head) + tail_count
        } else {
            self.count(&format!("{head}{tail}"))
        }
    }

    /// Whether `text` is certainly within `limit` tokens without counting: every token is at
    /// least one byte.
    pub fn trivially_within(text: &str, limit: usize) -> bool {
        text.len() <= limit
    }

    /// The longest prefix of `text`, cut on a character boundary, that has at most `limit`
    /// tokens by this counter.
    pub fn prefix_within<'t>(&self, text: &'t str, limit: usize) -> &'t str {
        self.prefix_within_counted(text, limit).0
    }

    /// [`prefix_within`](Self::prefix_within), with the prefix's exact token count: the count
    /// that chose the prefix, so a caller that needs it does not count the prefix again.
    ///
    /// ```
    /// use condense::TokenCounter;
    ///
    /// let counter = TokenCounter::default();
    /// let (head, tokens) = counter.prefix_within_counted("one two three four", 2);
    /// assert_eq!((head, tokens), ("one two", 2));
    /// assert_eq!(tokens, counter.count(head));
    /// ```
    pub fn prefix_within_counted<'t>(&self, text: &'t str, limit: usize) -> (&'t str, usize) {
        if limit == 0 {
            return ("", 0);
        }
        if let Some(tokens) = self.count_up_to(text, limit) {
            return (text, tokens);
        }
        // The first `limit` tokens of the text, found without encoding the rest of it.
        let ends = self.token_ends(text, Some(limit));
        let mut take = limit.min(ends.len());
        loop {
            let bytes = if take == 0 { 0 } else { ends[take - 1] };
            let prefix = &text[..floor_char_boundary(text, bytes)];
            // Re-tokenizing a prefix may merge differently at the cut: verify with the counter.
            if take == 0 {
                return (prefix, self.count(prefix));
            }
            if let Some(tokens) = self.count_up_to(prefix, limit) {
                return (prefix, tokens);
            }
            take = take.saturating_sub(1 + take / 64);
        }
    }

    /// The longest suffix of `text`, cut on a character boundary, that has at most `limit`
    /// tokens by this counter.
    pub fn suffix_within<'t>(&self, text: &'t str, limit: usize) -> &'t str {
        if limit == 0 {
            return "";
        }
        if self.count_up_to(text, limit).is_some() {
            return text;
        }
        // Only the last `128·limit` bytes can matter.
        let from = text
            .len()
            .saturating_sub(limit.saturating_mul(MAX_TOKEN_BYTES));
        let window = &text[ceil_char_boundary(text, from)..];
        let ends = self.token_ends(window, None);
        let mut take = limit.min(ends.len());
        loop {
            let skip = ends.len() - take;
            let bytes = if skip == 0 { 0 } else { ends[skip - 1] };
            let suffix = &window[ceil_char_boundary(window, bytes)..];
            if take == 0 || !self.exceeds(suffix, limit) {
                return suffix;
            }
            take = take.saturating_sub(1 + take / 64);
        }
    }

    /// The byte offset at which each token of `text` ends, stopping once more than `first`
    /// tokens are known when it is given.
    fn token_ends(&self, text: &str, first: Option<usize>) -> Vec<usize> {
        let tokenizer = self.tokenizer();
        let wanted = first.map_or(usize::MAX, |n| n.saturating_add(1));
        let mut ends = Vec::with_capacity(wanted.min(text.len() / 3 + 1));
        for piece in tokenizer.split(text) {
            let from = ends.len();
            tokenizer.token_lengths(piece, &mut ends);
            let mut offset = ends[..from].last().copied().unwrap_or(0);
            for end in &mut ends[from..] {
                offset += *end;
                *end = offset;
            }
            if ends.len() >= wanted {
                break;
            }
        }
        ends
    }

    fn count_serial(&self, text: &str) -> usize {
        self.tokenizer().count(text)
    }

    /// Counts `text` in up to `threads` parts on scoped threads. Only exact cuts are used, so
    /// a text without enough of them is counted in fewer parts.
    pub(crate) fn count_in_parts(&self, text: &str, threads: usize) -> usize {
        let parts = exact_parts(text, threads);
        if parts.len() < 2 {
            return self.count_serial(text);
        }
        std::thread::scope(|scope| {
            let handles: Vec<_> = parts[1..]
                .iter()
                .map(|part| scope.spawn(move || self.count_serial(part)))
                .collect();
            let first = self.count_serial(parts[0]);
            first
                + handles
                    .into_iter()
                    .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                    .sum::<usize>()
        })
    }
}

/// Threads a large count may use: the machine's cores, at most [`MAX_COUNT_THREADS`], or one
/// below [`MIN_CORES_FOR_PARTS`].
fn parallelism() -> usize {
    static THREADS: OnceLock<usize> = OnceLock::new();
    *THREADS.get_or_init(|| {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        if cores < MIN_CORES_FOR_PARTS {
            1
        } else {
            cores.min(MAX_COUNT_THREADS)
        }
    })
}

/// Token count of `text` with the default encoding (`cl100k_base`), exact.
///
/// Kept under the name the original design used for its `len / 4` estimate; unlike that
/// estimate it is exact, which matters: bytes / 4 is off by 1.75× on logs.
///
/// ```
/// assert_eq!(condense::estimate_tokens(""), 0);
/// assert_eq!(condense::estimate_tokens("hello world"), 2);
/// ```
pub fn estimate_tokens(text: &str) -> usize {
    TokenCounter::default().count(text)
}

/// `text` cut into up to `n` parts of about equal size, each cut only where no `cl100k_base` or
/// `o200k_base` pre-tokenizer piece can span, so the counts of the parts add up to the count of
/// the whole exactly. A text with too few such places comes back in fewer parts.
pub(crate) fn exact_parts(text: &str, n: usize) -> Vec<&str> {
    let mut parts = Vec::with_capacity(n);
    let mut rest = text;
    for left in (2..=n).rev() {
        let target = rest.len() / left;
        let Some(cut) = safe_cut_from(rest, target) else {
            break;
        };
        let (head, tail) = rest.split_at(cut);
        parts.push(head);
        rest = tail;
    }
    parts.push(rest);
    parts
}

/// The first safe cut at or after byte `from`.
///
/// A safe cut is right after a `\n` when the next line starts, after optional spaces and tabs,
/// with a printable ASCII character, and that character right after the newline is not `/`
/// (`o200k_base` lets punctuation absorb a following `\n/`). Every pre-tokenizer piece that can
/// hold a newline ends at the last newline of its whitespace run, so such a cut falls between
/// pieces, and the pieces after it do not depend on what came before.
fn safe_cut_from(text: &str, from: usize) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut at = from;
    while at < bytes.len() {
        let newline = at + bytes[at..].iter().position(|&b| b == b'\n')?;
        let cut = newline + 1;
        if is_safe_cut(bytes, cut) {
            return Some(cut);
        }
        at = cut;
    }
    None
}

fn is_safe_cut(bytes: &[u8], i: usize) -> bool {
    i > 0 && i < bytes.len() && bytes[i - 1] == b'\n' && starts_after_safe_cut(&bytes[i..])
}

/// Whether text starting with `rest` may follow a newline at a safe cut: its first character
/// is not `/`, and its first one after optional spaces and tabs is printable ASCII.
fn starts_after_safe_cut(rest: &[u8]) -> bool {
    if rest.first() == Some(&b'/') {
        return false;
    }
    let first_visible = rest.iter().find(|&&b| b != b' ' && b != b'\t');
    matches!(first_visible, Some(&b) if b.is_ascii_graphic())
}

/// The largest char boundary ≤ `i` (clamped to the text).
pub(crate) fn floor_char_boundary(text: &str, i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    (0..=i)
        .rev()
        .find(|&j| text.is_char_boundary(j))
        .unwrap_or(0)
}

/// The smallest char boundary ≥ `i` (clamped to the text).
pub(crate) fn ceil_char_boundary(text: &str, i: usize) -> usize {
    if i >= text.len() {
        return text.len();
    }
    (i..=text.len())
        .find(|&j| text.is_char_boundary(j))
        .unwrap_or(text.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both() -> [TokenCounter; 2] {
        [
            TokenCounter::new(Encoding::Cl100kBase),
            TokenCounter::new(Encoding::O200kBase),
        ]
    }

    fn structured_text(lines: usize) -> String {
        (0..lines)
            .map(|i| {
                format!(
                    "  {{\"id\": {i}, \"path\": \"/var/log/x{i}\", \"msg\": \"ok  done\"}},\n/{i}\n\n   \n\tend {i} é\n"
                )
            })
            .collect()
    }

    #[test]
    fn a_joined_count_equals_the_count_of_the_whole() {
        let heads = [
            "",
            "[condense: extract, 12,000 → 1,990 tokens, original kept as cx_0]\n",
            "header\n\n",
            "no newline at the end ",
            "spaces before the newline   \n",
        ];
        let tails = [
            "",
            "body line\nnext",
            "  indented body",
            "\tTabbed",
            "/path/at/the/start",
            "\n\nblank lines first",
            "   ",
            "é accented",
            "日本語の本文",
            "{\"json\": 1}",
        ];
        for c in both() {
            for head in heads {
                for tail in tails {
                    let joined = c.count_joined(head, tail, c.count(tail));
                    assert_eq!(
                        joined,
                        c.count(&format!("{head}{tail}")),
                        "{:?}: {head:?} + {tail:?}",
                        c.encoding()
                    );
                }
            }
        }
    }

    #[test]
    fn counts_known_strings() {
        let c = TokenCounter::default();
        assert_eq!(c.count(""), 0);
        assert_eq!(c.count("hello world"), 2);
        assert_eq!(estimate_tokens("hello world"), 2);
    }

    #[test]
    fn counting_in_parts_equals_counting_whole() {
        let text = structured_text(4000);
        for c in both() {
            let whole = c.count_serial(&text);
            for threads in [2, 3, 4, 7] {
                let parts = exact_parts(&text, threads);
                assert_eq!(parts.len(), threads);
                assert_eq!(parts.concat(), text);
                assert_eq!(c.count_in_parts(&text, threads), whole, "{threads} parts");
            }
        }
    }

    #[test]
    fn a_text_without_safe_cuts_is_counted_whole() {
        let text = "word ".repeat(100_000);
        assert_eq!(exact_parts(&text, 4), vec![text.as_str()]);
        let c = TokenCounter::default();
        assert_eq!(c.count_in_parts(&text, 4), c.count_serial(&text));
    }

    #[test]
    fn count_up_to_is_exact_at_the_limit() {
        let text = structured_text(800);
        for c in both() {
            let exact = c.count(&text);
            assert_eq!(c.count_up_to(&text, exact), Some(exact));
            assert_eq!(c.count_up_to(&text, exact - 1), None);
            assert!(c.exceeds(&text, exact - 1) && !c.exceeds(&text, exact));
        }
    }

    #[test]
    fn exceeds_decides_from_bytes_alone_when_it_can() {
        let c = TokenCounter::default();
        let text = "x".repeat(10_000);
        assert_eq!(c.count_up_to(&text, 10), None);
        assert!(!c.exceeds("abc", 3));
        assert_eq!(c.count_up_to("abc", 3), Some(1));
    }

    #[test]
    fn a_megabyte_of_spaces_or_of_one_letter_counts_quickly() {
        for text in [" ".repeat(1 << 20), "a".repeat(1 << 20)] {
            for c in both() {
                let n = c.count(&text);
                assert!(n > 0 && n <= text.len());
                let head = c.prefix_within(&text, 100);
                assert!(c.count(head) <= 100);
            }
        }
    }

    #[test]
    fn a_counted_prefix_is_the_prefix_with_its_exact_count() {
        let texts = [
            String::new(),
            "hello world".to_owned(),
            "Grüße, 世界! 🦀🦀 ".repeat(300),
            structured_text(200),
            " ".repeat(5000),
            "a".repeat(5000),
            String::from_utf8_lossy(&[b'x', 0xff, 0xfe, b' ', 0xc3].repeat(400)).into_owned(),
        ];
        for c in both() {
            for text in &texts {
                for limit in [0, 1, 2, 7, 100, 999, 100_000] {
                    let (head, tokens) = c.prefix_within_counted(text, limit);
                    assert_eq!(head, c.prefix_within(text, limit));
                    assert_eq!(tokens, c.count(head), "{:?} at {limit}", c.encoding());
                    assert!(tokens <= limit);
                }
            }
        }
    }

    #[test]
    fn prefix_and_suffix_fit_the_limit() {
        let text = "Grüße, 世界! ".repeat(500);
        for c in both() {
            for limit in [1, 7, 100, 999] {
                let head = c.prefix_within(&text, limit);
                let tail = c.suffix_within(&text, limit);
                assert!(c.count(head) <= limit);
                assert!(c.count(tail) <= limit);
                assert!(text.starts_with(head) && text.ends_with(tail));
                assert!(head.len() > limit / 2, "prefix too short for {limit}");
            }
        }
    }
}
