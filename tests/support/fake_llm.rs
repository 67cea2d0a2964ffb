//! An in-process fake of an OpenAI-compatible chat-completions endpoint, for fault tests.
//!
//! It speaks just enough HTTP/1.1 for reqwest (one request per connection, `Connection:
//! close`), answers from a script or a handler, and counts what it saw: requests, the most in
//! flight at once, and each request's headers and JSON body.
//!
//! ```ignore
//! let server = FakeLlm::scripted([Reply::status(500, "boom"), Reply::completion("ok")]).await;
//! let llm = LiteLlm::builder().base_url(server.url()).build()?;
//! assert_eq!(llm.complete(request).await?, "ok");
//! assert_eq!(server.requests(), 2);
//! ```

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// What the fake answers to one request.
#[derive(Debug, Clone)]
pub(crate) struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: ReplyBody,
    delay: Duration,
}

#[derive(Debug, Clone)]
enum ReplyBody {
    Text(String),
    /// The request's `Authorization` header, inside an error envelope.
    EchoAuthorization,
    /// Never answer; hold the connection open.
    Stall,
}

impl Reply {
    /// 200 with a chat completion whose answer is `text`.
    pub(crate) fn completion(text: &str) -> Self {
        let body = serde_json::json!({
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "model": "fake",
            "choices": [{
                "index": 0,
                "message": { "role": "assistant", "content": text },
                "finish_reason": "stop"
            }],
            "usage": { "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15 }
        });
        Reply::json(200, &body.to_string())
    }

    /// `status` with a LiteLLM-shaped error envelope carrying `message` and `kind` as its type.
    pub(crate) fn error(status: u16, kind: &str, message: &str) -> Self {
        let body = serde_json::json!({
            "error": { "message": message, "type": kind, "param": null, "code": status.to_string() }
        });
        Reply::json(status, &body.to_string())
    }

    /// `status` with an error envelope of type `error`.
    pub(crate) fn status(status: u16, message: &str) -> Self {
        Reply::error(status, "error", message)
    }

    /// `status` with `body` as it is, typed as JSON.
    pub(crate) fn json(status: u16, body: &str) -> Self {
        Reply {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: ReplyBody::Text(body.to_owned()),
            delay: Duration::ZERO,
        }
    }

    /// `status` whose body echoes the request's `Authorization` header, as a misconfigured
    /// gateway does.
    pub(crate) fn echo_authorization(status: u16) -> Self {
        Reply {
            body: ReplyBody::EchoAuthorization,
            ..Reply::json(status, "")
        }
    }

    /// Reads the request and never answers.
    pub(crate) fn stall() -> Self {
        Reply {
            body: ReplyBody::Stall,
            ..Reply::json(200, "")
        }
    }

    /// Adds a response header.
    pub(crate) fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    /// Waits `delay` (on tokio's clock) before answering.
    pub(crate) fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// One request the fake received.
#[derive(Debug, Clone)]
pub(crate) struct Received {
    /// The request target, e.g. `/v1/chat/completions`.
    pub(crate) path: String,
    /// Header names in lower case.
    pub(crate) headers: HashMap<String, String>,
    /// The body as JSON (`Null` when it was not JSON).
    pub(crate) body: serde_json::Value,
}

type Handler = dyn Fn(&Received) -> Reply + Send + Sync;

struct State {
    handler: Box<Handler>,
    received: Mutex<Vec<Received>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

/// A running fake endpoint on 127.0.0.1; stops when dropped.
pub(crate) struct FakeLlm {
    addr: SocketAddr,
    state: Arc<State>,
    accept: JoinHandle<()>,
}

impl FakeLlm {
    /// A fake that answers with `replies` in order, repeating the last one forever.
    pub(crate) async fn scripted(replies: impl IntoIterator<Item = Reply>) -> Self {
        let replies: VecDeque<Reply> = replies.into_iter().collect();
        assert!(!replies.is_empty(), "a script needs at least one reply");
        let replies = Mutex::new(replies);
        FakeLlm::with_handler(move |_| {
            let mut replies = replies.lock().unwrap();
            if replies.len() > 1 {
                replies.pop_front().unwrap()
            } else {
                replies[0].clone()
            }
        })
        .await
    }

    /// A fake that asks `handler` for each answer.
    pub(crate) async fn with_handler(
        handler: impl Fn(&Received) -> Reply + Send + Sync + 'static,
    ) -> Self {
        FakeLlm::with_handler_on(0, handler).await
    }

    /// A fake on a chosen port of 127.0.0.1 (0: any free one), for a backend another process
    /// was told to reach at a fixed address.
    pub(crate) async fn with_handler_on(
        port: u16,
        handler: impl Fn(&Received) -> Reply + Send + Sync + 'static,
    ) -> Self {
        // A fixed port may still be held for a moment by the fake that used it before.
        let mut attempts = 0;
        let listener = loop {
            match TcpListener::bind(("127.0.0.1", port)).await {
                Ok(listener) => break listener,
                Err(error) if attempts < 100 && port != 0 => {
                    attempts += 1;
                    let _ = error;
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(error) => panic!("cannot listen on 127.0.0.1:{port}: {error}"),
            }
        };
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State {
            handler: Box::new(handler),
            received: Mutex::new(Vec::new()),
            in_flight: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        });
        let accept_state = Arc::clone(&state);
        let accept = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve(stream, Arc::clone(&accept_state)));
            }
        });
        FakeLlm {
            addr,
            state,
            accept,
        }
    }

    /// The base URL to point a client at.
    pub(crate) fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// How many requests arrived.
    pub(crate) fn requests(&self) -> usize {
        self.state.received.lock().unwrap().len()
    }

    /// The requests that arrived, in order.
    pub(crate) fn received(&self) -> Vec<Received> {
        self.state.received.lock().unwrap().clone()
    }

    /// The most requests that were being answered at the same time.
    pub(crate) fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for FakeLlm {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// A base URL where nothing listens: a port that was bound, then released.
pub(crate) async fn dead_url() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    drop(listener);
    format!("http://{addr}")
}

async fn serve(mut stream: TcpStream, state: Arc<State>) {
    let Some(request) = read_request(&mut stream).await else {
        return;
    };
    state.received.lock().unwrap().push(request.clone());
    let now = state.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    state.max_in_flight.fetch_max(now, Ordering::SeqCst);
    let reply = (state.handler)(&request);
    tokio::time::sleep(reply.delay).await;
    let body = match reply.body {
        ReplyBody::Text(text) => text,
        ReplyBody::EchoAuthorization => serde_json::json!({
            "error": {
                "message": format!(
                    "invalid credentials in header authorization: {}",
                    request.headers.get("authorization").cloned().unwrap_or_default()
                ),
                "type": "auth_error",
                "code": reply.status.to_string()
            }
        })
        .to_string(),
        ReplyBody::Stall => {
            // Long past any test's timeout; the client gives up first.
            tokio::time::sleep(Duration::from_secs(3600)).await;
            String::new()
        }
    };
    // The request stops counting as in flight before its answer is written: a client that
    // holds a concurrency permit until it has read the answer may start its next request as
    // soon as the bytes arrive, before this task runs again, and must not be counted twice.
    state.in_flight.fetch_sub(1, Ordering::SeqCst);
    let mut head = format!(
        "HTTP/1.1 {} Fake\r\ncontent-length: {}\r\nconnection: close\r\n",
        reply.status,
        body.len()
    );
    for (name, value) in &reply.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = stream.write_all(head.as_bytes()).await;
    let _ = stream.write_all(body.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Reads one request head and its `content-length` body.
async fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut buffer = Vec::new();
    let head_end = loop {
        let mut chunk = [0u8; 4096];
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
    };
    let head = String::from_utf8_lossy(&buffer[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let path = lines.next()?.split(' ').nth(1)?.to_owned();
    let headers: HashMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    let length: usize = headers
        .get("content-length")
        .and_then(|value| value.parse().ok())
        .unwrap_or(0);
    let mut body = buffer[head_end + 4..].to_vec();
    while body.len() < length {
        let mut chunk = vec![0u8; length - body.len()];
        let read = stream.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    Some(Received {
        path,
        headers,
        body: serde_json::from_slice(&body).unwrap_or(serde_json::Value::Null),
    })
}
