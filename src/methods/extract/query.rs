//! What the caller is looking for: the words of the query and the tool's arguments, and the
//! exact strings among them (identifiers, numbers, versions, paths, quoted text) that a kept
//! unit should contain verbatim.

use std::collections::HashMap;

use super::ExtractHints;
use super::terms::{for_each_word, is_stopword};

/// The query as the scorer uses it.
#[derive(Debug, Default)]
pub(crate) struct Query {
    /// Stemmed words, each with its index into per-word statistics.
    pub(crate) words: HashMap<String, usize>,
    /// Lowercased strings matched as substrings of a unit.
    pub(crate) exact: Vec<String>,
}

/// Exact strings shorter than this match too much by accident.
const MIN_EXACT_LEN: usize = 3;
/// Argument values longer than this are content, not search terms.
const MAX_ARGUMENT_LEN: usize = 200;

impl Query {
    /// The query of `hints`, or `None` when neither a query nor usable arguments are given.
    pub(crate) fn from_hints(hints: &ExtractHints<'_>) -> Option<Query> {
        let mut query = Query::default();
        if let Some(text) = hints.query {
            query.add_text(text);
        }
        if let Some(arguments) = hints.arguments {
            let mut values = Vec::new();
            collect_argument_values(arguments, &mut values, 0);
            for value in values {
                query.add_exact(&value);
                query.add_words(&value);
            }
        }
        (!query.words.is_empty() || !query.exact.is_empty()).then_some(query)
    }

    fn add_text(&mut self, text: &str) {
        self.add_words(text);
        for quoted in quoted_strings(text) {
            self.add_exact(quoted);
        }
        for token in text.split_whitespace() {
            let token = token.trim_matches(|c: char| !c.is_alphanumeric() && !"_/@~$-".contains(c));
            if is_identifier_like(token) {
                self.add_exact(token);
            }
        }
    }

    fn add_words(&mut self, text: &str) {
        let mut buf = String::new();
        for_each_word(text, &mut buf, |w| {
            if !is_stopword(w) {
                let next = self.words.len();
                self.words.entry(w.to_owned()).or_insert(next);
            }
        });
    }

    fn add_exact(&mut self, text: &str) {
        let text = text.trim();
        if text.len() >= MIN_EXACT_LEN {
            let lower = text.to_ascii_lowercase();
            if !self.exact.contains(&lower) {
                self.exact.push(lower);
            }
        }
    }

    /// Whether `text` contains one of the exact strings.
    pub(crate) fn mentions(&self, text: &str) -> bool {
        let lower = text.to_ascii_lowercase();
        self.exact.iter().any(|e| lower.contains(e.as_str()))
    }

    /// The byte offset of the first exact string in `text`, if any.
    pub(crate) fn first_exact_match(&self, text: &str) -> Option<usize> {
        let lower = text.to_ascii_lowercase();
        self.exact
            .iter()
            .filter_map(|e| lower.find(e.as_str()))
            .min()
    }
}

/// Text between matching quotes or backticks, where the opening one starts a word.
fn quoted_strings(text: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let q = bytes[i];
        let opens =
            matches!(q, b'\'' | b'"' | b'`') && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric());
        if opens && let Some(len) = text[i + 1..].find(q as char) {
            let inner = &text[i + 1..i + 1 + len];
            let after = bytes.get(i + 2 + len).copied();
            if !inner.is_empty() && after.is_none_or(|b| !b.is_ascii_alphanumeric()) {
                found.push(inner);
                i += len + 2;
                continue;
            }
        }
        i += 1;
    }
    found
}

/// A token that names one thing: has a digit, inner punctuation (`a.b`, `a::b`, `a/b`,
/// `a_b`, `a-b`, `a@1`) or inner capitals (`camelCase`).
fn is_identifier_like(token: &str) -> bool {
    if token.len() < MIN_EXACT_LEN {
        return false;
    }
    let bytes = token.as_bytes();
    let has_digit = bytes.iter().any(u8::is_ascii_digit);
    let inner_punct = bytes.windows(3).any(|w| {
        w[0].is_ascii_alphanumeric()
            && b"._:/@-~$".contains(&w[1])
            && (w[2].is_ascii_alphanumeric() || w[2] == b':')
    });
    let inner_capital = bytes
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let underscore = token.contains('_');
    has_digit || inner_punct || inner_capital || underscore
}

fn collect_argument_values(value: &serde_json::Value, out: &mut Vec<String>, depth: usize) {
    if depth > 8 {
        return;
    }
    match value {
        serde_json::Value::String(s) if s.len() <= MAX_ARGUMENT_LEN => out.push(s.clone()),
        serde_json::Value::Number(n) => out.push(n.to_string()),
        serde_json::Value::Array(items) => items
            .iter()
            .for_each(|v| collect_argument_values(v, out, depth + 1)),
        serde_json::Value::Object(map) => map
            .values()
            .for_each(|v| collect_argument_values(v, out, depth + 1)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(text: &str) -> Query {
        Query::from_hints(&ExtractHints::new().with_query(text)).unwrap_or_default()
    }

    #[test]
    fn identifiers_versions_and_paths_are_exact_terms() {
        let q = query(
            "Which packages pull in semver@5.7.2, and where is BinaryDetection::quit in src/searcher/glue.rs?",
        );
        for term in [
            "semver@5.7.2",
            "binarydetection::quit",
            "src/searcher/glue.rs",
        ] {
            assert!(
                q.exact.iter().any(|e| e == term),
                "{term} missing from {:?}",
                q.exact
            );
        }
        assert!(!q.exact.iter().any(|e| e == "packages"));
    }

    #[test]
    fn quoted_strings_are_exact_terms() {
        let q = query("which hit 'Unexpected exception causing shutdown' and \"ROOT LOGIN\"?");
        assert!(
            q.exact
                .iter()
                .any(|e| e == "unexpected exception causing shutdown")
        );
        assert!(q.exact.iter().any(|e| e == "root login"));
    }

    #[test]
    fn apostrophes_inside_words_do_not_quote() {
        assert!(quoted_strings("ripgrep's FAQ and it's fine").is_empty());
    }

    #[test]
    fn stopwords_are_not_query_words() {
        let q = query("Which of these is the failed run?");
        assert!(q.words.contains_key("fail"));
        assert!(!q.words.contains_key("which") && !q.words.contains_key("the"));
    }

    #[test]
    fn tool_arguments_count_as_terms() {
        let args = serde_json::json!({"pattern": "detect_binary", "path": "crates/"});
        let q = Query::from_hints(&ExtractHints::new().with_arguments(&args)).unwrap_or_default();
        assert!(q.exact.iter().any(|e| e == "detect_binary"));
        assert!(q.words.contains_key("binary"));
    }
}
