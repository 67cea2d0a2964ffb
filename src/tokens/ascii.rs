//! `cl100k_base`'s pre-tokenizer on ASCII text, without the regular expression.
//!
//! Tool output is nearly all ASCII, and its pieces are short (a word, a number, a run of
//! punctuation): for each, the expression engine's set-up cost more than the match. On ASCII the
//! patterns reduce to a few byte tests. This module decides a piece only when every byte its
//! decision reads is ASCII; whenever it would read a byte of a non-ASCII character (which may be
//! a letter, a number or a space in Unicode's classes), it declines and the expression decides
//! that piece. The tests compare both on random text that mixes ASCII with the characters where
//! they could differ.
//!
//! The patterns (leftmost-first, in this order; the second gives back its last character):
//!
//! ```text
//! (?i:'s|'t|'re|'ve|'m|'ll|'d) | [^\r\n\p{L}\p{N}]?\p{L}+ | \p{N}{1,3}
//!   | ' '?[^\s\p{L}\p{N}]+[\r\n]* | \s*[\r\n]+ | \s+$
//! \s+\s
//! \s+
//! ```

/// The ASCII bytes from the piece's start, and whether they run to the end of the text (else a
/// non-ASCII byte follows them).
struct Ascii<'a> {
    bytes: &'a [u8],
    ends_text: bool,
}

/// A byte the decision needs is part of a non-ASCII character.
struct Declined;

impl Ascii<'_> {
    /// The byte at `index`: `None` past the end of the text, `Declined` at a non-ASCII byte.
    #[inline(always)]
    fn at(&self, index: usize) -> Result<Option<u8>, Declined> {
        match self.bytes.get(index) {
            Some(&byte) => Ok(Some(byte)),
            None if self.ends_text => Ok(None),
            None => Err(Declined),
        }
    }

    /// The end of the run of bytes from `from` that `class` accepts.
    #[inline(always)]
    fn run(&self, from: usize, class: fn(u8) -> bool) -> Result<usize, Declined> {
        let mut end = from;
        while let Some(byte) = self.at(end)? {
            if !class(byte) {
                break;
            }
            end += 1;
        }
        Ok(end)
    }
}

fn is_letter(byte: u8) -> bool {
    byte.is_ascii_alphabetic()
}

fn is_digit(byte: u8) -> bool {
    byte.is_ascii_digit()
}

/// Unicode's White_Space, on ASCII: tab, line feed, vertical tab, form feed, carriage return
/// and space.
fn is_space(byte: u8) -> bool {
    matches!(byte, b'\t' | b'\n' | 0x0B | 0x0C | b'\r' | b' ')
}

fn is_newline(byte: u8) -> bool {
    matches!(byte, b'\r' | b'\n')
}

/// `[^\s\p{L}\p{N}]` on ASCII: punctuation, symbols and control characters.
fn is_other(byte: u8) -> bool {
    !is_space(byte) && !byte.is_ascii_alphanumeric()
}

/// The length of the piece at the start of `bytes` (ASCII bytes; `ends_text` when no non-ASCII
/// byte follows them), or `None` when the expression must decide it.
/// A pre-tokenizer on ASCII bytes: the length of the piece at their start (`true` when no
/// non-ASCII byte follows them), or `None` when the expression must decide.
pub(super) type AsciiPieces = fn(&[u8], bool) -> Option<usize>;

pub(super) fn cl100k_piece(bytes: &[u8], ends_text: bool) -> Option<usize> {
    let text = Ascii { bytes, ends_text };
    piece(&text).ok().flatten()
}

fn piece(text: &Ascii<'_>) -> Result<Option<usize>, Declined> {
    let Some(first) = text.at(0)? else {
        return Ok(None);
    };
    // (?i:'s|'t|'re|'ve|'m|'ll|'d)
    if first == b'\''
        && let Some(second) = text.at(1)?
    {
        match second.to_ascii_lowercase() {
            b's' | b't' | b'm' | b'd' => return Ok(Some(2)),
            pair @ (b'r' | b'v' | b'l') => {
                let third = pair_second(pair);
                if text.at(2)?.map(|b| b.to_ascii_lowercase()) == Some(third) {
                    return Ok(Some(3));
                }
            }
            _ => {}
        }
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if is_letter(first) {
        return Ok(Some(text.run(1, is_letter)?));
    }
    if !is_newline(first) && !first.is_ascii_digit() && text.at(1)?.is_some_and(is_letter) {
        return Ok(Some(text.run(2, is_letter)?));
    }
    // \p{N}{1,3}
    if is_digit(first) {
        let mut end = 1;
        while end < 3 && text.at(end)?.is_some_and(is_digit) {
            end += 1;
        }
        // A fourth character is never read: the piece ends at three digits whatever follows.
        return Ok(Some(end));
    }
    // ' '?[^\s\p{L}\p{N}]+[\r\n]*
    let others_from = usize::from(first == b' ' && text.at(1)?.is_some_and(is_other));
    if text.at(others_from)?.is_some_and(is_other) {
        let others_end = text.run(others_from + 1, is_other)?;
        return Ok(Some(text.run(others_end, is_newline)?));
    }
    // What is left starts with white space.
    debug_assert!(is_space(first));
    let spaces_end = text.run(0, is_space)?;
    // \s*[\r\n]+ : up to the last line break of the run.
    if let Some(last_break) = text.bytes[..spaces_end]
        .iter()
        .rposition(|&b| is_newline(b))
    {
        return Ok(Some(last_break + 1));
    }
    // \s+$
    if text.at(spaces_end)?.is_none() {
        return Ok(Some(spaces_end));
    }
    // \s+\s, less its last character; else \s+ (a single space).
    Ok(Some(if spaces_end >= 2 { spaces_end - 1 } else { 1 }))
}

/// The letter after the first of `'re`, `'ve` and `'ll`.
fn pair_second(first: u8) -> u8 {
    match first {
        b'l' => b'l',
        _ => b'e',
    }
}
