//! The proxy in memory: rmcp's own client talks to the proxy over `tokio::io::duplex`, and the
//! proxy relays to an upstream written here with rmcp, served on a loopback port. No node, no
//! python.

use std::sync::Arc;

use hyper_util::rt::{TokioExecutor, TokioIo};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ClientConfig, ContentBlock,
    ErrorData as McpError, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool, ToolsCapability,
};
use rmcp::service::{RequestContext, RunningService};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::{ProxyServer, Shared};
use crate::mcp::proxy::load;
use crate::mcp::upstream::UpstreamSpec;

/// Lines of the large result: about 9,000 tokens, far above the default threshold.
const LOG_LINES: usize = 600;

/// The fewest jobs `jobs`'s output schema allows in its structured copy.
const MIN_JOBS: usize = 200;

fn log_text() -> String {
    (0..LOG_LINES)
        .map(|i| {
            format!(
                "2026-01-01 10:{:02}:{:02} INFO worker-{} handled job {i} in {} ms\n",
                i / 60 % 60,
                i % 60,
                i % 7,
                i * 13 % 997
            )
        })
        .collect()
}

/// An upstream with one small tool and one whose result is large and structured.
#[derive(Debug, Clone)]
struct Upstream;

fn tool(value: Value) -> Tool {
    serde_json::from_value(value).expect("a tool")
}

impl ServerHandler for Upstream {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(ToolsCapability::default());
        ServerConfig::new(capabilities)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(vec![
            tool(json!({"name": "echo", "inputSchema": {"type": "object"}})),
            tool(json!({
                "name": "jobs",
                "inputSchema": {"type": "object"},
                "outputSchema": {
                    "type": "object",
                    "properties": {"jobs": {"type": "array", "minItems": MIN_JOBS}}
                }
            })),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let arguments = Value::Object(request.arguments.unwrap_or_default());
        let result = match request.name.as_ref() {
            "echo" => CallToolResult::success(vec![ContentBlock::text(arguments.to_string())]),
            _ => {
                let mut result = CallToolResult::success(vec![ContentBlock::text(log_text())]);
                let jobs: Vec<Value> = (0..LOG_LINES).map(|i| json!({"job": i})).collect();
                result.structured_content = Some(json!({"jobs": jobs}));
                result
            }
        };
        Ok(CallToolResponse::Complete(result))
    }
}

/// Serves [`Upstream`] over streamable HTTP on a loopback port until `shutdown`; its URL.
async fn serve_upstream(shutdown: CancellationToken) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = shutdown.child_token();
    let config = config.with_allowed_hosts(vec![addr.ip().to_string(), addr.to_string()]);
    let service = StreamableHttpService::new(
        || Ok(Upstream),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    tokio::spawn(async move {
        loop {
            let (stream, _) = tokio::select! {
                accepted = listener.accept() => accepted.expect("accept"),
                () = shutdown.cancelled() => return,
            };
            let service = service.clone();
            let service = hyper::service::service_fn(move |request| {
                let mut service = service.clone();
                async move { tower::Service::call(&mut service, request).await }
            });
            tokio::spawn(
                hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .into_owned(),
            );
        }
    });
    format!("http://{addr}/mcp")
}

/// A client connected to a proxy (default configuration) in front of [`Upstream`].
async fn connect(shutdown: &CancellationToken) -> RunningService<RoleClient, ClientConfig> {
    connect_with(shutdown, None).await
}

/// A client connected to a proxy reading `config` (a `condense.toml`) in front of [`Upstream`].
async fn connect_with(
    shutdown: &CancellationToken,
    config: Option<&str>,
) -> RunningService<RoleClient, ClientConfig> {
    let url = serve_upstream(shutdown.clone()).await;
    let path = config.map(|text| {
        let path = std::env::temp_dir().join(format!(
            "condense-proxy-memory-{}-{}.toml",
            std::process::id(),
            shutdown_id(shutdown)
        ));
        std::fs::write(&path, text).expect("write the config");
        path
    });
    let loaded = load(path.as_deref(), Vec::new()).expect("the config loads");
    if let Some(path) = path {
        let _ = std::fs::remove_file(path);
    }
    let (_sender, loaded) = tokio::sync::watch::channel(Arc::new(loaded));
    let shared = Arc::new(Shared {
        upstream: UpstreamSpec::Url(url),
        loaded,
    });
    let (client_io, server_io) = tokio::io::duplex(1 << 16);
    let server = ProxyServer::new(shared);
    let ct = shutdown.child_token();
    tokio::spawn(async move {
        if let Ok(running) = server.serve_with_ct(server_io, ct).await {
            let _ = running.waiting().await;
        }
    });
    ClientConfig::default()
        .serve(client_io)
        .await
        .expect("handshake through the proxy")
}

/// A name unique to this test's token, for its temporary file.
fn shutdown_id(shutdown: &CancellationToken) -> usize {
    std::ptr::from_ref(shutdown) as usize
}

fn call(name: &str, arguments: Value) -> CallToolRequestParams {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = arguments.as_object().cloned();
    params
}

fn text_of(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text(text) => Some(text.text.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn listing_adds_the_query_argument_and_the_proxy_tools() {
    let shutdown = CancellationToken::new();
    let client = connect(&shutdown).await;
    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    for expected in ["echo", "jobs", "condense_retrieve"] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }
    // The other added tools cost every model request their definitions: listed on demand.
    assert_eq!(names.len(), 3, "{names:?}");
    let jobs = tools.iter().find(|tool| tool.name == "jobs").expect("jobs");
    assert!(jobs.input_schema["properties"]["condense_query"].is_object());
    // structuredContent of a condensed result is dropped by default, so no schema promises it.
    assert!(jobs.output_schema.is_none());
    shutdown.cancel();
}

#[tokio::test]
async fn only_the_configured_added_tools_are_listed_and_answered() {
    let shutdown = CancellationToken::new();
    let client = connect_with(
        &shutdown,
        Some("[proxy]\nadded_tools = [\"call_tool_summarized\"]\n"),
    )
    .await;
    let tools = client.list_all_tools().await.expect("tools");
    let names: Vec<&str> = tools.iter().map(|tool| tool.name.as_ref()).collect();
    assert_eq!(names, ["echo", "jobs", "call_tool_summarized"]);

    let summarized = client
        .call_tool(call(
            "call_tool_summarized",
            json!({"tool": "echo", "arguments": {"message": "hi"}, "max_tokens": 1_000_000}),
        ))
        .await
        .expect("call");
    assert_eq!(text_of(&summarized), r#"{"message":"hi"}"#);
    // A switched-off added tool is the upstream's name like any other: the call goes there.
    let relayed = client
        .call_tool(call("condense_retrieve", json!({"ref": "none"})))
        .await
        .expect("call");
    assert_ne!(relayed.is_error, Some(true), "{relayed:?}");
    assert!(text_of(&relayed).contains("handled job"), "{relayed:?}");
    shutdown.cancel();
}

#[tokio::test]
async fn instructions_name_condense_retrieve_only_while_it_is_listed() {
    let instructions = |client: &RunningService<RoleClient, ClientConfig>| {
        let info = client.peer_info().expect("server info");
        info.instructions.clone().expect("instructions")
    };
    let shutdown = CancellationToken::new();
    let listed = connect(&shutdown).await;
    let text = instructions(&listed);
    assert!(
        text.contains("condense_query") && text.contains("condense_retrieve"),
        "{text}"
    );
    let unlisted = connect_with(&shutdown, Some("[proxy]\nadded_tools = []\n")).await;
    let text = instructions(&unlisted);
    assert!(
        text.contains("condense_query") && !text.contains("condense_retrieve"),
        "{text}"
    );
    shutdown.cancel();
}

#[tokio::test]
async fn small_result_passes_through_unchanged() {
    let shutdown = CancellationToken::new();
    let client = connect(&shutdown).await;
    let result = client
        .call_tool(call(
            "echo",
            json!({"message": "hi", "condense_query": "greeting"}),
        ))
        .await
        .expect("call");
    // The query argument is the proxy's: the upstream never sees it.
    assert_eq!(text_of(&result), r#"{"message":"hi"}"#);
    assert!(result.meta.is_none());
    shutdown.cancel();
}

#[tokio::test]
async fn large_result_is_condensed_without_its_structured_copy_and_retrievable() {
    let shutdown = CancellationToken::new();
    let client = connect(&shutdown).await;
    let result = client
        .call_tool(call("jobs", json!({"condense_query": "job 599"})))
        .await
        .expect("call");
    let meta = &result.meta.as_ref().expect("condense metadata").0["condense"];
    assert_ne!(meta["method"], "pass_through", "{meta}");
    assert!(meta["tokens_after"].as_u64() < meta["tokens_before"].as_u64());
    assert!(text_of(&result).len() * 4 < log_text().len());
    assert!(
        result.structured_content.is_none(),
        "structuredContent of a condensed result is dropped by default"
    );

    let reference = meta["ref"].as_str().expect("ref");
    let original = client
        .call_tool(call(
            "condense_retrieve",
            json!({"ref": reference, "offset": 0, "lines": 3}),
        ))
        .await
        .expect("retrieve");
    let log = log_text();
    let wanted: Vec<&str> = log.lines().take(3).collect();
    let page = text_of(&original);
    // The page ends with a line that says how to continue it.
    assert_eq!(page.lines().take(3).collect::<Vec<_>>(), wanted);
    assert!(page.contains(r#""offset":3"#), "{page}");
    shutdown.cancel();
}

#[tokio::test]
async fn condense_policy_shrinks_the_structured_copy_while_the_listed_schema_holds() {
    let shutdown = CancellationToken::new();
    let client = connect_with(
        &shutdown,
        Some(
            "[[tools]]\nmatch = \"jobs\"\nbudget_tokens = 300\nstructured_content = \"condense\"\n",
        ),
    )
    .await;
    let tools = client.list_all_tools().await.expect("tools");
    let jobs = tools.iter().find(|tool| tool.name == "jobs").expect("jobs");
    assert!(jobs.output_schema.is_some(), "the schema stays listed");

    let result = client
        .call_tool(call("jobs", json!({})))
        .await
        .expect("call");
    let kept = result.structured_content.expect("a structured copy")["jobs"]
        .as_array()
        .map_or(0, Vec::len);
    // Shrunk, but never below what the schema the upstream listed allows.
    assert!((MIN_JOBS..LOG_LINES).contains(&kept), "{kept} jobs kept");
    shutdown.cancel();
}
