//! The separators a JSON text uses, so its rendering reads like the original.
//!
//! Python's one-line `json.dumps` (a `coverage json` or pytest JSON report) writes
//! `"key": value, "next": …`; `JSON.stringify` and serde write `"key":value,"next"`. Units are
//! rendered on one line, and a value quoted from a one-line original with its key
//! (`"covered": 697, "total": 2128`) is found in the output only when the rendering puts the
//! same space after its colons and commas. Pretty-printed JSON breaks its lines after the
//! commas, which a one-line rendering does not follow anyway, but each member is one line of
//! it (`"latest": "10.15.0"`), and a line is what an answer quotes: every colon keeps its
//! space. Its commas stay compact, but around the members the query asks for and within a
//! record it asks about, as each space costs a token.
//!
//! The same goes for the escapes a text writes in its strings where JSON allows the plain
//! character: PHP's `json_encode` and Tarantool's log write `.\/src\/box`, Python's
//! `json.dumps` writes `\u00e9`. A path quoted from such a text is found only in a rendering
//! that escapes the same way.

use std::borrow::Cow;

/// Bytes of the text read to tell its separators: the head of a document is representative.
const SAMPLE_BYTES: usize = 64 * 1024;

/// Whether a JSON text puts a space (or a line break) after the colon of a member and after
/// the comma between members and items.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Spacing {
    colon: bool,
    comma: bool,
    /// Whether the text breaks its lines after its commas (pretty-printed): its members and
    /// items then read, with the line breaks taken as spaces, `{ "key": [ "a", "b" ] }`.
    pretty: bool,
    /// Whether a pretty-printed text keeps a list of scalars on one line, `["a", "b"]`, as
    /// Prettier and many hand-kept schemas do.
    inline_scalar_lists: bool,
    /// Whether the text's strings write a slash as `\/`.
    escaped_slashes: bool,
    /// Whether the text's strings write every character past ASCII as a `\u` escape.
    ascii_only: bool,
}

impl Spacing {
    /// The separators of the JSON text `text` (a document, or JSON lines), read from its
    /// head outside strings; each by the majority of its uses, spaced when a space follows
    /// it (a comma that ends a line counts for neither).
    pub(crate) fn of(text: &str) -> Spacing {
        let bytes = &text.as_bytes()[..crate::tokens::floor_char_boundary(text, SAMPLE_BYTES)];
        let (mut colon, mut comma, mut broken) = ([0usize; 2], [0usize; 2], 0usize);
        // Lists of scalars opened on their line (`["a"`), and opened with a line break.
        let mut scalar_lists = [0usize; 2];
        let mut in_inline_list = false;
        let mut strings = Strings::default();
        let mut escapes = Escapes::default();
        for (i, &b) in bytes.iter().enumerate() {
            let escaped = strings.escaped;
            if strings.holds(b) {
                escapes.count(bytes, i, escaped);
                continue;
            }
            let spaced = bytes.get(i + 1) == Some(&b' ');
            match b {
                b':' => colon[usize::from(spaced)] += 1,
                // The commas of a list kept on one line say nothing of how members are laid.
                b',' if in_inline_list => {}
                // A comma that ends a line is neither: a text laid out a record a line
                // (`{ "a": [1], "b": 2 },`) is told by the commas within its lines.
                b',' if matches!(bytes.get(i + 1), Some(b'\n' | b'\r')) => broken += 1,
                b',' => comma[usize::from(spaced)] += 1,
                b'[' => {
                    let rest = &bytes[i + 1..];
                    let first = rest.iter().position(|b| !b.is_ascii_whitespace());
                    if let Some(at) = first.filter(|&at| starts_scalar(rest[at])) {
                        scalar_lists[usize::from(at == 0)] += 1;
                        in_inline_list = at == 0;
                    }
                }
                b']' => in_inline_list = false,
                _ => {}
            }
        }
        // A pretty-printed text breaks the line after its commas, which a rendering on one
        // line does not follow; but each of its members is one line, `"key": value`, quoted
        // as such, so the colon keeps its space.
        // A formatter that breaks lines but writes `"key":value` (botocore's models) keeps
        // its small values on one line, compact (`"input":{"shape":"X"}`): read as pretty, its
        // asked values would gain spaces its lines do not have.
        let colon = colon[1] > colon[0];
        let pretty = colon && broken > comma[0] + comma[1];
        Spacing {
            colon,
            comma: comma[1] > comma[0],
            pretty,
            inline_scalar_lists: pretty && scalar_lists[1] > scalar_lists[0],
            escaped_slashes: escapes.slashes[1] > escapes.slashes[0],
            ascii_only: escapes.past_ascii[1] > 0 && escapes.past_ascii[0] == 0,
        }
    }

    /// Whether the text is pretty-printed (see [`Spacing::pretty`]'s field).
    pub(crate) fn is_pretty(&self) -> bool {
        self.pretty
    }

    /// `text`, a compact rendering, with this spacing around the members whose key `asked`
    /// says the query asks for: a space after the key's colon (before any value, as in
    /// `"lines": [1, 2]`) and after the commas on either side of the member. Only those are
    /// quoted from the original, and every space elsewhere would cost a token; but a
    /// pretty-printed text's every colon, as each of its members is a line. Separators inside
    /// strings, a label's `path: ` and a `…+3` mark are left as they are.
    pub(crate) fn apply<'t>(&self, text: &'t str, asked: &dyn Fn(&str) -> bool) -> Cow<'t, str> {
        let escapes = self.escaped_slashes || self.ascii_only;
        if !self.colon && !self.comma && !self.pretty && !escapes {
            return Cow::Borrowed(text);
        }
        let bytes = text.as_bytes();
        let mut out: Option<String> = None;
        let mut copied = 0;
        let mut string_start = None;
        let mut escaped = false;
        // Whether the member being read has a key the query asks for.
        let mut member_asked = false;
        // Brackets open outside strings; in a pretty-printed text, the depth from which on the
        // value of an asked member is being read (spaced as the original reads), and whether
        // the next bracket opens one.
        let mut depth = 0usize;
        let mut asked_from: Option<usize> = None;
        let mut opens_asked = false;
        // Per open bracket of an asked value: whether a space follows it, so that its closing
        // bracket gets one too (not an empty `[]` nor a `[…3 items]` mark).
        let mut spaced_open: Vec<bool> = Vec::new();
        for (i, &b) in bytes.iter().enumerate() {
            if let Some(start) = string_start {
                // What replaces the bytes from `i` on, and how many it replaces.
                let mut escape: Option<(Cow<'_, str>, usize)> = None;
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => {
                        string_start = None;
                        if bytes.get(i + 1) == Some(&b':') {
                            member_asked = asked(&text[start + 1..i]);
                        }
                    }
                    b'/' if self.escaped_slashes => escape = Some((Cow::Borrowed("\\/"), 1)),
                    // The lead byte of a character past ASCII; a mark's `…` is no character
                    // of the text.
                    0xC0.. if self.ascii_only => {
                        escape = text[i..]
                            .chars()
                            .next()
                            .filter(|&c| c != '…')
                            .map(|c| (Cow::Owned(unicode_escapes(c)), c.len_utf8()));
                    }
                    _ => {}
                }
                if let Some((escape, replaced)) = escape {
                    let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
                    out.push_str(&text[copied..i]);
                    out.push_str(&escape);
                    copied = i + replaced;
                }
                continue;
            }
            let before = i.checked_sub(1).map(|p| bytes[p]);
            let after = bytes.get(i + 1).copied();
            let inside = asked_from.is_some_and(|from| depth >= from);
            // A space after this byte, or before it.
            let (mut space_after, mut space_before) = (false, false);
            match b {
                b'"' => string_start = Some(i),
                b':' => {
                    let member = before == Some(b'"');
                    // Each member of a pretty-printed text is a line, `"key": value`,
                    // and a line is what an answer quotes from it.
                    space_after = member
                        && (self.pretty || (self.colon && (inside || member_asked)))
                        && after.is_some_and(starts_value);
                    // The value of an asked member is quoted whole: spaced within as the
                    // original spaces it, a pretty-printed text's or one that spaces its
                    // commas (`"lines": [1, 2]`).
                    opens_asked = (self.pretty || self.comma) && member && member_asked && !inside;
                }
                b',' => {
                    let next_asked =
                        || after == Some(b'"') && next_key(&text[i + 1..]).is_some_and(asked);
                    space_after = before.is_some_and(ends_value)
                        && after.is_some_and(starts_value)
                        && (inside || (self.comma && (member_asked || next_asked())));
                    member_asked = false;
                }
                b'{' | b'[' => {
                    depth += 1;
                    if opens_asked {
                        asked_from = Some(depth);
                        opens_asked = false;
                    }
                    // `0xE2` starts the `…` of a mark.
                    space_after = self.pretty
                        && asked_from.is_some_and(|from| depth >= from)
                        && after.is_some_and(|a| !matches!(a, b'}' | b']' | b' ' | 0xE2))
                        && !(b == b'['
                            && self.inline_scalar_lists
                            && after.is_some_and(starts_scalar));
                    if asked_from.is_some() {
                        spaced_open.push(space_after);
                    }
                }
                b'}' | b']' => {
                    let spaced = inside && spaced_open.pop().unwrap_or(false);
                    space_before = spaced && before != Some(b' ');
                    depth = depth.saturating_sub(1);
                    if asked_from.is_some_and(|from| depth < from) {
                        asked_from = None;
                        spaced_open.clear();
                    }
                }
                b' ' => {}
                _ => opens_asked = false,
            }
            if space_before || space_after {
                let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
                let end = if space_after { i + 1 } else { i };
                out.push_str(&text[copied..end]);
                out.push(' ');
                copied = end;
            }
        }
        match out {
            Some(mut out) => {
                out.push_str(&text[copied..]);
                Cow::Owned(out)
            }
            None => Cow::Borrowed(text),
        }
    }
}

/// `text`, a compact rendering of one record (after its label), with a space after each
/// colon and comma between the record's own members, as its pretty-printed lines read once
/// their breaks are taken as spaces; separators inside nested values and strings stay as
/// they are.
pub(crate) fn with_members_spaced(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    let mut strings = Strings::default();
    let (mut depth, mut copied) = (0usize, 0usize);
    for (i, &b) in bytes.iter().enumerate() {
        let spaced = !strings.holds(b)
            && match b {
                b'{' | b'[' => {
                    depth += 1;
                    false
                }
                b'}' | b']' => {
                    depth = depth.saturating_sub(1);
                    false
                }
                b':' | b',' => depth == 1 && bytes.get(i + 1).is_some_and(|&a| starts_value(a)),
                _ => false,
            };
        if spaced {
            out.push_str(&text[copied..=i]);
            out.push(' ');
            copied = i + 1;
        }
    }
    out.push_str(&text[copied..]);
    out
}

/// How the strings of a JSON text write the characters JSON lets them escape or not: per
/// kind, `[plain, escaped]` counts, gathered a byte at a time by [`Spacing::of`].
#[derive(Default)]
struct Escapes {
    /// `/` and `\/`.
    slashes: [usize; 2],
    /// Characters past ASCII as UTF-8, and as `\u` escapes of code points past ASCII.
    past_ascii: [usize; 2],
}

impl Escapes {
    /// Counts `bytes[i]`, a byte inside a string; `escaped` when a backslash precedes it.
    fn count(&mut self, bytes: &[u8], i: usize, escaped: bool) {
        match bytes[i] {
            b'/' => self.slashes[usize::from(escaped)] += 1,
            b'u' if escaped => {
                let code = bytes
                    .get(i + 1..i + 5)
                    .and_then(|hex| u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok());
                if code.is_some_and(|c| c >= 0x80) {
                    self.past_ascii[1] += 1;
                }
            }
            0xC0.. => self.past_ascii[0] += 1,
            _ => {}
        }
    }
}

/// `c` as JSON's `\u` escapes: one, or a surrogate pair past the basic plane.
fn unicode_escapes(c: char) -> String {
    let mut units = [0u16; 2];
    c.encode_utf16(&mut units)
        .iter()
        .map(|u| format!("\\u{u:04x}"))
        .collect()
}

/// The key at the head of `rest` (`"name":…`), if it starts with one.
fn next_key(rest: &str) -> Option<&str> {
    let body = rest.strip_prefix('"')?;
    let end = body.find(['"', '\\'])?;
    body[end..].starts_with("\":").then(|| &body[..end])
}

/// Whether a JSON value (or a rendering's `[…3 items]`, `{…2 keys}`) can start with `b`.
fn starts_value(b: u8) -> bool {
    matches!(b, b'"' | b'{' | b'[' | b'-' | b't' | b'f' | b'n') || b.is_ascii_digit()
}

/// Whether a scalar JSON value (a string, a number, `true`, `false`, `null`) can start with `b`.
fn starts_scalar(b: u8) -> bool {
    matches!(b, b'"' | b'-' | b't' | b'f' | b'n') || b.is_ascii_digit()
}

/// Whether a JSON value can end with `b` (`"…"`, `}`, `]`, a number, `true`, `null`).
fn ends_value(b: u8) -> bool {
    matches!(b, b'"' | b'}' | b']' | b'e' | b'l') || b.is_ascii_digit()
}

/// Which bytes of JSON text are inside its strings (quotes included), told a byte at a time
/// from the start of the text or of a value.
#[derive(Debug, Default)]
pub(crate) struct Strings {
    open: bool,
    escaped: bool,
}

impl Strings {
    /// Whether byte `b`, the next of the text, is part of a string.
    pub(crate) fn holds(&mut self, b: u8) -> bool {
        if self.open {
            match b {
                _ if self.escaped => self.escaped = false,
                b'\\' => self.escaped = true,
                b'"' => self.open = false,
                _ => {}
            }
            true
        } else {
            self.open = b == b'"';
            self.open
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A few lines of `npm view eslint --json` (pretty-printed by npm).
    const NPM_VIEW: &str = r#"{
  "_id": "eslint@10.15.0",
  "dist-tags": {
    "latest": "10.15.0"
  },
  "engines": {
    "node": "^20.19.0 || ^22.13.0 || >=24"
  }
}"#;

    /// The head of a `coverage json` report: one line, Python's default separators.
    const COVERAGE: &str = r#"{"meta": {"format": 3, "version": "7.17.4", "branch_coverage": false}, "totals": {"covered_lines": 697, "num_statements": 2128}}"#;

    /// A `cargo --message-format=json` line: serde's compact separators.
    const CARGO: &str = r#"{"reason":"build-finished","success":true}"#;

    fn respaced(input: &str, compact: &str, asked: &[&str]) -> String {
        Spacing::of(input)
            .apply(compact, &|k| asked.contains(&k))
            .into_owned()
    }

    #[test]
    fn lines_broken_without_spaced_colons_stay_compact() {
        // botocore's models: a member a line, but `"key":value` and small values inline.
        let input = "{\n  \"operations\":{\n    \"Put\":{\n      \"name\":\"Put\",\n      \"input\":{\"shape\":\"PutRequest\"},\n      \"max\":30720,\n      \"min\":100\n    }\n  }\n}";
        assert!(!Spacing::of(input).is_pretty());
        let compact =
            r#"operations.Put: {"name":"Put","input":{"shape":"PutRequest"},"max":30720}"#;
        assert_eq!(respaced(input, compact, &["input", "max"]), compact);
    }

    #[test]
    fn a_pretty_printed_document_spaces_every_colon_and_the_values_asked_for() {
        let compact = r#"{"dist-tags":{"latest":"10.15.0"},"engines":{"node":"^20.19.0 || >=24","npm":">=9"}}"#;
        assert_eq!(
            Spacing::of(NPM_VIEW),
            Spacing {
                colon: true,
                comma: false,
                pretty: true,
                inline_scalar_lists: false,
                escaped_slashes: false,
                ascii_only: false,
            }
        );
        assert_eq!(
            respaced(NPM_VIEW, compact, &["latest", "node"]),
            r#"{"dist-tags": {"latest": "10.15.0"},"engines": {"node": "^20.19.0 || >=24","npm": ">=9"}}"#
        );
        // An asked member's value reads as the original does with its line breaks as spaces;
        // an empty list and a mark stay as they are.
        let record = r#"packages."node_modules/fsevents": {"version":"2.3.3","os":["darwin"],"cpu":[],"engines":{"node":"^8.16.0","npm":[…2 items]}}"#;
        assert_eq!(
            respaced(NPM_VIEW, record, &["node_modules/fsevents"]),
            r#"packages."node_modules/fsevents": { "version": "2.3.3", "os": [ "darwin" ], "cpu": [], "engines": { "node": "^8.16.0", "npm": […2 items] } }"#
        );
        assert_eq!(
            respaced(NPM_VIEW, record, &["os"]),
            r#"packages."node_modules/fsevents": {"version": "2.3.3","os": [ "darwin" ],"cpu": [],"engines": {"node": "^8.16.0","npm": […2 items]}}"#
        );
    }

    #[test]
    fn a_text_that_keeps_its_lists_of_scalars_on_one_line_is_read_so() {
        // A JSON Schema kept by Prettier: members a line each, short lists of scalars inline.
        let input = "{\n  \"definitions\": {\n    \"level\": {\n      \"type\": \"string\",\n      \"enum\": [\"read\", \"write\", \"none\"]\n    },\n    \"runner\": {\n      \"oneOf\": [\n        { \"type\": \"string\" }\n      ],\n      \"enum\": [\"ARM32\", \"x64\"]\n    }\n  }\n}";
        let compact = r#"definitions.level: {"type":"string","enum":["read","write","none"]}"#;
        assert_eq!(
            respaced(input, compact, &["enum"]),
            r#"definitions.level: {"type": "string","enum": ["read", "write", "none"]}"#
        );
        let record =
            r#"definitions."runner": {"oneOf":[{"type":"string"}],"enum":["ARM32","x64"]}"#;
        assert_eq!(
            respaced(input, record, &["runner"]),
            r#"definitions."runner": { "oneOf": [ { "type": "string" } ], "enum": ["ARM32", "x64"] }"#
        );
    }

    #[test]
    fn python_default_separators_space_the_commas_beside_a_member_asked_for() {
        let compact = r#"totals: {"covered_lines":697,"num_statements":2128,"excluded":[1,2]}"#;
        assert_eq!(
            respaced(COVERAGE, compact, &["covered_lines"]),
            r#"totals: {"covered_lines": 697, "num_statements":2128,"excluded":[1,2]}"#
        );
        assert_eq!(
            respaced(COVERAGE, compact, &["num_statements"]),
            r#"totals: {"covered_lines":697, "num_statements": 2128, "excluded":[1,2]}"#
        );
    }

    #[test]
    fn the_value_of_a_member_asked_for_is_spaced_within_as_the_text_spaces_it() {
        let compact = r#"totals: {"covered_lines":697,"excluded":[1,2],"missing":{"a":[3,4]}}"#;
        assert_eq!(
            respaced(COVERAGE, compact, &["excluded", "missing"]),
            r#"totals: {"covered_lines":697, "excluded": [1, 2], "missing": {"a": [3, 4]}}"#
        );
    }

    #[test]
    fn the_commas_that_end_lines_do_not_outvote_those_within_them() {
        // A header a member a line, then a record a line with its commas spaced.
        let input = "{\n  \"name\": \"demo\",\n  \"version\": 2,\n  \"rows\": [\n    { \"a\": [1, 2], \"b\": 2 },\n    { \"a\": [3], \"b\": 4 }\n  ]\n}";
        let spacing = Spacing::of(input);
        assert!(spacing.comma && spacing.colon, "{spacing:?}");
    }

    #[test]
    fn a_compact_text_keeps_its_compact_rendering() {
        assert_eq!(Spacing::of(CARGO), Spacing::default());
        assert_eq!(respaced(CARGO, CARGO, &["reason", "success"]), CARGO);
    }

    #[test]
    fn separators_inside_strings_and_marks_are_left_alone() {
        let compact = r#"scripts.lint:fix: {"a":"x:y,z","b":[…3 items],"c":"q\":1,2"…+2}"#;
        assert_eq!(
            respaced(COVERAGE, compact, &["a", "b", "c"]),
            r#"scripts.lint:fix: {"a": "x:y,z", "b": […3 items], "c": "q\":1,2"…+2}"#
        );
    }

    #[test]
    fn a_record_s_own_members_are_spaced_and_its_nested_values_left_alone() {
        assert_eq!(
            with_members_spaced(
                r#"[3]: {"a":1,"b":"x,y: z","c":[1,2],"d":{"e":2},"f":[…4 items]}"#
            ),
            r#"[3]: {"a": 1, "b": "x,y: z", "c": [1,2], "d": {"e":2}, "f": […4 items]}"#
        );
    }

    #[test]
    fn a_text_that_escapes_its_slashes_or_its_characters_past_ascii_is_rendered_so() {
        // Tarantool's JSON log escapes every slash.
        let log = r#"{"level":"DEBUG","message":"ClientError at .\/src\/box\/user.cc:539","file":".\/src\/box\/user.cc"}"#;
        let compact =
            r#"{"level":"DEBUG","message":"ClientError at ./src/box/user.cc:539","file":"…"}"#;
        assert_eq!(
            respaced(log, compact, &[]),
            r#"{"level":"DEBUG","message":"ClientError at .\/src\/box\/user.cc:539","file":"…"}"#
        );
        // Python's `json.dumps` escapes what is past ASCII; a mark's `…` stays as it is.
        let python = r#"{"city": "Z\u00fcrich", "note": "caf\u00e9 \ud83d\ude00"}"#;
        assert_eq!(
            respaced(python, r#"{"city":"Zürich 😀","note":"caf…"}"#, &[]),
            r#"{"city":"Z\u00fcrich \ud83d\ude00","note":"caf…"}"#
        );
        // A text that writes them plainly, or mixes both, is rendered plainly.
        let plain = r#"{"path": "./src/a.c", "city": "Zürich", "x": "\/"}"#;
        assert_eq!(
            respaced(plain, r#"{"path":"./src/a.c"}"#, &[]),
            r#"{"path":"./src/a.c"}"#
        );
    }
}
