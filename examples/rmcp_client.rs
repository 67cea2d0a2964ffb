//! An rmcp client wrapped with the condense layer in one line: reads a 280 KB log through the
//! official filesystem MCP server, prints the condensed result, then a slice of the original
//! retrieved by its ref.
//!
//! `cargo run --example rmcp_client` starts the server with
//! `npx -y @modelcontextprotocol/server-filesystem`; with `CONDENSE_TEST_NODE_MODULES` set it
//! runs the installed copy under that directory instead (no download).

use std::path::{Path, PathBuf};

use condense::mcp::McpTools;
use condense::{CondenseLayer, Condenser, Config, Selection, ToolCall};
use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use tower::{Layer, ServiceExt as _};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// What the example shows: the text the agent gets and a slice of the kept original.
#[derive(Debug)]
pub struct Shown {
    /// The condensed result's text.
    pub condensed: String,
    /// The result's condense metadata (method, tokens before and after, ref).
    pub metadata: serde_json::Value,
    /// Lines of the original, retrieved by the ref.
    pub slice: String,
}

/// The filesystem server serving `root`: the installed copy when its directory is known, npx
/// otherwise.
pub fn filesystem_server(root: &Path) -> tokio::process::Command {
    match std::env::var_os("CONDENSE_TEST_NODE_MODULES") {
        Some(modules) => {
            let mut command = tokio::process::Command::new("node");
            command.arg(
                PathBuf::from(modules)
                    .join("@modelcontextprotocol/server-filesystem/dist/index.js"),
            );
            command.arg(root);
            command
        }
        None => {
            let mut command = tokio::process::Command::new("npx");
            command.args(["-y", "@modelcontextprotocol/server-filesystem"]);
            command.arg(root);
            command
        }
    }
}

/// Reads `file` (under the server's root) through `server`, condensed for `query`.
pub async fn show(
    server: tokio::process::Command,
    condenser: Condenser,
    file: &Path,
    query: &str,
) -> Result<Shown, BoxError> {
    let client = ().serve(TokioChildProcess::new(server)?).await?;

    // The one line: the MCP client becomes a tower service, wrapped by the layer.
    let tools = CondenseLayer::new(condenser.clone()).layer(McpTools::new(client));

    let call = ToolCall::new(
        "read_text_file",
        serde_json::json!({"path": file.display().to_string()}),
    )
    .with_query(query);
    let result = tools.oneshot(call).await?;
    if result.is_error {
        return Err(format!("the server answered with an error: {:?}", result.content).into());
    }

    let condensed = result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect::<Vec<_>>()
        .join("\n");
    let metadata = result
        .meta
        .as_ref()
        .and_then(|meta| meta.get("condense"))
        .cloned()
        .unwrap_or_default();
    // Nothing is lost: the original is kept under the ref the metadata names.
    let slice = match metadata["ref"].as_str() {
        Some(reference) => {
            condenser
                .retrieve(reference, Selection::Lines { start: 1, end: 5 })
                .await?
        }
        None => String::new(),
    };
    Ok(Shown {
        condensed,
        metadata,
        slice,
    })
}

#[tokio::main]
async fn main() -> Result<(), BoxError> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data");
    let condenser = Condenser::new(Config::load(None)?)?;
    let shown = show(
        filesystem_server(&root),
        condenser,
        &root.join("zookeeper.log"),
        "Which followers shut down with an unexpected exception?",
    )
    .await?;
    println!("{}\n", shown.condensed);
    println!("metadata: {}\n", shown.metadata);
    println!(
        "the original's first lines, retrieved by ref:\n{}",
        shown.slice
    );
    Ok(())
}
