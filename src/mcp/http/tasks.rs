//! The [`tasks`](crate::mcp::tasks) rewrites around rmcp's streamable-HTTP service, which parses
//! a request body straight into rmcp's model and writes rmcp's model back: a request's body
//! (one JSON-RPC message or a batch) is rewritten before rmcp reads it, and a response (a JSON
//! body, or a stream of server-sent events, the GET stream of server-to-client messages
//! included) after rmcp wrote it.

use std::convert::Infallible;
use std::fmt::Display;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Buf, Bytes, BytesMut};
use http::{HeaderMap, HeaderValue, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::{Body, Frame};

use crate::mcp::tasks;

/// The largest request body the proxy reads (and rmcp, which is told the same limit).
pub(super) const MAX_REQUEST_BODY_BYTES: usize = 4 * 1024 * 1024;

type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// The client's request, its body read whole (within [`MAX_REQUEST_BODY_BYTES`]) and its
/// messages rewritten for rmcp; or the answer to a body that could not be read, the same
/// rmcp gives.
pub(super) async fn from_client<B>(
    request: Request<B>,
) -> Result<Request<Full<Bytes>>, HttpResponse>
where
    B: Body,
    B::Error: Display,
{
    let (mut parts, body) = request.into_parts();
    let mut body = read_whole(body).await?;
    if parts.method == Method::POST
        && tasks::may_need_from_client(&body)
        && let Some(rewritten) = tasks::rewrite_text(&body, tasks::from_client)
    {
        body = Bytes::from(rewritten);
        set_length(&mut parts.headers, body.len());
    }
    Ok(Request::from_parts(parts, Full::new(body)))
}

async fn read_whole<B>(body: B) -> Result<Bytes, HttpResponse>
where
    B: Body,
    B::Error: Display,
{
    let mut body = std::pin::pin!(body);
    let mut collected = BytesMut::new();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| {
            plain(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("Failed to read request body: {error}"),
            )
        })?;
        let Ok(mut data) = frame.into_data() else {
            continue;
        };
        if data.remaining() > MAX_REQUEST_BODY_BYTES.saturating_sub(collected.len()) {
            return Err(plain(
                StatusCode::PAYLOAD_TOO_LARGE,
                format!("Payload Too Large: request body exceeds {MAX_REQUEST_BODY_BYTES} bytes"),
            ));
        }
        while data.has_remaining() {
            let chunk = data.chunk();
            let read = chunk.len();
            collected.extend_from_slice(chunk);
            data.advance(read);
        }
    }
    Ok(collected.freeze())
}

fn plain(status: StatusCode, text: String) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(text)).boxed());
    *response.status_mut() = status;
    response
}

fn set_length(headers: &mut HeaderMap, length: usize) {
    headers.remove(header::TRANSFER_ENCODING);
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
}

/// rmcp's response, its messages rewritten for the client.
pub(super) async fn to_client(response: HttpResponse) -> HttpResponse {
    let content_type = response
        .headers()
        .get(header::CONTENT_TYPE)
        .map(|value| value.as_bytes().to_ascii_lowercase())
        .unwrap_or_default();
    if content_type.starts_with(b"text/event-stream") {
        response.map(|body| EventsToClient::new(body).boxed())
    } else if content_type.starts_with(b"application/json") {
        let (mut parts, body) = response.into_parts();
        let Ok(body) = body
            .collect()
            .await
            .map(http_body_util::Collected::to_bytes);
        let body = match tasks::may_need_to_client(&body)
            .then(|| tasks::rewrite_text(&body, tasks::to_client))
            .flatten()
        {
            Some(rewritten) => {
                set_length(&mut parts.headers, rewritten.len());
                Bytes::from(rewritten)
            }
            None => body,
        };
        Response::from_parts(parts, Full::new(body).boxed())
    } else {
        response
    }
}

/// A stream of server-sent events with [`tasks::to_client`] applied to each `data:` line.
/// Events may be split anywhere across frames: a line is rewritten once it is whole.
struct EventsToClient {
    inner: BoxBody<Bytes, Infallible>,
    /// The start of a line whose end has not arrived yet.
    partial: Vec<u8>,
}

impl EventsToClient {
    fn new(inner: BoxBody<Bytes, Infallible>) -> Self {
        EventsToClient {
            inner,
            partial: Vec::new(),
        }
    }

    /// The whole lines `data` completes, rewritten; the rest is kept for the next frame.
    fn lines(&mut self, data: Bytes) -> Bytes {
        if self.partial.is_empty() && data.ends_with(b"\n") && !tasks::may_need_to_client(&data) {
            return data;
        }
        self.partial.extend_from_slice(&data);
        let Some(end) = self.partial.iter().rposition(|&byte| byte == b'\n') else {
            return Bytes::new();
        };
        let rest = self.partial.split_off(end + 1);
        let whole = std::mem::replace(&mut self.partial, rest);
        if !tasks::may_need_to_client(&whole) {
            return Bytes::from(whole);
        }
        let mut out = Vec::with_capacity(whole.len());
        for line in whole.split_inclusive(|&byte| byte == b'\n') {
            out.extend_from_slice(&rewrite_line(line));
        }
        Bytes::from(out)
    }
}

/// One line of an event stream, ending in `\n`: a `data:` line holding a message the client
/// must see rewritten comes back rewritten, any other line as it was.
fn rewrite_line(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    let Some(payload) = line.strip_prefix(b"data:") else {
        return line.into();
    };
    if !tasks::may_need_to_client(payload) {
        return line.into();
    }
    let payload = payload.strip_prefix(b" ").unwrap_or(payload);
    let payload = payload.strip_suffix(b"\n").unwrap_or(payload);
    let payload = payload.strip_suffix(b"\r").unwrap_or(payload);
    match tasks::rewrite_text(payload, tasks::to_client) {
        Some(rewritten) => [b"data: ".as_slice(), &rewritten, b"\n"].concat().into(),
        None => line.into(),
    }
}

impl Body for EventsToClient {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = &mut *self;
        loop {
            match std::task::ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        let lines = this.lines(data);
                        if !lines.is_empty() {
                            return Poll::Ready(Some(Ok(Frame::data(lines))));
                        }
                    }
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                Some(Err(never)) => match never {},
                None if this.partial.is_empty() => return Poll::Ready(None),
                // A last line without its end: nothing to rewrite, it goes as it came.
                None => {
                    let rest = std::mem::take(&mut this.partial);
                    return Poll::Ready(Some(Ok(Frame::data(Bytes::from(rest)))));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
