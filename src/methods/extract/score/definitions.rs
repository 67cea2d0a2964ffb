//! A question about a source file that names several of its identifiers (`LIB_VERSION`, a
//! flag, an option, a function) asks what each one is, and the line that defines each holds
//! the answer. The lines that mention many of the question's words at once (a flag combined
//! with others, a comment citing three of them) outscore the definition of a name the
//! question gives once: each named definition ranks among the first lines kept. A
//! declaration or call continued over several lines (a prototype's parameters, one a line)
//! is read whole: its lines after the first score nearly as the first.

use super::super::doc::Doc;
use super::super::kinds::code::defines;
use super::super::query::Query;
use super::parts::by_score_per_length;

/// A definition the query names ranks at least this high, by score per length.
const DEFINITION_RANK: usize = 12;
/// Names shorter than this (`id`, `x`) are not looked for.
const MIN_NAME_BYTES: usize = 3;
/// A continued line scores at least this share of its statement's first line …
const CONTINUATION_SHARE: f32 = 0.9;
/// … for at most this many lines: a longer run is a table or a literal, not a signature.
const MAX_CONTINUATION: usize = 12;

/// Raises the first definition of each identifier the query gives exactly, to rank at
/// least [`DEFINITION_RANK`].
pub(super) fn raise_named_definitions(doc: &Doc<'_>, query: &Query, scores: &mut [f32]) {
    let n = scores.len();
    let names: Vec<&str> = query
        .exact
        .iter()
        .map(String::as_str)
        .filter(|e| {
            e.len() >= MIN_NAME_BYTES && e.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
        })
        .collect();
    if n <= DEFINITION_RANK || names.is_empty() {
        return;
    }
    let mut definitions: Vec<usize> = Vec::new();
    let mut unfound: Vec<&str> = names;
    for u in 0..n {
        let text = doc.text(u);
        // One pass over the lines, lowercased only when they may hold a name.
        if !text.bytes().any(|b| b == b'_' || b.is_ascii_alphabetic()) {
            continue;
        }
        let line = text.trim().to_ascii_lowercase();
        unfound.retain(|name| {
            let found = line.contains(name) && defines(&line, name);
            if found {
                definitions.push(u);
            }
            !found
        });
        if unfound.is_empty() {
            break;
        }
    }
    if definitions.is_empty() {
        return;
    }
    let (cost, mut ranked) = by_score_per_length(doc, scores);
    let (_, &mut floor, _) = ranked.select_nth_unstable_by(DEFINITION_RANK, |a, b| b.total_cmp(a));
    for u in definitions {
        if scores[u] < floor * cost[u] {
            scores[u] = (floor + 0.01) * cost[u];
        }
    }
}

/// Raises the lines that continue a statement whose parenthesis a line left open
/// (`lib_start_daemon (unsigned int flags,` then `uint16_t port,` …) to
/// [`CONTINUATION_SHARE`] of the opening line's score, up to the line that closes it.
pub(super) fn pull_continued_statements(doc: &Doc<'_>, scores: &mut [f32]) {
    let n = scores.len();
    let mut u = 0;
    while u < n {
        let mut depth = paren_balance(doc.text(u));
        if depth <= 0 {
            u += 1;
            continue;
        }
        let opener = scores[u];
        let mut next = u + 1;
        while next < n && next <= u + MAX_CONTINUATION && depth > 0 {
            scores[next] = scores[next].max(CONTINUATION_SHARE * opener);
            depth += paren_balance(doc.text(next));
            next += 1;
        }
        u = next;
    }
}

/// Parentheses `line` opens less those it closes, outside its string literals and before
/// a comment that follows code. A doc comment's own code (`/// assert_eq!(parse(b"4"),`) is
/// read past its comment mark.
fn paren_balance(line: &str) -> i32 {
    let (mut depth, mut quote, mut escaped) = (0i32, None::<u8>, false);
    let trimmed = line.trim_start();
    let code = ["///", "//!", "//", "#", "*"]
        .iter()
        .find_map(|mark| trimmed.strip_prefix(mark))
        .unwrap_or(trimmed);
    let bytes = code.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match quote {
            Some(_) if escaped => escaped = false,
            Some(_) if b == b'\\' => escaped = true,
            Some(q) if b == q => quote = None,
            Some(_) => {}
            None => match b {
                b'"' | b'\'' => quote = Some(b),
                b'(' => depth += 1,
                b')' => depth -= 1,
                b'/' if bytes.get(i + 1) == Some(&b'/') => break,
                b'#' if i > 0 && bytes[i - 1] == b' ' => break,
                _ => {}
            },
        }
    }
    depth
}

#[cfg(test)]
mod tests {
    use crate::methods::extract::Hints;
    use crate::methods::extract::kinds::code;
    use crate::methods::extract::query::Query;

    /// A C header: a version macro, flags that combine each other, and a prototype over
    /// several lines.
    fn header() -> String {
        let mut text =
            String::from("#ifndef LIB_H\n#define LIB_H\n\n#define LIB_VERSION 0x00097500\n\n");
        text.push_str("enum LIB_FLAG\n{\n");
        for i in 0..30u8 {
            // Names of letters, so that no two lines share a template.
            let name = format!("{}{}", (b'A' + i % 26) as char, (b'A' + i / 3) as char);
            text.push_str(&format!(
                "  /**\n   * Poll mode {name}: use with #LIB_USE_EPOLL and #LIB_USE_THREAD.\n   * @param daemon the daemon this mode applies to\n   * @note Available since #LIB_VERSION 0x000960{i:02}\n   */\n  LIB_USE_EPOLL_THREAD_{name} = LIB_USE_EPOLL | LIB_USE_THREAD | {i},\n"
            ));
        }
        text.push_str("  LIB_USE_EPOLL = 512,\n  LIB_USE_THREAD = 8\n};\n\n");
        text.push_str("struct lib_daemon *\nlib_start_daemon (unsigned int flags,\n                  uint16_t port,\n                  lib_handler dh, void *dh_cls,\n                  ...);\n\n#endif\n");
        text
    }

    #[test]
    fn each_name_the_question_gives_brings_its_definition() {
        let text = header();
        let query = Query::from_hints(&Hints::new().with_query(
            "What does LIB_VERSION encode, and what values do LIB_USE_EPOLL and LIB_USE_THREAD have?",
        ))
        .unwrap();
        let doc = code::build(&text, Some(&query));
        let at = |line: &str| {
            (0..doc.units.len())
                .find(|&u| doc.text(u).contains(line))
                .unwrap()
        };
        let version = at("#define LIB_VERSION");
        // The lines combining the flags score above the version's definition, as they match
        // more of the question's words.
        let mut scores: Vec<f32> = (0..doc.units.len())
            .map(|u| {
                if doc.text(u).contains("LIB_USE_EPOLL |") {
                    5.0
                } else {
                    0.0
                }
            })
            .collect();
        scores[version] = 1.0;
        super::raise_named_definitions(&doc, &query, &mut scores);
        let above = scores.iter().filter(|&&s| s > scores[version]).count();
        assert!(
            above <= super::DEFINITION_RANK,
            "{above} lines rank above the version"
        );
    }

    #[test]
    fn a_prototype_over_several_lines_is_read_whole() {
        let text = header();
        let doc = code::build(&text, None);
        let at = |line: &str| {
            (0..doc.units.len())
                .find(|&u| doc.text(u).contains(line))
                .unwrap()
        };
        let opener = at("lib_start_daemon (unsigned int flags,");
        let mut scores = vec![0.0f32; doc.units.len()];
        scores[opener] = 10.0;
        super::pull_continued_statements(&doc, &mut scores);
        for line in ["uint16_t port,", "lib_handler dh, void *dh_cls,", "...);"] {
            assert!(
                scores[at(line)] >= 8.0,
                "{line} scores {}",
                scores[at(line)]
            );
        }
        // The statement ends with its closing parenthesis.
        assert_eq!(scores[at("#endif")], 0.0);
    }

    #[test]
    fn parentheses_in_strings_and_trailing_comments_do_not_count() {
        assert_eq!(super::paren_balance("f(a, \"(\",  // (x"), 1);
        assert_eq!(super::paren_balance("/// assert_eq!(parse(b\"4\"),"), 1);
        assert_eq!(super::paren_balance("  x = g(1) + h(2)"), 0);
    }
}
