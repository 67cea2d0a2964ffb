//! Source code: one unit per line, read as an outline of definitions. Every definition's
//! signature ranks above ordinary lines (the map of the file); the whole body of a definition
//! the query names (with the doc comment above it) ranks above everything else; comments rank
//! below code, and a licence or module header before the first line of code ranks last.

use crate::methods::extract::doc::{self, Doc};
use crate::methods::extract::query::Query;
use crate::methods::extract::terms::for_each_word;
use crate::methods::extract::tree::braces;

use super::lines::{self, Style, is_definition};

/// Added to every line of a definition the query names, its doc comment included.
const NAMED_BODY_PRIOR: f32 = 4.0;
/// Comments say less than the code they sit beside.
const COMMENT_PRIOR: f32 = -0.5;
/// The comment block that opens a file (a licence, a module banner) is read last.
const HEADER_PRIOR: f32 = -2.0;
/// A definition whose name is made of at least this many words, all in the query, counts as
/// named by it even when the query spells it as words ("parse chunk size").
const MIN_NAME_WORDS: usize = 2;

/// Cuts source code into lines and weighs them as an outline plus the named definitions.
pub(crate) fn build<'a>(text: &'a str, query: Option<&Query>) -> Doc<'a> {
    let mut doc = lines::build(text, Style::Code);
    let n = doc.units.len();
    let comment: Vec<bool> = (0..n).map(|u| is_comment(doc.text(u).trim())).collect();
    let header_end = comment.iter().position(|c| !c).unwrap_or(n);
    for (u, &is_comment) in comment.iter().enumerate() {
        if u < header_end {
            doc.units[u].prior += HEADER_PRIOR;
        } else if is_comment {
            doc.units[u].prior += COMMENT_PRIOR;
        }
    }
    let Some(query) = query else {
        return doc;
    };
    let mut next_block = doc.units.iter().filter_map(|u| u.block).max().unwrap_or(0) + 1;
    let mut u = 0;
    while u < n {
        let line = doc.text(u).trim();
        if !(is_definition(line) && names_match(line, query)) {
            u += 1;
            continue;
        }
        let start = doc_comment_start(&doc, &comment, u).max(header_end);
        let end = body_end(&doc, u);
        for unit in &mut doc.units[start..end] {
            unit.prior += NAMED_BODY_PRIOR;
            // One block per named definition, so that a match inside it pulls the rest along.
            unit.block = Some(next_block);
        }
        next_block += 1;
        // A definition nested in a named one is already in.
        u = end.max(u + 1);
    }
    braces::weigh_named_blocks(&mut doc, &comment, query, NAMED_BODY_PRIOR);
    doc
}

/// Whether the definition on `line` is one the query names: its name is one of the query's
/// exact terms, or is made of several words that are all query words.
fn names_match(line: &str, query: &Query) -> bool {
    let Some(name) = definition_name(line) else {
        return false;
    };
    let lower = name.to_ascii_lowercase();
    if query.exact.iter().any(|e| {
        // `Foo::bar` or `obj.bar` in a query names `bar`.
        e == &lower || e.rsplit([':', '.']).next() == Some(lower.as_str())
    }) {
        return true;
    }
    let mut buf = String::new();
    let mut words = 0;
    let mut all_in_query = true;
    for_each_word(name, &mut buf, |w| {
        words += 1;
        all_in_query &= query.words.contains_key(w);
    });
    words >= MIN_NAME_WORDS && all_in_query
}

/// The name a definition line defines: the first identifier after its keyword.
pub(crate) fn definition_name(line: &str) -> Option<&str> {
    const KEYWORDS: &[&str] = &[
        "fn",
        "def",
        "class",
        "struct",
        "enum",
        "trait",
        "mod",
        "function",
        "func",
        "interface",
        "type",
        "impl",
        "sub",
    ];
    let mut rest = line;
    loop {
        let word_end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..word_end];
        rest = rest[word_end..].trim_start_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        if KEYWORDS.contains(&word) {
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            return (end > 0).then(|| &rest[..end]);
        }
        if word.is_empty() || rest.is_empty() {
            return None;
        }
    }
}

/// The first unit of the comment and attribute lines right above definition `def` at its
/// indentation (its doc comment, decorators), or `def` itself.
fn doc_comment_start(doc: &Doc<'_>, comment: &[bool], def: usize) -> usize {
    let indent = doc::indent_of(doc.text(def));
    let mut start = def;
    while start > 0 {
        let above = doc.text(start - 1);
        let attribute = {
            let t = above.trim_start();
            t.starts_with("#[") || t.starts_with('@')
        };
        if doc::indent_of(above) != indent || !(comment[start - 1] || attribute) {
            break;
        }
        // Units skip blank lines: a comment separated by one is not this definition's.
        let gap = &doc.source[doc.units[start - 1].span.end()..doc.units[start].span.start()];
        if gap.matches('\n').count() > 1 {
            break;
        }
        start -= 1;
    }
    start
}

/// One past the last unit of the definition starting at `def`: the lines indented deeper than
/// it, and the line that closes it at its own indentation.
fn body_end(doc: &Doc<'_>, def: usize) -> usize {
    let indent = doc::indent_of(doc.text(def));
    let mut end = def + 1;
    while end < doc.units.len() {
        let line = doc.text(end);
        let depth = doc::indent_of(line);
        if depth > indent {
            end += 1;
            continue;
        }
        if depth == indent && line.trim_start().starts_with(['}', ')', ']']) {
            end += 1;
        }
        break;
    }
    end
}

/// A line that is only a comment.
pub(crate) fn is_comment(trimmed: &str) -> bool {
    (trimmed.starts_with("//")
        || trimmed.starts_with("/*")
        || trimmed.starts_with("* ")
        || trimmed == "*"
        || trimmed.starts_with("*/")
        || trimmed.starts_with("--")
        || (trimmed.starts_with('#')
            && !trimmed.starts_with("#[")
            && !trimmed.starts_with("#!")
            && !trimmed.starts_with("#include")
            && !trimmed.starts_with("#define")
            && !trimmed.starts_with("#if")
            && !trimmed.starts_with("#end")))
        && !trimmed.is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;

    const RUST: &str = "// Copyright 2024 The Authors. Licensed under MIT.\n\
// See LICENSE for details.\n\
use std::fmt;\n\
\n\
/// Parses a size.\n\
pub fn parse_size(buf: &[u8])\n    -> Result<u64, ()> {\n    const RADIX: u64 = 16;\n    // count digits\n    Ok(0)\n}\n\
\n\
pub fn other() {\n    let x = 1;\n}\n";

    fn query(text: &str) -> Query {
        Query::from_hints(&Hints::new().with_query(text)).unwrap_or_default()
    }

    fn prior_of(doc: &Doc<'_>, line: &str) -> f32 {
        let u = (0..doc.units.len())
            .find(|&u| doc.text(u).trim() == line)
            .unwrap_or_else(|| panic!("no line {line}"));
        doc.units[u].prior
    }

    #[test]
    fn the_named_definition_ranks_its_whole_body_and_doc_comment() {
        let doc = build(RUST, Some(&query("how does parse_size work?")));
        assert!(prior_of(&doc, "const RADIX: u64 = 16;") >= NAMED_BODY_PRIOR);
        assert!(prior_of(&doc, "/// Parses a size.") >= NAMED_BODY_PRIOR - 1.0);
        assert!(prior_of(&doc, "Ok(0)") >= NAMED_BODY_PRIOR);
        assert!(prior_of(&doc, "let x = 1;") < 1.0);
    }

    #[test]
    fn a_name_spelled_as_words_counts() {
        let doc = build(RUST, Some(&query("how do we parse the size?")));
        assert!(prior_of(&doc, "Ok(0)") >= NAMED_BODY_PRIOR);
    }

    #[test]
    fn licence_headers_rank_below_the_outline() {
        let doc = build(RUST, None);
        let header = prior_of(&doc, "// See LICENSE for details.");
        assert!(header < prior_of(&doc, "pub fn other() {"));
        assert!(header < prior_of(&doc, "let x = 1;"));
    }

    #[test]
    fn definition_names_follow_their_keyword() {
        assert_eq!(
            definition_name("pub(crate) fn detect(x: u8) {"),
            Some("detect")
        );
        assert_eq!(
            definition_name("class TimeColumn(ProgressColumn):"),
            Some("TimeColumn")
        );
        assert_eq!(definition_name("async def fetch(self):"), Some("fetch"));
        assert_eq!(definition_name("sub tempfile {"), Some("tempfile"));
        assert_eq!(definition_name("let x = 1;"), None);
    }

    #[test]
    fn python_bodies_end_where_indentation_returns() {
        let text = "class A:\n    def render_speed(self):\n        return 1\n\nclass B:\n    def render(self):\n        pass\n";
        // One common word names every method called so: not a match.
        let doc = build(text, Some(&query("how does render work?")));
        assert!(prior_of(&doc, "pass") < NAMED_BODY_PRIOR);
        let doc = build(text, Some(&query("how does render_speed work?")));
        assert!(prior_of(&doc, "return 1") >= NAMED_BODY_PRIOR);
        assert!(prior_of(&doc, "pass") < NAMED_BODY_PRIOR);
    }
}
