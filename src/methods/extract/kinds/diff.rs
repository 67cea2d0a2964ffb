//! Unified diffs (`diff -u`, `diff -ru`, `git diff`, `git show`): one unit per line, each hunk
//! a block under its `@@` header, each header under its file's header line. Changed lines rank
//! above context lines; a hunk or file the query names ranks whole, so the change it asks about
//! comes with its hunk header and file name. In `git log -p` each commit's header (`commit
//! <hash>`, `Author:`, `Date:`) is the context of its message and its files: a kept line of a
//! commit keeps the hash, author and date that say which commit it is.

use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{self, Doc, Unit};
use crate::methods::extract::query::Query;

/// Headers are the map of a diff: which files changed, where.
const FILE_HEADER_PRIOR: f32 = 1.5;
const HUNK_HEADER_PRIOR: f32 = 1.0;
/// An added or removed line says more than a context line.
const CHANGE_PRIOR: f32 = 0.5;
/// Every line of a hunk that contains one of the query's exact terms (or sits under a hunk
/// header that does, such as `@@ … @@ def name(`).
const NAMED_HUNK_PRIOR: f32 = 3.0;
/// Every line of a file whose header names one of the query's exact terms: more than the
/// headers of the files it does not name, which are the map of the diff and little else when
/// it names files.
const NAMED_FILE_PRIOR: f32 = 4.0;

/// Whether a sample of non-blank lines reads as a unified diff: it has file and hunk headers,
/// and most lines are diff lines.
pub(crate) fn looks_like_diff(lines: &[&str]) -> bool {
    let hunks = lines.iter().filter(|l| l.starts_with("@@ -")).count();
    let files = lines
        .iter()
        .filter(|l| l.starts_with("+++ ") || l.starts_with("diff "))
        .count();
    let diff_lines = lines
        .iter()
        .filter(|l| {
            l.starts_with([' ', '+', '-', '@', '\\'])
                || is_file_header(l)
                || l.starts_with("index ")
        })
        .count();
    hunks >= 1 && files >= 1 && diff_lines * 10 >= lines.len() * 7
}

/// A line that starts the record of one file: `diff …` (or, without it, `--- `/`+++ `).
fn is_file_header(line: &str) -> bool {
    line.starts_with("diff ")
        || line.starts_with("--- ")
        || line.starts_with("+++ ")
        || line.starts_with("Only in ")
        || line.starts_with("Binary files ")
}

/// A line that opens a commit of `git log -p` or `git show`: `commit` and a hash.
fn is_commit_line(line: &str) -> bool {
    line.strip_prefix("commit ").is_some_and(|rest| {
        let hash = rest.split_whitespace().next().unwrap_or("");
        hash.len() >= 7 && hash.bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// A header line of a commit, under its `commit` line (`Author:`, `Date:`, `Merge:`).
fn is_commit_header(line: &str) -> bool {
    [
        "Author:",
        "Date:",
        "Merge:",
        "AuthorDate:",
        "Commit:",
        "CommitDate:",
    ]
    .iter()
    .any(|h| line.starts_with(h))
}

/// Cuts a diff into lines grouped by file and hunk.
pub(crate) fn build<'a>(text: &'a str, query: Option<&Query>) -> Doc<'a> {
    let mut units: Vec<Unit> = Vec::new();
    let mut file: Option<usize> = None;
    let mut hunk: Option<usize> = None;
    let mut block: u32 = 0;
    // The last header line of the commit being read (its `Date:`), which its message and
    // files hang from; and whether its header lines are still being read.
    let mut commit: Option<usize> = None;
    let mut in_commit_header = false;
    // (first unit, one past last unit) of each hunk and each file, for the query's rule.
    let mut hunks: Vec<(usize, usize)> = Vec::new();
    let mut files: Vec<(usize, usize)> = Vec::new();
    let spans: Vec<_> = doc::line_spans(text)
        .into_iter()
        .filter(|s| !text[s.clone()].trim().is_empty())
        .collect();
    for (i, span) in spans.iter().enumerate() {
        let line = &text[span.clone()];
        let next = spans.get(i + 1).map_or("", |s| &text[s.clone()]);
        let previous = i.checked_sub(1).map_or("", |p| &text[spans[p].clone()]);
        let index = units.len();
        // `--- a/x` followed by `+++ b/x` opens a file unless a `diff` line just did.
        let opens_file = line.starts_with("diff ")
            || line.starts_with("Only in ")
            || line.starts_with("Binary files ")
            || (line.starts_with("--- ")
                && next.starts_with("+++ ")
                && !previous.starts_with("diff ")
                && !previous.starts_with("index "));
        let continues_header =
            !opens_file && hunk.is_none() && file.is_some() && !line.starts_with("@@");
        let commit_header = in_commit_header && is_commit_header(line);
        in_commit_header = commit_header;
        let (parent, prior) = if is_commit_line(line) {
            block += 1;
            file = None;
            hunk = None;
            commit = Some(index);
            in_commit_header = true;
            (None, FILE_HEADER_PRIOR)
        } else if commit_header {
            let parent = commit;
            commit = Some(index);
            (parent, FILE_HEADER_PRIOR)
        } else if opens_file {
            block += 1;
            file = Some(index);
            hunk = None;
            files.push((index, index + 1));
            (commit, FILE_HEADER_PRIOR)
        } else if line.starts_with("@@") {
            block += 1;
            hunk = Some(index);
            hunks.push((index, index + 1));
            (file, HUNK_HEADER_PRIOR)
        } else if continues_header {
            let header = line.starts_with("--- ") || line.starts_with("+++ ");
            (file, if header { FILE_HEADER_PRIOR } else { 0.0 })
        } else if hunk.is_some() && line.starts_with([' ', '+', '-', '\\']) {
            let changed = line.starts_with(['+', '-']);
            (hunk, if changed { CHANGE_PRIOR } else { 0.0 })
        } else {
            // Anything else (a commit message in `git show`) starts a block of its own, or
            // goes on with its commit's.
            let in_message = commit.is_some() && file.is_none() && hunk.is_none();
            if !in_message && (hunk.is_some() || file.is_none()) {
                block += 1;
            }
            hunk = None;
            file = None;
            (commit, 0.0)
        };
        if let Some(h) = hunks.last_mut().filter(|_| hunk.is_some()) {
            h.1 = index + 1;
        }
        if let Some(f) = files.last_mut().filter(|_| file.is_some()) {
            f.1 = index + 1;
        }
        units.push(Unit {
            span: span.clone().into(),
            parent: parent.into(),
            block: Some(block),
            template: Some(doc::template_of(line)),
            prior,
            level: doc::Level::None,
            weight: 1,
            ..Unit::default()
        });
    }
    let mut doc = Doc {
        kind: ContentKind::Diff,
        source: text.into(),
        units,
        overview: Some(format!(
            "[diff: {} files, {} hunks]",
            super::log::thousands(files.len()),
            super::log::thousands(hunks.len())
        )),
        noun: "lines",
        fields: Vec::new(),
        fuller: Default::default(),
    };
    if let Some(query) = query.filter(|q| !q.exact.is_empty()) {
        boost_named(&mut doc, &files, query, NAMED_FILE_PRIOR, true);
        boost_named(&mut doc, &hunks, query, NAMED_HUNK_PRIOR, false);
    }
    doc
}

/// Raises every unit of each range whose header (`header_only`) or any line mentions an exact
/// term of the query.
fn boost_named(
    doc: &mut Doc<'_>,
    ranges: &[(usize, usize)],
    query: &Query,
    prior: f32,
    header_only: bool,
) {
    for &(start, end) in ranges {
        let named = if header_only {
            // The file's header lines: up to its first hunk.
            (start..end)
                .take_while(|&u| !doc.text(u).starts_with("@@"))
                .any(|u| query.mentions(doc.text(u)))
        } else {
            (start..end).any(|u| query.mentions(doc.text(u)))
        };
        if named {
            for unit in &mut doc.units[start..end] {
                unit.prior += prior;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;

    const DIFF: &[&str] = &[
        "diff -ru a-1.0/src/specs.py a-2.0/src/specs.py",
        "--- a-1.0/src/specs.py\t2023-10-01 13:49:25 +0000",
        "+++ a-2.0/src/specs.py\t2024-03-10 09:38:57 +0000",
        "@@ -10,6 +10,8 @@ def _split(version):",
        "     result = []",
        "-    for item in version.split(\".\"):",
        "+    epoch, _, rest = version.rpartition(\"!\")",
        "+    for item in rest.split(\".\"):",
        "         result.append(item)",
        "diff -ru a-1.0/README a-2.0/README",
        "--- a-1.0/README\t2023-10-01 13:49:25 +0000",
        "+++ a-2.0/README\t2024-03-10 09:38:57 +0000",
        "@@ -1,2 +1,2 @@",
        "-old",
        "+new",
    ];

    fn diff() -> String {
        DIFF.join("\n")
    }

    #[test]
    fn diffs_are_recognised_by_their_headers() {
        assert!(looks_like_diff(DIFF));
        assert!(!looks_like_diff(&["- a list item", "- another", "plain"]));
    }

    #[test]
    fn hunk_lines_sit_under_their_hunk_and_file() {
        let text = diff();
        let doc = build(&text, None);
        assert!(doc.text(3).starts_with("@@"));
        assert_eq!(doc.units[5].parent.get(), Some(3));
        assert_eq!(doc.units[3].parent.get(), Some(0));
        assert_eq!(doc.units[2].parent.get(), Some(0));
        // The `---`/`+++` lines belong to the file header, not to the previous hunk.
        assert_eq!(doc.units[10].parent.get(), Some(9));
        assert_ne!(doc.units[10].block, doc.units[8].block);
        assert!(doc.units[5].prior > doc.units[4].prior);
    }

    #[test]
    fn the_changes_of_a_file_the_query_names_outrank_other_files_headers() {
        let mut text = String::new();
        for name in [
            "core", "input", "output", "path", "util", "eval", "compat", "builder",
        ] {
            let dir = if name == "eval" { "template/" } else { "" };
            text.push_str(&format!(
                "--- original/genshi/{dir}{name}.py\n+++ fixed/genshi/{dir}{name}.py\n\
                 @@ -5,3 +5,3 @@\n def {name}_step(rows):\n-    if not rows is None:\n\
                 +    if rows is not None:\n         return rows\n"
            ));
        }
        let q = Query::from_hints(&Hints::new().with_query(
            "which rewrites does it propose in genshi/template/eval.py, and how did they read?",
        ));
        let doc = build(&text, q.as_ref());
        let scores = crate::methods::extract::score::score(&doc, q.as_ref());
        let of = |line: &str, file: usize| {
            (0..doc.units.len())
                .filter(|&u| doc.text(u) == line)
                .nth(file)
                .unwrap()
        };
        let removed = of("-    if not rows is None:", 5);
        let other_header = of("--- original/genshi/core.py", 0);
        assert!(scores[removed] > scores[other_header], "{scores:?}");
    }

    /// `git log -p`: each commit's header is the context of its message and its files.
    #[test]
    fn a_commit_header_is_the_context_of_its_message_and_files() {
        let text = "commit 1d28d5e82de16163daf721a7c76fff93e0d333ab\n\
                    Author: A Writer <a@example.org>\n\
                    Date:   Mon Jan 5 08:51:57 2026 -0700\n\n\
                    \x20   fix: escape the dots of a pattern\n\n\
                    \x20   The bug matched any character.\n\n\
                    diff --git a/re.js b/re.js\n\
                    --- a/re.js\n\
                    +++ b/re.js\n\
                    @@ -1,2 +1,2 @@\n\
                    -old\n\
                    +new\n\
                    commit 2e28d5e82de16163daf721a7c76fff93e0d333ab\n\
                    Author: B Writer <b@example.org>\n\
                    Date:   Tue Jan 6 08:51:57 2026 -0700\n\n\
                    \x20   docs: typos\n";
        let doc = build(text, None);
        let unit = |line: &str| {
            (0..doc.units.len())
                .find(|&u| doc.text(u).trim() == line)
                .unwrap()
        };
        let date = unit("Date:   Mon Jan 5 08:51:57 2026 -0700");
        assert_eq!(
            doc.units[date].parent.get(),
            Some(unit("Author: A Writer <a@example.org>"))
        );
        assert_eq!(
            doc.units[unit("Author: A Writer <a@example.org>")]
                .parent
                .get(),
            Some(unit("commit 1d28d5e82de16163daf721a7c76fff93e0d333ab"))
        );
        assert_eq!(
            doc.units[unit("The bug matched any character.")]
                .parent
                .get(),
            Some(date)
        );
        assert_eq!(
            doc.units[unit("diff --git a/re.js b/re.js")].parent.get(),
            Some(date)
        );
        assert_eq!(
            doc.units[unit("docs: typos")].parent.get(),
            Some(unit("Date:   Tue Jan 6 08:51:57 2026 -0700"))
        );
        assert_eq!(
            doc.units[unit("fix: escape the dots of a pattern")].block,
            doc.units[unit("The bug matched any character.")].block
        );
    }

    #[test]
    fn a_hunk_the_query_names_ranks_whole() {
        let q = Query::from_hints(&Hints::new().with_query("what changed in _split?"));
        let text = diff();
        let doc = build(&text, q.as_ref());
        assert!(doc.units[4].prior >= NAMED_HUNK_PRIOR);
        assert!(doc.units[14].prior < NAMED_HUNK_PRIOR);
    }
}
