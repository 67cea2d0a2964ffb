//! What tells Markdown from other text: headings (a `#` line, or a line underlined where a
//! block opens), lists, fences and links.

/// Whether `line` is markdown's own syntax, which HTML does not write at a line's start: an
/// ATX heading (`## Install`) or a code fence.
pub(super) fn is_markdown_syntax(line: &str) -> bool {
    let hashes = line.len() - line.trim_start_matches('#').len();
    ((1..=6).contains(&hashes) && line[hashes..].starts_with(' ')) || line.starts_with("```")
}

/// Which of a sample's non-blank lines open a block: the first, and each after a blank line.
pub(super) struct Blocks(Vec<bool>);

impl Blocks {
    /// The first `count` non-blank lines of `sample`.
    pub(super) fn of(sample: &str, count: usize) -> Blocks {
        let mut opens = Vec::with_capacity(count);
        let mut after_blank = true;
        for line in sample.lines() {
            if opens.len() == count {
                break;
            }
            let blank = line.trim().is_empty();
            if !blank {
                opens.push(after_blank);
            }
            after_blank = blank;
        }
        Blocks(opens)
    }

    /// Whether non-blank line `i` opens a block.
    fn opens(&self, i: usize) -> bool {
        self.0.get(i).copied().unwrap_or(true)
    }
}

/// Whether `lines[i]` underlines the line above as a heading (`Usage` over `-----`). An
/// underline counts when it and the text line above start at the margin and that line opens
/// a block, as a document's headings do: a program that rules a line under the one before
/// (a status title over `-----` amid a backup tool's lines) writes a report. A title boxed
/// between two rulers (`====`, `ERROR: test_x`, `----`, as unittest and many reports print
/// them) is a report's, not a heading either.
fn is_setext_heading(lines: &[&str], blocks: &Blocks, i: usize) -> bool {
    let ruler_at = |j: Option<usize>| {
        j.and_then(|j| lines.get(j))
            .is_some_and(|l| is_setext_underline(l))
    };
    let t = lines[i].trim_end();
    let boxed = ruler_at(i.checked_sub(2)) || ruler_at(Some(i + 2));
    i > 0
        && is_setext_underline(t)
        && blocks.opens(i - 1)
        && !t.starts_with([' ', '\t'])
        && !lines[i - 1].starts_with([' ', '\t'])
        && !boxed
}

/// How many different texts are underlined as headings. A report that boxes each of its
/// entries under one title (Cython's `Error compiling Cython file:` over a ruler, before each
/// error) underlines one text many times; a document's headings differ.
pub(super) fn distinct_setext_headings(lines: &[&str], blocks: &Blocks) -> usize {
    let mut texts: Vec<&str> = (0..lines.len())
        .filter(|&i| is_setext_heading(lines, blocks, i))
        .map(|i| lines[i - 1].trim())
        .collect();
    texts.sort_unstable();
    texts.dedup();
    texts.len()
}

pub(super) fn looks_like_markdown(lines: &[&str], blocks: &Blocks) -> bool {
    let mut headings = distinct_setext_headings(lines, blocks);
    let mut marks = 0;
    let hashed = |i: usize| lines.get(i).is_some_and(|l| l.starts_with('#'));
    // A test report's lines (TAP's `ok 3 - …`, `not ok 4 - …`) make its `# Subtest:` lines
    // comments of a report, not headings.
    let results = lines
        .iter()
        .filter(|l| {
            let t = l.trim_start();
            let rest = t.strip_prefix("not ok ").or_else(|| t.strip_prefix("ok "));
            rest.is_some_and(|r| r.starts_with(|c: char| c.is_ascii_digit()))
        })
        .count();
    if results >= 3 {
        return false;
    }
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim_end();
        // A `#` line next to another is a block of comments (a config file's, a script's):
        // markdown puts text under a heading before the next one.
        let in_comment_block = hashed(i + 1) || (i > 0 && hashed(i - 1));
        let atx = t.starts_with('#')
            && t.trim_start_matches('#').starts_with(' ')
            && !in_comment_block
            && !is_settings_line(t.trim_start_matches('#'));
        if atx {
            headings += 1;
        } else if is_setext_heading(lines, blocks, i) {
            // Counted above, once per text.
        } else if t.starts_with("```")
            || t.starts_with("* ")
            || t.starts_with("- ")
            || has_markdown_link(t)
        {
            marks += 1;
        }
    }
    headings >= 2 || (headings >= 1 && marks >= 3)
}

/// Whether the text after a `#` is a program's settings (`off=0 ctb=99 tag=6`, a dump's
/// annotation of each packet) rather than a title: most of its words are `key=value`.
fn is_settings_line(text: &str) -> bool {
    let (mut words, mut settings) = (0, 0);
    for word in text.split_whitespace() {
        words += 1;
        settings += usize::from(
            word.find('=')
                .is_some_and(|at| at > 0 && at + 1 < word.len()),
        );
    }
    settings >= 2 && settings * 2 > words
}

/// Whether `line` holds a markdown link, `[text](target)`, whose target reads as one: an
/// anchor, a path or a URL (`#usage`, `docs/a.md`, `https://…`). Code calls what it indexes
/// (`handlers[mode](conf)`, `a[0](a[1])`), which is no link.
pub(super) fn has_markdown_link(line: &str) -> bool {
    line.match_indices("](").any(|(at, _)| {
        let target = &line[at + 2..];
        let target = &target[..target.find(')').unwrap_or(target.len())];
        !target.contains(char::is_whitespace)
            && (target.starts_with('#')
                || target.contains('/')
                || target.contains(".md")
                || target.contains(".htm"))
    })
}

/// A line of `===` or `---` under a line of text makes that line a heading.
pub(crate) fn is_setext_underline(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 3 && (t.bytes().all(|b| b == b'=') || t.bytes().all(|b| b == b'-'))
}
