//! Structured text that is not JSON, read as a tree of records and fields.
//!
//! Configuration and lock files (TOML, INI, systemd units, `poetry.lock`, normalised
//! `Cargo.toml`) put their structure in section headers at the margin rather than in
//! indentation, so read line by line a field such as `version = "1.2.0"` has lost the record
//! it belongs to. Here every line keeps its place in the tree: a field's context is its
//! record's identity (the section header, and for a repeated `[[table]]` its first field, the
//! record's name), and a value that spans lines hangs under its key. Kept lines are emitted
//! byte for byte, so a fact quoted from the file is still there verbatim.
//!
//! XML, block YAML, TOML/INI, RFC 822 stanzas and tables aligned with spaces are read by
//! lenient parsers ([`xml`], [`yaml`], [`toml`], [`stanzas`], [`columns`]) into the same tree
//! JSON parses to (a `serde_json::Value`, keys in document order). A document whose bulk is
//! one list of records (a JUnit report's test cases, `kubectl get -o yaml` items, `dpkg -s`
//! of several packages, `docker ps`) is then cut by the JSON rules: the records the query
//! names, and in each the fields whose keys it names. YAML lists of trees go the JSON path
//! (records rendered compactly, tables for uniform records, projections of deep items); YAML
//! lists of flat records ([`yaml_records`]), XML lists, stanzas and aligned tables keep
//! their own bytes ([`source`]: a record's start tag or first line, its child elements or
//! field lines), so a fact quoted from them (`Status: install ok installed`,
//! `failures="22"`) is kept verbatim. Any other document (a POM's properties, a flags file, one stanza) keeps
//! the line reader, whose lines are the document's own text.

pub(crate) mod braces;
mod columns;
mod documented;
pub(crate) mod noise;
mod records;
mod roff;
mod sections;
mod settings;
mod source;
mod stanzas;
mod terms;
/// The sample outputs of the stanza tests, for the tests of the kinds that read them.
#[cfg(test)]
pub(in crate::methods::extract) use stanzas::tests as stanzas_tests;
mod toml;
mod xml;
mod xml_tags;
mod yaml;
mod yaml_records;

use serde_json::Value;

use super::detect::ContentKind;
use super::doc::Doc;
use super::query::Query;
use records::LineRecords;

pub(crate) use sections::{build as build_sections, looks_like_sections, weigh_named_files};

/// Documents larger than this are not parsed into a tree (the line reader bounds its own
/// work); the same bound as for parsing JSON whole.
const PARSE_WHOLE_BYTES: usize = super::kinds::json::PARSE_WHOLE_BYTES;
/// Fewer records than this are a few sections, read as well as lines.
const MIN_RECORDS: usize = 5;
/// The share of the document's leaves (in percent) one record list must hold for the
/// document to be read as records.
const MIN_RECORD_SHARE: usize = 50;

/// The tree of `text` when its bulk is one list of records, read as `kind`: XML, block YAML,
/// TOML or INI ([`ContentKind::Config`]), RFC 822 stanzas ([`ContentKind::Text`]) or a table of aligned columns
/// ([`ContentKind::Csv`]); `None` when it is none of these, when the parser gave up, or when
/// the document is better read as lines.
pub(crate) fn parse_records(text: &str, kind: ContentKind) -> Option<Value> {
    if text.len() > PARSE_WHOLE_BYTES {
        return None;
    }
    let value = match kind {
        // XHTML is a page, read as one.
        ContentKind::Xml => xml::parse(text).filter(|v| v.get("html").is_none())?,
        ContentKind::Yaml => yaml::parse(text)?,
        ContentKind::Config => toml::parse(text)?,
        _ => line_records(text, kind)?.to_value(text),
    };
    let (total, records) = leaves(&value);
    (records * 100 >= total.max(1) * MIN_RECORD_SHARE).then_some(value)
}

/// The records of a line format (stanzas for [`ContentKind::Text`], aligned columns for
/// [`ContentKind::Csv`]) with every field's place in `text`.
fn line_records(text: &str, kind: ContentKind) -> Option<LineRecords> {
    match kind {
        ContentKind::Text => stanzas::parse(text),
        ContentKind::Csv => columns::parse(text),
        _ => None,
    }
}

/// Cuts `text`, which [`parse_records`] read as a list of records of a line format, into
/// units that are its own lines (see [`source`]); `None` when it is not such a list.
pub(crate) fn build_line_records<'a>(
    text: &'a str,
    kind: ContentKind,
    query: Option<&Query>,
) -> Option<Doc<'a>> {
    line_records(text, kind).map(|list| source::build(text, &list, kind, query))
}

/// Cuts block YAML `text` whose bulk is lists of flat records into units that are its own
/// lines (see [`yaml_records`]); `None` when its lists are trees, or not most of it.
pub(crate) fn build_yaml_records<'a>(text: &'a str, query: Option<&Query>) -> Option<Doc<'a>> {
    yaml_records::flat_lists(text).map(|list| source::build(text, &list, ContentKind::Yaml, query))
}

/// Cuts `text`, which [`parse_records`] read as an XML list of records, into units that are
/// its own bytes: each record's start tag, each of its child elements whole, the wrapper
/// start tags above the list as a pinned header (see [`source`]); `None` when no list of
/// records is found.
pub(crate) fn build_xml_records<'a>(text: &'a str, query: Option<&Query>) -> Option<Doc<'a>> {
    let list = xml::records(text, MIN_RECORDS)?;
    let mut doc = source::build(text, &list, ContentKind::Xml, query);
    if let Some(query) = query {
        weigh_named_elements(&mut doc, query);
    }
    Some(doc)
}

/// The prior of every piece of an element the query names.
const NAMED_ELEMENT_PRIOR: f32 = 4.0;

/// Adds [`NAMED_ELEMENT_PRIOR`] to every unit of `doc` (markup, cut into pieces of its own
/// bytes) inside an element the query names (see [`xml::named_elements`]): the one method or
/// parameter of an interface description the query asks about comes whole, its arguments
/// and their documentation with it, as a configuration's named block does.
pub(crate) fn weigh_named_elements(doc: &mut Doc<'_>, query: &Query) {
    let named = xml::named_elements(&doc.source, query);
    for unit in doc.units.iter_mut().filter(|u| !u.pinned) {
        let (start, end) = (unit.span.start(), unit.span.end());
        if named.iter().any(|r| r.start <= start && end <= r.end) {
            unit.prior += NAMED_ELEMENT_PRIOR;
        }
    }
}

/// Whether the sample `lines` (non-blank) start like RFC 822 stanzas: `Key: value` fields at
/// the margin and indented continuation lines, the first line a field. A cheap test before
/// the whole text is read as stanzas.
pub(crate) fn starts_like_stanzas(lines: &[&str]) -> bool {
    stanzas::starts_like(lines)
}

/// Whether the sample `lines` (non-blank) start like a table of aligned columns: a header
/// line of at least three names apart by runs of spaces. A cheap test before the whole text
/// is read as a table.
pub(crate) fn starts_like_columns(lines: &[&str]) -> bool {
    columns::starts_like(lines)
}

pub(crate) use documented::weigh_documented_options;
pub(crate) use settings::{group_listed_values, raise_named_setting_runs};

/// The share (0 to 1) of the words of `key` that are query words: how much of a setting's key
/// the query names.
pub(crate) fn key_share(query: &Query, key: &str) -> f32 {
    source::key_named(query, key) / source::NAMED_KEY_PRIOR
}
pub(crate) use roff::weigh_named_items as weigh_named_manual_items;
pub(crate) use terms::weigh_named_terms;
pub(crate) use xml_tags::tag_lines;
pub(crate) use yaml::starts_like_yaml;

/// Whether `text` starts like an XML document (a prolog, or a root element), not HTML.
pub(crate) fn looks_like_xml(text: &str) -> bool {
    let start = text.trim_start_matches('\u{feff}').trim_start();
    start.starts_with("<?xml")
        || (start.starts_with('<')
            && start[1..].starts_with(|c: char| c.is_alphabetic())
            && start.trim_end().ends_with('>'))
}

/// The scalars under `value`, and how many of them are in its largest list of records (an
/// array of at least [`MIN_RECORDS`] objects).
fn leaves(value: &Value) -> (usize, usize) {
    match value {
        Value::Array(items) => {
            let mut total = 0;
            let mut best = 0;
            for item in items {
                let (t, b) = leaves(item);
                total += t;
                best = best.max(b);
            }
            let records = items.len() >= MIN_RECORDS && items.iter().all(Value::is_object);
            (total, if records { total } else { best })
        }
        Value::Object(map) => map.values().fold((0, 0), |(total, best), v| {
            let (t, b) = leaves(v);
            (total + t, best.max(b))
        }),
        _ => (1, 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_of_records_is_read_as_a_tree() {
        let mut text = String::from("<testsuite name=\"api\">\n");
        for i in 0..8 {
            text.push_str(&format!(
                "  <testcase classname=\"api.T\" name=\"case{i}\" time=\"0.{i}\"/>\n"
            ));
        }
        text.push_str("</testsuite>\n");
        assert!(looks_like_xml(&text));
        let value = parse_records(&text, ContentKind::Xml).unwrap();
        assert_eq!(value["testsuite"]["testcase"][7]["name"], "case7");
    }

    #[test]
    fn lock_files_stanzas_and_tables_are_lists_of_records() {
        let lock: String = (0..6)
            .map(|i| format!("[[package]]\nname = \"p{i}\"\nversion = \"1.{i}\"\n\n"))
            .collect();
        let value = parse_records(&format!("version = 4\n\n{lock}"), ContentKind::Config).unwrap();
        assert_eq!(value["package"][5]["version"], "1.5");
        let manifest = "[package]\nname = \"x\"\n[dependencies]\na = \"1\"\nb = \"2\"\n";
        assert!(parse_records(manifest, ContentKind::Config).is_none());
        let stanzas: String = (0..5)
            .map(|i| format!("Name: p{i}\nVersion: {i}\n\n"))
            .collect();
        assert_eq!(
            parse_records(&stanzas, ContentKind::Text).unwrap()[4]["Name"],
            "p4"
        );
        let table: String = std::iter::once("NAME    STATUS   AGE\n".to_owned())
            .chain((0..5).map(|i| format!("pod-{i}   Running  {i}d\n")))
            .collect();
        assert_eq!(
            parse_records(&table, ContentKind::Csv).unwrap()[2]["AGE"],
            "2d"
        );
    }

    #[test]
    fn a_document_of_fields_stays_lines() {
        let text = "<project><modelVersion>4.0.0</modelVersion><properties><a>1</a><b>2</b><c>3</c></properties><dependencies><dependency><artifactId>x</artifactId></dependency><dependency><artifactId>y</artifactId></dependency></dependencies></project>";
        assert!(parse_records(text, ContentKind::Xml).is_none());
        let yaml = "name: app\nversion: 1.2.0\nflags:\n  debug: true\n";
        assert!(parse_records(yaml, ContentKind::Yaml).is_none());
        // Given up on: not well formed.
        assert!(parse_records("<a><b></a>", ContentKind::Xml).is_none());
        let page = format!(
            "<html><body><ul>{}</ul></body></html>",
            "<li><a href=\"x\">y</a></li>".repeat(9)
        );
        assert!(parse_records(&page, ContentKind::Xml).is_none());
    }

    /// An interface description: many methods, each with wrapped argument tags.
    fn interface() -> String {
        let mut text = String::from(
            "<?xml version=\"1.0\"?>\n<node name=\"/\">\n <interface name=\"org.example.Transaction\">\n",
        );
        for (i, method) in [
            "GetDetails",
            "GetFiles",
            "GetPackages",
            "GetUpdates",
            "InstallFiles",
            "InstallPackages",
            "RefreshCache",
            "RemovePackages",
            "Resolve",
            "SearchFiles",
            "SearchNames",
            "UpdatePackages",
            "WhatProvides",
            "RepairSystem",
        ]
        .iter()
        .enumerate()
        {
            // Methods, signals and properties in turn: no one list of records is most of it.
            let element = ["method", "signal", "property"][i % 3];
            text.push_str(&format!(
                "  <{element} name=\"{method}\">\n    <doc>Runs {method} for the caller.</doc>\n"
            ));
            for (arg, kind) in [
                ("transaction_flags", "t"),
                ("package_ids", "as"),
                ("allow_deps", "b"),
            ] {
                text.push_str(&format!(
                    "    <arg type=\"{kind}\" direction=\"in\"\n         name=\"{arg}\">\n      <doc>The {arg} of {method}.</doc>\n    </arg>\n"
                ));
            }
            text.push_str(&format!("  </{element}>\n"));
        }
        text.push_str(" </interface>\n</node>\n");
        text
    }

    /// Markup read as lines keeps each wrapped start tag whole, and the method the query
    /// names is raised with everything in it.
    #[test]
    fn the_element_the_query_names_is_raised_with_its_wrapped_tags_whole() {
        let text = interface();
        let hints = crate::methods::extract::Hints::new()
            .with_query("which arguments does RemovePackages take, and of which type?");
        let query = Query::from_hints(&hints).unwrap();
        let (kind, tree) = crate::methods::extract::detect::detect(&text);
        let doc = super::super::kinds::build(&text, kind, tree, Some(&query), 4096);
        let find = |s: &str| (0..doc.units.len()).find(|&u| doc.text(u) == s);
        assert!(
            find("    <arg type=\"as\" direction=\"in\"\n         name=\"package_ids\">").is_some()
        );
        let prior = |s: &str| doc.units[find(s).unwrap()].prior;
        assert!(
            prior("      <doc>The package_ids of RemovePackages.</doc>")
                > prior("      <doc>The package_ids of GetFiles.</doc>")
        );
    }

    /// Every cut of a document (a tool output truncated anywhere) is read without a panic,
    /// and a cut document is never taken for a whole one when the cut breaks it.
    #[test]
    fn every_prefix_is_read_or_given_up() {
        let yaml = "items:\n- name: a\n  note: 'x # y'\n  help: |\n    line\n\n    more\n  list:\n  - 1\n  - two: \"é\\t\"\n- name: b\n  text: plain\n    folded\n";
        for end in (0..=yaml.len()).filter(|&i| yaml.is_char_boundary(i)) {
            let _ = yaml::parse(&yaml[..end]);
        }
        let xml = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY e \"v\">]><r a='1'><!-- c --><i n=\"&amp;é\"><![CDATA[<x>]]></i><i/>t&#233;xt</r>";
        for end in (0..=xml.len()).filter(|&i| xml.is_char_boundary(i)) {
            let parsed = xml::parse(&xml[..end]);
            assert_eq!(parsed.is_some(), end == xml.len(), "cut at {end}");
        }
    }
}
