//! Wraps a tool client in the condense layer and shows what reaches the agent.
//!
//! `cargo run --example layer` (set `CONDENSE_LLM_BASE_URL` etc. to use an LLM).

use std::convert::Infallible;
use std::time::Duration;

use condense::{CondenseLayer, Condenser, Config, ToolCall, ToolResult, call_tool_summarized};
use tower::{Layer, ServiceBuilder, service_fn};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // A tool that reads a log file: the shipped ZooKeeper sample.
    let read_log = service_fn(|call: ToolCall| async move {
        let path = call.arguments["path"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| format!("cannot read {path}: {e}"));
        Ok::<_, Infallible>(ToolResult::text(text))
    });

    let condenser = Condenser::new(Config::load(None)?)?;
    let client = ServiceBuilder::new()
        .timeout(Duration::from_secs(60))
        .service(read_log);
    let mut client = CondenseLayer::new(condenser.clone()).layer(client);

    let result = call_tool_summarized(
        &mut client,
        "read_log",
        serde_json::json!({"path": "examples/data/zookeeper.log"}),
        Some("Which followers shut down with an unexpected exception?"),
        600,
    )
    .await
    .map_err(|e| format!("the tool failed: {e}"))?;
    let text = result.content[0].as_text().unwrap_or_default();
    println!("{text}\n");
    println!("metadata: {}", serde_json::to_string(&result.meta)?);

    // Nothing is lost: the agent (or you) can page through the original by its ref.
    if let Some(reference) = result
        .meta
        .as_ref()
        .and_then(|m| m["condense"]["ref"].as_str())
    {
        let errors = condenser
            .retrieve(
                reference,
                condense::Selection::Pattern {
                    pattern: "ERROR".into(),
                    context: 80,
                    ignore_case: false,
                    skip: 0,
                    max_matches: 3,
                },
            )
            .await?;
        println!("\nthe first ERRORs in the original:\n{errors}");
    }
    Ok(())
}
