//! Terminal escape sequences out of tool output, before it is condensed.
//!
//! Build tools, test runners and `ls --color` colour their output. Raw escape codes cost tokens,
//! tell a summary nothing, and break structure detection: `ESC[31m` and `ESC[0m` around every
//! field make a coloured log look like a table of bracketed columns. The engine condenses the
//! stripped text and keeps the original, codes included, for retrieval.

use std::borrow::Cow;
use std::iter::Peekable;
use std::str::Chars;

const ESC: char = '\x1b';
const BEL: char = '\x07';
/// The 8-bit forms of CSI and of the string-introducing controls (DCS, SOS, OSC, PM, APC),
/// and the string terminator.
const C1_CSI: char = '\u{9b}';
const C1_STRINGS: [char; 5] = ['\u{90}', '\u{98}', '\u{9d}', '\u{9e}', '\u{9f}'];
const C1_ST: char = '\u{9c}';

/// `text` without escape sequences (CSI such as colours and cursor moves, OSC such as titles
/// and hyperlinks, DCS/SOS/PM/APC strings, two-character `ESC x` sequences, and their 8-bit C1
/// forms) and without other control characters. Tabs, newlines and `\r\n` line ends stay; a
/// lone `\r` (a progress line redrawn in place) becomes a newline, so each state is a line.
/// Text without any of these is returned as it is, without a copy.
pub(crate) fn strip_escapes(text: &str) -> Cow<'_, str> {
    if !needs_stripping(text) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\n' | '\t' => out.push(c),
            '\r' if chars.peek() == Some(&'\n') => out.push(c),
            '\r' => out.push('\n'),
            ESC => skip_escape(&mut chars),
            C1_CSI => skip_csi(&mut chars),
            c if C1_STRINGS.contains(&c) => skip_string(&mut chars),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Whether `text` holds anything [`strip_escapes`] removes: a byte scan, so clean output costs
/// one pass and no allocation.
fn needs_stripping(text: &str) -> bool {
    let bytes = text.as_bytes();
    bytes.iter().enumerate().any(|(i, &b)| match b {
        b'\n' | b'\t' => false,
        b'\r' => bytes.get(i + 1) != Some(&b'\n'),
        0x00..=0x1f | 0x7f => true,
        // U+0080..=U+009F are encoded as 0xC2 0x80..=0x9F.
        0xc2 => bytes
            .get(i + 1)
            .is_some_and(|next| (0x80..=0x9f).contains(next)),
        _ => false,
    })
}

/// After `ESC`: the rest of the sequence it starts. An `ESC` that starts nothing (at the end, or
/// before a newline) is dropped alone.
fn skip_escape(chars: &mut Peekable<Chars<'_>>) {
    match chars.peek().copied() {
        Some('[') => {
            chars.next();
            skip_csi(chars);
        }
        Some(']' | 'P' | 'X' | '^' | '_') => {
            chars.next();
            skip_string(chars);
        }
        // Intermediates, then one final character: `ESC ( B` selects a character set.
        Some('\x20'..='\x2f') => {
            while chars.next_if(|c| ('\x20'..='\x2f').contains(c)).is_some() {}
            chars.next_if(|c| ('\x30'..='\x7e').contains(c));
        }
        // Two-character sequences: `ESC 7` saves the cursor, `ESC =` sets keypad mode, …
        Some('\x30'..='\x7e') => {
            chars.next();
        }
        _ => {}
    }
}

/// After CSI: parameter and intermediate bytes, then the final byte (`m` for colours, `K` to
/// clear a line, …). A sequence cut off early ends at the first character that cannot be in it.
fn skip_csi(chars: &mut Peekable<Chars<'_>>) {
    while chars.next_if(|c| ('\x20'..='\x3f').contains(c)).is_some() {}
    chars.next_if(|c| ('\x40'..='\x7e').contains(c));
}

/// After OSC, DCS, SOS, PM or APC: the string up to its terminator (BEL, `ESC \` or ST). An
/// unterminated string ends at the line's end, so a stray introducer cannot swallow the rest of
/// the output.
fn skip_string(chars: &mut Peekable<Chars<'_>>) {
    while let Some(&c) = chars.peek() {
        match c {
            '\n' => return,
            BEL | C1_ST => {
                chars.next();
                return;
            }
            ESC => {
                chars.next();
                // `ESC \` is the terminator; any other escape ends the string and is itself
                // skipped.
                if chars.next_if_eq(&'\\').is_none() {
                    skip_escape(chars);
                }
                return;
            }
            _ => {
                chars.next();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn colour_codes_go_and_plain_text_is_unchanged() {
        assert_eq!(
            strip_escapes("\x1b[1;31mERROR\x1b[0m disk full"),
            "ERROR disk full"
        );
        assert_eq!(strip_escapes("plain text\n"), "plain text\n");
    }

    #[test]
    fn colours_and_cursor_moves_go_and_the_text_stays() {
        let coloured =
            "\x1b[2m12:00:01\x1b[0m \x1b[1;31mERROR\x1b[0m \x1b[36mdb\x1b[39m: timeout\x1b[K\n";
        assert_eq!(strip_escapes(coloured), "12:00:01 ERROR db: timeout\n");
        assert_eq!(strip_escapes("\x1b[2J\x1b[1;1Hready"), "ready");
        assert_eq!(strip_escapes("\x1b[38;5;196mred\x1b[m"), "red");
    }

    #[test]
    fn titles_hyperlinks_and_other_strings_go() {
        let link = "see \x1b]8;;https://example.com/a\x1b\\the docs\x1b]8;;\x1b\\ now";
        assert_eq!(strip_escapes(link), "see the docs now");
        assert_eq!(strip_escapes("\x1b]0;build: ok\x07done"), "done");
        assert_eq!(strip_escapes("\x1bPq#0;2;0;0;0\x1b\\img"), "img");
        assert_eq!(
            strip_escapes("\u{9b}31mred\u{9b}0m \u{9d}0;t\u{9c}x"),
            "red x"
        );
    }

    #[test]
    fn two_character_and_charset_sequences_go() {
        assert_eq!(strip_escapes("\x1b(Bplain\x1b7\x1b8\x1b=x"), "plainx");
    }

    #[test]
    fn an_unterminated_string_ends_at_the_line() {
        assert_eq!(strip_escapes("a\x1b]0;title\nnext line"), "a\nnext line");
        assert_eq!(strip_escapes("trailing\x1b"), "trailing");
        assert_eq!(strip_escapes("cut \x1b[31"), "cut ");
    }

    #[test]
    fn control_characters_go_but_tabs_and_line_ends_stay() {
        assert_eq!(strip_escapes("a\tb\r\nc\0d\x08e\x7f"), "a\tb\r\ncde");
        assert_eq!(
            strip_escapes("10%\r50%\r100%\ndone"),
            "10%\n50%\n100%\ndone"
        );
    }

    #[test]
    fn clean_text_is_borrowed_unchanged() {
        let clean = "naïve café 日本 \t tab\r\nline\n";
        assert!(matches!(strip_escapes(clean), Cow::Borrowed(_)));
    }

    /// The engine condenses the stripped text and keeps the coloured original.
    #[tokio::test]
    async fn the_engine_condenses_without_codes_and_keeps_them_in_the_original() {
        let log: String = (0..400)
            .map(|i| {
                format!(
                    "\x1b[2m2026-01-01 10:{:02}:{:02}\x1b[0m \x1b[32mINFO\x1b[0m \x1b[36mworker-{}\x1b[0m job {i} done\n",
                    i / 60,
                    i % 60,
                    i % 7
                )
            })
            .collect();
        let config = crate::Config::from_toml_str(
            "[defaults]\nthreshold_tokens = 200\nbudget_tokens = 300\n",
            "test",
        )
        .unwrap();
        let condenser = crate::Condenser::new(config).unwrap();
        let request = crate::Request::new("run_tests").with_mode(crate::Mode::Extract);
        let outcome = condenser.condense(&log, &request).await;
        assert_eq!(outcome.method, crate::Method::Extract);
        assert!(!outcome.text.contains('\x1b'), "{}", outcome.text);
        assert!(outcome.text.contains("job"), "{}", outcome.text);
        let reference = outcome
            .reference
            .clone()
            .expect("a condensed result has a ref");
        let original = condenser
            .retrieve(&reference, crate::Selection::All)
            .await
            .unwrap();
        assert_eq!(original, log);
        // The header states what the agent would have paid: the original, codes included.
        let counter = crate::tokens::TokenCounter::new(crate::tokens::Encoding::default());
        assert_eq!(outcome.tokens_before(), counter.count(&log));
        assert!(outcome.tokens_before() > counter.count(&strip_escapes(&log)));
        let header = outcome.text.lines().next().unwrap_or_default();
        assert!(
            header.contains(&crate::methods::truncate::group(outcome.tokens_before())),
            "{header}"
        );
    }

    fn is_allowed(stripped: &str) -> bool {
        let chars: Vec<char> = stripped.chars().collect();
        chars.iter().enumerate().all(|(i, &c)| match c {
            '\n' | '\t' => true,
            '\r' => chars.get(i + 1) == Some(&'\n'),
            c => !c.is_control(),
        })
    }

    proptest! {
        #[test]
        fn no_control_character_survives_and_stripping_twice_changes_nothing(
            text in "(\\PC|[\\x00-\\x1f\\x7f\\u{80}-\\u{9f}]|\x1b\\[[0-9;]{0,6}[A-Za-z]|\x1b\\][^\x07\n]{0,8}\x07){0,64}"
        ) {
            let once = strip_escapes(&text).into_owned();
            prop_assert!(is_allowed(&once), "{:?} → {:?}", text, once);
            prop_assert_eq!(strip_escapes(&once), once.as_str());
        }

        #[test]
        fn text_without_controls_is_unchanged(text in "[^\\p{Cc}]{0,64}") {
            prop_assert_eq!(strip_escapes(&text), text.as_str());
        }
    }
}
