//! MCP: the rmcp client adapter and the proxy, both on the library's one pipeline.
//!
//! [`McpTools`] turns a running rmcp client into a tower `Service<ToolCall>`, so a Rust agent
//! wraps it with [`CondenseLayer`](crate::CondenseLayer) in one line (see
//! `examples/rmcp_client.rs`). rmcp's `CallToolResult` and [`McpCall`] implement
//! [`ToolResponse`](crate::ToolResponse) and [`ToolRequest`](crate::ToolRequest), for code
//! that keeps rmcp's own types.
//!
//! The proxy: condense in front of any MCP server. Its `tools/call` path is the same
//! `CondenseLayer` around the upstream connection, configured by the one [`Config`](crate::Config).
//!
//! [`run`] starts an MCP server for a client (over stdio, or streamable HTTP with a health
//! endpoint) that relays everything to an upstream MCP server (a child process over stdio, or
//! a streamable-HTTP URL): tools, resources and templates, prompts, completions, logging,
//! progress, cancellation, list-changed notifications, and the upstream's requests to the
//! client (sampling, elicitation, roots). On the way back, `tools/call` results above the
//! configured threshold are condensed; the original stays retrievable by the added
//! `condense_retrieve` tool.
//!
//! Every listed tool gains an optional `condense_query` argument where the model says what it
//! is looking for; the proxy removes it before forwarding. The proxy also adds the tools
//! `call_tool_summarized`, `summarize` and `summarize_for_extraction`.
//!
//! ```no_run
//! use condense::mcp::{ProxyOptions, UpstreamSpec, run};
//!
//! # async fn example() -> Result<(), condense::mcp::ProxyError> {
//! let upstream = UpstreamSpec::command(["npx", "-y", "@modelcontextprotocol/server-filesystem", "/data"])?;
//! run(ProxyOptions::new(upstream).with_config("condense.toml")).await
//! # }
//! ```
//!
//! Every use of rmcp, the MCP SDK, is inside this module: its API moves between releases.

mod adapt;
mod added;
mod backlog;
mod backoff;
mod binary;
mod client;
mod downstream;
mod envelope;
mod error;
mod http;
mod lines;
mod outbox;
mod progress;
mod proxy;
mod relay;
mod server;
mod setup;
mod stdio;
mod supervisor;
mod tasks;
mod tools;
mod upstream;
mod upstream_http;

pub use adapt::McpCall;
pub use client::{McpCallError, McpTools};
pub use error::ProxyError;
pub use proxy::{ProxyOptions, run};
pub use upstream::UpstreamSpec;

#[doc(hidden)]
pub mod testing;
