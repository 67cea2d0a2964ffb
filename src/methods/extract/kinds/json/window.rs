//! Query windows in a long string: when the query's words sit in the middle of a long value
//! (an API's documentation, a description), its head alone loses them. The string keeps a
//! shorter head and the sentences that hold the most of the query's words, each marked off by
//! an ellipsis, in their original order.

use crate::methods::extract::query::Query;
use crate::methods::extract::terms::for_each_word;

/// Share of the cap the head keeps when windows follow it: what the string is about.
const HEAD_SHARE: usize = 3;
/// A sentence longer than this is cut to its part around its first query word.
const MAX_WINDOW_BYTES: usize = 240;
/// Bytes kept before a sentence's first query word when it is cut.
const LEAD_BYTES: usize = 60;
/// A sentence must hold at least this many distinct query words (or one exact string).
const MIN_WORDS: usize = 2;
/// A window past the head is worth its room only when a sentence there holds this many.
const MIN_PAST_WORDS: usize = 3;
/// Separator between the head and the windows, and between windows that are not adjacent.
const GAP: &str = " … ";

/// `s` shortened to about `cap` bytes as its head and the sentences of the rest that hold the
/// most query words, or `None` when no sentence past the usual head (its first `cap` bytes)
/// holds more of them than the best sentence in it: then the head answers as well.
pub(super) fn windowed(s: &str, cap: usize, query: &Query) -> Option<String> {
    let head_end = crate::tokens::floor_char_boundary(s, cap / HEAD_SHARE);
    let usual_end = crate::tokens::floor_char_boundary(s, cap);
    let sentences = sentences(s, head_end);
    let mut buf = String::new();
    let mut scored: Vec<(usize, usize, usize)> = Vec::new();
    let mut best_in_usual = sentence_score(&s[..head_end], query, &mut buf);
    let mut best_past = 0;
    for (i, &(from, to)) in sentences.iter().enumerate() {
        let score = sentence_score(&s[from..to], query, &mut buf);
        if to <= usual_end {
            best_in_usual = best_in_usual.max(score);
        } else {
            best_past = best_past.max(score);
        }
        if score >= MIN_WORDS {
            scored.push((score, i, to - from));
        }
    }
    if best_past < MIN_PAST_WORDS || best_past <= best_in_usual {
        return None;
    }
    // The richest sentences first; among equals, the earlier.
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    let mut room = cap.saturating_sub(head_end);
    let mut kept: Vec<usize> = Vec::new();
    for (_, i, len) in scored {
        let len = len.min(MAX_WINDOW_BYTES) + GAP.len();
        if len <= room {
            room -= len;
            kept.push(i);
        }
    }
    if kept.is_empty() {
        return None;
    }
    kept.sort_unstable();
    let mut out = s[..head_end].to_owned();
    let mut last_end = head_end;
    for i in kept {
        let (from, to) = sentences[i];
        let (from, to) = cut(s, from, to, query);
        if from > last_end {
            out.push_str(GAP);
        }
        out.push_str(s[from.max(last_end)..to].trim_start());
        last_end = to;
    }
    Some(out)
}

/// How many distinct query words `text` holds, and two more when it holds an exact string.
fn sentence_score(text: &str, query: &Query, buf: &mut String) -> usize {
    let mut seen: Vec<usize> = Vec::new();
    for_each_word(text, buf, |w| {
        if let Some(k) = query.word_index(w)
            && !seen.contains(&k)
        {
            seen.push(k);
        }
    });
    seen.len() + 2 * usize::from(query.mentions(text))
}

/// Sentence spans of `s` from `start`: each ends after `. `, `? `, `! `, `; `, a line break or
/// a closing paragraph or list tag.
fn sentences(s: &str, start: usize) -> Vec<(usize, usize)> {
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

/// A sentence span cut to [`MAX_WINDOW_BYTES`] from a little before its first query word.
fn cut(s: &str, from: usize, to: usize, query: &Query) -> (usize, usize) {
    if to - from <= MAX_WINDOW_BYTES {
        return (from, to);
    }
    let text = &s[from..to];
    let mut buf = String::new();
    let mut at = 0;
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
                at = w;
                break;
            }
        }
    }
    let start = crate::tokens::floor_char_boundary(s, from + at.saturating_sub(LEAD_BYTES));
    let end = crate::tokens::floor_char_boundary(s, (start + MAX_WINDOW_BYTES).min(to));
    (start, end)
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
                &query("how large may an upload be unless configured?")
            )
            .is_none()
        );
    }
}
