use super::*;
use crate::methods::extract::Hints;
use crate::methods::extract::kinds::lines::{self, Style};

/// The scores of `text` read as lines, for `query`.
pub(super) fn scored(text: &str, query: &str) -> Vec<f32> {
    let doc = lines::build(text, Style::Text);
    let q = Query::from_hints(&Hints::new().with_query(query));
    score(&doc, q.as_ref())
}

#[test]
fn long_command_output_is_read_like_a_log() {
    // A daemon's debug output: numbered requests, no timestamps, one odd line.
    let mut text = String::new();
    for i in 0..LOG_LIKE_UNITS {
        let line = match i % 4 {
            0 => format!("({i}) Received Access-Request Id {i} from 127.0.0.1 length 73"),
            1 => format!("({i}) files: users: Matched entry alice at line {i}"),
            2 => format!("({i}) Sent Access-Accept Id {i} from 127.0.0.1 length 20"),
            _ => format!("({i}) Finished request {i}"),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text.push_str("(46) pap: Cleartext password does not match the known good one\n");
    let s = scored(&text, "which users were rejected, and why?");
    let odd = s.len() - 1;
    let above = s.iter().filter(|&&x| x > s[odd]).count();
    assert!(above < 8, "{above} lines rank above it");
}

#[test]
fn query_words_rank_matching_lines_first() {
    let s = scored(
        "alpha beta\ngamma delta\nreplicated block\n",
        "which block was replicated?",
    );
    assert!(s[2] > s[0] && s[2] > s[1]);
}

#[test]
fn a_status_class_the_query_names_raises_the_requests_in_it() {
    let mut text = String::new();
    for i in 0..40 {
        let status = match i {
            7 => 502,
            13 => 401,
            21 => 404,
            30 => 500,
            _ => 200,
        };
        text.push_str(&format!(
            "{{\"level\":\"info\",\"request\":{{\"uri\":\"/api/{i}\"}},\"status\":{status}}}\n"
        ));
    }
    let s = scored(&text, "which requests got a 5xx response?");
    for refused in [13, 21] {
        assert!(s[7] > s[refused] && s[30] > s[refused], "{s:?}");
    }
    assert!(s[30] > s[0]);
}

#[test]
fn a_request_meeting_every_constraint_the_query_names_outranks_those_meeting_one() {
    // Eight clients fetching pages, every fifth request failing on a probe of a path: the
    // failures of the client asked about are five among forty.
    let probes = [
        "wp-login.php",
        ".env",
        "etc/passwd",
        "admin",
        ".git/config",
        "x.pdf",
    ];
    let mut text = String::new();
    for i in 0..200 {
        let client = i % 8 + 2;
        let (path, status) = match i {
            _ if i % 5 == 0 => (probes[i % 6], 400 + (i % 2) * 4),
            _ => ("docs/page.html", 200),
        };
        text.push_str(&format!(
            "127.0.0.{client} - - [28/Nov/2026:13:59:{:02} +0000] \"GET /{path} HTTP/1.1\" {status} 512\n",
            i % 60
        ));
    }
    let s = scored(&text, "every request from 127.0.0.4 that failed (4xx/5xx)?");
    let mut failures: Vec<usize> = (0..200).filter(|i| i % 5 == 0).collect();
    failures.sort_by(|&a, &b| s[b].total_cmp(&s[a]));
    // The first and last of a repeated line keep a little extra: one may come between.
    let asked_in_top = failures[..5].iter().filter(|&&i| i % 8 == 2).count();
    assert!(asked_in_top >= 4, "{:?}", &failures[..5]);
}

#[test]
fn hundreds_of_exact_strings_and_a_status_class_are_counted_without_overflow() {
    use crate::methods::extract::kinds::log;
    let ids: Vec<String> = (0..300).map(|i| format!("req-{i:04}")).collect();
    let text: String = ids
        .iter()
        .map(|id| format!("127.0.0.1 - - \"GET /items/{id} HTTP/1.1\" 404 12\n"))
        .collect();
    let arguments = serde_json::json!({ "ids": ids });
    let hints = Hints::new()
        .with_query("which of these requests failed (4xx)?")
        .with_arguments(&arguments);
    let query = Query::from_hints(&hints).unwrap();
    assert!(query.exact.len() >= 300);
    let doc = log::build(&text);
    let scores = score(&doc, Some(&query));
    assert_eq!(scores.len(), doc.units.len());
}

#[test]
fn exact_identifiers_outrank_loose_word_matches() {
    let s = scored(
        "pkg semver 7.8.5\npkg semver@5.7.2\n",
        "who pulls in semver@5.7.2",
    );
    assert!(s[1] > s[0]);
}

#[test]
fn the_longest_record_outranks_the_first_of_a_clocked_series() {
    // A GC log: an uptime that only grows, a pause duration, indented details.
    let mut text = String::new();
    for (i, secs) in ["0.0385", "0.0287", "0.3874", "0.0429", "0.0257", "0.0311"]
        .iter()
        .enumerate()
    {
        text.push_str(&format!(
            "{}.574: [GC pause (young), {secs} secs]\n   [Heap: 280M->235M]\n",
            8600 + i * 30
        ));
    }
    let s = scored(&text, "which GC pause took the longest?");
    let best = (0..s.len()).max_by(|&a, &b| s[a].total_cmp(&s[b]));
    assert_eq!(best, Some(4), "{s:?}");
}

#[test]
fn the_extremes_of_the_group_the_query_names_stand_out() {
    let mut text = String::from("name,origin,hp\n");
    for (name, origin, hp) in [
        ("a", "USA", 190),
        ("b", "Japan", 88),
        ("c", "USA", 150),
        ("d", "Japan", 132),
        ("e", "Europe", 95),
        ("f", "Japan", 97),
        ("g", "USA", 165),
        ("h", "Europe", 110),
        ("i", "USA", 140),
        ("j", "Japan", 75),
    ] {
        text.push_str(&format!("{name},{origin},{hp}\n"));
    }
    let doc = crate::methods::extract::kinds::csv::build(&text);
    let q = Query::from_hints(&Hints::new().with_query("the most powerful Japanese car"));
    let s = score(&doc, q.as_ref());
    // Row d (132 hp) is the strongest Japanese car, though USA rows have more.
    let best_japanese = [2, 4, 6, 10]
        .into_iter()
        .max_by(|&a, &b| s[a].total_cmp(&s[b]));
    assert_eq!(best_japanese, Some(4), "{s:?}");
}

#[test]
fn a_listed_entry_named_by_the_query_outranks_files_under_it() {
    let text = "4.0K\tnode_modules/ajv/lib/core.js\n1.2M\tnode_modules/ajv\n8.0K\tnode_modules/ajv-formats/dist\n2.5M\tnode_modules/x/node_modules/ajv\n";
    let s = scored(text, "which packages carry their own copy of ajv?");
    assert!(s[1] > s[0] && s[3] > s[0] && s[3] > s[2], "{s:?}");
}

#[test]
fn a_number_does_not_match_inside_a_longer_one() {
    let s = scored(
        "model 1200 x\nmodel 120 y\nmodel 3120 z\n",
        "which has 120?",
    );
    assert!(s[1] > s[0] && s[1] > s[2], "{s:?}");
}

#[test]
fn repeats_of_a_template_score_less_than_the_first() {
    let s = scored("start 1\nx\nstart 2\ny\nstart 3\nz\nstart 4\n", "");
    assert!(s[0] > s[4]);
}
