#![doc = include_str!("../README.md")]

mod ansi;
pub mod config;
mod engine;
mod error;
pub mod layer;
mod limits;
pub mod llm;
pub mod methods;
mod outcome;
pub mod policy;
pub mod secrets;
pub mod store;
mod structured;
mod sync;
mod tokens;
mod tool;

#[cfg(feature = "mcp")]
pub mod mcp;

pub use config::{Config, Mode, ProxyConfig, Rule};
pub use engine::{
    CallInfo, CondenseMeta, Condensed, Condenser, CondenserBuilder, Hook, Method, Request, Verdict,
};
pub use error::{ConfigError, PromptError, RetrieveError};
pub use layer::{Condense, CondenseLayer};
pub use limits::InputCut;
pub use llm::{LiteLlm, LlmError, Summarizer};
pub use methods::mapreduce::Progress;
pub use secrets::{SecretKind, SecretRedactor};
pub use store::Selection;
pub use structured::StructuredContentPolicy;
pub use tokens::{Encoding, TokenCounter, UnknownEncoding, estimate_tokens};
pub use tool::{Content, ToolCall, ToolRequest, ToolResponse, ToolResult};

use tower::{Service, ServiceExt};

/// Calls one tool through a condensing client with an explicit query and budget: the result
/// comes back whole when it has at most `budget` tokens, and condensed to `budget` tokens,
/// focused on `query`, when it has more. `client` is any tool service: a [`Condense`] or one
/// wrapped further (behind a `.timeout()`), returning [`ToolResult`], JSON or text. The same
/// call is a method on every such service through [`ToolClientExt`].
///
/// # Errors
///
/// Only the tool client's own errors; condensing never fails the call.
///
/// ```
/// use std::convert::Infallible;
///
/// use condense::{CondenseLayer, Condenser, Config, ToolCall, ToolResult, call_tool_summarized};
/// use tower::{Layer, service_fn};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let tools = service_fn(|_call: ToolCall| async {
///     let rows: String = (0..3000).map(|i| format!("pkg-{i} 1.0.{i} installed\n")).collect();
///     Ok::<_, Infallible>(ToolResult::text(rows))
/// });
/// let mut client = CondenseLayer::new(Condenser::new(Config::default()).unwrap()).layer(tools);
/// let result = call_tool_summarized(
///     &mut client,
///     "list_packages",
///     serde_json::json!({}),
///     Some("which version of pkg-2024 is installed?"),
///     300,
/// )
/// .await
/// .unwrap();
/// let text = result.content[0].as_text().unwrap();
/// assert!(text.contains("pkg-2024 1.0.2024"));
/// # });
/// ```
pub async fn call_tool_summarized<S>(
    client: &mut S,
    tool: &str,
    arguments: serde_json::Value,
    query: Option<&str>,
    budget: usize,
) -> Result<S::Response, S::Error>
where
    S: Service<ToolCall>,
{
    let mut call = ToolCall::new(tool, arguments).with_budget_tokens(budget);
    if let Some(query) = query {
        call = call.with_query(query);
    }
    client.ready().await?.call(call).await
}

/// [`call_tool_summarized`] as a method of every tool service.
///
/// ```
/// use std::time::Duration;
///
/// use condense::{CondenseLayer, Condenser, Config, ToolCall, ToolClientExt};
/// use tower::{ServiceBuilder, service_fn};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// // A tool returning plain text, behind a timeout.
/// let tools = service_fn(|_call: ToolCall| async {
///     Ok::<_, std::convert::Infallible>("line of output\n".repeat(5000))
/// });
/// let mut client = ServiceBuilder::new()
///     .timeout(Duration::from_secs(30))
///     .layer(CondenseLayer::new(Condenser::new(Config::default()).unwrap()))
///     .service(tools);
/// let text = client
///     .call_tool_summarized("tail_log", serde_json::json!({}), None, 200)
///     .await
///     .unwrap();
/// assert!(text.starts_with("[condense: "));
/// # });
/// ```
pub trait ToolClientExt: Service<ToolCall> {
    /// Calls `tool` with an explicit query and budget; see [`call_tool_summarized`].
    fn call_tool_summarized(
        &mut self,
        tool: &str,
        arguments: serde_json::Value,
        query: Option<&str>,
        budget: usize,
    ) -> impl std::future::Future<Output = Result<Self::Response, Self::Error>>
    where
        Self: Sized,
    {
        call_tool_summarized(self, tool, arguments, query, budget)
    }
}

impl<S: Service<ToolCall>> ToolClientExt for S {}
