//! Records the query asks to lack something: an empty field, a flag that is off, or no such
//! member at all.

use super::tables::components;
use super::*;

#[test]
fn a_record_lacking_what_the_query_asks_about_ranks_with_the_best_matches() {
    let components = components();
    let listing = serde_json::json!({ "components": components });
    let q = query_of("which component declares no license at all?");
    let doc = build_value(&listing, Some(&q), 300);
    let scores = crate::methods::extract::score::score(&doc, Some(&q));
    let lacking = (0..doc.units.len())
        .find(|&u| doc.text(u).contains("package-23 |"))
        .expect("the row of the component without a license");
    let mut ranked: Vec<usize> = (0..doc.units.len())
        .filter(|&u| !doc.units[u].pinned)
        .collect();
    ranked.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    // Ahead of the records rare for their own licenses.
    assert_eq!(ranked[0], lacking, "{}", doc.text(ranked[0]));
}

#[test]
fn a_record_whose_flag_the_query_asks_it_to_lack_ranks_with_the_best_matches() {
    // A security scan: each binary's hardening flags as "yes"/"no", and a count to rank by.
    let binaries: serde_json::Map<String, Value> = (0..200)
        .map(|i| {
            let path = format!("/usr/bin/tool{i}");
            let pie = if i % 8 == 3 { "no" } else { "yes" };
            let record = serde_json::json!({
                "relro": if i % 3 == 0 { "full" } else { "partial" },
                "canary": "yes",
                "pie": pie,
                "fortified": (i * 7 % 31).to_string(),
                "filename": path,
            });
            (path, record)
        })
        .collect();
    let q =
        query_of("which executables are built without PIE, and how many functions are fortified?");
    let doc = build_value(&Value::Object(binaries), Some(&q), 300);
    let scores = crate::methods::extract::score::score(&doc, Some(&q));
    let mut ranked: Vec<usize> = (0..doc.units.len())
        .filter(|&u| !doc.units[u].pinned)
        .collect();
    ranked.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    // Most of the 25 binaries without PIE rank first, whatever their functions fortified.
    let lacking = ranked[..25]
        .iter()
        .filter(|&&u| doc.text(u).contains(r#""pie":"no""#))
        .count();
    assert!(lacking >= 15, "{lacking} of 25");
}

#[test]
fn records_without_the_member_the_query_asks_them_to_lack_rank_first() {
    // A changes feed of element docs: each names its interface (of a few), but for three.
    let results: Vec<Value> = (0..60)
        .map(|i| {
            let spec = ["HTML Standard", "SVG 2", "Ruby Extensions"][i % 3];
            let interface = ["HTMLElement", "SVGElement", "HTMLHeadingElement"][i % 3];
            let mut doc = serde_json::json!({
                "name": format!("element{i}"),
                "spec": spec,
                "interface": interface,
                "_rev": format!("1-{:032x}", i * 7919),
            });
            if [17, 18, 44].contains(&i) {
                doc.as_object_mut().map(|d| d.remove("interface"));
            }
            serde_json::json!({"id": format!("el:{i}"), "seq": i, "doc": doc})
        })
        .collect();
    let feed = serde_json::json!({ "results": results, "last_seq": 60 });
    let q = query_of("which element docs have no interface at all, and from which spec?");
    let doc = build_value(&feed, Some(&q), 300);
    let scores = crate::methods::extract::score::score(&doc, Some(&q));
    let mut ranked: Vec<usize> = (0..doc.units.len())
        .filter(|&u| !doc.units[u].pinned && doc.text(u).contains("el:"))
        .collect();
    ranked.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let first: Vec<&str> = ranked[..3].iter().map(|&u| doc.text(u)).collect();
    for id in ["el:17", "el:18", "el:44"] {
        let is_it = |t: &&str| t.contains(&format!("{id}\"")) || t.contains(&format!("{id} |"));
        assert!(first.iter().any(is_it), "{id}: {first:?}");
    }
}

#[test]
fn records_without_a_member_are_no_answer_when_many_lack_it() {
    // Regions of many countries, a fifth of them with no code: which lack one is for the
    // query's other words to say, not the absence alone.
    let regions: Vec<Value> = (0..120)
        .map(|i| {
            let mut region = serde_json::json!({
                "country": format!("Country{}", i / 6),
                "name": format!("Region{i}"),
                "shortCode": format!("R{}", i % 6),
            });
            if i % 5 == 0 {
                region.as_object_mut().map(|r| r.remove("shortCode"));
            }
            region
        })
        .collect();
    let q = query_of("which region of Country7 has no short code?");
    let doc = build_value(&Value::Array(regions), Some(&q), 300);
    let scores = crate::methods::extract::score::score(&doc, Some(&q));
    let mut ranked: Vec<usize> = (0..doc.units.len())
        .filter(|&u| !doc.units[u].pinned)
        .collect();
    ranked.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    // The six regions of the country named come first, not those of other countries that
    // lack a code too.
    for &u in &ranked[..6] {
        assert!(doc.text(u).contains("Country7"), "{}", doc.text(u));
    }
}
