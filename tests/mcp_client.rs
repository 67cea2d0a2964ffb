//! The rmcp client adapter against a real MCP server: `examples/rmcp_client.rs`, run as a test
//! against the official filesystem server.
//!
//! The server comes from `scripts/mcp/install.sh`, which exports `CONDENSE_TEST_NODE_MODULES`.
//! Without it the test prints a notice and passes, except under `CI`, where it is a failure.

use std::path::Path;

use condense::{Condenser, Config};

#[allow(dead_code, unreachable_pub)]
#[path = "../examples/rmcp_client.rs"]
mod example;

fn node_modules_installed() -> bool {
    if std::env::var_os("CONDENSE_TEST_NODE_MODULES").is_some() {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but CONDENSE_TEST_NODE_MODULES is not: run scripts/mcp/install.sh"
    );
    eprintln!(
        "skipping: the rmcp client example needs server-filesystem; run `eval \"$(scripts/mcp/install.sh)\"`"
    );
    false
}

#[tokio::test]
async fn rmcp_client_example_prints_a_condensed_result_and_a_retrieved_slice() {
    if !node_modules_installed() {
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data");
    let log = root.join("zookeeper.log");
    let original = std::fs::read_to_string(&log).expect("the sample log");
    let condenser = Condenser::new(
        Config::from_toml_str(
            "[defaults]\nthreshold_tokens = 2000\nbudget_tokens = 800\n",
            "test.toml",
        )
        .expect("config"),
    )
    .expect("condenser");

    let shown = example::show(
        example::filesystem_server(&root),
        condenser,
        &log,
        "Which followers shut down with an unexpected exception?",
    )
    .await
    .expect("the example runs");
    println!("{}\n{}\n{}", shown.condensed, shown.metadata, shown.slice);

    assert_ne!(
        shown.metadata["method"], "pass_through",
        "{}",
        shown.metadata
    );
    let after = shown.metadata["tokens_after"]
        .as_u64()
        .expect("tokens_after");
    assert!(after <= 800, "{after} tokens after condensing");
    assert!(shown.condensed.len() * 10 < original.len());
    let first_lines: Vec<&str> = original.lines().take(5).collect();
    assert_eq!(shown.slice.lines().collect::<Vec<_>>(), first_lines);
}
