//! Large JSON documents, walked as text a level at a time.
//!
//! A `serde_json::Value` tree of many small records takes 10–25× the text's size (a map, a
//! `String` per key and per value, for every record), so a 60 MB array would need gigabytes. A
//! document larger than [`PARSE_WHOLE_BYTES`] is therefore validated without building anything
//! and then cut into its elements' byte ranges; an element is parsed into a `Value` only when it
//! is small, one at a time, and dropped once its unit is rendered. Below that size the whole
//! document is parsed at once, as a tree that costs a bounded amount.

use std::borrow::Cow;

use serde_json::Value;

/// Values of at most this many bytes of text are parsed whole into a tree; larger ones are
/// walked a level at a time.
pub(crate) const PARSE_WHOLE_BYTES: usize = 1 << 20;

/// Whether `text` is one valid JSON object or array. Checked without building a tree.
pub(crate) fn is_document(text: &str) -> bool {
    let trimmed = text.trim_start();
    (trimmed.starts_with('{') || trimmed.starts_with('['))
        && serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// The value of the JSON text `text`. A number too large for a float (an RSA modulus written
/// as an integer, as sslyze does) fails serde_json's parse of the whole document: such a
/// number is read as the string of its digits instead.
pub(crate) fn parse_value(text: &str) -> Option<Value> {
    match serde_json::from_str(text) {
        Ok(value) => Some(value),
        // Only that error earns a second pass: a text that is no document at all (JSON Lines,
        // a log opening with `{`) fails for other reasons, and is not scanned again.
        Err(error) if error.to_string().starts_with("number out of range") => {
            serde_json::from_str(&with_huge_numbers_quoted(text)?).ok()
        }
        Err(_) => None,
    }
}

/// The values of a stream of JSON documents one after another (`go list -json`, `jq '.[]'`),
/// each an object or an array, as one array of them; `None` unless there are at least two and
/// the whole text is such a stream. A failed parse ends at the first byte that is not JSON.
pub(crate) fn parse_stream(text: &str) -> Option<Value> {
    let mut values = Vec::new();
    for value in serde_json::Deserializer::from_str(text).into_iter::<Value>() {
        let value = value.ok()?;
        if !(value.is_object() || value.is_array()) {
            return None;
        }
        values.push(value);
    }
    (values.len() >= 2).then_some(Value::Array(values))
}

/// `text` with every number outside a string that a float cannot hold put in quotes; `None`
/// when it has none.
fn with_huge_numbers_quoted(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out: Option<String> = None;
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => i = string_end(bytes, i),
            b'-' | b'0'..=b'9' => {
                let start = i;
                while bytes
                    .get(i)
                    .is_some_and(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                {
                    i += 1;
                }
                let number = &text[start..i];
                if number.parse::<f64>().is_ok_and(f64::is_infinite) {
                    let out = out.get_or_insert_with(|| String::with_capacity(text.len() + 16));
                    out.push_str(&text[copied..start]);
                    out.push('"');
                    out.push_str(number);
                    out.push('"');
                    copied = i;
                }
            }
            _ => i += 1,
        }
    }
    let mut out = out?;
    out.push_str(&text[copied..]);
    Some(out)
}

/// The value of the JSON text `raw`, its strings of JSON read as their trees and its
/// rich-text trees as their text.
fn parse(raw: &str) -> Option<Value> {
    let mut value = parse_value(raw)?;
    super::readable::read_in_place(&mut value);
    Some(value)
}

/// One element of a container: parsed when small, still text when large.
pub(super) enum Item<'v> {
    /// A parsed value, borrowed from a parsed parent or owned when parsed from text here.
    Parsed(Cow<'v, Value>),
    /// The text of a value larger than [`PARSE_WHOLE_BYTES`], valid JSON.
    Raw(&'v str),
}

impl<'v> Item<'v> {
    /// The element whose text is `raw` (valid JSON): parsed when small enough.
    pub(super) fn from_text(raw: &'v str) -> Self {
        if raw.len() > PARSE_WHOLE_BYTES && raw.starts_with(['[', '{']) {
            return Item::Raw(raw);
        }
        // The text was validated as part of the whole document, so this parse does not fail;
        // should it, the element reads as its text.
        Item::Parsed(Cow::Owned(
            parse(raw).unwrap_or_else(|| Value::String(raw.to_owned())),
        ))
    }

    pub(super) fn is_object(&self) -> bool {
        match self {
            Item::Parsed(v) => v.is_object(),
            Item::Raw(raw) => raw.starts_with('{'),
        }
    }

    pub(super) fn is_array(&self) -> bool {
        match self {
            Item::Parsed(v) => v.is_array(),
            Item::Raw(raw) => raw.starts_with('['),
        }
    }

    /// The compact length, counted up to a little past `limit`. A raw element is larger than
    /// any limit the walk asks about.
    pub(super) fn approx_len(&self, limit: usize) -> usize {
        match self {
            Item::Parsed(v) => super::approx_len(v, limit),
            Item::Raw(raw) => raw.len(),
        }
    }

    /// The compact text of a parsed element; a raw element (never shown inline) is its text.
    pub(super) fn compact(&self) -> String {
        match self {
            Item::Parsed(v) => super::compact(v),
            Item::Raw(raw) => (*raw).to_owned(),
        }
    }

    /// `[…30 items]` or `{…12 keys}`.
    pub(super) fn summary(&self) -> String {
        match self {
            Item::Parsed(v) => super::summary(v),
            Item::Raw(raw) if raw.starts_with('{') => format!("{{…{} keys}}", members(raw).len()),
            Item::Raw(raw) => format!("[…{} items]", elements(raw).count()),
        }
    }
}

/// An element of a container as the walk holds it: a parsed value, or the text of one.
pub(super) trait Element {
    /// The element, parsed when it is text and small enough.
    fn item(&self) -> Item<'_>;
    /// Whether the element is an object, told without parsing it.
    fn is_object(&self) -> bool;
    /// Calls `f` with the element's value, parsing it first when it is text.
    fn with_value(&self, f: &mut dyn FnMut(&Value));
    /// The element's value when it is one already (never parsed from text here).
    fn as_value(&self) -> Option<&Value>;
}

impl Element for Value {
    fn item(&self) -> Item<'_> {
        Item::Parsed(Cow::Borrowed(self))
    }

    fn is_object(&self) -> bool {
        Value::is_object(self)
    }

    fn with_value(&self, f: &mut dyn FnMut(&Value)) {
        f(self);
    }

    fn as_value(&self) -> Option<&Value> {
        Some(self)
    }
}

impl Element for str {
    fn item(&self) -> Item<'_> {
        Item::from_text(self)
    }

    fn is_object(&self) -> bool {
        self.starts_with('{')
    }

    fn with_value(&self, f: &mut dyn FnMut(&Value)) {
        if let Some(value) = parse(self) {
            f(&value);
        }
    }

    fn as_value(&self) -> Option<&Value> {
        None
    }
}

impl<E: Element + ?Sized> Element for &E {
    fn item(&self) -> Item<'_> {
        (**self).item()
    }

    fn is_object(&self) -> bool {
        (**self).is_object()
    }

    fn with_value(&self, f: &mut dyn FnMut(&Value)) {
        (**self).with_value(f);
    }

    fn as_value(&self) -> Option<&Value> {
        (**self).as_value()
    }
}

/// The texts of the elements of the JSON array `raw` (valid JSON, starting with `[`), found as
/// they are read: a record array is read twice (its schema, then its lines) and never held as a
/// list of millions of slices.
pub(super) fn elements(raw: &str) -> Elements<'_> {
    let bytes = raw.as_bytes();
    let start = skip_space(bytes, 1);
    Elements {
        raw,
        next: (bytes.get(start) != Some(&b']')).then_some(start),
    }
}

/// The iterator of [`elements`].
#[derive(Clone)]
pub(super) struct Elements<'a> {
    raw: &'a str,
    /// Where the next element starts, if there is one.
    next: Option<usize>,
}

impl<'a> Iterator for Elements<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let start = self.next.filter(|&i| i < self.raw.len())?;
        let bytes = self.raw.as_bytes();
        let end = value_end(bytes, start);
        let after = skip_space(bytes, end);
        self.next = (bytes.get(after) == Some(&b',')).then(|| skip_space(bytes, after + 1));
        Some(&self.raw[start..end])
    }
}

/// The keys (decoded) and value texts of the members of the JSON object `raw` (valid JSON,
/// starting with `{`).
pub(super) fn members(raw: &str) -> Vec<(String, &str)> {
    let bytes = raw.as_bytes();
    let mut out = Vec::new();
    let mut i = skip_space(bytes, 1);
    while bytes.get(i) == Some(&b'"') {
        let key_end = string_end(bytes, i);
        let key = serde_json::from_str::<String>(&raw[i..key_end]).unwrap_or_default();
        i = skip_space(bytes, key_end);
        if bytes.get(i) != Some(&b':') {
            break;
        }
        i = skip_space(bytes, i + 1);
        let end = value_end(bytes, i);
        out.push((key, &raw[i..end]));
        i = skip_space(bytes, end);
        if bytes.get(i) != Some(&b',') {
            break;
        }
        i = skip_space(bytes, i + 1);
    }
    out
}

fn skip_space(bytes: &[u8], mut i: usize) -> usize {
    while bytes.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The end of the value that starts at `start`. Strings are skipped whole, so brackets inside
/// them do not count.
fn value_end(bytes: &[u8], start: usize) -> usize {
    match bytes.get(start) {
        Some(b'"') => string_end(bytes, start),
        Some(b'[' | b'{') => {
            let mut depth = 0usize;
            let mut i = start;
            while let Some(&b) = bytes.get(i) {
                match b {
                    b'"' => {
                        i = string_end(bytes, i);
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return i + 1;
                        }
                    }
                    _ => {}
                }
                i += 1;
            }
            bytes.len()
        }
        _ => {
            let mut i = start;
            while bytes
                .get(i)
                .is_some_and(|b| !matches!(b, b',' | b']' | b'}') && !b.is_ascii_whitespace())
            {
                i += 1;
            }
            i
        }
    }
}

/// The end of the string whose opening quote is at `start`, past its closing quote.
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_are_cut_at_top_level_commas_only() {
        let raw = r#"[ {"a":"x,]}","b":[1,2]} , 3,"s\"]", null ,[[]] ]"#;
        assert_eq!(
            elements(raw).collect::<Vec<_>>(),
            vec![
                r#"{"a":"x,]}","b":[1,2]}"#,
                "3",
                r#""s\"]""#,
                "null",
                "[[]]"
            ]
        );
        assert_eq!(elements("[ ]").count(), 0);
    }

    #[test]
    fn members_decode_their_keys() {
        let raw = r#"{"a\"b": 1, "c" : {"d":[2]} }"#;
        assert_eq!(
            members(raw),
            vec![("a\"b".to_owned(), "1"), ("c".to_owned(), r#"{"d":[2]}"#)]
        );
    }

    /// A document larger than [`PARSE_WHOLE_BYTES`] in every part: records in an array and
    /// in an object, an array of scalars and nested containers, and small members beside them.
    fn large_document() -> String {
        let records: Vec<Value> = (0..12_000)
            .map(|i| {
                serde_json::json!({
                    "id": i,
                    "name": format!("user{i}"),
                    "state": if i % 97 == 0 { "failed" } else { "ok" },
                    "owner": {"login": format!("u{}", i % 13), "admin": i % 2 == 0},
                    "score": (i * 7919 % 10007) as f64 / 10007.0,
                })
            })
            .collect();
        let by_key: serde_json::Map<String, Value> = records
            .iter()
            .map(|r| (format!("k{}", r["id"]), r.clone()))
            .collect();
        let mixed: Vec<Value> = (0..60_000)
            .map(|i| match i % 500 {
                0 => serde_json::json!({"at": i, "nested": [1, 2, 3]}),
                1 => serde_json::json!([i, "x".repeat(300)]),
                _ => serde_json::json!(format!("value {i}")),
            })
            .collect();
        let document = serde_json::json!({
            "total": 12_000,
            "items": records,
            "by_key": by_key,
            "mixed": mixed,
        });
        serde_json::to_string_pretty(&document).unwrap()
    }

    #[test]
    fn a_large_document_walked_from_its_text_gives_the_units_of_its_parsed_tree() {
        let text = large_document();
        assert!(text.len() > 4 * PARSE_WHOLE_BYTES);
        let query = crate::methods::extract::query::Query::from_hints(
            &crate::methods::extract::Hints::new().with_query("failed user77"),
        );
        let from_text = super::super::build_document(&text, query.as_ref(), 1400);
        let parsed: Value = serde_json::from_str(&text).unwrap();
        let from_tree = super::super::build_parsed(&text, &parsed, query.as_ref(), 1400);
        assert_eq!(from_text.source, from_tree.source);
        assert_eq!(
            format!("{:?}", from_text.units),
            format!("{:?}", from_tree.units)
        );
        assert_eq!(
            format!("{:?}", from_text.fields),
            format!("{:?}", from_tree.fields)
        );
    }

    #[test]
    fn only_whole_objects_and_arrays_are_documents() {
        assert!(is_document(" [1, {\"a\": 2}]"));
        assert!(!is_document("[1, 2"));
        assert!(!is_document("\"text\""));
    }
}
