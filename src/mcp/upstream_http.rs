//! The client side of streamable HTTP to an upstream server, with the [`tasks`] rewrites around
//! rmcp's parsing.
//!
//! rmcp's own client (over reqwest) sends what rmcp's model serializes and parses a JSON answer
//! into that model at once, both of which lose the fields of 2025-11-25 tasks. This client
//! relays every message through rmcp's, except the requests whose answers the proxy rewrites
//! (`initialize`, `tools/list` and custom requests, task requests among them): those it sends
//! itself, the client's `tasks` capability put back, and it rewrites their answers before rmcp
//! reads them, on whatever event stream they arrive.

use crate::sync::lock;
use std::collections::HashMap;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use bytes::Bytes;
use futures_core::Stream;
use futures_core::stream::BoxStream;
use http::{HeaderName, HeaderValue, StatusCode, header};
use mcp_reqwest as reqwest;
use rmcp::model::{ClientJsonRpcMessage, JsonRpcMessage, RequestId, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
};
use serde_json::Value;
use sse_stream::{Sse, SseStream};

use super::tasks::{self, Asked};

/// The header that names the session.
const SESSION_HEADER: &str = "mcp-session-id";

/// How many redirects (same origin only) one request follows, as rmcp's client does.
const MAX_REDIRECTS: usize = 10;

/// The most of an error answer's body that is read, to name the error.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

type Events = BoxStream<'static, Result<Sse, SseError>>;
type HttpError = StreamableHttpError<reqwest::Error>;

/// rmcp's reqwest client, with the [`tasks`] rewrites.
#[derive(Debug, Clone)]
pub(crate) struct TasksHttpClient {
    http: reqwest::Client,
    /// The requests whose answers are rewritten, shared by every stream of the session.
    pending: Arc<Mutex<tasks::Pending>>,
}

impl TasksHttpClient {
    /// A client set up like rmcp's default one: no idle connections kept (they stall on
    /// delayed ACKs), redirects followed within the same origin only.
    pub(crate) fn new() -> Result<Self, reqwest::Error> {
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let same_origin = attempt.previous().first().is_some_and(|first| {
                let next = attempt.url();
                (
                    first.scheme(),
                    first.host_str(),
                    first.port_or_known_default(),
                ) == (next.scheme(), next.host_str(), next.port_or_known_default())
            });
            if same_origin && attempt.previous().len() <= MAX_REDIRECTS {
                attempt.follow()
            } else {
                attempt.stop()
            }
        });
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(redirects)
            .build()?;
        Ok(TasksHttpClient {
            http,
            pending: Arc::default(),
        })
    }

    /// `text`, an upstream message, rewritten when it answers a request that needs it.
    fn rewritten(&self, text: &[u8]) -> Option<Vec<u8>> {
        let asked = lock(&self.pending).answered_by(text)?;
        tasks::rewrite_text(text, |message| tasks::from_upstream(asked, message))
    }

    /// `events`, each rewritten when it answers a request that needs it.
    fn rewriting(&self, events: Events) -> Events {
        Box::pin(Rewriting {
            events,
            client: self.clone(),
        })
    }

    /// Sends a request whose answer is rewritten (`asked`), with the client's `tasks`
    /// capability put back, and reads its answer.
    #[expect(
        clippy::too_many_arguments,
        reason = "the trait's arguments, passed on"
    )]
    async fn post_rewritten(
        &self,
        id: RequestId,
        asked: Asked,
        uri: Arc<str>,
        message: &ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_event_bytes: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut body = serde_json::to_value(message)?;
        lock(&self.pending).sent_upstream(id.clone(), asked, &mut body);
        let answer = self
            .post_value(
                &body,
                uri,
                session_id,
                auth_token,
                custom_headers,
                max_event_bytes,
            )
            .await;
        if !matches!(answer, Ok(StreamableHttpPostResponse::Sse(..))) {
            // Answered whole (then already rewritten), or not at all.
            lock(&self.pending).take(&id);
        }
        answer
    }

    async fn post_value(
        &self,
        body: &Value,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_event_bytes: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        let mut request = self
            .http
            .post(uri.as_ref())
            .header(header::ACCEPT, "text/event-stream, application/json")
            .header(header::CONTENT_TYPE, "application/json")
            .body(serde_json::to_vec(body)?);
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            request = request.header(name, value);
        }
        let session_was_sent = session_id.is_some();
        if let Some(session_id) = session_id {
            request = request.header(SESSION_HEADER, session_id.as_ref());
        }
        let response = request.send().await?;
        let status = response.status();
        if status == StatusCode::NOT_FOUND && session_was_sent {
            return Err(StreamableHttpError::SessionExpired);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        let session = response
            .headers()
            .get(SESSION_HEADER)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let content_type = response
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .map(str::to_ascii_lowercase);
        let is = |mime: &str| {
            content_type
                .as_deref()
                .is_some_and(|ct| ct.starts_with(mime))
        };
        if !status.is_success() {
            let body = read_whole(response, MAX_ERROR_BODY_BYTES).await?;
            if is("application/json")
                && let Ok(error @ JsonRpcMessage::Error(_)) =
                    serde_json::from_slice::<ServerJsonRpcMessage>(&body)
            {
                return Ok(StreamableHttpPostResponse::Json(error, session));
            }
            let body = String::from_utf8_lossy(&body);
            return Err(StreamableHttpError::UnexpectedServerResponse(
                format!("HTTP {status}: {body}").into(),
            ));
        }
        if is("text/event-stream") {
            let bytes = EventLimit::new(Box::pin(response.bytes_stream()), max_event_bytes);
            let events: Events = Box::pin(SseStream::from_bytes_stream(bytes));
            return Ok(StreamableHttpPostResponse::Sse(
                self.rewriting(events),
                session,
            ));
        }
        if is("application/json") {
            let body = read_whole(response, max_event_bytes).await?;
            let body = self.rewritten(&body).unwrap_or_else(|| body.to_vec());
            let answer = serde_json::from_slice::<ServerJsonRpcMessage>(&body)?;
            return Ok(StreamableHttpPostResponse::Json(answer, session));
        }
        Err(StreamableHttpError::UnexpectedContentType(content_type))
    }
}

/// A response body, read whole within `max` bytes.
async fn read_whole(mut response: reqwest::Response, max: usize) -> Result<Bytes, HttpError> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await? {
        if chunk.len() > max.saturating_sub(body.len()) {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Bytes::from(body))
}

/// An event stream whose answers to rewritten requests come rewritten.
struct Rewriting {
    events: Events,
    client: TasksHttpClient,
}

impl Stream for Rewriting {
    type Item = Result<Sse, SseError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        let item = std::task::ready!(this.events.as_mut().poll_next(cx));
        Poll::Ready(item.map(|event| {
            event.map(|mut event| {
                let rewritten = event
                    .data
                    .as_deref()
                    .and_then(|data| this.client.rewritten(data.as_bytes()));
                if let Some(rewritten) = rewritten {
                    event.data = Some(String::from_utf8_lossy(&rewritten).into_owned());
                }
                event
            })
        }))
    }
}

/// Why an event stream was cut off.
#[derive(Debug, thiserror::Error)]
enum EventStreamError {
    /// The connection failed.
    #[error(transparent)]
    Read(#[from] reqwest::Error),
    /// An event grew past the limit.
    #[error("an event from the upstream MCP server is over {0} bytes")]
    TooLarge(usize),
}

/// The bytes of an event stream, cut off where one event grows past `max` bytes: the bound
/// rmcp's client keeps (`max_sse_event_size`), so a result larger than the proxy reads is never
/// held whole.
struct EventLimit {
    bytes: BoxStream<'static, Result<Bytes, reqwest::Error>>,
    max: usize,
    /// The bytes of the current event so far.
    event: usize,
    /// Whether nothing but a line end has come since the last line end.
    line_empty: bool,
    failed: bool,
}

impl EventLimit {
    fn new(bytes: BoxStream<'static, Result<Bytes, reqwest::Error>>, max: usize) -> Self {
        EventLimit {
            bytes,
            max,
            event: 0,
            line_empty: true,
            failed: false,
        }
    }

    /// Counts `chunk`; false once an event is too large.
    fn fits(&mut self, chunk: &[u8]) -> bool {
        for &byte in chunk {
            match byte {
                b'\n' => {
                    if self.line_empty {
                        self.event = 0;
                    }
                    self.line_empty = true;
                }
                b'\r' => {}
                _ => {
                    self.line_empty = false;
                    self.event += 1;
                    if self.event > self.max {
                        return false;
                    }
                }
            }
        }
        true
    }
}

impl Stream for EventLimit {
    type Item = Result<Bytes, EventStreamError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = &mut *self;
        if this.failed {
            return Poll::Ready(None);
        }
        let item = std::task::ready!(this.bytes.as_mut().poll_next(cx));
        Poll::Ready(item.map(|chunk| match chunk {
            Ok(chunk) if this.fits(&chunk) => Ok(chunk),
            Ok(_) => {
                this.failed = true;
                Err(EventStreamError::TooLarge(this.max))
            }
            Err(error) => {
                this.failed = true;
                Err(EventStreamError::Read(error))
            }
        }))
    }
}

impl StreamableHttpClient for TasksHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        const DEFAULT_MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;
        self.post_message_with_max_sse_event_size(
            uri,
            message,
            session_id,
            auth_token,
            custom_headers,
            DEFAULT_MAX_EVENT_BYTES,
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, HttpError> {
        if let Some((id, asked)) = Asked::by(&message) {
            return self
                .post_rewritten(
                    id,
                    asked,
                    uri,
                    &message,
                    session_id,
                    auth_token,
                    custom_headers,
                    max_sse_event_size,
                )
                .await;
        }
        let answer = self
            .http
            .post_message_with_max_sse_event_size(
                uri,
                message,
                session_id,
                auth_token,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(match answer {
            StreamableHttpPostResponse::Sse(events, session) => {
                StreamableHttpPostResponse::Sse(self.rewriting(events), session)
            }
            other => other,
        })
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), HttpError> {
        self.http
            .delete_session(uri, session_id, auth_token, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<Events, HttpError> {
        let events = self
            .http
            .get_stream(uri, session_id, last_event_id, auth_token, custom_headers)
            .await?;
        Ok(self.rewriting(events))
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<Events, HttpError> {
        let events = self
            .http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_token,
                custom_headers,
                max_sse_event_size,
            )
            .await?;
        Ok(self.rewriting(events))
    }
}

#[cfg(test)]
mod tests;
