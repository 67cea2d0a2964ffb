//! Query windows in a long text: when the query's terms sit past the head of a long string or
//! unit (an API's documentation, a line of minified code, a log line with a JSON payload, a CSV
//! cell), its head alone loses them, and a blind cut keeps them without what they belong to.
//! The windowed form keeps a shorter head (what the text is: its timestamp, key or element)
//! and, past it, the sentences that hold the query's terms, each cut to a bounded window around
//! its first term and marked off by ` … `, in their original order.

use super::query::Query;
use super::terms::for_each_word;

/// Separator between the head and the windows, and between windows that are not adjacent.
pub(crate) const GAP: &str = " … ";
/// Share of the cap the head keeps when windows follow it: what the text is about.
const HEAD_SHARE: usize = 3;
/// A sentence longer than this is cut to its part around its first query term.
const MAX_WINDOW_BYTES: usize = 240;
/// A window is worth its room only when it can show at least this much around its term.
const MIN_WINDOW_BYTES: usize = 40;
/// Bytes kept before a sentence's first query term when it is cut (at most a quarter of the
/// window when the room is small).
const LEAD_BYTES: usize = 60;
/// What one exact query term (an identifier, number, version, path) counts in a sentence's
/// score, beside one for each distinct query word: a rare exact term ranks its sentence first.
const EXACT_SCORE: usize = 2;

/// When a text is worth windowing, by the kind of text it is.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rules {
    /// A sentence needs at least this score (distinct query words, [`EXACT_SCORE`] for an exact
    /// term) to be a window.
    min_score: usize,
    /// The best sentence past the usual head needs at least this score for any window.
    min_past: usize,
    /// Windows only when the best sentence past the usual head scores more than the best one in
    /// it: a string's head often answers as well, while a long unit's matches past its head
    /// have no other way to keep their context.
    must_beat_head: bool,
    /// `;`, `{` and `}` end a sentence even when no space follows (code, data), not just prose's
    /// `. `, `? `, `! `, `; `, line breaks and closing paragraph or list tags.
    statements: bool,
    /// Only a sentence holding an exact term (an identifier, number, version or path the query
    /// names) is a window: words alone are common in long command lines and payloads, whose
    /// first piece holds them as well.
    exact_only: bool,
    /// A window may be cut down to this many bytes to fit the room left (never below what its
    /// sentence holds): small in a unit, whose matches have no other way to keep their
    /// context; the whole [`MAX_WINDOW_BYTES`] in a string, whose head answers as well.
    min_window: usize,
}

/// A long string value of a JSON document (prose: documentation, a description).
pub(crate) const PROSE: Rules = Rules {
    min_score: 2,
    min_past: 3,
    must_beat_head: true,
    statements: false,
    exact_only: false,
    min_window: MAX_WINDOW_BYTES,
};

/// A unit over the size cap of any kind: a line of minified code, a log line with a payload, a
/// paragraph, a CSV row with a long cell. A sentence holding an exact term is worth a window.
pub(crate) const UNIT: Rules = Rules {
    min_score: EXACT_SCORE,
    min_past: EXACT_SCORE,
    must_beat_head: false,
    statements: true,
    exact_only: true,
    min_window: MIN_WINDOW_BYTES,
};

/// The parts of a text its windowed form keeps: the head `..head_end`, and the windows, in
/// order and apart from one another and from the head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Windows {
    /// Where the head ends.
    pub(crate) head_end: usize,
    /// The windows' byte ranges.
    pub(crate) spans: Vec<(usize, usize)>,
}

impl Windows {
    /// The windowed form of `s`: its head, then each window after [`GAP`] (none between
    /// windows that touch), without the whitespace a window starts with.
    pub(crate) fn render(&self, s: &str) -> String {
        let mut out = s[..self.head_end].to_owned();
        let mut last_end = self.head_end;
        for &(from, to) in &self.spans {
            if from > last_end {
                out.push_str(GAP);
            }
            out.push_str(s[from.max(last_end)..to].trim_start());
            last_end = to;
        }
        out
    }
}

/// `s` shortened to about `cap` bytes as its head and the sentences of the rest that hold the
/// most query words, or `None` when no window is worth it by `rules`.
pub(crate) fn windowed(s: &str, cap: usize, query: &Query, rules: Rules) -> Option<String> {
    find(s, cap, query, rules).map(|w| w.render(s))
}

/// The head and windows of `s` within about `cap` bytes (the rendered form, markers included),
/// or `None` when no sentence past the usual head (its first `cap` bytes) is worth a window by
/// `rules`.
pub(crate) fn find(s: &str, cap: usize, query: &Query, rules: Rules) -> Option<Windows> {
    let head_end = token_end(
        s,
        0,
        crate::tokens::floor_char_boundary(s, cap / HEAD_SHARE),
    );
    let usual_end = crate::tokens::floor_char_boundary(s, cap);
    let sentences = sentences(s, head_end, rules.statements);
    let mut buf = String::new();
    let mut scored: Vec<(usize, usize)> = Vec::new();
    let mut best_in_usual = sentence_score(&s[..head_end], query, &mut buf, rules.exact_only);
    let mut best_past = 0;
    for (i, &(from, to)) in sentences.iter().enumerate() {
        let score = sentence_score(&s[from..to], query, &mut buf, rules.exact_only);
        if to <= usual_end {
            best_in_usual = best_in_usual.max(score);
        } else {
            best_past = best_past.max(score);
        }
        if score >= rules.min_score {
            scored.push((score, i));
        }
    }
    if best_past < rules.min_past || (rules.must_beat_head && best_past <= best_in_usual) {
        return None;
    }
    // The richest sentences first; among equals, the earlier.
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut room = cap.saturating_sub(head_end);
    let mut kept: Vec<(usize, usize)> = Vec::new();
    for (_, i) in scored {
        let (from, to) = sentences[i];
        let size = (to - from)
            .min(MAX_WINDOW_BYTES)
            .min(room.saturating_sub(GAP.len()));
        if size < rules.min_window.min(to - from) {
            continue;
        }
        let window = cut(s, from, to, size, query);
        room -= window.1 - window.0 + GAP.len();
        kept.push(window);
    }
    if kept.is_empty() {
        return None;
    }
    kept.sort_unstable();
    Some(Windows {
        head_end,
        spans: kept,
    })
}

/// How many distinct query words `text` holds, and [`EXACT_SCORE`] more when it holds an exact
/// string; with `exact_only`, 0 when it holds none.
fn sentence_score(text: &str, query: &Query, buf: &mut String, exact_only: bool) -> usize {
    let exact = query.mentions(text);
    if exact_only && !exact {
        return 0;
    }
    let mut seen: Vec<usize> = Vec::new();
    for_each_word(text, buf, |w| {
        if let Some(k) = query.word_index(w)
            && !seen.contains(&k)
        {
            seen.push(k);
        }
    });
    seen.len() + EXACT_SCORE * usize::from(exact)
}

/// Sentence spans of `s` from `start`: each ends after `. `, `? `, `! `, `; `, a line break or
/// a closing paragraph or list tag; with `statements`, after any `;`, `{` or `}` too.
fn sentences(s: &str, start: usize, statements: bool) -> Vec<(usize, usize)> {
    let bytes = s.as_bytes();
    let mut spans = Vec::new();
    let mut from = start;
    let mut i = start;
    while i < bytes.len() {
        let end = match bytes[i] {
            b'.' | b'?' | b'!' | b';'
                if bytes.get(i + 1).is_some_and(|b| b.is_ascii_whitespace()) =>
            {
                Some(i + 1)
            }
            b';' | b'{' | b'}' if statements => Some(i + 1),
            b'\n' => Some(i + 1),
            b'<' if s[i..].starts_with("</p>") || s[i..].starts_with("</li>") => {
                Some(i + s[i..].find('>').map_or(1, |e| e + 1))
            }
            _ => None,
        };
        if let Some(end) = end {
            if end > from {
                spans.push((from, end));
            }
            from = end;
            i = end;
        } else {
            i += 1;
        }
    }
    if from < bytes.len() {
        spans.push((from, bytes.len()));
    }
    spans
}

/// A sentence span cut to `size` bytes from a little before its first query term (an exact
/// one if it holds one), its ends moved to token boundaries when one is near.
fn cut(s: &str, from: usize, to: usize, size: usize, query: &Query) -> (usize, usize) {
    if to - from <= size {
        return (from, to);
    }
    let text = &s[from..to];
    let at = query
        .first_exact_match(text)
        .or_else(|| first_word_match(text, query))
        .unwrap_or(0);
    let lead = LEAD_BYTES.min(size / 4);
    let start = crate::tokens::floor_char_boundary(s, from + at.saturating_sub(lead));
    let end = crate::tokens::floor_char_boundary(s, (start + size).min(to));
    // A window starts after a token boundary and ends at one, if that leaves most of it.
    let start = token_start(s, start, from + at);
    let end = token_end(s, start, end).max(from + at + 1).min(end);
    (start, crate::tokens::floor_char_boundary(s, end))
}

/// Where the first word of `text` that is a query word starts.
fn first_word_match(text: &str, query: &Query) -> Option<usize> {
    let mut buf = String::new();
    let mut word_start = None;
    for (i, c) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        if c.is_alphanumeric() {
            word_start.get_or_insert(i);
            continue;
        }
        if let Some(w) = word_start.take() {
            let mut hit = false;
            for_each_word(&text[w..i], &mut buf, |word| {
                hit |= query.word_index(word).is_some();
            });
            if hit {
                return Some(w);
            }
        }
    }
    None
}

/// Whether `b` separates tokens: whitespace or punctuation that is not part of a name.
fn is_boundary(b: u8) -> bool {
    b.is_ascii_whitespace() || (b.is_ascii_punctuation() && !b"_-.$@/".contains(&b))
}

/// `start` moved forward past the partial token it falls in, when a boundary comes before
/// `limit` (the term the window is for).
fn token_start(s: &str, start: usize, limit: usize) -> usize {
    let bytes = s.as_bytes();
    if start == 0 || is_boundary(bytes[start - 1]) {
        return start;
    }
    match bytes[start..limit.max(start)]
        .iter()
        .position(|&b| is_boundary(b))
    {
        Some(i) => start + i + 1,
        None => start,
    }
}

/// `end` moved back to the end of the last whole token of `start..end`, when one ends in its
/// last quarter.
fn token_end(s: &str, start: usize, end: usize) -> usize {
    let bytes = s.as_bytes();
    if end >= bytes.len() || end <= start || is_boundary(bytes[end]) {
        return end;
    }
    match bytes[start..end].iter().rposition(|&b| is_boundary(b)) {
        Some(i) if (i + 1) * 4 >= (end - start) * 3 => start + i + 1,
        _ => end,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;

    fn query(text: &str) -> Query {
        Query::from_hints(&Hints::new().with_query(text)).unwrap()
    }

    #[test]
    fn the_sentence_holding_the_query_words_is_kept_past_the_head() {
        let filler =
            "This paragraph describes an unrelated part of the service in detail. ".repeat(12);
        let doc = format!(
            "<p>The upload to store.</p> <p>{filler}</p> <p>Unless configured, an upload may hold at most 64 MiB in size.</p> <p>{filler}</p>"
        );
        let out = windowed(
            &doc,
            400,
            &query("how large in size may an upload be unless configured?"),
            PROSE,
        )
        .unwrap();
        assert!(out.starts_with("<p>The upload to store."), "{out}");
        assert!(
            out.contains("Unless configured, an upload may hold at most 64 MiB in size."),
            "{out}"
        );
        assert!(out.contains(" … "), "{out}");
        assert!(out.len() <= 400, "{}", out.len());
    }

    #[test]
    fn no_window_without_enough_query_words() {
        let doc = "A sentence about nothing in particular. ".repeat(30);
        assert!(
            windowed(
                &doc,
                300,
                &query("how large may an upload be unless configured?"),
                PROSE
            )
            .is_none()
        );
    }

    /// A line of minified code: the statement that names the query's identifier is kept whole
    /// (it is short), after the line's head, rather than a blind piece of the middle.
    #[test]
    fn a_statement_of_minified_code_is_a_window() {
        let filler = "var a=b.c(d);if(e){f.g(h)}".repeat(80);
        let line = format!(
            "(function(){{'use strict';{filler}if(n<this._charThreshold){{this._removeFlag(1)}}{filler}}})();"
        );
        let w = find(
            &line,
            300,
            &query("what happens below _charThreshold?"),
            UNIT,
        )
        .unwrap();
        let out = w.render(&line);
        assert!(out.starts_with("(function(){'use strict';"), "{out}");
        assert!(out.contains(" … if(n<this._charThreshold){"), "{out}");
        assert!(out.len() <= 300, "{}: {out}", out.len());
    }

    /// A long log line with a JSON payload: the window around the queried value keeps its key,
    /// and starts and ends between tokens.
    #[test]
    fn a_window_in_a_payload_keeps_the_key_and_whole_tokens() {
        let fields: String = (0..200)
            .map(|i| format!("\"field{i}\":\"value number {i}\","))
            .collect();
        let line = format!(
            "2024-03-01T12:00:00Z WARN request failed payload={{{fields}\"trace_id\":\"ab12-cd34-ef56\",{fields}}}"
        );
        let w = find(
            &line,
            240,
            &query("which trace_id did the request have?"),
            UNIT,
        )
        .unwrap();
        let out = w.render(&line);
        assert!(
            out.starts_with("2024-03-01T12:00:00Z WARN request"),
            "{out}"
        );
        assert!(out.contains("\"trace_id\":\"ab12-cd34-ef56\""), "{out}");
        for &(from, to) in &w.spans {
            assert!(is_boundary(line.as_bytes()[from - 1]), "{out}");
            let bytes = line.as_bytes();
            assert!(
                to == line.len() || is_boundary(bytes[to - 1]) || is_boundary(bytes[to]),
                "{out}"
            );
        }
        assert!(out.len() <= 240, "{}: {out}", out.len());
    }

    /// Terms only in the usual head: a blind cut keeps them, no window is needed.
    #[test]
    fn no_window_when_the_terms_are_all_in_the_head() {
        let line = format!("trace_id=ab12 {}", "x=1; ".repeat(400));
        assert!(find(&line, 300, &query("which trace_id?"), UNIT).is_none());
    }
}
