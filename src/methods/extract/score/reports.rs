//! Rules about test reports: a failure's assertion lines carry the answer, while the query's
//! words (the test file, the test's name) sit in the lines that locate the failure.

use super::super::doc::{Doc, Level, indent_of, is_tap_result};

/// The share of a failure location's query match the failure's `E` lines gain.
const ASSERTION_SHARE: f32 = 0.8;
/// The share of a TAP test's query match (its `# name` comment) its failed assertions gain,
/// and the share of a failed assertion's score its diagnostic block gains.
const TAP_SHARE: f32 = 0.8;
/// How many lines above its location line a failure's `E` lines are looked for, and below
/// an error its first stack frame.
const MAX_FAILURE_LINES: usize = 40;
/// Lines above an error that may hold the title of the test it failed.
const TITLE_LINES: usize = 3;

/// pytest ends each failure with its location (`test_addr.py:307: AttributeError`) under the
/// `E   …` lines that say what failed: when the query names that file or error, those lines
/// gain most of the location's match, so the failures the query asks about keep their
/// assertions rather than the tracebacks of other failures.
pub(super) fn raise_failure_assertions(doc: &Doc<'_>, query_scores: &mut [f32]) {
    for u in 0..doc.units.len() {
        let share = ASSERTION_SHARE * query_scores[u];
        if share <= 0.0 || !is_failure_location(doc.text(u)) {
            continue;
        }
        for above in (u.saturating_sub(MAX_FAILURE_LINES)..u).rev() {
            let line = doc.text(above);
            // The failure's `____ Test.name ____` header, or the one before it, ends it.
            if line.starts_with("___") || is_failure_location(line) {
                break;
            }
            if is_assertion_line(line) {
                query_scores[above] = query_scores[above].max(share);
            }
        }
    }
}

/// Jest, Playwright and Mocha number each failure of their report (`  16) tests/misc.spec.js:5:5
/// › formatPence › formats 123456 ───`) over what failed: the error, then `Expected:` and
/// `Received:`, then a snippet of the test's source that holds the test's words again. When
/// the query names the failure, its error and expectation lines gain most of the header's
/// match, so they outrank the snippet and the other failures' expectations.
pub(super) fn raise_numbered_failures(doc: &Doc<'_>, query_scores: &mut [f32]) {
    for u in 0..doc.units.len() {
        let share = ASSERTION_SHARE * query_scores[u];
        if share <= 0.0 || !is_numbered_failure(doc.text(u)) {
            continue;
        }
        let end = (u + 1 + MAX_FAILURE_LINES).min(doc.units.len());
        for (below, score) in query_scores.iter_mut().enumerate().take(end).skip(u + 1) {
            let line = doc.text(below);
            if is_numbered_failure(line) {
                break;
            }
            if is_expectation_line(line.trim_start()) {
                *score = score.max(share);
            }
        }
    }
}

/// Whether `line` heads a numbered failure: `  3) ` and a test's path or title.
fn is_numbered_failure(line: &str) -> bool {
    let t = line.trim_start();
    let digits = t.bytes().take_while(u8::is_ascii_digit).count();
    digits > 0 && t[digits..].starts_with(") ") && t.len() > digits + 2
}

/// Whether `line` (trimmed) says what a failed assertion expected and got, or the error.
fn is_expectation_line(line: &str) -> bool {
    [
        "Expected",
        "Received",
        "Error:",
        "AssertionError",
        "expected",
        "actual",
    ]
    .iter()
    .any(|head| line.starts_with(head))
}

/// TAP (tape, node-tap, prove): a test is a `# name` comment over its numbered assertions, and
/// a failed one (`not ok 358 should be deeply equivalent`) is told by the indented YAML block
/// under it (`actual:`, `expected:`, `at: … parse.js:1329:12`). The query names the test,
/// rarely the assertion's generic message: each failed assertion gains a share of its test's
/// match, and each line of its block a share of the assertion's score.
pub(super) fn raise_tap_failures(doc: &Doc<'_>, query_scores: &mut [f32]) {
    let mut test_score = 0.0f32;
    let mut u = 0;
    while u < doc.units.len() {
        let line = doc.text(u);
        let t = line.trim_start();
        if t.starts_with("# ") {
            test_score = query_scores[u];
        }
        if !is_tap_result(t, "not ok ") {
            u += 1;
            continue;
        }
        query_scores[u] = query_scores[u].max(TAP_SHARE * test_score);
        let share = TAP_SHARE * query_scores[u];
        let indent = indent_of(line);
        let mut below = u + 1;
        while below < doc.units.len() {
            let text = doc.text(below);
            if indent_of(text) <= indent || text.trim() == "..." {
                break;
            }
            query_scores[below] = query_scores[below].max(share);
            below += 1;
        }
        u = below;
    }
}

/// A raised error's first stack frame says where it was thrown (`at Context.<anonymous>
/// (test/issues/0046.js:18:10)`), the line a "where did it fail" answer quotes. Only stacks
/// printed under their error (JavaScript, Java) are read: Python prints its frames above. The frame gains a share of the match of the error and of the lines just above
/// it (the failing test's title, as mocha and jest print it over the error).
pub(super) fn raise_first_frames(doc: &Doc<'_>, query_scores: &mut [f32]) {
    for u in 0..doc.units.len() {
        if doc.units[u].level != Level::Error {
            continue;
        }
        let failure = query_scores[u.saturating_sub(TITLE_LINES)..=u]
            .iter()
            .fold(0.0f32, |a, &b| a.max(b));
        if failure <= 0.0 {
            continue;
        }
        let below = (u + 1..doc.units.len().min(u + 1 + MAX_FAILURE_LINES))
            .take_while(|&b| doc.units[b].level != Level::Error)
            .find(|&b| is_stack_frame(doc.text(b)));
        if let Some(frame) = below {
            query_scores[frame] = query_scores[frame].max(ASSERTION_SHARE * failure);
        }
    }
}

/// A failed doctest prints its example, what it expected and what it got, each under its
/// header: they answer together, so the `Got:` lines gain the best match of the example and
/// the `Expected:` lines (the query names the example's function, or the value expected).
pub(super) fn pair_doctest_results(doc: &Doc<'_>, query_scores: &mut [f32]) {
    let mut expected: Option<f32> = None;
    let mut u = 0;
    while u < doc.units.len() {
        match doc.text(u).trim_end() {
            "Failed example:" => expected = Some(0.0),
            "Expected:" => expected = Some(expected.unwrap_or(0.0)),
            "Got:" => {
                if let Some(best) = expected.take().filter(|&b| b > 0.0) {
                    query_scores[u] = query_scores[u].max(best);
                    while u + 1 < doc.units.len() && doc.text(u + 1).starts_with([' ', '\t']) {
                        u += 1;
                        query_scores[u] = query_scores[u].max(best);
                    }
                }
            }
            line => match expected.as_mut() {
                Some(best) if line.starts_with([' ', '\t']) => *best = best.max(query_scores[u]),
                _ => expected = None,
            },
        }
        u += 1;
    }
}

/// A stack frame with its place, as JavaScript prints it: `at f (path:12:5)`, `at path:12:5`.
fn is_stack_frame(line: &str) -> bool {
    let Some(rest) = line.trim().strip_prefix("at ") else {
        return false;
    };
    let place = rest
        .rsplit_once('(')
        .map_or(rest, |(_, p)| p.trim_end_matches(')'));
    let mut parts = place.rsplitn(3, ':');
    let (Some(col), Some(row)) = (parts.next(), parts.next()) else {
        return false;
    };
    [col, row]
        .iter()
        .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `line` is pytest's failure location: `path.py:LINE: ErrorName`.
fn is_failure_location(line: &str) -> bool {
    let mut parts = line.trim_end().splitn(3, ':');
    let (Some(path), Some(number), Some(error)) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let error = error.strip_prefix(' ').unwrap_or_default();
    !path.is_empty()
        && !path.contains(' ')
        && path.contains('.')
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && !error.is_empty()
        && error
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'.')
}

/// Whether `line` is one of pytest's `E   …` lines.
fn is_assertion_line(line: &str) -> bool {
    line.strip_prefix('E')
        .is_some_and(|rest| rest.starts_with("  "))
}

#[cfg(test)]
mod tests {
    use super::super::tests::scored;
    use super::*;

    #[test]
    fn the_assertions_of_a_failure_the_query_names_outrank_other_failures() {
        // The shape of pytest's failures section: two failures of two files.
        let text = "___________ CalendarTest.test_html ___________\n\
                    \x20   def test_html(self):\n\
                    E       ValueError: invalid month 'html'\n\
                    test_cal.py:88: ValueError\n\
                    ___________ AddressTest.test_mapped ___________\n\
                    \x20   def test_mapped(self):\n\
                    E       AttributeError: 'Addr' object has no attribute 'mapped'\n\
                    test_addr.py:307: AttributeError\n";
        let s = scored(
            text,
            "which tests in test_addr.py failed and with which errors",
        );
        assert!(s[6] > s[2], "{s:?}");
        assert!(is_failure_location("test_addr.py:307: AttributeError"));
        assert!(is_failure_location("lib/x/capture.py:229: OSError"));
        assert!(!is_failure_location("test_shlex.py:166: "));
        assert!(!is_failure_location("2024-05-01 10:00:01 started"));
    }

    #[test]
    fn the_first_frame_of_a_failure_the_query_names_says_where_it_was_thrown() {
        // mocha's failure details: number and suite, the test's title, the error, a diff,
        // then the stack.
        let text = "  9) Issues\n\
                    \x20      Timestamps are parsed in local time:\n\
                    \x20     AssertionError [ERR_ASSERTION]: month\n\
                    10 !== 9\n\
                    \x20     + expected - actual\n\
                    \x20     at Context.<anonymous> (test/issues/0046.js:18:10)\n\
                    \x20     at process.processImmediate (node:internal/timers:476:21)\n\
                    \x20 10) Issues\n\
                    \x20      Dumper keeps the order:\n\
                    \x20     AssertionError [ERR_ASSERTION]: order\n\
                    \x20     at Context.<anonymous> (test/issues/0063.js:12:3)\n";
        let s = scored(
            text,
            "why did 'Timestamps are parsed in local time' fail, and where?",
        );
        assert!(s[5] > s[6], "{s:?}");
        assert!(s[5] > s[10], "{s:?}");
        assert!(is_stack_frame(
            "    at Context.<anonymous> (test/a.js:18:10)"
        ));
        assert!(is_stack_frame("    at test/a.js:18:10"));
        assert!(!is_stack_frame("  File \"t.py\", line 3, in f"));
        assert!(!is_stack_frame("  at the end of the day"));
    }

    #[test]
    fn a_failed_doctests_result_answers_with_what_it_expected() {
        let text = "Failed example:\n\
                    \x20   list(split_at(range(10), maxsplit=2))\n\
                    Expected:\n\
                    \x20   [[0], [2], [4, 5]]\n\
                    Got:\n\
                    \x20   [[0], [2, 3, 4, 5]]\n\
                    Ran 9 tests\n";
        let plain = scored(
            text.replace("Got:", "Had:").as_str(),
            "what did the split_at example get?",
        );
        let s = scored(text, "what did the split_at example get?");
        assert!(s[5] > plain[5], "{s:?} {plain:?}");
        assert!(s[6] < s[5], "{s:?}");
    }

    #[test]
    fn a_tap_test_the_query_names_keeps_its_failed_assertion_and_its_block() {
        // tape's shape: a `# name` comment over numbered assertions, a YAML block under a
        // failed one.
        let text = "# parses a latin-1 string\n\
                    ok 357 should be deeply equivalent\n\
                    not ok 358 should be deeply equivalent\n\
                    \x20 ---\n\
                    \x20   operator: deepEqual\n\
                    \x20   actual: |-\n\
                    \x20     { '%A2': '%BD' }\n\
                    \x20   at: Test.<anonymous> (test/parse.js:1329:12)\n\
                    \x20 ...\n\
                    # parses a utf-8 string\n\
                    not ok 359 should be deeply equivalent\n\
                    \x20 ---\n\
                    \x20   actual: |-\n\
                    \x20     { a: 'b' }\n\
                    \x20 ...\n";
        let s = scored(
            text,
            "which assertion failed under 'parses a latin-1 string'?",
        );
        // The named test's failure and its block outrank the other test's.
        assert!(s[2] > s[10], "{s:?}");
        assert!(s[6] > s[13], "{s:?}");
        assert!(s[7] > s[13], "{s:?}");
        // A passed assertion ranks below the failed one beside it.
        assert!(s[2] > s[1], "{s:?}");
    }

    #[test]
    fn the_expectations_of_a_numbered_failure_the_query_names_outrank_its_snippet() {
        // Playwright's list reporter: numbered failures, each with a snippet of the test.
        let text = "  1) tests/fee.spec.js:11:5 › fee › fee 1h30 part hour ────\n\
                    \x20   Error: expect(received).toBe(expected) // Object.is equality\n\
                    \x20   Expected: 300\n\
                    \x20   Received: 250\n\
                    \x20   > 11 |     test(`fee ${name}`, () => { expect(fee(min)).toBe(want); });\n\
                    \x20 2) tests/misc.spec.js:5:5 › formatPence › formats 123456 ────\n\
                    \x20   Error: expect(received).toBe(expected) // Object.is equality\n\
                    \x20   Expected: \"£1,234.56\"\n\
                    \x20   Received: \"£1234.56\"\n\
                    \x20   > 5 |     test(`formats ${p}`, () => { expect(formatPence(p)).toBe(want); });\n";
        let s = scored(
            text,
            "which tests in misc.spec.js failed, and what did formatPence return?",
        );
        // Its expected and received values outrank its snippet and the other failure's.
        assert!(s[7] > s[9] && s[8] > s[9], "{s:?}");
        assert!(s[8] > s[3], "{s:?}");
        assert!(is_numbered_failure(
            "  16) tests/misc.spec.js:5:5 › formatPence"
        ));
        assert!(!is_numbered_failure("  16) "));
        assert!(!is_numbered_failure("(16) tests"));
    }
}
