//! Rich text given as a tree of typed nodes — a Markdown syntax tree (`{"type": "root",
//! "children": [{"type": "paragraph", "children": [{"type": "text", "value": …}]}]}`, as
//! documentation generators emit), or a document of an issue tracker's API (`{"type": "doc",
//! "content": [{"type": "paragraph", "content": [{"type": "text", "text": …}]}]}`) — is read
//! as its text. As a tree, a sentence costs many times its length in node types and braces,
//! and a record's line shortened to fit shows the braces and cuts the words.

use serde_json::{Map, Value};

/// The members that hold a node's child nodes.
const CHILDREN: [&str; 2] = ["children", "content"];
/// The members that hold a leaf node's text.
const TEXTS: [&str; 2] = ["value", "text"];
/// The members that hold a link node's target.
const LINKS: [&str; 2] = ["url", "href"];
/// Trees nested deeper than this are read as they are: no text tree is this deep, and the
/// walk's recursion stays bounded.
const MAX_DEPTH: usize = 32;

/// Replaces every rich-text tree in `value` by a string of its text, and tells whether any
/// was replaced.
pub(super) fn flatten(value: &mut Value) -> bool {
    flatten_within(value, 0)
}

fn flatten_within(value: &mut Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    if is_tree(value) {
        let mut text = String::new();
        write_text(value, &mut text, 0);
        *value = Value::String(text.trim().to_owned());
        return true;
    }
    let mut changed = false;
    match value {
        Value::Array(items) => {
            for item in items {
                changed |= flatten_within(item, depth + 1);
            }
        }
        Value::Object(map) => {
            for (_, member) in map.iter_mut() {
                changed |= flatten_within(member, depth + 1);
            }
        }
        _ => {}
    }
    changed
}

/// Whether `value` holds a rich-text tree anywhere: a parsed document borrowed from a caller
/// is copied only then.
pub(super) fn contains(value: &Value) -> bool {
    contains_within(value, 0)
}

fn contains_within(value: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    if is_tree(value) {
        return true;
    }
    match value {
        Value::Array(items) => items.iter().any(|v| contains_within(v, depth + 1)),
        Value::Object(map) => map.values().any(|v| contains_within(v, depth + 1)),
        _ => false,
    }
}

/// A typed node with child nodes, every node below it typed or text, and some text in it.
fn is_tree(value: &Value) -> bool {
    let Value::Object(map) = value else {
        return false;
    };
    typed(map) && children(map).is_some() && text_in(map, 0) == Some(true)
}

fn typed(map: &Map<String, Value>) -> bool {
    map.get("type").is_some_and(Value::is_string)
}

fn children(map: &Map<String, Value>) -> Option<&Vec<Value>> {
    CHILDREN
        .iter()
        .find_map(|k| map.get(*k))
        .and_then(Value::as_array)
}

fn leaf_text(map: &Map<String, Value>) -> Option<&str> {
    TEXTS
        .iter()
        .find_map(|k| map.get(*k))
        .and_then(Value::as_str)
}

/// `Some(whether it holds any text)` when every node under `map` is an object that is typed
/// or holds text (a leaf), with child nodes only under the members that hold them; `None`
/// otherwise. One walk answers both.
fn text_in(map: &Map<String, Value>, depth: usize) -> Option<bool> {
    if depth > MAX_DEPTH {
        return None;
    }
    let own = leaf_text(map).is_some_and(|t| !t.trim().is_empty());
    let Some(nodes) = children(map) else {
        return (typed(map) || leaf_text(map).is_some()).then_some(own);
    };
    let mut any = own;
    for node in nodes {
        let m = node.as_object()?;
        if !typed(m) && leaf_text(m).is_none() {
            return None;
        }
        any |= text_in(m, depth + 1)?;
    }
    Some(any)
}

/// Appends the text of the node `value`: a leaf's text; the texts of inline children run
/// together, and of block children (those with children of their own) one per line; a link's
/// target after its text.
fn write_text(value: &Value, out: &mut String, depth: usize) {
    let Some(map) = value.as_object() else {
        return;
    };
    if depth > MAX_DEPTH {
        return;
    }
    if let Some(text) = leaf_text(map) {
        out.push_str(text);
    }
    if let Some(nodes) = children(map) {
        let blocks = nodes
            .iter()
            .any(|n| n.as_object().and_then(children).is_some() && !is_link(n));
        for node in nodes {
            if blocks && !out.is_empty() && !out.ends_with('\n') {
                out.push('\n');
            }
            write_text(node, out, depth + 1);
        }
    }
    if let Some(target) = link_target(map) {
        out.push_str(" <");
        out.push_str(target);
        out.push('>');
    }
}

fn is_link(value: &Value) -> bool {
    value.as_object().and_then(link_target).is_some()
}

/// A link node's target: its own `url`/`href`, or its attributes' (`attrs.href`).
fn link_target(map: &Map<String, Value>) -> Option<&str> {
    let own = LINKS
        .iter()
        .find_map(|k| map.get(*k))
        .and_then(Value::as_str);
    own.or_else(|| {
        map.get("attrs")
            .and_then(|a| a.get("href"))
            .and_then(Value::as_str)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_markdown_syntax_tree_reads_as_its_text() {
        let mut doc = json!({"name": "fail", "description": {"type": "root", "children": [
            {"type": "paragraph", "children": [
                {"type": "text", "value": "Create a fatal error associated with the file."}]},
            {"type": "paragraph", "children": [
                {"type": "text", "value": "See "},
                {"type": "link", "url": "https://example.com/vfile", "children": [{"type": "text", "value": "the guide"}]},
                {"type": "inlineCode", "value": "file.fail()"}]}
        ]}});
        assert!(flatten(&mut doc));
        assert_eq!(
            doc["description"],
            "Create a fatal error associated with the file.\nSee the guide <https://example.com/vfile>file.fail()"
        );
        assert_eq!(doc["name"], "fail");
    }

    #[test]
    fn an_issue_tracker_document_reads_as_its_text() {
        let mut issue = json!({"fields": {"description": {"type": "doc", "version": 1, "content": [
            {"type": "paragraph", "content": [{"type": "text", "text": "The export fails on empty rows."}]}
        ]}}});
        assert!(flatten(&mut issue));
        assert_eq!(
            issue["fields"]["description"],
            "The export fails on empty rows."
        );
    }

    #[test]
    fn records_that_only_have_a_type_and_children_are_left_alone() {
        // A tree of typed nodes with no text (a layout, a dependency tree) is data.
        let mut layout = json!({"type": "row", "children": [{"type": "cell", "width": 3}, {"type": "cell", "width": 5}]});
        assert!(!flatten(&mut layout));
        let mut deps =
            json!({"type": "module", "children": [{"name": "left-pad", "version": "1.3.0"}]});
        assert!(!flatten(&mut deps));
        assert!(!contains(&deps));
    }
}
