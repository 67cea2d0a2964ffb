//! Chunkers: cut a text larger than a model's window into pieces that each fit.
//!
//! Every chunk, header context included, has at most [`ChunkOptions::chunk_tokens`] tokens by the
//! counter. How the text is cut depends on the [`ChunkStrategy`] and the [`ContentKind`]:
//!
//! - **Semantic, text and markdown**: at headers and horizontal rules, then at paragraphs (blank
//!   lines), then at lines, and only then at token boundaries with
//!   [`overlap_tokens`](ChunkOptions::overlap_tokens) of overlap. Consecutive pieces are packed
//!   into a chunk while they fit, and the headers active where a chunk starts (`# Guide` /
//!   `## Install`) are its [`context`](Chunk::context), so a chunk cut from the middle of a
//!   section still says where it comes from.
//! - **Semantic, logs**: whole lines (no header detection: a log line may start with `#`).
//! - **Semantic, JSON**: at element boundaries. An array of records becomes groups of whole
//!   records, each chunk body a valid JSON array (or object, for groups of members) in compact
//!   form, with its path (`$.items[40..79]`) as context. An element too large for one chunk is
//!   walked into the same way; only a single scalar larger than a chunk (a huge string) is cut
//!   at token boundaries.
//! - **Token**: fixed token windows with overlap, no context; ignores structure.
//!
//! Overlap applies only where a piece is cut at token boundaries: whole lines, paragraphs and
//! records carry their own boundaries and are never duplicated.
//!
//! ```
//! use condense::TokenCounter;
//! use condense::methods::chunk::{chunk, ChunkOptions, ContentKind};
//!
//! let counter = TokenCounter::default();
//! let text = "# Guide\n\n## Install\n\n".to_owned() + &"Run the installer. ".repeat(400);
//! let options = ChunkOptions::default().with_chunk_tokens(500);
//! let chunks = chunk(&text, ContentKind::Markdown, &options, &counter);
//! assert!(chunks.len() > 1);
//! for c in &chunks {
//!     assert!(counter.count(&c.text()) <= 500);
//! }
//! assert_eq!(chunks[1].context, "# Guide\n## Install");
//! ```

use std::collections::HashMap;
use std::ops::Range;

use serde_json::Value;

use crate::TokenCounter;
use crate::tokens::floor_char_boundary;

mod json;
mod ranges;

use json::JsonChunker;
use ranges::{cut_before, lines, paragraphs, scan_markdown};

/// The smallest chunk size honoured: below it a header line or a JSON path alone could fill a
/// chunk. Smaller configured sizes are raised to this.
pub const MIN_CHUNK_TOKENS: usize = 32;

/// Tokens kept free for the blank line between a chunk's context and its body, plus one for a
/// merge across that seam: token counts of two texts do not always add up exactly.
const CONTEXT_SEPARATOR_TOKENS: usize = 3;

/// A header context longer than this share of the chunk is cut back to its innermost headers,
/// so that deep or very long headings cannot crowd out the content.
const MAX_CONTEXT_SHARE: usize = 4;

/// How a text is cut into chunks: a `[mapreduce] strategy` value, so the config model's.
pub use crate::config::ChunkStrategy;

/// What kind of text is being chunked: the extractive compressor's kinds, which decide where
/// the semantic strategy may cut. JSON is cut at element boundaries (text that does not parse
/// is chunked as text); line-entry kinds (logs, JSON Lines, CSV) at whole lines with no header
/// detection; every other kind as markdown, which degrades to paragraphs and lines when there
/// are no headers.
pub use crate::methods::extract::ContentKind;

/// A cheap guess at a text's kind for chunking: JSON when the text parses as a JSON object or
/// array, otherwise text. Callers that know better (a log tool, a markdown file) should say so
/// instead.
pub fn detect_kind(text: &str) -> ContentKind {
    let first = text.trim_start().as_bytes().first();
    if matches!(first, Some(b'{' | b'[')) && serde_json::from_str::<Value>(text).is_ok() {
        ContentKind::Json
    } else {
        ContentKind::Text
    }
}

/// Chunk size, overlap and strategy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChunkOptions {
    /// The most tokens in one chunk, header context included. Default 4000 (seed 002's map
    /// chunk size; half of seed 000's 8000, so that a chunk, its prompt and its answer fit an
    /// 8k-token model).
    pub chunk_tokens: usize,
    /// Tokens repeated at the start of a chunk from the end of the previous one, where a unit is
    /// cut at token boundaries. Default 200. At most half a chunk.
    pub overlap_tokens: usize,
    /// How to cut. Default [`ChunkStrategy::Semantic`].
    pub strategy: ChunkStrategy,
}

impl Default for ChunkOptions {
    fn default() -> Self {
        ChunkOptions {
            chunk_tokens: 4000,
            overlap_tokens: 200,
            strategy: ChunkStrategy::Semantic,
        }
    }
}

impl ChunkOptions {
    /// Sets the most tokens per chunk (default 4000; at least [`MIN_CHUNK_TOKENS`]).
    #[must_use]
    pub fn with_chunk_tokens(mut self, chunk_tokens: usize) -> Self {
        self.chunk_tokens = chunk_tokens;
        self
    }

    /// Sets the overlap in tokens for token-boundary cuts (default 200).
    #[must_use]
    pub fn with_overlap_tokens(mut self, overlap_tokens: usize) -> Self {
        self.overlap_tokens = overlap_tokens;
        self
    }

    /// Sets the strategy (default [`ChunkStrategy::Semantic`]).
    #[must_use]
    pub fn with_strategy(mut self, strategy: ChunkStrategy) -> Self {
        self.strategy = strategy;
        self
    }
}

/// One piece of a chunked text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Chunk {
    /// Position in the chunk sequence, from 0.
    pub index: usize,
    /// Where the body sits in the whole: the active markdown headers, one per line, or a JSON
    /// path. Empty when there is nothing to say.
    pub context: String,
    /// The chunk's content.
    pub body: String,
    /// The byte range of the body in the original text, when the body is a verbatim slice of it
    /// (not for JSON, whose bodies are re-serialized).
    pub span: Option<Range<usize>>,
    /// Tokens in [`text`](Chunk::text), by the counter that cut it.
    pub tokens: usize,
}

impl Chunk {
    /// A chunk from its parts, with `tokens` left at 0 and no span: for prompt implementations
    /// and tests that need one.
    pub fn new(index: usize, context: impl Into<String>, body: impl Into<String>) -> Self {
        Chunk {
            index,
            context: context.into(),
            body: body.into(),
            span: None,
            tokens: 0,
        }
    }

    /// The chunk as one text: the context, a blank line, then the body.
    pub fn text(&self) -> String {
        if self.context.is_empty() {
            self.body.clone()
        } else {
            format!("{}\n\n{}", self.context, self.body)
        }
    }
}

/// Cuts `text` into chunks of at most `options.chunk_tokens` tokens (context included).
///
/// An empty or whitespace-only text gives no chunks. Never panics; deterministic.
pub fn chunk(
    text: &str,
    kind: ContentKind,
    options: &ChunkOptions,
    counter: &TokenCounter,
) -> Vec<Chunk> {
    if text.trim().is_empty() {
        return Vec::new();
    }
    let limit = options.chunk_tokens.max(MIN_CHUNK_TOKENS);
    let overlap = options.overlap_tokens.min(limit / 2);
    let chunks = match (options.strategy, kind) {
        (ChunkStrategy::Token, _) => {
            let mut atoms = Vec::new();
            split_at_tokens(text, 0..text.len(), limit, overlap, counter, &mut atoms);
            atoms
                .into_iter()
                .filter_map(|atom| text_chunk(text, atom.range, String::new(), counter))
                .collect()
        }
        (ChunkStrategy::Semantic, ContentKind::Json) => match serde_json::from_str::<Value>(text) {
            Ok(value) => JsonChunker::new(limit, overlap, counter).run(&value),
            Err(_) => TextChunker::new(text, true, limit, overlap, counter).run(),
        },
        (ChunkStrategy::Semantic, ContentKind::Log | ContentKind::JsonLines | ContentKind::Csv) => {
            TextChunker::new(text, false, limit, overlap, counter).run()
        }
        (ChunkStrategy::Semantic, _) => TextChunker::new(text, true, limit, overlap, counter).run(),
    };
    let mut chunks = enforce_limit(chunks, limit, counter);
    for (index, chunk) in chunks.iter_mut().enumerate() {
        chunk.index = index;
    }
    chunks
}

/// A unit of text that is never cut further: a byte range and its token count.
#[derive(Debug, Clone)]
struct Atom {
    range: Range<usize>,
    tokens: usize,
}

/// The unit boundaries tried in order when a piece is too large.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Section,
    Paragraph,
    Line,
    Token,
}

#[derive(Debug, Clone)]
struct Header {
    /// Byte offset of the header line.
    start: usize,
    level: usize,
    /// The header line, trimmed.
    line: String,
}

/// Chunks text and markdown: atoms at the coarsest boundary that fits, then packing.
struct TextChunker<'t> {
    text: &'t str,
    counter: &'t TokenCounter,
    limit: usize,
    overlap: usize,
    headers: Vec<Header>,
    /// Section boundaries: header and horizontal-rule line starts.
    breaks: Vec<usize>,
    /// Context text and tokens by (headers before the offset, header at the offset's level).
    contexts: HashMap<(usize, usize), (String, usize)>,
}

impl<'t> TextChunker<'t> {
    fn new(
        text: &'t str,
        markdown: bool,
        limit: usize,
        overlap: usize,
        counter: &'t TokenCounter,
    ) -> Self {
        let (headers, breaks) = if markdown {
            scan_markdown(text)
        } else {
            (Vec::new(), Vec::new())
        };
        TextChunker {
            text,
            counter,
            limit,
            overlap,
            headers,
            breaks,
            contexts: HashMap::new(),
        }
    }

    fn run(mut self) -> Vec<Chunk> {
        let mut atoms = Vec::new();
        let first = if self.breaks.is_empty() {
            Level::Paragraph
        } else {
            Level::Section
        };
        self.split(0..self.text.len(), first, &mut atoms);
        self.pack(&atoms)
    }

    /// The most body tokens a chunk starting at `offset` may hold.
    fn body_limit(&mut self, offset: usize) -> usize {
        let (_, context_tokens) = self.context_at(offset);
        let reserve = if context_tokens == 0 {
            0
        } else {
            context_tokens + CONTEXT_SEPARATOR_TOKENS
        };
        self.limit.saturating_sub(reserve).max(1)
    }

    /// Splits `range` into atoms, each within the body limit at its start, at `level` or finer.
    fn split(&mut self, range: Range<usize>, level: Level, out: &mut Vec<Atom>) {
        let parts: Vec<Range<usize>> = match level {
            Level::Section => cut_before(range.clone(), &self.breaks),
            Level::Paragraph => paragraphs(self.text, range.clone()),
            Level::Line => lines(self.text, range.clone()),
            Level::Token => {
                let limit = self.body_limit(range.start);
                split_at_tokens(self.text, range, limit, self.overlap, self.counter, out);
                return;
            }
        };
        let next = match level {
            Level::Section => Level::Paragraph,
            Level::Paragraph => Level::Line,
            _ => Level::Token,
        };
        // A unit that did not split here goes straight to the next level.
        if parts.len() == 1 && parts[0] == range {
            return self.split(range, next, out);
        }
        for part in parts {
            let limit = self.body_limit(part.start);
            match self.counter.count_up_to(&self.text[part.clone()], limit) {
                Some(tokens) => out.push(Atom {
                    range: part,
                    tokens,
                }),
                None => self.split(part, next, out),
            }
        }
    }

    /// Packs consecutive atoms into chunks while they fit.
    fn pack(&mut self, atoms: &[Atom]) -> Vec<Chunk> {
        let mut chunks = Vec::new();
        let mut i = 0;
        while i < atoms.len() {
            let start = atoms[i].range.start;
            let cap = self.body_limit(start);
            let mut end = atoms[i].range.end;
            let mut sum = atoms[i].tokens;
            let mut j = i + 1;
            // Only contiguous atoms merge: token-cut pieces overlap and stand alone.
            while j < atoms.len() && atoms[j].range.start == end && sum + atoms[j].tokens <= cap {
                sum += atoms[j].tokens;
                end = atoms[j].range.end;
                j += 1;
            }
            let (context, _) = self.context_at(start);
            // Counts of atoms add up to the count of their concatenation in all but rare
            // merges at the seams; check, and give back atoms until the chunk fits.
            loop {
                let candidate = text_chunk(self.text, start..end, context.clone(), self.counter);
                match candidate {
                    Some(chunk) if chunk.tokens <= self.limit => {
                        chunks.push(chunk);
                        break;
                    }
                    Some(chunk) if j == i + 1 => {
                        // One atom fits the limit on its own: drop the context, not content.
                        let mut bare = chunk;
                        bare.context.clear();
                        bare.tokens = self.counter.count(&bare.body);
                        chunks.push(bare);
                        break;
                    }
                    Some(_) => {
                        j -= 1;
                        end = atoms[j - 1].range.end;
                    }
                    None => break,
                }
            }
            i = j;
        }
        chunks
    }

    /// The header context for a chunk whose body starts at `offset`, and its tokens.
    fn context_at(&mut self, offset: usize) -> (String, usize) {
        if self.headers.is_empty() {
            return (String::new(), 0);
        }
        let before = self.headers.partition_point(|h| h.start < offset);
        // A body that starts with a header carries it; its parents at the same or a deeper
        // level are no longer active.
        let own_level = self
            .headers
            .get(before)
            .filter(|h| h.start == offset)
            .map_or(usize::MAX, |h| h.level);
        if let Some(found) = self.contexts.get(&(before, own_level)) {
            return found.clone();
        }
        let mut stack: Vec<&Header> = Vec::new();
        for header in &self.headers[..before] {
            while stack.last().is_some_and(|top| top.level >= header.level) {
                stack.pop();
            }
            stack.push(header);
        }
        while stack.last().is_some_and(|top| top.level >= own_level) {
            stack.pop();
        }
        let max_tokens = self.limit / MAX_CONTEXT_SHARE;
        let mut lines: Vec<&str> = stack.iter().map(|h| h.line.as_str()).collect();
        let mut context = lines.join("\n");
        let mut tokens = self.counter.count(&context);
        // Keep the innermost headers: they say most precisely where the chunk is.
        while tokens > max_tokens && lines.len() > 1 {
            lines.remove(0);
            context = lines.join("\n");
            tokens = self.counter.count(&context);
        }
        if tokens > max_tokens {
            context = self.counter.prefix_within(&context, max_tokens).to_owned();
            tokens = self.counter.count(&context);
        }
        let found = (context, tokens);
        self.contexts.insert((before, own_level), found.clone());
        found
    }
}

/// A chunk of `text[range]` with surrounding whitespace trimmed; `None` when only whitespace.
fn text_chunk(
    text: &str,
    range: Range<usize>,
    context: String,
    counter: &TokenCounter,
) -> Option<Chunk> {
    let slice = &text[range.clone()];
    let leading = slice.len() - slice.trim_start().len();
    let body = slice.trim();
    if body.is_empty() {
        return None;
    }
    let start = range.start + leading;
    let mut chunk = Chunk {
        index: 0,
        context,
        body: body.to_owned(),
        span: Some(start..start + body.len()),
        tokens: 0,
    };
    chunk.tokens = counter.count(&chunk.text());
    Some(chunk)
}

/// Cuts `text[range]` into windows of at most `limit` tokens, each starting `overlap` tokens
/// before the previous one ended. Prefers to end a window at whitespace in its last quarter.
fn split_at_tokens(
    text: &str,
    range: Range<usize>,
    limit: usize,
    overlap: usize,
    counter: &TokenCounter,
    out: &mut Vec<Atom>,
) {
    let limit = limit.max(1);
    let overlap = overlap.min(limit / 2);
    let mut start = range.start;
    while start < range.end {
        let rest = &text[start..range.end];
        let len = window_len(rest, limit, counter);
        let end = start + len;
        let tokens = counter.count(&text[start..end]);
        out.push(Atom {
            range: start..end,
            tokens,
        });
        if end >= range.end {
            break;
        }
        let repeated = counter.suffix_within(&text[start..end], overlap).len();
        let next = end - repeated;
        start = if next > start { next } else { end };
    }
}

/// The length of the next token window of `rest`: at most `limit` tokens once trimmed (a
/// chunk body is trimmed, and dropping a leading space can make a word cost more tokens),
/// ending at whitespace in its last quarter when there is some, never empty.
fn window_len(rest: &str, limit: usize, counter: &TokenCounter) -> usize {
    let mut target = limit;
    loop {
        let piece = prefix_within_fast(rest, target, counter);
        let mut len = piece.len();
        if len == 0 {
            // A limit too small for even one character: take the character anyway.
            return rest.chars().next().map_or(rest.len(), char::len_utf8);
        }
        if len < rest.len() {
            let from = floor_char_boundary(piece, len - len / 4);
            if let Some(at) = piece[from..].rfind(char::is_whitespace) {
                let ws = piece[from + at..].chars().next().map_or(1, char::len_utf8);
                len = from + at + ws;
            }
        }
        if target <= 1 || !counter.exceeds(rest[..len].trim(), limit) {
            return len;
        }
        target -= 1 + target / 32;
    }
}

/// Re-cuts, at token boundaries and without context, any chunk over `limit`: seams where
/// counts do not add up exactly can leave one a token or two over.
fn enforce_limit(chunks: Vec<Chunk>, limit: usize, counter: &TokenCounter) -> Vec<Chunk> {
    let mut out = Vec::with_capacity(chunks.len());
    for chunk in chunks {
        if chunk.tokens <= limit {
            out.push(chunk);
            continue;
        }
        let mut atoms = Vec::new();
        split_at_tokens(
            &chunk.body,
            0..chunk.body.len(),
            limit,
            0,
            counter,
            &mut atoms,
        );
        for atom in atoms {
            if let Some(mut piece) = text_chunk(&chunk.body, atom.range, String::new(), counter) {
                piece.span = match (&chunk.span, &piece.span) {
                    (Some(outer), Some(inner)) => {
                        Some(outer.start + inner.start..outer.start + inner.end)
                    }
                    _ => None,
                };
                out.push(piece);
            }
        }
    }
    out
}

/// `counter.prefix_within(text, limit)`, looking only at a window a few times the expected size
/// instead of `128 · limit` bytes, so cutting a long text costs time linear in its length.
fn prefix_within_fast<'t>(text: &'t str, limit: usize, counter: &TokenCounter) -> &'t str {
    let mut window = limit.saturating_mul(8).max(64);
    loop {
        let end = floor_char_boundary(text, window);
        let head = &text[..end];
        if end >= text.len() || counter.exceeds(head, limit) {
            return counter.prefix_within(head, limit);
        }
        window = window.saturating_mul(4);
    }
}

#[cfg(test)]
mod tests;
