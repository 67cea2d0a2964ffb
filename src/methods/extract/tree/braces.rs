//! Configuration files of nested brace blocks (`server default { listen { … } }` in
//! FreeRADIUS, `server { location /api { … } }` in nginx, CSS rules): a block's header line is
//! its identity, and the settings right inside it are its fields. Read line by line, a
//! setting such as `idle_timeout = 30` has no word of the query in it and loses to the long
//! comments around it; here the block the query names (every word of its header is a query
//! word: `Post-Auth-Type REJECT`, `accounting`, `limit` for "limits") hands its own settings
//! to the ranking as one group, without its comments and without the blocks nested in it,
//! which are named or not on their own.

use super::super::doc::Doc;
use super::super::kinds::lines::is_definition;
use super::super::query::Query;

/// Words that open a control block, not a named one (`if (…) {`, `else {`).
const CONTROL_WORDS: &[&str] = &[
    "if", "else", "elif", "elsif", "for", "foreach", "while", "do", "switch", "case", "try",
    "catch", "finally", "match", "loop", "unless", "return",
];

/// One block the query names: its header line, its own setting lines (not comments, not
/// lines of blocks nested in it) and its closing line, as indices into the lines given.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct NamedBlock {
    /// The line that opens the block (`listen {`).
    pub(crate) header: usize,
    /// The block's own settings, in order.
    pub(crate) settings: Vec<usize>,
    /// The line that closes the block (`}`), when the text has one.
    pub(crate) close: Option<usize>,
}

impl NamedBlock {
    /// Every line of the group: header, settings and closing line.
    pub(crate) fn lines(&self) -> impl Iterator<Item = usize> + '_ {
        std::iter::once(self.header)
            .chain(self.settings.iter().copied())
            .chain(self.close)
    }
}

/// What one trimmed line is in a file of blocks.
#[derive(Debug, PartialEq, Eq)]
enum Line<'a> {
    /// Opens a block: `name {`, `<Plugin df>`; with the block's name when it is a plain header.
    Open(Option<&'a str>),
    /// Closes the innermost block: `}`, `</Plugin>`; `} else {` also opens an unnamed one.
    Close { reopens: bool },
    /// A setting, or anything else.
    Other,
}

fn classify(line: &str) -> Line<'_> {
    if let Some(rest) = line.strip_prefix('}') {
        return Line::Close {
            reopens: rest.trim_end().ends_with('{'),
        };
    }
    if line.starts_with("</") && line.ends_with('>') && line.matches('<').count() == 1 {
        return Line::Close { reopens: false };
    }
    if let Some(inner) = line.strip_prefix('<').and_then(|l| l.strip_suffix('>')) {
        // An Apache-style section (`<Plugin df>`, `<VirtualHost *:80>`), not a
        // comment, a declaration or an element closed on its line.
        let element = inner.starts_with(|c: char| c.is_ascii_alphabetic())
            && !inner.ends_with('/')
            && !inner.contains(['<', '>']);
        // A section is named by its argument; a bare tag or one with attributes
        // (`<plugin>`, `<dependency scope="test">`) is an XML element, a type, not a name.
        let section = element && inner.contains(char::is_whitespace) && !inner.contains('=');
        return match (element, section) {
            (_, true) => Line::Open(Some(inner.trim())),
            (true, false) => Line::Open(None),
            _ => Line::Other,
        };
    }
    if line.ends_with('{') && line.matches('{').count() == 1 {
        return Line::Open(header_name(line));
    }
    Line::Other
}

/// Whether `lines` (trimmed; `comment[i]` says whether line `i` is a comment) are a
/// configuration of blocks: it has blocks, and more of them open with a plain header
/// (`listen {`, `<Plugin df>`) than with anything else (`fn main() {`, `if (x) {`).
pub(crate) fn is_configuration(lines: &[&str], comment: &[bool]) -> bool {
    let (mut plain, mut other) = (0usize, 0usize);
    for (i, line) in lines.iter().enumerate() {
        if comment.get(i).copied().unwrap_or(false) {
            continue;
        }
        match classify(line) {
            Line::Open(Some(name)) if !is_definition(name) => plain += 1,
            Line::Open(_) | Line::Close { reopens: true } => other += 1,
            _ => {}
        }
    }
    plain > other
}

/// The blocks of `lines` (trimmed lines of a file; `comment[i]` says whether line `i` is a
/// comment) that `query` names, in the order they open. A block the text never closes is
/// left out: where it ends is not known.
pub(crate) fn named_blocks(lines: &[&str], comment: &[bool], query: &Query) -> Vec<NamedBlock> {
    // Open blocks, innermost last: the index into `found` of a named one, or `None`.
    let mut open: Vec<Option<usize>> = Vec::new();
    let mut found: Vec<NamedBlock> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if comment.get(i).copied().unwrap_or(false) || line.is_empty() {
            continue;
        }
        let class = classify(line);
        if let Line::Close { reopens } = class {
            if let Some(Some(block)) = open.pop() {
                found[block].close = Some(i);
            }
            if reopens {
                open.push(None);
            }
            continue;
        }
        if let Some(Some(block)) = open.last() {
            found[*block].settings.push(i);
        }
        if let Line::Open(name) = class {
            if name.is_some_and(|name| names(name, query)) {
                found.push(NamedBlock {
                    header: i,
                    ..NamedBlock::default()
                });
                open.push(Some(found.len() - 1));
            } else {
                open.push(None);
            }
        }
    }
    found.retain(|block| block.close.is_some());
    found
}

/// When `doc` (one unit per line; `comment[u]` says whether unit `u` is a comment) is a
/// configuration of blocks, adds `prior` to the header, settings and closing line of every
/// block `query` names, each block one group of the ranking.
pub(crate) fn weigh_named_blocks(doc: &mut Doc<'_>, comment: &[bool], query: &Query, prior: f32) {
    let lines: Vec<&str> = (0..doc.units.len()).map(|u| doc.text(u).trim()).collect();
    if !is_configuration(&lines, comment) {
        return;
    }
    let found = named_blocks(&lines, comment, query);
    let first_block = doc.next_block();
    for (id, block) in (first_block..).zip(&found) {
        for u in block.lines() {
            doc.units[u].prior += prior;
            doc.units[u].block = Some(id);
        }
    }
}

/// The name of a block header line (`Auth-Type MS-CHAP {` → `Auth-Type MS-CHAP`): words,
/// paths and quoted strings before a final `{`. `None` for assignments (`x = {`), calls and
/// conditions (anything with `(`, `=` or `;`), control keywords and a bare `{`.
pub(crate) fn header_name(line: &str) -> Option<&str> {
    let name = line.strip_suffix('{')?.trim_end();
    let first = name.split_whitespace().next()?;
    let plain = name
        .chars()
        .all(|c| c.is_alphanumeric() || c.is_whitespace() || "-_.:/*\"'@~^$%+#<>[]!,".contains(c));
    (plain && !name.ends_with(':') && !CONTROL_WORDS.contains(&first)).then_some(name)
}

/// Whether every word of the block name `name` is a query word (or a query word's root), or
/// the name holds one of the query's exact terms.
fn names(name: &str, query: &Query) -> bool {
    if query.mentions(name) {
        return true;
    }
    query.names_every_word(name, true, &mut String::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;

    /// A few lines of FreeRADIUS's `sites-available/default`.
    const SITE: &str = "server default {\n\
listen {\n\
\t#  Type of packets to listen for.\n\
\ttype = auth\n\
\tlimit {\n\
\t      #  Setting this to 0 means \"no limit\"\n\
\t      max_connections = 16\n\
\t      idle_timeout = 30\n\
\t}\n\
}\n\
authorize {\n\
\tif (ok || updated) {\n\
\t\tupdate control {\n\
\t\t}\n\
\t}\n\
\tfiles\n\
}\n\
accounting {\n\
\tdetail\n\
\tattr_filter.accounting_response\n\
}\n\
}\n";

    fn blocks(text: &str, query: &str) -> Vec<NamedBlock> {
        let query = Query::from_hints(&Hints::new().with_query(query)).unwrap();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        let comment: Vec<bool> = lines.iter().map(|l| l.starts_with('#')).collect();
        named_blocks(&lines, &comment, &query)
    }

    #[test]
    fn the_named_block_keeps_its_own_settings() {
        let found = blocks(
            SITE,
            "What connection limits does the listener set, and which modules run in accounting?",
        );
        let headers: Vec<usize> = found.iter().map(|b| b.header).collect();
        // `listen` (a root of "listener"), `limit` and `accounting`; not `server default`.
        assert_eq!(headers, [1, 4, 17]);
        // The listener's own setting, not its comment nor its nested block's settings.
        assert_eq!(found[0].settings, [3, 4]);
        assert_eq!(found[0].close, Some(9));
        assert_eq!(found[1].settings, [6, 7]);
        assert_eq!(found[2].lines().collect::<Vec<_>>(), [17, 18, 19, 20]);
    }

    #[test]
    fn conditions_and_assignments_are_not_named_blocks() {
        assert_eq!(header_name("if (ok || updated) {"), None);
        assert_eq!(header_name("else {"), None);
        assert_eq!(header_name("const x = {"), None);
        assert_eq!(header_name("{"), None);
        assert_eq!(
            header_name("Auth-Type MS-CHAP {"),
            Some("Auth-Type MS-CHAP")
        );
        assert_eq!(header_name("location /api/ {"), Some("location /api/"));
        // A block the query does not name is not reported, a control block never.
        assert!(blocks(SITE, "which files are updated?").is_empty());
    }

    /// A few lines of collectd's example `collectd.conf`.
    const COLLECTD: &str = "LoadPlugin df\n\
<Plugin syslog>\n\
\tLogLevel info\n\
</Plugin>\n\
<Plugin df>\n\
#\tDevice \"/dev/sda1\"\n\
\tFSType rootfs\n\
\tFSType sysfs\n\
\tIgnoreSelected true\n\
</Plugin>\n";

    #[test]
    fn apache_style_sections_are_blocks_too() {
        let found = blocks(COLLECTD, "Which file systems does the df plugin ignore?");
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].lines().collect::<Vec<_>>(), [4, 6, 7, 8, 9]);
        let trimmed =
            |text: &'static str| -> Vec<&'static str> { text.lines().map(str::trim).collect() };
        let no_comments = [false; 16];
        assert!(is_configuration(&trimmed(COLLECTD), &no_comments));
        assert!(is_configuration(&trimmed(SITE), &no_comments));
        let rust = "fn main() {\n    if x {\n    }\n}\nimpl A {\n}\n";
        assert!(!is_configuration(&trimmed(rust), &no_comments));
        // Markup closed on its line, comments and declarations open nothing.
        assert_eq!(classify("<a href=\"x\">y</a>"), Line::Other);
        assert_eq!(classify("<!-- note -->"), Line::Other);
        assert_eq!(classify("<br/>"), Line::Other);
        // XML read as lines (a POM) is elements, not sections.
        let pom = "<plugins>\n<plugin>\n<artifactId>x</artifactId>\n</plugin>\n</plugins>\n";
        assert!(!is_configuration(&trimmed(pom), &no_comments));
        assert_eq!(classify("<dependency scope=\"test\">"), Line::Open(None));
    }
}
