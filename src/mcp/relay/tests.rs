//! The relay against a peer in memory that reports progress just before it answers, with the
//! proxy's handler of that progress made slow: the answer must still come after it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest,
    ErrorData as McpError, NumberOrString, ProgressNotificationParam, ProgressToken,
    RequestMetaObject, ServerCapabilities, ServerConfig, ServerResult, ToolsCapability,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ClientHandler, RoleClient, RoleServer, ServerHandler, ServiceExt};
use tokio_util::sync::CancellationToken;

use super::{AsRelayed, RelayPath, relay_request};
use crate::mcp::stdio::StdioTransport;

/// How long the proxy's side takes to handle a progress update: long after the answer.
const SLOW_HANDLING: Duration = Duration::from_millis(20);

/// A server whose one tool reports progress, then answers.
#[derive(Debug, Clone)]
struct ReportsThenAnswers;

impl ServerHandler for ReportsThenAnswers {
    fn get_info(&self) -> ServerConfig {
        let mut capabilities = ServerCapabilities::default();
        capabilities.tools = Some(ToolsCapability::default());
        ServerConfig::new(capabilities)
    }

    async fn call_tool(
        &self,
        _request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let token = context.meta.get_progress_token().expect("a progress token");
        // Returns once the update is written: it is on the wire before the answer.
        context
            .peer
            .notify_progress(ProgressNotificationParam::new(token, 1.0))
            .await
            .expect("progress sent");
        Ok(CallToolResponse::Complete(CallToolResult::success(
            Vec::new(),
        )))
    }
}

/// The proxy's side of the connection: handles progress slowly, and records the token each
/// update was routed to (`None`: it found no route and would have been dropped).
#[derive(Debug, Clone)]
struct SlowProgress {
    path: RelayPath,
    routed: Arc<Mutex<Vec<Option<ProgressToken>>>>,
}

impl ClientHandler for SlowProgress {
    async fn on_progress(
        &self,
        progress: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tokio::time::sleep(SLOW_HANDLING).await;
        let original = self.path.progress.original(&progress.progress_token);
        crate::sync::lock(&self.routed).push(original);
    }
}

#[tokio::test(start_paused = true)]
async fn the_answer_waits_for_the_progress_sent_before_it() {
    let (near, far) = tokio::io::duplex(1 << 16);
    tokio::spawn(async move {
        if let Ok(running) = ReportsThenAnswers.serve(far).await {
            let _ = running.waiting().await;
        }
    });
    let path = RelayPath::default();
    let handler = SlowProgress {
        path: path.clone(),
        routed: Arc::default(),
    };
    let (read, write) = tokio::io::split(near);
    let transport = AsRelayed::following(
        StdioTransport::new(read, write, 1 << 20),
        path.backlog.clone(),
    );
    let client = handler.clone().serve(transport).await.expect("handshake");

    let original = ProgressToken(NumberOrString::String("the client's".into()));
    let mut meta = RequestMetaObject::new();
    meta.set_progress_token(original.clone());
    let request = ClientRequest::from(CallToolRequest::new(CallToolRequestParams::new(
        "report".to_owned(),
    )));
    let answer = relay_request(
        client.peer(),
        request,
        &meta,
        &CancellationToken::new(),
        &path,
        None,
    )
    .await
    .expect("an answer");
    assert!(matches!(answer, ServerResult::CallToolResult(_)));
    assert_eq!(*crate::sync::lock(&handler.routed), vec![Some(original)]);
    let _ = client.cancel().await;
}
