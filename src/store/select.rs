//! Which part of an original to return, and cutting it out as a page that says how to go on.
//!
//! Lines address ordinary text; characters address anything, including one very long line (a
//! minified JSON response), so every byte of an original is reachable by paging; a pattern
//! returns a window around each match with its line number and character offset.

use crate::error::RetrieveError;

/// Characters of context either side of a pattern match, unless asked otherwise.
pub const DEFAULT_PATTERN_CONTEXT: usize = 200;

/// Which part of an original to return.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Selection {
    /// All of it.
    #[default]
    All,
    /// Lines `start..=end`, 1-based; `end` past the last line means to the end.
    Lines {
        /// The first line, from 1.
        start: usize,
        /// The last line, inclusive.
        end: usize,
    },
    /// `length` characters (Unicode scalar values) from character `offset`, counted from 0
    /// over the whole original, newlines included.
    Chars {
        /// The first character, from 0.
        offset: usize,
        /// How many characters.
        length: usize,
    },
    /// A window of `context` characters either side of each occurrence of `pattern` (literal
    /// text), within its line, with the match's line number and character offset.
    Pattern {
        /// The text to look for.
        pattern: String,
        /// Characters of context before and after each match.
        context: usize,
        /// Whether case is ignored (Unicode case folding); by default it is not.
        ignore_case: bool,
        /// Matches skipped: the ones earlier pages returned.
        skip: usize,
        /// The most matches returned.
        max_matches: usize,
    },
}

/// A part of an original, with where it sits in the whole and how to ask for what follows.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Page {
    /// The selected text: lines and characters exactly as in the original; pattern matches
    /// as numbered windows.
    pub text: String,
    /// What this page holds, for a footer ("lines 1-200", "characters 0-69,999", "matches 1-20
    /// of 31").
    pub range: String,
    /// Lines in the whole original.
    pub total_lines: usize,
    /// Characters in the whole original.
    pub total_chars: usize,
    /// The selection that continues this page; `None` when the page reaches the end.
    pub next: Option<Selection>,
}

/// Cuts `selection` out of `text` as one page. `fits` returns how many bytes of its argument
/// fit the page's size limit; a selection that does not fit whole is cut where the limit
/// falls (at a line or match boundary when one fits) and the page's `next` continues it.
pub(crate) fn page(
    text: &str,
    selection: &Selection,
    fits: &dyn Fn(&str) -> usize,
) -> Result<Page, RetrieveError> {
    let total_lines = text.lines().count();
    let total_chars = text.chars().count();
    let page = |body: String, range: String, next| Page {
        text: body,
        range,
        total_lines,
        total_chars,
        next,
    };
    match selection {
        Selection::All => chars(text, 0, total_chars, total_chars, fits, page),
        Selection::Chars { offset, length } => {
            if *offset >= total_chars.max(1) || *length == 0 {
                return Err(bad(format!(
                    "characters {offset}..+{length}: the original has {total_chars} characters \
                     (offsets count from 0) and the length must be at least 1"
                )));
            }
            chars(text, *offset, *length, total_chars, fits, page)
        }
        Selection::Lines { start, end } => {
            if *start == 0 || end < start {
                return Err(bad(format!(
                    "lines {start}-{end}: lines are numbered from 1 and the range must not be empty"
                )));
            }
            if *start > total_lines {
                return Err(bad(format!(
                    "line {start} is past the end: the original has {total_lines} lines"
                )));
            }
            let begin = line_start(text, *start);
            let wanted_end = (*end).min(total_lines);
            let stop = line_start(text, wanted_end + 1);
            let wanted = &text[begin..stop];
            let cut = fits(wanted);
            if cut >= wanted.len() {
                let next = (wanted_end < total_lines).then(|| Selection::Lines {
                    start: wanted_end + 1,
                    end: wanted_end.saturating_add(end - start + 1),
                });
                return Ok(page(
                    wanted.to_owned(),
                    format!("lines {start}-{wanted_end}"),
                    next,
                ));
            }
            match wanted[..cut].rfind('\n') {
                Some(newline) => {
                    let body = &wanted[..=newline];
                    let last = start + body.matches('\n').count() - 1;
                    let next = Selection::Lines {
                        start: last + 1,
                        end: (*end).max(last + 1),
                    };
                    Ok(page(
                        body.to_owned(),
                        format!("lines {start}-{last}"),
                        Some(next),
                    ))
                }
                // Not even one line fits: page through this line by characters.
                None => {
                    let offset = text[..begin].chars().count();
                    let line_chars = wanted.lines().next().unwrap_or("").chars().count();
                    chars(text, offset, line_chars.max(1), total_chars, fits, page)
                }
            }
        }
        Selection::Pattern {
            pattern,
            context,
            ignore_case,
            skip,
            max_matches,
        } => {
            let (body, shown, total, more) = matches(
                text,
                pattern,
                *context,
                *ignore_case,
                *skip,
                *max_matches,
                fits,
            )?;
            let range = if shown == 0 {
                format!("no match after the first {skip} of {total}")
            } else {
                format!("matches {}-{} of {total}", skip + 1, skip + shown)
            };
            let next = more.then(|| Selection::Pattern {
                pattern: pattern.clone(),
                context: *context,
                ignore_case: *ignore_case,
                skip: skip + shown,
                max_matches: *max_matches,
            });
            Ok(page(body, range, next))
        }
    }
}

/// The page of `length` characters from character `offset`.
fn chars(
    text: &str,
    offset: usize,
    length: usize,
    total_chars: usize,
    fits: &dyn Fn(&str) -> usize,
    page: impl Fn(String, String, Option<Selection>) -> Page,
) -> Result<Page, RetrieveError> {
    let begin = char_to_byte(text, 0, offset);
    let end = char_to_byte(text, begin, length);
    let wanted = &text[begin..end];
    let mut cut = fits(wanted).min(wanted.len());
    while !wanted.is_char_boundary(cut) {
        cut -= 1;
    }
    // A page always advances, even when one character is over the limit.
    if cut == 0 {
        cut = wanted.chars().next().map_or(0, char::len_utf8);
    }
    let body = &wanted[..cut];
    let taken = body.chars().count();
    let last = offset + taken;
    let next = if last >= total_chars {
        None
    } else if cut < wanted.len() {
        Some(Selection::Chars {
            offset: last,
            length: length - taken,
        })
    } else {
        Some(Selection::Chars {
            offset: last,
            length,
        })
    };
    let range = format!("characters {offset}-{}", last.saturating_sub(1));
    Ok(page(body.to_owned(), range, next))
}

/// The byte index `count` characters after byte index `from` (or the end).
fn char_to_byte(text: &str, from: usize, count: usize) -> usize {
    text[from..]
        .char_indices()
        .nth(count)
        .map_or(text.len(), |(i, _)| from + i)
}

/// The byte index where 1-based line `line` starts (the end when past the last line).
fn line_start(text: &str, line: usize) -> usize {
    if line <= 1 {
        return 0;
    }
    text.match_indices('\n')
        .nth(line - 2)
        .map_or(text.len(), |(i, _)| i + 1)
}

/// The numbered windows around matches `skip..skip + max`, as many as fit; returns the text,
/// how many it shows, how many matches there are in all, and whether more follow.
fn matches(
    text: &str,
    pattern: &str,
    context: usize,
    ignore_case: bool,
    skip: usize,
    max: usize,
    fits: &dyn Fn(&str) -> usize,
) -> Result<(String, usize, usize, bool), RetrieveError> {
    if pattern.is_empty() {
        return Err(bad("the pattern is empty".into()));
    }
    let finder = regex::RegexBuilder::new(&regex::escape(pattern))
        .case_insensitive(ignore_case)
        .size_limit(1 << 20)
        .build()
        .map_err(|e| bad(format!("the pattern cannot be searched for: {e}")))?;
    // Line numbers and character offsets are counted incrementally from the previous match.
    let (mut line, mut chars_before, mut scanned) = (1usize, 0usize, 0usize);
    let mut out = String::new();
    // Where each block ends in `out`, so the page can be cut at a block boundary.
    let mut ends = Vec::new();
    let mut total = 0usize;
    for found in finder.find_iter(text) {
        total += 1;
        if total <= skip || ends.len() >= max.max(1) {
            continue;
        }
        let before = &text[scanned..found.start()];
        line += before.matches('\n').count();
        chars_before += before.chars().count();
        scanned = found.start();
        let line_begin = text[..found.start()].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[found.end()..]
            .find('\n')
            .map_or(text.len(), |i| found.end() + i);
        let from = back_chars(text, found.start(), context).max(line_begin);
        let to = char_to_byte(text, found.end(), context).min(line_end);
        out.push_str(&format!(
            "[match {} at line {line}, character {chars_before}]\n{}{}{}\n",
            total,
            if from > line_begin { "…" } else { "" },
            &text[from..to],
            if to < line_end { "…" } else { "" },
        ));
        ends.push(out.len());
    }
    // One count for the whole page: the blocks that fit stay, and at least the first.
    let fit = fits(&out);
    let shown = ends
        .iter()
        .take_while(|&&end| end <= fit)
        .count()
        .max(1)
        .min(ends.len());
    if let Some(&end) = shown.checked_sub(1).and_then(|last| ends.get(last)) {
        out.truncate(end);
    }
    if total == 0 {
        out.push_str(&format!("[no match for `{pattern}`]\n"));
    }
    Ok((out, shown, total, skip + shown < total))
}

/// The byte index `count` characters before byte index `at` (or the start).
fn back_chars(text: &str, at: usize, count: usize) -> usize {
    text[..at]
        .char_indices()
        .rev()
        .nth(count.saturating_sub(1))
        .map_or(0, |(i, _)| if count == 0 { at } else { i })
}

fn bad(message: String) -> RetrieveError {
    RetrieveError::BadSelection(message)
}

/// Applies a selection to a text, whole: no size limit.
pub(crate) fn select(text: &str, selection: &Selection) -> Result<String, RetrieveError> {
    page(text, selection, &|part| part.len()).map(|page| page.text)
}
