//! Rules about files that define variables and use them elsewhere (Makefiles, shell scripts,
//! `.env` files): a line the query matches often says what it means through a variable
//! (`--timeout=$(TESTTIMEOUT)`), whose value sits on the line that defines it.

use std::collections::HashMap;

use super::super::doc::Doc;

/// The share of a line's query match the definition of a variable it uses gains.
const DEFINITION_SHARE: f32 = 0.6;
/// Variable names longer than this are not looked for.
const MAX_NAME_BYTES: usize = 48;

/// The definitions (`NAME=value`, `NAME = value`, `NAME := value`, `export NAME=value`) of the
/// variables that a line the query matches uses as `$(NAME)` or `${NAME}` gain a share of that
/// line's match, so the value comes with the line that refers to it.
pub(super) fn raise_used_definitions(doc: &Doc<'_>, query_scores: &mut [f32]) {
    let mut definitions: HashMap<&str, usize> = HashMap::new();
    for u in 0..doc.units.len() {
        // A unit may be a paragraph of several definitions.
        for name in doc.text(u).lines().filter_map(defined_name) {
            definitions.entry(name).or_insert(u);
        }
    }
    if definitions.is_empty() {
        return;
    }
    let own = query_scores.to_vec();
    for (u, &s) in own.iter().enumerate() {
        if s <= 0.0 {
            continue;
        }
        for name in used_names(doc.text(u)) {
            if let Some(&d) = definitions.get(name)
                && d != u
            {
                query_scores[d] = query_scores[d].max(own[d] + DEFINITION_SHARE * s);
            }
        }
    }
}

/// The variable an unindented line defines: `NAME=`, `NAME =`, `NAME:=`, `NAME?=`, `NAME+=`,
/// with an optional `export `.
fn defined_name(line: &str) -> Option<&str> {
    if line.starts_with(char::is_whitespace) {
        return None;
    }
    let line = line.strip_prefix("export ").unwrap_or(line);
    let end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(line.len());
    let (name, rest) = line.split_at(end);
    let rest = rest.trim_start_matches([' ', '\t']);
    let assigns = ["=", ":=", "?=", "+=", "::="]
        .iter()
        .any(|op| rest.starts_with(op))
        && !rest.starts_with("==");
    (assigns && is_name(name)).then_some(name)
}

/// The names used as `$(NAME)` or `${NAME}` in `line`.
fn used_names(line: &str) -> impl Iterator<Item = &str> {
    line.match_indices('$').filter_map(move |(at, _)| {
        let rest = &line[at + 1..];
        let close = match rest.chars().next()? {
            '(' => ')',
            '{' => '}',
            _ => return None,
        };
        let name = &rest[1..rest.find(close)?];
        is_name(name).then_some(name)
    })
}

/// Whether `name` is a variable name: a letter or `_`, then letters, digits and `_`.
fn is_name(name: &str) -> bool {
    name.len() <= MAX_NAME_BYTES
        && name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::super::tests::scored;
    use super::*;

    #[test]
    fn a_variable_used_by_a_matching_line_brings_its_definition() {
        // The shape of CPython's Makefile: a variable defined far from the line using it.
        let text = "TESTOPTS=\t$(EXTRATESTOPTS)\n\
                    TESTTIMEOUT=\t1200\n\
                    OTHERTIMEOUT=\t60\n\
                    \n\
                    PROFILE_TASK=\t-m test --pgo --timeout=$(TESTTIMEOUT)\n";
        let s = scored(text, "what does PROFILE_TASK run, and with which limit");
        assert!(s[1] > s[2], "{s:?}");
        assert_eq!(defined_name("export PATH=/usr/bin"), Some("PATH"));
        assert_eq!(defined_name("CC = gcc"), Some("CC"));
        assert_eq!(defined_name("if x == y"), None);
        assert_eq!(
            used_names("a $(CC) ${LDFLAGS} $$x $(shell ls)").collect::<Vec<_>>(),
            ["CC", "LDFLAGS"]
        );
    }
}
