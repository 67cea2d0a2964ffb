//! A line's severity read from its words when it states no log level: `error:`, `FAILED`,
//! an exception's name, TAP's `not ok`, but not `0 errors` or `test_indexerrors.py`.

use std::ops::Range;

use super::{Level, byte_runs};

/// Severity from the words of a line that has no explicit level.
pub(crate) fn level_from_words(line: &str) -> Level {
    // TAP's failed assertion (`not ok 358 should be deeply equivalent`) says so in no word.
    if is_tap_result(line, "not ok ") {
        return Level::Error;
    }
    // The one-letter tags of apt, dpkg and lintian: `E: …`, `W: …`, and the notes that explain
    // them (`N:   A manual page provoked warnings …`), which are about warnings, not ones.
    match line.as_bytes() {
        [b'E', b':', b' ', ..] => return Level::Error,
        [b'W', b':', b' ', ..] => return Level::Warn,
        [b'N' | b'I', b':', ..] => return Level::None,
        _ => {}
    }
    if points_out_a_mismatch(line) {
        return Level::Warn;
    }
    let bytes = line.as_bytes();
    let mut level = Level::None;
    // An error word does not settle the level at once: a severity the line states as a tag
    // further on (`SC2249 (info): … exits with error`, `warning: … 'error' …`) is its level,
    // whatever its message's words say. One pass either way.
    let mut says_failed = false;
    for Range { start, end: i } in byte_runs(bytes, u8::is_ascii_alphabetic) {
        if let Some(stated) = stated_severity(bytes, start, i) {
            return stated;
        }
        if says_failed {
            continue;
        }
        // "error" inside a path or an identifier (`test_errors.py`, `src/error.rs`,
        // `on_error`) names a thing; it says nothing about how the line went.
        if is_part_of_name(bytes, start, i) {
            continue;
        }
        // `TypeError: …`, `AssertionError: …`: an exception raised, as Python and Java name it,
        // or as Node does with its code (`AssertionError [ERR_ASSERTION]: …`).
        if (bytes.get(i) == Some(&b':') || has_error_code(&bytes[i..]))
            && is_exception_name(&line[start..i])
        {
            says_failed = true;
            continue;
        }
        // Every other word of interest is 4 to 10 letters long; most words are not.
        let len = i - start;
        if !(4..=10).contains(&len) {
            continue;
        }
        let mut word = [0u8; 10];
        for (w, b) in word.iter_mut().zip(&bytes[start..i]) {
            *w = b.to_ascii_lowercase();
        }
        match &word[..len] {
            b"error" | b"errors" | b"fatal" | b"exception" | b"traceback" | b"panic"
            | b"panicked" | b"failed" | b"failure" | b"fail" | b"critical" | b"severe"
            | b"unmet" | b"abort" | b"aborted" | b"segfault" | b"denied" | b"refused" => {
                says_failed = !counts_none(bytes, start, i);
            }
            b"warn" | b"warning" | b"warnings" | b"deprecated" => level = Level::Warn,
            _ => {}
        }
    }
    if says_failed { Level::Error } else { level }
}

/// Whether `line` ends in an arrow pointing back at it with what is wrong there: a diff's
/// `X-Id: T[0-9]+   | X-Id: TX   <<<<< Header does not match`. The tool marks the line that
/// failed; a conflict marker (`<<<<<<< HEAD`) starts its line instead.
fn points_out_a_mismatch(line: &str) -> bool {
    // Most lines hold no `<` at all: one vectorised scan tells.
    if memchr::memchr(b'<', line.as_bytes()).is_none() {
        return false;
    }
    // The arrow: four `<`s or more, after a space.
    let Some(at) = line.rfind(" <<<<") else {
        return false;
    };
    let rest = line[at + 1..].trim_start_matches('<');
    !line[..at].trim().is_empty()
        && rest.starts_with(' ')
        && rest.trim().bytes().any(|b| b.is_ascii_alphabetic())
}

/// The severity the letters `start..end` of `bytes` state as a tag, if they are one: a
/// severity word in parentheses or brackets (`(error)`, `[warning]`) or followed by a colon
/// (`note:`).
fn stated_severity(bytes: &[u8], start: usize, end: usize) -> Option<Level> {
    let len = end - start;
    if !(4..=8).contains(&len) {
        return None;
    }
    let before = start.checked_sub(1).map(|i| bytes[i]);
    let after = bytes.get(end).copied();
    let wrapped = matches!(
        (before, after),
        (Some(b'('), Some(b')')) | (Some(b'['), Some(b']'))
    );
    let tagged = after == Some(b':')
        && bytes.get(end + 1).is_none_or(|b| b.is_ascii_whitespace())
        && !before.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
    if !wrapped && !tagged {
        return None;
    }
    let mut word = [0u8; 8];
    for (w, b) in word.iter_mut().zip(&bytes[start..end]) {
        *w = b.to_ascii_lowercase();
    }
    match &word[..len] {
        b"error" | b"fatal" | b"critical" | b"severe" => Some(Level::Error),
        b"warning" | b"warn" => Some(Level::Warn),
        b"info" | b"note" | b"notice" | b"hint" | b"style" | b"debug" | b"trace" => {
            Some(Level::None)
        }
        _ => None,
    }
}

/// Whether the letters `start..end` of `bytes` are part of a path or identifier: joined to
/// more of it by `_`, `/`, `\\`, or a `.` or `-` between letters (`error.rs`, `x.error`,
/// `389-exception`, `Autoconf-exception-generic`).
fn is_part_of_name(bytes: &[u8], start: usize, end: usize) -> bool {
    let joins = |b: u8| matches!(b, b'_' | b'/' | b'\\');
    let before = start.checked_sub(1).map(|i| bytes[i]);
    let after = bytes.get(end).copied();
    let dotted_before = matches!(before, Some(b'.' | b'-'))
        && start
            .checked_sub(2)
            .is_some_and(|i| bytes[i].is_ascii_alphanumeric());
    let dotted_after = matches!(after, Some(b'.' | b'-'))
        && bytes.get(end + 1).is_some_and(u8::is_ascii_alphanumeric);
    before.is_some_and(joins) || after.is_some_and(joins) || dotted_before || dotted_after
}

/// Whether the word `start..end` of `bytes` is counted as none: `0 errors`, `no errors`,
/// `Errors 0`, `failed=0`. A summary that counts no failure reports none.
fn counts_none(bytes: &[u8], start: usize, end: usize) -> bool {
    let before = &bytes[..start];
    let word_before = |w: &[u8]| {
        let Some(head) = before.strip_suffix(b" ") else {
            return false;
        };
        head.len() >= w.len()
            && head[head.len() - w.len()..].eq_ignore_ascii_case(w)
            && (head.len().checked_sub(w.len() + 1))
                .is_none_or(|i| !head[i].is_ascii_alphanumeric())
    };
    let after = &bytes[end..];
    let value = after
        .strip_prefix(b":")
        .or(after.strip_prefix(b"="))
        .unwrap_or(after);
    let value = value.trim_ascii_start();
    let zero_after = value.len() < after.len()
        && value.first() == Some(&b'0')
        && value
            .get(1)
            .is_none_or(|b| !b.is_ascii_alphanumeric() && *b != b'.');
    word_before(b"0") || word_before(b"no") || zero_after
}

/// Whether `line` is a TAP result line of the kind `prefix` says (`ok ` or `not ok `): the
/// prefix, then the assertion's number.
pub(crate) fn is_tap_result(line: &str, prefix: &str) -> bool {
    line.trim_start()
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

/// Whether `rest` starts with Node's error code and a colon: ` [ERR_ASSERTION]:`.
fn has_error_code(rest: &[u8]) -> bool {
    let Some(code) = rest.strip_prefix(b" [") else {
        return false;
    };
    let len = code
        .iter()
        .take_while(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || **b == b'_')
        .count();
    len > 0 && code[len..].starts_with(b"]:")
}

/// `TypeError`, `AssertionError`, `NullPointerException`: a capitalised name ending in one of
/// the words exceptions are named with.
pub(crate) fn is_exception_name(word: &str) -> bool {
    word.starts_with(|c: char| c.is_ascii_uppercase())
        && ["Error", "Exception"]
            .iter()
            .any(|suffix| word.len() > suffix.len() && word.ends_with(suffix))
}
