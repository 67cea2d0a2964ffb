//! Where text may be cut: markdown headers and section breaks outside code fences, and byte
//! ranges split at those points, at blank-line runs, or at newlines.

use std::ops::Range;

use super::Header;

/// Header lines and section boundaries (headers and horizontal rules), outside code fences.
pub(super) fn scan_markdown(text: &str) -> (Vec<Header>, Vec<usize>) {
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
pub(super) fn is_horizontal_rule(trimmed: &str) -> bool {
    let mut marks = trimmed.chars().filter(|c| !c.is_whitespace());
    let Some(first) = marks.next() else {
        return false;
    };
    matches!(first, '-' | '*' | '_')
        && trimmed.chars().filter(|&c| c == first).count() >= 3
        && marks.all(|c| c == first)
}

/// `range` cut right before each of `points` that falls strictly inside it.
pub(super) fn cut_before(range: Range<usize>, points: &[usize]) -> Vec<Range<usize>> {
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
pub(super) fn paragraphs(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
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
pub(super) fn lines(text: &str, range: Range<usize>) -> Vec<Range<usize>> {
    let mut parts = Vec::new();
    let mut start = range.start;
    for line in text[range.clone()].split_inclusive('\n') {
        parts.push(start..start + line.len());
        start += line.len();
    }
    parts
}
