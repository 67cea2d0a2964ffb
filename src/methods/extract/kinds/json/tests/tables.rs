//! Records as rows of a table and ranked by a column: the field that tells records apart is
//! their column, a ranked text or number (nested in a record's lists too) picks its record,
//! and flat messages are rows while nested ones stay whole.

use super::*;

#[test]
fn a_text_the_query_ranks_by_is_ranked_by_its_length() {
    let comments: Vec<Value> = (0..60)
        .map(|i| {
            let body = if i == 13 {
                "a long story about a hard choice, told at length ".repeat(8)
            } else {
                format!("short reply number {i}")
            };
            serde_json::json!({"id": format!("c{i}"), "author": format!("user{i}"), "body": body})
        })
        .collect();
    let q = query_of("which comment has the longest body?");
    let listing = serde_json::json!({"kind": "Listing", "data": {"children": comments}});
    let doc = build_value(&listing, Some(&q), 300);
    let body = doc
        .fields
        .iter()
        .find(|f| f.name().ends_with("body"))
        .expect("a body field");
    let longest = body
        .iter()
        .filter_map(|(u, v)| match v {
            FieldValue::Number(n) => Some((u, n)),
            _ => None,
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("lengths");
    assert!(
        doc.text(longest.0).contains("c13"),
        "{}",
        doc.text(longest.0)
    );
    // Unranked, a long text is no field at all.
    let q = query_of("which comment says the most about choices?");
    let comments = serde_json::json!([{"body": "x y ".repeat(40)}, {"body": "z w ".repeat(40)}]);
    let doc = build_value(&comments, Some(&q), 1000);
    assert!(!doc.fields.iter().any(|f| f.name() == "body"));
}

/// An SBOM's components: most under a few licenses given by `id`, four under rare ones, one
/// by an `expression`, one with none.
pub(super) fn components() -> Vec<Value> {
    (0..30)
        .map(|i| {
            let licenses = match i {
                7 => serde_json::json!([{"expression": "(AFL-2.1 OR BSD-3-Clause)", "acknowledgement": "declared"}]),
                3 | 11 | 19 | 27 => {
                    let id = ["Unlicense", "MPL-2.0", "0BSD", "GPL-2.0-only"][i / 8];
                    serde_json::json!([{"license": {"id": id, "acknowledgement": "declared"}}])
                }
                _ => {
                    let id = ["MIT", "ISC", "Apache-2.0"][i % 3];
                    serde_json::json!([{"license": {"id": id, "acknowledgement": "declared"}}])
                }
            };
            let mut component = serde_json::json!({
                "name": format!("package-{i}"), "version": format!("1.{i}.0"),
                "description": format!("The {i}th helper library of a small project, described at some length."),
                "homepage": format!("https://example.org/projects/package-{i}/documentation/index.html"),
                "bom-ref": format!("root@1.0.0|package-{i}@1.{i}.0|with-a-long-reference-path"),
                "purl": format!("pkg:npm/package-{i}@1.{i}.0"), "licenses": licenses,
            });
            if i == 23 {
                component.as_object_mut().map(|c| c.remove("licenses"));
            }
            component
        })
        .collect()
}

#[test]
fn a_list_s_most_telling_field_is_its_column_and_another_stands_in_where_missing() {
    let components = components();
    let q = query_of("which components are under an unusual license?");
    let doc = build_value(
        &serde_json::json!({ "components": components }),
        Some(&q),
        300,
    );
    let texts = unit_texts(&doc);
    let schema = texts
        .iter()
        .find(|t| t.contains("one line per record"))
        .unwrap();
    // The license's `id`, not its `acknowledgement`, which is always "declared".
    assert!(schema.contains("licenses[].license.id"), "{schema}");
    let row = |name: &str| {
        texts
            .iter()
            .find(|t| t.contains(&format!("| {name} |")) || t.contains(&format!(": {name} |")))
            .copied()
            .unwrap_or_default()
    };
    assert!(row("package-3").contains("Unlicense"), "{texts:?}");
    // The component licensed by an expression shows it where the others show an id.
    assert!(
        row("package-7").contains("(AFL-2.1 OR BSD-3-Clause)"),
        "{texts:?}"
    );
    // The list a row shows is a field of the records: the one `Unlicense` is rare.
    let field = doc
        .fields
        .iter()
        .find(|f| f.name() == "licenses[].license.id")
        .expect("a field of the licenses");
    assert_eq!(field.len(), components.len());
}

#[test]
fn many_files_of_a_linter_report_read_as_one_table_of_findings() {
    let report: Vec<Value> = (0..26)
        .map(|f| {
            let messages: Vec<Value> = (0..f % 5)
                .map(|m| {
                    let (rule, text) = if f == 19 && m == 2 {
                        ("id-unique", "The id value [ parse ] must be unique.".to_owned())
                    } else {
                        ("spec-char-escape", format!("Special characters must be escaped : [ < ] ({f}.{m})."))
                    };
                    serde_json::json!({"type": "error", "message": text, "line": 40 * m + 3, "col": 9, "rule": {"id": rule, "link": format!("https://htmlhint.com/rules/{rule}")}})
                })
                .collect();
            serde_json::json!({"file": format!("/site/api/Page{f}.html"), "messages": messages, "time": 20 + f})
        })
        .collect();
    let q = query_of("which id values are duplicated, and in which file?");
    let doc = build_value(&Value::Array(report), Some(&q), 1000);
    let texts = unit_texts(&doc);
    assert!(
        texts.iter().any(|t| t.starts_with("[19].messages[2]:")
            && t.contains("/site/api/Page19.html")
            && t.contains("The id value [ parse ] must be unique.")),
        "{texts:?}"
    );
}

#[test]
fn flat_json_lines_are_rows_and_nested_messages_stay_whole() {
    let flat: String = (0..12)
        .map(|i| {
            format!(
                "{{\"url\":\"http://127.0.0.1:3011/items/{i}\",\"http_code\":200,\"local_port\":{},\"num_headers\":4,\"size_download\":{},\"size_header\":149,\"speed_download\":{},\"time_connect\":0.000725,\"time_namelookup\":0.00003,\"time_pretransfer\":0.000775,\"time_starttransfer\":0.003087,\"time_total\":0.0031{i},\"content_type\":\"application/json;charset=UTF-8\",\"scheme\":\"HTTP\",\"method\":\"GET\"}}\n",
                40000 + i,
                8 + i,
                2515 + i
            )
        })
        .collect();
    let doc = build_lines(&flat, None, 1000);
    assert!(
        doc.text(0).contains("one line per record"),
        "{}",
        doc.text(0)
    );
    assert!(doc.text(1).contains(" | "), "{}", doc.text(1));
    // A compiler's messages nest what they say: each is read whole.
    let nested: String = (0..12)
        .map(|i| {
            format!(
                "{{\"reason\":\"compiler-message\",\"package_id\":\"demo 0.1.0\",\"target\":{{\"name\":\"demo\",\"kind\":[\"lib\"]}},\"message\":{{\"level\":\"warning\",\"message\":\"unused variable: `x{i}`\",\"spans\":[{{\"file_name\":\"src/lib.rs\",\"line_start\":{i}}}],\"rendered\":\"warning: unused variable: `x{i}` at src/lib.rs:{i}\"}}}}\n"
            )
        })
        .collect();
    let doc = build_lines(&nested, None, 1000);
    assert!(
        !doc.text(0).contains("one line per record"),
        "{}",
        doc.text(0)
    );
    assert!(doc.text(1).contains("rendered"), "{}", doc.text(1));
}

/// A media report's records in the shape of `mediainfo --Output=JSON`: each file's sizes sit
/// in an array of tracks, as numbers written as strings.
fn media_report() -> Value {
    let records: Vec<Value> = (0..40)
        .map(|i| {
            let size = if i == 23 { 368_214 } else { 3_000 + i * 17 };
            serde_json::json!({
                "creatingLibrary": {"name": "MediaInfoLib", "version": "23.04"},
                "media": {
                    "@ref": format!("/data/file{i}.png"),
                    "track": [
                        {"@type": "General", "FileExtension": "png", "FileSize": size.to_string()},
                        {"@type": "Image", "Width": "640", "Height": "480", "ColorSpace": "RGB"}
                    ]
                }
            })
        })
        .collect();
    Value::Array(records)
}

#[test]
fn a_ranked_number_nested_in_a_record_s_list_is_a_field_of_its_records() {
    let q = query_of("which file is the largest on disk, and what format does it have?");
    let doc = build_value(&media_report(), Some(&q), 1000);
    let sizes = doc
        .fields
        .iter()
        .find(|f| f.name() == "media.track[].FileSize")
        .expect("the nested size is a field");
    let largest = sizes
        .iter()
        .filter_map(|(u, v)| match v {
            FieldValue::Number(n) => Some((u, n)),
            FieldValue::Category(_) => None,
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("sizes are numbers");
    assert_eq!(largest.1, 368_214.0);
    assert!(doc.text(largest.0).contains("/data/file23.png"));
    // Without a superlative nothing deeper than before becomes a field.
    let plain = build_value(
        &media_report(),
        Some(&query_of("what format is file23?")),
        1000,
    );
    assert!(plain.fields.iter().all(|f| !f.name().contains("[]")));
}

#[test]
fn a_bounded_number_nested_in_a_record_s_list_is_a_field_of_its_records() {
    // `nft -j list ruleset`: a rule's counter is one of the expressions in its list.
    let rules: Vec<Value> = (0..30)
        .map(|i| {
            let packets = if i == 17 { 13_048 } else { 0 };
            serde_json::json!({"rule": {"family": "inet", "chain": "input", "handle": 40 + i,
                "expr": [{"match": {"op": "==", "right": 1000 + i}},
                         {"counter": {"packets": packets, "bytes": packets * 60}},
                         {"accept": null}]}})
        })
        .collect();
    let rules = Value::Array(rules);
    let q = query_of("which rules have non-zero packet counters?");
    let doc = build_value(&rules, Some(&q), 1000);
    let packets = (doc.fields.iter())
        .find(|f| f.name() == "rule.expr[].counter.packets")
        .expect("the nested counter is a field");
    let past: Vec<usize> = (packets.iter())
        .filter(|(_, v)| matches!(v, FieldValue::Number(n) if *n > 0.0))
        .map(|(u, _)| u)
        .collect();
    assert_eq!(past.len(), 1);
    assert!(doc.text(past[0]).contains("13048"), "{}", doc.text(past[0]));
}

#[test]
fn a_record_s_own_field_is_not_taken_for_one_built_from_a_nested_field() {
    // A test report: the full `name` holds the test's own `element.name` after its group; it
    // says more, and is the record's own.
    let groups = ["pl.tablex", "pl.stringx", "pl.List", "pl.path"];
    let specs: Vec<Value> = (0..40)
        .map(|i| {
            let own = format!("checks case number {i} of its module");
            let trace = serde_json::json!({
                "message": own,
                "traceback": format!("\nstack traceback:\n\tspec/all_spec.lua:{}: in function <spec/all_spec.lua:12>\n", 10 + i),
                "currentline": 10 + i,
                "source": "@spec/all_spec.lua",
                "short_src": "spec/all_spec.lua",
                "what": "Lua",
                "lastlinedefined": 25,
                "linedefined": 12
            });
            serde_json::json!({
                "name": format!("{} {own}", groups[i % 4]),
                "trace": trace,
                "element": {
                    "name": own,
                    "starttime": 1795922874.9746 + i as f64,
                    "duration": 0.0001 * i as f64,
                    "descriptor": "it",
                    "trace": trace,
                    "endtime": 1795922874.9747 + i as f64,
                    "attributes": []
                }
            })
        })
        .collect();
    let q = query_of("which specs ran, by full name?");
    let doc = build_value(&serde_json::json!({ "successes": specs }), Some(&q), 300);
    let texts = unit_texts(&doc);
    let schema = texts
        .iter()
        .find(|t| t.contains("one line per record"))
        .unwrap_or_else(|| panic!("{:?}", &texts[..3]));
    assert!(
        schema.contains(": name |") || schema.contains("| name |"),
        "{schema}"
    );
}

#[test]
fn a_map_of_keys_to_short_lists_of_records_reads_as_one_table() {
    // A routing table: each prefix maps to its paths, most to one.
    let routes: serde_json::Map<String, Value> = (0..40)
        .map(|i| {
            let paths = if i == 9 {
                serde_json::json!([
                    {"peer": "10.0.0.2", "path": "65002", "locPrf": 50, "weight": 0},
                    {"peer": "10.0.0.3", "path": "65003", "locPrf": 100, "weight": 0}
                ])
            } else {
                serde_json::json!([{"peer": "10.0.0.2", "path": "65002", "locPrf": 100, "weight": 0}])
            };
            (format!("45.{i}.0.0/16"), paths)
        })
        .collect();
    let table = serde_json::json!({"routerId": "10.255.0.1", "routes": routes});
    let doc = build_value(&table, None, 1000);
    let texts = unit_texts(&doc);
    assert!(
        texts.iter().any(|t| t.starts_with("routes: 41 records")),
        "{texts:?}"
    );
    // One row per path, labelled with its key; no line of keys summed up as `[…1 items]`.
    assert!(
        texts.iter().any(|t| t.contains(".45.9.0.0/16[1]")),
        "{texts:?}"
    );
    assert!(!texts.iter().any(|t| t.contains("[…1 items]")), "{texts:?}");
}

#[test]
fn a_pair_of_numbers_in_order_is_ranked_and_bounded_by_its_extent() {
    // A duplicate finder's instances: where each copy starts and ends.
    let instances: Vec<Value> = (0..30)
        .map(|i| {
            let (start, end) = if i == 4 { (6, 30) } else { (900 + i, 902 + i) };
            serde_json::json!({"path": format!("./lib/m{i}.js"), "lines": [start, end],
                               "code": "for (var i = 0; i < n; ++i) {\n  push(i);\n}"})
        })
        .collect();
    let q = query_of("which duplicated blocks span 15 lines or more?");
    let doc = build_value(&Value::Array(instances), Some(&q), 300);
    let lines = doc
        .fields
        .iter()
        .find(|f| f.name() == "lines")
        .expect("a lines field");
    let longest = lines
        .iter()
        .filter_map(|(u, v)| match v {
            FieldValue::Number(n) => Some((u, n)),
            _ => None,
        })
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .expect("extents");
    assert_eq!(longest.1, 25.0);
    assert!(
        doc.text(longest.0).contains("m4.js"),
        "{}",
        doc.text(longest.0)
    );
}

#[test]
fn log_lines_of_one_level_are_told_apart_by_their_messages() {
    let lines: Vec<Value> = (0..12)
        .map(|i| {
            let message = match i {
                3 => "400 PUT /api/contents/a.bin (127.0.0.1): Encoding error saving a.bin"
                    .to_owned(),
                7 => {
                    "404 GET /api/kernels/0000 (127.0.0.1): Kernel does not exist: 0000".to_owned()
                }
                _ => format!("200 GET /api/status ({i}@127.0.0.1) 1.{i}ms"),
            };
            serde_json::json!({"time": format!("2026-11-30 05:24:{i:02},330"),
                               "level": if i == 3 || i == 7 { "WARNING" } else { "DEBUG" },
                               "module": if i % 2 == 0 { "log" } else { "web" },
                               "message": message})
        })
        .collect();
    let doc = build_value(&Value::Array(lines), None, 1000);
    let unit = |needle: &str| unit_holding(&doc, needle);
    let (upload, kernel) = (unit("Encoding error"), unit("Kernel does not exist"));
    assert_ne!(doc.units[upload].template, doc.units[kernel].template);
    // Lines that differ only in their numbers are one shape.
    assert_eq!(
        doc.units[unit("1.1ms")].template,
        doc.units[unit("1.5ms")].template
    );
}

#[test]
fn a_log_line_s_level_is_the_one_it_states() {
    let lines: Vec<Value> = (0..12)
        .map(|i| {
            let (level, message) = match i {
                4 => ("DEBUG", "retrying after the error budget was reset".to_owned()),
                8 => ("ERROR", "upload failed: disk full".to_owned()),
                _ => ("INFO", format!("200 GET /api/status {i}ms")),
            };
            serde_json::json!({"time": format!("2026-11-30 05:24:{i:02},330"), "level": level,
                               "module": if i % 2 == 0 { "log" } else { "web" }, "message": message})
        })
        .collect();
    let doc = build_value(&Value::Array(lines), None, 1000);
    let unit = |needle: &str| unit_holding(&doc, needle);
    // "error" in a DEBUG line's words does not make it an error.
    assert_eq!(doc.units[unit("error budget")].level, Level::Debug);
    assert_eq!(doc.units[unit("disk full")].level, Level::Error);
    assert!(doc.units[unit("disk full")].prior > doc.units[unit("error budget")].prior);
}

#[test]
fn a_dump_of_tables_as_column_names_and_rows_reads_as_named_records() {
    // One message per table, each its caption, its rows of cells and the names of the cells
    // (a database's dump): each row is read with its cells named.
    let table = |caption: &str, rows: &str| {
        format!(
            r#"{{"caption":"{caption}","data":[{rows}],"headings":["external_ip","logical_ip","type"]}}"#
        )
    };
    let text = [
        table(
            "NAT table",
            r#"["198.51.100.2","10.40.0.0/16","snat"],["198.51.100.4","10.40.2.22","dnat_and_snat"]"#,
        ),
        table("Twin table", r#"["198.51.100.9","10.40.9.9","snat"]"#),
    ]
    .join("\n");
    let doc = build_lines(&text, None, 1000);
    let texts = unit_texts(&doc);
    assert!(
        texts.iter().any(|t| t.contains("NAT table")
            && t.contains("10.40.2.22")
            && t.contains("dnat_and_snat")),
        "{texts:?}"
    );
    assert!(texts.iter().any(|t| t.contains("logical_ip")), "{texts:?}");
    assert!(texts.iter().all(|t| !t.contains("headings")), "{texts:?}");
}

#[test]
fn a_record_the_query_names_by_its_name_of_several_words_is_shown_whole() {
    // Documented properties: rows show their names; the one whose name the query gives word
    // for word is shown whole, its documented default with it.
    let names = [
        "limit",
        "statusCodes",
        "backoffLimit",
        "retryOnTimeout",
        "delay",
        "hooks",
    ];
    let records: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            serde_json::json!({
                "name": name,
                "doc": format!("{} The value {name} takes.", "Words about it. ".repeat(16)),
                "tags": [{"kind": "unsupported", "value": format!("@default [{i}, 408, 429]")}],
                "location": {"line": 20 + i, "col": 4},
            })
        })
        .collect();
    let value = serde_json::json!({"properties": records});
    let hints = crate::methods::extract::Hints::new()
        .with_query("Which status codes are retried, and after what delay?");
    let query = Query::from_hints(&hints).unwrap();
    let doc = build_value(&value, Some(&query), 1000);
    let texts = unit_texts(&doc);
    // The named record is shown whole, its documentation with it; the others are rows.
    let whole = |name: &str| {
        texts
            .iter()
            .any(|t| t.contains(name) && t.contains("\"doc\":"))
    };
    assert!(whole("statusCodes"), "{texts:#?}");
    // A name of one word may be the query's by chance; one of several words the query has
    // only some of is not named.
    assert!(!whole("delay"), "{texts:#?}");
    assert!(!whole("retryOnTimeout"), "{texts:#?}");
    assert!(!whole("backoffLimit"), "{texts:#?}");
}

#[test]
fn a_map_of_maps_of_records_is_one_list_of_records() {
    // A monitor's services per host: read as one table, where the one service in a warning
    // state among many stands out.
    let mut hosts = serde_json::Map::new();
    for host in ["gw", "cam", "web"] {
        let mut services = serde_json::Map::new();
        for service in ["Load", "Disk", "Swap", "Procs"] {
            let warning = host == "cam" && service == "Disk";
            services.insert(
                service.into(),
                serde_json::json!({
                    "host_name": host,
                    "description": service,
                    "status": if warning { 4 } else { 2 },
                    "plugin_output": format!("{service} {} - all {host} checks done", if warning { "WARNING" } else { "OK" }),
                    "last_check": 1_796_028_000,
                    "notes": "x".repeat(60),
                }),
            );
        }
        hosts.insert(host.into(), Value::Object(services));
    }
    let doc = build_value(&serde_json::json!({"servicelist": hosts}), None, 1000);
    let texts = unit_texts(&doc);
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("servicelist: 12 records")),
        "{texts:#?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("servicelist.cam.Disk: ")),
        "{texts:#?}"
    );
}

#[test]
fn a_record_with_none_of_the_table_s_columns_is_no_row_of_empty_cells() {
    // Tile providers: most are maps of variants, keyed by the variant's name; one is a single
    // layer whose members are none of those.
    let mut providers = serde_json::Map::new();
    for p in 0..12 {
        let mut variants = serde_json::Map::new();
        for v in ["Streets", "Outdoors", "Satellite"] {
            variants.insert(
                v.into(),
                serde_json::json!({
                    "url": format!("https://p{p}.example/{v}/{{z}}/{{x}}/{{y}}.png"),
                    "max_zoom": 19,
                    "variant": format!("{v}-v{p}"),
                    "html_attribution": format!("&copy; <a href=\"https://p{p}.example/copyright\">Provider {p}</a> contributors"),
                }),
            );
        }
        providers.insert(format!("Provider{p}"), Value::Object(variants));
    }
    providers.insert(
        "Single".into(),
        serde_json::json!({"tiles": "https://single.example/{z}/{x}/{y}.png", "max_zoom": 18, "attribution": "Example contributors"}),
    );
    let q = query_of("what are the url templates of the streets layers?");
    let doc = build_value(&Value::Object(providers), Some(&q), 300);
    let texts = unit_texts(&doc);
    let single = &texts[unit_holding(&doc, ".Single")];
    assert!(single.contains("single.example"), "{texts:?}");
}

#[test]
fn of_two_keys_holding_one_text_the_plainer_is_the_column() {
    // A forum's topics: `fancy_title` repeats `title`, with entities where it has quotes.
    let topics: Vec<Value> = (0..40)
        .map(|i| {
            let title = if i == 9 {
                "Deploy to Heroku isn't working".to_owned()
            } else {
                format!("Question number {i} about charts")
            };
            let fancy = title.replace('\'', "&rsquo;");
            serde_json::json!({"id": i, "title": title, "fancy_title": fancy,
                "slug": format!("question-{i}"), "posts_count": i % 7,
                "created_at": format!("2015-11-{:02}T17:41:51.609Z", 1 + i % 28),
                "bumped_at": format!("2015-12-{:02}T10:04:11.311Z", 1 + i % 28),
                "image_url": null, "unseen": false, "visible": true, "closed": false,
                "views": 100 + i * 13, "like_count": i % 3, "archetype": "regular",
                "last_poster_username": format!("user{}", i % 9), "pinned": i == 0})
        })
        .collect();
    let q = query_of("which topic has the most views?");
    let doc = build_value(&serde_json::json!({ "topics": topics }), Some(&q), 300);
    let texts = unit_texts(&doc);
    let schema = texts
        .iter()
        .find(|t| t.contains("one line per record"))
        .unwrap();
    let columns = schema.split("one line per record:").nth(1).unwrap();
    assert!(columns.contains("title"), "{schema}");
    assert!(!columns.contains("fancy_title"), "{schema}");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("Deploy to Heroku isn't working")),
        "{texts:?}"
    );
}
