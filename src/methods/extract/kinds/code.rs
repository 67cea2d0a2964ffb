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
/// Added instead to every line of a definition the query gives by its exact name: in code the
/// query's plain words (`class`, `return`, `attrs`) match lines everywhere, and the body
/// asked for must outrank them.
const EXACT_BODY_PRIOR: f32 = 8.0;
/// The share of [`NAMED_BODY_PRIOR`] a definition named only by words gets when another is
/// named by its exact name.
const GUESSED_SHARE: f32 = 0.5;
/// Taken back from the comment and docstring lines of a named definition: its code (the
/// `return`, `raise` and assignments an answer quotes) comes before its prose.
const NAMED_PROSE_DISCOUNT: f32 = 1.5;
/// Taken from the lines that only use a name the query gives, where the file defines it: a
/// constant asked about is answered by its definition, not by its every use.
const USE_DISCOUNT: f32 = 3.0;
/// Words that may stand before a name being defined (`pub const NAME`, `#define NAME`).
const DEFINING_WORDS: &[&str] = &[
    "pub",
    "pub(crate)",
    "const",
    "static",
    "let",
    "var",
    "mut",
    "final",
    "export",
    "readonly",
    "private",
    "public",
    "protected",
    "#define",
    "our",
    "my",
    "local",
    "declare",
    "val",
];
/// A signature spread over more lines than this is not one: a bracket left open by a string
/// or a macro would otherwise swallow the file.
const MAX_SIGNATURE_LINES: usize = 40;
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
    let mut comment: Vec<bool> = (0..n).map(|u| is_comment(doc.text(u).trim())).collect();
    mark_docstrings(&doc, &mut comment);
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
    weigh_defined_names(&mut doc, &comment, query);
    crate::methods::extract::tree::raise_named_setting_runs(&mut doc, query);
    // The definitions the query names, outermost first; a definition nested in a named one
    // is already in.
    let mut named = Vec::new();
    let mut u = 0;
    while u < n {
        let line = doc.text(u).trim();
        let Some(naming) = is_definition(line)
            .then(|| names_match(line, query))
            .flatten()
        else {
            u += 1;
            continue;
        };
        let end = body_end(&doc, u);
        named.push((u, end, naming));
        // A named container (an `impl`, a class) may hold the methods the query names: they
        // are looked for inside it, and weigh on top of it.
        u = if is_container(line) {
            u + 1
        } else {
            end.max(u + 1)
        };
    }
    // A definition the query gives by name is what it asks about; one whose name merely
    // spells words of the question ("build the class": `build_class`) is a guess beside it.
    let any_exact = named.iter().any(|&(_, _, naming)| naming == Naming::Exact);
    // A name given exactly that several definitions share (bottle's `run()`, and the `run`
    // method of each of its server adapters) asks for the outermost of them: the others are
    // guesses beside it.
    let indent = |u: usize| {
        let line = doc.text(u);
        line.len() - line.trim_start().len()
    };
    let exact_name = |u: usize| definition_name(doc.text(u).trim());
    let inner: Vec<bool> = named
        .iter()
        .map(|&(def, _, naming)| {
            naming == Naming::Exact
                && named.iter().any(|&(other, _, other_naming)| {
                    other_naming == Naming::Exact
                        && indent(other) < indent(def)
                        && exact_name(other) == exact_name(def)
                })
        })
        .collect();
    for ((_, _, naming), inner) in named.iter_mut().zip(inner) {
        if inner {
            *naming = Naming::Words;
        }
    }
    let first_block = doc.next_block();
    // One block per named definition, so that a match inside it pulls the rest along.
    for (block, (def, end, naming)) in (first_block..).zip(named) {
        let prior = match naming {
            Naming::Exact => EXACT_BODY_PRIOR,
            Naming::Words if any_exact => NAMED_BODY_PRIOR * GUESSED_SHARE,
            Naming::Words => NAMED_BODY_PRIOR,
        };
        let start = doc_comment_start(&doc, &comment, def).max(header_end);
        for (unit, &is_prose) in doc.units[start..end].iter_mut().zip(&comment[start..end]) {
            unit.prior += prior;
            if is_prose {
                unit.prior -= NAMED_PROSE_DISCOUNT;
            }
            unit.block = Some(block);
        }
    }
    braces::weigh_named_blocks(&mut doc, &comment, query, NAMED_BODY_PRIOR);
    doc
}

/// How a query names a definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Naming {
    /// By one of its exact terms: `make_class`, `Foo::bar`.
    Exact,
    /// By words that spell the name: "parse the chunk size" for `parse_chunk_size`.
    Words,
}

/// How the definition on `line` is one the query names, if it is: its name is one of the query's
/// exact terms, or is made of several words that are all words of the query's prose (a word
/// met only inside an identifier it names, `class` of `make_class`, names nothing else).
fn names_match(line: &str, query: &Query) -> Option<Naming> {
    let name = definition_name(line)?;
    let lower = name.to_ascii_lowercase();
    if query.exact.iter().any(|e| {
        // `Foo::bar` or `obj.bar` in a query names `bar`.
        e == &lower || e.rsplit([':', '.']).next() == Some(lower.as_str())
    }) || query.calls(name)
    {
        return Some(Naming::Exact);
    }
    let mut buf = String::new();
    let mut words = 0;
    let mut all_in_query = true;
    for_each_word(name, &mut buf, |w| {
        words += 1;
        all_in_query &= query.uses_as_word(w);
    });
    (words >= MIN_NAME_WORDS && all_in_query).then_some(Naming::Words)
}

/// A name declared on more lines than this is a variable assigned here and there, not one
/// member or constant the query asks about.
const MAX_DECLARATIONS: usize = 4;
/// Added to the line that declares a member or constant the query gives by its exact name, and
/// to the doc comment right above it.
const DECLARED_PRIOR: f32 = 8.0;

/// Weighs each name the query gives exactly (an identifier) by where the file defines it, in
/// one scan of the lines per name:
/// - the lines that only use it are lowered wherever the file also defines it
///   (`_HASH_CACHE_FIELD = "…"`): the definition keeps the name's match to itself among the
///   lines of plain code, and the uses leave the room to what else is asked;
/// - its declarations outside comments (`requestTimeout?: number;`, `#define EM_RISCV 243`),
///   at most [`MAX_DECLARATIONS`] of them, are raised with their doc comments, each one block:
///   the comment holds what the query asks of it (`@default 300000`, what the value means),
///   which no query word may match.
fn weigh_defined_names(doc: &mut Doc<'_>, comment: &[bool], query: &Query) {
    let mut block = doc.next_block();
    for term in &query.exact {
        if !term.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            continue;
        }
        let mut definitions = Vec::new();
        let mut uses = Vec::new();
        for u in 0..doc.units.len() {
            let line = doc.text(u).trim().to_ascii_lowercase();
            if !line.contains(term.as_str()) {
                continue;
            }
            if defines(&line, term) {
                definitions.push(u);
            } else {
                uses.push(u);
            }
        }
        if definitions.is_empty() {
            continue;
        }
        for u in uses {
            doc.units[u].prior -= USE_DISCOUNT;
        }
        let declarations: Vec<usize> = definitions.into_iter().filter(|&u| !comment[u]).collect();
        if declarations.len() > MAX_DECLARATIONS {
            continue;
        }
        for def in declarations {
            let start = doc_comment_start(doc, comment, def);
            for unit in &mut doc.units[start..=def] {
                unit.prior += DECLARED_PRIOR;
                unit.block.get_or_insert(block);
                // Each member's `@default …` line is its own answer, not a repeat of the
                // others' to be thinned out.
                unit.template = None;
            }
            block += 1;
        }
    }
}

/// Whether the lowercased, trimmed `line` defines `name`: an assignment or declaration of it
/// (`name = …`, `name: int = …`, `const name …`, `#define name …`), or a definition keyword's
/// name (`def name(`).
pub(crate) fn defines(line: &str, name: &str) -> bool {
    if definition_name(line).is_some_and(|defined| defined.eq_ignore_ascii_case(name)) {
        return true;
    }
    let mut rest = line;
    while let Some((word, after)) = rest.split_once(' ') {
        if !DEFINING_WORDS.contains(&word) {
            break;
        }
        rest = after.trim_start();
    }
    let Some(after) = rest.strip_prefix(name) else {
        return false;
    };
    let after = after.trim_start();
    (after.starts_with('=') && !after.starts_with("=="))
        || after.starts_with(':')
        || after.starts_with("?:")
        || (line.starts_with("#define") && rest.len() > name.len())
}

/// Whether the definition on `line` holds definitions of its own: `impl`, `class`, `trait`,
/// `mod`, `interface`.
fn is_container(line: &str) -> bool {
    const CONTAINERS: &[&str] = &["impl", "class", "trait", "mod", "interface"];
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .find(|w| DEFINITION_KEYWORDS.contains(w))
        .is_some_and(|w| CONTAINERS.contains(&w))
}

/// The words a definition starts with, before the name it defines.
const DEFINITION_KEYWORDS: &[&str] = &[
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

/// The name a definition line defines: the first identifier after its keyword.
pub(crate) fn definition_name(line: &str) -> Option<&str> {
    const KEYWORDS: &[&str] = DEFINITION_KEYWORDS;
    let mut rest = line;
    loop {
        let word_end = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        let word = &rest[..word_end];
        let after_word = rest[word_end..].trim_start();
        rest = rest[word_end..].trim_start_matches(|c: char| !(c.is_alphanumeric() || c == '_'));
        // A Go method names its receiver first: `func (pc *persistConn) roundTrip(`.
        if word == "func"
            && after_word.starts_with('(')
            && let Some((_, method)) = after_word.split_once(')')
        {
            rest = method.trim_start();
        }
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
        // The lines of a block comment stand one column in (` * @default 30000`).
        let inside_block_comment = above.trim_start().starts_with('*');
        let same_indent = doc::indent_of(above) == indent
            || (inside_block_comment && doc::indent_of(above) == indent + 1);
        if !same_indent || !(comment[start - 1] || attribute) {
            break;
        }
        // A comment separated by a blank line is not this definition's.
        if doc.blank_line_before(start) {
            break;
        }
        start -= 1;
    }
    start
}

/// One past the last unit of the definition starting at `def`: its signature (however many
/// lines its parameter list takes), the lines indented deeper than it, and the line that
/// closes it at its own indentation.
fn body_end(doc: &Doc<'_>, def: usize) -> usize {
    let indent = doc::indent_of(doc.text(def));
    let mut end = signature_end(doc, def);
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

/// One past the last line of the signature starting at `def`: where the brackets it opens
/// (`def make_class(` … `):`) are closed again. A formatter puts that closing line at the
/// definition's own indentation, where it would otherwise end the definition.
fn signature_end(doc: &Doc<'_>, def: usize) -> usize {
    let mut open = bracket_balance(doc.text(def));
    let mut end = def + 1;
    while open > 0 && end < doc.units.len() && end - def <= MAX_SIGNATURE_LINES {
        open += bracket_balance(doc.text(end));
        end += 1;
    }
    if open > 0 { def + 1 } else { end }
}

/// Round and square brackets opened minus closed on `line`, outside quoted strings, char
/// literals and a trailing `#` comment. A `'` before a word is a lifetime (`&'a str`), not a
/// quote.
fn bracket_balance(line: &str) -> i32 {
    let chars: Vec<char> = line.chars().collect();
    let mut balance = 0;
    let mut quote = None;
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match quote {
            Some(_) if c == '\\' => i += 1,
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' => quote = Some('"'),
                '\'' if chars.get(i + 2) == Some(&'\'') => i += 2,
                '\'' if chars.get(i + 1) == Some(&'\\') => {
                    quote = Some('\'');
                }
                '\'' if chars
                    .get(i + 1)
                    .is_some_and(|n| n.is_alphabetic() || *n == '_') => {}
                '\'' => quote = Some('\''),
                '#' => break,
                '(' | '[' => balance += 1,
                ')' | ']' => balance -= 1,
                _ => {}
            },
        }
        i += 1;
    }
    balance
}

/// Marks the lines of Python docstrings (a triple-quoted string standing alone as a
/// statement) as comments: they document the code as comments do. A triple-quoted string
/// that is assigned or passed (`x = """`) is code, and is stepped over whole so that its
/// closing line is not taken for a docstring's opening.
fn mark_docstrings(doc: &Doc<'_>, comment: &mut [bool]) {
    const DELIMITERS: [&str; 2] = ["\"\"\"", "'''"];
    let mut u = 0;
    while u < comment.len() {
        let line = doc.text(u).trim();
        let opening = line.trim_start_matches(['r', 'R', 'u', 'U', 'b', 'B']);
        let standalone = DELIMITERS.into_iter().find(|d| opening.starts_with(d));
        let Some(delimiter) = standalone.or_else(|| {
            DELIMITERS
                .into_iter()
                .find(|d| line.matches(d).count() % 2 == 1)
        }) else {
            u += 1;
            continue;
        };
        let closes_here = line.matches(delimiter).count() % 2 == 0;
        let mut end = u + 1;
        if !closes_here {
            while end < comment.len() && !doc.text(end).contains(delimiter) {
                end += 1;
            }
            end = (end + 1).min(comment.len());
        }
        if standalone.is_some() {
            for c in &mut comment[u..end] {
                *c = true;
            }
        }
        u = end;
    }
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
mod tests;
