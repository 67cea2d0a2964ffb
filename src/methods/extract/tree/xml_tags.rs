//! The lines of markup, with a start tag that wraps its attributes over several lines kept
//! as one piece.
//!
//! Schemas, interface descriptions and stylesheets often wrap a long start tag
//! (`<wadl:param style="query" required="true"` and then `name="display_name">`). Read one line
//! at a time, the attribute that names the element and the ones the query asks about fall on
//! different units: one is kept without the other, and a fact quoted across the line break
//! is lost. Read as one piece, the tag is kept or dropped whole.

use std::ops::Range;

use crate::methods::extract::doc;

/// A start tag wrapped over more lines than this is read line by line: no writer wraps
/// attributes that far, and a stray `<` must not take the rest of the document with it.
const MAX_TAG_LINES: usize = 12;

/// The lines of `text` as [`doc::lines`] yields them, except that the lines of a start tag
/// left open at a line's end are joined up to the line where it closes (with a `>` outside
/// its quoted values).
pub(crate) fn tag_lines(text: &str) -> impl Iterator<Item = Range<usize>> + '_ {
    let mut lines = doc::lines(text).peekable();
    std::iter::from_fn(move || {
        let first = lines.next()?;
        let mut scan = Scan::default();
        if !scan.line(&text[first.clone()]) {
            return Some(first);
        }
        // Look ahead without consuming: the tag may never close within bounds.
        let mut end = None;
        let mut at = first.end;
        for _ in 0..MAX_TAG_LINES {
            let Some(next) = doc::lines(&text[at..])
                .nth(1)
                .map(|l| at + l.start..at + l.end)
            else {
                break;
            };
            at = next.end;
            if !scan.line(&text[next.clone()]) {
                end = Some(next.end);
                break;
            }
        }
        let Some(end) = end else {
            return Some(first);
        };
        while lines.peek().is_some_and(|l| l.start < end) {
            lines.next();
        }
        Some(first.start..end)
    })
}

/// Where a scan of markup stands at a line's end.
#[derive(Debug, Default)]
struct Scan {
    /// Inside a start tag.
    in_tag: bool,
    /// Inside a quoted attribute value of that tag, and its quote.
    quote: Option<u8>,
    /// Inside a comment, where a `<` opens nothing.
    in_comment: bool,
}

impl Scan {
    /// Reads `line` on from where the scan stands; whether a start tag is still open at its
    /// end.
    fn line(&mut self, line: &str) -> bool {
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            if self.in_comment {
                self.in_comment = !bytes[..=i].ends_with(b"-->");
                continue;
            }
            match (self.in_tag, self.quote) {
                (true, Some(q)) if b == q => self.quote = None,
                (true, Some(_)) => {}
                (true, None) if b == b'"' || b == b'\'' => self.quote = Some(b),
                (true, None) if b == b'>' => self.in_tag = false,
                (true, None) => {}
                // A start tag: `<` then a name (not `</`, `<!--`, `<?`).
                (false, _) => {
                    self.in_comment = bytes[i..].starts_with(b"<!--");
                    self.in_tag =
                        b == b'<' && bytes.get(i + 1).is_some_and(|c| c.is_ascii_alphabetic());
                }
            }
        }
        self.in_tag
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(text: &str) -> Vec<&str> {
        tag_lines(text).map(|r| &text[r]).collect()
    }

    #[test]
    fn a_wrapped_start_tag_is_one_piece() {
        let text = "<method id=\"newTeam\">\n  <param style=\"query\" required=\"true\"\n         name=\"display_name\">\n    <doc>Name</doc>\n  </param>\n</method>\n";
        assert_eq!(
            pieces(text),
            [
                "<method id=\"newTeam\">",
                "  <param style=\"query\" required=\"true\"\n         name=\"display_name\">",
                "    <doc>Name</doc>",
                "  </param>",
                "</method>",
            ]
        );
    }

    #[test]
    fn a_quoted_angle_bracket_does_not_close_the_tag() {
        let text = "<a test=\"x > 1\"\n   b='<'>\ntext\n";
        assert_eq!(pieces(text), ["<a test=\"x > 1\"\n   b='<'>", "text"]);
    }

    #[test]
    fn a_tag_never_closed_leaves_the_lines_alone() {
        let mut text = String::from("<a b=\"1\"\n");
        text.push_str(&"c\n".repeat(MAX_TAG_LINES + 2));
        assert_eq!(pieces(&text).len(), MAX_TAG_LINES + 3);
        assert_eq!(pieces("<a\n"), ["<a"]);
        // Text, comments and end tags are lines as they were.
        let plain = "x < y\n<!-- <a\n-->\n</b\n>\n";
        assert_eq!(
            pieces(plain),
            doc::lines(plain).map(|r| &plain[r]).collect::<Vec<_>>()
        );
    }
}
