//! What kind of output a text is, decided from a sample of its start. Never fails: whatever is
//! not recognised is plain text, handled as lines.

use std::fmt;

use super::kinds::{csv, diff, log};
pub(crate) use markdown::is_setext_underline;
use markdown::{
    Blocks, distinct_setext_headings, has_markdown_link, is_markdown_syntax, looks_like_markdown,
};

/// The kinds of tool output the extractive compressor tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ContentKind {
    /// One JSON document (object or array).
    Json,
    /// One JSON value per line.
    JsonLines,
    /// Log lines with timestamps or levels.
    Log,
    /// Comma- or tab-separated rows under a header.
    Csv,
    /// Markdown or similar lightly marked-up prose.
    Markdown,
    /// An HTML page.
    Html,
    /// Source code.
    Code,
    /// A unified diff (`diff -u`, `git diff`, `git show`).
    Diff,
    /// A file of `[section]` headers and `key = value` fields: TOML, INI, systemd units, lock
    /// files.
    Config,
    /// An XML document whose bulk is a list of records (repeated elements), read as a tree.
    Xml,
    /// A block YAML document whose bulk is a list of records, read as a tree.
    Yaml,
    /// Anything else: command output, plain text.
    Text,
}

impl ContentKind {
    /// A short lowercase name, as shown in stats.
    pub fn name(self) -> &'static str {
        match self {
            ContentKind::Json => "json",
            ContentKind::JsonLines => "jsonl",
            ContentKind::Log => "log",
            ContentKind::Csv => "csv",
            ContentKind::Markdown => "markdown",
            ContentKind::Html => "html",
            ContentKind::Code => "code",
            ContentKind::Diff => "diff",
            ContentKind::Config => "config",
            ContentKind::Xml => "xml",
            ContentKind::Yaml => "yaml",
            ContentKind::Text => "text",
        }
    }
}

impl fmt::Display for ContentKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How much of the start of a text detection looks at.
const SAMPLE_BYTES: usize = 64 * 1024;
/// How many non-blank lines of the sample the line-based tests look at.
const SAMPLE_LINES: usize = 200;
/// A log whose traces make up most of its lines still starts one line in this many at least
/// with an entry: a text of a few dated lines among many indented ones is no log.
const MIN_ENTRY_SHARE: usize = 6;

/// Detects the kind of `text`. JSON is recognised by parsing (the parsed value is returned so it
/// is parsed only once), and so are XML and YAML that are lists of records (their tree is
/// returned); the other kinds by cheap tests on a sample of lines.
pub(crate) fn detect(text: &str) -> (ContentKind, Option<serde_json::Value>) {
    let trimmed = text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        if let Some(value) = super::kinds::json::parse_value(text)
            && (value.is_object() || value.is_array())
        {
            return (ContentKind::Json, Some(value));
        }
        if looks_like_json_lines(trimmed) {
            return (ContentKind::JsonLines, None);
        }
        // Documents printed one after another, each over many lines: one array of them.
        if let Some(values) = super::kinds::json::parse_stream(text) {
            return (ContentKind::Json, Some(values));
        }
    }
    let sample = &text[..crate::tokens::floor_char_boundary(text, SAMPLE_BYTES)];
    // XML that is a list of records reads best as that list; other XML as lines.
    // Before HTML: element names such as `<body>` or `<header>` are not HTML's.
    if super::tree::looks_like_xml(sample)
        && let Some(tree) = super::tree::parse_records(text, ContentKind::Xml)
    {
        return (ContentKind::Xml, Some(tree));
    }
    if looks_like_html(sample) {
        return (ContentKind::Html, None);
    }
    let lines: Vec<&str> = sample
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(SAMPLE_LINES)
        .collect();
    let blocks = Blocks::of(sample, lines.len());
    if lines.is_empty() {
        return (ContentKind::Text, None);
    }
    // A long file's head can be unlike its body (a licence header, module docs): the kinds
    // that are about the body look at lines from across the text as well.
    let spread = spread_lines(text);
    // Before logs: the file headers of a diff carry timestamps.
    if diff::looks_like_diff(&lines) {
        return (ContentKind::Diff, None);
    }
    if super::tree::looks_like_sections(&lines) {
        return (ContentKind::Config, None);
    }
    // `Key: value` stanzas (`dpkg -s`, `pip show`) that are a list of records are read as
    // that list; before YAML, whose maps they look like.
    if super::tree::starts_like_stanzas(&lines)
        && let Some(tree) = super::tree::parse_records(text, ContentKind::Text)
    {
        return (ContentKind::Text, Some(tree));
    }
    // YAML whose bulk is a list of records is told by its tree: its long text values (a
    // package's description, a patch) can look like anything to the line tests below.
    if super::tree::starts_like_yaml(&lines)
        && let Some(tree) = super::tree::parse_records(text, ContentKind::Yaml)
    {
        return (ContentKind::Yaml, Some(tree));
    }
    // A log whose fields are tab-separated (Prosody's `time\tsource\tlevel\tmessage`) is
    // delimited too, but it has no header row: its first line is an entry like the rest.
    let headless_log = log::starts_entry(lines[0])
        && lines.iter().filter(|l| log::starts_entry(l)).count() * 10 >= lines.len() * 9;
    if csv::looks_like_csv(&lines) && !headless_log {
        return (ContentKind::Csv, None);
    }
    // A table of columns aligned with spaces (`docker ps`, `kubectl get`, `df`).
    if super::tree::starts_like_columns(&lines)
        && let Some(tree) = super::tree::parse_records(text, ContentKind::Csv)
    {
        return (ContentKind::Csv, Some(tree));
    }
    // The indented lines of a traceback or a stack trace (Celery's, Tomcat's) continue the
    // entry above them: the entries are most of the lines that start at the margin.
    let (mut entries, mut at_margin, mut entries_at_margin) = (0, 0, 0);
    for line in &spread {
        let entry = log::starts_entry(line);
        let margin = !line.starts_with([' ', '\t']);
        entries += usize::from(entry);
        at_margin += usize::from(margin);
        entries_at_margin += usize::from(entry && margin);
    }
    if entries * 10 >= spread.len() * 6
        || (entries * MIN_ENTRY_SHARE >= spread.len() && entries_at_margin * 10 >= at_margin * 6)
    {
        return (ContentKind::Log, None);
    }
    // Text that starts like JSON but does not parse is a broken document, not source code.
    let broken_json = trimmed.starts_with('{') || trimmed.starts_with('[');
    let code = !broken_json && (looks_like_code(&spread) || defines_python(text));
    // `# comment` lines of Perl, Python or shell read like headings; a document with fenced
    // blocks, links or underlined headings is markdown (its `  * ` items read like the lines
    // of a block comment), code without them is code.
    let fenced = lines
        .iter()
        .any(|l| l.trim_start().starts_with("```") || has_markdown_link(l));
    let underlined = || distinct_setext_headings(&lines, &blocks);
    if code && !fenced && underlined() < 2 {
        return (ContentKind::Code, None);
    }
    // `# comment` lines atop YAML (a licence header) read like headings; a body of indented
    // `key: value` lines and `- ` items is a tree, read line by line with its indentation.
    if looks_like_yaml(&spread) {
        return (ContentKind::Text, None);
    }
    if looks_like_markdown(&lines, &blocks) {
        return (ContentKind::Markdown, None);
    }
    if code {
        return (ContentKind::Code, None);
    }
    (ContentKind::Text, None)
}

/// Non-blank lines from four windows spread over `text` (start, a third, two thirds, end).
fn spread_lines(text: &str) -> Vec<&str> {
    const WINDOW: usize = SAMPLE_BYTES / 4;
    let mut lines = Vec::new();
    for quarter in 0..4 {
        let from = crate::tokens::floor_char_boundary(
            text,
            text.len().saturating_sub(WINDOW) * quarter / 3,
        );
        let to = crate::tokens::floor_char_boundary(text, from + WINDOW);
        let window = &text[from..to];
        // Skip the partial first line of a window that starts mid-text.
        let window = if from > 0 {
            window.split_once('\n').map_or("", |(_, rest)| rest)
        } else {
            window
        };
        lines.extend(
            window
                .lines()
                .filter(|l| !l.trim().is_empty())
                .take(SAMPLE_LINES / 4),
        );
    }
    lines
}

fn looks_like_json_lines(text: &str) -> bool {
    let mut total = 0;
    let mut parsed = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()).take(20) {
        total += 1;
        let line = line.trim();
        if (line.starts_with('{') || line.starts_with('['))
            && serde_json::from_str::<serde::de::IgnoredAny>(line).is_ok()
        {
            parsed += 1;
        }
    }
    total >= 2 && parsed * 10 >= total * 8
}

fn looks_like_html(sample: &str) -> bool {
    let head = &sample[..crate::tokens::floor_char_boundary(sample, 4096)];
    let lower = head.to_ascii_lowercase();
    let start = after_http_headers(lower.trim_start());
    if start.starts_with("<!doctype html") || start.starts_with("<html") {
        return true;
    }
    // A fragment: mostly tags, with block-level ones among them; not a markdown file that
    // opens with a centred banner (`<div align="center">`), whose headings and code fences
    // follow.
    start.starts_with('<')
        && ["<div", "<p>", "<p ", "<body", "<table", "<head"]
            .iter()
            .any(|tag| lower.contains(tag))
        && !head.lines().any(is_markdown_syntax)
}

/// `text` past the HTTP header lines it starts with, if any (`curl -i`'s status line and
/// headers, a CGI program's `Content-type: text/html`), up to the blank line that ends them.
fn after_http_headers(text: &str) -> &str {
    let is_header = |line: &str| {
        line.starts_with("http/")
            || line.split_once(": ").is_some_and(|(name, _)| {
                !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            })
    };
    let mut rest = text;
    let mut headers = 0;
    while let Some((line, after)) = rest.split_once('\n') {
        let line = line.trim_end_matches('\r');
        if line.is_empty() {
            return if headers > 0 {
                after.trim_start()
            } else {
                text
            };
        }
        if !is_header(line) {
            return text;
        }
        headers += 1;
        rest = after;
    }
    text
}

/// Whether most lines that are not `#` comments are YAML: `key:` or `key: value` (the key a
/// single word), `- item`, or the text of a block scalar (which may hold markdown), with
/// some of them indented.
fn looks_like_yaml(lines: &[&str]) -> bool {
    let mut body = 0;
    let mut yaml = 0;
    let mut keyed = 0;
    let mut indented = 0;
    // The indentation of an open block scalar's key (`help_text: |-`): deeper lines are its text.
    let mut scalar: Option<usize> = None;
    for line in lines {
        let t = line.trim_start();
        if t.starts_with('#') || t == "---" {
            continue;
        }
        body += 1;
        let indent = line.len() - t.len();
        if indent > 0 {
            indented += 1;
        }
        if scalar.is_some_and(|at| indent > at) {
            yaml += 1;
            continue;
        }
        let value = t.trim_end();
        scalar = ["|", "|-", "|+", ">", ">-", ">+"]
            .iter()
            .any(|mark| value.ends_with(&format!(": {mark}")))
            .then_some(indent);
        let item = t.strip_prefix("- ").unwrap_or(t);
        let key = item.split_once(':').filter(|(key, rest)| {
            !key.is_empty()
                && !key.contains(' ')
                && (rest.is_empty() || rest.starts_with(' '))
                && key
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"_-.\"'".contains(&b))
        });
        if key.is_some() {
            keyed += 1;
        }
        if key.is_some() || t.starts_with("- ") {
            yaml += 1;
        }
    }
    // Keys, not only `- ` items: a markdown list is not YAML.
    body >= 10 && yaml * 10 >= body * 6 && keyed * 10 >= body * 4 && indented * 4 >= body
}

fn looks_like_code(lines: &[&str]) -> bool {
    // `grep -n` output carries code but is a list of matches, best read as lines; so is a
    // linter's report that quotes each line it flags under the line that says where it is.
    let grep_like = lines.iter().filter(|l| is_grep_line(l)).count();
    let located = lines.iter().filter(|l| names_a_file_line(l)).count();
    if grep_like * 2 >= lines.len() || located * 4 >= lines.len() {
        return false;
    }
    const STARTS: &[&str] = &[
        "fn ",
        "pub ",
        "use ",
        "impl ",
        "struct ",
        "enum ",
        "let ",
        "def ",
        "class ",
        "import ",
        "from ",
        "function ",
        "const ",
        "var ",
        "return ",
        "if ",
        "if (",
        "for ",
        "for (",
        "while ",
        "else",
        "}",
        "{",
        "//",
        "/*",
        "* ",
        "*/",
        "#include",
        "#define",
        "package ",
        "func ",
        "public ",
        "private ",
        "static ",
        "@",
        "try",
        "catch",
        "switch",
        "case ",
        "elif ",
        "raise ",
        "with ",
        "assert ",
        "yield ",
        "self.",
        "async ",
        "await ",
        "\"\"\"",
        "my ",
        "sub ",
        "our ",
        "local ",
    ];
    // `# …` lines are comments in Perl, Python, shell and Ruby (and headings in markdown,
    // which is told apart elsewhere): they say nothing either way.
    let lines: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| {
            let t = l.trim_start();
            !t.starts_with('#') || t.starts_with("#include") || t.starts_with("#define")
        })
        .collect();
    if lines.len() < 10 {
        return false;
    }
    // A `* ` at the margin is a markdown list's item, unless a block comment is open
    // somewhere (`/*`, whose lines ` * ` continue it).
    let block_comments = lines.iter().any(|l| l.trim_start().starts_with("/*"));
    let codey = lines
        .iter()
        .filter(|l| {
            let t = l.trim();
            let list_item = l.starts_with("* ") && !block_comments;
            // `import 'time' # <class …>`: Python's `-v` trace of what it imported, a
            // quoted name where a statement has a dotted one.
            let import_trace = t.starts_with("import '") && !t.ends_with(';');
            (!list_item && !import_trace && STARTS.iter().any(|s| t.starts_with(s)))
                || t.ends_with('{')
                || t.ends_with(';')
                || t.ends_with("):")
                || is_assignment(t)
        })
        .count();
    codey * 10 >= lines.len() * 4
}

/// Whether `text` is a Python module whose functions are documented at length: its sample
/// windows fall inside docstrings (parameters, examples, notes) more than in code, but it
/// opens as a module does and its `def` and `class` lines, each ending its signature's line
/// as only code does, are many.
fn defines_python(text: &str) -> bool {
    /// Definitions needed, and the share of non-blank lines they must be at least.
    const MIN_DEFINITIONS: usize = 8;
    const MIN_DEFINITION_SHARE: usize = 100;
    // A module opens with its docstring, imports or code; test and type-checker reports
    // that quote definitions open with their own banner.
    let opening = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'));
    let opens_a_module = opening.is_some_and(|l| {
        [
            "\"\"\"", "r\"\"\"", "'''", "import ", "from ", "def ", "class ", "@",
        ]
        .iter()
        .any(|start| l.starts_with(start))
    });
    if !opens_a_module {
        return false;
    }
    let (mut definitions, mut lines) = (0, 0);
    for line in text.lines() {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        lines += 1;
        let t = t.strip_prefix("async ").unwrap_or(t);
        if (t.starts_with("def ") || t.starts_with("class "))
            && (t.ends_with(':') || t.ends_with('(') || t.ends_with(','))
        {
            definitions += 1;
        }
    }
    definitions >= MIN_DEFINITIONS && definitions * MIN_DEFINITION_SHARE >= lines
}

/// `name = value` or `self.name: T = value`: a statement, not prose (which rarely starts with
/// an identifier followed by ` = `).
fn is_assignment(trimmed: &str) -> bool {
    let Some((target, _)) = trimmed.split_once(" = ") else {
        return false;
    };
    !target.is_empty()
        && target
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.:[]' ".contains(&b))
        && target.split_whitespace().count() <= 2
}

/// Whether `line`, at the margin, names a line of a file as a report does: a path, then
/// `line` and its number (`possible bashism in /usr/bin/zdiff line 159 (type):`).
fn names_a_file_line(line: &str) -> bool {
    if line.starts_with(char::is_whitespace) {
        return false;
    }
    let words: Vec<&str> = line.split_whitespace().take(12).collect();
    words.windows(3).any(|w| {
        w[0].contains('/')
            && w[1].eq_ignore_ascii_case("line")
            && w[2].starts_with(|c: char| c.is_ascii_digit())
    })
}

/// `path:line:` at the start of a line, as `grep -n` prints.
fn is_grep_line(line: &str) -> bool {
    let Some((path, rest)) = line.split_once(':') else {
        return false;
    };
    !path.is_empty()
        && !path.contains(' ')
        && rest
            .split_once(':')
            .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

mod markdown;
#[cfg(test)]
mod tests;
