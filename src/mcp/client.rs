//! An rmcp client as a tower `Service<ToolCall>`, so a Rust agent that talks MCP wraps its
//! client with [`CondenseLayer`](crate::CondenseLayer) in one line.
//!
//! What a `tools/call` can bring back, and what [`McpTools`] does with it:
//!
//! - a result, an error result (`isError`), structured content, images, audio, resources:
//!   all become one [`ToolResult`], nothing dropped (unknown block shapes are kept as
//!   [`Content::Other`](crate::Content::Other));
//! - a JSON-RPC error, a closed connection or a timeout: an [`McpCallError`];
//! - requests the server sends the client while the call runs (sampling, elicitation, roots,
//!   pings) and its notifications (progress, logging, list changes): these are the client
//!   handler's, answered by rmcp's service loop as if the adapter were not there;
//! - an `input_required` answer (the server needs input before it can finish): when built
//!   from a `RunningService`, the adapter lets rmcp fulfil it through the client handler and
//!   retries, as rmcp's own `call_tool` does; when built from a bare `Peer`, which has no
//!   handler to ask, it is an [`McpCallError::InputRequired`];
//! - a task (only when the client declared the tasks extension): an [`McpCallError::Task`]
//!   naming the task, for the caller to poll through its peer.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rmcp::model::{CallToolRequestParams, CallToolResponse, CallToolResult};
use rmcp::service::{RunningService, ServiceError};
use rmcp::{Peer, RoleClient};
use serde_json::Value;

use super::upstream::redact_urls;
use crate::tool::{Content, ToolCall, ToolResponse as _, ToolResult};

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Why a tool call through [`McpTools`] failed. A result with `isError` is no failure: it is a
/// [`ToolResult`] with `is_error` set.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum McpCallError {
    /// The call's arguments are not a JSON object (or null), as MCP requires.
    #[error("the arguments of tool `{tool}` must be a JSON object, not {found}")]
    Arguments {
        /// The tool called.
        tool: String,
        /// What the arguments were instead.
        found: &'static str,
    },
    /// The server answered with a JSON-RPC error, or the connection failed or timed out.
    /// URLs in the cause lose their credentials and query.
    #[error("calling tool `{tool}` failed")]
    Call {
        /// The tool called.
        tool: String,
        /// The cause.
        #[source]
        source: BoxError,
    },
    /// The server needs input from the client to finish, and the adapter was built from a bare
    /// peer, which has no client handler to ask. Build it from the `RunningService` instead.
    #[error(
        "tool `{tool}` needs input from the client; build McpTools from the RunningService so its handler can answer"
    )]
    InputRequired {
        /// The tool called.
        tool: String,
    },
    /// The server made the call a task; its result comes from polling `tasks/get`.
    #[error("tool `{tool}` became task `{task_id}`; poll it through the peer")]
    Task {
        /// The tool called.
        tool: String,
        /// The server's id for the task.
        task_id: String,
    },
}

/// An error text with URLs reduced to scheme, host and path, for causes that may quote one.
#[derive(Debug)]
struct Redacted(String);

impl fmt::Display for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Redacted {}

fn call_error(tool: &str, error: ServiceError) -> McpCallError {
    let source: BoxError = match error {
        // The server's own answer: kept typed, it quotes no URL of ours.
        ServiceError::McpError(answer) => Box::new(answer),
        other => Box::new(Redacted(redact_urls(&other.to_string()))),
    };
    McpCallError::Call {
        tool: tool.to_owned(),
        source,
    }
}

/// How one call reaches the server: through a peer alone, or through a running service whose
/// handler can answer `input_required`.
trait Caller: Send + Sync + 'static {
    fn call(
        &self,
        params: CallToolRequestParams,
    ) -> BoxFuture<Result<CallToolResponse, ServiceError>>;
}

impl Caller for Peer<RoleClient> {
    fn call(
        &self,
        params: CallToolRequestParams,
    ) -> BoxFuture<Result<CallToolResponse, ServiceError>> {
        let peer = self.clone();
        Box::pin(async move { peer.call_tool_once(params).await })
    }
}

/// A running service: rmcp drives `input_required` rounds through its handler.
struct Running<S: rmcp::Service<RoleClient>>(Arc<RunningService<RoleClient, S>>);

impl<S: rmcp::Service<RoleClient>> Caller for Running<S> {
    fn call(
        &self,
        params: CallToolRequestParams,
    ) -> BoxFuture<Result<CallToolResponse, ServiceError>> {
        let service = self.0.clone();
        Box::pin(async move {
            match service.peer().call_tool_once(params.clone()).await? {
                // Only an input request needs the handler: rmcp's helper answers it and retries.
                CallToolResponse::InputRequired(_) => service
                    .call_tool(params)
                    .await
                    .map(CallToolResponse::Complete),
                other => Ok(other),
            }
        })
    }
}

/// An MCP server's tools as a tower `Service<ToolCall>` answering [`ToolResult`]s: the rmcp
/// client adapter. Cheap to clone; always ready (rmcp queues requests itself).
///
/// ```no_run
/// use condense::mcp::McpTools;
/// use condense::{CondenseLayer, Condenser, Config, ToolCall};
/// use rmcp::ServiceExt;
/// use rmcp::transport::TokioChildProcess;
/// use tower::{Layer, ServiceExt as _};
///
/// # async fn example() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
/// let command = tokio::process::Command::new("mcp-server-filesystem");
/// let client = ().serve(TokioChildProcess::new(command)?).await?;
///
/// let condenser = Condenser::new(Config::default())?;
/// let tools = CondenseLayer::new(condenser).layer(McpTools::new(client));
///
/// let call = ToolCall::new("read_text_file", serde_json::json!({"path": "/var/log/syslog"}));
/// let result = tools.oneshot(call.with_query("failed logins")).await?;
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct McpTools {
    caller: Arc<dyn Caller>,
}

impl fmt::Debug for McpTools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("McpTools").finish_non_exhaustive()
    }
}

impl McpTools {
    /// The tools of the server behind `client`, a running rmcp client. Input requests the
    /// server makes are answered by the client's handler.
    pub fn new<S: rmcp::Service<RoleClient>>(client: RunningService<RoleClient, S>) -> Self {
        Self::from_shared(Arc::new(client))
    }

    /// Like [`McpTools::new`], for a client the caller keeps using too.
    pub fn from_shared<S: rmcp::Service<RoleClient>>(
        client: Arc<RunningService<RoleClient, S>>,
    ) -> Self {
        McpTools {
            caller: Arc::new(Running(client)),
        }
    }

    /// The tools of the server behind `peer`. A peer has no handler, so a call that needs
    /// input from the client fails with [`McpCallError::InputRequired`].
    pub fn from_peer(peer: Peer<RoleClient>) -> Self {
        McpTools {
            caller: Arc::new(peer),
        }
    }
}

/// The MCP form of `call`: its arguments as a JSON object. Query and budget stay local.
fn params_of(call: &ToolCall) -> Result<CallToolRequestParams, McpCallError> {
    let mut params = CallToolRequestParams::new(call.name.clone());
    params.arguments = match &call.arguments {
        Value::Object(map) => Some(map.clone()),
        Value::Null => None,
        other => {
            return Err(McpCallError::Arguments {
                tool: call.name.clone(),
                found: json_kind(other),
            });
        }
    };
    Ok(params)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The crate's form of an rmcp result. Through MCP JSON, so that every field and block shape
/// rmcp knows survives, including ones the crate has no type for.
fn to_tool_result(result: &CallToolResult) -> ToolResult {
    match serde_json::to_value(result) {
        Ok(json) => ToolResult::from_mcp_json(&json),
        // Serializing a value rmcp itself built does not fail; should it, the text survives.
        Err(_) => ToolResult::new(result.text_parts().into_iter().map(Content::text).collect())
            .with_error(result.is_error()),
    }
}

impl tower::Service<ToolCall> for McpTools {
    type Response = ToolResult;
    type Error = McpCallError;
    type Future = BoxFuture<Result<ToolResult, McpCallError>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, call: ToolCall) -> Self::Future {
        let caller = self.caller.clone();
        Box::pin(async move {
            let params = params_of(&call)?;
            let tool = call.name;
            match caller.call(params).await {
                Ok(CallToolResponse::Complete(result)) => Ok(to_tool_result(&result)),
                Ok(CallToolResponse::InputRequired(_)) => Err(McpCallError::InputRequired { tool }),
                Ok(CallToolResponse::Task(task)) => Err(McpCallError::Task {
                    tool,
                    task_id: task.task.task_id,
                }),
                Ok(_) => Err(call_error(&tool, ServiceError::UnexpectedResponse)),
                Err(error) => Err(call_error(&tool, error)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::{
        CallToolResult, ClientConfig, ContentBlock, ErrorData as McpError, ServerCapabilities,
        ServerConfig, ToolsCapability,
    };
    use rmcp::service::RequestContext;
    use rmcp::{RoleServer, ServerHandler, ServiceExt};
    use serde_json::json;
    use tower::ServiceExt as _;

    /// A server whose `fails` tool fails at the protocol level, `broken` reports a tool error,
    /// and anything else answers with text, an image and a structured copy.
    #[derive(Debug, Clone)]
    struct Server;

    impl ServerHandler for Server {
        fn get_info(&self) -> ServerConfig {
            let mut capabilities = ServerCapabilities::default();
            capabilities.tools = Some(ToolsCapability::default());
            ServerConfig::new(capabilities)
        }

        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, McpError> {
            match request.name.as_ref() {
                "fails" => Err(McpError::invalid_params("no such file: /nope", None)),
                "broken" => Ok(CallToolResult::error(vec![ContentBlock::text("disk full")]).into()),
                _ => {
                    let image: ContentBlock = serde_json::from_value(
                        json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
                    )
                    .expect("an image block");
                    let mut result =
                        CallToolResult::success(vec![ContentBlock::text("hello"), image]);
                    result.structured_content = Some(json!({"n": 1}));
                    Ok(result.into())
                }
            }
        }
    }

    async fn tools() -> McpTools {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = Server.serve(server_io).await {
                let _ = running.waiting().await;
            }
        });
        let client = ClientConfig::default()
            .serve(client_io)
            .await
            .expect("handshake");
        McpTools::new(client)
    }

    #[tokio::test]
    async fn every_block_and_the_structured_copy_come_back() {
        let result = tools()
            .await
            .oneshot(ToolCall::new("read", json!({"path": "/a"})))
            .await
            .expect("a result");
        assert_eq!(result.content[0], Content::text("hello"));
        assert_eq!(result.content[1].to_mcp_json()["type"], "image");
        assert_eq!(result.structured_content, Some(json!({"n": 1})));
        assert!(!result.is_error);
    }

    #[tokio::test]
    async fn a_tool_error_is_a_result_and_a_protocol_error_is_an_error() {
        let tools = tools().await;
        let result = tools
            .clone()
            .oneshot(ToolCall::new("broken", Value::Null))
            .await
            .expect("a tool error is a result");
        assert!(result.is_error);
        let error = tools
            .oneshot(ToolCall::new("fails", json!({})))
            .await
            .expect_err("a protocol error");
        assert!(matches!(&error, McpCallError::Call { tool, .. } if tool == "fails"));
        let cause = std::error::Error::source(&error)
            .expect("the cause")
            .to_string();
        assert!(cause.contains("no such file: /nope"), "{cause}");
    }

    #[tokio::test]
    async fn arguments_that_are_not_an_object_are_refused_before_sending() {
        let error = tools()
            .await
            .oneshot(ToolCall::new("read", json!(["/a"])))
            .await
            .expect_err("refused");
        assert_eq!(
            error.to_string(),
            "the arguments of tool `read` must be a JSON object, not an array"
        );
    }
}
