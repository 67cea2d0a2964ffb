//! What a line of a test run or a compiler's output says: a diagnostic's first line, a failed
//! test, a tally of the run, gcc's context line, pytest's cause line, a rule setting off a
//! summary.

/// The first line of a compiler or linter diagnostic: `path:line[:col]: severity: …` (gcc,
/// clang, mypy, tsc in its plain form) or an unindented `error[E…]:` / `warning:` (rustc).
pub(super) fn is_diagnostic_head(line: &str) -> bool {
    const SEVERITIES: &[&str] = &["error", "warning", "fatal error"];
    let severity_at = |rest: &str| {
        let rest = rest.trim_start();
        SEVERITIES.iter().any(|s| {
            rest.strip_prefix(s)
                .is_some_and(|after| after.starts_with([':', '[', ' ']))
        })
    };
    if !line.starts_with(char::is_whitespace) && severity_at(line) {
        return true;
    }
    after_location(line).is_some_and(severity_at)
}

/// What follows a line's leading `path:line:` and optional `col:`, if it starts with them.
/// A path has no space: most lines end the search at their first word.
fn after_location(line: &str) -> Option<&str> {
    let colon = memchr::memchr2(b':', b' ', line.as_bytes()).filter(|&i| i > 0)?;
    if line.as_bytes()[colon] != b':' {
        return None;
    }
    let mut rest = &line[colon + 1..];
    let mut numbers = 0;
    while let Some((n, after)) = rest.split_once(':') {
        if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        numbers += 1;
        rest = after;
    }
    (numbers >= 1).then_some(rest)
}

/// A located message with no severity of its own (`msgpack/_packer.pyx:173:51: Call with
/// wrong number of arguments`): under an error's report (Cython's `Error compiling Cython
/// file:` and its snippet) it is the error's message.
pub(super) fn is_located_message(line: &str) -> bool {
    !line.starts_with(char::is_whitespace)
        && after_location(line).is_some_and(|rest| rest.trim().len() >= MIN_MESSAGE_BYTES)
}

/// A located message says something: more than a word or two.
const MIN_MESSAGE_BYTES: usize = 12;

/// A test runner's line for one test that did not pass: `test name ... FAILED` (cargo test,
/// trybuild's `... mismatch`), `path::name FAILED` (pytest -v), `✕ name` (jest). Passing and
/// skipped tests say `ok`, `PASSED`, `ignored`, `SKIPPED`. bun writes `(fail) name`.
pub(super) fn is_failed_test(line: &str) -> bool {
    const PASSING: &[&str] = &["ok", "passed", "ignored", "skipped", "xfail", "xpass"];
    let trimmed = line.trim();
    if trimmed.starts_with(['✕', '✗', '×']) || trimmed.starts_with("(fail) ") {
        return true;
    }
    let status = if let Some(rest) = trimmed.strip_prefix("test ") {
        rest.rsplit_once(" ... ").map(|(_, status)| status)
    } else if trimmed.contains("::") && !trimmed.starts_with("FAILED") {
        // pytest -v: `tests/test_a.py::test_b FAILED   [ 40%]`.
        trimmed
            .split_whitespace()
            .nth(1)
            .filter(|s| s.bytes().all(|b| b.is_ascii_uppercase()))
    } else {
        None
    };
    status.is_some_and(|s| {
        let word = s
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        !word.is_empty() && !PASSING.contains(&word.as_str()) && !word.starts_with("bench")
    })
}

/// gcc's line naming where the diagnostics under it are: `a.c: In function ‘f’:`,
/// `a.cc: In member function ‘…’:`, `a.c: At top level:`.
pub(super) fn is_compiler_context(line: &str) -> bool {
    line.ends_with(':')
        && !line.starts_with(char::is_whitespace)
        && line.split_once(": ").is_some_and(|(path, rest)| {
            !path.contains(' ')
                && (rest.starts_with("In function ")
                    || rest.starts_with("In member function ")
                    || rest.starts_with("In constructor ")
                    || rest.starts_with("In destructor ")
                    || rest == "At top level:")
        })
}

/// A line of one repeated `-`, `=` or `_` (at least 10), setting apart what follows.
pub(super) fn is_horizontal_rule(line: &str) -> bool {
    let t = line.trim();
    t.len() >= 10
        && t.bytes()
            .all(|b| b == t.as_bytes()[0] && matches!(b, b'-' | b'=' | b'_'))
}

/// A test run's or a checker's tally on a line of its own: `273 passing (430ms)`, `2 pending`,
/// `11 failing` (mocha), `=== 3 failed, 97 passed in 1.20s ===` (pytest), `5 tests, 1 failure`,
/// ` 34 fail` and `Ran 533 tests across 2 files.` (bun, unittest), `Tests:  1 failed, 12 passed`
/// (jest), `test result: FAILED. 3 passed; 1 failed` (cargo test), `Found 3 errors in 2 files`
/// (mypy, ruff).
pub(super) fn is_run_tally(line: &str) -> bool {
    const TALLIES: &[&str] = &[
        "passing", "failing", "pending", "passed", "failed", "skipped", "errors", "error", "tests",
        "failures", "failure", "pass", "fail", "todo",
    ];
    if line.len() > 100 {
        return false;
    }
    let rest = line.trim_start_matches([' ', '\t', '=', '-']);
    let rest = tally_label_end(rest).map_or(rest, |end| rest[end..].trim_start());
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    let Some(after) = rest[digits..].strip_prefix(' ').filter(|_| digits > 0) else {
        return false;
    };
    let word_end = after
        .find(|c: char| !c.is_ascii_alphabetic())
        .unwrap_or(after.len());
    TALLIES.contains(&&after[..word_end])
        && (after[word_end..].is_empty()
            || after[word_end..].starts_with([' ', ',', '(', ';', '.']))
}

/// Where the label before a run's tally ends: `Ran ` (bun, unittest) or `Found ` (mypy, ruff),
/// a label and a colon
/// (`Tests:`, `Test Suites:`, `test result:`, with cargo's `FAILED.` or `ok.` after it), or a
/// label of capitalised words set apart by two spaces (vitest's `Test Files  1 failed`).
fn tally_label_end(line: &str) -> Option<usize> {
    /// Labels longer than this are a sentence, not a label.
    const MAX_LABEL_BYTES: usize = 24;
    // A runner's or a checker's closing verb: `Ran 929 tests`, `Found 3 errors in 2 files`
    // (mypy, ruff).
    if let Some(verb) = ["Ran ", "Found "].iter().find(|v| line.starts_with(**v)) {
        return Some(verb.len());
    }
    let digit = line.find(|c: char| c.is_ascii_digit())?;
    let label = line[..digit].trim_end();
    if label.is_empty() || digit > MAX_LABEL_BYTES || !label.starts_with(char::is_alphabetic) {
        return None;
    }
    let outcome = label
        .strip_suffix("FAILED.")
        .or_else(|| label.strip_suffix("ok."))
        .map_or(label, str::trim_end);
    let words_only = |s: &str| s.chars().all(|c| c.is_alphabetic() || c == ' ');
    let labelled = outcome.strip_suffix(':').is_some_and(words_only);
    let set_apart = line[..digit].ends_with("  ")
        && words_only(label)
        && label
            .split(' ')
            .all(|word| word.starts_with(|c: char| c.is_ascii_uppercase()));
    (labelled || set_apart).then_some(digit)
}

/// pytest's `E   AssertionError: …` lines: the failure's cause, under its test.
pub(super) fn is_pytest_error(line: &str) -> bool {
    line.strip_prefix('E')
        .is_some_and(|rest| rest.starts_with("  "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostic_heads_of_several_tools() {
        assert!(is_diagnostic_head(
            "src/flask/app.py:12: error: Module has no attribute"
        ));
        assert!(is_diagnostic_head("error[E0308]: mismatched types"));
        assert!(is_diagnostic_head(
            "lib/x.c:5:1: fatal error: y.h: No such file"
        ));
        assert!(!is_diagnostic_head("src/a.rs:10:    let error = 1;"));
        assert!(!is_diagnostic_head(
            "  error: indented, part of something else"
        ));
    }

    #[test]
    fn failed_tests_of_several_runners() {
        assert!(is_failed_test("test tests/ui/a-not-error.rs ... mismatch"));
        assert!(is_failed_test("test parse::tests::empty ... FAILED"));
        assert!(!is_failed_test("test parse::tests::ok_case ... ok"));
        assert!(!is_failed_test("test slow ... ignored"));
        assert!(is_failed_test(
            "tests/test_app.py::test_url FAILED            [ 40%]"
        ));
        assert!(!is_failed_test(
            "tests/test_app.py::test_ok PASSED            [ 41%]"
        ));
        assert!(is_failed_test("  ✕ renders the title (12 ms)"));
        // bun
        assert!(is_failed_test("(fail) Fraction > floor(0.5) [0.28ms]"));
        assert!(!is_failed_test("(pass) Fraction > floor(0.4, 1) [0.46ms]"));
    }

    #[test]
    fn a_test_runs_tally_is_told_from_other_counts() {
        assert!(is_run_tally("  273 passing (430ms)"));
        assert!(is_run_tally("  11 failing"));
        assert!(is_run_tally("==== 3 failed, 97 passed in 1.20s ===="));
        assert!(is_run_tally("5 tests, 1 failure"));
        assert!(!is_run_tally("  4) construct-timestamp"));
        assert!(!is_run_tally("12 passengers boarded"));
        assert!(!is_run_tally("passing 12 tests"));
        // bun and unittest print their counts alone, or after `Ran`.
        assert!(is_run_tally(" 499 pass"));
        assert!(is_run_tally(" 34 fail"));
        assert!(is_run_tally("Ran 533 tests across 2 files. [230.00ms]"));
        assert!(is_run_tally("Ran 929 tests in 1.204s"));
        // jest, vitest and cargo test put a label first.
        assert!(is_run_tally("Tests:       1 failed, 12 passed, 13 total"));
        assert!(is_run_tally("      Test Files  1 failed | 2 passed (3)"));
        assert!(is_run_tally(
            "test result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured"
        ));
        assert!(!is_run_tally("Boarding: 12 passengers"));
        assert!(!is_run_tally("the run took 12 tests to settle"));
        assert!(!is_run_tally("Ranked 12 tests"));
        // A checker's total (mypy, ruff).
        assert!(is_run_tally(
            "Found 57 errors in 6 files (checked 9 source files)"
        ));
        assert!(is_run_tally("Found 3 errors."));
        assert!(!is_run_tally("Found 3 matches in the cache"));
    }
}
