//! RFC 822 stanzas (`dpkg -s`, `apt show`, `apt-cache show`, `pip show`, Debian control
//! files): blocks of `Key: value` lines at the margin, separated by blank lines (or `---`, as
//! `pip show` separates packages), a value continued on indented lines. Each block is a record
//! named by its first field.

use super::records::{Layout, LineField, LineRecord, LineRecords, trimmed};
use crate::methods::extract::doc;

/// The share of non-blank lines (in percent) that may be neither a field nor a continuation
/// (a stray note between stanzas) for the text still to read as stanzas.
const MAX_OTHER_SHARE: usize = 5;
/// The share of records (in percent) that must start with the same key (`Package`, `Name`):
/// a list of records of one kind, not a few sections of anything.
const MIN_SAME_FIRST_KEY: usize = 80;
/// A key longer than this is a sentence with a colon, not a field name.
const MAX_KEY_BYTES: usize = 40;

/// The stanzas of `text` as records, or `None` when `text` is not a list of stanzas.
/// Linear, and never fails: it gives up instead.
pub(crate) fn parse(text: &str) -> Option<LineRecords> {
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
        } else if let Some(colon) = field_colon(line) {
            let field = LineField {
                key: span.start..span.start + colon,
                value: trimmed(text, span.start + colon + 1..span.end),
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
    if lines == 0 || other * 100 > lines * MAX_OTHER_SHARE {
        return None;
    }
    let first_key = |r: &LineRecord| &text[r.fields[0].key.clone()];
    let same = records
        .iter()
        .filter(|r| first_key(r) == first_key(&records[0]))
        .count();
    (same * 100 >= records.len() * MIN_SAME_FIRST_KEY).then_some(LineRecords {
        layout: Layout::Lines,
        header: None,
        records,
    })
}

/// Whether the sample `lines` (non-blank) start like stanzas: the first line a field, and
/// nearly all lines fields or continuation lines.
pub(crate) fn starts_like(lines: &[&str]) -> bool {
    let fits = |l: &&&str| l.starts_with([' ', '\t']) || field_colon(l).is_some() || **l == "---";
    lines.first().is_some_and(|l| field_colon(l).is_some())
        && lines.iter().filter(fits).count() * 100 >= lines.len() * (100 - MAX_OTHER_SHARE)
}

/// Where the colon of a `Key: value` line at the margin is, if the line is one: a key of
/// letters, digits and `-_.` (no spaces: `Note that: …` is prose), then `:` and a space or
/// the end of the line (`http://…` is not a field).
fn field_colon(line: &str) -> Option<usize> {
    let colon = line.find(':')?;
    let key = &line[..colon];
    let after = line[colon + 1..].chars().next();
    let plain = !key.is_empty()
        && key.len() <= MAX_KEY_BYTES
        && key.starts_with(|c: char| c.is_ascii_alphabetic())
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    (plain && after.is_none_or(|c| c == ' ' || c == '\t')).then_some(colon)
}

#[cfg(test)]
pub(super) mod tests {
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
    fn pip_show_separates_its_stanzas_with_dashes() {
        // `pip show pip setuptools` (pip 23.0.1).
        let text = "Name: pip\nVersion: 23.0.1\nSummary: The PyPA recommended tool for installing Python packages.\nHome-page: https://pip.pypa.io/\nLicense: MIT\nLocation: /usr/lib/python3/dist-packages\nRequires: \nRequired-by: \n---\nName: setuptools\nVersion: 66.1.1\nSummary: Easily download, build, install, upgrade, and uninstall Python packages\nLicense: \nRequires: \n";
        let value = parse(text).unwrap().to_value(text);
        assert_eq!(value[1]["Version"], "66.1.1");
        assert_eq!(value[0]["Home-page"], "https://pip.pypa.io/");
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
