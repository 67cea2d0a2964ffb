use std::convert::Infallible;

use bytes::Bytes;
use http::{Request, Response, header};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use serde_json::{Value, json};

use super::{from_client, to_client};

#[tokio::test]
async fn a_task_call_in_a_request_body_reaches_rmcp_renamed_with_its_length() {
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "slow", "task": {"ttl": 1000}}});
    let body = call.to_string();
    let request = Request::post("/mcp")
        .header(header::CONTENT_LENGTH, body.len())
        .body(Full::new(Bytes::from(body)))
        .unwrap();
    let Ok(request) = from_client(request).await else {
        panic!("read");
    };
    let length: usize = request.headers()[header::CONTENT_LENGTH]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let body = request.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(length, body.len());
    let sent: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(sent["method"], "condense-raw/tools/call");
    assert_eq!(sent["params"]["task"]["ttl"], 1000);
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_with_413() {
    let big = vec![b' '; super::MAX_REQUEST_BODY_BYTES + 1];
    let request = Request::post("/mcp")
        .body(Full::new(Bytes::from(big)))
        .unwrap();
    let Err(refused) = from_client(request).await else {
        panic!("refused");
    };
    assert_eq!(refused.status(), 413);
}

/// An event stream whose frames cut the text at `cuts`.
fn stream_of(text: &str, cuts: &[usize]) -> super::HttpResponse {
    let mut frames = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain([&text.len()]) {
        let piece = Bytes::copy_from_slice(&text.as_bytes()[start..cut]);
        frames.push(Ok::<_, Infallible>(Frame::data(piece)));
        start = cut;
    }
    let body = StreamBody::new(futures_util_stream(frames));
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(body.boxed())
        .unwrap()
}

/// A ready stream of `items` (the crate has no `futures` utilities).
fn futures_util_stream<T: Unpin>(items: Vec<T>) -> impl futures_core::Stream<Item = T> + Unpin {
    struct Ready<T>(std::collections::VecDeque<T>);
    impl<T: Unpin> futures_core::Stream for Ready<T> {
        type Item = T;
        fn poll_next(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
        ) -> std::task::Poll<Option<T>> {
            std::task::Poll::Ready(self.0.pop_front())
        }
    }
    Ready(items.into())
}

#[tokio::test]
async fn events_split_anywhere_leave_with_the_tasks_capability_and_execution_in_place() {
    let init = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
        "capabilities": {"experimental": {"condense.tasks": {"list": {}}}}}});
    let tools = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "slow", "_meta": {"condense.execution": {"taskSupport": "required"}}}]}});
    let status = json!({"jsonrpc": "2.0", "method": "notifications/tasks/status",
        "params": {"taskId": "t1", "status": "working"}});
    let text = format!(
        "id: 0\ndata: {init}\n\n: keep-alive\n\ndata: {status}\r\n\ndata: {tools}\nid: 2\n\n"
    );
    // Cut inside the private keys, inside a CRLF, and at every line end.
    let marks = [
        text.find("condense.tasks").unwrap() + 4,
        text.find("\r\n").unwrap() + 1,
        text.find("condense.execution").unwrap() + 9,
        text.len() - 3,
    ];
    let response = to_client(stream_of(&text, &marks)).await;
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let body = String::from_utf8(body.to_vec()).unwrap();
    let data: Vec<Value> = body
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .map(|json| serde_json::from_str(json.trim()).unwrap())
        .collect();
    assert_eq!(data.len(), 3, "{body}");
    assert_eq!(
        data[0]["result"]["capabilities"],
        json!({"tasks": {"list": {}}})
    );
    assert_eq!(data[1], status);
    assert_eq!(
        data[2]["result"]["tools"][0],
        json!({"name": "slow", "execution": {"taskSupport": "required"}})
    );
    assert!(
        body.contains("id: 0\n") && body.contains(": keep-alive\n\n"),
        "{body}"
    );
    assert!(body.ends_with("id: 2\n\n"), "{body}");
}
