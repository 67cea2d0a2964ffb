//! TOML and INI (systemd units, `.cfg`, `.ini`) read leniently into the tree JSON parses to:
//! `[table]` and dotted keys make nested objects, `[[array.of.tables]]` a list of records, and
//! in INI a section given more than once (`[Socket]` twice, a repeated `[remote]`) a list of
//! records too. Values: basic and literal strings (one-line and multi-line), arrays and inline
//! tables over any number of lines, integers that read back the same, booleans; anything
//! else (a date, an INI value) is its text.
//!
//! One pass over the bytes, and a nesting bound: it never fails, and gives up (`None`) where
//! it is not sure (a key through a value, too many lines it cannot read).

use serde_json::{Map, Value};

/// Arrays and inline tables nested deeper than this are given up on.
const MAX_DEPTH: usize = 64;
/// The share of lines (in percent) that may be neither a header, a field nor a comment.
const MAX_OTHER_SHARE: usize = 10;

/// The tree of the TOML or INI document `text`, or `None` when it gives up.
pub(crate) fn parse(text: &str) -> Option<Value> {
    let mut p = Parser { s: text, i: 0 };
    let mut root = Value::Object(Map::new());
    let mut table: Vec<String> = Vec::new();
    let (mut lines, mut other) = (0usize, 0usize);
    loop {
        p.skip_blank_lines();
        if p.i >= p.s.len() {
            break;
        }
        lines += 1;
        let line = p.rest_of_line();
        if line.starts_with('[') {
            let repeated = line.starts_with("[[");
            let Some(path) = header_path(line) else {
                other += 1;
                p.skip_line();
                continue;
            };
            open_table(&mut root, &path, repeated)?;
            table = path;
            p.skip_line();
        } else if let Some((key, eq)) = key_of(line) {
            p.i += eq + 1;
            let start = p.i;
            let mut value = p.value(0, true)?;
            // More after a one-line value (`[0-9]*`, `"a" "b"`): an INI value, its line's text.
            let tail = p.rest_of_line().trim_start();
            let one_line_then_more = !tail.is_empty() && !tail.starts_with('#');
            if one_line_then_more && !p.s[start..p.i].contains('\n') {
                p.i = start;
                value = p.bare(true)?;
            }
            let mut path = table.clone();
            path.extend(key);
            insert(&mut root, &path, value)?;
            p.skip_line();
        } else {
            other += 1;
            p.skip_line();
        }
    }
    (other * 100 <= lines * MAX_OTHER_SHARE).then_some(root)
}

struct Parser<'a> {
    s: &'a str,
    i: usize,
}

impl Parser<'_> {
    fn rest_of_line(&self) -> &str {
        let rest = &self.s[self.i..];
        rest.split('\n').next().unwrap_or_default().trim_end()
    }

    fn skip_line(&mut self) {
        self.i = self.s[self.i..]
            .find('\n')
            .map_or(self.s.len(), |n| self.i + n + 1);
    }

    /// Skips whitespace, blank lines and comment lines.
    fn skip_blank_lines(&mut self) {
        loop {
            let rest = &self.s[self.i..];
            let t = rest.trim_start();
            self.i += rest.len() - t.len();
            if t.starts_with('#') || t.starts_with(';') {
                self.skip_line();
            } else {
                return;
            }
        }
    }

    /// Skips spaces and tabs, and inside an array or inline table newlines and comments too.
    fn skip_space(&mut self, nested: bool) {
        loop {
            let rest = &self.s[self.i..];
            let t = if nested {
                rest.trim_start()
            } else {
                rest.trim_start_matches([' ', '\t'])
            };
            self.i += rest.len() - t.len();
            if nested && t.starts_with('#') {
                self.skip_line();
            } else {
                return;
            }
        }
    }

    /// The value at the cursor. At the top level a value that is not TOML is the rest of
    /// its line, as INI has it.
    fn value(&mut self, depth: usize, top: bool) -> Option<Value> {
        if depth > MAX_DEPTH {
            return None;
        }
        self.skip_space(!top);
        let rest = &self.s[self.i..];
        for (open, escapes) in [("\"\"\"", true), ("'''", false)] {
            if let Some(body) = rest.strip_prefix(open) {
                let end = body.find(open)?;
                self.i += open.len() * 2 + end;
                // A newline right after the opening quotes is not part of the string.
                let text = body[..end].strip_prefix('\n').unwrap_or(&body[..end]);
                return Some(Value::String(if escapes {
                    unescape(text)
                } else {
                    text.into()
                }));
            }
        }
        if let Some(quote @ ('"' | '\'')) = rest.chars().next() {
            let body = &rest[1..];
            let end = closing_quote(body, quote)?;
            self.i += end + 2;
            let text = &body[..end];
            return Some(Value::String(if quote == '"' {
                unescape(text)
            } else {
                text.into()
            }));
        }
        if rest.starts_with('[') {
            let start = self.i;
            match self.array(depth) {
                Some(array) => return Some(array),
                // An INI value that starts with `[` but is not an array (a glob) is its
                // line's text; one that runs past its line is given up on, so that no line
                // is read twice.
                None if top && !self.s[start..self.i].contains('\n') => self.i = start,
                None => return None,
            }
        }
        if rest.starts_with('{') {
            self.i += 1;
            let mut map = Value::Object(Map::new());
            loop {
                self.skip_space(true);
                if self.s[self.i..].starts_with('}') {
                    self.i += 1;
                    return Some(map);
                }
                let (key, eq) = key_of(&self.s[self.i..])?;
                self.i += eq + 1;
                let value = self.value(depth + 1, false)?;
                insert(&mut map, &key, value)?;
                self.skip_space(true);
                if self.s[self.i..].starts_with(',') {
                    self.i += 1;
                }
            }
        }
        self.bare(top)
    }

    /// The array at the cursor (on its `[`).
    fn array(&mut self, depth: usize) -> Option<Value> {
        self.i += 1;
        let mut items = Vec::new();
        loop {
            self.skip_space(true);
            if self.s[self.i..].starts_with(']') {
                self.i += 1;
                return Some(Value::Array(items));
            }
            if self.i >= self.s.len() {
                return None;
            }
            items.push(self.value(depth + 1, false)?);
            self.skip_space(true);
            if self.s[self.i..].starts_with(',') {
                self.i += 1;
            }
        }
    }

    /// A bare value: to the end of the line at the top level, to the next separator inside.
    fn bare(&mut self, top: bool) -> Option<Value> {
        let rest = &self.s[self.i..];
        let end = if top {
            rest.find('\n').unwrap_or(rest.len())
        } else {
            rest.find([',', ']', '}', '\n']).unwrap_or(rest.len())
        };
        if end == 0 && !top {
            return None;
        }
        self.i += end;
        let mut text = rest[..end].trim();
        if let Some(at) = text.find(" #") {
            text = text[..at].trim_end();
        }
        Some(bare(text))
    }
}

/// A bare value: a boolean, an integer that reads back the same, or its text.
fn bare(text: &str) -> Value {
    match text {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => match text.parse::<i64>() {
            Ok(n) if n.to_string() == text => Value::from(n),
            _ => Value::String(text.to_owned()),
        },
    }
}

/// Where the quote closing a one-line string of `quote` is in `body`.
fn closing_quote(body: &str, quote: char) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in body.char_indices() {
        match c {
            '\n' => return None,
            '\\' if quote == '"' && !escaped => escaped = true,
            c if c == quote && !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

/// A basic string's text with its escapes read; an escape it does not know stays as written.
fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// The dotted path of a `[a.b]` or `[[a.b]]` header line.
fn header_path(line: &str) -> Option<Vec<String>> {
    let inner = line.strip_prefix("[[").and_then(|l| l.split("]]").next());
    let inner = inner.or_else(|| line.strip_prefix('[').and_then(|l| l.split(']').next()))?;
    let path = split_key(inner)?;
    (!path.is_empty()).then_some(path)
}

/// The key path of a `key = value` (or INI `key: value`) line, and where its `=` or `:` is.
fn key_of(line: &str) -> Option<(Vec<String>, usize)> {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '=' | ':') => return Some((split_key(&line[..i])?, i)),
            (None, '\n' | '[' | '{' | ',') => return None,
            _ => {}
        }
    }
    None
}

/// The parts of a dotted key (`a."b.c".d`), unquoted; `None` when a part is empty.
fn split_key(key: &str) -> Option<Vec<String>> {
    let key = key.trim();
    if key.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut quote = None;
    for c in key.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => part.push(c),
            (None, '"' | '\'') => quote = Some(c),
            (None, '.') => parts.push(std::mem::take(&mut part)),
            (None, c) => part.push(c),
        }
    }
    parts.push(part);
    let parts: Vec<String> = parts.into_iter().map(|p| p.trim().to_owned()).collect();
    parts.iter().all(|p| !p.is_empty()).then_some(parts)
}

/// The object a path leads to, through the last record of any list of records on the way.
fn walk<'v>(mut at: &'v mut Value, path: &[String]) -> Option<&'v mut Value> {
    for part in path {
        at = at
            .as_object_mut()?
            .entry(part.clone())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Array(items) = at {
            at = items.last_mut()?;
        }
    }
    at.is_object().then_some(at)
}

/// Opens the table at `path`: a new record of a list for `[[path]]`, and for a `[path]` given
/// again (as INI repeats sections) a new record too.
fn open_table(root: &mut Value, path: &[String], repeated: bool) -> Option<()> {
    let (last, parent) = path.split_last()?;
    let map = walk(root, parent)?.as_object_mut()?;
    match map.get_mut(last.as_str()) {
        None if repeated => {
            map.insert(last.clone(), Value::Array(vec![Value::Object(Map::new())]));
        }
        None => {
            map.insert(last.clone(), Value::Object(Map::new()));
        }
        Some(Value::Array(items)) => items.push(Value::Object(Map::new())),
        Some(existing @ Value::Object(_)) => {
            let first = existing.take();
            *existing = Value::Array(vec![first, Value::Object(Map::new())]);
        }
        Some(_) => return None,
    }
    Some(())
}

/// Sets `path` to `value`; a key given twice (`After=` lines of a unit) keeps every value, as
/// a list.
fn insert(root: &mut Value, path: &[String], value: Value) -> Option<()> {
    let (last, parent) = path.split_last()?;
    let map = walk(root, parent)?.as_object_mut()?;
    match map.get_mut(last.as_str()) {
        None => {
            map.insert(last.clone(), value);
        }
        Some(Value::Array(items)) if !items.iter().all(Value::is_object) || items.is_empty() => {
            items.push(value)
        }
        Some(Value::Object(_)) | Some(Value::Array(_)) => return None,
        Some(existing) => {
            let first = existing.take();
            *existing = Value::Array(vec![first, value]);
        }
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_file_is_a_list_of_package_records() {
        // The head of this crate's Cargo.lock.
        let text = "# This file is automatically @generated by Cargo.\nversion = 4\n\n[[package]]\nname = \"addr2line\"\nversion = \"0.24.2\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\nchecksum = \"dfbe277e56a376000877090da837660b4427aad530e3028d44e0bffe4f89a1c1\"\ndependencies = [\n \"gimli\",\n]\n\n[[package]]\nname = \"aho-corasick\"\nversion = \"1.1.3\"\ndependencies = [\"memchr\"]\n\n[package.metadata]\nnote = 'x # y'\n";
        let v = parse(text).unwrap();
        assert_eq!(v["version"], 4);
        assert_eq!(v["package"][0]["dependencies"][0], "gimli");
        assert_eq!(v["package"][1]["version"], "1.1.3");
        // A sub-table after `[[package]]` belongs to the last package.
        assert_eq!(v["package"][1]["metadata"]["note"], "x # y");
    }

    #[test]
    fn dotted_keys_inline_tables_and_multi_line_strings() {
        let text = "[dependencies]\ntokio = { version = \"1.40\", features = [\"rt\", \"net\"] }\nserde.workspace = true\n[package]\ndescription = \"\"\"\nA library\nfor \"things\".\"\"\"\nrust-version = \"1.70\" # the MSRV\n";
        let v = parse(text).unwrap();
        assert_eq!(v["dependencies"]["tokio"]["features"][1], "net");
        assert_eq!(v["dependencies"]["serde"]["workspace"], true);
        assert_eq!(v["package"]["description"], "A library\nfor \"things\".");
        assert_eq!(v["package"]["rust-version"], "1.70");
    }

    #[test]
    fn ini_repeated_sections_are_records_and_repeated_keys_lists() {
        // A systemd unit with two `After=` lines, and a git config's repeated remotes.
        let unit = "[Unit]\nDescription=Daily apt download activities\nAfter=network.target\nAfter=connman.service\n\n[Service]\nType=oneshot\nExecStart=/usr/lib/apt/apt.systemd.daily update\n";
        let v = parse(unit).unwrap();
        assert_eq!(v["Unit"]["After"][1], "connman.service");
        assert_eq!(
            v["Service"]["ExecStart"],
            "/usr/lib/apt/apt.systemd.daily update"
        );
        let ini = "[remote]\nname = origin\nurl: https://example.org/a.git\n[remote]\nname = upstream\n; a comment\n";
        let v = parse(ini).unwrap();
        assert_eq!(v["remote"][1]["name"], "upstream");
        assert_eq!(v["remote"][0]["url"], "https://example.org/a.git");
    }

    #[test]
    fn what_it_cannot_read_is_given_up() {
        assert!(parse("not a config at all\njust words\n").is_none());
        assert!(parse("a = 1\na.b = 2\n").is_none());
        assert!(parse(&format!("a = {}", "[\n".repeat(200))).is_none());
        assert_eq!(parse("glob = [0-9]*\n").unwrap()["glob"], "[0-9]*");
        for text in ["a = \"open", "a = [1, 2", "[[", "a = {", "x = '''"] {
            for end in (0..=text.len()).filter(|&i| text.is_char_boundary(i)) {
                let _ = parse(&text[..end]);
            }
        }
    }
}
