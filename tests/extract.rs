//! The extractive compressor on real tool outputs from the corpus, one kind at a time, and on
//! arbitrary input.

use std::path::PathBuf;

use condense::TokenCounter;
use condense::methods::extract::{ContentKind, Hints, extract, extract_with_stats};
use proptest::prelude::*;

/// The input of dev case `name` (`input.txt` or `input.json`).
fn corpus_input(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/dev")
        .join(name);
    ["input.txt", "input.json"]
        .iter()
        .find_map(|f| std::fs::read_to_string(dir.join(f)).ok())
        .unwrap_or_else(|| panic!("corpus case {} is missing", dir.display()))
}

fn counter() -> TokenCounter {
    TokenCounter::default()
}

#[test]
fn log_keeps_errors_folds_repeats_and_states_counts() {
    let input = corpus_input("09-zookeeper-errors");
    let out = extract_with_stats(&input, &Hints::new(), 1500, &counter());
    assert_eq!(out.stats.kind, ContentKind::Log);
    assert!(counter().count(&out.text) <= 1500);
    assert!(out.text.starts_with("[log: "), "no overview line");
    let errors_in = input.lines().filter(|l| l.contains(" - ERROR ")).count();
    let errors_out = out.text.lines().filter(|l| l.contains(" - ERROR ")).count();
    assert!(
        errors_in > 0 && errors_out >= errors_in.min(10),
        "{errors_out} of {errors_in} ERROR lines kept"
    );
    assert!(out.text.contains(" similar omitted]"), "no folded repeats");
}

#[test]
fn json_keeps_the_schema_and_the_one_failed_record_without_a_query() {
    let input = corpus_input("03-gh-workflow-runs-failure");
    let out = extract_with_stats(&input, &Hints::new(), 2000, &counter());
    assert_eq!(out.stats.kind, ContentKind::Json);
    assert!(out.stats.tokens <= 2000);
    assert!(out.text.contains("workflow_runs: 30 records; keys: id:int"));
    assert!(out.text.contains(r#""conclusion":"failure""#));
    assert!(out.text.contains("items omitted …]"));
}

#[test]
fn json_lines_keep_compiler_errors() {
    let input = corpus_input("19-cargo-build-json-errors");
    let out = extract_with_stats(&input, &Hints::new(), 2000, &counter());
    assert_eq!(out.stats.kind, ContentKind::JsonLines);
    assert!(out.stats.tokens <= 2000);
    assert!(out.text.contains(r#""reason":"compiler-message""#));
    assert!(out.text.contains("error[E0599]"));
}

#[test]
fn command_output_keeps_the_failure_summary_without_a_query() {
    let input = corpus_input("33-cargo-build-verbose-errors");
    let out = extract(&input, &Hints::new(), 1000, &counter());
    assert!(counter().count(&out) <= 1000);
    assert!(
        out.contains("error: could not compile `grep-printer` (lib) due to 11 previous errors")
    );
    assert!(out.contains("error[E0"));
}

#[test]
fn command_output_keeps_the_tree_path_to_a_queried_package() {
    let input = corpus_input("29-npm-ls-readability");
    let hints = Hints::new().with_query("Which packages pull in lru-cache@4.1.5?");
    let out = extract(&input, &hints, 800, &counter());
    let line = out.lines().position(|l| l.contains("lru-cache@4.1.5"));
    let line = line.unwrap_or_else(|| panic!("lru-cache@4.1.5 not kept:\n{out}"));
    // Its parent in the tree comes before it, less indented.
    assert!(
        out.lines()
            .take(line)
            .any(|l| l.contains("editorconfig@0.15.3"))
    );
}

#[test]
fn markdown_keeps_the_heading_of_a_kept_passage() {
    let input = corpus_input("07-requests-history-cves");
    let hints = Hints::new().with_query("Which release fixed CVE-2018-18074?");
    let out = extract_with_stats(&input, &hints, 500, &counter());
    assert_eq!(out.stats.kind, ContentKind::Markdown);
    let text = out.text;
    let heading = text
        .find("2.20.0 (2018-10-18)")
        .unwrap_or_else(|| panic!("heading missing:\n{text}"));
    let fact = text
        .find("(CVE-2018-18074)")
        .unwrap_or_else(|| panic!("passage missing:\n{text}"));
    assert!(heading < fact);
}

#[test]
fn html_becomes_text_with_headings_and_no_scripts() {
    let input = corpus_input("15-wikipedia-mozilla-html");
    let hints = Hints::new().with_query("When did Brendan Eich step down as CEO?");
    let out = extract_with_stats(&input, &hints, 1000, &counter());
    assert_eq!(out.stats.kind, ContentKind::Html);
    assert!(out.stats.tokens <= 1000);
    assert!(!out.text.contains("<script") && !out.text.contains("mw.config"));
    assert!(
        out.text
            .lines()
            .any(|l| l.starts_with("# ") || l.starts_with("## "))
    );
    assert!(
        out.text
            .contains("Eich voluntarily stepped down on April 3, 2014")
    );
}

#[test]
fn code_keeps_the_queried_lines_and_their_enclosing_scope() {
    let input = corpus_input("23-readability-js-retry");
    let hints =
        Hints::new().with_query("what happens when the text is shorter than _charThreshold?");
    let out = extract_with_stats(&input, &hints, 1000, &counter());
    assert_eq!(out.stats.kind, ContentKind::Code);
    let text = out.text;
    let at = text.find("if (textLength < this._charThreshold) {");
    let at = at.unwrap_or_else(|| panic!("line missing:\n{text}"));
    // Some less indented line that opens a scope comes before it.
    let indent = |l: &str| l.len() - l.trim_start().len();
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_indent = indent(text[line_start..].lines().next().unwrap_or_default());
    assert!(
        text[..line_start]
            .lines()
            .any(|l| l.trim_end().ends_with('{') && indent(l) < line_indent),
        "no enclosing scope:\n{text}"
    );
}

#[test]
fn csv_keeps_the_header_and_the_extreme_row_without_a_query() {
    let input = corpus_input("35-ripgrep-bench-csv");
    let out = extract_with_stats(&input, &Hints::new(), 600, &counter());
    assert_eq!(out.stats.kind, ContentKind::Csv);
    let header = input.lines().next().unwrap_or_default();
    assert!(out.text.lines().any(|l| l == header), "header missing");
    let slowest = input
        .lines()
        .skip(1)
        .max_by(|a, b| {
            let duration = |l: &str| {
                l.split(',')
                    .nth(5)
                    .and_then(|d| d.parse::<f64>().ok())
                    .unwrap_or(0.0)
            };
            duration(a).total_cmp(&duration(b))
        })
        .unwrap_or_default();
    assert!(
        out.text.lines().any(|l| l == slowest),
        "slowest row {slowest} missing"
    );
}

#[test]
fn tool_arguments_steer_the_choice() {
    let input = corpus_input("21-ripgrep-grep-binary");
    let arguments = serde_json::json!({"pattern": "should_binary_quit"});
    let hints = Hints::new().with_arguments(&arguments);
    let out = extract(&input, &hints, 300, &counter());
    assert!(out.contains(
        "crates/searcher/src/searcher/glue.rs:90:    fn should_binary_quit(&self) -> bool {"
    ));
}

#[test]
fn same_input_same_bytes() {
    let input = corpus_input("01-hdfs-block-replication");
    let hints = Hints::new().with_query("which blocks were transferred?");
    let first = extract(&input, &hints, 1200, &counter());
    let second = extract(&input, &hints, 1200, &counter());
    assert_eq!(first, second);
}

#[test]
fn malformed_json_is_handled_as_text() {
    let input = corpus_input("03-gh-workflow-runs-failure");
    let broken = &input[..input.len() / 3];
    let out = extract_with_stats(broken, &Hints::new(), 700, &counter());
    assert_ne!(out.stats.kind, ContentKind::Json);
    assert!(out.stats.tokens <= 700 && counter().count(&out.text) <= 700);
}

#[test]
fn input_within_budget_is_returned_unchanged() {
    let text = "one line\nanother line\n";
    let out = extract_with_stats(text, &Hints::new(), 100, &counter());
    assert!(out.stats.unchanged);
    assert_eq!(out.text, text);
}

/// An API dump in the shape documentation tools write: modules of classes of functions, each a
/// level of `members`, each function with its parameters and a docstring.
fn api_dump() -> String {
    let function = |name: &str, params: &[&str]| {
        let params: Vec<_> = params
            .iter()
            .map(|p| serde_json::json!({"name": p, "kind": "positional or keyword", "annotation": {"cls": "ExprName", "name": "int"}, "default": {"cls": "ExprName", "name": format!("DEFAULT_{}", p.to_uppercase())}}))
            .collect();
        serde_json::json!({"kind": "function", "name": name, "lineno": 25, "analysis": "static", "runtime": true,
            "docstring": {"lineno": 30, "value": format!("{name} does its work; every argument is described in the module's guide, which lists its range and its effect")},
            "parameters": params})
    };
    let class = |name: &str| {
        let members: serde_json::Map<_, _> = [
            "__init__",
            "hash",
            "verify",
            "identify",
            "check_needs_rehash",
            "encode",
        ]
        .iter()
        .map(|f| {
            (
                f.to_string(),
                function(f, &["self", "rounds", "memory_cost"]),
            )
        })
        .collect();
        serde_json::json!({"kind": "class", "name": name, "analysis": "static", "filepath": format!("/srv/venv/lib/python3.11/site-packages/vault/hashers/{}.py", name.to_lowercase()), "members": members})
    };
    let modules: serde_json::Map<_, _> = ["Scrypt", "Bcrypt", "Pbkdf2", "Argon"]
        .iter()
        .map(|c| (c.to_lowercase(), serde_json::json!({"kind": "module", "name": c.to_lowercase(), "filepath": "/srv/venv/lib/python3.11/site-packages/vault/hashers/__init__.py", "members": {format!("{c}Hasher"): class(&format!("{c}Hasher"))}})))
        .collect();
    serde_json::to_string_pretty(&serde_json::json!({"vault": {"kind": "module", "name": "vault", "members": {"hashers": {"kind": "module", "name": "hashers", "members": modules}}}})).unwrap()
}

#[test]
fn a_deep_tree_says_each_path_once_and_its_context_briefly() {
    let input = api_dump();
    let hints = Hints::new()
        .with_query("which parameters does ArgonHasher.__init__ take, and their defaults?");
    let out = extract_with_stats(&input, &hints, 700, &counter());
    assert_eq!(out.stats.kind, ContentKind::Json);
    assert!(counter().count(&out.text) <= 700);
    // The parameters asked for, each under its parent, by what its path adds: no line repeats
    // the path of the line it is under.
    for step in [".ArgonHasher: {", ".__init__: {", ".parameters: 3 records"] {
        assert!(
            out.text
                .lines()
                .any(|l| l.starts_with("    ") && l.trim_start().starts_with(step)),
            "{step}:\n{}",
            out.text
        );
    }
    assert!(!out.text.contains("members.__init__"), "{}", out.text);
    for default in ["DEFAULT_ROUNDS", "DEFAULT_MEMORY_COST"] {
        assert!(out.text.contains(default), "{default} lost:\n{}", out.text);
    }
    // Functions kept only to frame their parameters' schema show their short members only, their
    // name first; what every function repeats (`"kind": "function"`) is said once, above them.
    assert!(
        out.text.lines().any(|l| {
            l.trim_start().starts_with(".hash: {\"name\": \"hash\",") && l.ends_with(",…}")
        }),
        "{}",
        out.text
    );
}

/// An issue list in the shape a code-hosting API returns: records big enough to be rows of a
/// table, each with a long body only the whole record shows.
fn issue_list(count: usize) -> String {
    let issues: Vec<serde_json::Value> = (0..count)
        .map(|i| {
            serde_json::json!({
                "id": 90_000 + i,
                "number": i,
                "title": format!("Parser rejects input file {i} with a trailing comma"),
                "state": if i % 3 == 0 { "open" } else { "closed" },
                "html_url": format!("https://example.org/project/issues/{i}"),
                "user": {"login": format!("reporter{i}"), "type": "User"},
                "created_at": format!("2024-03-{:02}T10:00:00Z", i % 28 + 1),
                "body": format!(
                    "Steps to reproduce issue {i}: {}",
                    "run the parser on the attached sample and read the message it prints. "
                        .repeat(6)
                ),
            })
        })
        .collect();
    serde_json::to_string_pretty(&issues).unwrap()
}

#[test]
fn records_that_all_fit_as_rows_leave_no_room_unused() {
    let input = issue_list(20);
    let budget = 2000;
    assert!(counter().count(&input) > budget);
    let out = extract_with_stats(&input, &Hints::new(), budget, &counter());
    assert_eq!(out.stats.kind, ContentKind::Json);
    assert!(
        out.stats.omitted_units == 0,
        "every record is a row: {}",
        out.text
    );
    let tokens = counter().count(&out.text);
    assert!(tokens <= budget, "{tokens} tokens over {budget}");
    assert!(
        tokens * 10 >= budget * 9,
        "{tokens} tokens, under 90% of {budget}"
    );
    // Every row is still there; the room went to records shown whole, bodies and all.
    for i in 0..20 {
        let url = format!("https://example.org/project/issues/{i}");
        assert!(out.text.contains(&url), "{url} missing: {}", out.text);
    }
    assert!(
        out.text.contains("Steps to reproduce issue"),
        "{}",
        out.text
    );
}

fn binary_looking() -> impl Strategy<Value = String> {
    proptest::collection::vec(any::<u8>(), 0..6000)
        .prop_map(|b| String::from_utf8_lossy(&b).into_owned())
}

fn structured_looking() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        "[a-z ]{0,40}",
        "20[0-9]{2}-0[1-9]-1[0-9] 1[0-9]:[0-5][0-9]:[0-5][0-9] (INFO|WARN|ERROR) [a-z0-9 =]{0,60}",
        "\\{\"id\": ?[0-9]{1,4}, \"s\": \"[a-z]{0,10}\"\\},?",
        "(#|##|-|\\*|  ) ?[A-Za-z0-9 ]{0,30}",
        "[a-z0-9]{1,8},[0-9.]{1,8},[a-z ]{0,10}",
        "<(p|h2|li|div|script)>[^<]{0,30}(</(p|h2|li|div|script)>)?",
        "[ \t│├└─]{0,12}[^\n]{0,40}",
    ];
    proptest::collection::vec(line, 0..400).prop_map(|lines| lines.join("\n"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn any_input_fits_any_budget_of_at_least_50(
        text in prop_oneof![binary_looking(), structured_looking()],
        budget in 50usize..1500,
        query in proptest::option::of("[a-zA-Z0-9_. '\"-]{0,40}"),
    ) {
        let counter = TokenCounter::default();
        let mut hints = Hints::new();
        if let Some(q) = query.as_deref() {
            hints = hints.with_query(q);
        }
        let out = extract_with_stats(&text, &hints, budget, &counter);
        prop_assert!(counter.count(&out.text) <= budget);
        prop_assert_eq!(out.stats.tokens, counter.count(&out.text));
        // The output is a `String`, so valid UTF-8 by construction; it must also be stable.
        prop_assert_eq!(extract(&text, &hints, budget, &counter), out.text);
    }
}
