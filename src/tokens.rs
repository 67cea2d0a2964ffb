//! Exact BPE token counts, with free byte-length bounds first.
//!
//! A byte-level BPE token covers at least 1 and at most [`MAX_TOKEN_BYTES`] bytes, so a text of
//! `len` bytes has between `len / 128` and `len` tokens. Most threshold decisions are settled by
//! those bounds alone; the rest are counted in chunks cut where no token can span, stopping as
//! soon as the running count passes the limit.
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
use std::panic::{self, AssertUnwindSafe};
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use tiktoken_rs::CoreBPE;

/// The longest byte sequence one token of `cl100k_base` or `o200k_base` stands for.
pub const MAX_TOKEN_BYTES: usize = 128;

/// Bytes per counting chunk. Small enough that a chunk that trips the tokenizer's regex limits
/// can be retried in pieces, large enough that chunking costs nothing measurable.
const CHUNK_BYTES: usize = 32 * 1024;

/// Whitespace runs longer than this are what makes the tokenizer's regex give up (a panic
/// inside tiktoken-rs); chunks holding one are counted in parts instead.
const MAX_WHITESPACE_RUN: usize = 4096;

/// Below this size a chunk that the tokenizer cannot handle is bounded by its byte length.
const MIN_SPLIT_BYTES: usize = 256;

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

/// Counts tokens exactly. Cheap to copy: the vocabulary is built once per process and shared.
#[derive(Clone, Copy)]
pub struct TokenCounter {
    encoding: Encoding,
    bpe: &'static CoreBPE,
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
    /// A counter for `encoding`. The first counter of an encoding builds its vocabulary (tens of
    /// milliseconds); later ones share it.
    pub fn new(encoding: Encoding) -> Self {
        let bpe = match encoding {
            Encoding::Cl100kBase => tiktoken_rs::cl100k_base_singleton(),
            Encoding::O200kBase => tiktoken_rs::o200k_base_singleton(),
        };
        TokenCounter { encoding, bpe }
    }

    /// The encoding this counter counts with.
    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// The exact number of tokens in `text`.
    ///
    /// Never panics: a piece of text the tokenizer cannot handle (its regex gives up on some
    /// megabyte-long whitespace runs) is split and counted in parts, and a part too small to
    /// split further is bounded by its byte length, which can only over-count.
    pub fn count(&self, text: &str) -> usize {
        self.count_up_to(text, usize::MAX).unwrap_or(usize::MAX)
    }

    /// Whether `text` has more than `limit` tokens, counting no more than it must.
    pub fn exceeds(&self, text: &str, limit: usize) -> bool {
        self.count_up_to(text, limit).is_none()
    }

    /// The exact count when it is at most `limit`; `None` once it is known to be over.
    ///
    /// Decides from the byte length alone when it can (`len ≤ limit` is under,
    /// `len > 128·limit` is over), and otherwise stops counting at the first chunk that passes
    /// `limit`.
    pub fn count_up_to(&self, text: &str, limit: usize) -> Option<usize> {
        if text.is_empty() {
            return Some(0);
        }
        if text.len() > limit.saturating_mul(MAX_TOKEN_BYTES) {
            return None;
        }
        let mut total = 0usize;
        for chunk in SafeChunks::new(text, CHUNK_BYTES) {
            total += self.count_chunk(chunk);
            if total > limit {
                return None;
            }
        }
        Some(total)
    }

    /// Whether `text` is certainly within `limit` tokens without counting: every token is at
    /// least one byte.
    pub fn trivially_within(text: &str, limit: usize) -> bool {
        text.len() <= limit
    }

    /// The longest prefix of `text`, cut on a character boundary, that has at most `limit`
    /// tokens by this counter.
    pub fn prefix_within<'t>(&self, text: &'t str, limit: usize) -> &'t str {
        if limit == 0 {
            return "";
        }
        if self.count_up_to(text, limit).is_some() {
            return text;
        }
        // Only the first `128·limit` bytes can matter; tokenize them and take `limit` tokens.
        let window = &text[..floor_char_boundary(text, limit.saturating_mul(MAX_TOKEN_BYTES))];
        let ends = self.token_ends(window);
        let mut take = limit.min(ends.len());
        loop {
            let bytes = if take == 0 { 0 } else { ends[take - 1] };
            let prefix = &window[..floor_char_boundary(window, bytes)];
            // Re-tokenizing a prefix may merge differently at the cut: verify with the counter.
            if take == 0 || !self.exceeds(prefix, limit) {
                return prefix;
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
        let from = text
            .len()
            .saturating_sub(limit.saturating_mul(MAX_TOKEN_BYTES));
        let window = &text[ceil_char_boundary(text, from)..];
        let ends = self.token_ends(window);
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

    /// The byte offset at which each token of `text` ends. A part the tokenizer cannot handle
    /// counts one token per byte, which keeps offsets exact and can only over-count.
    fn token_ends(&self, text: &str) -> Vec<usize> {
        let mut ends = Vec::with_capacity(text.len() / 3);
        let mut offset = 0;
        for chunk in SafeChunks::new(text, CHUNK_BYTES) {
            for part in split_when_unencodable(chunk) {
                match self.guarded_encode(part) {
                    Some(tokens) => {
                        for token in tokens {
                            let len = self
                                .bpe
                                .decode_bytes(&[token])
                                .map(|b| b.len())
                                .unwrap_or(1);
                            offset += len;
                            ends.push(offset);
                        }
                    }
                    None => {
                        ends.extend((1..=part.len()).map(|i| offset + i));
                        offset += part.len();
                    }
                }
            }
        }
        ends
    }

    fn count_chunk(&self, chunk: &str) -> usize {
        match self.guarded_encode(chunk) {
            Some(tokens) => tokens.len(),
            None if chunk.len() <= MIN_SPLIT_BYTES => chunk.len(),
            None => {
                let mid = floor_char_boundary(chunk, chunk.len() / 2).max(1);
                let mid = if chunk.is_char_boundary(mid) {
                    mid
                } else {
                    ceil_char_boundary(chunk, mid)
                };
                self.count_chunk(&chunk[..mid]) + self.count_chunk(&chunk[mid..])
            }
        }
    }

    /// `encode_ordinary`, with the tokenizer's panics (regex backtrack and stack limits on
    /// pathological inputs) turned into `None`.
    fn guarded_encode(&self, chunk: &str) -> Option<Vec<u32>> {
        // Long runs of whitespace are what trips the regex; skip the attempt (and the panic
        // message it would print) when a chunk is mostly one such run.
        if longest_whitespace_run(chunk) > MAX_WHITESPACE_RUN {
            return None;
        }
        let bpe = self.bpe;
        panic::catch_unwind(AssertUnwindSafe(|| bpe.encode_ordinary(chunk))).ok()
    }
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

/// Splits text into pieces of about `target` bytes, cut only where no `cl100k_base` or
/// `o200k_base` pre-tokenizer piece can span, so counts of the pieces add up to the count of the
/// whole.
///
/// A safe cut is right after a `\n` when the next line starts, after optional spaces and tabs,
/// with a printable ASCII character, and that character right after the newline is not `/`
/// (`o200k_base` lets punctuation absorb a following `\n/`). Every pre-tokenizer piece that can
/// hold a newline ends at the last newline of its whitespace run, so such a cut falls between
/// pieces. When no safe cut exists within a window, the piece is cut on a character boundary,
/// which may change the count by a token at that cut.
#[derive(Debug, Clone)]
pub(crate) struct SafeChunks<'t> {
    rest: &'t str,
    target: usize,
}

impl<'t> SafeChunks<'t> {
    pub(crate) fn new(text: &'t str, target: usize) -> Self {
        SafeChunks {
            rest: text,
            target: target.max(64),
        }
    }
}

impl<'t> Iterator for SafeChunks<'t> {
    type Item = &'t str;

    fn next(&mut self) -> Option<&'t str> {
        if self.rest.is_empty() {
            return None;
        }
        if self.rest.len() <= self.target {
            return Some(std::mem::take(&mut self.rest));
        }
        let bytes = self.rest.as_bytes();
        // Look for a safe cut in the window [target/2, 2·target), nearest to target first by
        // scanning forward from target, then backward.
        let hi = bytes.len().min(self.target * 2);
        let cut = (self.target..hi)
            .find(|&i| is_safe_cut(bytes, i))
            .or_else(|| {
                (self.target / 2..self.target)
                    .rev()
                    .find(|&i| is_safe_cut(bytes, i))
            })
            .unwrap_or_else(|| floor_char_boundary(self.rest, self.target).max(1));
        let cut = if self.rest.is_char_boundary(cut) {
            cut
        } else {
            ceil_char_boundary(self.rest, cut)
        };
        let (head, tail) = self.rest.split_at(cut);
        self.rest = tail;
        Some(head)
    }
}

fn is_safe_cut(bytes: &[u8], i: usize) -> bool {
    if i == 0 || i >= bytes.len() || bytes[i - 1] != b'\n' || bytes[i] == b'/' {
        return false;
    }
    let first_visible = bytes[i..].iter().find(|&&b| b != b' ' && b != b'\t');
    matches!(first_visible, Some(&b) if b.is_ascii_graphic())
}

/// `chunk` whole when the tokenizer handles it, otherwise in parts of `MIN_SPLIT_BYTES`.
fn split_when_unencodable(chunk: &str) -> Box<dyn Iterator<Item = &str> + '_> {
    if longest_whitespace_run(chunk) > MAX_WHITESPACE_RUN {
        Box::new(split_in_parts(chunk, MIN_SPLIT_BYTES))
    } else {
        Box::new(std::iter::once(chunk))
    }
}

fn split_in_parts(text: &str, part: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let cut = ceil_char_boundary(rest, part.min(rest.len()));
        let (head, tail) = rest.split_at(cut);
        rest = tail;
        Some(head)
    })
}

fn longest_whitespace_run(text: &str) -> usize {
    let mut longest = 0;
    let mut current = 0;
    for b in text.bytes() {
        if b.is_ascii_whitespace() {
            current += 1;
            longest = longest.max(current);
        } else {
            current = 0;
        }
    }
    longest
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

    #[test]
    fn counts_known_strings() {
        let c = TokenCounter::default();
        assert_eq!(c.count(""), 0);
        assert_eq!(c.count("hello world"), 2);
        assert_eq!(estimate_tokens("hello world"), 2);
    }

    #[test]
    fn chunked_count_equals_whole_count_on_structured_text() {
        let mut text = String::new();
        for i in 0..4000 {
            text.push_str(&format!(
                "  {{\"id\": {i}, \"path\": \"/var/log/x{i}\", \"msg\": \"ok  done\"}},\n/{i}\n\n   \n\tend {i} é\n"
            ));
        }
        assert!(text.len() > 4 * CHUNK_BYTES);
        for c in both() {
            let whole = c.bpe.encode_ordinary(&text).len();
            assert_eq!(c.count(&text), whole, "{:?}", c.encoding());
        }
    }

    #[test]
    fn exceeds_decides_from_bytes_alone_when_it_can() {
        let c = TokenCounter::default();
        let text = "x".repeat(10_000);
        assert_eq!(c.count_up_to(&text, 10), None);
        assert_eq!(c.count_up_to("abc", 3), Some(1));
    }

    #[test]
    fn never_panics_on_a_megabyte_of_spaces() {
        let spaces = " ".repeat(1 << 20);
        for c in both() {
            let n = c.count(&spaces);
            assert!(n > 0 && n <= spaces.len());
            let head = c.prefix_within(&spaces, 100);
            assert!(c.count(head) <= 100);
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
