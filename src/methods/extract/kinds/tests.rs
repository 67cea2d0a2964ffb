//! Every kind keeps a rare exact term the query names, with its nearest structural context,
//! wherever it sits: in a unit of its own or mid-way in a line far over the size cap.

use crate::TokenCounter;
use crate::methods::extract::{ContentKind, Hints, extract_with_stats};

/// The rare exact term every sample hides once, deep in its body.
const TERM: &str = "zqx-7731";

/// Every kind the samples are written in.
const KINDS: [ContentKind; 11] = [
    ContentKind::Json,
    ContentKind::Diff,
    ContentKind::Html,
    ContentKind::Log,
    ContentKind::Csv,
    ContentKind::Markdown,
    ContentKind::Code,
    ContentKind::Config,
    ContentKind::Yaml,
    ContentKind::Xml,
    ContentKind::Text,
];

/// A text of kind `kind` with `term` (a value holding [`TERM`]) at about two thirds of the
/// way, under `context`.
fn sample(kind: ContentKind, term: &str) -> (String, &'static str) {
    let mut text = String::new();
    let n = 150;
    let at = n * 2 / 3;
    match kind {
        ContentKind::Log => {
            for i in 0..n {
                let what = if i == at { term } else { "batch" };
                text.push_str(&format!(
                    "2024-03-01 12:{:02}:{:02} INFO worker-{i} processed {what} {i} in 12ms\n",
                    i / 60,
                    i % 60
                ));
            }
            (text, "")
        }
        ContentKind::Csv => {
            text.push_str("id,name,status,duration_ms\n");
            for i in 0..n {
                let name = if i == at {
                    term.to_owned()
                } else {
                    format!("job{i}")
                };
                text.push_str(&format!("{i},{name},ok,{}\n", 100 + i));
            }
            (text, "id,name,status,duration_ms")
        }
        ContentKind::Markdown => {
            text.push_str("# Guide\n\n");
            for i in 0..n / 3 {
                text.push_str(&format!("## Part {i}\n\nThe part {i} explains one setting of the service and how it is used day to day.\n\n"));
                if i == at / 3 {
                    text.push_str(&format!("Set the token to {term} before the start.\n\n"));
                }
            }
            (text, "## Part 33")
        }
        ContentKind::Code => {
            for i in 0..n / 3 {
                let value = if i == at / 3 { term } else { "plain" };
                text.push_str(&format!("fn handler_{i}(input: &str) -> String {{\n    let value = \"{value}\";\n    format!(\"{{input}}{{value}}\")\n}}\n\n"));
            }
            (text, "fn handler_33(input: &str) -> String {")
        }
        ContentKind::Config => {
            for i in 0..n / 2 {
                let value = if i == at / 2 { term } else { "plain" };
                text.push_str(&format!(
                    "[server{i}]\nhost = \"10.0.0.{i}\"\ntoken = \"{value}\"\n\n"
                ));
            }
            (text, "[server50]")
        }
        ContentKind::Yaml => {
            text.push_str("items:\n");
            for i in 0..n / 3 {
                let value = if i == at / 3 { term } else { "plain" };
                text.push_str(&format!("- metadata:\n    name: pod-{i}\n  spec:\n    image: registry/app:{i}\n    token: {value}\n"));
            }
            (text, "pod-33")
        }
        ContentKind::Xml => {
            text.push_str("<suite>\n");
            for i in 0..n / 3 {
                let value = if i == at / 3 { term } else { "plain" };
                text.push_str(&format!(
                    "  <case name=\"case{i}\" time=\"0.{i}\"><note>{value}</note></case>\n"
                ));
            }
            text.push_str("</suite>\n");
            (text, "case33")
        }
        ContentKind::Json => {
            let records: Vec<serde_json::Value> = (0..n / 3)
                .map(|i| {
                    let value = if i == at / 3 { term } else { "plain" };
                    serde_json::json!({"name": format!("pod-{i}"), "uid": format!("{i:08x}-77aa-4bcd-9e0f-0123456789ab"),
                        "spec": {"image": format!("registry/app:{i}"), "token": value}})
                })
                .collect();
            let text = serde_json::to_string_pretty(&serde_json::json!({ "items": records }))
                .unwrap_or_default();
            (text, "pod-33")
        }
        ContentKind::Diff => {
            for i in 0..n / 5 {
                let value = if i == at / 5 { term } else { "plain" };
                text.push_str(&format!("diff --git a/src/m{i}.rs b/src/m{i}.rs\n--- a/src/m{i}.rs\n+++ b/src/m{i}.rs\n@@ -10,3 +10,3 @@ fn setup_{i}() {{\n     let a = 1;\n-    let v = \"old\";\n+    let v = \"{value}\";\n"));
            }
            (text, "@@ -10,3 +10,3 @@ fn setup_20() {")
        }
        ContentKind::Html => {
            text.push_str("<!DOCTYPE html>\n<html><body>\n");
            for i in 0..n / 3 {
                text.push_str(&format!("<h2>Part {i}</h2>\n<p>The part {i} explains one setting of the service and how it is used.</p>\n"));
                if i == at / 3 {
                    text.push_str(&format!(
                        "<p>Set the token to {term} before the start.</p>\n"
                    ));
                }
            }
            text.push_str("</body></html>\n");
            (text, "Part 33")
        }
        _ => {
            for i in 0..n / 3 {
                let value = if i == at / 3 { term } else { "plain" };
                text.push_str(&format!(
                    "Package: pkg{i}\nStatus: install ok installed\n Note: {value}\n\n"
                ));
            }
            (text, "Package: pkg33")
        }
    }
}

/// Whatever the kind, a unit holding a rare exact term the query names is kept, with its
/// nearest structural context (the record, heading, header row or definition it is in).
#[test]
fn a_rare_query_term_is_kept_with_its_context_in_every_kind() {
    let counter = TokenCounter::default();
    for kind in KINDS {
        let (text, context) = sample(kind, TERM);
        let query = format!("what is set to {TERM}?");
        let hints = Hints::new().with_query(&query);
        let out = extract_with_stats(&text, &hints, 250, &counter);
        assert_eq!(
            out.stats.kind, kind,
            "{kind}: detected as {}",
            out.stats.kind
        );
        assert!(out.text.contains(TERM), "{kind}: term lost:\n{}", out.text);
        assert!(
            out.text.contains(context),
            "{kind}: context {context:?} lost:\n{}",
            out.text
        );
    }
}

/// About 20 KB of one line's worth of data (key/value pairs, as in a payload or a minified
/// bundle) with [`TERM`] half-way, after a word of its own.
fn long_value() -> String {
    let first: String = (0..600).map(|j| format!("part{j}=on, ")).collect();
    let second: String = (0..600).map(|j| format!("rest{j}=on, ")).collect();
    format!("{first}token {TERM} {second}")
}

/// The sample of `kind` holding `long`, condensed to `budget` tokens for a query naming
/// [`TERM`]; checks the budget and the detected kind, and gives the output with the sample's
/// context.
fn condense_long(
    kind: ContentKind,
    long: &str,
    budget: usize,
    counter: &TokenCounter,
) -> (crate::methods::extract::Extracted, &'static str) {
    let (text, context) = sample(kind, long);
    let query = format!("what is set to {TERM}?");
    let hints = Hints::new().with_query(&query);
    let out = extract_with_stats(&text, &hints, budget, counter);
    assert!(
        out.stats.tokens <= budget,
        "{kind}: {} tokens",
        out.stats.tokens
    );
    assert_eq!(
        out.stats.kind, kind,
        "{kind}: detected as {}",
        out.stats.kind
    );
    (out, context)
}

/// The same when the term sits mid-way in a line far over the size cap, in every kind whose
/// units are lines, entries, rows or paragraphs: the line's head (what it belongs to: the key,
/// timestamp or row) and a window around the term are kept, under the line's own structural
/// context.
#[test]
fn a_rare_query_term_mid_way_in_a_long_line_is_kept_with_its_context_in_every_kind() {
    let counter = TokenCounter::default();
    let long = long_value();
    let mut lost = Vec::new();
    // JSON, YAML and XML are read as a tree: a long string is rendered by its record, not cut
    // as a unit (see `json::render`); the next test covers them.
    let line_kinds = KINDS
        .into_iter()
        .filter(|k| !matches!(k, ContentKind::Json | ContentKind::Yaml | ContentKind::Xml));
    for kind in line_kinds {
        let (out, context) = condense_long(kind, &long, 250, &counter);
        for wanted in [TERM, context] {
            if !out.text.contains(wanted) {
                lost.push(format!("{kind}: {wanted:?} lost:\n{}", out.text));
            }
        }
        // The term is shown with its line's own head (the start of the value), not apart.
        if !out
            .text
            .lines()
            .any(|line| line.contains(TERM) && line.contains("part0=on"))
        {
            lost.push(format!(
                "{kind}: the term without its line's head:\n{}",
                out.text
            ));
        }
    }
    assert!(lost.is_empty(), "{}", lost.join("\n\n"));
}

/// The same for the kinds read as a tree (JSON, YAML, XML), where the long line is a string
/// value of one record among many: the record is singled out by the term and its string keeps
/// its head and a window on the term. A record is one unit there, so it needs a budget that
/// holds a record with its window beside the table of the others (1,000 tokens, not 250).
#[test]
fn a_rare_query_term_mid_way_in_a_long_string_is_kept_with_its_record_in_tree_kinds() {
    let counter = TokenCounter::default();
    let long = long_value();
    let mut lost = Vec::new();
    for kind in [ContentKind::Json, ContentKind::Yaml, ContentKind::Xml] {
        let (out, context) = condense_long(kind, &long, 1000, &counter);
        // The record's identity comes first (on the term's line, or as its parent line in the
        // XML record's own tags), and the term's line starts with the string's head.
        let at = out.text.find(TERM);
        let line = out.text.lines().find(|line| line.contains(TERM));
        let record = out.text.find(context);
        if !(line.is_some_and(|l| l.contains("part0=on")) && record.is_some_and(|r| Some(r) < at)) {
            lost.push(format!(
                "{kind}: the term without its record or head:\n{}",
                out.text
            ));
        }
    }
    assert!(lost.is_empty(), "{}", lost.join("\n\n"));
}

/// A listing without a header (`ls -l`, `dpkg-deb -c`): asked for the largest file, the
/// condensed listing keeps the line with the largest size, wherever it sits.
#[test]
fn a_listing_keeps_its_largest_entry_when_asked_for_it() {
    let mut listing = String::new();
    for i in 0..400 {
        let size = if i == 271 {
            375_893
        } else {
            200 + (i * 37) % 9000
        };
        listing.push_str(&format!(
            "-rw-r--r-- root/root {size:>9} 2025-01-03 11:15 ./usr/lib/pkg/module_{i}.py\n"
        ));
    }
    let hints = Hints::new().with_query("which is the largest file in the package, how big?");
    let out = extract_with_stats(&listing, &hints, 300, &TokenCounter::default()).text;
    assert!(out.contains("module_271.py"), "{out}");
}

/// A listing with a header (`unzip -lv`): its words name the columns, "the largest" ranks by
/// the one of sizes (not by a compressed size beside it), and the totals under a rule of
/// dashes are a line of their own.
#[test]
fn a_listing_s_header_names_its_columns_and_the_largest_ranks_by_its_length() {
    let mut listing = String::from(
        "Archive:  pkg-1.0-py3-none-any.whl\n Length   Method    Size  Cmpr    Date    Time   CRC-32   Name\n--------  ------  ------- ---- ---------- ----- --------  ----\n",
    );
    for i in 0..400 {
        // The largest file compresses well; files of larger compressed size come elsewhere.
        let (length, size) = if i == 271 {
            (142_315, 9_846)
        } else {
            (200 + (i * 37) % 9000, 3000 + (i * 53) % 19_000)
        };
        listing.push_str(&format!(
            "{length:>8}  Defl:N {size:>8}  61% 2025-12-08 17:02 b8177534  pkg/module_{i}.py\n"
        ));
    }
    listing.push_str("--------          -------  ---                            -------\n");
    listing.push_str(" 3721408          4506112  72%                            401 files\n");
    let hints = Hints::new().with_query(
        "which file is the largest (path, length and CRC-32), and how many files are there?",
    );
    let out = extract_with_stats(&listing, &hints, 300, &TokenCounter::default()).text;
    assert!(out.contains("module_271.py"), "{out}");
    assert!(out.contains("401 files"), "{out}");
}

/// A per-process sampler's listing (`pidstat -h`): a title line with numbers in it comes first,
/// and the header is commented (`# Time UID PID …`). The header still names the columns, so
/// asked for the most writes, the condensed listing keeps that row, though another column's
/// largest values sit elsewhere.
#[test]
fn a_listing_under_a_title_with_numbers_is_named_by_its_commented_header() {
    let mut listing = String::from(
        "Linux 6.1.0-28-amd64 (build-host) \t12/03/26 \t_x86_64_\t(2 CPU)\n\n\
         # Time        UID       PID    %usr %system   %wait    %CPU   kB_rd/s   kB_wr/s  Command\n",
    );
    for i in 0..300usize {
        let (usr, written) = match i {
            // The busiest process on the processor writes little.
            117 => (97.0, 12.0),
            // The writer is otherwise quiet.
            271 => (1.0, 88_412.0),
            _ => (((i * 7) % 60) as f64 / 2.0, ((i * 7919) % 9000) as f64),
        };
        listing.push_str(&format!(
            "09:{:02}:{:02}      101 {:>9} {usr:>7.2} {:>7.2} {:>7.2} {:>7.2} {:>9.2} {written:>9.2}  worker-{i}\n",
            50 + i / 60,
            i % 60,
            20_000 + i,
            ((i * 13) % 40) as f64 / 4.0,
            ((i * 11) % 30) as f64,
            usr + 2.0,
            ((i * 31) % 5000) as f64,
        ));
    }
    let hints = Hints::new().with_query("which process wrote the most kB_wr/s, and when?");
    let out = extract_with_stats(&listing, &hints, 200, &TokenCounter::default()).text;
    assert!(out.contains("worker-271"), "{out}");
}

/// A profile sorted by one column, largest first (`python -m cProfile -s tottime`): asked for
/// the most time in other words than the column's, the condensed profile keeps the top rows,
/// though each row's name makes it a line template of its own and another column's largest
/// values sit further down.
#[test]
fn a_listing_sorted_largest_first_ranks_by_its_sorted_column() {
    let mut profile = String::from(
        "         918273 function calls (901234 primitive calls) in 2.718 seconds\n\n   \
         Ordered by: internal time\n\n   \
         ncalls  tottime  percall  cumtime  percall filename:lineno(function)\n",
    );
    // Most functions' names are their own (`parse_gh`), so most rows are templates of their own.
    let words = ["parse", "emit", "walk", "split", "merge", "scan", "fold"];
    let letter = |k: usize| char::from(b'g' + (k % 20) as u8);
    for i in 0..300usize {
        let calls = 5_000 + (i * 7919) % 90_000;
        let own = (400.0 - i as f64) / 1000.0;
        // The most cumulative time is a caller's, far down the listing.
        let total = if i == 251 {
            2.701
        } else {
            own + ((i * 31) % 97) as f64 / 1000.0
        };
        // Numbered names are one template, whose rows alone would make columns of their own.
        let name = match words[i % words.len()] {
            "merge" => format!("merge_{i}"),
            word => format!("{word}_{}{}", letter(i / 20), letter(i)),
        };
        profile.push_str(&format!(
            "{calls:>9} {own:>8.3} {:>8.3} {total:>8.3} {:>8.3} module.py:{}({name})\n",
            own / calls as f64,
            total / calls as f64,
            10 + i,
        ));
    }
    let hints = Hints::new().with_query(
        "which functions are the most expensive on their own, and how often is merge called?",
    );
    let out = extract_with_stats(&profile, &hints, 150, &TokenCounter::default()).text;
    assert!(out.contains("(parse_gg)"), "{out}");
    assert!(out.contains("(merge_4)"), "{out}");
}

/// An access log: a quoted request and a bracketed time are one token each, so its status,
/// size and duration are columns; asked for the slowest request and the largest response,
/// the condensed log keeps both lines, though no header names the columns.
#[test]
fn an_access_log_keeps_its_slowest_request_and_largest_response() {
    let agents = [
        "curl/7.88.1",
        "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
        "python-requests/2.31.0",
    ];
    let words = [
        "copyright",
        "changelog.gz",
        "README",
        "examples",
        "NEWS.gz",
        "status",
    ];
    let mut log = String::new();
    for i in 0..900usize {
        let (path, status, bytes, seconds) = match i {
            271 => ("/gdb/check.tar".to_owned(), 200, 2_050_085, "0.001"),
            433 => ("/api/reports/q3".to_owned(), 200, 88, "2.000649"),
            _ => (
                format!("/pkg{}/{}", (i * 7919) % 301, words[(i * 31) % words.len()]),
                [200, 200, 404, 502][i % 4],
                500 + (i * 7919) % 90_000,
                "0",
            ),
        };
        log.push_str(&format!(
            "127.0.0.1 - - [27/Nov/2026:17:26:{:02} +0000] \"GET {path} HTTP/1.1\" {status} {bytes} \"-\" \"{}\" {seconds}\n",
            i % 60,
            agents[(i * 13) % agents.len()]
        ));
    }
    let hints = Hints::new().with_query(
        "From this access log: which request was the slowest (path and duration), and which response was the largest (path and size)?",
    );
    let out = extract_with_stats(&log, &hints, 500, &TokenCounter::default()).text;
    assert!(out.contains("/gdb/check.tar"), "{out}");
    assert!(out.contains("/api/reports/q3"), "{out}");
}

/// A link checker's report asked for its broken links: no word of the query ("broken") is on
/// the line that says one failed (`Result     Error: …`), and the words it does share ("page",
/// "Debian") are on every record. The failed record is kept whole: the page it is linked from
/// is in a line of its own.
#[test]
fn a_query_about_failures_keeps_the_rare_failed_record_whole() {
    let text = crate::methods::extract::tree::stanzas_tests::linkchecker_report(300, 211);
    let hints = Hints::new().with_query(
        "Which links of this Debian guide are broken, and on which page is each linked?",
    );
    let out = extract_with_stats(&text, &hints, 400, &TokenCounter::default()).text;
    assert!(
        out.contains("No such file or directory: '/srv/hb/sect.page211.html'"),
        "{out}"
    );
    assert!(
        out.contains("file:///srv/hb/chapter1.html, line 231, col 2843"),
        "{out}"
    );
}

/// A report page whose rows are data in its script (an application's shell) is read as its
/// text: the row the query names is kept, though the page's readable text is its title only.
#[test]
fn an_app_shell_page_is_read_as_the_data_its_scripts_hold() {
    let mut page = String::from(
        "<!DOCTYPE html><html><head><title>Coverage report</title></head><body><div id=\"app\"></div>\n<script>\nvar files = [\n",
    );
    for i in 0..300 {
        page.push_str(&format!(
            "  {{\"path\": \"src/module_{i}.rs\", \"covered\": {}, \"coverable\": 120}},\n",
            (i * 7) % 120
        ));
    }
    page.push_str("];\n</script></body></html>\n");
    let hints = Hints::new()
        .with_query("How many lines of src/module_217.rs are covered, out of how many?");
    let out = extract_with_stats(&page, &hints, 300, &TokenCounter::default());
    assert_eq!(out.stats.kind, ContentKind::Html);
    assert!(
        out.text.contains("src/module_217.rs\", \"covered\": 79"),
        "{}",
        out.text
    );
}

/// A profiler's report: its settings and totals come before its table, whose header is framed
/// by rules of dashes; each count is grouped in thousands and followed by its share in
/// parentheses, or is a bare `0`. Asked for the function with the most misses, the condensed
/// report keeps its row, far down a listing sorted by another column.
#[test]
fn a_report_table_after_its_settings_ranks_counts_with_their_shares() {
    let rule = "-".repeat(60);
    let mut report = format!("{rule}\n");
    for (i, setting) in ["L1 cache", "L2 cache", "L3 cache", "Sampling"]
        .iter()
        .enumerate()
    {
        report.push_str(&format!(
            "{setting}:  {} B, 64 B, {}-way\n",
            32768 << i,
            8 << i
        ));
    }
    report.push_str("Command:  ./bench --rounds 3\nThresholds:  0.1 100 100 100\n");
    let header = "Cycles               Stalls             Loads              Misses";
    report.push_str(&format!("{rule}\n{header}\n{rule}\n"));
    report
        .push_str("9,876,543,210 (100.0%) 1,234,567 (100.0%) 3,456,789 (100.0%) 98,765 (100.0%)\n");
    report.push_str(&format!("{rule}\n{header}  function\n{rule}\n"));
    let share = |n: u64, total: u64| format!("({:5.2}%)", n as f64 * 100.0 / total as f64);
    let cell = |n: u64, total: u64| {
        if n == 0 {
            format!("{:>18}", 0)
        } else {
            format!(
                "{:>9} {}",
                crate::methods::truncate::group(n as usize),
                share(n, total)
            )
        }
    };
    for i in 0..60u64 {
        let cycles = 900_000_000 - i * 14_000_000;
        let stalls = (i * 7_919) % 40_000;
        let loads = if i % 3 == 0 {
            0
        } else {
            20_000 + (i * 104_729) % 900_000
        };
        let misses = if i == 47 { 61_234 } else { (i * 331) % 2_000 };
        report.push_str(&format!(
            "{} {} {} {}  src/unit_{i}.c:step_{i}\n",
            cell(cycles, 9_876_543_210),
            cell(stalls, 1_234_567),
            cell(loads, 3_456_789),
            cell(misses, 98_765),
        ));
    }
    let hints = Hints::new()
        .with_query("which function takes the most cycles, and which has the most misses?");
    let out = extract_with_stats(&report, &hints, 300, &TokenCounter::default()).text;
    assert!(out.contains("step_0\n"), "{out}");
    assert!(out.contains("step_47\n"), "{out}");
}
