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

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::TokenCounter;
use crate::tokens::floor_char_boundary;

/// The smallest chunk size honoured: below it a header line or a JSON path alone could fill a
/// chunk. Smaller configured sizes are raised to this.
pub const MIN_CHUNK_TOKENS: usize = 32;

/// Tokens kept free for the blank line between a chunk's context and its body, plus one for a
/// merge across that seam: token counts of two texts do not always add up exactly.
const CONTEXT_SEPARATOR_TOKENS: usize = 3;

/// A header context longer than this share of the chunk is cut back to its innermost headers,
/// so that deep or very long headings cannot crowd out the content.
const MAX_CONTEXT_SHARE: usize = 4;

/// How a text is cut into chunks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ChunkStrategy {
    /// At structural boundaries (headers, paragraphs, lines, JSON elements) first, and at token
    /// boundaries only when a single unit is larger than a chunk. The default.
    #[default]
    Semantic,
    /// At fixed token windows with overlap, whatever the structure.
    Token,
}

impl ChunkStrategy {
    /// The name used in config files and tool arguments; stable, so it can key a cache.
    pub fn name(self) -> &'static str {
        match self {
            ChunkStrategy::Semantic => "semantic",
            ChunkStrategy::Token => "token",
        }
    }
}

/// What kind of text is being chunked, which decides where the semantic strategy may cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ContentKind {
    /// Markdown: headers and horizontal rules are section boundaries and header context.
    Markdown,
    /// A JSON document: cut at element boundaries. Text that does not parse is chunked as
    /// [`Text`](ContentKind::Text).
    Json,
    /// A log: whole lines, no header detection.
    Log,
    /// Any other text: treated as markdown, which degrades to paragraphs and lines when there
    /// are no headers.
    Text,
}

impl ContentKind {
    /// A cheap guess: JSON when the text parses as a JSON object or array, otherwise text.
    /// Callers that know better (a log tool, a markdown file) should say so instead.
    pub fn detect(text: &str) -> ContentKind {
        let first = text.trim_start().as_bytes().first();
        if matches!(first, Some(b'{' | b'[')) && serde_json::from_str::<Value>(text).is_ok() {
            ContentKind::Json
        } else {
            ContentKind::Text
        }
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
        (ChunkStrategy::Semantic, ContentKind::Log) => {
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

/// Header lines and section boundaries (headers and horizontal rules), outside code fences.
fn scan_markdown(text: &str) -> (Vec<Header>, Vec<usize>) {
    let mut headers = Vec::new();
    let mut breaks = Vec::new();
    let mut in_fence = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let start = offset;
        offset += line.len();
        let trimmed = line.trim();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        if let Some(level) = header_level(line) {
            headers.push(Header {
                start,
                level,
                line: trimmed.to_owned(),
            });
            breaks.push(start);
        } else if is_horizontal_rule(trimmed) {
            breaks.push(start);
        }
    }
    (headers, breaks)
}

/// The level of an ATX header line (`# ` to `###### `), if it is one.
fn header_level(line: &str) -> Option<usize> {
    let hashes = line.bytes().take_while(|&b| b == b'#').count();
    let after = line.as_bytes().get(hashes);
    ((1..=6).contains(&hashes) && matches!(after, Some(b' ' | b'\t'))).then_some(hashes)
}

/// `---`, `***` or `___` (three or more, spaces allowed) on a line of its own.
fn is_horizontal_rule(trimmed: &str) -> bool {
    let mut marks = trimmed.chars().filter(|c| !c.is_whitespace());
    let Some(first) = marks.next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_')
        && trimmed.chars().filter(|&c| c == first).count() >= 3
        && marks.all(|c| c == first)
}

/// `range` cut right before each of `points` that falls strictly inside it.
fn cut_before(range: Range<usize>, points: &[usize]) -> Vec<Range<usize>> {
    let mut parts = Vec::new();
    let mut start = range.start;
    for &point in points {
        if point > start && point < range.end {
            parts.push(start..point);
            start = point;
        }
    }
    parts.push(start..range.end);
    parts
}

/// `range` cut after each run of blank lines, so that every byte stays in exactly one part.
fn paragraphs(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut cuts = Vec::new();
    let mut offset = range.start;
    let mut blank_run = false;
    for line in text[range.clone()].split_inclusive('\n') {
        let blank = line.trim().is_empty();
        if blank_run && !blank {
            cuts.push(offset);
        }
        blank_run = blank;
        offset += line.len();
    }
    cut_before(range, &cuts)
}

/// `range` cut after each newline.
fn lines(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut parts = Vec::new();
    let mut start = range.start;
    for line in text[range.clone()].split_inclusive('\n') {
        parts.push(start..start + line.len());
        start += line.len();
    }
    parts
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

/// Chunks a parsed JSON document at element boundaries.
struct JsonChunker<'c> {
    limit: usize,
    overlap: usize,
    counter: &'c TokenCounter,
    out: Vec<Chunk>,
}

impl<'c> JsonChunker<'c> {
    fn new(limit: usize, overlap: usize, counter: &'c TokenCounter) -> Self {
        JsonChunker {
            limit,
            overlap,
            counter,
            out: Vec::new(),
        }
    }

    fn run(mut self, value: &Value) -> Vec<Chunk> {
        let compact = value.to_string();
        if self.counter.count_up_to(&compact, self.limit).is_some() {
            self.push("$".to_owned(), compact);
        } else {
            self.walk(value, "$");
        }
        self.out
    }

    fn walk(&mut self, value: &Value, path: &str) {
        match value {
            Value::Array(items) => {
                let members: Vec<(String, String, &Value)> = items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| (format!("{path}[{i}]"), item.to_string(), item))
                    .collect();
                self.group(path, members, items.len(), true);
            }
            Value::Object(map) => {
                let members: Vec<(String, String, &Value)> = map
                    .iter()
                    .map(|(key, item)| {
                        let key_json = Value::String(key.clone()).to_string();
                        (child_path(path, key), format!("{key_json}:{item}"), item)
                    })
                    .collect();
                self.group(path, members, map.len(), false);
            }
            scalar => {
                // One value larger than a chunk: only token boundaries are left.
                let text = scalar.to_string();
                let context = format!("{path} (part of one value)");
                let context_tokens = self.counter.count(&context) + CONTEXT_SEPARATOR_TOKENS;
                let limit = self.limit.saturating_sub(context_tokens).max(1);
                let mut atoms = Vec::new();
                split_at_tokens(
                    &text,
                    0..text.len(),
                    limit,
                    self.overlap,
                    self.counter,
                    &mut atoms,
                );
                for atom in atoms {
                    self.push(context.clone(), text[atom.range].to_owned());
                }
            }
        }
    }

    /// Packs consecutive members of one container into valid JSON bodies that fit, walking into
    /// any member too large for a chunk of its own.
    fn group(
        &mut self,
        path: &str,
        members: Vec<(String, String, &Value)>,
        total: usize,
        array: bool,
    ) {
        // The longest context this container can produce, so every group's context fits.
        let widest = group_context(
            path,
            total.saturating_sub(1),
            total.saturating_sub(1),
            total,
            array,
        );
        let cap = self
            .limit
            .saturating_sub(self.counter.count(&widest) + CONTEXT_SEPARATOR_TOKENS + 2)
            .max(1);
        let mut pending: Vec<(usize, String, usize)> = Vec::new();
        let mut pending_tokens = 0;
        for (i, (child, text, value)) in members.into_iter().enumerate() {
            // +1: the comma and newline between members.
            let tokens = self.counter.count_up_to(&text, cap).map(|t| t + 1);
            match tokens {
                Some(tokens) => {
                    if pending_tokens + tokens > cap && !pending.is_empty() {
                        self.emit(path, std::mem::take(&mut pending), total, array);
                        pending_tokens = 0;
                    }
                    pending.push((i, text, tokens));
                    pending_tokens += tokens;
                }
                None => {
                    if !pending.is_empty() {
                        self.emit(path, std::mem::take(&mut pending), total, array);
                        pending_tokens = 0;
                    }
                    self.walk(value, &child);
                }
            }
        }
        if !pending.is_empty() {
            self.emit(path, pending, total, array);
        }
    }

    /// Emits one group as a chunk, halving it when the exact count is over the limit.
    fn emit(&mut self, path: &str, group: Vec<(usize, String, usize)>, total: usize, array: bool) {
        let (first, last) = (group[0].0, group[group.len() - 1].0);
        let context = group_context(path, first, last, total, array);
        let inner: Vec<&str> = group.iter().map(|(_, text, _)| text.as_str()).collect();
        let (open, close) = if array { ("[", "]") } else { ("{", "}") };
        let body = format!("{open}{}{close}", inner.join(",\n"));
        let tokens =
            self.counter.count(&body) + self.counter.count(&context) + CONTEXT_SEPARATOR_TOKENS;
        if tokens > self.limit && group.len() > 1 {
            let mut head = group;
            let tail = head.split_off(head.len() / 2);
            self.emit(path, head, total, array);
            self.emit(path, tail, total, array);
            return;
        }
        self.push(context, body);
    }

    fn push(&mut self, context: String, body: String) {
        let mut chunk = Chunk::new(0, context, body);
        chunk.tokens = self.counter.count(&chunk.text());
        if chunk.tokens > self.limit {
            // Only a context that cannot fit beside a body gets here; the body fits alone.
            chunk.context.clear();
            chunk.tokens = self.counter.count(&chunk.body);
        }
        self.out.push(chunk);
    }
}

/// `$.key` for identifier-like keys, `$["odd key"]` for the rest.
fn child_path(path: &str, key: &str) -> String {
    let plain = !key.is_empty()
        && !key.starts_with(|c: char| c.is_ascii_digit())
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        format!("{path}.{key}")
    } else {
        format!("{path}[{}]", Value::String(key.to_owned()))
    }
}

/// The context of a group of members `first..=last` out of `total`.
fn group_context(path: &str, first: usize, last: usize, total: usize, array: bool) -> String {
    let unit = if array { "elements" } else { "members" };
    if first == 0 && last + 1 == total {
        format!("{path} (all {total} {unit})")
    } else if array {
        format!(
            "{path}[{first}..={last}] ({} of {total} {unit})",
            last - first + 1
        )
    } else {
        format!("{path} ({unit} {}..={} of {total})", first + 1, last + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter() -> TokenCounter {
        TokenCounter::default()
    }

    fn options(chunk_tokens: usize, overlap_tokens: usize) -> ChunkOptions {
        ChunkOptions::default()
            .with_chunk_tokens(chunk_tokens)
            .with_overlap_tokens(overlap_tokens)
    }

    fn markdown() -> String {
        let mut text = String::from("# Manual\n\nIntro paragraph.\n\n");
        for section in 0..6 {
            text.push_str(&format!("## Section {section}\n\n"));
            for para in 0..8 {
                text.push_str(&format!(
                    "Paragraph {para} of section {section} talks about pumps and valves at {para}0 PSI.\n\n"
                ));
            }
            text.push_str("---\n\n");
        }
        text
    }

    #[test]
    fn empty_text_gives_no_chunks() {
        assert!(chunk("", ContentKind::Text, &ChunkOptions::default(), &counter()).is_empty());
        assert!(
            chunk(
                " \n\n ",
                ContentKind::Log,
                &ChunkOptions::default(),
                &counter()
            )
            .is_empty()
        );
    }

    #[test]
    fn small_text_is_one_chunk_without_context() {
        let chunks = chunk(
            "just a line",
            ContentKind::Text,
            &ChunkOptions::default(),
            &counter(),
        );
        assert_eq!(chunks.len(), 1);
        assert_eq!(chunks[0].body, "just a line");
        assert_eq!(chunks[0].context, "");
    }

    #[test]
    fn markdown_chunks_carry_their_section_header() {
        let text = markdown();
        let chunks = chunk(&text, ContentKind::Markdown, &options(120, 20), &counter());
        assert!(chunks.len() > 6);
        for c in &chunks {
            assert!(c.tokens <= 120, "{} tokens", c.tokens);
            let has_section = c.context.contains("## Section") || c.body.starts_with("## Section");
            let is_intro = c.body.starts_with("# Manual");
            assert!(has_section || is_intro, "no header context in {c:?}");
        }
    }

    #[test]
    fn a_body_starting_with_a_header_drops_the_sibling_from_context() {
        let text = markdown();
        let chunks = chunk(&text, ContentKind::Markdown, &options(200, 20), &counter());
        let starts = chunks
            .iter()
            .find(|c| c.body.starts_with("## Section 3"))
            .unwrap();
        assert_eq!(starts.context, "# Manual");
    }

    #[test]
    fn headers_inside_code_fences_are_content() {
        let (headers, _) = scan_markdown("# Real\n```\n# not a header\n```\n");
        assert_eq!(headers.len(), 1);
        assert_eq!(headers[0].line, "# Real");
    }

    #[test]
    fn horizontal_rules_are_recognised() {
        assert!(is_horizontal_rule("---"));
        assert!(is_horizontal_rule("* * *"));
        assert!(!is_horizontal_rule("--"));
        assert!(!is_horizontal_rule("-- x"));
    }

    #[test]
    fn logs_are_cut_in_whole_lines() {
        let log: String = (0..500)
            .map(|i| {
                format!(
                    "2024-01-01 12:00:{:02} INFO worker-{i} processed batch {i}\n",
                    i % 60
                )
            })
            .collect();
        let chunks = chunk(&log, ContentKind::Log, &options(200, 50), &counter());
        assert!(chunks.len() > 5);
        for c in &chunks {
            assert!(c.tokens <= 200);
            for line in c.body.lines() {
                assert!(line.starts_with("2024-01-01"), "cut line: {line}");
            }
        }
    }

    #[test]
    fn one_huge_line_is_cut_at_tokens_with_overlap() {
        let line: String = (0..3000).map(|i| format!("w{i} ")).collect();
        let chunks = chunk(&line, ContentKind::Log, &options(200, 40), &counter());
        assert!(chunks.len() > 3);
        let spans: Vec<_> = chunks.iter().map(|c| c.span.clone().unwrap()).collect();
        for pair in spans.windows(2) {
            assert!(pair[1].start < pair[0].end, "no overlap between {pair:?}");
        }
    }

    #[test]
    fn token_strategy_ignores_headers() {
        let text = markdown();
        let opts = options(100, 10).with_strategy(ChunkStrategy::Token);
        let chunks = chunk(&text, ContentKind::Markdown, &opts, &counter());
        assert!(
            chunks
                .iter()
                .all(|c| c.context.is_empty() && c.tokens <= 100)
        );
    }

    #[test]
    fn json_array_chunks_are_valid_json_groups_of_whole_records() {
        let records: Vec<Value> = (0..300)
            .map(|i| serde_json::json!({"id": i, "name": format!("item-{i}"), "ok": i % 7 != 0}))
            .collect();
        let text =
            serde_json::to_string_pretty(&serde_json::json!({"items": records, "total": 300}))
                .unwrap();
        let chunks = chunk(&text, ContentKind::Json, &options(300, 20), &counter());
        assert!(chunks.len() > 3);
        let mut seen = Vec::new();
        for c in &chunks {
            assert!(c.tokens <= 300);
            let body: Value = serde_json::from_str(&c.body).expect("chunk body is JSON");
            if c.context.starts_with("$.items") {
                seen.extend(body.as_array().unwrap().iter().cloned());
            }
        }
        assert_eq!(seen, records);
    }

    #[test]
    fn json_path_names_the_elements() {
        let text = serde_json::to_string(&(0..400).collect::<Vec<_>>()).unwrap();
        let chunks = chunk(&text, ContentKind::Json, &options(100, 10), &counter());
        assert!(
            chunks[0].context.starts_with("$[0..="),
            "{}",
            chunks[0].context
        );
        assert!(chunks[0].context.ends_with("of 400 elements)"));
    }

    #[test]
    fn a_huge_json_string_is_cut_with_its_path() {
        let text = serde_json::json!({"blob": "x y ".repeat(2000)}).to_string();
        let chunks = chunk(&text, ContentKind::Json, &options(100, 10), &counter());
        assert!(chunks.len() > 5);
        assert!(
            chunks
                .iter()
                .all(|c| c.context == "$.blob (part of one value)" && c.tokens <= 100)
        );
    }

    #[test]
    fn invalid_json_falls_back_to_text() {
        let text = "{ not json\n".repeat(200);
        let chunks = chunk(&text, ContentKind::Json, &options(100, 10), &counter());
        assert!(chunks.len() > 1 && chunks.iter().all(|c| c.span.is_some()));
    }

    #[test]
    fn detect_recognises_json() {
        assert_eq!(ContentKind::detect(" [1, 2]"), ContentKind::Json);
        assert_eq!(ContentKind::detect("[1, 2"), ContentKind::Text);
        assert_eq!(ContentKind::detect("hello"), ContentKind::Text);
    }

    #[test]
    fn a_tiny_chunk_size_is_raised_to_the_minimum() {
        let text = "word ".repeat(500);
        let chunks = chunk(&text, ContentKind::Text, &options(1, 0), &counter());
        assert!(chunks.iter().all(|c| c.tokens <= MIN_CHUNK_TOKENS));
        assert!(chunks.len() > 10);
    }

    #[test]
    fn indexes_follow_the_order() {
        let text = markdown();
        let chunks = chunk(&text, ContentKind::Markdown, &options(100, 10), &counter());
        assert!(chunks.iter().enumerate().all(|(i, c)| c.index == i));
    }
}
