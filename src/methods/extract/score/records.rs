//! Outputs made of records of one kind (`Certificate:` blocks of `openssl x509 -text`, `pub`
//! records of `gpg --with-colons`, `commit`s of `git log`): the query names a record by words
//! that only its own lines hold (a subject, a user id), while the fields it asks about (`Not
//! After`, a fingerprint, a serial number) repeat in every record and hold none of them. The
//! lines of the records the query names gain part of that match, so that their fields outrank
//! the same fields of the others.

use std::collections::HashMap;
use std::ops::Range;

use super::super::doc::{Doc, Template};
use super::super::kinds::line_records::{field_name, first_word};
use super::dumps::is_hex_dump;

/// An output needs at least this many records of one kind for the rule to apply.
const MIN_RECORDS: usize = 3;
/// A record is named when its rarest term weighs at least this share of the best record's.
const NAMED_SHARE: f32 = 0.7;
/// What a line of the record the query names best gains; others gain in proportion.
const RECORD_WEIGHT: f32 = 4.0;
/// Only this many lines from a record's start gain (a record's fields come first; a huge
/// record, a commit with its diff, is not one thing to keep whole).
const MAX_RAISED_LINES: usize = 120;

/// Raises the lines of the records the query names by their own words (see the module).
/// `records` are the output's records (see [`records`]); `matches` holds every (unit, query
/// term) match.
pub(super) fn raise_named_records(
    doc: &Doc<'_>,
    records: &[Range<usize>],
    matches: &[(u32, u32)],
    scores: &mut [f32],
) {
    if records.len() < MIN_RECORDS || matches.is_empty() {
        return;
    }
    // In how many records each line template occurs: a template of most records is a field
    // every record has (`Serial Number:`), and its words do not tell the records apart.
    // Only the templates of lines the query matches are counted, looked up in a sorted
    // list: the pass over every line then costs a few comparisons each.
    let mut templates: Vec<Template> = matches
        .iter()
        .filter_map(|&(u, _)| doc.units[u as usize].template)
        .collect();
    templates.sort_unstable();
    templates.dedup();
    // Per template: the last record it was seen in, and how many records it was seen in.
    let mut spread = vec![(usize::MAX, 0usize); templates.len()];
    for (r, range) in records.iter().enumerate() {
        for t in range.clone().filter_map(|u| doc.units[u].template) {
            if let Ok(i) = templates.binary_search(&t) {
                let (last, count) = &mut spread[i];
                if *last != r {
                    *last = r;
                    *count += 1;
                }
            }
        }
    }
    let shared = |u: usize| {
        doc.units[u]
            .template
            .and_then(|t| templates.binary_search(&t).ok())
            .is_some_and(|i| spread[i].1 * 2 > records.len())
    };
    // The query's terms each record's own lines hold.
    let mut record_of = vec![u32::MAX; doc.units.len()];
    for (r, range) in records.iter().enumerate() {
        record_of[range.clone()].fill(r as u32);
    }
    // (record, term) pairs, sorted and without repeats.
    let mut held: Vec<(u32, u32)> = matches
        .iter()
        .filter(|&&(u, _)| record_of[u as usize] != u32::MAX && !shared(u as usize))
        .map(|&(u, term)| (record_of[u as usize], term))
        .collect();
    held.sort_unstable();
    held.dedup();
    // A term weighs by how few records hold it: `DigiCert` in ten records of twelve names
    // none of them, `X1` in one names that one. A record weighs as its rarest term: a query
    // that names several records (`ISRG Root X1` and `DigiCert TLS RSA4096 Root G5`) names
    // each by a few words, whatever their number.
    let terms = held.iter().map(|&(_, t)| t as usize + 1).max().unwrap_or(0);
    let mut df = vec![0usize; terms];
    for &(_, t) in &held {
        df[t as usize] += 1;
    }
    let n = records.len() as f32;
    let mut naming = vec![0.0f32; records.len()];
    for &(r, t) in &held {
        let weight = (1.0 + n / df[t as usize] as f32).ln();
        naming[r as usize] = naming[r as usize].max(weight);
    }
    let best = naming.iter().copied().fold(0.0, f32::max);
    if best <= 0.0 {
        return;
    }
    let named: Vec<usize> = (0..records.len())
        .filter(|&r| naming[r] >= NAMED_SHARE * best)
        .collect();
    // A query that matches most records alike names none of them.
    if named.len() * 2 > records.len() {
        return;
    }
    for r in named {
        let gain = RECORD_WEIGHT * naming[r] / best;
        for u in records[r].clone().take(MAX_RAISED_LINES) {
            if !is_hex_dump(doc.text(u)) {
                scores[u] += gain;
            }
        }
    }
}

/// The records of `doc`: runs of units of one block that start with an unindented line whose
/// first word (`Certificate:`, `pub:`, `commit`) starts most blocks.
pub(super) fn records(doc: &Doc<'_>) -> Vec<Range<usize>> {
    let mut blocks: Vec<Range<usize>> = Vec::new();
    for (u, unit) in doc.units.iter().enumerate() {
        match blocks.last_mut() {
            Some(last) if doc.units[last.start].block == unit.block => last.end = u + 1,
            _ => blocks.push(u..u + 1),
        }
    }
    // A record starts with a name (`commit`, `pub:`), not a comment mark (`#`).
    let name = |range: &Range<usize>| {
        first_word(doc.text(range.start)).filter(|w| w.starts_with(|c: char| c.is_alphabetic()))
    };
    if let Some(records) = of_one_kind(&blocks, name) {
        return records;
    }
    // Records headed each by a line of its own (a mapping's address range in `smaps`, a
    // cop's name in a YAML file of them) are of one kind by the name of their first field
    // (`Size:`, `Description:`), which every one of them starts with.
    let first_field = |range: &Range<usize>| field_name(doc.text(range.start + 1).trim_start());
    let blocks: Vec<Range<usize>> = blocks.into_iter().filter(|r| r.len() > 1).collect();
    of_one_kind(&blocks, first_field).unwrap_or_default()
}

/// The `blocks` whose key (by `key_of`) is the one most of them share, when at least
/// [`MIN_RECORDS`] and half of them share it.
fn of_one_kind<'t>(
    blocks: &[Range<usize>],
    key_of: impl Fn(&Range<usize>) -> Option<&'t str>,
) -> Option<Vec<Range<usize>>> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for key in blocks.iter().filter_map(&key_of) {
        *counts.entry(key).or_default() += 1;
    }
    let (key, count) = counts
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(a.0)))?;
    (count >= MIN_RECORDS && count * 2 >= blocks.len()).then(|| {
        blocks
            .iter()
            .filter(|range| key_of(range) == Some(key))
            .cloned()
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::scored;

    /// The shape of `openssl x509 -noout -text` over several certificates, cut short.
    fn certificates() -> String {
        let mut text = String::new();
        for (serial, after, name) in [
            (
                "0c:e7:e0:e5",
                "Nov 10 00:00:00 2031 GMT",
                "DigiCert Assured ID Root CA",
            ),
            (
                "03:3a:f1:e6",
                "Jan 15 12:00:00 2038 GMT",
                "DigiCert Global Root G2",
            ),
            ("82:10:cf:b0", "Jun  4 11:04:38 2035 GMT", "ISRG Root X1"),
            ("41:d2:9d:d1", "Sep 17 16:00:00 2040 GMT", "ISRG Root X2"),
        ] {
            text.push_str(&format!(
                "Certificate:\n    Data:\n        Serial Number:\n            {serial}\n\
                 \x20       Validity\n            Not After : {after}\n\
                 \x20       Subject: C = US, CN = {name}\n"
            ));
        }
        text
    }

    #[test]
    fn the_fields_of_the_record_the_query_names_outrank_the_same_fields_of_others() {
        let text = certificates();
        let s = scored(&text, "when does ISRG Root X1 expire?");
        // Line 5 of each record of 7 lines is its `Not After`.
        let not_after = |r: usize| s[r * 7 + 5];
        assert!(
            not_after(2) > not_after(0) + 1.0 && not_after(2) > not_after(1) + 1.0,
            "{s:?}"
        );
    }

    #[test]
    fn records_headed_by_a_line_of_their_own_are_told_apart_by_it() {
        // The shape of `/proc/PID/smaps`: an address line per mapping, then the same fields.
        let mut text = String::new();
        for (range, path, rss) in [
            (
                "555d0000-555d1000 r--p 00000000 fe:00 18504",
                "/usr/bin/python3.11",
                4,
            ),
            ("555e0000-555e2000 rw-p 00000000 00:00 0", "[heap]", 1980),
            (
                "7f150000-7f151000 r-xp 000c5000 fe:00 326305",
                "/usr/lib/libcrypto.so.3",
                1480,
            ),
            ("7ffc0000-7ffc2000 rw-p 00000000 00:00 0", "[stack]", 132),
        ] {
            text.push_str(&format!(
                "{range}                          {path}\nSize:                  8 kB\n\
                 Rss:                {rss:>4} kB\nPrivate_Dirty:         0 kB\n\
                 VmFlags: rd wr mr mw me ac\n"
            ));
        }
        let s = scored(&text, "what is the Rss of [heap]?");
        // Line 2 of each record of 5 lines is its `Rss`.
        let rss = |r: usize| s[r * 5 + 2];
        assert!(rss(1) > rss(0) + 1.0 && rss(1) > rss(3) + 1.0, "{s:?}");
    }

    #[test]
    fn indented_records_of_one_first_field_are_told_apart_by_their_heads() {
        // The shape of a linter's YAML defaults: a block per rule, its fields indented.
        let mut text = String::new();
        for (name, max) in [
            ("Metrics/AbcSize", 17),
            ("Metrics/BlockLength", 25),
            ("Metrics/MethodLength", 10),
            ("Metrics/ModuleLength", 100),
        ] {
            text.push_str(&format!(
                "{name}:\n  Description: 'A rule about size.'\n  Enabled: true\n  Max: {max}\n\n"
            ));
        }
        let s = scored(&text, "what is the default Max of Metrics/MethodLength?");
        // Line 3 of each record of 4 lines is its `Max`: the named record's gains the weight
        // of a named record, over what its header's match lends it as context.
        let max = |r: usize| s[r * 4 + 3];
        let lead = super::RECORD_WEIGHT * 1.5;
        assert!(max(2) > max(0) + lead && max(2) > max(3) + lead, "{s:?}");
    }

    #[test]
    fn a_query_that_names_no_record_raises_none() {
        let text = certificates();
        let s = scored(&text, "when does each certificate expire?");
        let not_after = |r: usize| s[r * 7 + 5];
        assert!((not_after(2) - not_after(0)).abs() < 0.5, "{s:?}");
    }

    #[test]
    fn sections_of_a_report_are_not_records_that_pull_their_lines() {
        // `gcc -Q --help=optimizers --help=warnings`: two sections, each a long list of options.
        let mut text = String::from("The following options control optimizations:\n");
        for i in 0..50 {
            text.push_str(&format!("  -fpass-{i}                 \t\t[enabled]\n"));
        }
        text.push_str("  -finline-functions          \t\t[enabled]\n");
        text.push_str("The following options control compiler warning messages:\n");
        for i in 0..50 {
            text.push_str(&format!("  -Wcheck-{i}                \t\t[disabled]\n"));
        }
        text.push_str("  -Wshadow                    \t\t[disabled]\n");
        let s = scored(&text, "is -finline-functions enabled, and is -Wshadow on?");
        // An option that only shares the word "enabled" does not move toward its section's
        // best line, above the option the query names in the other section.
        assert!(s[103] > s[1] && s[103] > s[40], "{s:?}");
    }

    /// The shape of `ip addr` (iproute2 6.1): each interface is a header line (`4: eth0: <…>`)
    /// with its fields indented under it; the headers start with different words, so they are
    /// not records of one kind, and the fields gain from the header they are indented under.
    fn interfaces() -> String {
        let mut text = String::new();
        for (i, name) in ["lo", "ifb0", "ifb1", "eth0", "eth1", "wlan0"]
            .iter()
            .enumerate()
        {
            text.push_str(&format!(
                "{n}: {name}: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc pfifo_fast state UP \
                 group default qlen 1000\n    link/ether 02:fc:00:00:00:0{i} brd ff:ff:ff:ff:ff:ff\n\
                 \x20   inet 192.0.2.{i}/24 brd 192.0.2.255 scope global {name}\n\
                 \x20      valid_lft forever preferred_lft forever\n",
                n = i + 1
            ));
        }
        text
    }

    #[test]
    fn the_fields_of_the_interface_the_query_names_outrank_those_of_others() {
        let text = interfaces();
        let s = scored(&text, "what is the MAC address of wlan0?");
        // Line 1 of each record of 4 lines is its `link/ether`.
        let ether = |r: usize| s[r * 4 + 1];
        assert!(
            ether(5) > ether(3) + 1.0 && ether(5) > ether(0) + 1.0,
            "{s:?}"
        );
    }
}
