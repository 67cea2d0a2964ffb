//! Manual pages in their roff source: the `man` macros (`.TH`, `.SH`, `.TP`) and the `mdoc`
//! macros (`.Dt`, `.Sh`, `.Bl`, `.It`), read whole from a package or a repository.
//!
//! A manual documents each option or command in a list item: a tag (`.It Ic escape-time Ar
//! time`, or `.TP` and then `.B \-\-checksum`) and the lines under it, down to the next item.
//! Read as lines, the item's tag matches the query's exact term and its lines (where the
//! default is written: `The default is 500 milliseconds.`) match nothing, and lose to lines
//! of other items that repeat the query's plain words. Here each item the query names by its
//! tag is one block, raised whole: by an exact term, by every word of a tag of several, or by
//! a one-word tag (a builtin's name) the rest of the manual seldom says.

use crate::methods::extract::doc::Doc;
use crate::methods::extract::query::Query;

/// The roff source of a manual: at least this share (in percent) of its lines are requests
/// (`.Pp`, `.B`, `.\"`).
const MIN_REQUEST_SHARE: usize = 30;
/// Fewer lines than this is too little to tell a manual from a text with a few dotted lines.
const MIN_LINES: usize = 20;
/// An item longer than this is a chapter of the manual, not the entry of one option.
const MAX_ITEM_LINES: usize = 80;
/// Named items may cover at most this share (in percent) of the lines: past it the tag's
/// words are the manual's common words.
const MAX_NAMED_SHARE: usize = 25;
/// A one-word tag the query names is the item asked about when at most this many lines
/// outside its item say the word, or one in a hundred of the manual's lines, if more.
const MIN_LINES_SAYING_ONE_WORD_TAG: usize = 3;
/// Added to every line of an item the query names.
const NAMED_ITEM_PRIOR: f32 = 4.0;

/// The name of the request on `line` (`It` of `.It Ic escape-time`, `\"` of a comment), if
/// the line is one.
fn request(line: &str) -> Option<&str> {
    let rest = line.strip_prefix(['.', '\''])?;
    if rest.starts_with("\\\"") {
        return Some("\\\"");
    }
    let end = rest
        .find(|c: char| !c.is_ascii_alphanumeric())
        .unwrap_or(rest.len());
    let name = &rest[..end];
    let after = &rest[end..];
    ((1..=3).contains(&name.len()) && (after.is_empty() || after.starts_with([' ', '\t'])))
        .then_some(name)
}

/// Whether the lines of `doc` (one unit per line) are the roff source of a manual: many
/// requests, and a title or a section heading among them.
fn is_manual(doc: &Doc<'_>) -> bool {
    let n = doc.units.len();
    if n < MIN_LINES {
        return false;
    }
    let mut requests = 0;
    let mut headed = false;
    for u in 0..n {
        if let Some(name) = request(doc.text(u)) {
            requests += 1;
            headed |= matches!(name, "TH" | "SH" | "Dt" | "Sh");
        }
    }
    headed && requests * 100 >= n * MIN_REQUEST_SHARE
}

/// The text of a tag without its font escapes and macros: `\fB\-\-checksum\fP` → `--checksum`.
fn plain(tag: &str) -> String {
    let mut out = String::with_capacity(tag.len());
    let mut chars = tag.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            // `\fB`, `\f(CW`, `\f[B]`: a font change.
            Some('f') => match chars.next() {
                Some('(') => {
                    chars.next();
                    chars.next();
                }
                Some('[') => {
                    for c in chars.by_ref() {
                        if c == ']' {
                            break;
                        }
                    }
                }
                _ => {}
            },
            Some('-') => out.push('-'),
            Some('&') => {}
            Some(other) => out.push(other),
            None => {}
        }
    }
    out
}

/// An `mdoc` macro called on a line (`Ic`, `Ar`, `Fl`, `Xo`): two or three letters, the
/// first a capital.
fn is_mdoc_macro(word: &str) -> bool {
    let mut chars = word.chars();
    chars.next().is_some_and(|c| c.is_ascii_uppercase())
        && (2..=3).contains(&word.len())
        && chars.all(|c| c.is_ascii_lowercase())
}

/// The name an item's tag gives: its first word that is no macro, without quotes and a
/// trailing comma (`escape-time` of `Ic escape-time Ar time`, `--checksum` of `.B
/// \-\-checksum ", " \-c`). A flag of `mdoc` (`Fl d`) gets its dash.
fn tag_name(tag: &str) -> Option<String> {
    let tag = plain(tag);
    let mut flag = false;
    for (i, word) in tag.split_whitespace().enumerate() {
        if i == 0 && word.starts_with('.') {
            continue;
        }
        if is_mdoc_macro(word) {
            flag |= word == "Fl";
            continue;
        }
        let word = word.trim_matches(|c: char| c == '"' || c == ',');
        if word.is_empty() {
            continue;
        }
        return Some(if flag {
            format!("-{word}")
        } else {
            word.to_owned()
        });
    }
    None
}

/// Whether `line` is a short line of text, no request: the tag of an indented block under it.
fn is_text_tag(line: &str) -> bool {
    /// Words a tag has at most; more is a sentence leading into an indented example.
    const MAX_TAG_WORDS: usize = 6;
    request(line).is_none()
        && !line.trim().is_empty()
        && line.split_whitespace().count() <= MAX_TAG_WORDS
}

/// The list items of a manual, as (first unit, one past the last, tag name): an item runs to
/// the next item of its list, the end of its list (`.El`, `.RE`), a paragraph break of the
/// `man` macros (`.PP`) or a section heading.
fn items(doc: &Doc<'_>) -> Vec<(usize, usize, String)> {
    let mut found = Vec::new();
    // Open items, innermost last: (their list depth, first unit, name).
    let mut open: Vec<(usize, usize, Option<String>)> = Vec::new();
    let mut depth = 0usize;
    let mut tag_next = false;
    let close = |open: &mut Vec<(usize, usize, Option<String>)>,
                 found: &mut Vec<_>,
                 at_least: usize,
                 end: usize| {
        while open.last().is_some_and(|(d, _, _)| *d >= at_least) {
            let (_, start, name) = open.pop().expect("checked");
            if let Some(name) = name {
                found.push((start, end, name));
            }
        }
    };
    for u in 0..doc.units.len() {
        let line = doc.text(u);
        if tag_next {
            tag_next = false;
            if let Some(item) = open.last_mut() {
                item.2 = tag_name(line);
            }
        }
        match request(line) {
            Some("It") => {
                close(&mut open, &mut found, depth, u);
                open.push((depth, u, tag_name(&line[3..])));
            }
            Some("TP") => {
                close(&mut open, &mut found, depth, u);
                open.push((depth, u, None));
                tag_next = true;
            }
            // `.IP` without a tag goes on with the paragraph of the item it is in.
            Some("IP") if !line[3..].trim().is_empty() => {
                close(&mut open, &mut found, depth, u);
                open.push((depth, u, tag_name(&line[3..])));
            }
            Some("PP" | "LP" | "P") => close(&mut open, &mut found, depth, u),
            // A short line of text over an indented block (`\fBwatch\fP` and then `.RS 4`,
            // as manuals converted from AsciiDoc write an option) is an item's tag; the item
            // runs to the block's end.
            Some("RS") if u > 0 && is_text_tag(doc.text(u - 1)) => {
                close(&mut open, &mut found, depth + 1, u - 1);
                open.push((depth + 1, u - 1, tag_name(doc.text(u - 1))));
                depth += 1;
            }
            Some("Bl" | "RS") => depth += 1,
            Some("El" | "RE") => {
                close(&mut open, &mut found, depth, u);
                depth = depth.saturating_sub(1);
            }
            Some("SH" | "SS" | "Sh" | "Ss") => {
                close(&mut open, &mut found, 0, u);
                depth = 0;
            }
            _ => {}
        }
    }
    close(&mut open, &mut found, 0, doc.units.len());
    found.sort_unstable();
    found
}

/// How many lines of `doc` outside `item` hold `word` as a whole word, whatever its case.
fn lines_saying(doc: &Doc<'_>, word: &str, item: std::ops::Range<usize>) -> usize {
    let word = word.to_ascii_lowercase();
    let is_word_byte = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_');
    (0..doc.units.len())
        .filter(|u| !item.contains(u))
        .filter(|&u| {
            let line = doc.text(u).to_ascii_lowercase();
            let bytes = line.as_bytes();
            line.match_indices(&word).any(|(at, _)| {
                !is_word_byte(at.checked_sub(1).and_then(|i| bytes.get(i)))
                    && !is_word_byte(bytes.get(at + word.len()))
            })
        })
        .count()
}

/// When `doc` (one unit per line) is the roff source of a manual, raises every item whose tag
/// the query names (by an exact term, by every word of a tag of several words, or by the word
/// of a one-word tag the rest of the manual seldom says) as one block: the option asked about
/// comes with the lines that give its default and meaning.
pub(crate) fn weigh_named_items(doc: &mut Doc<'_>, query: &Query) {
    if !is_manual(doc) {
        return;
    }
    let mut buf = String::new();
    let named: Vec<(usize, usize, bool)> = items(doc)
        .into_iter()
        .filter(|(start, end, _)| end - start <= MAX_ITEM_LINES)
        .filter_map(|(start, end, name)| {
            if query.mentions(&name) {
                return Some((start, end, true));
            }
            let words = name.split(['-', '_']).filter(|w| !w.is_empty()).count();
            // A one-word tag (a builtin's name) is named by a query word only when the rest
            // of the manual seldom says it: a rare name, not `set` or `read`.
            let rare = || {
                let most = MIN_LINES_SAYING_ONE_WORD_TAG.max(doc.units.len() / 100);
                lines_saying(doc, &name, start..end) <= most
            };
            let named = query.names_every_word(&name, true, &mut buf)
                && (words > 1 || (!name.starts_with('-') && rare()));
            named.then_some((start, end, false))
        })
        .collect();
    let lines = doc.units.len();
    let share = |exact_only: bool| -> usize {
        let mut covered = vec![false; lines];
        for &(start, end, exact) in &named {
            if exact || !exact_only {
                covered[start..end].iter_mut().for_each(|c| *c = true);
            }
        }
        covered.iter().filter(|c| **c).count() * 100
    };
    let exact_only = if share(false) <= lines * MAX_NAMED_SHARE {
        false
    } else if share(true) <= lines * MAX_NAMED_SHARE {
        true
    } else {
        return;
    };
    let mut block = doc.next_block();
    for &(start, end, exact) in &named {
        if exact_only && !exact {
            continue;
        }
        for unit in &mut doc.units[start..end] {
            unit.prior += NAMED_ITEM_PRIOR;
            unit.block = Some(block);
        }
        block += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;
    use crate::methods::extract::kinds::lines;

    /// The shape of an `mdoc` manual's options: a list of items, each a tag and the lines
    /// that say what it does and what its default is.
    fn mdoc() -> String {
        let mut text =
            String::from(".Dd $Mdocdate$\n.Dt TOOL 1\n.Sh OPTIONS\n.Bl -tag -width Ds\n");
        for (name, default) in [
            ("buffer-limit", "50"),
            ("command-alias", "none"),
            ("escape-time", "500"),
            ("exit-empty", "on"),
            ("focus-events", "off"),
            ("history-file", "empty"),
            ("message-limit", "1000"),
            ("prompt-history-limit", "100"),
        ] {
            text.push_str(&format!(
                ".It Ic {name} Ar value\nSet the value of\n.Ic {name}\nfor the server.\n.Pp\nThe default is {default}.\n"
            ));
        }
        text.push_str(".El\n.Sh SEE ALSO\n.Xr sh 1\n");
        text
    }

    fn prior(doc: &Doc<'_>, line: &str) -> f32 {
        let u = (0..doc.units.len())
            .find(|&u| doc.text(u) == line)
            .unwrap_or_else(|| panic!("no line {line}"));
        doc.units[u].prior
    }

    #[test]
    fn the_item_the_query_names_is_raised_whole() {
        let text = mdoc();
        let mut doc = lines::build(&text, lines::Style::Text);
        let query = Query::from_hints(
            &Hints::new().with_query("what is the default of escape-time for the server?"),
        )
        .unwrap();
        let before = prior(&doc, "The default is 500.");
        weigh_named_items(&mut doc, &query);
        assert_eq!(
            prior(&doc, "The default is 500."),
            before + NAMED_ITEM_PRIOR
        );
        assert_eq!(prior(&doc, "The default is 50."), before);
    }

    #[test]
    fn tags_of_both_macro_sets_give_their_names() {
        assert_eq!(
            tag_name(" Ic escape-time Ar time").as_deref(),
            Some("escape-time")
        );
        assert_eq!(
            tag_name(" Xo Ic refresh-client").as_deref(),
            Some("refresh-client")
        );
        assert_eq!(tag_name(" Fl d").as_deref(), Some("-d"));
        assert_eq!(
            tag_name(".B \\-\\-checksum \", \" \\-c").as_deref(),
            Some("--checksum")
        );
        assert_eq!(
            tag_name("\\fB\\-\\-delete\\fP, \\fB\\-d\\fR").as_deref(),
            Some("--delete")
        );
    }

    #[test]
    fn man_items_end_at_the_next_tag_or_paragraph() {
        let mut text = String::from(".TH TOOL 1\n.SH OPTIONS\n");
        for i in 0..10 {
            text.push_str(&format!(
                ".TP\n.B \\-\\-opt{i}\nWhat opt{i} does.\nThe default is {i}.\n"
            ));
        }
        text.push_str(".PP\nMore prose.\n.SH BUGS\nNone.\n");
        let doc = lines::build(&text, lines::Style::Text);
        let found = items(&doc);
        assert_eq!(found.len(), 10);
        let (start, end, name) = &found[9];
        assert_eq!(name, "--opt9");
        assert_eq!(doc.text(*start), ".TP");
        assert_eq!(doc.text(end - 1), "The default is 9.");
    }

    #[test]
    fn prose_with_a_few_dotted_lines_is_no_manual() {
        let mut text = String::new();
        for i in 0..30 {
            text.push_str(&format!("Line {i} of prose.\n"));
        }
        text.push_str(".SH not really\n");
        let doc = lines::build(&text, lines::Style::Text);
        assert!(!is_manual(&doc));
        let text = mdoc();
        assert!(is_manual(&lines::build(&text, lines::Style::Text)));
    }

    /// A shell's manual lists its builtins as items of one-word tags, each with lists of its
    /// own flags: the builtin a query names by a word the rest of the manual seldom says is
    /// raised whole, nested lists and all; one whose name the manual says everywhere is not.
    #[test]
    fn a_builtin_named_by_a_word_the_manual_seldom_says_is_raised_whole() {
        let mut text = String::from(".Dt SHELL 1\n.Sh BUILTINS\n.Bl -tag -width Ds\n");
        for name in ["alias", "set", "quota", "wait"] {
            text.push_str(&format!(
                ".It {name} Xo\n.Op Fl a\n.Xc\nWhat {name} does.\n"
            ));
            text.push_str(".Bl -tag -width Fl\n");
            for flag in 0..28 {
                text.push_str(&format!(".It Fl l{flag}\nset or show limit {flag}\n"));
            }
            text.push_str(".El\n.Pp\nWith no flag, the first limit is shown.\n");
        }
        text.push_str(".El\n.Sh SEE ALSO\n.Xr sh 1\n");
        for i in 0..40 {
            text.push_str(&format!("Use set to change option {i}.\n"));
        }
        let doc = lines::build(&text, lines::Style::Text);
        let found = items(&doc);
        let (start, end, _) = found.iter().find(|(_, _, n)| n == "quota").unwrap();
        assert!(end - start > 60, "an item of {} lines", end - start);
        let raised = |query: &str| {
            let mut doc = lines::build(&text, lines::Style::Text);
            let query = Query::from_hints(&Hints::new().with_query(query)).unwrap();
            let before = prior(&doc, "What quota does.");
            weigh_named_items(&mut doc, &query);
            let shown = (0..doc.units.len())
                .filter(|&u| doc.text(u) == "With no flag, the first limit is shown.")
                .map(|u| doc.units[u].prior - before)
                .collect::<Vec<_>>();
            (
                prior(&doc, "What quota does.") - before,
                prior(&doc, "What set does.") - before,
                shown,
            )
        };
        let (quota, set, shown) = raised("what does the quota builtin show with no flag?");
        assert_eq!(quota, NAMED_ITEM_PRIOR);
        assert_eq!(set, 0.0);
        assert_eq!(shown, [0.0, 0.0, NAMED_ITEM_PRIOR, 0.0]);
        let (_, set, _) = raised("what does the set builtin show with no flag?");
        assert_eq!(set, 0.0);
    }

    /// Manuals converted from AsciiDoc write each option as a line of text over an indented
    /// block (`\fBwatch\fP`, `.RS 4`, its lines, `.RE`): each is an item named by it.
    #[test]
    fn a_tag_over_an_indented_block_is_an_item() {
        let mut text = String::from(".TH TOOL 8\n.SH OPTIONS\n");
        for i in 0..10 {
            text.push_str(&format!(
                ".sp\n\\fBopt{i}\\fP\n.RS 4\nWhat opt{i} does.\n.sp\nThe default is {i}.\n.RE\n"
            ));
        }
        text.push_str(".sp\nFor example, mount it twice in a row with the same long set of words:\n.RS 4\n.nf\nmount -a\n.fi\n.RE\n");
        let doc = lines::build(&text, lines::Style::Text);
        let found = items(&doc);
        assert_eq!(found.len(), 10, "{found:?}");
        let (start, end, name) = &found[9];
        assert_eq!(name, "opt9");
        assert_eq!(doc.text(*start), "\\fBopt9\\fP");
        assert_eq!(doc.text(end - 1), "The default is 9.");
    }
}
