use super::*;

#[test]
fn a_line_splits_into_the_same_tokens_by_bytes_as_by_characters() {
    let by_chars = |line: &str| -> Vec<String> {
        line.split(|c: char| c.is_whitespace() || c == '=' || c == '|')
            .map(str::to_owned)
            .collect()
    };
    for line in [
        " requests/sessions.py |  12 +++---",
        "size=4096\tmtime=1700000000 \u{b}x",
        "größe=4K | Zeit\u{a0}12ms",
        "",
    ] {
        let tokens: Vec<String> = tokens(line).map(str::to_owned).collect();
        assert_eq!(tokens, by_chars(line), "{line:?}");
    }
}

#[test]
fn a_title_over_a_rule_is_the_context_of_the_lines_under_it() {
    // djLint: each file's path, ruled off, over its findings.
    let text = "Linting 2/2 files\n\n\
                admin/base.html\n────────────────\nH021 87:4 Inline styles should be avoided.\n\
                T001 94:16 Variables should be wrapped in a whitespace.\n\n\
                admin/edit.html\n────────────────\nH013 40:16 Img tag should have an alt attribute.\n";
    let doc = build(text, Style::Text);
    let context = |start: &str| {
        let u = (0..doc.units.len())
            .find(|&u| doc.text(u).starts_with(start))
            .unwrap();
        doc.units[u].parent.get().map(|p| doc.text(p))
    };
    assert_eq!(context("T001 94:16"), Some("admin/base.html"));
    assert_eq!(context("H013 40:16"), Some("admin/edit.html"));
    // A table's header, ruled column by column, heads nothing.
    let table = build("\nName   Size\n----   ----\nabc    12\n", Style::Text);
    assert_eq!(table.units[2].parent.get(), None);
}

#[test]
fn nested_lines_have_their_parent_as_context() {
    let text = "root@1\n├─┬ a@1\n│ └── b@2\n└── c@3\n";
    let doc = build(text, Style::Text);
    assert_eq!(doc.units[2].parent.get(), Some(1));
    assert_eq!(doc.units[1].parent.get(), Some(0));
    assert_eq!(doc.units[3].parent.get(), Some(0));
}

#[test]
fn records_start_at_their_key_word() {
    let text = "commit a\nDate: x\n\n    msg a\n\ncommit b\nDate: y\n\n    msg b\n\ncommit c\n";
    let doc = build(text, Style::Text);
    // "msg b" is nested under "Date: y", which belongs to "commit b".
    assert_eq!(
        doc.units[5].parent.get().map(|p| doc.text(p)),
        Some("Date: y")
    );
    assert_eq!(
        doc.units[5]
            .parent
            .get()
            .and_then(|p| doc.units[p].parent.get()),
        Some(3)
    );
    assert_eq!(doc.units[5].block, doc.units[3].block);
}

#[test]
fn records_of_colon_separated_fields_start_at_their_type() {
    // `gpg --show-keys --with-colons`: a `pub` record with its fingerprint and user id.
    let text = "pub:-:4096:1:B7C5D7D6350947F8:1674301461:1926589461::-:::scSC::::::23::0:\n\
fpr:::::::::B8B80B5B623EAB6AD8775C45B7C5D7D6350947F8:\n\
uid:-::::1674301461::100567F0EA7B90BC2ED03949BE60B7A6CFD8619F::Debian Archive Automatic Signing Key (12/bookworm) <ftpmaster@debian.org>::::::::::0:\n\
pub:-:4096:1:254CF3B5AEC0A8F0:1674301533:1926589533::-:::scSC::::::23::0:\n\
fpr:::::::::05AB90340C0C5E797F44A8C8254CF3B5AEC0A8F0:\n\
uid:-::::1674301533::EDCF55C841BFBBB870C829A270ED9B746FE39969::Debian Security Archive Automatic Signing Key (12/bookworm) <ftpmaster@debian.org>::::::::::0:\n\
pub:-:255:22:762F67A0B2C39DE4:1742842581:1995130581::-:::scSC:::::ed25519:::0:\n\
fpr:::::::::41587F7DB8C774BCCF131416762F67A0B2C39DE4:\n";
    let doc = build(text, Style::Text);
    assert_eq!(doc.units[1].parent.get(), Some(0));
    assert_eq!(doc.units[2].block, doc.units[0].block);
    assert_ne!(doc.units[3].block, doc.units[2].block);
    assert_eq!(doc.units[4].parent.get(), Some(3));
    assert_eq!(first_word("INFO:root:started"), Some("INFO:root:started"));
    assert_eq!(first_word("Package: zlib1g"), Some("Package:"));
}

#[test]
fn definitions_found_by_grep_gain_priority() {
    let text = "src/a.rs:10:    pub(crate) fn detect(x: u8) {\nsrc/a.rs:20:    detect(1);\n";
    let doc = build(text, Style::Text);
    assert!(doc.units[0].prior > doc.units[1].prior);
}

#[test]
fn a_located_message_under_an_error_report_concludes_it() {
    let ruler = "-".repeat(60);
    let text = format!(
        "Error compiling Cython file:\n{ruler}\n...\n        return m\n               \
         ^\n{ruler}\na.pyx:77:15: undeclared name not builtin: m\n\n\
         a.pyx:80:1: note: this one stands alone\n"
    );
    let doc = build(&text, Style::Text);
    // The message is the error's: kept with its first line, an error itself.
    assert_eq!(doc.units[0].parent.get(), Some(6));
    assert_eq!(doc.units[6].level, Level::Error);
    // A located line after a blank one concludes nothing.
    assert_ne!(doc.units[7].level, Level::Error);
}

#[test]
fn each_diagnostic_is_a_block_with_its_snippet() {
    let text = "a.c:1:2: warning: unused parameter 'x'\n    1 | int f(int x) {\n      |         ^\n\
a.c:9:5: warning: initialization discards 'const' qualifier\n    9 |     char *p = g();\n      |         ^\n";
    let doc = build(text, Style::Text);
    assert!(is_diagnostic_head(doc.text(3)));
    assert_ne!(doc.units[1].block, doc.units[4].block);
    assert_eq!(doc.units[4].block, doc.units[3].block);
    assert_eq!(doc.units[4].parent.get(), Some(3));
    assert!(doc.units[4].prior > 0.0);
}

#[test]
fn a_rustc_diagnostic_keeps_its_location() {
    let text = "warning: unnecessary boolean `not` operation\n   --> src/lib.rs:951:13\n    |\n951 |             if !found {\n    |             ^^^^^^^^^\n";
    let doc = build(text, Style::Text);
    assert_eq!(doc.text(1), "   --> src/lib.rs:951:13");
    // The warning's context is its location, which takes the context the warning had.
    assert_eq!(doc.units[0].parent.get(), Some(1));
    assert_eq!(doc.units[1].parent.get(), None);
}

#[test]
fn directory_lines_of_a_recursive_listing_head_their_entries() {
    let text = "./src:\ntotal 8\n-rw-r--r-- 1 u u 10 lib.rs\n\n./tests:\ntotal 4\n-rw-r--r-- 1 u u 20 it.rs\n";
    let doc = build(text, Style::Text);
    assert_eq!(
        doc.units[2].parent.get().map(|p| doc.text(p)),
        Some("./src:")
    );
    assert_eq!(
        doc.units[5].parent.get().map(|p| doc.text(p)),
        Some("./tests:")
    );
}

#[test]
fn each_thread_of_a_debugger_s_backtraces_heads_its_frames() {
    // `thread apply all bt full` of gdb: a frame waiting on a lock is known by its thread.
    let text = "Thread 5 (Thread 0x7ffff65c56c0 (LWP 25204) \"relay\"):\n\
                #0  futex_wait (futex_word=0x5555555580e0 <statlock>) at futex-internal.h:146\n\
                \x20       __ret = -512\n\
                #1  0x00007ffff7e58482 in lll_mutex_lock_optimized () at pthread_mutex_lock.c:48\n";
    let doc = build(text, Style::Text);
    for frame in [1, 3] {
        assert_eq!(
            doc.units[frame].parent.get().map(|p| doc.text(p)),
            Some("Thread 5 (Thread 0x7ffff65c56c0 (LWP 25204) \"relay\"):")
        );
    }
    // A long sentence ending in a colon is no heading.
    assert!(!is_heading(
        "The following NEW packages will be installed and then configured for you now:"
    ));
}

#[test]
fn a_gcc_diagnostic_keeps_the_function_it_is_in() {
    let text = "r/_regex.c: In function ‘retry_fuzzy_match_item’:\n\
                r/_regex.c:120:20: warning: comparison is always false [-Wtype-limits]\n\
                \x20 120 |     if (x < 0)\n\
                r/_regex.c:130:5: warning: unused variable ‘y’ [-Wunused-variable]\n\
                r/_regex.c: At top level:\n\
                r/_regex.c:900:1: warning: cast between incompatible function types\n";
    let doc = build(text, Style::Text);
    assert_eq!(doc.units[1].parent, Some(0).into());
    assert_eq!(doc.units[3].parent, Some(0).into());
    assert_eq!(doc.units[5].parent, Some(4).into());
    assert!(!is_compiler_context("note: In function"));
}

#[test]
fn the_lines_under_a_closing_rule_are_a_summary() {
    let text = "a.py:1:0: C0114: Missing module docstring (missing-module-docstring)\n\
                a.py:9:4: E0602: Undefined variable 'x' (undefined-variable)\n\
                \n\
                -----------------------------------\n\
                Your code has been rated at 8.16/10\n";
    let doc = build(text, Style::Text);
    assert!(doc.units[3].prior >= doc.units[1].prior, "{:?}", doc.units);
    assert!(is_horizontal_rule("==========================="));
    assert!(!is_horizontal_rule("-=-=-=-=-=-=-=-="));
    assert!(!is_horizontal_rule("-----"));
}

#[test]
fn an_unindented_line_after_indented_ones_starts_a_block() {
    let text = "pause 1, 0.03 secs\n   [Heap: 1M->0M]\npause 2, 0.38 secs\n   [Heap: 3M->2M]\n";
    let doc = build(text, Style::Text);
    assert_eq!(doc.units[0].block, doc.units[1].block);
    assert_ne!(doc.units[1].block, doc.units[2].block);
    assert_eq!(doc.units[2].block, doc.units[3].block);
}

#[test]
fn pytest_cause_lines_are_errors() {
    let text = "    def test_x():\n>       assert f() == 2\nE       assert 1 == 2\nok\n";
    let doc = build(text, Style::Text);
    assert_eq!(doc.units[2].level, Level::Error);
}

#[test]
fn numbers_of_lines_of_one_template_form_columns() {
    let mut text = String::new();
    for (i, secs) in ["0.03", "0.38", "0.02", "0.27", "0.05"].iter().enumerate() {
        text.push_str(&format!("{i}.5: [GC pause (young), {secs} secs]\n"));
    }
    let doc = build(&text, Style::Text);
    let durations = doc.fields.iter().find(|f| {
        f.iter()
            .any(|(_, v)| matches!(v, FieldValue::Number(x) if (x - 0.38).abs() < 1e-9))
    });
    assert_eq!(durations.map(|f| f.len()), Some(5));
}

#[test]
fn lines_after_an_error_gain_priority() {
    let text = "ok\nerror[E0308]: mismatched types\n  --> src/a.rs:1:2\nok\n";
    let doc = build(text, Style::Text);
    assert!(doc.units[2].prior > 0.0);
    assert!(doc.units[1].prior >= 3.0);
}

#[test]
fn the_detail_an_error_introduces_after_a_blank_line_is_the_error_s() {
    // node's assert, as bun and mocha print it: the values compared come after a blank line.
    let text = "878 |   assert.strictEqual(a, b);\n\
                AssertionError: Expected values to be strictly equal:\n\
                \n\
                '-3i' !== '3i'\n\
                \n\
                      at strictEqual (node:assert:181:14)\n\
                (fail) Complex > sqrt [0.2ms]\n\
                \n\
                done: all files read\n\
                \n\
                next line\n\
                last line\n";
    let doc = build(text, Style::Text);
    let detail = (0..doc.units.len())
        .find(|&i| doc.text(i) == "'-3i' !== '3i'")
        .unwrap();
    assert!(
        doc.units[detail].prior >= 3.0,
        "{}",
        doc.units[detail].prior
    );
    // A line that is no error does not introduce anything across a blank line.
    let next = doc.units.len() - 2;
    assert_eq!(doc.text(next), "next line");
    assert_eq!(doc.units[next].prior, 0.0);
}

#[test]
fn a_checkers_total_outranks_each_error_it_counts() {
    let mut text = String::new();
    for i in 0..40 {
        text.push_str(&format!(
            "pkg/mod.py:{i}: error: Function is missing a type annotation  [no-untyped-def]\n"
        ));
    }
    // The total, and a line after it: it outranks the errors by being the total, not the
    // last line.
    text.push_str("Found 40 errors in 1 file (checked 3 source files)\nexit status 1\n");
    let doc = build(&text, Style::Text);
    let most = doc.units[..40].iter().map(|u| u.prior).fold(0.0, f32::max);
    assert!(
        doc.units[40].prior > most,
        "{} <= {most}",
        doc.units[40].prior
    );
}
