//! Configuration files of nested brace blocks (`server default { listen { … } }` in
//! FreeRADIUS, `server { location /api { … } }` in nginx, CSS rules): a block's header line is
//! its identity, and the settings right inside it are its fields. Read line by line, a
//! setting such as `idle_timeout = 30` has no word of the query in it and loses to the long
//! comments around it; here the block the query names (every word of its header is a query
//! word: `Post-Auth-Type REJECT`, `accounting`, `limit` for "limits") hands its own settings
//! to the ranking as one group, without its comments and without the blocks nested in it,
//! which are named or not on their own.

use super::super::query::Query;
use super::super::terms::for_each_word;

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

/// The blocks of `lines` (trimmed lines of a file; `comment[i]` says whether line `i` is a
/// comment) that `query` names, in the order they open.
pub(crate) fn named_blocks(lines: &[&str], comment: &[bool], query: &Query) -> Vec<NamedBlock> {
    // Open blocks, innermost last: the index into `found` of a named one, or `None`.
    let mut open: Vec<Option<usize>> = Vec::new();
    let mut found: Vec<NamedBlock> = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if comment.get(i).copied().unwrap_or(false) || line.is_empty() {
            continue;
        }
        if line.starts_with('}') {
            if let Some(Some(block)) = open.pop() {
                found[block].close = Some(i);
            }
            // `} else {` closes one block and opens another.
            if line.len() > 1 && line.ends_with('{') {
                open.push(None);
            }
            continue;
        }
        if let Some(Some(block)) = open.last() {
            found[*block].settings.push(i);
        }
        if !line.ends_with('{') || line.matches('{').count() != 1 {
            continue;
        }
        let named = header_name(line).is_some_and(|name| names(name, query));
        if named {
            found.push(NamedBlock {
                header: i,
                ..NamedBlock::default()
            });
            open.push(Some(found.len() - 1));
        } else {
            open.push(None);
        }
    }
    found
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
    let mut buf = String::new();
    let mut words = 0;
    let mut all = true;
    for_each_word(name, &mut buf, |w| {
        words += 1;
        all &= query.word_index(w).is_some();
    });
    words > 0 && all
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
}
