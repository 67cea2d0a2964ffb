//! Rules about configuration files, settings dumps and test reports: in these the answer is a
//! setting or a failure, while the query's words sit in the comments that describe the setting
//! and in the passed tests of the same files.

use std::collections::HashMap;

use super::super::doc::Doc;
use super::super::query::Query;

/// The share of its query match a passed test's line keeps.
const PASSED_TEST_SHARE: f32 = 0.3;
/// A setting whose key is made of query words.
const NAMED_KEY_WEIGHT: f32 = 3.0;
/// A key that appears more often than this is a field of records, not one setting.
const MAX_NAMED_KEY_REPEATS: usize = 2;
/// The share of a comment block's query match the setting under it gains.
const DESCRIBED_SHARE: f32 = 0.8;
/// Keys of settings are short; a longer run before `=` or `:` is something else.
const MAX_KEY_BYTES: usize = 64;
/// The share of its query match a comment line of prose keeps.
const PROSE_COMMENT_SHARE: f32 = 0.5;

/// Keys of letters only shorter or longer than these are not read as words written together.
const MIN_SPELLED_KEY: usize = 6;
const MAX_SPELLED_KEY: usize = 40;
/// The shortest query word a key is read as holding.
const MIN_SPELLED_PIECE: usize = 3;
/// A flag's prefix (`use`, `has`, `no`) is at most this long …
const MAX_FLAG_PREFIX: usize = 3;
/// … before a query word at least this long.
const MIN_FLAGGED_WORD: usize = 6;

/// In a dump of settings (`sysconfig`, `.properties`, `key = value` files) the line whose key
/// is made of the query's words is the one asked about, not the many whose longer keys contain
/// one of them: `CFLAGS = …` for "CFLAGS", not `PY_CFLAGS = …`.
pub(super) fn add_named_keys(doc: &Doc<'_>, query: &Query, scores: &mut [f32]) {
    let keys: Vec<Option<&str>> = (0..doc.units.len())
        .map(|u| setting_key(doc.text(u)).or_else(|| documented_option(doc.text(u))))
        .collect();
    let mut repeats: HashMap<&str, usize> = HashMap::new();
    for key in keys.iter().flatten() {
        *repeats.entry(key).or_default() += 1;
    }
    let mut buf = String::new();
    for (s, key) in scores.iter_mut().zip(&keys) {
        // A key every record has (`version = …` of a lock file) names none of them.
        let Some(key) = key.filter(|k| repeats[k] <= MAX_NAMED_KEY_REPEATS) else {
            continue;
        };
        let mut words = 0;
        let mut named = 0;
        crate::methods::extract::terms::for_each_word(key, &mut buf, |w| {
            words += 1;
            named += usize::from(query.word_index(w).is_some());
        });
        if words > 0 && (named == words || spells_query_words(key, query, &mut buf)) {
            *s += NAMED_KEY_WEIGHT;
        }
    }
}

/// Whether `key`, one run of lowercase letters, is query words written together, as build
/// configurations name their variables (`gccversion` for "the GCC version"), maybe after a
/// flag's short prefix (`useithreads` for "are ithreads enabled", `d_` dropped already).
fn spells_query_words(key: &str, query: &Query, buf: &mut String) -> bool {
    let n = key.len();
    if !(MIN_SPELLED_KEY..=MAX_SPELLED_KEY).contains(&n)
        || !key.bytes().all(|b| b.is_ascii_lowercase())
    {
        return false;
    }
    let is_query_word = |piece: &str, buf: &mut String| {
        let mut found = false;
        crate::methods::extract::terms::for_each_word(piece, buf, |w| {
            found = query.word_index(w).is_some();
        });
        found
    };
    // `covered[i]`: the key's first `i` letters are query words (or the flag prefix).
    let mut covered = vec![false; n + 1];
    covered[0] = true;
    for i in 0..n {
        if !covered[i] {
            continue;
        }
        for j in (i + MIN_SPELLED_PIECE)..=n {
            if !covered[j] && is_query_word(&key[i..j], buf) {
                covered[j] = true;
            }
        }
    }
    if covered[n] {
        // Two query words or more: `gcc` + `version`. A key that is one query word whole was
        // already named by its word.
        return true;
    }
    // A flag's prefix before one long query word.
    (1..=MAX_FLAG_PREFIX).any(|p| n - p >= MIN_FLAGGED_WORD && is_query_word(&key[p..], buf))
}

/// The key of a one-line `key = value`, `key=value` or `key: value` setting, indented or not.
pub(super) fn setting_key(line: &str) -> Option<&str> {
    let t = line.trim_start();
    // The key's characters, then spaces, then the separator: most lines end the search at
    // their first word.
    let end = t
        .bytes()
        .position(|b| !(b.is_ascii_alphanumeric() || b"_.-".contains(&b)))
        .unwrap_or(t.len());
    let key = &t[..end];
    let separated = t[end..].trim_start().starts_with(['=', ':']);
    let identifier = separated && !key.is_empty() && key.len() <= MAX_KEY_BYTES;
    (identifier && !t.contains('\n')).then_some(key)
}

/// The option a list item documents: `passes` of ``- `passes` (default: `1`) — The maximum
/// number of times …``, the name quoted as code first in the item, then its default or its
/// description.
fn documented_option(text: &str) -> Option<&str> {
    let t = text.trim_start();
    let rest = t.strip_prefix("- ").or_else(|| t.strip_prefix("* "))?;
    let quoted = rest.strip_prefix('`')?;
    let end = quoted.find('`')?;
    let name = &quoted[..end];
    let after = quoted[end + 1..].trim_start();
    let is_name = !name.is_empty()
        && name.len() <= MAX_KEY_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
    let described = after.starts_with(['(', ':', '—', '-', '=']) || after.starts_with('\u{2013}');
    (is_name && described).then_some(name)
}

/// A test run's line for a passed test (`PASSED t.py::T::test_x`, `test x ... ok`) names the
/// same files and tests as its failures, and a report lists hundreds: unless the query asks
/// about passes, such lines keep a share of their match and the failures come first.
pub(super) fn lower_passed_tests(doc: &Doc<'_>, query_scores: &mut [f32]) {
    for (u, s) in query_scores.iter_mut().enumerate() {
        if *s > 0.0 && is_passed_test(doc.text(u)) {
            *s *= PASSED_TEST_SHARE;
        }
    }
}

/// Whether the query is about tests that passed.
pub(super) fn asks_about_passes(query: &Query) -> bool {
    ["pass", "passed", "passes", "passing", "succeeded"]
        .iter()
        .any(|w| query.words.contains_key(*w))
}

/// Whether `line` reports one passed test, as pytest (`-v`, `-rA`), cargo test, go test,
/// jest, mocha, unittest or TAP print it.
fn is_passed_test(line: &str) -> bool {
    let t = line.trim();
    (crate::methods::extract::doc::is_tap_result(t, "ok ") && !t.contains("# SKIP"))
        || t.ends_with(" ... ok")
        || t.starts_with("✔ ")
        || t.starts_with("PASSED ")
        || t.starts_with("--- PASS: ")
        || t.starts_with("✓ ")
        || t.starts_with("√ ")
        || (t.starts_with("test ") && t.ends_with(" ... ok"))
        || t.split_once(" PASSED").is_some_and(|(test, rest)| {
            test.contains("::") && (rest.is_empty() || rest.trim_start().starts_with('['))
        })
}

/// A block of prose comments documents the line under it (`# … the append only file …` over
/// `appendonly no`): that line gains a share of the block's best match, since its own words
/// (`appendonly`) rarely are the query's.
pub(super) fn raise_described_settings(doc: &Doc<'_>, query_scores: &mut [f32]) {
    let mut block_best = 0.0f32;
    for (u, s) in query_scores.iter_mut().enumerate() {
        if is_prose_comment(doc.text(u)) {
            block_best = block_best.max(*s);
        } else if !doc.text(u).trim_start().starts_with('#') {
            *s += DESCRIBED_SHARE * block_best;
            block_best = 0.0;
        }
    }
}

/// A comment line of prose (`# Accept connections on the specified port`) describes a setting
/// or a statement with the query's words; the setting itself (`port 6379`) is the answer. Such
/// comments keep a share of their match, so the lines they describe come first. A commented-out
/// setting (`#work_mem = 4MB`, a default) is not prose and keeps its match.
pub(super) fn lower_prose_comments(doc: &Doc<'_>, query_scores: &mut [f32]) {
    for (u, s) in query_scores.iter_mut().enumerate() {
        if *s > 0.0 && is_prose_comment(doc.text(u)) {
            *s *= PROSE_COMMENT_SHARE;
        }
    }
}

/// Whether `line` is one comment line (`#`, `;` or `//`) whose text is not a `key = value`
/// or `key=value` setting.
fn is_prose_comment(line: &str) -> bool {
    let t = line.trim_start();
    let Some(body) = ["//", "#", ";"].iter().find_map(|m| t.strip_prefix(m)) else {
        return false;
    };
    if body.contains('\n') {
        return false;
    }
    let body = body.trim_start_matches(['#', ';', '/']).trim();
    let setting = body.split_once('=').is_some_and(|(key, _)| {
        let key = key.trim_end();
        !key.is_empty()
            && !key.contains(' ')
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-[]".contains(&b))
    });
    !setting && body.split_whitespace().count() >= 3
}

#[cfg(test)]
mod tests {
    use super::super::tests::scored;
    use super::*;

    #[test]
    fn a_key_of_query_words_written_together_is_named() {
        let query = Query::from_hints(
            &crate::methods::extract::Hints::new()
                .with_query("Which GCC version built it, and are ithreads enabled?"),
        )
        .unwrap();
        let mut buf = String::new();
        assert!(spells_query_words("gccversion", &query, &mut buf));
        assert!(spells_query_words("useithreads", &query, &mut buf));
        // One query word inside a longer key is not the key.
        assert!(!spells_query_words("gccosandvers", &query, &mut buf));
        assert!(!spells_query_words("versionnumber", &query, &mut buf));
        let text =
            "gccosandvers='';\ngccversion='12.2.0';\nuseithreads='define';\nusemymalloc='n';\n";
        let s = scored(
            text,
            "Which GCC version built it, and are ithreads enabled?",
        );
        assert!(s[1] > s[0] && s[2] > s[3], "{s:?}");
    }

    #[test]
    fn passed_tests_are_told_in_every_runner_s_words() {
        assert!(is_passed_test("ok 357 should be deeply equivalent"));
        assert!(is_passed_test("test_split (test_more.SplitAtTests) ... ok"));
        assert!(is_passed_test("  ✔ parses dates (2ms)"));
        assert!(!is_passed_test("ok 12 # SKIP no network"));
        assert!(!is_passed_test("not ok 358 should be deeply equivalent"));
        assert!(!is_passed_test("ok, this line is prose"));
    }

    #[test]
    fn a_setting_s_key_is_the_identifier_before_its_separator() {
        assert_eq!(
            setting_key("  shared_buffers = 128MB"),
            Some("shared_buffers")
        );
        assert_eq!(
            setting_key("net.ipv4.ip_forward=1"),
            Some("net.ipv4.ip_forward")
        );
        assert_eq!(setting_key("appendonly: no"), Some("appendonly"));
        assert_eq!(setting_key("port\u{a0}= 5432"), Some("port"));
        assert_eq!(setting_key("a key = 1"), None);
        assert_eq!(setting_key("= 1"), None);
        assert_eq!(setting_key("# port = 5432"), None);
        assert_eq!(setting_key("see http://x"), None);
    }

    #[test]
    fn a_setting_outranks_the_comment_that_describes_it() {
        // The shape of postgresql.conf and redis.conf: prose comments above and beside settings.
        let text = "# The TCP port the server listens on; the default port is 5432.\n\
                    port = 5432\n\
                    #port = 5433\n\
                    # Other settings follow.\n";
        let s = scored(text, "which port does the server listen on");
        assert!(s[1] > s[0], "{s:?}");
        let s = scored(
            "# Whether the append only file is written.\nappendonly no\nlogfile x.log\n",
            "is append only persistence on",
        );
        assert!(s[1] > s[2], "the documented setting gains: {s:?}");
        assert!(is_prose_comment(
            "; Sets the maximum time between checkpoints"
        ));
        assert!(!is_prose_comment("#work_mem = 4MB"));
        assert!(!is_prose_comment("jdk.tls.disabledAlgorithms=SSLv3, TLSv1"));
    }

    #[test]
    fn a_setting_named_by_the_query_outranks_longer_keys_holding_its_word() {
        // The shape of `python3 -m sysconfig`: tab-indented `KEY = "value"` lines.
        let text = "\tBASECFLAGS = \"-Wsign-compare\"\n\tCFLAGS = \"-O3 -Wall\"\n\
                    \tCONFIGURE_CFLAGS = \"\"\n\tPY_CFLAGS = \"-O3 -Wall\"\n";
        let s = scored(text, "which CFLAGS was this built with");
        assert!((0..4).all(|u| u == 1 || s[1] > s[u]), "{s:?}");
        let lock = "name = \"a\"\nversion = \"1\"\nname = \"b\"\nversion = \"2\"\n\
                    name = \"c\"\nversion = \"3\"\n";
        let s = scored(lock, "which versions are locked");
        let plain = scored(
            &lock.replace("version", "version_no"),
            "which versions are locked",
        );
        assert!(
            s[1] - plain[1] < NAMED_KEY_WEIGHT,
            "a record field is not named: {s:?}"
        );
        assert_eq!(setting_key("keystore.type=pkcs12"), Some("keystore.type"));
        assert_eq!(setting_key("Accept connections: yes or no"), None);
    }

    #[test]
    fn failures_outrank_passes_of_the_same_tests() {
        // The shape of `pytest -rA`: a failure's `E` line, then the short summary.
        let text = "E       AttributeError: 'Addr' object has no attribute 'mapped'\n\
                    test_addr.py:307: AttributeError\n\
                    PASSED test_addr.py::AddressTest::test_format\n\
                    PASSED test_addr.py::AddressTest::test_pickle\n\
                    FAILED test_addr.py::AddressTest::test_mapped - AttributeError\n";
        let s = scored(
            text,
            "which tests in test_addr.py failed and with which errors",
        );
        assert!(s[0] > s[2] && s[4] > s[3], "{s:?}");
        assert!(is_passed_test("test parse::tests::empty ... ok"));
        assert!(is_passed_test("tests/test_x.py::test_y PASSED    [ 50%]"));
        assert!(is_passed_test("--- PASS: TestSplit (0.00s)"));
        assert!(!is_passed_test(
            "FAILED tests/test_x.py::test_y - PASSED was expected"
        ));
        let passes = scored(text, "which tests in test_addr.py passed");
        assert!(passes[2] > passes[0], "{passes:?}");
    }

    #[test]
    fn an_option_a_list_item_documents_by_its_quoted_name_is_named() {
        use crate::methods::extract::detect::ContentKind;
        use crate::methods::extract::kinds::markdown;
        let mut text = String::from("## Compress options\n\n");
        for i in 0..30 {
            text.push_str(&format!(
                "- `feature_{i}` (default: `false`) — Pass `true` to turn feature {i} on, \
                 and\n  pass it again to turn it off.\n\n"
            ));
            if i == 20 {
                text.push_str(
                    "- `passes` (default: `1`) — The maximum number of times to run compress.\n\n",
                );
            }
            if i == 25 {
                text.push_str("- `rounds` (default: `2`) — How many passes the parser makes.\n\n");
            }
        }
        let doc = markdown::build(std::borrow::Cow::Borrowed(&text), ContentKind::Markdown);
        let query = Query::from_hints(
            &crate::methods::extract::Hints::new().with_query("What does passes default to?"),
        )
        .unwrap();
        let scores = super::super::score(&doc, Some(&query));
        let passes = (0..doc.units.len())
            .find(|&u| doc.text(u).contains("`passes`"))
            .unwrap();
        // Its name is the word asked about; another item only says it.
        let rounds = (0..doc.units.len())
            .find(|&u| doc.text(u).contains("`rounds`"))
            .unwrap();
        assert!(scores[passes] > scores[rounds] + 1.0, "{scores:?}");
        assert_eq!(
            documented_option("- `drop_console` (default: `false`) — Pass"),
            Some("drop_console")
        );
        assert_eq!(documented_option("- `a b` (default)"), None);
        assert_eq!(documented_option("- see `passes` below"), None);
    }
}
