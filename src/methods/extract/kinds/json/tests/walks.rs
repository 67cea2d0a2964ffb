//! Records too big for one line, walked part by part or projected to what the query names:
//! a big member the query names, a few records that are documents, lists or trees of
//! settings, and a map of many objects.

use super::*;

#[test]
fn a_big_map_member_the_query_names_is_walked_part_by_part() {
    // The shape of an API model: a map of shapes, each with a map of documented members.
    let doc_text = |n: usize| format!("<p>{}</p>", "Some words about this member. ".repeat(n));
    let mut shapes = serde_json::Map::new();
    for name in [
        "SendRequest",
        "ReceiveRequest",
        "DeleteRequest",
        "ListRequest",
        "TagRequest",
        "PurgeRequest",
        "CreateRequest",
        "GetRequest",
    ] {
        let mut members = serde_json::Map::new();
        for (member, words) in [("QueueUrl", 4), ("Attributes", 30), ("MaxCount", 2)] {
            members.insert(
                member.into(),
                serde_json::json!({"shape": "String", "documentation": doc_text(words)}),
            );
        }
        if name != "SendRequest" {
            let documentation = format!("{} Valid values: 0 to 20.", doc_text(20));
            members.insert(
                "WaitSeconds".into(),
                serde_json::json!({"shape": "Integer", "documentation": documentation}),
            );
        }
        shapes.insert(
            name.into(),
            serde_json::json!({"type": "structure", "members": members}),
        );
    }
    let value = serde_json::json!({"version": "2.0", "shapes": shapes});
    let hints = crate::methods::extract::Hints::new()
        .with_query("What are the valid values of WaitSeconds in ReceiveRequest?");
    let query = Query::from_hints(&hints).unwrap();
    let doc = build_value(&value, Some(&query), 700);
    let texts = unit_texts(&doc);
    assert!(
        texts.iter().any(
            |t| t.starts_with("shapes.ReceiveRequest.members.WaitSeconds")
                && t.contains("Valid values: 0 to 20.")
        ),
        "{texts:#?}"
    );
    // A member the query names nowhere stays one line.
    assert!(
        texts.iter().any(|t| t.starts_with("shapes.SendRequest: {")),
        "{texts:#?}"
    );
    assert!(
        !texts
            .iter()
            .any(|t| t.starts_with("shapes.SendRequest.members")),
        "{texts:#?}"
    );
}

#[test]
fn a_named_member_just_over_its_line_is_walked_too() {
    // A JSON Schema definition of five documented properties: over one line's cap, but not
    // twice it. Cut to one line, the first members would keep their text, not the asked one.
    let property = |what: &str| {
        serde_json::json!({"type": "string", "description": format!(
            "{what} for the check to wait between two runs of its test command (e.g., '1s', '1m30s'). Default: 30s, as the engine has it."
        )})
    };
    let mut definitions = serde_json::Map::new();
    for name in ["service", "network", "volume", "probe"] {
        let mut properties = serde_json::Map::new();
        for key in ["disable", "test", "retries", "timeout", "interval"] {
            properties.insert(key.into(), property(&format!("{name} {key} time")));
        }
        definitions.insert(
            name.into(),
            serde_json::json!({"type": "object", "properties": properties}),
        );
    }
    let value = serde_json::json!({"$defs": definitions});
    let hints = crate::methods::extract::Hints::new()
        .with_query("What is the default interval of the probe definition?");
    let query = Query::from_hints(&hints).unwrap();
    let max_unit_bytes = 1200;
    let cap = max_unit_bytes * 2 / 3;
    let probe = serde_json::to_string(&value["$defs"]["probe"]).unwrap();
    assert!(
        probe.len() > cap && probe.len() < 2 * cap,
        "{}",
        probe.len()
    );
    let doc = build_value(&value, Some(&query), max_unit_bytes);
    let texts = unit_texts(&doc);
    assert!(
        texts
            .iter()
            .any(|t| t.contains("probe interval time for the check")
                && t.contains("Default: 30s, as the engine has it.")),
        "{texts:#?}"
    );
}

#[test]
fn a_few_records_each_a_document_are_walked_into_their_inner_records() {
    // A linter's report: one record per file, each holding hundreds of findings.
    let findings = |file: usize| -> Vec<Value> {
        (0..300)
            .map(|i| {
                let rule = if file == 1 && i == 250 {
                    "declaration-property-value-no-unknown"
                } else {
                    "rule-empty-line-before"
                };
                serde_json::json!({"line": i, "column": 1, "rule": rule, "text": format!("Finding {i} ({rule})")})
            })
            .collect()
    };
    let report: Vec<Value> = (0..3)
        .map(|f| serde_json::json!({"source": format!("f{f}.css"), "errored": true, "warnings": findings(f)}))
        .collect();
    let doc = build_value(&Value::Array(report), None, 1000);
    let texts = unit_texts(&doc);
    // Each file's findings are records of their own, one line each, the rare one among them.
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("[1].warnings: 300 records")),
        "{:?}",
        &texts[..8]
    );
    assert!(
        texts.iter().any(|t| t.starts_with("[1].warnings[250]:")
            && t.contains("declaration-property-value-no-unknown")),
        "{:?}",
        &texts[..8]
    );
}

#[test]
fn a_few_records_made_mostly_of_several_lists_are_walked() {
    // Homes of a smart-home API: each its rooms, its modules and its schedules, no one list
    // half of the home.
    let home = |name: &str, n: usize| {
        let rooms: Vec<Value> = (0..n)
            .map(|i| serde_json::json!({"id": format!("{i}0{i}"), "name": format!("Room {i}"), "module_ids": [format!("12:34:{i:02}")]}))
            .collect();
        let modules: Vec<Value> = (0..n)
            .map(|i| serde_json::json!({"id": format!("12:34:{i:02}"), "type": "NLP", "name": format!("Plug {i}"), "setup_date": 1692558628}))
            .collect();
        let schedules: Vec<Value> = (0..3)
            .map(|i| serde_json::json!({"name": format!("{name} schedule {i}"), "timetable": (0..n).map(|m| serde_json::json!({"zone_id": i, "m_offset": m * 90})).collect::<Vec<_>>()}))
            .collect();
        serde_json::json!({"id": name, "name": name, "rooms": rooms, "modules": modules, "schedules": schedules})
    };
    let homes = serde_json::json!({"homes": [home("A BIG HOME", 60), home("A SECOND HOME", 30)]});
    let q = query_of("in 'A SECOND HOME', which module is Plug 17?");
    let doc = build_value(&homes, Some(&q), 1000);
    let texts = unit_texts(&doc);
    assert!(
        texts.iter().any(|t| t.starts_with("homes[1].modules[17]:")),
        "{texts:?}"
    );
}

#[test]
fn a_few_records_that_are_trees_of_settings_are_projected_not_walked() {
    // A cluster's deployments: each a deep tree, mostly metadata, with its containers deep in.
    let deployment = |name: &str, image: &str| {
        let fields: Vec<Value> = (0..40)
            .map(|i| serde_json::json!({"manager": "kubectl", "time": format!("2022-03-17T10:{i:02}:24Z"), "fieldsV1": {"f:metadata": {"f:labels": {}}}}))
            .collect();
        serde_json::json!({
            "metadata": {"name": name, "namespace": "kube-system", "managedFields": fields},
            "spec": {"replicas": 2, "template": {"spec": {"containers": [
                {"name": name, "image": image, "args": ["--v=2", format!("--{name}-port=10255")],
                 "resources": {"limits": {"memory": "210Mi"}}}
            ]}}},
            "status": {"replicas": 2, "readyReplicas": 2},
        })
    };
    let list = serde_json::json!({"kind": "DeploymentList", "items": [
        deployment("event-exporter", "gke.gcr.io/event-exporter:v0.3.5"),
        deployment("kube-dns", "gke.gcr.io/k8s-dns-kube-dns:1.21.0-gke.0"),
        deployment("metrics-server", "gcr.io/gke-release/metrics-server-amd64:v0.4.5"),
    ]});
    let q = query_of("what image does the kube-dns container use?");
    let doc = build_value(&list, Some(&q), 1000);
    let texts = unit_texts(&doc);
    assert!(
        !texts.iter().any(|t| t.starts_with("items[1].metadata")),
        "{texts:?}"
    );
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("items[1]") && t.contains("k8s-dns-kube-dns:1.21.0-gke.0")),
        "{texts:?}"
    );
}

#[test]
fn a_few_records_one_a_map_of_many_objects_are_walked_into() {
    // `qpdf --json`: a header record, then one record holding every PDF object by id.
    let objects: serde_json::Map<String, Value> = (0..200)
        .map(|i| {
            let value = if i == 57 {
                serde_json::json!({"value": {"/Type": "/Font", "/BaseFont": "/AKEQKS+CMTT10"}})
            } else {
                serde_json::json!({"value": {"/Type": "/XObject", "/Length": i * 31, "/Filter": "/FlateDecode"}})
            };
            (format!("obj:{i} 0 R"), value)
        })
        .collect();
    let doc = build_value(
        &serde_json::json!({"qpdf": [{"jsonversion": 2, "maxobjectid": 200}, objects]}),
        None,
        1000,
    );
    let font: Vec<&str> = (0..doc.units.len())
        .map(|i| doc.text(i))
        .filter(|t| t.contains("CMTT10"))
        .collect();
    // The font is a unit of its own, not a sliver of one line cut to fit.
    assert_eq!(font.len(), 1, "{font:?}");
    assert!(!font[0].contains("/XObject"), "{font:?}");
}

#[test]
fn a_few_records_one_holding_a_long_named_list_deep_in_are_walked_into() {
    // A data package: a small resource, then one whose `schema.fields` describe a thousand
    // columns of a questionnaire.
    let fields: Vec<Value> = (0..300)
        .map(|i| {
            let (name, title) = match i {
                141 => ("beerfreq".to_owned(), "Beer Frequency".to_owned()),
                _ => (format!("item{i}"), format!("Item {i} Serving Size")),
            };
            serde_json::json!({"name": name, "title": title, "description": format!("How often is item {i} eaten?"), "type": "integer", "format": "default"})
        })
        .collect();
    let package = serde_json::json!({
        "name": "ffq",
        "resources": [
            {"name": "ffq-json", "path": "./data/data.json", "format": "json"},
            {"name": "ffq-csv", "path": "./data/data.csv", "format": "csv",
             "schema": {"fields": fields}},
        ],
    });
    let q = query_of("How is the beer question titled in the CSV schema's fields?");
    let doc = build_value(&package, Some(&q), 1000);
    let texts = unit_texts(&doc);
    // Its descriptors are rows of their own, the one asked for among them.
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("resources[1].schema.fields[141]")
                && t.contains("Beer Frequency")),
        "{texts:?}"
    );
}

#[test]
fn a_big_map_member_holding_an_entity_the_query_names_is_walked() {
    // A documentation tool's output: a map of source files, each a list of declarations
    // whose properties are named deep down, with their documented defaults.
    let property = |name: &str, default: &str| {
        serde_json::json!({
            "name": name,
            "jsDoc": {"doc": "Some words about this property. ".repeat(8),
                      "tags": [{"kind": "unsupported", "value": format!("@default {default}")}]},
            "location": {"filename": "file:///pkg/types.d.ts", "line": 12, "col": 4},
        })
    };
    let file = |names: &[&str]| {
        let properties: Vec<serde_json::Value> = names
            .iter()
            .enumerate()
            .map(|(i, n)| property(n, &format!("[{i}, 408, 429]")))
            .collect();
        serde_json::json!({"symbols": [{"name": "Options", "declarations": [
            {"kind": "typeAlias", "def": {"tsType": {"value": {"properties": properties}}}}
        ]}]})
    };
    let mut nodes = serde_json::Map::new();
    for i in 0..10 {
        let names: Vec<String> = (0..6).map(|j| format!("option{i}x{j}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        nodes.insert(format!("file:///pkg/f{i}.d.ts"), file(&names));
    }
    nodes.insert(
        "file:///pkg/retry.d.ts".into(),
        file(&[
            "limit",
            "statusCodes",
            "backoffLimit",
            "jitterFactor",
            "delay",
            "hooks",
        ]),
    );
    let value = serde_json::json!({"version": 2, "nodes": nodes});
    let hints = crate::methods::extract::Hints::new()
        .with_query("Which status codes are retried by default?");
    let query = Query::from_hints(&hints).unwrap();
    let doc = build_value(&value, Some(&query), 500);
    let texts = unit_texts(&doc);
    // The file holding the named property is walked down to its properties, and the named
    // one shows its default.
    assert!(
        texts
            .iter()
            .any(|t| t.contains("statusCodes") && t.contains("@default [1, 408, 429]")),
        "{texts:#?}"
    );
    // A file that names nothing asked stays one line.
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("nodes.file:///pkg/f3.d.ts: {")),
        "{texts:#?}"
    );
}

#[test]
fn what_every_variant_of_a_walked_map_repeats_is_said_once_on_its_line() {
    // A tile provider's variants: each repeats the URL template, attribution and bounds.
    let mut variants = serde_json::Map::new();
    for name in ["Default", "Night", "Original", "Grey", "LandLot"] {
        variants.insert(
            name.into(),
            serde_json::json!({
                "url": "https://maps-{s}.onemap.sg/v3/{variant}/{z}/{x}/{y}.png",
                "attribution": "Map data © contributors, Singapore Land Authority",
                "bounds": [[1.56073, 104.11475], [1.16, 103.502]],
                "variant": name,
                "name": format!("OneMapSG.{name}"),
            }),
        );
    }
    let doc = doc_of(&serde_json::json!({ "OneMapSG": variants }).to_string());
    let texts = unit_texts(&doc);
    let line = &texts[unit_holding(&doc, "\"LandLot\"")];
    assert!(
        line.contains("each holds") && line.contains("onemap.sg/v3") && line.contains("104.11475"),
        "{texts:?}"
    );
    let night = unit_holding(&doc, "OneMapSG.Night");
    assert!(!texts[night].contains("onemap.sg/v3"), "{texts:?}");
    assert_eq!(
        doc.units[night].parent.get(),
        Some(unit_holding(&doc, "each holds"))
    );
    // Variants that share only short values are shown as they are.
    let mut variants = serde_json::Map::new();
    for (i, name) in ["a", "b", "c"].iter().enumerate() {
        variants.insert(
            (*name).into(),
            serde_json::json!({"max_zoom": 19, "url": format!("https://{name}.example/{i}/{{z}}/{{x}}/{{y}}.png"), "pad": name.repeat(150)}),
        );
    }
    let doc = doc_of(&serde_json::json!({ "Provider": variants }).to_string());
    assert!(unit_texts(&doc).iter().all(|t| !t.contains("each holds")));
}

/// A medical image's header as `dcm2json` writes it: dozens of short tagged elements, and one
/// sequence (the report's content tree) that holds most of the document.
fn tagged_header_and_content_tree(items: usize) -> Value {
    let mut map = serde_json::Map::new();
    for i in 0..40 {
        map.insert(
            format!("{:08X}", 0x0008_0000 + i),
            serde_json::json!({"vr": "CS", "Value": [format!("V{i}")]}),
        );
    }
    let content: Vec<Value> = (0..items)
        .map(|k| {
            serde_json::json!({
                "0040A010": {"vr": "CS", "Value": ["CONTAINS"]},
                "0040A040": {"vr": "CS", "Value": ["TEXT"]},
                "0040A160": {"vr": "UT", "Value": [format!("finding number {k} of the report")]},
            })
        })
        .collect();
    map.insert(
        "0040A730".into(),
        serde_json::json!({"vr": "SQ", "Value": content}),
    );
    Value::Object(map)
}

#[test]
fn the_one_record_larger_than_all_its_siblings_is_walked() {
    let doc = build_value(&tagged_header_and_content_tree(60), None, 1000);
    // Each item of the content tree is a row of its own, not a sliver of one line.
    let last = unit_holding(&doc, "finding number 59 of the report");
    assert!(
        doc.text(last).starts_with(".0040A730.Value[59]"),
        "{}",
        doc.text(last)
    );
    // With a tree no larger than its siblings together, it stays one record among them.
    let doc = build_value(&tagged_header_and_content_tree(6), None, 1000);
    assert!(
        unit_texts(&doc)
            .iter()
            .any(|t| t.starts_with(".0040A730: "))
    );
}

#[test]
fn a_few_envelopes_each_carrying_a_page_of_records_as_json_text_are_walked_to_the_records() {
    // The shape of a recording of HTTP exchanges: each response's body is a page of an API's
    // results, sent as a string of JSON under a chain of wrappers.
    let owners = ["amara", "boris", "chidi", "dana"];
    let exchange = |page: usize| {
        let results: Vec<Value> = (0..30)
            .map(|i| {
                let id = 2400 + page * 30 + i;
                serde_json::json!({"id": id, "title": format!("Ticket number {id}"),
                    "owner": owners[(id * 7) % 4], "state": if id.is_multiple_of(3) { "closed" } else { "open" },
                    "notes": "Steps to reproduce and the logs attached by the reporter. ".repeat(3)})
            })
            .collect();
        let body = serde_json::json!({"data": {"page": page, "results": results}}).to_string();
        serde_json::json!({
            "request": {"method": "GET", "uri": format!("https://tickets.example/api?page={page}")},
            "response": {"status": {"code": 200}, "body": {"string": body}}
        })
    };
    let value = serde_json::json!({"exchanges": (0..5).map(exchange).collect::<Vec<_>>()});
    let hints = crate::methods::extract::Hints::new()
        .with_query("Who owns ticket 2467 and is it still open?");
    let query = Query::from_hints(&hints).unwrap();
    let doc = build_value(&value, Some(&query), 700);
    let texts = unit_texts(&doc);
    // The named ticket is a row of its own under its full path, with its owner and state.
    let owner = owners[(2467 * 7) % 4];
    assert!(
        texts.iter().any(
            |t| t.starts_with("exchanges[2].response.body.string.data.results[")
                && t.contains("2467")
                && t.contains(owner)
        ),
        "{texts:#?}"
    );
}
