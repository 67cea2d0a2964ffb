//! The MCP proxy under load: 1,000 `tools/call` requests in flight at once through the real
//! `condense` binary in HTTP mode, in front of the real `server-filesystem`, with a fake LLM
//! that answers after 50 ms and counts the requests it has in flight.
//!
//! Correctness only (every answer right, the LLM bound held); timing and memory are measured by
//! `cargo bench --bench proxy_load` (see docs/load.md). Needs `scripts/mcp/install.sh`'s
//! `CONDENSE_TEST_NODE_MODULES`; without it the test passes with a notice, except under `CI`.

use std::sync::Arc;
use std::time::Duration;

use crate::support::fake_llm::{FakeLlm, Reply};
use crate::support::load::{self, Checker, Files, Kind, Proxy};

/// The proxy's `[llm] max_concurrency`.
const LLM_MAX_CONCURRENCY: usize = 4;

/// Client sessions, so upstream `server-filesystem` processes.
const SESSIONS: usize = 8;

const CALLS: usize = 1000;

const RETRIEVES: usize = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thousand_concurrent_calls_are_all_answered_correctly_within_the_llm_bound() {
    let Some(node_modules) = load::node_modules() else {
        return;
    };
    let llm = FakeLlm::with_handler(|request| {
        Reply::completion(&load::summary_for(&request.body)).after(Duration::from_millis(50))
    })
    .await;
    let files = Arc::new(Files::write("test", 40, 150, 120));
    let config = files.root.join("condense.toml");
    load::write_config(&config, &llm.url(), LLM_MAX_CONCURRENCY, "");
    let proxy = Proxy::start(
        env!("CARGO_BIN_EXE_condense").as_ref(),
        &config,
        &load::filesystem_server(&node_modules, &files.root),
        &files.root.join("proxy.log"),
    );
    let sessions = load::connect_sessions(&proxy.url(), SESSIONS).await;
    let plan = load::plan(CALLS, &files, RETRIEVES, 0);

    let burst = load::burst(&sessions, &Checker::new(Arc::clone(&files)), &plan).await;

    let errors = burst.errors();
    assert!(
        errors.is_empty(),
        "{} of {} requests wrong, e.g. {:?}\nproxy log:\n{}",
        errors.len(),
        burst.samples.len(),
        &errors[..errors.len().min(5)],
        proxy.log()
    );
    let counts = burst.counts();
    assert_eq!(counts[&Kind::PassThrough], 700);
    assert_eq!(counts[&Kind::Condensed], 150);
    assert_eq!(counts[&Kind::CondensedShared], 150);
    assert_eq!(counts[&Kind::Retrieve], RETRIEVES);
    // One LLM call per different large file, and one for the 150 identical reads: concurrent
    // identical calls wait for the first instead of asking the LLM again.
    assert_eq!(llm.requests(), load::distinct_large_reads(&plan) + 1);
    assert!(
        llm.max_in_flight() <= LLM_MAX_CONCURRENCY,
        "{} LLM requests in flight at once, above max_concurrency = {LLM_MAX_CONCURRENCY}",
        llm.max_in_flight()
    );
    assert!(
        llm.max_in_flight() > 1,
        "the LLM calls were never concurrent: the bound was not exercised"
    );
    load::close_sessions(sessions).await;
}
