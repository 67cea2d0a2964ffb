//! What the query names in a JSON document: list items and map members it names by a word,
//! a key or a path, kept with their path or walked part by part, and what it does not name cut
//! short.

use super::*;

/// Installed packages in the shape of a package manager's report: each record names its
/// requirements in a list of strings nested in its metadata, beside a long description.
fn packages() -> Value {
    let names = [
        "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hub",
    ];
    let records: Vec<Value> = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut requires: Vec<String> = (0..12).map(|k| format!("common{k}>=1.{k}")).collect();
            if *name == "hub" {
                requires.insert(3, "zebra<2.0,>=1.4; os_name == 'posix'".into());
                requires.insert(9, "quokka>=0.3.1".into());
            }
            serde_json::json!({
                "metadata": {
                    "name": name,
                    "version": format!("1.{i}.0"),
                    "summary": format!("The {name} library"),
                    "description": "A long description of what the library does. ".repeat(30),
                    "license_text": "Permission is hereby granted, free of charge. ".repeat(20),
                    "changelog": "Fixed a bug in the handling of inputs. ".repeat(20),
                    "readme": "Install it and import it to use it well. ".repeat(20),
                    "requires_dist": requires,
                },
                "location": format!("/opt/env/lib/site-packages/{name}-1.{i}.0.dist-info"),
                "installer": "pip",
            })
        })
        .collect();
    serde_json::json!({ "installed": records })
}

#[test]
fn list_items_the_query_names_are_kept_with_their_path_from_a_folded_list() {
    let query = query_of("Which zebra and quokka versions does the hub package require?");
    let doc = build_value(&packages(), Some(&query), 1400);
    let texts = unit_texts(&doc);
    let hub = texts
        .iter()
        .find(|t| t.contains(r#""hub""#))
        .expect("the hub record");
    // The record's own JSON, pruned: the list under its path, its named items in it.
    assert!(hub.contains(r#"{"metadata":{"name":"hub","#), "{hub}");
    assert!(hub.contains(r#""requires_dist":["#), "{hub}");
    assert!(
        hub.contains(r#""zebra<2.0,>=1.4; os_name == 'posix'""#),
        "{hub}"
    );
    assert!(hub.contains(r#""quokka>=0.3.1""#), "{hub}");
    // What the query does not touch makes room for them.
    assert!(!hub.contains("Permission is hereby"), "{hub}");
}

#[test]
fn a_folded_list_holding_one_common_query_word_is_not_projected() {
    // `common` is in every record's list: it singles no record out, and each record stays a
    // row of the table.
    let query = query_of("Which common requirement does each package have?");
    let doc = build_value(&packages(), Some(&query), 1400);
    for i in 0..doc.units.len() {
        assert!(!doc.text(i).contains("requires_dist["), "{}", doc.text(i));
    }
}

#[test]
fn a_dependency_tree_member_the_query_names_ranks_first_at_any_depth() {
    // `npm ls --json`-like: objects keyed by package name, nested.
    let dep = |version: &str, children: Value| {
        serde_json::json!({
            "version": version,
            "resolved": format!("https://registry.example.org/pkg/-/pkg-{version}.tgz"),
            "integrity": "sha512-SWsVtH/0vULSQStoZ6xxH2K09Li8fXYTMC64ZeogCdpZ3XSi1eCPOByV1OpuJxuI3",
            "license": "MIT",
            "dependencies": children,
        })
    };
    let leaf = |v: &str| dep(v, serde_json::json!({}));
    let tree = serde_json::json!({
        "name": "app",
        "dependencies": {
            "server": dep("2.0.0", serde_json::json!({
                "router": leaf("1.1.0"),
                "walrus": leaf("4.6.7"),
                "parser": leaf("3.0.1"),
            })),
            "client": dep("1.0.0", serde_json::json!({"fetcher": leaf("0.9.0")})),
        }
    });
    let query = query_of("Which walrus version is installed?");
    let doc = build_value(&tree, Some(&query), 1000);
    let walrus = (0..doc.units.len())
        .find(|&i| {
            doc.text(i)
                .starts_with("dependencies.server.dependencies.walrus")
        })
        .expect("the walrus member with its path");
    assert!(doc.text(walrus).contains("4.6.7"), "{}", doc.text(walrus));
    let best = doc.units.iter().map(|u| u.prior).fold(f32::MIN, f32::max);
    assert!(doc.units[walrus].prior >= best && best > 0.0);
}

#[test]
fn long_digests_the_query_does_not_name_are_cut_to_their_head() {
    let integrity = "sha512-SWsVtH/0vULSQStoZ6xxH2K09Li8fXYTMC64ZeogCdpZ3XSi1eCPOByV1OpuJxuI3OcmHhosDWYyii07tpPsLw==";
    let member = serde_json::json!({
        "version": "1.2.3",
        "integrity": integrity,
        "license": "MIT",
        "description": "x".repeat(300),
    });
    let doc = build_value(&serde_json::json!({ "pkg": member }), None, 1000);
    let line = (0..doc.units.len())
        .map(|i| doc.text(i))
        .find(|t| t.contains("\"integrity\""))
        .expect("the member's line");
    assert!(
        line.contains(r#""integrity":"sha512-SWsVtH/0v…""#),
        "{line}"
    );
    assert!(line.contains(r#""version":"1.2.3""#), "{line}");
    // Named by the query, a digest is the answer and is kept whole.
    let query = query_of("Which package has integrity sha512-SWsVtH/0vULSQStoZ6xxH2K09Li8f?");
    let doc = build_value(&serde_json::json!({ "pkg": member }), Some(&query), 1000);
    assert!((0..doc.units.len()).any(|i| doc.text(i).contains(integrity)));
}

#[test]
fn a_big_map_member_named_by_every_word_of_its_key_is_walked_part_by_part() {
    // Packages keyed by name, one of them the query's plain word (no exact string).
    let mut packages = serde_json::Map::new();
    for name in [
        "router", "walrus", "parser", "fetcher", "logger", "mailer", "queue", "cache",
    ] {
        packages.insert(
            name.into(),
            serde_json::json!({
                "version": "1.0.0",
                "readme": format!("The {name} package. {}", "It does one thing well. ".repeat(30)),
                "engines": {"node": ">=18"},
            }),
        );
    }
    let query = query_of("What does the walrus package's readme say?");
    let doc = build_value(
        &serde_json::json!({ "packages": packages }),
        Some(&query),
        300,
    );
    let texts = unit_texts(&doc);
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("packages.walrus.readme: ")),
        "{texts:#?}"
    );
    // Its siblings stay one line each.
    assert!(
        !texts
            .iter()
            .any(|t| t.starts_with("packages.router.readme"))
    );
}

#[test]
fn a_record_keyed_by_a_path_is_named_by_its_last_part() {
    // A lock file's shape: records keyed by their install path, one package installed under
    // several parents, and parents that merely depend on it.
    let mut packages = serde_json::Map::new();
    for parent in ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot"] {
        packages.insert(
            format!("node_modules/{parent}"),
            serde_json::json!({"version": "1.0.0", "license": "MIT",
                "dependencies": {"walrus": "^2.0.0", "other": "^1.0.0"}}),
        );
        packages.insert(
            format!("node_modules/{parent}/node_modules/walrus"),
            serde_json::json!({"version": "2.1.0", "license": "MIT"}),
        );
    }
    let lock = serde_json::json!({ "name": "app", "packages": packages });
    let query = query_of("Which versions of walrus are installed, and where?");
    let doc = build_value(&lock, Some(&query), 1000);
    let prior_of = |key: &str| {
        (0..doc.units.len())
            .find(|&i| doc.text(i).starts_with(&format!("packages.{key}:")))
            .map(|i| doc.units[i].prior)
            .unwrap_or_else(|| panic!("a unit for {key}"))
    };
    // Each copy outranks the parent that only depends on it.
    for parent in ["alpha", "delta", "foxtrot"] {
        let copy = prior_of(&format!("node_modules/{parent}/node_modules/walrus"));
        assert!(
            copy > prior_of(&format!("node_modules/{parent}")),
            "{parent}"
        );
    }
    // A path's last part alone names it: `node_modules/alpha` is not named by `walrus`.
    assert!(named::is_key_named(
        &query,
        "node_modules/x/node_modules/walrus"
    ));
    assert!(!named::is_key_named(
        &query,
        "node_modules/walrus/node_modules/x"
    ));
    assert!(!named::is_key_named(&query, "/"));
}

#[test]
fn a_key_is_named_by_its_words_past_a_short_namespace_prefix() {
    let query = Query::from_hints(
        &crate::methods::extract::Hints::new().with_query("which ntp clients can be chosen?"),
    )
    .expect("a query");
    assert!(named::is_key_named(&query, "cc_ntp"));
    assert!(named::is_key_named(&query, "ntp"));
    // A longer first word is part of the name, not a namespace.
    assert!(!named::is_key_named(&query, "chrony_ntp"));
    assert!(!named::is_key_named(&query, "cc_apt"));
}

/// Vessels in the shape of a marine data model: every reading is an object of a `value`
/// beside what describes it (`meta`, `$source`, `timestamp`, `pgn`), nested a few levels deep.
fn vessels() -> Value {
    let reading = |value: Value| {
        serde_json::json!({
            "meta": {"description": "A reading as the transponder reported it, with its units"},
            "value": value,
            "$source": "n2k.43",
            "timestamp": "2014-08-15T19:00:32.597Z",
            "pgn": 129794,
        })
    };
    let names = [
        "ALDER", "BIRCH", "CEDAR", "DAMSON", "ELDER", "FIR", "GORSE", "HAZEL", "KESTREL", "LARCH",
        "MAPLE", "OAK",
    ];
    let mut fleet = serde_json::Map::new();
    // The own vessel first, with readings of its own; then the targets it sees.
    let mut own = serde_json::Map::new();
    for k in [
        "headingTrue",
        "speedOverGround",
        "courseOverGround",
        "log",
        "depth",
        "position",
    ] {
        own.insert(k.into(), reading(3.5.into()));
    }
    fleet.insert(
        "urn:mrn:signalk:uuid:fb3cee37".into(),
        serde_json::json!({"uuid": "urn:mrn:signalk:uuid:fb3cee37", "navigation": own}),
    );
    for (i, name) in names.iter().enumerate() {
        let port = if *name == "KESTREL" {
            "PORTLAND"
        } else {
            "HARBOUR"
        };
        fleet.insert(
            format!("urn:mrn:imo:mmsi:2476040{i:02}"),
            serde_json::json!({
                "mmsi": format!("2476040{i:02}"),
                "sensors": {"ais": {"class": reading("A".into()), "fromBow": reading(80.into())}},
                "name": name,
                "navigation": {"destination": {
                    "commonName": reading(port.into()),
                    "eta": reading(format!("2014-08-1{i}T10:00:00.000Z").into()),
                }},
                "design": {"length": reading(136.into()), "beam": reading(22.into())},
            }),
        );
    }
    serde_json::json!({ "vessels": fleet })
}

#[test]
fn a_reading_keeps_its_value_before_what_describes_it() {
    let query = query_of("Where is the vessel KESTREL heading, and which source and PGN say so?");
    let fleet = vessels();
    let kestrel = fleet["vessels"]
        .as_object()
        .and_then(|m| m.values().find(|v| v["name"] == "KESTREL"))
        .expect("the KESTREL record");
    // Cut to fit, and projected to the leaves the query names: either way the readings keep
    // their values.
    let (none, notable) = (|_: &str| false, |_: &str, _: &Value| false);
    let usual = render::render_within(kestrel, 300, (Some(&query), false, &[]), &none, &notable);
    assert!(usual.contains(r#""value":"PORTLAND""#), "{usual}");
    let rarity = project::Rarity {
        rare_word: &|_| true,
        common_exact: &[],
    };
    let folded = render::render_within(kestrel, 120, (Some(&query), false, &[]), &none, &notable);
    let projected = project::project(
        kestrel,
        500,
        &query,
        &rarity,
        (&folded, ""),
        &none,
        &notable,
    )
    .expect("projected: the query names the readings' source and PGN");
    assert!(projected.contains(r#""value":"PORTLAND""#), "{projected}");
}

/// A changes feed of element docs, each with a spec and a summary; the doc at `special`
/// alone holds `extra` (an `_attachments` map), and every tenth doc an `obsolete` flag.
fn changes_feed(special: usize, extra: Value) -> Value {
    let results: Vec<Value> = (0..120)
        .map(|i| {
            let spec = ["HTML Standard", "SVG 2", "Ruby Extensions"][i % 3];
            let mut doc = serde_json::json!({
                "name": format!("element{i}"),
                "href": format!("https://html.spec.whatwg.org/multipage/elements.html#element{i}"),
                "spec": spec,
                "_rev": format!("1-{:032x}", i * 7919),
                "summary": format!("Element {i} of the {spec}, described at some length so that a record is worth a row of a table rather than itself."),
            });
            let fields = doc.as_object_mut().expect("an object");
            if i == special {
                fields.insert("_attachments".into(), extra.clone());
            }
            if i % 10 == 0 {
                fields.insert("obsolete".into(), Value::Bool(true));
            }
            serde_json::json!({"id": format!("el:{i}"), "seq": i, "doc": doc})
        })
        .collect();
    serde_json::json!({ "results": results })
}

#[test]
fn a_record_holding_a_key_very_few_have_that_the_query_names_shows_it() {
    let attachment = serde_json::json!({"notes.txt": {
        "content_type": "text/plain", "digest": "md5-KCgDEO8r9mr4/SgfItB6mw==", "revpos": 2}});
    let feed = changes_feed(77, attachment);
    let q = query_of("which doc carries an attachment? Give its name and digest.");
    let doc = build_value(&feed, Some(&q), 1200);
    let record = (0..doc.units.len())
        .map(|u| doc.text(u))
        .find(|t| t.contains("el:77"))
        .expect("the record");
    assert!(record.contains("md5-KCgDEO8r9mr4/SgfItB6mw=="), "{record}");
    // A key a tenth of the records hold is no key of one: those records stay rows.
    let q = query_of("which element docs are obsolete?");
    let doc = build_value(&feed, Some(&q), 1200);
    let record = (0..doc.units.len())
        .map(|u| doc.text(u))
        .find(|t| t.contains("el:30 |"))
        .expect("the row of an obsolete doc");
    assert!(!record.contains("described at some length"), "{record}");
}

#[test]
fn a_digest_the_query_asks_for_by_its_key_is_kept_whole() {
    let token = "ChhQRVJfUFJPSkVDVF9NQUNISU5FX1RZUEUSGjYwMDUzMTk1NTY3NS5uMS1zdGFuZGFyZC04";
    let items: Vec<Value> = (0..30)
        .map(|i| serde_json::json!({"name": format!("type-{i}"), "memoryMb": 1024 * i}))
        .collect();
    let page = serde_json::json!({"items": items, "nextPageToken": token, "etag": token});
    let asked = query_of("is there a token for the next page?");
    let doc = build_value(&page, Some(&asked), 300);
    let texts = unit_texts(&doc);
    assert!(texts.iter().any(|t| t.contains(token)), "{texts:?}");
    // Not asked for, it is cut to its head.
    let other = query_of("how much memory does type-7 get?");
    let doc = build_value(&page, Some(&other), 300);
    assert!(!unit_texts(&doc).iter().any(|t| t.contains(token)));
}

#[test]
fn a_digest_of_a_record_the_query_asks_for_by_its_key_is_kept_whole() {
    let digest = |seed: u64| {
        (0..4)
            .map(|i| format!("{:016x}", (seed + i).wrapping_mul(0x9e37_79b9_7f4a_7c15)))
            .collect::<String>()
    };
    // A listing whose first record describes the rest: its digests are members of a record
    // rendered whole, not a map's members.
    let mut records = vec![serde_json::json!({
        "time": "2026-01-02T03:04:05Z", "parent": digest(1), "tree": digest(2),
        "hostname": "build-7", "kind": "snapshot",
    })];
    for i in 0..40 {
        records.push(serde_json::json!({
            "name": format!("page-{i}.html"), "type": "file", "size": 1000 + i * 37,
            "mode": 420, "kind": "node",
        }));
    }
    let query = query_of("which snapshot is this and what was its parent?");
    let doc = build_value(&Value::Array(records), Some(&query), 1000);
    let texts = unit_texts(&doc);
    assert!(texts.iter().any(|t| t.contains(&digest(1))), "{texts:?}");
    // The digest it does not ask for is cut to its head.
    assert!(!texts.iter().any(|t| t.contains(&digest(2))), "{texts:?}");
}

#[test]
fn records_whose_nested_objects_hold_other_members_are_another_shape() {
    // A changelog: most releases only patch; a few break, under a `major` list. As templates
    // of one shape, the few would be repeats of the many, each ranked lower than the last.
    let releases: Vec<Value> = (0..40)
        .map(|i| {
            let changes = if i % 10 == 3 {
                serde_json::json!({"major": [{"comment": format!("Breaking change {i}")}],
                                   "patch": [{"comment": format!("Fix {i}")}]})
            } else {
                serde_json::json!({"patch": [{"comment": format!("Fix {i}")}]})
            };
            serde_json::json!({"version": format!("1.{i}.0"), "date": "2026-01-01", "comments": changes})
        })
        .collect();
    let doc = build_value(&serde_json::json!({"entries": releases}), None, 1000);
    let template_of = |needle: &str| {
        let u = (0..doc.units.len())
            .find(|&u| doc.text(u).contains(needle))
            .unwrap_or_else(|| panic!("no unit with {needle}"));
        doc.units[u].template
    };
    assert_ne!(template_of("Breaking change 13"), template_of("Fix 12\""));
    assert_eq!(
        template_of("Breaking change 13"),
        template_of("Breaking change 23")
    );
}
