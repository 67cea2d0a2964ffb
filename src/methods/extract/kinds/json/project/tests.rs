use super::*;
use crate::methods::extract::Hints;

/// One pod of a real `kubectl get pods -o json` list, shortened.
const POD: &str = r#"{"metadata":{"name":"calico-node-h2bjp","namespace":"kube-system","uid":"2198392d-d521-4e08-86b3-6e1a14bc6348","resourceVersion":"48113386","creationTimestamp":"2020-04-10T02:19:09Z","labels":{"controller-revision-hash":"6d9c4b8f5f","k8s-app":"calico-node"}},"spec":{"containers":[{"name":"calico-node","image":"calico/node:v3.13.1","env":[{"name":"DATASTORE_TYPE","value":"kubernetes"},{"name":"CLUSTER_TYPE","value":"k8s,bgp"}],"resources":{"requests":{"cpu":"250m"}}}],"nodeName":"duckboat-01"},"status":{"phase":"Running","podIP":"10.10.238.73","qosClass":"Burstable"}}"#;

fn every_word_rare() -> Rarity<'static> {
    Rarity {
        rare_word: &|_| true,
        common_exact: &[],
    }
}

/// [`POD`] projected within 220 bytes, its usual rendering showing nothing.
fn project_pod(q: &Query) -> Option<String> {
    let pod: Value = serde_json::from_str(POD).unwrap();
    project(
        &pod,
        220,
        q,
        &every_word_rare(),
        ("{}", ""),
        &|_| false,
        &|_, _| false,
    )
}

fn query(text: &str) -> Query {
    Query::from_hints(&Hints::new().with_query(text)).unwrap()
}

#[test]
fn deep_leaves_the_query_names_are_kept_with_their_path() {
    let q = query(
        "which pod is in the Burstable QoS class and what CPU request does its container set?",
    );
    let out = project_pod(&q).expect("a projection");
    // The record's own JSON, pruned to what answers: each leaf under its path.
    assert!(
        out.contains(r#""resources":{"requests":{"cpu":"250m"}}"#),
        "{out}"
    );
    assert!(out.contains(r#""qosClass":"Burstable""#), "{out}");
    assert!(
        out.contains(r#"{"metadata":{"name":"calico-node-h2bjp","#),
        "{out}"
    );
    // Noise by shape is the first to go.
    assert!(!out.contains("2198392d"), "{out}");
    assert!(!out.contains("2020-04-10T02:19:09Z"), "{out}");
    // What was left out is marked where it was, and counted at the end.
    assert!(out.contains(",…}"), "{out}");
    assert!(out.ends_with("}") && out.contains(",…+"), "{out}");
}

#[test]
fn an_answering_leaf_in_a_list_keeps_the_name_of_its_item() {
    let q = query("which image does each container run?");
    let out = project_pod(&q).expect("a projection");
    assert!(
        out.contains(r#""containers":[{"name":"calico-node","image":"calico/node:v3.13.1","#),
        "{out}"
    );
}

/// One package of a real `cargo metadata` listing, shortened.
const PACKAGE: &str = r#"{"name":"regex","version":"1.13.2","id":"registry+https://github.com/rust-lang/crates.io-index#regex@1.13.2","dependencies":[{"name":"aho-corasick","req":"^1.0.0","kind":null,"features":[]},{"name":"regex-automata","req":"^0.4.12","kind":null,"features":["alloc","syntax","meta","nfa-pikevm"]}],"targets":[{"kind":["lib"],"name":"regex","src_path":"/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/regex-1.13.2/src/lib.rs"},{"kind":["test"],"name":"integration","src_path":"/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/regex-1.13.2/tests/lib.rs"}],"features":{"default":["std","perf","unicode","regex-syntax/default"],"logging":["aho-corasick?/logging","memchr?/logging","regex-automata/logging"],"perf":["perf-cache","perf-dfa","perf-onepass","perf-backtrack","perf-inline","perf-literal"],"perf-dfa":["regex-automata/hybrid"],"unicode":["unicode-age","unicode-bool","unicode-case","unicode-gencat","unicode-perl","unicode-script","unicode-segment"]},"manifest_path":"/root/.cargo/registry/src/index.crates.io-1949cf8c6b5b557f/regex-1.13.2/Cargo.toml"}"#;

#[test]
fn a_short_list_is_one_leaf_and_the_record_name_singles_out_no_leaf_in_it() {
    let q = query(
        "which regex version was resolved, what are its default features and what does regex's perf-dfa feature enable?",
    );
    let package: Value = serde_json::from_str(PACKAGE).unwrap();
    let out = project(
        &package,
        300,
        &q,
        &every_word_rare(),
        (
            r#"{"name":"regex","version":"1.13.2","features":{"default":[…4 items],"logging":[…3 items],"perf":[…6 items],"perf-dfa":[…1 items],"unicode":[…7 items]}}"#,
            "",
        ),
        &|_| false,
        &|_, _| false,
    )
    .expect("a projection");
    // A feature's list is shown whole, as the original prints it.
    assert!(
        out.contains(r#""default":["std","perf","unicode","regex-syntax/default"]"#),
        "{out}"
    );
    assert!(
        out.contains(r#""perf-dfa":["regex-automata/hybrid"]"#),
        "{out}"
    );
    assert!(
        out.starts_with(r#"{"name":"regex","version":"1.13.2","#),
        "{out}"
    );
    // Paths that merely hold the package's own name do not outrank what was asked.
    assert!(!out.contains("tests/lib.rs"), "{out}");
}

#[test]
fn a_paragraph_holding_the_query_s_words_is_kept_beside_deep_leaves() {
    // A documentation generator's entry for one method: its description is a paragraph,
    // its tags lie deep.
    let entry = serde_json::json!({
        "name": "fail",
        "description": "Create a fatal error associated with the file. Its fatal is set to true and file is set to the current file path. Its added to file.messages. Note: a fatal error means that a file is no longer processable.",
        "tags": [{"title": "param", "description": "Reason for message.", "type": {"type": "UnionType", "elements": [{"name": "string"}, {"name": "Error"}]}},
                 {"title": "throws", "description": "Message.", "type": {"type": "NameExpression", "name": "VFileMessage"}}],
    });
    let q =
        query("how is fail documented: which fatal error does it create, and what does it throw?");
    let out = project(
        &entry,
        400,
        &q,
        &every_word_rare(),
        (r#"{"name":"fail","tags":[…2 items]}"#, ""),
        &|_| false,
        &|_, _| false,
    )
    .expect("a projection");
    assert!(out.contains("Create a fatal error"), "{out}");
}

#[test]
fn only_folded_lists_count_as_folded() {
    let usual = r#"{"name":"a","requires":[…21 items],"meta":{…4 keys}}"#;
    let folded = folded_lists(usual);
    assert_eq!(folded, ["requires"]);
    assert!(inside_folded("requires[3]", &folded));
    assert!(inside_folded("meta.requires[3]", &folded));
    assert!(!inside_folded("meta.name", &folded));
    assert!(!inside_folded("other[2]", &folded));
}

#[test]
fn a_record_the_query_does_not_touch_is_not_projected() {
    assert!(project_pod(&query("zebra xylophone")).is_none());
}
