//! The transport to an upstream server's stdin and stdout: newline-delimited JSON-RPC, like
//! rmcp's own, except that a message it cannot take never leaves a request waiting.
//!
//! rmcp drops a line longer than its fixed 16 MiB limit, and a line nested deeper than
//! serde_json's 128 levels, and the request that line answered then waits forever. Here the
//! line limit follows `[limits] max_input_bytes` (results up to that size are read and
//! condensed), and a line that is too long, too deep or of the wrong shape is answered in its
//! place: the pending request fails at once with an error that names the limit.

use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ClientRequest, ErrorCode, ErrorData as McpError, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::envelope::Envelope;
use super::tasks;

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // A plain map: a panic elsewhere cannot leave it half-updated.
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The smallest line limit: rmcp's own, so nothing it reads is refused here.
const MIN_LINE_BYTES: usize = 16 << 20;

/// A line buffer larger than this is given back after its line: one huge answer must not keep
/// its memory for the rest of the session.
const KEPT_BUFFER_BYTES: usize = 1 << 20;

/// Large answers are the point: read them in large pieces.
const READ_BUFFER_BYTES: usize = 64 << 10;

/// serde_json's nesting limit, the deepest message that can be read.
const MAX_DEPTH: usize = 128;

/// The longest line read from an upstream whose results may be up to `max_input_bytes`: JSON
/// escaping (quotes, backslashes, newlines) can double a text, and the envelope adds little.
pub(crate) fn line_limit(max_input_bytes: usize) -> usize {
    max_input_bytes
        .saturating_mul(2)
        .saturating_add(1 << 20)
        .max(MIN_LINE_BYTES)
}

/// Newline-delimited JSON-RPC over a child's stdout (`read`) and stdin (`write`).
#[derive(Debug)]
pub(crate) struct StdioTransport<R, W> {
    read: BufReader<R>,
    line: Vec<u8>,
    max_line: usize,
    /// Set while the rest of a line over `max_line` is skipped: what it said about itself,
    /// and its size so far. Kept here, not in `receive`, because rmcp may drop `receive`'s
    /// future between two reads.
    skipping: Option<(Envelope, usize)>,
    write: Arc<Mutex<Option<W>>>,
    /// Requests whose answers are rewritten before rmcp parses them (see [`tasks`]).
    pending: Arc<std::sync::Mutex<tasks::Pending>>,
}

/// One line's read.
enum Read {
    /// A whole line is in the buffer.
    Line,
    /// A line over the limit was skipped.
    Oversized { envelope: Envelope, bytes: usize },
    /// The upstream closed its stdout, or reading failed.
    End,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport that reads lines of at most `max_line` bytes.
    pub(crate) fn new(read: R, write: W, max_line: usize) -> Self {
        StdioTransport {
            read: BufReader::with_capacity(READ_BUFFER_BYTES, read),
            line: Vec::new(),
            max_line,
            skipping: None,
            write: Arc::new(Mutex::new(Some(write))),
            pending: Arc::default(),
        }
    }

    /// Reads one line without letting the buffer grow past `max_line`. Cancel-safe: bytes are
    /// consumed only together with their copy into the buffer (or the skip's count).
    async fn read_line(&mut self) -> Read {
        loop {
            let available = match self.read.fill_buf().await {
                Ok([]) => return Read::End,
                Ok(available) => available,
                Err(error) => {
                    tracing::warn!(%error, "could not read from the upstream MCP server");
                    return Read::End;
                }
            };
            let newline = available.iter().position(|byte| *byte == b'\n');
            let take = newline.map_or(available.len(), |index| index + 1);
            let piece = &available[..take];
            if self.skipping.is_none() && self.line.len() + take > self.max_line {
                // The line's start says which request it answers: keep what it said.
                let envelope = Envelope::of(&self.line);
                let bytes = self.line.len();
                release(&mut self.line);
                self.skipping = Some((envelope, bytes));
            }
            let complete = newline.is_some();
            if let Some((envelope, bytes)) = &mut self.skipping {
                envelope.feed(piece);
                *bytes += take;
            } else {
                self.line.extend_from_slice(piece);
            }
            self.read.consume(take);
            if complete {
                return match self.skipping.take() {
                    Some((envelope, bytes)) => Read::Oversized { envelope, bytes },
                    None => Read::Line,
                };
            }
        }
    }

    /// The line parsed after the [`tasks`] rewrite, when it answers a request that needs one.
    fn rewritten(&self, line: &[u8]) -> Option<serde_json::Result<RxJsonRpcMessage<RoleClient>>> {
        let mut pending = lock(&self.pending);
        if pending.is_empty() {
            return None;
        }
        let envelope = Envelope::of(line);
        if envelope.has_method() {
            return None;
        }
        let asked = pending.take(envelope.id()?)?;
        drop(pending);
        Some(
            serde_json::from_slice::<Value>(line).and_then(|mut message| {
                tasks::from_upstream(asked, &mut message);
                serde_json::from_value(message)
            }),
        )
    }

    fn release_line(&mut self) {
        release(&mut self.line);
    }

    /// What to do with a line that could not be read as a message: fail the request it
    /// answers, refuse the request it makes, or drop it.
    fn unreadable(&self, envelope: &Envelope, why: &str) -> Option<RxJsonRpcMessage<RoleClient>> {
        let Some(id) = envelope.id().cloned() else {
            tracing::warn!("dropped a message from the upstream MCP server: {why}");
            return None;
        };
        if envelope.has_method() {
            tracing::warn!(%id, "refused a request from the upstream MCP server: {why}");
            self.refuse(id, why);
            return None;
        }
        tracing::warn!(%id, "the upstream MCP server's answer could not be read: {why}");
        Some(JsonRpcMessage::error(
            McpError::new(
                ErrorCode::INTERNAL_ERROR,
                format!("the upstream MCP server's answer could not be read: {why}"),
                None,
            ),
            Some(id),
        ))
    }

    /// Answers a request the upstream sent, that could not be read, with an error; in its own
    /// task, so that a cancelled `receive` cannot cut the answer short.
    fn refuse(&self, id: RequestId, why: &str) {
        let message: TxJsonRpcMessage<RoleClient> = JsonRpcMessage::error(
            McpError::invalid_request(format!("the request could not be read: {why}"), None),
            Some(id),
        );
        let send = write_line(self.write.clone(), to_line(&message));
        tokio::spawn(async move {
            if let Err(error) = send.await {
                tracing::debug!(%error, "could not answer the upstream MCP server");
            }
        });
    }
}

/// Empties a line buffer, giving its memory back when a large line made it large.
fn release(line: &mut Vec<u8>) {
    line.clear();
    if line.capacity() > KEPT_BUFFER_BYTES {
        *line = Vec::new();
    }
}

/// A message as one line of the wire format.
pub(crate) fn to_line<T: serde::Serialize>(message: &T) -> serde_json::Result<Vec<u8>> {
    serde_json::to_vec(message).map(|mut line| {
        line.push(b'\n');
        line
    })
}

pub(crate) async fn write_line<W>(
    write: Arc<Mutex<Option<W>>>,
    line: serde_json::Result<Vec<u8>>,
) -> std::io::Result<()>
where
    W: AsyncWrite + Send + Unpin + 'static,
{
    let line = line?;
    let mut write = write.lock().await;
    let Some(write) = write.as_mut() else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotConnected,
            "the connection's output is closed",
        ));
    };
    write.write_all(&line).await?;
    write.flush().await
}

/// Why a line that is whole could not be read, in the user's terms.
fn parse_failure(envelope: &Envelope, error: &serde_json::Error) -> String {
    // rmcp's message types are untagged enums: serde reports the depth limit as "no variant
    // matched", so the depth is measured, not read from the error.
    if envelope.deepest() > MAX_DEPTH || error.to_string().contains("recursion limit") {
        format!(
            "it is nested {} levels deep, more than the {MAX_DEPTH} levels the proxy reads; ask \
             the tool for a flatter or smaller result",
            envelope.deepest()
        )
    } else {
        format!("it is not a valid JSON-RPC message ({error})")
    }
}

fn oversized(bytes: usize, max_line: usize) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    format!(
        "it has {:.1} MiB, more than the {:.1} MiB the proxy reads in one message (twice \
         `[limits] max_input_bytes`, at least 16 MiB); raise `[limits] max_input_bytes` or ask \
         the tool for less",
        bytes as f64 / MIB,
        max_line as f64 / MIB,
    )
}

impl<R, W> Transport<RoleClient> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let asked = match &item {
            JsonRpcMessage::Request(request) => match &request.request {
                ClientRequest::InitializeRequest(_) => Some(tasks::Asked::Initialize),
                ClientRequest::ListToolsRequest(_) => Some(tasks::Asked::ListTools),
                ClientRequest::CustomRequest(_) => Some(tasks::Asked::Custom),
                _ => None,
            }
            .map(|asked| (request.id.clone(), asked)),
            _ => None,
        };
        let line = match asked {
            Some((id, asked)) => serde_json::to_value(&item).and_then(|mut message| {
                lock(&self.pending).sent_upstream(id, asked, &mut message);
                to_line(&message)
            }),
            None => to_line(&item),
        };
        write_line(self.write.clone(), line)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        loop {
            match self.read_line().await {
                Read::End => return None,
                Read::Oversized { envelope, bytes } => {
                    let why = oversized(bytes, self.max_line);
                    if let Some(answer) = self.unreadable(&envelope, &why) {
                        return Some(answer);
                    }
                }
                Read::Line => {
                    let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
                    let line = line.strip_suffix(b"\r").unwrap_or(line);
                    let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
                    if line.iter().all(u8::is_ascii_whitespace) {
                        self.release_line();
                        continue;
                    }
                    let parsed = match self.rewritten(line) {
                        Some(parsed) => parsed,
                        None => serde_json::from_slice::<RxJsonRpcMessage<RoleClient>>(line),
                    };
                    let answer = match parsed {
                        Ok(message) => Some(message),
                        Err(error) if error.is_syntax() || error.is_eof() => {
                            let envelope = Envelope::of(line);
                            if envelope.deepest() > MAX_DEPTH {
                                self.unreadable(&envelope, &parse_failure(&envelope, &error))
                            } else {
                                // Not JSON at all: a server that prints to stdout. Nothing in it
                                // can be trusted to name a request.
                                tracing::debug!(%error, "skipped a line from the upstream MCP server that is not JSON");
                                None
                            }
                        }
                        Err(error) => {
                            let envelope = Envelope::of(line);
                            // JSON but not a message this proxy knows (e.g. a notification of
                            // a newer revision) is skipped unless it names a request.
                            if envelope.id().is_some() {
                                self.unreadable(&envelope, &parse_failure(&envelope, &error))
                            } else {
                                tracing::debug!(%error, "skipped a message from the upstream MCP server");
                                None
                            }
                        }
                    };
                    self.release_line();
                    if answer.is_some() {
                        return answer;
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Dropping stdin tells the child to exit.
        let mut write = self.write.lock().await;
        if let Some(mut write) = write.take() {
            let _ = write.shutdown().await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;
    use tokio::io::{AsyncReadExt, DuplexStream, duplex};

    /// A transport reading what the test writes to the returned stream, and writing to the
    /// other returned stream.
    fn transport(
        max_line: usize,
    ) -> (
        StdioTransport<DuplexStream, DuplexStream>,
        DuplexStream,
        DuplexStream,
    ) {
        let (upstream_out, read) = duplex(1 << 16);
        let (write, upstream_in) = duplex(1 << 16);
        (
            StdioTransport::new(read, write, max_line),
            upstream_out,
            upstream_in,
        )
    }

    fn error_for(message: Option<RxJsonRpcMessage<RoleClient>>) -> (RequestId, String) {
        match message {
            Some(JsonRpcMessage::Error(error)) => {
                (error.id.expect("an id"), error.error.message.into())
            }
            other => panic!("expected an error answer, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_line_over_the_limit_answers_its_request_with_the_limit_and_frees_its_buffer() {
        let (mut transport, mut upstream, _stdin) = transport(MIN_LINE_BYTES);
        let text = "x".repeat(MIN_LINE_BYTES);
        let writer = tokio::spawn(async move {
            let line = format!(
                "{{\"result\":{{\"content\":[{{\"type\":\"text\",\"text\":\"{text}\"}}]}},\"jsonrpc\":\"2.0\",\"id\":7}}\n"
            );
            upstream.write_all(line.as_bytes()).await.expect("write");
            upstream
                .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":8,\"result\":{}}\n")
                .await
                .expect("write");
            upstream
        });
        let (id, message) = error_for(transport.receive().await);
        assert_eq!(id, NumberOrString::Number(7));
        assert!(
            message.contains("16.0 MiB") && message.contains("[limits] max_input_bytes"),
            "{message}"
        );
        assert!(transport.line.capacity() <= KEPT_BUFFER_BYTES);
        // The next message is read as usual.
        assert!(matches!(
            transport.receive().await,
            Some(JsonRpcMessage::Response(response)) if response.id == NumberOrString::Number(8)
        ));
        drop(writer.await);
    }

    #[tokio::test]
    async fn a_line_too_deep_answers_its_request_with_the_depth() {
        let (mut transport, mut upstream, _stdin) = transport(MIN_LINE_BYTES);
        let nested = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"result\":{{\"content\":[],\"structuredContent\":{{\"a\":{nested}}}}},\"id\":\"q\"}}\n"
        );
        upstream.write_all(line.as_bytes()).await.expect("write");
        let (id, message) = error_for(transport.receive().await);
        assert_eq!(id, NumberOrString::String("q".into()));
        assert!(message.contains("nested 203 levels deep"), "{message}");
    }

    #[tokio::test]
    async fn an_unreadable_request_from_the_upstream_is_refused_upstream_and_garbage_skipped() {
        let (mut transport, mut upstream, mut stdin) = transport(MIN_LINE_BYTES);
        upstream
            .write_all(b"not json\n{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"sampling/createMessage\",\"params\":7}\n\n{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}\n")
            .await
            .expect("write");
        assert!(matches!(
            transport.receive().await,
            Some(JsonRpcMessage::Response(response)) if response.id == NumberOrString::Number(5)
        ));
        let mut answer = vec![0; 4096];
        let read = stdin.read(&mut answer).await.expect("the refusal");
        let answer: serde_json::Value =
            serde_json::from_slice(&answer[..read]).expect("one JSON line");
        assert_eq!(answer["id"], 4);
        assert_eq!(answer["error"]["code"], -32600);
    }
}
