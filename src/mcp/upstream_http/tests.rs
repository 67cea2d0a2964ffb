use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, CustomRequest, JsonRpcMessage, JsonRpcRequest,
    NumberOrString, ServerResult,
};
use rmcp::transport::streamable_http_client::{StreamableHttpClient, StreamableHttpPostResponse};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;

use super::TasksHttpClient;
use crate::mcp::tasks;

/// A server that answers one POST with `content_type` and `body`, and hands over the JSON the
/// request carried.
async fn answering(content_type: &'static str, body: String) -> (String, oneshot::Receiver<Value>) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (sent, received) = oneshot::channel();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        let mut request = Vec::new();
        let mut buffer = [0; 4096];
        let body_start = loop {
            let read = stream.read(&mut buffer).await.unwrap();
            request.extend_from_slice(&buffer[..read]);
            if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
                break end + 4;
            }
        };
        let head = String::from_utf8_lossy(&request[..body_start]).to_ascii_lowercase();
        let length: usize = head
            .lines()
            .find_map(|line| line.strip_prefix("content-length:"))
            .map_or(0, |value| value.trim().parse().unwrap());
        while request.len() < body_start + length {
            let read = stream.read(&mut buffer).await.unwrap();
            request.extend_from_slice(&buffer[..read]);
        }
        let _ = sent.send(serde_json::from_slice(&request[body_start..]).unwrap());
        let answer = format!(
            "HTTP/1.1 200 OK\r\ncontent-type: {content_type}\r\nmcp-session-id: s1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(answer.as_bytes()).await.unwrap();
    });
    (url, received)
}

async fn post(
    url: &str,
    message: ClientJsonRpcMessage,
    max_event_bytes: usize,
) -> StreamableHttpPostResponse {
    let client = TasksHttpClient::new().unwrap();
    client
        .post_message_with_max_sse_event_size(
            Arc::from(url),
            message,
            None,
            None,
            HashMap::new(),
            max_event_bytes,
        )
        .await
        .expect("answered")
}

#[tokio::test]
async fn an_initialize_carries_the_clients_tasks_and_its_json_answer_keeps_the_servers() {
    let tasks_capability = json!({"list": {}, "requests": {"tools": {"call": {}}}});
    let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
        "serverInfo": {"name": "s", "version": "1"},
        "capabilities": {"tools": {}, "tasks": tasks_capability}}});
    let (url, request) = answering("application/json", answer.to_string()).await;
    // What the downstream transport made of a client's `tasks` capability.
    let initialize: ClientJsonRpcMessage = serde_json::from_value(json!({"jsonrpc": "2.0",
        "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
        "clientInfo": {"name": "c", "version": "1"},
        "capabilities": {"experimental": {"condense.tasks": {"cancel": {}}}}}}))
    .unwrap();
    let StreamableHttpPostResponse::Json(parsed, session) = post(&url, initialize, 1 << 20).await
    else {
        panic!("a JSON answer");
    };
    assert_eq!(session.as_deref(), Some("s1"));
    let sent = request.await.unwrap();
    assert_eq!(
        sent["params"]["capabilities"],
        json!({"tasks": {"cancel": {}}})
    );
    let mut relayed = serde_json::to_value(&parsed).unwrap();
    tasks::to_client(&mut relayed);
    assert_eq!(relayed["result"]["capabilities"]["tasks"], tasks_capability);
}

fn custom(method: &str, params: Value) -> ClientJsonRpcMessage {
    JsonRpcMessage::Request(JsonRpcRequest::new(
        NumberOrString::Number(5),
        ClientRequest::CustomRequest(CustomRequest::new(method, Some(params))),
    ))
}

#[tokio::test]
async fn a_task_request_is_sent_as_is_and_its_event_stream_answer_comes_whole() {
    let task = json!({"task": {"taskId": "t1", "status": "working", "ttl": 60000,
        "createdAt": "2025-11-25T00:00:00Z", "lastUpdatedAt": "2025-11-25T00:00:00Z"}});
    let status = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
        "params": {"taskId": "t1", "status": "working"}});
    let answer = json!({"jsonrpc": "2.0", "id": 5, "result": task});
    let events = format!("event: message\ndata: {status}\n\nid: 7\ndata: {answer}\n\n");
    let (url, request) = answering("text/event-stream", events).await;
    let call = custom(
        "tools/call",
        json!({"name": "slow", "arguments": {}, "task": {"ttl": 60000}}),
    );
    let StreamableHttpPostResponse::Sse(mut events, _) = post(&url, call, 1 << 20).await else {
        panic!("an event stream");
    };
    assert_eq!(request.await.unwrap()["params"]["task"]["ttl"], 60000);
    let mut data = Vec::new();
    while let Some(event) = std::future::poll_fn(|cx| events.as_mut().poll_next(cx)).await {
        data.push(event.expect("an event").data.unwrap_or_default());
    }
    assert_eq!(serde_json::from_str::<Value>(&data[0]).unwrap(), status);
    let parsed: rmcp::model::ServerJsonRpcMessage = serde_json::from_str(&data[1]).unwrap();
    let JsonRpcMessage::Response(response) = parsed else {
        panic!("a response");
    };
    let ServerResult::CustomResult(result) = response.result else {
        panic!("kept whole: {:?}", response.result);
    };
    assert_eq!(tasks::raw_result(result.0), task);
}

#[tokio::test]
async fn an_event_over_the_limit_ends_the_stream_with_an_error() {
    let answer = json!({"jsonrpc": "2.0", "id": 5, "result": {"text": "x".repeat(400)}});
    let (url, _request) = answering("text/event-stream", format!("data: {answer}\n\n")).await;
    let StreamableHttpPostResponse::Sse(mut events, _) =
        post(&url, custom("tasks/result", json!({"taskId": "t1"})), 256).await
    else {
        panic!("an event stream");
    };
    let first = std::future::poll_fn(|cx| events.as_mut().poll_next(cx)).await;
    let error = first.expect("an item").expect_err("too large");
    assert!(error.to_string().contains("over 256 bytes"), "{error}");
}
