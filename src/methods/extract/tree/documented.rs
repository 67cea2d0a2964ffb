//! Configuration files that document every option in the comments above it, the option
//! itself often commented out at its default (`# physical_extent_size = 4096`,
//! `#lockout_duration = 1800`, `;memory_limit = 128M`): a sample configuration shipped with a
//! service.
//!
//! Such a file is nearly all comments, without blank lines between its options: read as
//! lines, an option's setting and the prose that says what it does and what its default means
//! are lines of one long section, and the query's words land on the prose while the setting
//! (the value asked for) is left out. Here each option is one small group, its comment lines
//! and its setting: a match on either pulls in the other, and an option the query names by
//! its key (`password_hash_algorithm` for "the password hashing algorithm") is raised whole.

use crate::methods::extract::doc::Doc;
use crate::methods::extract::query::Query;

/// Fewer documented options than this: comments beside a few settings, not a documented
/// sample configuration.
const MIN_DOCUMENTED: usize = 8;
/// The documented options must hold at least this share (in percent) of the lines.
const MIN_DOCUMENTED_SHARE: usize = 40;
/// An option documented at more length than this is a chapter: only its setting is raised.
const MAX_GROUP_LINES: usize = 40;
/// The prior of an option the query names by every word of its key, spread over its lines;
/// a key named in part gets its share.
const NAMED_OPTION_PRIOR: f32 = 3.0;

/// The key of a setting line, live or commented out: `key = value`, or a quoted key and a
/// colon (`"os_api:keypairs:create": "rule:admin"`, a policy file's YAML), after an optional
/// comment marker (`#`, `;`) and spaces. An unquoted key is one word of letters, digits, `_`,
/// `-`, `.` or `/`.
pub(crate) fn setting_key(line: &str) -> Option<&str> {
    let t = line.trim_start();
    let t = t.trim_start_matches(['#', ';']).trim_start();
    if let Some(quote) = t.chars().next().filter(|c| *c == '"' || *c == '\'') {
        let end = t[1..].find(quote)? + 1;
        let key = &t[1..end];
        let colon = t[end + 1..].trim_start().starts_with(':');
        return (colon && !key.is_empty() && !key.contains(char::is_whitespace)).then_some(key);
    }
    let eq = t.find('=')?;
    let key = t[..eq].trim_end();
    let starts_like_a_name = key.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    let one_word = key
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'));
    (starts_like_a_name && one_word && !t[eq + 1..].starts_with('=')).then_some(key)
}

fn is_comment(line: &str) -> bool {
    line.trim_start().starts_with(['#', ';'])
}

/// Groups the lines of `doc` (one unit per line) into documented options, each its comment
/// lines and then its setting line, in a block of its own; with a query, the options whose
/// key it names are raised. Nothing changes unless the file is mostly such options.
pub(crate) fn weigh_documented_options(doc: &mut Doc<'_>, query: Option<&Query>) {
    let groups = documented_options(doc);
    let lines = doc.units.len();
    let covered: usize = groups.iter().map(|(start, end)| end + 1 - start).sum();
    let documented = groups.iter().filter(|(start, end)| end > start).count();
    if documented < MIN_DOCUMENTED || covered * 100 < lines * MIN_DOCUMENTED_SHARE {
        return;
    }
    let mut block = doc.next_block();
    for &(start, end) in &groups {
        let small = end + 1 - start <= MAX_GROUP_LINES;
        if small {
            for unit in &mut doc.units[start..=end] {
                unit.block = Some(block);
            }
            block += 1;
        }
        let Some(query) = query else { continue };
        let key = setting_key(doc.text(end)).unwrap_or_default();
        let named = super::key_share(query, key);
        if named > 0.0 {
            let from = if small { start } else { end };
            for unit in &mut doc.units[from..=end] {
                unit.prior += NAMED_OPTION_PRIOR * named;
            }
        }
    }
}

/// The documented options of `doc`, as ranges of units (first comment line, setting line):
/// a setting line and the comment lines right above it, back to the previous setting, a
/// blank line or a line of anything else.
fn documented_options(doc: &Doc<'_>) -> Vec<(usize, usize)> {
    let mut groups = Vec::new();
    let mut comments_from: Option<usize> = None;
    for u in 0..doc.units.len() {
        if doc.blank_line_before(u) {
            comments_from = None;
        }
        let text = doc.text(u);
        if text.contains('\n') {
            comments_from = None;
        } else if setting_key(text).is_some() {
            groups.push((comments_from.take().unwrap_or(u), u));
        } else if is_comment(text) {
            comments_from.get_or_insert(u);
        } else {
            comments_from = None;
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::extract::Hints;
    use crate::methods::extract::kinds::lines;

    /// The shape of a sample configuration: every option documented above its commented-out
    /// default, no blank lines between options.
    fn sample() -> String {
        let mut text = String::from("allocation {\n");
        for (key, value) in [
            ("cling_tag_list", "[ \"@site1\" ]"),
            ("maximise_cling", "1"),
            ("use_blkid_wiping", "1"),
            ("wipe_signatures_when_zeroing_new_lvs", "1"),
            ("mirror_logs_require_separate_pvs", "0"),
            ("physical_extent_size", "4096"),
            ("thin_pool_zero", "1"),
            ("thin_pool_discards", "\"passdown\""),
            ("vdo_use_compression", "1"),
        ] {
            text.push_str(&format!(
                "\t# Configuration option allocation/{key}.\n\t# What {key} is for, at some length.\n\t# This configuration option has an automatic default value.\n\t# {key} = {value}\n"
            ));
        }
        text.push_str("}\n");
        text
    }

    #[test]
    fn each_option_is_a_group_with_its_comments() {
        let text = sample();
        let mut doc = lines::build(&text, lines::Style::Text);
        weigh_documented_options(&mut doc, None);
        let find = |s: &str| {
            (0..doc.units.len())
                .find(|&u| doc.text(u).contains(s))
                .unwrap()
        };
        let setting = find("# physical_extent_size = 4096");
        let about = find("What physical_extent_size is for");
        assert_eq!(doc.units[setting].block, doc.units[about].block);
        assert_ne!(
            doc.units[setting].block,
            doc.units[find("# thin_pool_zero = 1")].block
        );
    }

    #[test]
    fn the_option_the_query_names_is_raised_whole() {
        let text = sample();
        let hints = Hints::new().with_query("what is the default physical extent size?");
        let query = Query::from_hints(&hints).unwrap();
        let mut doc = lines::build(&text, lines::Style::Text);
        weigh_documented_options(&mut doc, Some(&query));
        let prior = |s: &str| {
            doc.units[(0..doc.units.len())
                .find(|&u| doc.text(u).contains(s))
                .unwrap()]
            .prior
        };
        assert!(prior("# physical_extent_size = 4096") >= NAMED_OPTION_PRIOR);
        assert!(prior("What physical_extent_size is for") >= NAMED_OPTION_PRIOR);
        assert!(prior("# thin_pool_zero = 1") < 1.0);
    }

    #[test]
    fn settings_are_told_from_prose_and_code() {
        assert_eq!(
            setting_key("#lockout_duration = 1800"),
            Some("lockout_duration")
        );
        assert_eq!(setting_key(";extension=bz2"), Some("extension"));
        assert_eq!(
            setting_key("\t# issue_discards = 0"),
            Some("issue_discards")
        );
        assert_eq!(setting_key("log_file = keystone.log"), Some("log_file"));
        assert_eq!(setting_key("# Set this to 0 = off"), None);
        assert_eq!(setting_key("# if a == b"), None);
        assert_eq!(setting_key("# Default: x"), None);
        assert_eq!(
            setting_key("#\"os_api:os-keypairs:create\": \"rule:admin\""),
            Some("os_api:os-keypairs:create")
        );
        assert_eq!(setting_key("# \"quoted prose\" said"), None);
    }

    #[test]
    fn a_few_commented_settings_change_nothing() {
        let text = "# the port\nport = 80\n# the host\nhost = a\nother text\n";
        let mut doc = lines::build(text, lines::Style::Text);
        let before: Vec<_> = doc.units.iter().map(|u| u.block).collect();
        weigh_documented_options(&mut doc, None);
        assert_eq!(
            before,
            doc.units.iter().map(|u| u.block).collect::<Vec<_>>()
        );
    }
}
