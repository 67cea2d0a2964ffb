//! Files of sections and fields: TOML (`[table]`, `[[array.of.tables]]`), INI, systemd units,
//! lock files. One unit per line; each line's context is the chain that names its record:
//! a continuation line of a multi-line value → its key line → the record's first field (for a
//! repeated `[[table]]`, its name) → the section header.

use super::noise::opaque_share;
use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{self, Doc, Level, Unit};
use crate::methods::extract::query::Query;
use crate::methods::extract::terms::{for_each_word, is_stopword};

/// How many section headers make a file of sections rather than text with a bracketed line.
const MIN_HEADERS: usize = 2;
/// Lines mostly made of digests and blobs score this much lower: they are read only when the
/// query names them exactly.
const OPAQUE_PENALTY: f32 = 1.5;
/// Section headers read as the map of the file.
const HEADER_PRIOR: f32 = 0.5;
/// Fields of a record whose header or name the query names: the query asks about that record.
const NAMED_RECORD_PRIOR: f32 = 2.0;
/// The same when the name is exactly a word of the query (`keyring`, not `keyring-alt`): the
/// query is about that one record, and its own fields are the answer.
const EXACTLY_NAMED_PRIOR: f32 = 5.0;
/// The settings of a file the query names, in a concatenation of files (`systemctl cat`).
const NAMED_FILE_PRIOR: f32 = 3.0;
/// The items of a long value (a record's file list) of an exactly named record.
const NAMED_VALUE_PRIOR: f32 = 2.0;
/// A record's own fields are few and short; the lines of a long multi-line value (a list of
/// file hashes) form a block of their own so that they do not stop the record's fields from
/// pulling each other in.
const OPAQUE_SHARE: f32 = 0.4;

/// Whether the sample `lines` (non-blank) are a file of `[section]` headers and `key = value`
/// or `key: value` fields, with multi-line values and comments between them.
pub(crate) fn looks_like_sections(lines: &[&str]) -> bool {
    let mut headers = 0;
    let mut fields = 0;
    let mut other = 0;
    let mut open = 0i32;
    for line in lines {
        let t = line.trim();
        if open > 0 {
            open += bracket_balance(t);
            fields += 1;
            continue;
        }
        if is_comment(t) {
            continue;
        }
        if section_header(line).is_some() {
            headers += 1;
        } else if let Some(value) = field_value(line) {
            fields += 1;
            open = bracket_balance(value).max(0);
        } else {
            other += 1;
        }
    }
    headers >= MIN_HEADERS && (headers + fields) * 10 >= (headers + fields + other) * 9
}

/// Cuts `text` into one unit per non-blank line, each with its record as context. A record
/// the query names (by its header or its name field) has its fields raised: in a lock file or
/// a manifest the query names the package, and its fields are the answer.
pub(crate) fn build<'a>(text: &'a str, query: Option<&Query>) -> Doc<'a> {
    let mut units: Vec<Unit> = Vec::new();
    let wants_digests = query.is_some_and(asks_for_digests);
    // The open `[[table]]`: its header's name and unit.
    let mut repeated: Option<(&str, usize)> = None;
    let mut header: Option<usize> = None;
    let mut name: Option<usize> = None;
    let mut record_named = Named::No;
    let mut open_key: Option<usize> = None;
    let mut open = 0i32;
    let mut block = 0u32;
    let mut value_block = 0u32;
    // The header of the file the line is in, when the text concatenates files, and whether
    // the query names that file.
    let mut file: Option<usize> = None;
    let mut file_named = false;
    // When the query names some of the files, a section it names (`[Service]`) is one of
    // theirs: the same section of the other files is not what it asks about.
    let names_files = query.is_some_and(|q| {
        text.lines()
            .filter_map(|line| file_header(line.trim()))
            .any(|path| names_file(q, path))
    });
    for span in doc::line_spans(text) {
        let line = &text[span.clone()];
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let index = units.len();
        // Only the items of a long value (a list of file hashes) are repeats of one another:
        // `version = …` in two records are two answers, not a repeat to fold.
        let mut unit = Unit {
            span: span.into(),
            template: None,
            level: doc::level_from_words(line),
            weight: 1,
            ..Unit::default()
        };
        if let Some(path) = file_header(t).filter(|_| open == 0) {
            block += 2;
            file = Some(index);
            file_named = query.is_some_and(|q| names_file(q, path));
            header = None;
            repeated = None;
            name = None;
            record_named = Named::No;
            unit.block = Some(block);
            unit.prior = HEADER_PRIOR + if file_named { NAMED_FILE_PRIOR } else { 0.0 };
            units.push(unit);
            continue;
        }
        if let Some(key) = open_key.filter(|_| open > 0) {
            // A line inside a multi-line value: it hangs under its key.
            open += bracket_balance(t);
            unit.parent = Some(key).into();
            unit.block = Some(value_block);
            unit.template = Some(doc::template_of(line));
            if record_named == Named::Exactly {
                unit.prior += NAMED_VALUE_PRIOR;
            }
        } else if let Some(section) = section_header(line) {
            block += 2;
            header = Some(index);
            unit.block = Some(block);
            // Headers read as the map of the file.
            unit.prior = HEADER_PRIOR;
            let sub_table = repeated.is_some_and(|(table, _)| {
                section.len() > table.len()
                    && section.starts_with(table)
                    && section.as_bytes()[table.len()] == b'.'
            });
            if t.starts_with("[[") {
                repeated = Some((section, index));
                name = None;
                record_named = Named::No;
            } else if sub_table {
                // `[package.dependencies]` after `[[package]]` belongs to that package; its
                // lines are about other packages, so they count as partly named only.
                unit.parent = name.or(repeated.map(|(_, u)| u)).into();
                if record_named != Named::No {
                    record_named = Named::Partly;
                    unit.prior += NAMED_RECORD_PRIOR;
                }
            } else {
                repeated = None;
                name = None;
                record_named = match query {
                    Some(q) if file_named || !names_files => named_by(q, section),
                    _ => Named::No,
                };
                // In a concatenation, a section belongs to its file.
                unit.parent = file.into();
            }
        } else {
            unit.block = Some(block);
            let in_repeated_header = repeated.is_some() && header == repeated.map(|(_, u)| u);
            // Under a `[[table]]` header a field's context is the record's name; under any
            // other header (a sub-table's included) that header, which leads to the name.
            unit.parent = if in_repeated_header {
                name.or(header)
            } else {
                header
            }
            .into();
            if let Some(value) = field_value(line) {
                if in_repeated_header && name.is_none() {
                    // The first field of a repeated table names the record.
                    name = Some(index);
                    record_named = query.map_or(Named::No, |q| named_by(q, value));
                }
                open = bracket_balance(value).max(0);
                if open > 0 {
                    open_key = Some(index);
                    value_block = block + 1;
                }
            }
            unit.prior += match record_named {
                Named::No => 0.0,
                Named::Partly => NAMED_RECORD_PRIOR,
                Named::Exactly => EXACTLY_NAMED_PRIOR,
            };
            if file_named && !is_comment(t) {
                unit.prior += NAMED_FILE_PRIOR;
            }
            if header.is_none() {
                unit.parent = file.into();
            }
        }
        // A digest is noise unless the query asks for the digests of the record it names.
        let asked = record_named == Named::Exactly && wants_digests;
        if !asked && opaque_share(t) >= OPAQUE_SHARE {
            unit.prior -= OPAQUE_PENALTY;
        }
        if unit.level == Level::Error {
            unit.prior += 1.0;
        }
        units.push(unit);
    }
    Doc {
        kind: ContentKind::Config,
        source: text.into(),
        units,
        overview: None,
        noun: "lines",
        fields: Vec::new(),
        fuller: Default::default(),
    }
}

/// Whether the query asks for a hash or checksum.
fn asks_for_digests(query: &Query) -> bool {
    const WORDS: &[&str] = &[
        "hash",
        "digest",
        "checksum",
        "sha",
        "sha1",
        "sha256",
        "sha512",
        "md5",
        "integrity",
    ];
    WORDS.iter().any(|w| query.words.contains_key(*w))
}

/// How a query names a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Named {
    No,
    /// A word of the record's name is a query word (`poetry` of `poetry-core`).
    Partly,
    /// The whole name is a query word or exact term.
    Exactly,
}

/// How `query` names the record whose header or name field is `text`: whether a word of it
/// (split and stemmed as the scorer does) is a query word, and whether all of it is one.
pub(super) fn named_by(query: &Query, text: &str) -> Named {
    let mut buf = String::new();
    let mut words = 0;
    let mut named = 0;
    for_each_word(text, &mut buf, |w| {
        words += 1;
        named += usize::from(!is_stopword(w) && query.words.contains_key(w));
    });
    let bare = text.trim().trim_matches(['"', '\'']).to_ascii_lowercase();
    if (words == 1 && named == 1) || query.exact.contains(&bare) {
        Named::Exactly
    } else if named > 0 || query.mentions(text) {
        Named::Partly
    } else {
        Named::No
    }
}

/// In any text of lines that concatenates files (`head` or `tail` of several, `systemctl
/// cat`), raises the lines of the files the query names by their name or path: a question
/// about `10-hinting.conf` is answered by that file's lines, not by the same settings in the
/// others. Does nothing when fewer than two files are concatenated or none is named.
pub(crate) fn weigh_named_files(doc: &mut Doc<'_>, query: &Query) {
    let headers: Vec<(usize, bool)> = (0..doc.units.len())
        .filter_map(|u| {
            let path = file_header(doc.text(u).trim())?;
            Some((u, names_file(query, path)))
        })
        .collect();
    if headers.len() < 2 || !headers.iter().any(|&(_, named)| named) {
        return;
    }
    for (i, &(start, named)) in headers.iter().enumerate() {
        if !named {
            continue;
        }
        let end = headers
            .get(i + 1)
            .map_or(doc.units.len(), |&(next, _)| next);
        for unit in &mut doc.units[start..end] {
            unit.prior += NAMED_FILE_PRIOR;
        }
    }
}

/// The path a concatenation of files names before each file (`systemctl cat` and
/// `systemd-analyze cat-config` print `# /usr/lib/systemd/system/x.service`, `head` and
/// `tail` of several files `==> x.conf <==`), if the trimmed line `t` is such a header.
fn file_header(t: &str) -> Option<&str> {
    let path = match t.strip_prefix("==>") {
        Some(rest) => rest.strip_suffix("<==")?.trim(),
        None => t.strip_prefix('#')?.trim_start(),
    };
    let plain = path.starts_with('/') || t.starts_with("==>");
    (plain && path.len() > 1 && !path.contains(char::is_whitespace)).then_some(path)
}

/// Whether `query` names the file at `path`: by its name or path as an exact term (a drop-in
/// directory `x.service.d/` belongs to `x.service`), or by every word of its name.
fn names_file(query: &Query, path: &str) -> bool {
    let path = path.to_ascii_lowercase();
    let name = path.rsplit('/').next().unwrap_or(&path);
    let exactly = query.exact.iter().any(|e| {
        e == name
            || e == &path
            || path.contains(&format!("/{e}.d/"))
            || path.ends_with(&format!("/{e}"))
    });
    if exactly {
        return true;
    }
    query.names_every_word(name, false, &mut String::new())
}

/// The name inside a `[section]` or `[[table]]` header at the margin, if `line` is one.
fn section_header(line: &str) -> Option<&str> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let t = line.trim_end();
    let inner = t.strip_prefix('[')?.strip_suffix(']')?;
    let inner = inner
        .strip_prefix('[')
        .and_then(|i| i.strip_suffix(']'))
        .unwrap_or(inner);
    let first = inner.chars().next()?;
    // `[x]` checkboxes, `[1, 2]` values and `[ERROR] …` log prefixes are not headers.
    (inner.len() >= 2 && (first.is_alphabetic() || first == '"' || first == '\'' || first == '_'))
        .then_some(inner)
}

/// The value of a `key = value` or `key: value` field at the margin, if `line` is one.
fn field_value(line: &str) -> Option<&str> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let at = line.find(['=', ':'])?;
    let key = line[..at].trim();
    let plain_key = !key.is_empty()
        && key.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '"' | '\'' | ' ' | '@' | '/')
        })
        && !key.contains("  ");
    plain_key.then(|| &line[at + 1..])
}

fn is_comment(t: &str) -> bool {
    t.starts_with('#') || t.starts_with(';')
}

/// Opening minus closing brackets and braces outside quoted strings.
fn bracket_balance(text: &str) -> i32 {
    let mut balance = 0;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        match quote {
            Some(q) => {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == q {
                    quote = None;
                }
            }
            None => match c {
                '"' | '\'' => quote = Some(c),
                '[' | '{' => balance += 1,
                ']' | '}' => balance -= 1,
                '#' => break,
                _ => {}
            },
        }
    }
    balance
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The head of two records of a real `poetry.lock`.
    const LOCK: &str = r#"[[package]]
name = "cachecontrol"
version = "0.14.3"
description = "httplib2 caching for requests"
optional = false
python-versions = ">=3.9"
files = [
    {file = "cachecontrol-0.14.3-py3-none-any.whl", hash = "sha256:b35e44a3113f17d2a31c1e6b27b9de6d4405f84ae51baa8c1d3cc5b633010cae"},
    {file = "cachecontrol-0.14.3.tar.gz", hash = "sha256:73e7efec4b06b20d9267b441c1f733664f989fb8688391b670ca812d70795d11"},
]

[package.dependencies]
msgpack = ">=0.5.2,<2.0.0"

[[package]]
name = "certifi"
version = "2025.8.3"
description = "Python package for providing Mozilla's CA Bundle."
"#;

    /// Two units of `systemd-analyze cat-config /lib/systemd/system/*.service`, shortened.
    const UNITS: &str = "# /usr/lib/systemd/system/fstrim.service\n\
[Unit]\n\
Description=Discard unused blocks on filesystems from /etc/fstab\n\
\n\
[Service]\n\
Type=oneshot\n\
ExecStart=/sbin/fstrim --listed-in /etc/fstab:/proc/self/mountinfo --verbose --quiet-unsupported\n\
\n\
# /usr/lib/systemd/system/systemd-timesyncd.service\n\
[Unit]\n\
Description=Network Time Synchronization\n\
\n\
[Service]\n\
# Turn off DNSSEC validation for hostname look-ups\n\
Environment=SYSTEMD_NSS_RESOLVE_VALIDATE=0\n\
ExecStart=!!/lib/systemd/systemd-timesyncd\n\
User=systemd-timesync\n";

    #[test]
    fn a_file_the_query_names_leads_a_concatenation() {
        let query = Query::from_hints(&crate::methods::extract::Hints::new().with_query(
            "Which user does systemd-timesyncd.service run as, and what environment does its service set?",
        ))
        .unwrap();
        let doc = build(UNITS, Some(&query));
        let prior = |line: &str| {
            let u = (0..doc.units.len()).find(|&u| doc.text(u) == line).unwrap();
            doc.units[u].prior
        };
        let unit_of = |line: &str| (0..doc.units.len()).find(|&u| doc.text(u) == line).unwrap();
        // The named file's settings outrank the same section of the other file.
        assert!(prior("User=systemd-timesync") > prior("Type=oneshot") + 2.0);
        assert!(prior("Environment=SYSTEMD_NSS_RESOLVE_VALIDATE=0") > prior("Type=oneshot"));
        // A section's context is its file's header.
        let service = unit_of("[Service]");
        assert_eq!(doc.units[service].parent.get(), Some(0));
        assert_eq!(
            file_header("# /proc/<pid>/exe requires this capability"),
            None
        );
        assert_eq!(file_header("==> a.conf <=="), Some("a.conf"));
    }

    fn texts(doc: &Doc<'_>) -> Vec<String> {
        (0..doc.units.len())
            .map(|i| doc.text(i).to_owned())
            .collect()
    }

    #[test]
    fn a_lock_file_is_a_file_of_sections() {
        let lines: Vec<&str> = LOCK.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(looks_like_sections(&lines));
    }

    #[test]
    fn fields_hang_under_the_record_name_and_values_under_their_key() {
        let doc = build(LOCK, None);
        let t = texts(&doc);
        let find = |s: &str| t.iter().position(|x| x.starts_with(s)).unwrap();
        let version = find("version = \"0.14.3\"");
        let name = find("name = \"cachecontrol\"");
        assert_eq!(doc.units[version].parent.get(), Some(name));
        assert_eq!(doc.units[name].parent.get(), Some(0));
        let wheel = find("    {file = \"cachecontrol-0.14.3-py3");
        assert_eq!(doc.units[wheel].parent.get(), Some(find("files = [")));
        // Digests rank low by their shape; the record's own fields do not.
        assert!(doc.units[wheel].prior < 0.0);
        assert!(doc.units[version].prior >= 0.0);
        // A sub-table of a repeated table belongs to its record, and its fields to it.
        let dependencies = find("[package.dependencies]");
        assert_eq!(doc.units[dependencies].parent.get(), Some(name));
        assert_eq!(doc.units[find("msgpack")].parent.get(), Some(dependencies));
        // The next record starts afresh.
        let certifi_version = find("version = \"2025.8.3\"");
        assert_eq!(
            doc.units[certifi_version].parent.get(),
            Some(find("name = \"certifi\""))
        );
    }

    #[test]
    fn the_lines_of_a_record_the_query_names_are_raised() {
        let hints =
            crate::methods::extract::Hints::new().with_query("which version of certifi is locked?");
        let query = Query::from_hints(&hints).unwrap();
        let doc = build(LOCK, Some(&query));
        let t = texts(&doc);
        let find = |s: &str| t.iter().position(|x| x.starts_with(s)).unwrap();
        assert!(
            doc.units[find("version = \"2025.8.3\"")].prior
                > doc.units[find("version = \"0.14.3\"")].prior
        );
        // The field the query names is raised at scoring time, by the settings rule
        // (`score::settings`), not here as well: two boosts counted it twice.
    }

    #[test]
    fn a_record_named_exactly_outranks_one_named_in_part() {
        let hints = crate::methods::extract::Hints::new()
            .with_query("which version of cachecontrol is locked, and its wheel's sha256?");
        let query = Query::from_hints(&hints).unwrap();
        let lock = LOCK.replace("certifi", "cachecontrol-ext");
        let doc = build(&lock, Some(&query));
        let t = texts(&doc);
        let find = |s: &str| t.iter().position(|x| x.starts_with(s)).unwrap();
        assert!(
            doc.units[find("version = \"0.14.3\"")].prior
                > doc.units[find("version = \"2025.8.3\"")].prior
        );
        // The digests of the named record are asked for; they are not noise here.
        assert!(doc.units[find("    {file = \"cachecontrol-0.14.3-py3")].prior > 0.0);
    }

    #[test]
    fn a_systemd_unit_is_a_file_of_sections() {
        // Debian's apt-daily.service.
        let unit = "[Unit]\nDescription=Daily apt download activities\nDocumentation=man:apt(8)\nConditionACPower=true\nAfter=network.target network-online.target systemd-networkd.service NetworkManager.service connman.service\n\n[Service]\nType=oneshot\nExecStartPre=-/usr/lib/apt/apt-helper wait-online\nExecStart=/usr/lib/apt/apt.systemd.daily update\n";
        let lines: Vec<&str> = unit.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(looks_like_sections(&lines));
        let doc = build(unit, None);
        assert_eq!(doc.units[8].parent.get(), Some(5), "{:?}", texts(&doc));
    }

    #[test]
    fn markdown_and_logs_are_not_sections() {
        let md = [
            "# Title",
            "[link]: https://example.com",
            "Some text here.",
            "- [x] done",
        ];
        assert!(!looks_like_sections(&md));
        let log = [
            "[INFO] started",
            "[ERROR] failed to bind",
            "[INFO] retrying",
        ];
        assert!(!looks_like_sections(&log));
    }

    #[test]
    fn a_file_the_query_names_leads_any_concatenation_of_lines() {
        // `head` of several XML files: not a file of sections, read as lines.
        let text = "==> /etc/fonts/conf.d/10-hinting.conf <==\n<match target=\"pattern\">\n  <edit name=\"hintstyle\" mode=\"append\"><const>hintslight</const></edit>\n</match>\n\
==> /etc/fonts/conf.d/11-lcdfilter.conf <==\n<match target=\"pattern\">\n  <edit mode=\"append\" name=\"lcdfilter\"><const>lcddefault</const></edit>\n</match>\n";
        let query = Query::from_hints(
            &crate::methods::extract::Hints::new()
                .with_query("Which LCD filter does 11-lcdfilter.conf set?"),
        )
        .unwrap();
        let mut doc = crate::methods::extract::kinds::lines::build(
            text,
            crate::methods::extract::kinds::lines::Style::Text,
        );
        weigh_named_files(&mut doc, &query);
        let prior = |needle: &str| {
            let u = (0..doc.units.len())
                .find(|&u| doc.text(u).contains(needle))
                .unwrap();
            doc.units[u].prior
        };
        assert!(prior("lcddefault") >= prior("hintslight") + NAMED_FILE_PRIOR);
        // One file alone is no concatenation.
        let mut one = crate::methods::extract::kinds::lines::build(
            &text[..text.find("==> /etc/fonts/conf.d/11").unwrap()],
            crate::methods::extract::kinds::lines::Style::Text,
        );
        let before: Vec<f32> = one.units.iter().map(|u| u.prior).collect();
        weigh_named_files(&mut one, &query);
        assert_eq!(
            before,
            one.units.iter().map(|u| u.prior).collect::<Vec<_>>()
        );
    }
}
