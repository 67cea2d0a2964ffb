//! A list of records read from a line format, cut the way the JSON path cuts records (the
//! records the query names, and in them the fields it names) but shown in the source's own
//! syntax: every unit is a line of the input, byte for byte, so a fact quoted from it
//! (`Status: install ok installed`) is still there verbatim.
//!
//! A record's first line names it and is the context of its other lines; a field line's
//! continuation lines hang under it. A table's header line frames its rows. The values of each
//! key (column) across records feed rarity and extremes, as a JSON array's keys do.

use std::collections::HashMap;
use std::ops::Range;

use super::noise::opaque_share;
use super::records::{Layout, LineRecords};
use super::sections::{Named, named_by};
use crate::methods::extract::detect::ContentKind;
use crate::methods::extract::doc::{self, Doc, Field, FieldValue, Level, Unit};
use crate::methods::extract::query::Query;
use crate::methods::extract::terms::{for_each_word, is_stopword};

/// A record's naming line reads as the map of the list.
const IDENTITY_PRIOR: f32 = 0.5;
/// The lines of a record the query names by a word of its name.
const NAMED_RECORD_PRIOR: f32 = 2.0;
/// The lines of a record whose whole name the query names: the query is about that record.
const EXACTLY_NAMED_PRIOR: f32 = 4.0;
/// A field whose key the query names (`Installed-Size` for "the installed size"): the
/// projection of a record to the fields the query touches, scaled by the share of the key's
/// words the query holds.
pub(super) const NAMED_KEY_PRIOR: f32 = 2.0;
/// Lines mostly made of digests rank low unless the query names them exactly.
const OPAQUE_PENALTY: f32 = 1.5;
/// A line whose bytes are this much opaque tokens is a digest line.
const OPAQUE_SHARE: f32 = 0.4;
/// Values longer than this are content, not categories: they feed no rarity.
const MAX_CATEGORY_BYTES: usize = 64;
/// A category's values are held by this many records each, on average.
const MIN_SHARE_PER_CATEGORY: usize = 4;
/// A key must be in this many records for its values to be compared.
const MIN_FIELD_RECORDS: usize = 5;

/// What a line of the source is in the record list.
#[derive(Debug, Clone, Copy)]
enum Role {
    /// A table's header line.
    Header,
    /// A record's first line (its first field, or its row).
    Identity { record: usize },
    /// A further field line of a record.
    Field { record: usize, field: usize },
    /// A line continuing field `field`'s value.
    More { record: usize, field: usize },
}

/// Cuts `text`, read as `list`, into one unit per non-blank line, each with its record (and
/// for a continuation line, its field) as context.
pub(crate) fn build<'a>(
    text: &'a str,
    list: &LineRecords,
    kind: ContentKind,
    query: Option<&Query>,
) -> Doc<'a> {
    let roles = roles(list);
    let named: Vec<f32> = list
        .records
        .iter()
        .map(
            |r| match query.map_or(Named::No, |q| named_by(q, &text[r.fields[0].value.clone()])) {
                Named::No => 0.0,
                Named::Partly => NAMED_RECORD_PRIOR,
                Named::Exactly => EXACTLY_NAMED_PRIOR,
            },
        )
        .collect();
    let mut key_prior: HashMap<&str, f32> = HashMap::new();
    let mut units: Vec<Unit> = Vec::with_capacity(doc::line_count(text));
    // The unit of each record's first line and of each field's line, by record.
    let mut identity_unit = vec![0usize; list.records.len()];
    let mut field_unit: HashMap<(usize, usize), usize> = HashMap::new();
    let mut values: HashMap<&str, Vec<(usize, &str)>> = HashMap::new();
    for (span, role) in pieces(text, kind, &roles) {
        let line = &text[span.clone()];
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let index = units.len();
        let level = doc::level_from_words(line);
        let mut unit = Unit {
            span: span.clone().into(),
            level,
            weight: 1,
            prior: if level == Level::Error { 1.0 } else { 0.0 },
            ..Unit::default()
        };
        match role {
            Some(Role::Header) => unit.pinned = true,
            Some(Role::Identity { record }) => {
                identity_unit[record] = index;
                field_unit.insert((record, 0), index);
                unit.block = Some(block(record, false));
                unit.prior += IDENTITY_PRIOR + named[record];
                // The fields shown on the record's first piece (a row's cells, a start tag's
                // attributes) are valued there.
                let fields = &list.records[record].fields;
                for field in fields.iter().filter(|f| f.line == fields[0].line) {
                    values
                        .entry(&text[field.key.clone()])
                        .or_default()
                        .push((index, &text[field.value.clone()]));
                }
            }
            Some(Role::Field { record, field }) => {
                field_unit.insert((record, field), index);
                let field = &list.records[record].fields[field];
                let key = &text[field.key.clone()];
                unit.parent = Some(identity_unit[record]).into();
                unit.block = Some(block(record, false));
                unit.prior += named[record]
                    + *key_prior
                        .entry(key)
                        .or_insert_with(|| query.map_or(0.0, |q| key_named(q, key)));
                values
                    .entry(key)
                    .or_default()
                    .push((index, &text[field.value.clone()]));
            }
            Some(Role::More { record, field }) => {
                let key = &text[list.records[record].fields[field].key.clone()];
                unit.parent = field_unit.get(&(record, field)).copied().into();
                unit.block = Some(block(record, true));
                unit.template = Some(doc::template_of(line));
                let key_named = key_prior.get(key).copied().unwrap_or(0.0);
                if named[record] >= EXACTLY_NAMED_PRIOR && key_named > 0.0 {
                    unit.prior += key_named;
                }
            }
            None => {}
        }
        if opaque_share(t) >= OPAQUE_SHARE && !query.is_some_and(|q| q.mentions(t)) {
            unit.prior -= OPAQUE_PENALTY;
        }
        units.push(unit);
    }
    Doc {
        kind,
        source: text.into(),
        units,
        overview: None,
        noun: match list.layout {
            Layout::Lines => "lines",
            Layout::Rows => "rows",
            Layout::Elements => "elements",
        },
        fields: fields(values),
        fuller: Default::default(),
    }
}

/// The block of a record's fields, or of the continuation lines of its values: those are
/// long (a description, a list of files) and must not pull the record's fields along.
fn block(record: usize, continuation: bool) -> u32 {
    doc::offset(record * 2 + usize::from(continuation))
}

/// Every piece of the list that has a role, with its role, in source order.
fn roles(list: &LineRecords) -> Vec<(Range<usize>, Role)> {
    let mut roles = Vec::new();
    if let Some(header) = &list.header {
        roles.push((header.clone(), Role::Header));
    }
    for (record, r) in list.records.iter().enumerate() {
        let first = &r.fields[0].line;
        roles.push((first.clone(), Role::Identity { record }));
        for (field, f) in r.fields.iter().enumerate().skip(1) {
            if f.line != *first {
                roles.push((f.line.clone(), Role::Field { record, field }));
            }
        }
        for (field, f) in r.fields.iter().enumerate() {
            roles.extend(
                f.more
                    .iter()
                    .map(|m| (m.clone(), Role::More { record, field })),
            );
        }
    }
    // A table's total is shown with its header.
    if let Some(footer) = &list.footer {
        roles.push((footer.clone(), Role::Header));
    }
    roles.sort_by_key(|(span, _)| span.start);
    roles
}

/// `text` cut into the pieces of `roles` and, between them, the lines of what no role holds,
/// in source order. A piece inside one already given (a table's frame line under its header)
/// is not given again.
fn pieces(
    text: &str,
    kind: ContentKind,
    roles: &[(Range<usize>, Role)],
) -> Vec<(Range<usize>, Option<Role>)> {
    let mut pieces = Vec::new();
    let mut covered = 0;
    let gap = |pieces: &mut Vec<_>, from: usize, to: usize| {
        let part = &text[from..to];
        let shift = |l: Range<usize>| (from + l.start..from + l.end, None);
        // Markup between the records keeps each wrapped start tag whole.
        if kind == ContentKind::Xml {
            pieces.extend(super::xml_tags::tag_lines(part).map(shift));
        } else {
            pieces.extend(doc::lines(part).map(shift));
        }
    };
    for (span, role) in roles {
        if span.start < covered {
            continue;
        }
        gap(&mut pieces, covered, span.start);
        pieces.push((span.clone(), Some(*role)));
        covered = span.end;
    }
    gap(&mut pieces, covered, text.len());
    pieces
}

/// How much of `key` the query names: [`NAMED_KEY_PRIOR`] times the share of the key's words
/// that are query words.
pub(super) fn key_named(query: &Query, key: &str) -> f32 {
    let mut buf = String::new();
    let (mut words, mut named) = (0usize, 0usize);
    for_each_word(key, &mut buf, |w| {
        if !is_stopword(w) {
            words += 1;
            named += usize::from(query.words.contains_key(w));
        }
    });
    if words == 0 {
        0.0
    } else {
        NAMED_KEY_PRIOR * named as f32 / words as f32
    }
}

/// Whether a key's values are categories: few values shared by many records (a status, a
/// section, an architecture), whose rare ones stand out. A value per record or per few (a
/// homepage, a maintainer) says nothing by its rarity, and raising its lines fills the
/// output with them.
fn is_category(values: &[(usize, &str)]) -> bool {
    let mut distinct: Vec<&str> = values.iter().map(|&(_, v)| v).collect();
    distinct.sort_unstable();
    distinct.dedup();
    distinct.len() * MIN_SHARE_PER_CATEGORY <= values.len()
}

/// The values of every key held by enough records, as fields: numbers when nearly all of
/// them read as one, short categories otherwise.
fn fields(values: HashMap<&str, Vec<(usize, &str)>>) -> Vec<Field> {
    let mut keyed: Vec<(&str, Vec<(usize, &str)>)> = values
        .into_iter()
        .filter(|(_, v)| v.len() >= MIN_FIELD_RECORDS)
        .collect();
    // The same order every run: fields are scored in turn.
    keyed.sort_by_key(|&(key, _)| key);
    keyed
        .into_iter()
        .map(|(_, values)| {
            let numbers: Vec<(usize, f64)> = values
                .iter()
                .filter_map(|&(unit, v)| doc::parse_quantity(v).map(|n| (unit, n)))
                .collect();
            let mut field = Field::default();
            if numbers.len() * 10 >= values.len() * 9 {
                for (unit, n) in numbers {
                    field.push(unit, FieldValue::Number(n));
                }
            } else if is_category(&values) {
                for (unit, v) in values
                    .into_iter()
                    .filter(|(_, v)| v.len() <= MAX_CATEGORY_BYTES)
                {
                    let hash = xxhash_rust::xxh3::xxh3_64(v.as_bytes());
                    field.push(unit, FieldValue::Category(hash));
                }
            }
            field
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;
    use crate::methods::extract::tree::stanzas;

    const DPKG: &str = super::super::stanzas::tests::DPKG;

    #[test]
    fn every_line_is_a_unit_under_its_record_and_field() {
        let list = stanzas::parse(DPKG).unwrap();
        let doc = build(DPKG, &list, ContentKind::Text, None);
        assert_eq!(
            doc.units.len(),
            DPKG.lines().filter(|l| !l.is_empty()).count()
        );
        let find = |s: &str| {
            (0..doc.units.len())
                .find(|&i| doc.text(i).starts_with(s))
                .unwrap()
        };
        let openssl = find("Package: openssl");
        assert_eq!(
            doc.units[find("Version: 3.0.17")].parent.get(),
            Some(openssl)
        );
        assert_eq!(
            doc.units[find(" /etc/ssl/openssl.cnf")].parent.get(),
            Some(find("Conffiles:"))
        );
    }

    #[test]
    fn the_fields_the_query_names_of_the_record_it_names_rank_first() {
        let hints = Hints::new().with_query("what is the installed size of openssl?");
        let query = Query::from_hints(&hints).unwrap();
        let list = stanzas::parse(DPKG).unwrap();
        let doc = build(DPKG, &list, ContentKind::Text, Some(&query));
        let prior = |s: &str| {
            let i = (0..doc.units.len())
                .find(|&i| doc.text(i).starts_with(s))
                .unwrap();
            doc.units[i].prior
        };
        assert!(prior("Installed-Size: 2303") > prior("Installed-Size: 168"));
        assert!(prior("Installed-Size: 2303") > prior("Version: 3.0.17"));
        assert!(prior("Version: 3.0.17") > prior("Version: 1:1.2.13"));
    }

    #[test]
    fn a_table_keeps_its_header_and_frame_as_one_pinned_unit_and_rows_whole() {
        let text = "id  name        kind\n--  ----------  -------\n1   alpha       service\n2   beta gamma  worker\n3   delta       service\n4   epsilon     cron\n5   zeta        worker\n";
        let list = super::super::columns::parse(text).unwrap();
        let doc = build(text, &list, ContentKind::Csv, None);
        assert!(doc.units[0].pinned);
        assert_eq!(doc.text(0), "id  name        kind\n--  ----------  -------");
        assert_eq!(doc.units.len(), 6);
        assert_eq!(doc.text(2), "2   beta gamma  worker");
        // The numeric column feeds extremes.
        assert!(!doc.fields.is_empty());
    }

    #[test]
    fn the_named_field_of_the_named_stanza_survives_a_small_budget() {
        let counter = crate::TokenCounter::default();
        let hints = Hints::new().with_query("what is the installed size of openssl?");
        let text = DPKG
            .repeat(3)
            .replace("Package: zlib1g\n", "Package: zlib\n");
        let text = text.replacen("Package: openssl", "Package: libssl", 2);
        let out = crate::methods::extract::extract_with_stats(&text, &hints, 60, &counter);
        assert!(out.text.contains("Installed-Size: 2303"), "{}", out.text);
        assert!(out.text.contains("Package: openssl"), "{}", out.text);
    }
    /// Markup outside the record list keeps each wrapped start tag whole.
    #[test]
    fn a_wrapped_tag_between_the_records_is_one_unit() {
        let mut text = String::from("<root>\n<list>\n");
        for i in 0..6 {
            text.push_str(&format!("<item name=\"i{i}\"><v>{i}</v></item>\n"));
        }
        text.push_str("</list>\n<tail kind=\"summary\"\n      total=\"6\"/>\n</root>\n");
        let list = super::super::xml::records(&text, 5).unwrap();
        let doc = build(&text, &list, ContentKind::Xml, None);
        assert!(
            (0..doc.units.len())
                .any(|u| doc.text(u) == "<tail kind=\"summary\"\n      total=\"6\"/>"),
            "{:?}",
            (0..doc.units.len())
                .map(|u| doc.text(u))
                .collect::<Vec<_>>()
        );
    }

    /// A JUnit-style report, one line or pretty-printed: the suite's start tag (its totals) is
    /// pinned, each test case's start tag is a unit with its attributes verbatim, and a
    /// failure element is a unit under its test case.
    #[test]
    fn an_xml_record_list_is_cut_into_its_own_tags() {
        let mut one_line = String::from(
            "<?xml version=\"1.0\"?><testsuites><testsuite name=\"std\" tests=\"6\" failures=\"1\" skipped=\"0\">",
        );
        for i in 0..6 {
            one_line.push_str(&format!(
                "<testcase classname=\"t.Case\" name=\"test_{i}\" time=\"0.0{i}\">"
            ));
            if i == 3 {
                one_line.push_str("<failure message=\"boom\">Traceback: x != y</failure>");
            }
            one_line.push_str("</testcase>");
        }
        one_line.push_str("</testsuite></testsuites>");
        let pretty = one_line.replace("><", ">\n  <");
        for text in [one_line.as_str(), pretty.as_str()] {
            let list = super::super::xml::records(text, 5).unwrap();
            let doc = build(text, &list, ContentKind::Xml, None);
            let header = (0..doc.units.len()).find(|&i| doc.units[i].pinned).unwrap();
            assert!(
                doc.text(header).ends_with("failures=\"1\" skipped=\"0\">"),
                "{}",
                doc.text(header)
            );
            let find = |s: &str| (0..doc.units.len()).find(|&i| doc.text(i) == s).unwrap();
            let case = find("<testcase classname=\"t.Case\" name=\"test_3\" time=\"0.03\">");
            let failure = find("<failure message=\"boom\">Traceback: x != y</failure>");
            assert_eq!(doc.units[failure].parent.get(), Some(case));
            // Every unit is the input's own bytes.
            assert!((0..doc.units.len()).all(|i| text.contains(doc.text(i))));
        }
    }
}
