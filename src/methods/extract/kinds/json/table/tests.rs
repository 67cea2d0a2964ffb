use super::*;
use crate::methods::extract::Hints;
use cells::list_text;
use serde_json::json;

/// Search hits in the shape of a code-hosting API's issue list, shortened.
fn hits() -> Vec<Value> {
    (0..8)
        .map(|i| {
            let login = format!("user{i}x");
            json!({
                "url": format!("https://api.example.com/repos/o/r/issues/{i}"),
                "comments_url": format!("https://api.example.com/repos/o/r/issues/{i}/comments"),
                "html_url": format!("https://example.com/o/r/pull/{i}"),
                "node_id": format!("MDExOlB1bGxSZXF1ZXN0{i}Njc4OTA5NzE2ZTk4"),
                "number": 100 + i,
                "title": format!("Fix the parser on input {i}"),
                "user": {"login": login, "url": format!("https://api.example.com/users/{login}"), "type": "User"},
                "labels": if i == 3 || i == 6 { json!([{"name": "regression", "color": "d73a4a"}]) } else { json!([]) },
                "state": if i % 4 == 0 { "open" } else { "closed" },
                "body": "A long description of the change that nobody needs in a listing. ".repeat(4),
            })
        })
        .collect()
}

fn table(query: &str) -> Table {
    table_of(&hits(), query)
}

/// The table of `records` for `query`.
fn table_of(records: &[Value], query: &str) -> Table {
    let q = Query::from_hints(&Hints::new().with_query(query)).unwrap();
    let mut builder = TableBuilder::default();
    for record in records {
        builder.add(record, Some(&q));
    }
    builder.finish(Some(&q)).expect("a table")
}

/// Per-transfer reports in the shape of an HTTP client's write-out: many timings, a URL,
/// and an error message only where the transfer failed.
fn transfers() -> Vec<Value> {
    (0..12)
        .map(|i| {
            let mut t = json!({
                "url": format!("http://127.0.0.1:30{i:02}/items/{i}"),
                "http_code": if i == 5 { 0 } else { 200 },
                "local_port": 40000 + i * 7,
                "num_headers": 4 + i % 3,
                "size_download": 100 + i * 13,
                "size_header": 140 + i,
                "speed_download": 2515 + i * 101,
                "time_connect": 0.000725 + i as f64 * 1e-5,
                "time_namelookup": 0.00003 + i as f64 * 1e-6,
                "time_pretransfer": 0.000775 + i as f64 * 1e-5,
                "time_starttransfer": 0.003087 + i as f64 * 1e-4,
                "time_total": 0.00318 + i as f64 * 1e-4,
                "content_type": if i % 2 == 0 { "application/json" } else { "text/html" },
            });
            if i == 5 || i == 9 {
                t["errormsg"] = json!(format!("Failed to connect to 127.0.0.1 port 30{i:02}"));
            }
            t
        })
        .collect()
}

#[test]
fn a_column_the_query_names_is_shown_however_sparse_and_rows_narrow_around_it() {
    let q = Query::from_hints(&Hints::new().with_query(
        "which URLs failed, with what error message, and which took the longest in total?",
    ))
    .unwrap();
    let mut builder = TableBuilder::default();
    for t in transfers() {
        builder.add(&t, Some(&q));
    }
    let header = builder.finish(Some(&q)).expect("a table").header();
    assert!(
        header.contains("| errormsg") || header.contains(": errormsg"),
        "{header}"
    );
    assert!(header.contains("url"), "{header}");
    assert!(header.contains("time_total"), "{header}");
    // The timings nobody asked for give way to the named columns.
    let columns = header.matches(" | ").count() + 1;
    assert!(columns <= 9, "{columns} columns: {header}");
}

#[test]
fn a_list_of_one_repeated_value_is_shown_with_its_count() {
    let mut cells = Vec::new();
    let run =
        json!({"command": "xz -d", "exit_codes": [1, 1, 1, 1, 1, 1], "tags": ["a", "b", "a", "a"]});
    for_each_cell(&run, &mut |path, _, text| {
        cells.push(format!("{path}={text}"))
    });
    assert_eq!(
        cells,
        ["command=xz -d", "exit_codes[]=1×6", "tags[]=a,b,a,a"]
    );
    assert_eq!(list_text(&[json!(0), json!(0)]), "0,0");
}

#[test]
fn columns_are_short_telling_fields_chosen_by_shape() {
    let t = table("which results are open");
    let header = t.header();
    for column in [
        "html_url",
        "number",
        "title",
        "user.login",
        "state",
        "labels[].name",
    ] {
        assert!(header.contains(column), "{header}");
    }
    // Long text, opaque ids, constants and links built from another column stay out.
    for column in ["body", "node_id", "user.type", "comments_url", "user.url"] {
        assert!(!header.contains(column), "{header}");
    }
}

#[test]
fn one_link_per_record_and_one_field_per_list() {
    let t = table("which results are open and labelled, give the URL");
    let header = t.header();
    // The page link, not the API's address beside it; a label's name, not its colour.
    assert!(header.contains("html_url"), "{header}");
    assert!(!header.contains(": url |"), "{header}");
    assert!(header.contains("labels[].name"), "{header}");
    assert!(!header.contains("labels[].color"), "{header}");
}

#[test]
fn a_query_word_the_row_shows_does_not_single_a_record_out() {
    let t = table("which results carry the regression label");
    let q = Query::from_hints(&Hints::new().with_query("the regression label")).unwrap();
    let hit = &hits()[3];
    let row = row_of(&t.cells(hit));
    assert!(row.contains("regression"), "{row}");
    assert!(!t.singles_out(hit, Some(&q), &row));
    // Without the label in its row, the record is singled out by it.
    assert!(t.singles_out(hit, Some(&q), "no labels here"));
}

#[test]
fn a_record_singled_out_shows_the_text_its_row_leaves_out_when_asked_for() {
    // A security linter's findings: the code each points at is too long for a column.
    let findings: Vec<Value> = (0..12)
        .map(|i| {
            let (severity, text) = if i == 7 {
                ("HIGH", "Use of weak MD5 hash for security.")
            } else {
                ("LOW", "Use of assert detected in optimised byte code.")
            };
            json!({
                "filename": format!("pkg/mod{i}.py"), "line_number": 10 + i,
                "issue_severity": severity, "issue_text": text, "test_id": format!("B{i}"),
                "code": format!("{i} def check(self):\n{i}     data = self.asbytes()\n{i}     # the digest of the key's bytes, as the format wants it\n{i}     return md5(data).digest()\n"),
                "issue_cwe": {"id": 327, "link": "https://cwe.mitre.org/data/definitions/327.html"},
                "more_info": format!("https://docs.example.com/plugins/b{i}_check.html"),
            })
        })
        .collect();
    let q =
        Query::from_hints(&Hints::new().with_query("which weak hash is flagged, on what code?"))
            .unwrap();
    let mut builder = TableBuilder::default();
    for f in &findings {
        builder.add(f, Some(&q));
    }
    let t = builder.finish(Some(&q)).expect("a table");
    assert!(!t.header().contains("code"), "{}", t.header());
    let named = |k: &str| k == "code";
    assert!(
        !t.hidden_asked_members(&findings[7], Some(&q), &named)
            .is_empty()
    );
    // A record the query does not single out stays a row.
    assert!(
        t.hidden_asked_members(&findings[2], Some(&q), &named)
            .is_empty()
    );
    // Nor does a link or an id the query names count as text left out.
    let link = |k: &str| k == "more_info";
    assert!(
        t.hidden_asked_members(&findings[7], Some(&q), &link)
            .is_empty()
    );
}

#[test]
fn a_record_named_by_its_method_shows_the_header_its_row_leaves_out() {
    // A recorded HTTP session: each call with its raw headers as a name/value list.
    let calls: Vec<Value> = (0..12)
        .map(|i| {
            let method = if i == 11 { "delete" } else { "get" };
            json!({
                "method": method, "path": format!("/repos/o/r/issues?page={i}"),
                "status": 200, "response": {"id": 1000 + i, "title": format!("Issue {i}"),
                    "body": "A long body of text that a row has no room for. ".repeat(6)},
                "rawHeaders": ["Server", "example.com",
                    "X-OAuth-Scopes", "delete_repo, repo, user",
                    "X-RateLimit-Remaining", format!("{}", 4999 - i)],
            })
        })
        .collect();
    let q =
        Query::from_hints(&Hints::new().with_query(
            "what X-RateLimit-Remaining came back on the final DELETE of the repository?",
        ))
        .unwrap();
    let mut builder = TableBuilder::default();
    for call in &calls {
        builder.add(call, Some(&q));
    }
    let t = builder.finish(Some(&q)).expect("a table");
    let named = |_: &str| false;
    // `delete` is in every record's scopes, but only one record's method.
    assert!(
        !t.hidden_asked_members(&calls[11], Some(&q), &named)
            .is_empty()
    );
    assert!(
        t.hidden_asked_members(&calls[3], Some(&q), &named)
            .is_empty()
    );
}

/// A sound server's sinks, each with its volume per channel: an object no column shows.
fn sinks() -> Vec<Value> {
    let names = [
        "dock_speakers",
        "bridge_recorder",
        "harbor_pa",
        "all_zones",
        "dock_left",
    ];
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let percent = if *name == "harbor_pa" { "120%" } else { "100%" };
            json!({
                "index": i, "state": "IDLE", "name": name,
                "description": format!("{} output", name.replace('_', " ")),
                "driver": "module-null-sink.c",
                "sample_specification": format!("s16le 2ch {}Hz", 44100 + i),
                "mute": i == 1,
                "format_info": format!("pcm, format.sample_format = \"s16le\"  format.rate = \"{}\"  format.channels = \"2\"  format.channel_map = \"front-left,front-right\"", 44100 + i),
                "volume": {"front-left": {"value": 78643, "value_percent": percent, "db": "4.75 dB"},
                           "front-right": {"value": 78643, "value_percent": percent, "db": "4.75 dB"}},
                "monitor_source": format!("{name}.monitor"),
                "properties": {"device.description": name, "device.class": "abstract",
                               "device.icon_name": "audio-card", "factory.name": "null-sink"},
            })
        })
        .collect()
}

#[test]
fn a_record_named_by_its_name_shows_the_object_and_values_its_row_leaves_out() {
    let sinks = sinks();
    let q = Query::from_hints(
        &Hints::new().with_query("what volume is the Harbor PA sink at, in what sample format?"),
    )
    .unwrap();
    let mut builder = TableBuilder::default();
    for s in &sinks {
        builder.add(s, Some(&q));
    }
    let t = builder.finish(Some(&q)).expect("a table");
    assert!(!t.header().contains("volume"), "{}", t.header());
    let named = |k: &str| k == "volume";
    // `harbor_pa` is named whole by two query words, held by one record.
    let hidden = t.hidden_asked_members(&sinks[2], Some(&q), &named);
    let keys: Vec<&str> = hidden.iter().map(|(k, _)| *k).collect();
    assert!(keys.contains(&"volume"), "{keys:?}");
    // A text too long for a column whose key names a word of the query comes with it.
    assert!(keys.contains(&"format_info"), "{keys:?} {}", t.header());
    let row = row_with_members("harbor_pa | Harbor PA", &hidden);
    assert!(row.contains(r#""value_percent":"120%""#), "{row}");
    // A record the query does not name stays its row.
    assert!(
        t.hidden_asked_members(&sinks[0], Some(&q), &named)
            .is_empty()
    );
}

#[test]
fn a_row_holds_the_values_in_column_order() {
    let t = table("which results are open");
    let row = row_of(&t.cells(&hits()[3]));
    assert!(row.contains("https://example.com/o/r/pull/3"), "{row}");
    assert!(row.contains("user3x"), "{row}");
    assert!(row.contains("regression"), "{row}");
    assert!(row.len() < 200, "{row}");
}

#[test]
fn short_records_are_not_tabled() {
    let mut builder = TableBuilder::default();
    for i in 0..8 {
        builder.add(
            &json!({"id": i, "name": format!("n{i}"), "ok": i % 2 == 0}),
            None,
        );
    }
    assert!(builder.finish(None).is_none());
}

#[test]
fn a_lists_one_object_shows_its_deeper_values() {
    // A static analyzer's SARIF results: each finding's file and flagged code sit in its
    // one location, four keys down.
    let results: Vec<Value> = (0..12)
        .map(|i| {
            let level = if i == 9 { "warning" } else { "note" };
            json!({
                "ruleId": format!("FF10{}", i % 3), "level": level,
                "message": {"text": "format/printf: If format strings can be influenced by an attacker, they can be exploited (CWE-134)."},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": format!("src/tool/file{i}.c"), "uriBaseId": "SRCROOT"},
                    "region": {"startLine": 40 + i, "snippet": {"text": format!("\tprintf(fmt{i}, value);")}},
                }}],
                "fingerprints": {"contextHash/v1": format!("{i:064x}")},
            })
        })
        .collect();
    let mut builder = TableBuilder::default();
    for result in &results {
        builder.add(result, None);
    }
    let t = builder.finish(None).expect("a table");
    let row = row_of(&t.cells(&results[9]));
    assert!(row.contains("src/tool/file9.c"), "{row}");
    assert!(row.contains("printf(fmt9, value);"), "{row}");
    assert!(
        t.header()
            .contains("locations[0].physicalLocation.artifactLocation.uri")
    );
}

/// Queued jobs in the shape of a batch scheduler's queue: many fields, timestamps and ids
/// among them, the job's short name late, and why a job waits in a field of its own.
fn jobs() -> Vec<Value> {
    let reasons = [
        "Priority",
        "Resources",
        "Dependency",
        "PartitionDown",
        "BeginTime",
    ];
    (0..10)
        .map(|i| {
            let mut job = serde_json::Map::new();
            for (k, time) in ["accrue", "eligible", "end", "preempt", "resize", "start"]
                .iter()
                .enumerate()
            {
                job.insert(
                    format!("{time}_time"),
                    json!(1_796_004_879 + i * 37 + k as i64),
                );
            }
            job.insert("job_id".into(), json!(20 + i));
            job.insert(
                "job_state".into(),
                json!(if i < 2 { "RUNNING" } else { "PENDING" }),
            );
            for k in 0..30 {
                job.insert(
                    format!("setting_{k:02}"),
                    json!(format!("default value {k}")),
                );
            }
            job.insert("name".into(), json!(format!("etl-step-{i}")));
            job.insert(
                "partition".into(),
                json!(if i % 2 == 0 { "batch" } else { "short" }),
            );
            job.insert("state_reason".into(), json!(reasons[i as usize % 5]));
            job.insert("submit_time".into(), json!(1_796_004_000 + i * 5));
            Value::Object(job)
        })
        .collect()
}

#[test]
fn a_why_question_asks_for_the_reason_column_and_rows_keep_the_record_name() {
    let q = Query::from_hints(&Hints::new().with_query(
        "Why is the job in the short partition still waiting, and which time was it submitted?",
    ))
    .unwrap();
    let mut builder = TableBuilder::default();
    for job in jobs() {
        builder.add(&job, Some(&q));
    }
    let table = builder.finish(Some(&q)).expect("a table");
    assert!(
        table.columns.iter().any(|c| c == "state_reason"),
        "{:?}",
        table.columns
    );
    assert!(
        table.columns.iter().any(|c| c == "name"),
        "{:?}",
        table.columns
    );
}

#[test]
fn a_record_named_by_its_name_shows_the_list_its_row_leaves_out() {
    // A currency table: each currency's alternate symbols, a list of short values most leave
    // empty, which no column shows.
    let currencies: Vec<Value> = [
        "Omani Rial",
        "Tunisian Dinar",
        "Uzbekistan Som",
        "Euro",
        "Yen",
        "Peso",
    ]
    .iter()
    .enumerate()
    .map(|(i, name)| {
        let alternate = if *name == "Uzbekistan Som" {
            json!(["so‘m", "сўм"])
        } else {
            json!([])
        };
        json!({
            "priority": 100, "iso_code": format!("C{i}X"), "name": name,
            "symbol": format!("s{i}"), "alternate_symbols": alternate,
            "subunit": format!("Unit{i}"), "subunit_to_unit": 100, "symbol_first": i % 2 == 0,
            "html_entity": "", "decimal_mark": ".", "thousands_separator": ",",
            "iso_numeric": format!("{}", 800 + i), "smallest_denomination": 1,
            "disambiguate_symbol": format!("{name} in its own country, written in full"),
        })
    })
    .collect();
    let q = Query::from_hints(
        &Hints::new().with_query("Which alternate symbols are listed for the Uzbekistan som?"),
    )
    .unwrap();
    let mut builder = TableBuilder::default();
    for currency in &currencies {
        builder.add(currency, Some(&q));
    }
    let mut t = builder.finish(Some(&q)).expect("a table");
    // A row too narrow for the list (wider rows elsewhere leave it out).
    t.columns.retain(|c| !c.starts_with("alternate_symbols"));
    let named = |k: &str| k == "alternate_symbols";
    let hidden = t.hidden_asked_members(&currencies[2], Some(&q), &named);
    assert!(
        hidden.iter().any(|(k, _)| *k == "alternate_symbols"),
        "{hidden:?}"
    );
    // An empty list shows nothing.
    assert!(
        t.hidden_asked_members(&currencies[3], Some(&q), &named)
            .is_empty()
    );
}

/// An image tool's description of some files: each record wraps the one object it describes
/// beside its format's version, and the asked fields sit two levels down in it.
fn described_images() -> Vec<Value> {
    (0..8)
        .map(|i| {
            json!({
                "version": "1.0",
                "image": {
                    "name": format!("/srv/art/badge-{i}.png"),
                    "format": "PNG",
                    "formatDescription": if i % 2 == 0 {
                        "Portable Network Graphics"
                    } else {
                        "X Windows system pixmap (color)"
                    },
                    "depth": if i == 2 { 16 } else { 8 },
                    "pixels": 1024 + i,
                    "backgroundColor": format!("#FFFFFF{i:02}"),
                    "borderColor": format!("#DFDFDF{i:02}"),
                    "matteColor": format!("#BDBDBD{i:02}"),
                    "transparentColor": format!("#000000{i:02}"),
                    "numberPixels": format!("{}", 1024 + i),
                    "geometry": {"width": 32, "height": 32},
                    "imageStatistics": {"all": {
                        "min": 0, "max": 65535, "mean": 51200.5 + i as f64,
                        "standardDeviation": 9000.25, "kurtosis": 11.5,
                        "skewness": -3.25, "entropy": 0.5,
                    }},
                    "channelDepth": {"alpha": 1, "red": 16, "green": 16, "blue": 16},
                    "chromaticity": {
                        "redPrimary": {"x": 0.64, "y": 0.33},
                        "greenPrimary": {"x": 0.3, "y": 0.6},
                        "bluePrimary": {"x": 0.15, "y": 0.06},
                    },
                    "pixelsPerSecond": format!("{}B", 150000 + i),
                    "userTime": "0.000u",
                    "elapsedTime": "0:01.000",
                    "properties": {
                        "date:create": "2025-01-02T03:04:05+00:00",
                        "signature": format!("{:064x}", 0x1234abcdu64 * (i as u64 % 7 + 1)),
                    },
                },
            })
        })
        .collect()
}

fn images_table(query: &str) -> Table {
    table_of(&described_images(), query)
}

#[test]
fn a_wrapped_records_deeper_field_the_query_names_is_a_column() {
    // The digest is opaque, no column of its own accord; asked for by its key, it is one.
    let table = images_table("Which two files have the same signature, and which has depth 16?");
    assert!(
        table
            .columns
            .iter()
            .any(|c| c == "image.properties.signature"),
        "{:?}",
        table.columns
    );
    let unasked = images_table("Which file has depth 16, and how many pixels has it?");
    assert!(
        !unasked.columns.iter().any(|c| c.ends_with("signature")),
        "{:?}",
        unasked.columns
    );
}

#[test]
fn the_field_a_row_is_read_by_stays_beside_the_named_columns() {
    // Many columns the query names in part (colours, pixels) would fill the row without the
    // file's name, and no row could be told apart.
    let table = images_table(
        "From this description: which file has a depth of 16, and which colours and pixels has it?",
    );
    assert_eq!(
        table.columns.first().map(String::as_str),
        Some("image.name"),
        "{:?}",
        table.columns
    );
}
