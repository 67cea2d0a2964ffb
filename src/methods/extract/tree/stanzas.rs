//! RFC 822 stanzas (`dpkg -s`, `apt show`, `apt-cache show`, `pip show`, Debian control
//! files): blocks of `Key: value` lines at the margin, separated by blank lines (or `---`, as
//! `pip show` separates packages), a value continued on indented lines. Each block is a record
//! named by its first field. Blocks of `Key = value` lines (`7z l -slt`, whose keys have spaces:
//! `Packed Size = 566`) are read the same way, after a short banner, and so are blocks of keys
//! padded to one column of values (`linkchecker -v`: `URL        \`a.html'`, `Parent URL file:…`).

use std::collections::HashMap;

use super::records::{Layout, LineField, LineRecord, LineRecords, trimmed};
use crate::methods::extract::doc;

/// The share of non-blank lines (in percent) that may be neither a field nor a continuation
/// (a stray note between stanzas) for the text still to read as stanzas.
const MAX_OTHER_SHARE: usize = 5;
/// The share of records (in percent) that must start with the same key (`Package`, `Name`):
/// a list of records of one kind, not a few sections of anything.
const MIN_SAME_FIRST_KEY: usize = 80;
/// The share of records (in percent) that must start with one of two keys, when no one key
/// starts most of them; each of the two starts at least [`MIN_KIND_RECORDS`].
const MIN_TWO_KINDS_SHARE: usize = 90;
/// The records each of those two keys must start at least.
const MIN_KIND_RECORDS: usize = 4;
/// A key longer than this is a sentence with a colon, not a field name.
const MAX_KEY_BYTES: usize = 40;
/// Lines of a banner (a program's name and version, what it lists) that may come before the
/// first `Key = value` stanza.
const MAX_BANNER_LINES: usize = 12;
/// `Key = value` lines are a list of records only with at least this many blocks: one block of
/// them is a flat configuration (`sysctl -a`), read as lines.
const MIN_EQUALS_RECORDS: usize = 3;
/// A padded key is this long at most, with the spaces that pad it: `Parent URL `.
const MAX_PADDED_KEY: usize = 24;
/// Keys padded to one column of values make records only with at least this many blocks.
const MIN_PADDED_RECORDS: usize = 8;

/// How a stanza's lines part a key from its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Separator {
    /// `Key: value`, the key one word.
    Colon,
    /// `Key = value`, the key words apart by single spaces.
    Equals,
    /// `Key   value`, the key words apart by single spaces, padded with spaces to the column
    /// where every value starts (a key as long as the padding is followed by one space).
    Padded(usize),
}

/// The stanzas of `text` as records, or `None` when `text` is not a list of stanzas.
/// Linear, and never fails: it gives up instead.
pub(crate) fn parse(text: &str) -> Option<LineRecords> {
    parse_with(text, Separator::Colon)
        .or_else(|| {
            parse_with(text, Separator::Equals)
                .filter(|list| list.records.len() >= MIN_EQUALS_RECORDS)
        })
        .or_else(|| {
            let lines: Vec<&str> = text.lines().take(MAX_BANNER_LINES * 10).collect();
            parse_with(text, Separator::Padded(value_column(&lines)?))
                .filter(|list| list.records.len() >= MIN_PADDED_RECORDS)
        })
}

/// The column where the values of padded keys start: the one most lines of `lines` pad a
/// key to with two spaces or more, when that is most of the lines at the margin after a short
/// banner.
fn value_column(lines: &[&str]) -> Option<usize> {
    let padded_to = |line: &str| {
        let key_end = line.find("  ")?;
        let column = key_end + line[key_end..].find(|c: char| c != ' ')?;
        let key = &line[..key_end];
        (column <= MAX_PADDED_KEY && plain_key(key, ' ')).then_some(column)
    };
    let mut columns: Vec<usize> = lines.iter().filter_map(|l| padded_to(l)).collect();
    columns.sort_unstable();
    let (column, count) = columns
        .chunk_by(|a, b| a == b)
        .map(|run| (run[0], run.len()))
        .max_by_key(|&(_, count)| count)?;
    let at_margin = lines
        .iter()
        .skip(MAX_BANNER_LINES)
        .filter(|l| !l.trim().is_empty() && !l.starts_with([' ', '\t']))
        .count();
    (count * 2 >= at_margin.max(1) && count >= MIN_PADDED_RECORDS).then_some(column)
}

fn parse_with(text: &str, separator: Separator) -> Option<LineRecords> {
    let mut records: Vec<LineRecord> = Vec::new();
    let mut open: Option<LineRecord> = None;
    let (mut lines, mut other) = (0usize, 0usize);
    for span in doc::lines(text) {
        let line = &text[span.clone()];
        let t = line.trim();
        if t.is_empty() || t == "---" {
            records.extend(open.take());
            continue;
        }
        lines += 1;
        if line.starts_with([' ', '\t']) {
            // A continuation line; outside a field it is a stray line.
            match open.as_mut().and_then(|r| r.fields.last_mut()) {
                Some(field) => field.more.push(span),
                None => other += 1,
            }
        } else if let Some((key_end, value_start)) = field_parts(line, separator) {
            let field = LineField {
                key: span.start..span.start + key_end,
                value: trimmed(text, span.start + value_start..span.end),
                line: span,
                more: Vec::new(),
            };
            open.get_or_insert_with(LineRecord::default)
                .fields
                .push(field);
        } else if !t.starts_with('#') {
            other += 1;
        }
    }
    records.extend(open);
    if lines == 0 || records.is_empty() || other * 100 > lines * MAX_OTHER_SHARE {
        return None;
    }
    of_few_kinds(text, &records).then_some(LineRecords {
        layout: Layout::Lines,
        header: None,
        records,
        footer: None,
    })
}

/// Whether `records` are a list of records of one kind, or of two kinds: most start with the
/// same key (`Package`), or nearly all with one of two keys and each of them often, as a
/// Debian copyright file's `Files` stanzas and the `License` stanzas after them. A few sections
/// of anything start with keys of their own.
fn of_few_kinds(text: &str, records: &[LineRecord]) -> bool {
    // Counted in a map: a text of many stanzas could start each with a key of its own.
    let mut by_key: HashMap<&str, usize> = HashMap::new();
    for record in records {
        *by_key
            .entry(&text[record.fields[0].key.clone()])
            .or_default() += 1;
    }
    let (mut first, mut second) = (0, 0);
    for &count in by_key.values() {
        if count > first {
            (first, second) = (count, first);
        } else if count > second {
            second = count;
        }
    }
    let n = records.len();
    first * 100 >= n * MIN_SAME_FIRST_KEY
        || (second >= MIN_KIND_RECORDS && (first + second) * 100 >= n * MIN_TWO_KINDS_SHARE)
}

/// Whether the sample `lines` (non-blank) start like stanzas: the first line a `Key: value`
/// field, and nearly all lines fields or continuation lines; or, after a banner of a few
/// lines, nearly all the rest `Key = value` fields.
pub(crate) fn starts_like(lines: &[&str]) -> bool {
    let fits = |separator: Separator, l: &&str| {
        l.starts_with([' ', '\t']) || field_parts(l, separator).is_some() || *l == "---"
    };
    let mostly_fields = |separator: Separator, lines: &[&str]| {
        lines.iter().filter(|l| fits(separator, l)).count() * 100
            >= lines.len() * (100 - MAX_OTHER_SHARE)
    };
    if lines
        .first()
        .is_some_and(|l| field_parts(l, Separator::Colon).is_some())
    {
        return mostly_fields(Separator::Colon, lines);
    }
    let after_banner = |separator: Separator| {
        let banner = lines
            .iter()
            .take(MAX_BANNER_LINES + 1)
            .position(|l| field_parts(l, separator).is_some());
        banner.is_some_and(|b| b <= MAX_BANNER_LINES && mostly_fields(separator, &lines[b..]))
    };
    after_banner(Separator::Equals)
        || value_column(lines).is_some_and(|column| after_banner(Separator::Padded(column)))
}

/// Where the key of a field line at the margin ends and its value starts, if the line is one.
/// `Key: value`: a key of letters, digits and `-_.` (no spaces: `Note that: …` is prose), then
/// `:` and a space or the end of the line (`http://…` is not a field). `Key = value`: such
/// words apart by single spaces (`Packed Size`), then ` =` and a space or the end of the line.
fn field_parts(line: &str, separator: Separator) -> Option<(usize, usize)> {
    let (key_end, value_start) = match separator {
        Separator::Colon => {
            let colon = line.find(':')?;
            (colon, colon + 1)
        }
        Separator::Equals => {
            let equals = line.find(" =")?;
            (equals, equals + 2)
        }
        Separator::Padded(column) => {
            let padded = line.get(..column)?;
            let value = line[column..].chars().next()?;
            if !padded.ends_with(' ') || value == ' ' || value == '\t' {
                return None;
            }
            let key = padded.trim_end_matches(' ');
            return plain_key(key, ' ').then_some((key.len(), column));
        }
    };
    let key = &line[..key_end];
    let after = line[value_start..].chars().next();
    let plain = match separator {
        Separator::Colon => plain_key(key, '\0'),
        _ => plain_key(key, ' '),
    };
    (plain && after.is_none_or(|c| c == ' ' || c == '\t')).then_some((key_end, value_start))
}

/// Whether `key` is a field's name: words of letters, digits and `-_.`, apart by `between`
/// (one space), the first starting with a letter, not too long.
fn plain_key(key: &str, between: char) -> bool {
    let word = |w: &str| {
        !w.is_empty()
            && w.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    key.len() <= MAX_KEY_BYTES
        && key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key.split(between).all(word)
}

#[cfg(test)]
pub(in crate::methods::extract) mod tests {
    use super::*;

    /// Two stanzas of `dpkg -s` on Debian 12, as printed.
    pub(in crate::methods::extract::tree) const DPKG: &str = "Package: zlib1g\nStatus: install ok installed\nPriority: optional\nSection: libs\nInstalled-Size: 168\nMaintainer: Mark Brown <broonie@debian.org>\nArchitecture: amd64\nMulti-Arch: same\nSource: zlib\nVersion: 1:1.2.13.dfsg-1\nProvides: libz1\nDepends: libc6 (>= 2.14)\nBreaks: libxml2 (<< 2.7.6.dfsg-2), texlive-binaries (<< 2009-12)\nConflicts: zlib1 (<= 1:1.0.4-7)\nDescription: compression library - runtime\n zlib is a library implementing the deflate compression method found\n in gzip and PKZIP.  This package includes the shared library.\nHomepage: http://zlib.net/\n\nPackage: openssl\nStatus: install ok installed\nPriority: optional\nSection: utils\nInstalled-Size: 2303\nMaintainer: Debian OpenSSL Team <pkg-openssl-devel@alioth-lists.debian.net>\nArchitecture: amd64\nVersion: 3.0.17-1~deb12u2\nDepends: libc6 (>= 2.34), libssl3 (>= 3.0.9)\nSuggests: ca-certificates\nConffiles:\n /etc/ssl/openssl.cnf 6b4bc5ba4a8b2a4d7a4d37a7a1b4d4a6\nDescription: Secure Sockets Layer toolkit - cryptographic utility\n This package is part of the OpenSSL project's implementation of the SSL\n and TLS cryptographic protocols for secure communication over the\n Internet.\n .\n It contains the general-purpose command line binary /usr/bin/openssl,\n useful for cryptographic operations such as:\n  * creating RSA, DH, and DSA key parameters;\nHomepage: https://www.openssl.org/\n\n";

    #[test]
    fn dpkg_status_stanzas_are_records_of_fields() {
        let list = parse(DPKG).unwrap();
        assert_eq!(list.records.len(), 2);
        let value = list.to_value(DPKG);
        assert_eq!(value[1]["Version"], "3.0.17-1~deb12u2");
        assert_eq!(value[0]["Installed-Size"], "168");
        assert!(value[1]["Description"].as_str().unwrap().contains("\n."));
        assert_eq!(value[1]["Conffiles"].as_str().unwrap().lines().count(), 2);
        // Every field keeps its own source line.
        let field = &list.records[1].fields[7];
        assert_eq!(&DPKG[field.line.clone()], "Version: 3.0.17-1~deb12u2");
    }

    #[test]
    fn key_equals_value_stanzas_after_a_banner_are_records() {
        // `7z l -slt` of a jar (p7zip 16.02), cut to its banner and three entries.
        let mut text = String::from(
            "7-Zip [64] 16.02 : Copyright (c) 1999-2016 Igor Pavlov : 2016-05-21\n\
             p7zip Version 16.02 (locale=C.UTF-8,Utf16=on,HugeFiles=on,64 bits)\n\n\
             Scanning the drive for archives:\n1 file, 875373 bytes (855 KiB)\n\n\
             Listing archive: guice.jar\n\n--\nPath = guice.jar\nType = zip\n\
             Physical Size = 875373\n\n----------\n",
        );
        // The banner is a few lines among the hundreds of an archive's entries.
        for i in 0..30 {
            let (path, size) = match i {
                7 => (
                    "com/google/inject/internal/InjectorImpl.class".to_owned(),
                    39014,
                ),
                _ => (format!("com/google/inject/Class{i}.class"), 1000 + i),
            };
            text.push_str(&format!(
                "Path = {path}\nFolder = -\nSize = {size}\nPacked Size = 566\n\
                 Modified = 2021-01-19 15:16:46\nCreated =\nCRC = D52DB78D\nMethod = Deflate\n\n"
            ));
        }
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(starts_like(&lines));
        let list = parse(&text).unwrap();
        assert_eq!(list.records.len(), 31);
        let value = list.to_value(&text);
        assert_eq!(value[0]["Physical Size"], "875373");
        assert_eq!(value[8]["Size"], "39014");
        assert_eq!(value[2]["Packed Size"], "566");
        assert_eq!(value[1]["Created"], "");
        // One block of settings is a flat configuration, not a list of records.
        let sysctl = "net.core.somaxconn = 4096\nnet.ipv4.tcp_syncookies = 1\nvm.swappiness = 60\n";
        assert!(parse(sysctl).is_none());
        // A key is words of a name's letters: a call or an index is no key.
        assert!(field_parts("total(x) = 3", Separator::Equals).is_none());
        assert!(field_parts("Packed Size = 566", Separator::Equals).is_some());
    }

    /// `linkchecker -v` output: a banner, then one block per link of keys padded to the column
    /// of their values, `Parent URL` one space short of the others.
    pub(in crate::methods::extract) fn linkchecker_report(links: usize, broken: usize) -> String {
        let mut text = String::from(
            "LinkChecker 10.2.1\nCopyright (C) 2000-2016 Bastian Kleineidam\n\
             LinkChecker comes with ABSOLUTELY NO WARRANTY!\n\n\
             Start checking at 2026-11-29 06:46:47+000\n\n",
        );
        for i in 0..links {
            let result = if i == broken {
                format!(
                    "Error: URLError: <urlopen error [Errno 2] No such file or directory: \
                     '/srv/hb/sect.page{i}.html'>"
                )
            } else if i % 3 == 0 {
                "Valid: filtered".to_owned()
            } else {
                "Valid".to_owned()
            };
            text.push_str(&format!(
                "URL        `sect.page{i}.html'\nName       `{i}. The page about Debian'\n\
                 Parent URL file:///srv/hb/chapter{}.html, line {}, col {}\n\
                 Real URL   file:///srv/hb/sect.page{i}.html\nCheck time 0.001 seconds\n\
                 Info       The URL is outside of the domain filter, checked only\n\
                 \x20          syntax.\nResult     {result}\n\n",
                i % 7,
                20 + i,
                100 + i * 13,
            ));
        }
        text.push_str(
            "Statistics:\nDownloaded: 1.2MB.\n\nThat's it. 40 links in 40 URLs checked.\n",
        );
        text
    }

    #[test]
    fn keys_padded_to_a_column_of_values_are_stanzas() {
        let text = linkchecker_report(40, 17);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        assert!(starts_like(&lines));
        let list = parse(&text).expect("stanzas");
        assert_eq!(list.records.len(), 40);
        let value = list.to_value(&text);
        assert_eq!(
            value[17]["Parent URL"],
            "file:///srv/hb/chapter3.html, line 37, col 321"
        );
        assert!(
            value[17]["Result"]
                .as_str()
                .unwrap()
                .starts_with("Error: URLError")
        );
        assert!(value[17]["Info"].as_str().unwrap().ends_with("syntax."));
        // Aligned words of prose or a table's cells are no padded keys.
        let prose =
            "Some  text with  two spaces\nand  more of it  here\n\nNothing  here\n".repeat(10);
        assert!(parse(&prose).is_none());
    }

    #[test]
    fn pip_show_separates_its_stanzas_with_dashes() {
        // `pip show pip setuptools` (pip 23.0.1).
        let text = "Name: pip\nVersion: 23.0.1\nSummary: The PyPA recommended tool for installing Python packages.\nHome-page: https://pip.pypa.io/\nLicense: MIT\nLocation: /usr/lib/python3/dist-packages\nRequires: \nRequired-by: \n---\nName: setuptools\nVersion: 66.1.1\nSummary: Easily download, build, install, upgrade, and uninstall Python packages\nLicense: \nRequires: \n";
        let value = parse(text).unwrap().to_value(text);
        assert_eq!(value[1]["Version"], "66.1.1");
        assert_eq!(value[0]["Home-page"], "https://pip.pypa.io/");
    }

    #[test]
    fn a_copyright_files_stanzas_of_two_kinds_are_records() {
        // A machine-readable Debian copyright file: a header, `Files` stanzas, then the
        // `License` stanzas their short names refer to.
        let mut text = String::from(
            "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n\
             Upstream-Name: widget\n\n",
        );
        for (i, license) in ["MIT", "BSD-3-clause", "Zlib", "MIT", "Apache-2.0"]
            .iter()
            .enumerate()
        {
            text.push_str(&format!(
                "Files: src/part{i}/*\nCopyright: 2019 Some Author {i}\n           2020 Another One\n\
                 License: {license}\n\n"
            ));
        }
        for license in ["MIT", "BSD-3-clause", "Zlib", "Apache-2.0"] {
            text.push_str(&format!(
                "License: {license}\n Permission is granted under these terms.\n .\n \
                 The full text follows here.\n\n"
            ));
        }
        let list = parse(&text).unwrap();
        assert_eq!(list.records.len(), 10);
        let value = list.to_value(&text);
        assert_eq!(value[3]["License"], "Zlib");
        assert!(
            value[3]["Copyright"]
                .as_str()
                .unwrap()
                .contains("Another One")
        );
    }

    #[test]
    fn prose_and_mixed_blocks_are_not_stanzas() {
        assert!(parse("Note that: this is prose.\nIt goes on and on.\n\nMore: text\n").is_none());
        let mixed =
            "Package: a\nVersion: 1\n\nName: b\nSize: 2\n\nTitle: c\n\nUser: d\n\nHost: e\n";
        assert!(parse(mixed).is_none());
        assert!(parse("").is_none());
    }
}
