//! Definition lists of rendered manuals: a term at the margin of its list (`‘--waitretry=SECONDS’`
//! in an Info manual, `-l depth, --level=depth` in `man` output, an option of `--help`) and
//! its definition indented under it, down to the next line as far out as the term.
//!
//! Read as lines or paragraphs, the term matches the query's exact term while its definition
//! (`By default, Wget will assume a value of 10 seconds.`) matches nothing, and loses to lines
//! of other entries that repeat the query's plain words. Here each entry whose term the query
//! names (an exact term, an option's name) is one block, raised whole.

use crate::methods::extract::doc::{self, Doc};
use crate::methods::extract::query::Query;

/// A term is short; a longer line over indented ones is a paragraph with a quotation under it.
const MAX_TERM_BYTES: usize = 80;
/// A document with fewer terms than this is no definition list (an option quoted over an
/// indented example in prose).
const MIN_TERMS: usize = 5;
/// A definition longer than this (in units) is a chapter, not the entry of one term.
const MAX_ENTRY_UNITS: usize = 40;
/// Named entries may cover at most this share (in percent) of the units: past it the exact
/// term is the document's common word.
const MAX_NAMED_SHARE: usize = 25;
/// Added to every unit of an entry the query names.
const NAMED_ENTRY_PRIOR: f32 = 4.0;

/// The first line of unit `u` and the indent of the line after it (in the unit, or the first
/// line of the next unit), if there is one.
fn term_and_next_indent<'d>(doc: &'d Doc<'_>, u: usize) -> (&'d str, Option<usize>) {
    let text = doc.text(u);
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    let next = lines.find(|l| !l.trim().is_empty()).or_else(|| {
        (u + 1 < doc.units.len()).then(|| doc.text(u + 1).lines().next().unwrap_or(""))
    });
    (first, next.map(doc::indent_of))
}

/// The shortest option name a query word names: one letter (`-l`) is any word's letter.
const MIN_OPTION_NAME_BYTES: usize = 3;

/// Whether `line` (trimmed) is shaped like a term of a manual's definition list: an option
/// (`-l depth, --level=depth`, `--color[=WHEN]`), a quoted term (`‘--waitretry=SECONDS’`,
/// `` `key` ``) or a keyword of several words (`ServerAliveInterval`, `bind-key [-n] key`),
/// short. A list item (`- The new option …`) and prose are not.
fn is_term_shaped(line: &str) -> bool {
    let term = line.trim_start_matches(['‘', '\'', '"', '`']);
    let quoted = term.len() < line.len();
    // `-l` or `--level`; a rule of dashes (`---- test start`) is no option.
    let option = term.strip_prefix('-').is_some_and(|rest| {
        rest.strip_prefix('-')
            .unwrap_or(rest)
            .starts_with(|c: char| c.is_ascii_alphanumeric())
    });
    line.len() <= MAX_TERM_BYTES && (quoted || option || is_keyword(term))
}

/// A term's arguments after a keyword are few (`bind-key [-n] [-T table] key command`).
const MAX_KEYWORD_LINE_TOKENS: usize = 8;

/// Whether `term` starts with a keyword of several words (`ServerAliveInterval`,
/// `bind-key`, `max_connections`) followed by few arguments.
fn is_keyword(term: &str) -> bool {
    let first = term.split(' ').next().unwrap_or("");
    first
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        && first.starts_with(|c: char| c.is_ascii_alphabetic())
        && keyword_words(first) > 1
        && term.split_whitespace().count() <= MAX_KEYWORD_LINE_TOKENS
}

/// The words of a keyword: parts between `-` and `_`, and camelCase humps.
fn keyword_words(name: &str) -> usize {
    let bytes = name.as_bytes();
    let humps = (1..bytes.len())
        .filter(|&i| bytes[i].is_ascii_uppercase() && bytes[i - 1].is_ascii_lowercase())
        .count();
    name.split(['-', '_']).filter(|w| !w.is_empty()).count() + humps
}

/// Whether the query names the term `term`: it holds one of the query's exact terms, or one
/// of its options (`--waitretry=SECONDS`, `-l depth, --level=depth`) is a query word, or, when
/// it is no option, its first token of several words (`ignore-case`) has only query words.
fn names_term(query: &Query, term: &str, buf: &mut String) -> bool {
    if query.mentions(term) {
        return true;
    }
    let tokens = term
        .split([' ', ','])
        .map(|t| t.trim_matches(['‘', '’', '\'', '"', '`', '*']))
        .filter(|t| !t.is_empty());
    let mut options = tokens
        .clone()
        .filter(|t| t.starts_with('-'))
        .map(|t| t[..t.find(['=', '[']).unwrap_or(t.len())].trim_start_matches('-'))
        .peekable();
    if options.peek().is_some() {
        return options.any(|name| {
            name.len() >= MIN_OPTION_NAME_BYTES && query.names_every_word(name, false, buf)
        });
    }
    tokens
        .take(1)
        .any(|name| keyword_words(name) > 1 && query.names_every_word(name, true, buf))
}

/// Raises every entry of a definition list whose term the query names (see [`names_term`]) as
/// one block: the term comes with the definition that gives its default and meaning.
pub(crate) fn weigh_named_terms(doc: &mut Doc<'_>, query: &Query) {
    let n = doc.units.len();
    let mut terms = 0;
    let mut named: Vec<(usize, usize)> = Vec::new();
    let mut buf = String::new();
    for u in 0..n {
        let (term, next_indent) = term_and_next_indent(doc, u);
        let indent = doc::indent_of(term);
        if !(next_indent.is_some_and(|next| next > indent) && is_term_shaped(term.trim())) {
            continue;
        }
        terms += 1;
        if !names_term(query, term.trim(), &mut buf) {
            continue;
        }
        // Looked for no further than an entry may reach: past it the entry is a chapter.
        let limit = n.min(u + MAX_ENTRY_UNITS + 1);
        let end = (u + 1..limit)
            .find(|&v| doc::indent_of(doc.text(v)) <= indent)
            .unwrap_or(limit);
        if end - u <= MAX_ENTRY_UNITS {
            named.push((u, end));
        }
    }
    if terms < MIN_TERMS {
        return;
    }
    let covered: usize = named.iter().map(|(start, end)| end - start).sum();
    if named.is_empty() || covered * 100 > n * MAX_NAMED_SHARE {
        return;
    }
    let first_block = doc.next_block();
    for (block, (start, end)) in (first_block..).zip(named) {
        for unit in &mut doc.units[start..end] {
            unit.prior += NAMED_ENTRY_PRIOR;
            unit.block = Some(block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;
    use crate::methods::extract::detect::ContentKind;
    use crate::methods::extract::kinds::{lines, markdown};

    /// The shape of an Info manual's options: a quoted term at the margin, its definition
    /// indented under it in paragraphs, the default said in the last one.
    fn info_manual() -> String {
        let mut text = String::from("2.5 Download Options\n====================\n\n");
        for (name, default) in [
            ("tries", "20"),
            ("retry-delay", "10"),
            ("read-timeout", "900"),
            ("quota", "none"),
            ("limit-rate", "none"),
            ("wait", "0"),
            ("waitretry", "10"),
            ("random-wait", "off"),
            ("bind-address", "any"),
            ("dns-timeout", "none"),
        ] {
            text.push_str(&format!(
                "‘--{name}=NUMBER’\n     Set how the download goes when the server is slow or\n     the network drops packets on the way.\n\n     By default, the value is {default}.\n\n"
            ));
        }
        text
    }

    fn prior_of(doc: &Doc<'_>, line: &str) -> f32 {
        let u = (0..doc.units.len())
            .find(|&u| doc.text(u).trim() == line)
            .unwrap_or_else(|| panic!("no unit {line}"));
        doc.units[u].prior
    }

    fn query(text: &str) -> Query {
        Query::from_hints(&Hints::new().with_query(text)).unwrap()
    }

    #[test]
    fn the_entry_the_query_names_is_raised_whole() {
        let text = info_manual();
        let mut doc = markdown::build(text.as_str().into(), ContentKind::Markdown);
        let before: Vec<f32> = doc.units.iter().map(|u| u.prior).collect();
        weigh_named_terms(&mut doc, &query("what does --waitretry default to?"));
        let raised: Vec<usize> = (0..doc.units.len())
            .filter(|&u| doc.units[u].prior > before[u])
            .collect();
        assert_eq!(raised.len(), 2, "the term's paragraph and its last one");
        assert!(doc.text(raised[0]).starts_with("‘--waitretry=NUMBER’"));
        assert_eq!(doc.text(raised[1]).trim(), "By default, the value is 10.");
    }

    #[test]
    fn man_output_entries_end_at_the_next_term() {
        let mut text = String::from("OPTIONS\n");
        for i in 0..12 {
            text.push_str(&format!(
                "       --opt{i}=N\n              What opt{i} does.\n              The default is {i}.\n\n"
            ));
        }
        let mut doc = lines::build(&text, lines::Style::Text);
        let before = prior_of(&doc, "The default is 7.");
        weigh_named_terms(&mut doc, &query("what is the default of --opt7?"));
        assert_eq!(
            prior_of(&doc, "The default is 7."),
            before + NAMED_ENTRY_PRIOR
        );
        assert_eq!(prior_of(&doc, "--opt7=N"), before + NAMED_ENTRY_PRIOR);
        assert_eq!(prior_of(&doc, "The default is 8."), before);
        assert_eq!(prior_of(&doc, "The default is 6."), before);
    }

    #[test]
    fn a_term_the_whole_document_names_raises_nothing() {
        let mut text = String::new();
        for i in 0..12 {
            text.push_str(&format!("‘--retry’ in mode {i}\n    does thing {i}\n"));
        }
        let mut doc = lines::build(&text, lines::Style::Text);
        let before = prior_of(&doc, "does thing 3");
        weigh_named_terms(&mut doc, &query("what does retry do?"));
        assert_eq!(prior_of(&doc, "does thing 3"), before);
    }

    #[test]
    fn only_options_and_quoted_terms_are_terms() {
        assert!(is_term_shaped("‘--waitretry=SECONDS’"));
        assert!(is_term_shaped("-l depth, --level=depth"));
        assert!(is_term_shaped("`max_connections`"));
        assert!(!is_term_shaped(
            "- The new option --color will use GREP_COLOR"
        ));
        assert!(!is_term_shaped("X509v3 Key Usage: critical"));
        assert!(!is_term_shaped("$(TARGET): $(OBJECTS)"));
        assert!(is_term_shaped("ServerAliveInterval"));
        assert!(is_term_shaped("bind-key [-n] [-T key-table] key command"));
        assert!(!is_term_shaped("Compiling thiserror v2.0.21 (/tmp/te)"));
        assert!(!is_term_shaped("def parse_args(argv):"));
        assert!(!is_term_shaped("---- unit-test-7 start"));
    }
}
