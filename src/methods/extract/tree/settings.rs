//! Settings written over several lines of a text read as lines: a value listed item by item
//! under its key (a JVM's settings dump), and a setting written in parts on consecutive lines
//! (a Makefile's version). The query names one key; the whole setting is what it asks for.

use crate::methods::extract::doc::{self, Doc};
use crate::methods::extract::query::Query;

/// A value listed under its key longer than this is a section, not one setting's value.
const MAX_LISTED_VALUE_LINES: usize = 40;
/// A key line longer than this is prose, not a key.
const MAX_KEY_LINE_BYTES: usize = 100;
/// The prior of every line of a listed value whose key the query names by all its words; a
/// key named in part gets its share.
const NAMED_VALUE_PRIOR: f32 = 3.0;

/// Makes each value listed under its key (`jdk.tls.disabledAlgorithms=` and then `SSLv3,`,
/// `TLSv1,` … each on a deeper line) one block with its key line, its items no longer
/// repeats of one another: a settings dump writes a long value that way, and a query that
/// names the key asks for all of it, not for its first item and a count of the rest; its
/// lines are raised by the share of the key's words the query holds.
pub(crate) fn group_listed_values(doc: &mut Doc<'_>, query: Option<&Query>) {
    let mut block = doc.next_block();
    let mut u = 0;
    while u < doc.units.len() {
        let line = doc.text(u);
        let key = line.trim();
        let indent = doc::indent_of(line);
        let opens_value = key.len() <= MAX_KEY_LINE_BYTES
            && key.ends_with('=')
            && key.len() > 1
            && !key.contains(' ');
        if !opens_value {
            u += 1;
            continue;
        }
        let end = (u + 1..doc.units.len())
            .find(|&v| doc::indent_of(doc.text(v)) <= indent)
            .unwrap_or(doc.units.len());
        if end - u < 3 || end - u > MAX_LISTED_VALUE_LINES + 1 {
            u += 1;
            continue;
        }
        let named = query.map_or(0.0, |q| super::key_share(q, key));
        for (i, unit) in doc.units[u..end].iter_mut().enumerate() {
            unit.block = Some(block);
            unit.prior += NAMED_VALUE_PRIOR * named;
            if i > 0 {
                unit.template = None;
            }
        }
        block += 1;
        u = end;
    }
}

/// A paragraph of settings longer than this is a section of them, not one setting in parts.
const MAX_SETTING_RUN_LINES: usize = 8;
/// The prior of every line of a short paragraph of settings one of whose keys the query names
/// by all its words.
const NAMED_RUN_PRIOR: f32 = 2.0;

/// The key of a plain assignment line (`SUBLEVEL = 176`, `NAME = Curry Ramen`, `export
/// INSTALL_PATH ?= /boot`, `KBUILD_CFLAGS += -Os`): one word before `=`, `:=`, `?=` or `+=`.
fn assigned_key(line: &str) -> Option<&str> {
    let t = line.trim();
    let t = t
        .strip_prefix("export ")
        .or_else(|| t.strip_prefix("override "))
        .unwrap_or(t)
        .trim_start();
    let end = t.find([' ', '\t', '=', ':', '?', '+'])?;
    let (key, rest) = t.split_at(end);
    let rest = rest.trim_start();
    let assigns = ["=", ":=", "?=", "+=", "::="]
        .iter()
        .any(|op| rest.starts_with(op) && !rest.starts_with("=="));
    let plain = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    (assigns && plain).then_some(key)
}

/// Raises every line of a short paragraph of assignments (two to eight of them, no blank line
/// between them, `#` comments allowed) when the query names one of its keys by all its
/// words: a version written in parts (`VERSION = 6`, `PATCHLEVEL = 1`, `SUBLEVEL = 176`,
/// `NAME = …`) is asked for whole by "which version is this", though only its first key says
/// so.
pub(crate) fn raise_named_setting_runs(doc: &mut Doc<'_>, query: &Query) {
    let n = doc.units.len();
    let mut start = 0;
    while start < n {
        // The paragraph from `start`: units with no blank line between them.
        let mut end = start + 1;
        while end < n && !doc.blank_line_before(end) {
            end += 1;
        }
        // Comment lines may stand among the settings (a licence tag above them).
        let keys: Option<Vec<&str>> = (start..end)
            .filter(|&u| !doc.text(u).trim_start().starts_with('#'))
            .map(|u| assigned_key(doc.text(u)))
            .collect();
        let named = keys
            .filter(|keys| (2..=MAX_SETTING_RUN_LINES).contains(&keys.len()))
            .map_or(0.0, |keys| {
                keys.iter()
                    .map(|key| super::key_share(query, key))
                    .fold(0.0, f32::max)
            });
        if named >= 1.0 {
            for unit in &mut doc.units[start..end] {
                unit.prior += NAMED_RUN_PRIOR;
            }
        }
        start = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::kinds::lines::{Style, build};

    /// A settings dump writes a long value as items on deeper lines under its key: the value is
    /// one block with its key, its items no repeats, and the key the query names raises it.
    #[test]
    fn a_value_listed_under_its_key_is_one_block() {
        let mut text = String::from("Security properties:\n");
        for (key, items) in [
            (
                "jdk.certpath.disabledAlgorithms=",
                ["MD2,", "MD5,", "SHA1 jdkCA,"],
            ),
            (
                "jdk.tls.disabledAlgorithms=",
                ["SSLv3,", "TLSv1,", "TLSv1.1,"],
            ),
        ] {
            text.push_str(&format!("    {key}\n"));
            for item in items {
                text.push_str(&format!("        {item}\n"));
            }
            text.push_str("    jdk.other.setting=value\n");
        }
        let query = Query::from_hints(
            &crate::methods::extract::Hints::new()
                .with_query("which protocols are disabled for tls?"),
        );
        let mut doc = build(&text, Style::Text);
        group_listed_values(&mut doc, query.as_ref());
        let unit = |line: &str| {
            (0..doc.units.len())
                .find(|&u| doc.text(u).trim() == line)
                .unwrap()
        };
        let key = unit("jdk.tls.disabledAlgorithms=");
        let item = unit("TLSv1.1,");
        assert_eq!(doc.units[key].block, doc.units[item].block);
        assert!(doc.units[item].template.is_none());
        assert!(doc.units[item].prior > doc.units[unit("MD5,")].prior);
        assert_ne!(doc.units[item].block, doc.units[unit("MD5,")].block);
    }

    /// A version written in parts, one setting per line: the query names one key, and the
    /// paragraph comes whole.
    #[test]
    fn a_short_run_of_settings_comes_whole_when_the_query_names_one_key() {
        let text = "# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\nPATCHLEVEL = 1\nSUBLEVEL = 176\nNAME = Curry Ramen\n\nCC := gcc\nLD := ld\n";
        let query = Query::from_hints(
            &crate::methods::extract::Hints::new()
                .with_query("which exact kernel version is this?"),
        )
        .unwrap();
        let mut doc = build(text, Style::Code);
        let before: Vec<f32> = doc.units.iter().map(|u| u.prior).collect();
        raise_named_setting_runs(&mut doc, &query);
        let unit = |line: &str| (0..doc.units.len()).find(|&u| doc.text(u) == line).unwrap();
        let raised = |u: usize| doc.units[u].prior > before[u];
        assert!(raised(unit("SUBLEVEL = 176")));
        assert!(raised(unit("NAME = Curry Ramen")));
        assert!(!raised(unit("CC := gcc")));
        assert_eq!(
            assigned_key("export INSTALL_PATH ?= /boot"),
            Some("INSTALL_PATH")
        );
        assert_eq!(assigned_key("if a == b"), None);
    }
}
