//! A lenient reader of block-style YAML (`key: value` maps, `- item` lists, indented under
//! one another) into a JSON value with keys in document order, so that a list of records in
//! YAML (`kubectl get … -o yaml`, a compose or CI file's services) is descended into,
//! projected and tabled like the same list in JSON.
//!
//! It reads the plain shapes tools print and gives up (returns `None`) on anything it is not
//! sure of: a line indented between two levels, a duplicate key, text where a key or item was
//! expected. A document it gives up on is read as lines, which is always right; a tree that
//! misplaces a value would not be. Scalars stay strings (`1.10` is a version, not 1.1) except
//! `null`, `true`, `false` and integers that read back the same.

use serde_json::{Map, Value};

/// One non-blank, non-comment line: its indentation and its text after it.
#[derive(Clone, Copy)]
struct Line<'a> {
    indent: usize,
    text: &'a str,
}

/// Nesting deeper than this is given up on: no tool prints it, and recursion stays bounded.
const MAX_DEPTH: usize = 64;

/// Parses `text` as block YAML, or `None` when it is not YAML this reader is sure of. Several
/// documents (`---` between them) become an array of them.
pub(crate) fn parse(text: &str) -> Option<Value> {
    let mut documents = Vec::new();
    let mut lines = Vec::new();
    for raw in text.lines() {
        let raw = raw.trim_end();
        let text = raw.trim_start_matches(' ');
        // Tabs are not indentation in YAML: a tree indented with them is not one to trust.
        if text.starts_with('\t') {
            return None;
        }
        if raw == "---" || raw.starts_with("--- ") || raw == "..." {
            if !lines.is_empty() {
                documents.push(document(std::mem::take(&mut lines))?);
            }
            continue;
        }
        if text.is_empty() || text.starts_with('#') || raw.starts_with('%') {
            // Blank lines and comments belong to no level; a block scalar keeps its blank lines.
            if text.is_empty() && !lines.is_empty() {
                lines.push(Line {
                    indent: usize::MAX,
                    text: "",
                });
            }
            continue;
        }
        lines.push(Line {
            indent: raw.len() - text.len(),
            text,
        });
    }
    if !lines.is_empty() {
        documents.push(document(lines)?);
    }
    match documents.len() {
        0 => None,
        1 => documents.pop(),
        _ => Some(Value::Array(documents)),
    }
}

/// Whether the first line of `lines` (non-blank, comments and `---` skipped) that says
/// anything is a YAML key or list item at the margin: worth a try of [`parse`].
pub(crate) fn starts_like_yaml(lines: &[&str]) -> bool {
    lines
        .iter()
        .map(|l| l.trim_end())
        .find(|l| !l.starts_with('#') && !l.starts_with("---") && !l.starts_with('%'))
        .is_some_and(|l| is_item(l) || (!l.starts_with(' ') && key_of(l).is_some()))
}

/// Parses one document's lines: all of them must be used.
fn document(lines: Vec<Line<'_>>) -> Option<Value> {
    let count = lines.len();
    let mut parser = Parser { lines, at: 0 };
    parser.skip_blank();
    let first = parser.peek()?;
    let value = parser.node(first.indent, 0)?;
    parser.skip_blank();
    // Text left over (a line less indented than the first, or stray prose) is not YAML.
    (parser.at == count).then_some(value)
}

struct Parser<'a> {
    lines: Vec<Line<'a>>,
    at: usize,
}

impl<'a> Parser<'a> {
    fn skip_blank(&mut self) {
        while self.lines.get(self.at).is_some_and(|l| l.text.is_empty()) {
            self.at += 1;
        }
    }

    fn peek(&self) -> Option<Line<'a>> {
        self.lines.get(self.at).copied()
    }

    /// The node whose first line is the next line, at exactly `indent`.
    fn node(&mut self, indent: usize, depth: usize) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_blank();
        let line = self.peek()?;
        if line.indent != indent {
            return None;
        }
        if is_item(line.text) {
            self.sequence(indent, depth)
        } else if key_of(line.text).is_some() {
            self.mapping(indent, depth)
        } else {
            // A lone scalar as a whole node (a list item's text goes through `item`).
            self.at += 1;
            Some(scalar(line.text))
        }
    }

    fn sequence(&mut self, indent: usize, depth: usize) -> Option<Value> {
        let mut items = Vec::new();
        loop {
            self.skip_blank();
            let Some(line) = self
                .peek()
                .filter(|l| l.indent == indent && is_item(l.text))
            else {
                break;
            };
            let rest = line.text[1..].trim_start_matches(' ');
            if rest.is_empty() {
                // `-` alone: the item is the deeper block below, or null.
                self.at += 1;
                items.push(self.child(indent, depth)?);
                continue;
            }
            // `- key: v` opens a map whose later keys line up under `key`; `- - x` a nested
            // list; `- text` a scalar. The item's text is read as a line of its own at the
            // column where it starts.
            let column = indent + (line.text.len() - rest.len());
            if is_item(rest) || key_of(rest).is_some() {
                // The line becomes the item's text at its own column (in place: no copy of
                // the lines below), and the item is read from there.
                self.lines[self.at] = Line {
                    indent: column,
                    text: rest,
                };
                items.push(self.node(column, depth + 1)?);
            } else {
                self.at += 1;
                items.push(self.continued(rest, indent)?);
            }
        }
        Some(Value::Array(items))
    }

    fn mapping(&mut self, indent: usize, depth: usize) -> Option<Value> {
        let mut map = Map::new();
        loop {
            self.skip_blank();
            let Some(line) = self.peek().filter(|l| l.indent == indent) else {
                break;
            };
            let (key, rest) = key_of(line.text)?;
            self.at += 1;
            let value = if rest.is_empty() || is_anchor_or_tag(rest) {
                // The value is the deeper block below; a list may also sit at the key's own
                // indentation (`containers:` then `- name: …`, as kubectl prints).
                self.skip_blank();
                match self.peek() {
                    Some(next) if next.indent == indent && is_item(next.text) => {
                        self.sequence(indent, depth + 1)?
                    }
                    _ => self.child(indent, depth)?,
                }
            } else if let Some(literal) = block_scalar(rest) {
                Value::String(self.block_text(indent, literal))
            } else {
                self.continued(rest, indent)?
            };
            // A key given twice would lose one of its values: not a tree to trust.
            if map.insert(key, value).is_some() {
                return None;
            }
        }
        Some(Value::Object(map))
    }

    /// The block under a line at `indent` with no value of its own: deeper lines, or null.
    fn child(&mut self, indent: usize, depth: usize) -> Option<Value> {
        self.skip_blank();
        match self.peek() {
            Some(next) if next.indent > indent && next.indent != usize::MAX => {
                self.node(next.indent, depth + 1)
            }
            _ => Some(Value::Null),
        }
    }

    /// A scalar `first` whose text may go on in deeper lines (plain and quoted scalars over
    /// several lines, flow collections split over lines): lines are joined by a space, and
    /// a blank line among them is a line break, as YAML folds them.
    fn continued(&mut self, first: &str, indent: usize) -> Option<Value> {
        let mut text = first.to_owned();
        loop {
            let mut next = self.at;
            while self.lines.get(next).is_some_and(|l| l.text.is_empty()) {
                next += 1;
            }
            let Some(line) = self.lines.get(next).filter(|l| l.indent > indent) else {
                break;
            };
            let breaks = next - self.at;
            if breaks == 0 {
                text.push(' ');
            }
            text.extend(std::iter::repeat_n('\n', breaks));
            text.push_str(line.text);
            self.at = next + 1;
        }
        Some(scalar(&text))
    }

    /// The text of a `|` or `>` block scalar: the deeper lines, their common indentation
    /// removed; folded (`>`) lines joined by spaces.
    fn block_text(&mut self, indent: usize, literal: bool) -> String {
        let mut body: Vec<Line<'a>> = Vec::new();
        while let Some(next) = self.peek().filter(|l| l.indent > indent) {
            body.push(next);
            self.at += 1;
        }
        while body.last().is_some_and(|l| l.text.is_empty()) {
            body.pop();
            self.at -= 1;
        }
        let base = body
            .iter()
            .filter(|l| !l.text.is_empty())
            .map(|l| l.indent)
            .min()
            .unwrap_or(0);
        let mut text = String::new();
        for (i, line) in body.iter().enumerate() {
            if i > 0 {
                text.push(if literal || line.text.is_empty() {
                    '\n'
                } else {
                    ' '
                });
            }
            if !line.text.is_empty() {
                text.extend(std::iter::repeat_n(' ', line.indent - base));
                text.push_str(line.text);
            }
        }
        text
    }
}

/// `- x` or `-` alone: a list item.
fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

/// `key: rest` (or `key:` alone, or a quoted key): the key and the trimmed rest. A colon
/// inside a URL or a time (`http://x`, `12:30`) has no space after it and does not count.
fn key_of(text: &str) -> Option<(String, &str)> {
    let (key, rest) = if let Some(quote @ ('"' | '\'')) = text.chars().next() {
        let close = text[1..].find(quote)? + 1;
        let rest = text[close + 1..].strip_prefix(':')?;
        (text[1..close].to_owned(), rest)
    } else {
        let colon = text
            .match_indices(':')
            .map(|(i, _)| i)
            .find(|&i| text[i + 1..].is_empty() || text[i + 1..].starts_with(' '))?;
        let key = text[..colon].trim_end();
        // A flow collection, a comment or an alias is not a key; neither is prose.
        if key.is_empty()
            || key.starts_with(['[', '{', '#', '&', '*', '!', '|', '>', '"', '\''])
            || key.split_whitespace().count() > 3
        {
            return None;
        }
        (key.to_owned(), &text[colon + 1..])
    };
    if !(rest.is_empty() || rest.starts_with(' ')) {
        return None;
    }
    Some((key, strip_comment(rest.trim())))
}

/// `&anchor` or `!tag` alone: the value is below.
fn is_anchor_or_tag(rest: &str) -> bool {
    rest.starts_with(['&', '!']) && !rest.contains(' ')
}

/// `|`, `|-`, `>+`, `|2`…: a block scalar, and whether it keeps its line breaks.
fn block_scalar(rest: &str) -> Option<bool> {
    let literal = match rest.as_bytes().first()? {
        b'|' => true,
        b'>' => false,
        _ => return None,
    };
    rest[1..]
        .bytes()
        .all(|b| b == b'-' || b == b'+' || b.is_ascii_digit())
        .then_some(literal)
}

/// A value without its trailing ` # comment` (after the closing quote of a quoted one).
fn strip_comment(value: &str) -> &str {
    let after_quote = match value.as_bytes().first() {
        Some(b'\'') => closing_quote(value, b'\'', false),
        Some(b'"') => closing_quote(value, b'"', true),
        _ => Some(0),
    };
    let Some(from) = after_quote else {
        return value;
    };
    value[from..]
        .find(" #")
        .map_or(value, |i| value[..from + i].trim_end())
}

/// The byte after the quote that closes the quoted `value` (`''` is an escaped `'`, and `\"`
/// in double quotes), if it closes.
fn closing_quote(value: &str, quote: u8, backslash: bool) -> Option<usize> {
    let bytes = value.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        if backslash && bytes[i] == b'\\' {
            i += 2;
            continue;
        }
        if bytes[i] == quote {
            if !backslash && bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return Some(i + 1);
        }
        i += 1;
    }
    None
}

/// A scalar's value: quoted strings unquoted, `null`/`~`, booleans and canonical integers
/// typed; anything else (versions, times, flow collections) the text itself.
fn scalar(text: &str) -> Value {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        return Value::String(inner.replace("''", "'"));
    }
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        // YAML's escapes are JSON's and a few more; those few are kept as written.
        return match serde_json::from_str::<Value>(text) {
            Ok(Value::String(s)) => Value::String(s),
            _ => Value::String(inner.to_owned()),
        };
    }
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "{}" => return Value::Object(Map::new()),
        "[]" => return Value::Array(Vec::new()),
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    if let Ok(n) = text.parse::<i64>()
        && n.to_string() == text
    {
        return Value::from(n);
    }
    Value::String(text.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubectl_pod_list_reads_as_records() {
        let text = "apiVersion: v1\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: web-1\n    namespace: default\n  spec:\n    containers:\n    - image: nginx:1.25\n      name: web\n      resources:\n        requests:\n          cpu: 250m\n  status:\n    phase: Running\n- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: db-0\n    namespace: data\n  spec:\n    containers:\n    - image: postgres:16\n      name: db\n  status:\n    phase: Pending\nkind: List\n";
        let value = parse(text).unwrap();
        assert_eq!(value["kind"], "List");
        assert_eq!(value["items"][0]["metadata"]["name"], "web-1");
        assert_eq!(
            value["items"][0]["spec"]["containers"][0]["resources"]["requests"]["cpu"],
            "250m"
        );
        assert_eq!(
            value["items"][1]["spec"]["containers"][0]["image"],
            "postgres:16"
        );
        assert_eq!(value["items"][1]["status"]["phase"], "Pending");
        // Keys stay in document order.
        let keys: Vec<&String> = value.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["apiVersion", "items", "kind"]);
    }

    #[test]
    fn scalars_keep_their_text() {
        let text = "version: 1.10\nreplicas: 3\nenabled: true\nnote: 'it''s' # why\nurl: http://x:80/a\nempty:\nquoted: \"a\\tb\"\n";
        assert_eq!(
            parse(text).unwrap(),
            json!({"version": "1.10", "replicas": 3, "enabled": true, "note": "it's",
                   "url": "http://x:80/a", "empty": null, "quoted": "a\tb"})
        );
    }

    #[test]
    fn block_scalars_and_continued_lines() {
        let text = "script: |\n  make\n  make test\nhelp: >-\n  Turns it\n  off.\nplain: one\n  two\nquoted: 'a\n\n  b''s\n  c'\nnext: x\n";
        let value = parse(text).unwrap();
        assert_eq!(value["script"], "make\nmake test");
        assert_eq!(value["help"], "Turns it off.");
        assert_eq!(value["plain"], "one two");
        assert_eq!(value["quoted"], "a\nb's c");
        assert_eq!(value["next"], "x");
    }

    #[test]
    fn documents_become_an_array() {
        let text = "---\nkind: Service\n---\nkind: Deployment\n";
        assert_eq!(
            parse(text).unwrap(),
            json!([{"kind": "Service"}, {"kind": "Deployment"}])
        );
    }

    #[test]
    fn what_it_is_unsure_of_is_given_up() {
        // Indented between two levels.
        assert!(parse("a:\n    b: 1\n  c: 2\n").is_none());
        // A key given twice.
        assert!(parse("Package: a\n\nPackage: b\n").is_none());
        // Prose.
        assert!(parse("This is not YAML at all.\nNor is this\n").is_none());
        // Tabs.
        assert!(parse("a:\n\tb: 1\n").is_none());
        assert!(parse("").is_none());
    }
}
