use super::*;

#[test]
fn a_failed_tap_assertion_is_an_error() {
    assert_eq!(level_from_words("not ok 358 should be equal"), Level::Error);
    assert_eq!(level_from_words("    not ok 2 - rounds"), Level::Error);
    assert_eq!(level_from_words("ok 357 should be equal"), Level::None);
    assert_eq!(level_from_words("not ok, said the reviewer"), Level::None);
}

#[test]
fn a_unit_takes_40_bytes() {
    assert_eq!(std::mem::size_of::<Unit>(), 40);
}

#[test]
fn templates_ignore_numbers_and_ids() {
    assert_eq!(
        template_of("081109 203615 148 INFO PacketResponder 1 for block blk_-123 terminating"),
        template_of("081110 101010 9 INFO PacketResponder 2 for block blk_77 terminating"),
    );
    assert_ne!(template_of("session opened"), template_of("session closed"));
    assert_eq!(
        template_of("at 10:01:02 id=17"),
        template_of("at 11:59:00 id=9")
    );
}

#[test]
fn fields_of_markup_keep_their_names_in_the_template() {
    assert_ne!(
        template_of("<surefire.version>3.0.0-M7</surefire.version>"),
        template_of("<jacoco.version>0.8.8</jacoco.version>")
    );
    assert_eq!(
        template_of("<jacoco.version>0.8.8</jacoco.version>"),
        template_of("<jacoco.version>0.8.9</jacoco.version>")
    );
}

#[test]
fn line_spans_drop_carriage_returns() {
    let text = "a\r\nbb\n\nc";
    let lines: Vec<&str> = line_spans(text).into_iter().map(|s| &text[s]).collect();
    assert_eq!(lines, ["a", "bb", "", "c"]);
    assert_eq!(line_count(text), 4);
    for text in ["", "\n", "a", "a\n", "\r\n\r\n", "a\rb\n"] {
        assert_eq!(line_count(text), line_spans(text).len(), "{text:?}");
    }
    assert_eq!(line_spans("a\rb\n").first(), Some(&(0..3)));
}

#[test]
fn a_count_of_no_errors_is_no_error() {
    for none in [
        "Errors 0",
        "errors: 0, warnings: 2",
        "12 passed, 0 failed in 3.1s",
        "No errors found.",
        "tasks ok=4 changed=1 failed=0",
    ] {
        assert_ne!(level_from_words(none), Level::Error, "{none}");
    }
    for some in [
        "Errors 3",
        "10 failed, 2 passed",
        "error 0x80004005 while opening the volume",
        "Failed: 0.5% of requests",
        "could not open: no such file; errors follow",
    ] {
        assert_eq!(level_from_words(some), Level::Error, "{some}");
    }
}

#[test]
fn error_words_set_the_level() {
    assert_eq!(
        level_from_words("could not compile `x` due to 2 previous errors"),
        Level::Error
    );
    assert_eq!(level_from_words("warning: unused variable"), Level::Warn);
    assert_eq!(level_from_words("Compiling memchr v2.8.3"), Level::None);
    // apt's and lintian's one-letter tags, and the notes that explain a warning.
    assert_eq!(
        level_from_words("W: mc: uses-dpkg-database-directly [usr/lib/mc/extfs.d/debd]"),
        Level::Warn
    );
    assert_eq!(
        level_from_words("E: Unable to locate package foo"),
        Level::Error
    );
    assert_eq!(
        level_from_words("N:   A manual page provoked warnings or errors from man."),
        Level::None
    );
}

#[test]
fn a_stated_severity_outweighs_the_words_of_its_message() {
    // ShellCheck: the finding's own severity, then a message that says "error".
    assert_eq!(
        level_from_words(
            "^-- SC2249 (info): Consider adding a default *) case, even if it just exits with error."
        ),
        Level::None
    );
    assert_eq!(
        level_from_words("    ^-- SC1075 (error): Use 'elif' instead of 'else if'"),
        Level::Error
    );
    assert_eq!(
        level_from_words("x.c:3:1: warning: implicit declaration of function 'error'"),
        Level::Warn
    );
    assert_eq!(
        level_from_words("note: the error is raised here"),
        Level::None
    );
    // Words that are not tags still count.
    assert_eq!(
        level_from_words("the info page failed to load"),
        Level::Error
    );
}

#[test]
fn error_inside_a_path_or_identifier_is_not_a_level() {
    assert_eq!(
        level_from_words("-rw-r--r-- 1 root root 4096 test_indexerrors.py"),
        Level::None
    );
    assert_eq!(
        level_from_words("tests/test_errors.py::test_ok PASSED"),
        Level::None
    );
    assert_eq!(level_from_words("src/error.rs | 12 ++--"), Level::None);
    assert_eq!(level_from_words("use std::io::ErrorKind;"), Level::None);
    assert_eq!(
        level_from_words("-rw-r--r-- 1 root root 1936 Jul 24  2006 389-exception"),
        Level::None
    );
    assert_eq!(level_from_words("an error occurred"), Level::Error);
    assert_eq!(level_from_words("error - connection reset"), Level::Error);
}

#[test]
fn quantities_compare_across_suffixes() {
    assert_eq!(parse_quantity("4.0K"), Some(4000.0));
    assert!(parse_quantity("2.5M") > parse_quantity("900K"));
    assert_eq!(parse_quantity("0.3874752"), Some(0.3874752));
    assert_eq!(parse_quantity("(12)"), Some(12.0));
    assert_eq!(parse_quantity("v1.2"), None);
    assert_eq!(parse_quantity("node_modules"), None);
}

#[test]
fn quantities_read_counts_grouped_in_thousands() {
    assert_eq!(parse_quantity("1,204,330"), Some(1_204_330.0));
    assert_eq!(parse_quantity("12,345.5"), Some(12_345.5));
    // Commas that group no thousands are a list, not a number.
    assert_eq!(parse_quantity("1,2,3"), None);
    assert_eq!(parse_quantity("1234,567"), None);
}

#[test]
fn raised_exceptions_are_errors() {
    assert_eq!(
        level_from_words("E       TypeError: unsupported operand"),
        Level::Error
    );
    assert_eq!(
        level_from_words("E   AssertionError: assert 'a' == 'b'"),
        Level::Error
    );
    // Node's assertion with its error code (mocha's failure detail).
    assert_eq!(
        level_from_words("      AssertionError [ERR_ASSERTION]: month"),
        Level::Error
    );
    assert_eq!(level_from_words("see [ERR_X]: no"), Level::None);
}

#[test]
fn tree_characters_count_as_indentation() {
    assert!(indent_of("│ │ └── semver@5.7.2") > indent_of("├─┬ chai@4.3.7"));
}

#[test]
fn a_line_an_arrow_points_out_is_a_warning() {
    // A stub diff's line that failed, marked at its end with what is wrong there.
    assert_eq!(
        level_from_words(
            "X-Terminal-Id [matches] : T[0-9]+     | X-Terminal-Id: TX     <<<<< Header does not match"
        ),
        Level::Warn
    );
    // A merge conflict's marker starts its line; a bare arrow says nothing.
    assert_eq!(level_from_words("<<<<<<< HEAD"), Level::None);
    assert_eq!(level_from_words("value << 3 <<< shifted"), Level::None);
    assert_eq!(level_from_words("left column    <<<<<"), Level::None);
}
