//! A lenient reader of XML into a JSON value with keys in document order, so that a list of
//! repeated elements (`<testcase>`s of a JUnit report, `<item>`s of a feed, `<dependency>`s)
//! is a record array that the JSON path descends into, projects and tables.
//!
//! The mapping: the root element is an object with one key, its name. An element with neither
//! attributes nor child elements is its text (or null when empty); any other element is an
//! object of its attributes (by name), then its child elements (by name, in the order each
//! name first appears; a name repeated among siblings becomes an array of them), then its own
//! text under `#text` when it has some beside its children. Comments, the prolog, processing
//! instructions and the doctype are left out; entities and CDATA are read as text.
//!
//! One pass over the text, no recursion. Anything not well formed (a closing tag that does
//! not match, an element never closed, text after the root) gives up with `None`: the
//! document is then read as lines.

use std::collections::HashMap;
use std::ops::Range;

use serde_json::{Map, Value};

use super::records::{Layout, LineField, LineRecord, LineRecords, trimmed};
use crate::methods::extract::query::Query;

/// Elements nested deeper than this are given up on: no tool prints them, and the JSON path
/// walks no tree deeper than a JSON parse would build (serde_json stops at 128).
const MAX_DEPTH: usize = 100;
/// The key of an element's own text when it also has attributes or children.
const TEXT_KEY: &str = "#text";

/// An element being read: its name, attributes, children so far and text.
struct Open<'a> {
    /// Its place in the list of [`Element`]s read so far.
    index: usize,
    name: &'a str,
    attributes: Vec<(&'a str, String)>,
    children: Vec<(&'a str, Value)>,
    text: String,
}

impl<'a> Open<'a> {
    fn new(index: usize, name: &'a str, attributes: Vec<(&'a str, String)>) -> Self {
        Open {
            index,
            name,
            attributes,
            children: Vec::new(),
            text: String::new(),
        }
    }

    fn into_value(self) -> Value {
        let text = self.text.trim();
        if self.attributes.is_empty() && self.children.is_empty() {
            return if text.is_empty() {
                Value::Null
            } else {
                Value::String(text.to_owned())
            };
        }
        let mut map = Map::new();
        for (name, value) in self.attributes {
            map.insert(name.to_owned(), Value::String(value));
        }
        // Siblings of one name are gathered into an array in the order the name first
        // appears; a child named like an attribute keeps the attribute apart.
        let mut positions: HashMap<&str, usize> = HashMap::new();
        let mut groups: Vec<(&str, Vec<Value>)> = Vec::new();
        for (name, value) in self.children {
            match positions.get(name) {
                Some(&at) => groups[at].1.push(value),
                None => {
                    positions.insert(name, groups.len());
                    groups.push((name, vec![value]));
                }
            }
        }
        for (name, mut group) in groups {
            let value = if group.len() == 1 {
                group.pop().unwrap_or(Value::Null)
            } else {
                Value::Array(group)
            };
            let key = if map.contains_key(name) {
                format!("<{name}>")
            } else {
                name.to_owned()
            };
            map.insert(key, value);
        }
        if !text.is_empty() {
            map.insert(TEXT_KEY.to_owned(), Value::String(text.to_owned()));
        }
        Value::Object(map)
    }
}

/// Where an element sits in its document, as byte ranges of the text.
#[derive(Debug, Clone)]
struct Element {
    /// Its name.
    name: Range<usize>,
    /// Its start tag, `<` to `>`, attributes verbatim.
    start_tag: Range<usize>,
    /// The element whole, start tag to end tag.
    whole: Range<usize>,
    /// What is between its tags (empty when it closes itself).
    inner: Range<usize>,
    /// Its attributes: each name, and its value as written (between the quotes).
    attributes: Vec<(Range<usize>, Range<usize>)>,
    /// The element it is in.
    parent: Option<usize>,
}

/// Parses `text` as one XML document, or `None` when it is not well formed.
pub(crate) fn parse(text: &str) -> Option<Value> {
    read(text).map(|(value, _)| value)
}

/// The byte range of `part`, a slice of `text`, in `text`.
fn range_in(text: &str, part: &str) -> Range<usize> {
    let start = part.as_ptr() as usize - text.as_ptr() as usize;
    start..start + part.len()
}

/// Parses `text` as one XML document, with the place of every element in it.
fn read(text: &str) -> Option<(Value, Vec<Element>)> {
    let mut elements: Vec<Element> = Vec::new();
    let mut stack: Vec<Open<'_>> = Vec::new();
    let mut root: Option<Value> = None;
    let mut rest = text.trim_start_matches('\u{feff}');
    while !rest.is_empty() {
        let Some(lt) = rest.find('<') else {
            // Text outside any element may only be whitespace.
            match stack.last_mut() {
                Some(open) => open.text.push_str(&unescape(rest)),
                None if rest.trim().is_empty() => {}
                None => return None,
            }
            break;
        };
        if lt > 0 {
            let between = &rest[..lt];
            match stack.last_mut() {
                Some(open) => open.text.push_str(&unescape(between)),
                None if between.trim().is_empty() => {}
                None => return None,
            }
        }
        rest = &rest[lt..];
        if let Some(after) = rest.strip_prefix("<!--") {
            rest = &after[after.find("-->")? + 3..];
        } else if let Some(after) = rest.strip_prefix("<![CDATA[") {
            let end = after.find("]]>")?;
            stack.last_mut()?.text.push_str(&after[..end]);
            rest = &after[end + 3..];
        } else if let Some(after) = rest.strip_prefix("<?") {
            rest = &after[after.find("?>")? + 2..];
        } else if let Some(after) = rest.strip_prefix("<!") {
            // A doctype, possibly with an internal subset in brackets.
            let end = match (after.find('['), after.find('>')) {
                (Some(open), Some(close)) if open < close => after[open..].find("]>")? + open + 1,
                (_, close) => close?,
            };
            rest = &after[end + 1..];
        } else if let Some(after) = rest.strip_prefix("</") {
            let end = after.find('>')?;
            let name = after[..end].trim();
            let open = stack.pop()?;
            if open.name != name {
                return None;
            }
            let element = &mut elements[open.index];
            element.inner.end = text.len() - rest.len();
            rest = &after[end + 1..];
            element.whole.end = text.len() - rest.len();
            close(&mut stack, &mut root, open)?;
        } else {
            let tag_start = text.len() - rest.len();
            let (name, attributes, self_closing, after) = start_tag(&rest[1..])?;
            rest = after;
            if stack.len() >= MAX_DEPTH || (stack.is_empty() && root.is_some()) {
                return None;
            }
            let tag_end = text.len() - rest.len();
            elements.push(Element {
                name: range_in(text, name),
                start_tag: tag_start..tag_end,
                whole: tag_start..tag_end,
                inner: tag_end..tag_end,
                attributes: attributes
                    .iter()
                    .map(|(key, raw)| (range_in(text, key), range_in(text, raw)))
                    .collect(),
                parent: stack.last().map(|open| open.index),
            });
            let attributes = attributes
                .into_iter()
                .map(|(key, raw)| (key, unescape(raw)))
                .collect();
            let open = Open::new(elements.len() - 1, name, attributes);
            if self_closing {
                close(&mut stack, &mut root, open)?;
            } else {
                stack.push(open);
            }
        }
    }
    if !stack.is_empty() {
        return None;
    }
    Some((root?, elements))
}

/// Wrapper start tags above the record list up to this long are one pinned header (the totals
/// of a report sit there); a longer stretch keeps only the list's own parent tag.
const MAX_HEADER_BYTES: usize = 1024;
/// Attributes that name a record, in order of preference; else its first attribute names it.
const NAMING_ATTRIBUTES: [&str; 3] = ["name", "id", "key"];

/// The largest list of at least `min_records` sibling elements of one name (by bytes), as
/// records whose fields keep their place in `text`: a record's start tag is its identity
/// (its attributes are fields on that piece), each child element a field of its own, whole.
/// The wrapper start tags above the list are its header. `None` when `text` is not well formed
/// or holds no such list.
pub(crate) fn records(text: &str, min_records: usize) -> Option<LineRecords> {
    let (_, elements) = read(text)?;
    let mut groups: HashMap<(Option<usize>, &str), Vec<usize>> = HashMap::new();
    for (index, element) in elements.iter().enumerate() {
        groups
            .entry((element.parent, &text[element.name.clone()]))
            .or_default()
            .push(index);
    }
    let bytes = |group: &[usize]| -> usize { group.iter().map(|&i| elements[i].whole.len()).sum() };
    let (&(parent, _), list) = groups
        .iter()
        .filter(|(_, group)| group.len() >= min_records)
        // Ties go to the earlier list, the same every run.
        .max_by_key(|(_, group)| (bytes(group), std::cmp::Reverse(group[0])))?;
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    for (index, element) in elements.iter().enumerate() {
        if let Some(p) = element.parent {
            children.entry(p).or_default().push(index);
        }
    }
    // A record named by neither attribute nor leaf child (a `<layout>` holding a
    // `<configItem>` tree) has no verbatim piece that names it: its nested children would be
    // shown as whole subtrees. Such a list is better cut as a tree.
    let nested = |index: usize| {
        children
            .get(&index)
            .into_iter()
            .flatten()
            .any(|child| children.contains_key(child))
    };
    if list
        .iter()
        .any(|&index| elements[index].attributes.is_empty() && nested(index))
    {
        return None;
    }
    let records = list
        .iter()
        .map(|&index| {
            let element = &elements[index];
            let tag = element.start_tag.clone();
            let field = |key: Range<usize>, value: Range<usize>, line: Range<usize>| LineField {
                key,
                value,
                line,
                more: Vec::new(),
            };
            let naming = NAMING_ATTRIBUTES
                .iter()
                .find_map(|n| {
                    element
                        .attributes
                        .iter()
                        .position(|(key, _)| &text[key.clone()] == *n)
                })
                .unwrap_or(0);
            let mut fields = Vec::new();
            match element.attributes.get(naming) {
                Some((key, value)) => fields.push(field(key.clone(), value.clone(), tag.clone())),
                None => {
                    // Without a naming attribute a record is named by its first leaf child's
                    // text (`<extension>wasm</extension>`), not by all of its markup: tag
                    // names such as `mime-type` would name every record of the list for a
                    // query about MIME types.
                    let name = children
                        .get(&index)
                        .into_iter()
                        .flatten()
                        .filter(|child| !children.contains_key(child))
                        .map(|&child| trimmed(text, elements[child].inner.clone()))
                        .find(|value| !value.is_empty());
                    fields.push(field(
                        element.name.clone(),
                        name.unwrap_or_else(|| trimmed(text, element.inner.clone())),
                        tag.clone(),
                    ))
                }
            }
            for (at, (key, value)) in element.attributes.iter().enumerate() {
                if at != naming {
                    fields.push(field(key.clone(), value.clone(), tag.clone()));
                }
            }
            for &child in children.get(&index).into_iter().flatten() {
                let child = &elements[child];
                fields.push(field(
                    child.name.clone(),
                    trimmed(text, child.inner.clone()),
                    child.whole.clone(),
                ));
            }
            LineRecord { fields }
        })
        .collect();
    let header = parent.map(|p| {
        let own = elements[p].start_tag.clone();
        let from_root = elements[0].start_tag.start..own.end;
        if from_root.len() <= MAX_HEADER_BYTES {
            from_root
        } else {
            own
        }
    });
    Some(LineRecords {
        layout: Layout::Elements,
        header,
        records,
        footer: None,
    })
}

/// A named element larger than this is a section of the document, not one definition: the
/// query's words name too much of it for a prior on all of it to pick anything out.
const MAX_NAMED_ELEMENT_BYTES: usize = 8 * 1024;
/// Named elements may hold at most this share (in percent) of the document: past it, the
/// names are common words of the document, not the definitions the query is about.
const MAX_NAMED_SHARE: usize = 25;

/// The elements of `text` the query names: those with child elements whose naming attribute
/// (`name`, `id` or `key`) holds one of the query's exact terms or has only query words
/// (`<method name="RemovePackages">`, `<wadl:method id="people-newTeam">`), as byte ranges
/// of the text, each at most [`MAX_NAMED_ELEMENT_BYTES`] long. Exact terms decide when words
/// name too much of the document ([`MAX_NAMED_SHARE`]); none when even they do, or when
/// `text` is not well formed.
pub(crate) fn named_elements(text: &str, query: &Query) -> Vec<Range<usize>> {
    let Some((_, elements)) = read(text) else {
        return Vec::new();
    };
    let mut containers = vec![false; elements.len()];
    for element in &elements {
        if let Some(parent) = element.parent {
            containers[parent] = true;
        }
    }
    let mut buf = String::new();
    // Each named element, and whether an exact term names it; in document order, so an
    // element inside another named one follows it.
    let named: Vec<(Range<usize>, bool)> = elements
        .iter()
        .enumerate()
        .filter(|(i, e)| containers[*i] && e.parent.is_some())
        .filter(|(_, e)| e.whole.len() <= MAX_NAMED_ELEMENT_BYTES)
        .filter_map(|(_, e)| {
            let value = NAMING_ATTRIBUTES.iter().find_map(|n| {
                e.attributes
                    .iter()
                    .find(|(key, _)| &text[key.clone()] == *n)
                    .map(|(_, value)| &text[value.clone()])
            })?;
            if query.mentions(value) {
                Some((e.whole.clone(), true))
            } else {
                query
                    .names_every_word(value, true, &mut buf)
                    .then(|| (e.whole.clone(), false))
            }
        })
        .collect();
    let within_share = |exact_only: bool| {
        let mut end = 0;
        let mut bytes = 0;
        for (whole, exact) in &named {
            if (*exact || !exact_only) && whole.start >= end {
                bytes += whole.len();
                end = whole.end;
            }
        }
        bytes * 100 <= text.len() * MAX_NAMED_SHARE
    };
    let exact_only = if within_share(false) {
        false
    } else if within_share(true) {
        true
    } else {
        return Vec::new();
    };
    named
        .into_iter()
        .filter(|(_, exact)| *exact || !exact_only)
        .map(|(whole, _)| whole)
        .collect()
}

/// Ends element `open`: it becomes a child of the element around it, or the root.
fn close<'a>(stack: &mut [Open<'a>], root: &mut Option<Value>, open: Open<'a>) -> Option<()> {
    let name = open.name;
    let value = open.into_value();
    match stack.last_mut() {
        Some(parent) => parent.children.push((name, value)),
        None => {
            let mut map = Map::new();
            map.insert(name.to_owned(), value);
            *root = Some(Value::Object(map));
        }
    }
    Some(())
}

/// The element's name, its attributes, whether it closes itself, and the text after the tag;
/// `text` starts just after the `<`.
/// Attribute values are as written, entities not yet decoded.
#[allow(clippy::type_complexity)]
fn start_tag(text: &str) -> Option<(&str, Vec<(&str, &str)>, bool, &str)> {
    let name_end = text.find(|c: char| c.is_whitespace() || c == '>' || c == '/')?;
    let name = &text[..name_end];
    if name.is_empty() || !name.chars().all(is_name_char) {
        return None;
    }
    let mut rest = &text[name_end..];
    let mut attributes = Vec::new();
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix("/>") {
            return Some((name, attributes, true, after));
        }
        if let Some(after) = rest.strip_prefix('>') {
            return Some((name, attributes, false, after));
        }
        let eq = rest.find('=')?;
        let attribute = rest[..eq].trim();
        if attribute.is_empty() || !attribute.chars().all(is_name_char) {
            return None;
        }
        let value = rest[eq + 1..].trim_start();
        let quote = value.chars().next().filter(|q| *q == '"' || *q == '\'')?;
        let end = value[1..].find(quote)? + 1;
        attributes.push((attribute, &value[1..end]));
        rest = &value[end + 1..];
    }
}

fn is_name_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')
}

/// Text with its entities decoded, as HTML's are.
fn unescape(text: &str) -> String {
    crate::methods::extract::kinds::html::decode_entities(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repeated_elements_become_a_record_array() {
        let text = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- a JUnit report -->
<testsuite name="api" tests="3" failures="1">
  <testcase classname="api.UserTest" name="creates" time="0.012"/>
  <testcase classname="api.UserTest" name="rejects &amp; logs" time="0.003">
    <failure message="expected 400 but was 500">AssertionError at UserTest.java:42</failure>
  </testcase>
  <testcase classname="api.UserTest" name="deletes" time="0.020"/>
</testsuite>"#;
        let value = parse(text).unwrap();
        let suite = &value["testsuite"];
        assert_eq!(suite["name"], "api");
        let cases = suite["testcase"].as_array().unwrap();
        assert_eq!(cases.len(), 3);
        assert_eq!(cases[1]["name"], "rejects & logs");
        assert_eq!(cases[1]["failure"]["message"], "expected 400 but was 500");
        assert_eq!(
            cases[1]["failure"]["#text"],
            "AssertionError at UserTest.java:42"
        );
    }

    #[test]
    fn leaf_elements_are_their_text() {
        let text = "<project><properties><java.version>17</java.version><empty/></properties><dependencies><dependency><groupId>junit</groupId><version>4.13.2</version></dependency><dependency><groupId>org.slf4j</groupId><version><![CDATA[2.0.9]]></version></dependency></dependencies></project>";
        assert_eq!(
            parse(text).unwrap(),
            json!({"project": {
                "properties": {"java.version": "17", "empty": null},
                "dependencies": {"dependency": [
                    {"groupId": "junit", "version": "4.13.2"},
                    {"groupId": "org.slf4j", "version": "2.0.9"}
                ]}
            }})
        );
    }

    #[test]
    fn a_record_without_a_name_attribute_is_named_by_its_first_leaf() {
        // The shape of Tomcat's `conf/web.xml`.
        let mappings: String = ["wasm", "webm", "webp", "woff", "xml"]
            .iter()
            .map(|ext| {
                format!(
                    "    <mime-mapping>\n        <extension>{ext}</extension>\n        <mime-type>application/{ext}</mime-type>\n    </mime-mapping>\n"
                )
            })
            .collect();
        let text = format!("<web-app version=\"6.0\">\n{mappings}</web-app>\n");
        let list = records(&text, 5).unwrap();
        let names: Vec<&str> = list
            .records
            .iter()
            .map(|r| &text[r.fields[0].value.clone()])
            .collect();
        assert_eq!(names, ["wasm", "webm", "webp", "woff", "xml"]);
    }

    #[test]
    fn malformed_documents_are_given_up() {
        assert!(parse("<a><b></a></b>").is_none());
        assert!(parse("<a><b>").is_none());
        assert!(parse("<a/><b/>").is_none());
        assert!(parse("text <a/>").is_none());
        assert!(parse("<a x=1/>").is_none());
        assert!(parse("<a><!-- never closed").is_none());
        assert!(parse("").is_none());
        assert!(parse("<").is_none());
    }

    #[test]
    fn entities_are_read() {
        assert_eq!(
            unescape("a &lt;b&gt; &#65;&#x42; &unknown; &"),
            "a <b> AB &unknown; &"
        );
        // Text after an `&` that is not ASCII: a cut inside a character would panic.
        assert_eq!(unescape("R&D — naïve"), "R&D — naïve");
        assert_eq!(unescape("&ééééééé;"), "&ééééééé;");
    }
}
