//! The transport to an upstream server's stdin and stdout: newline-delimited JSON-RPC, like
//! rmcp's own, except that a message it cannot take never leaves a request waiting.
//!
//! rmcp drops a line longer than its fixed 16 MiB limit, and a line nested deeper than
//! serde_json's 128 levels, and the request that line answered then waits forever. Here the
//! line limit follows `[limits] max_input_bytes` (results up to that size are read and
//! condensed), and a line that is too long, too deep or of the wrong shape is answered in its
//! place: the pending request fails at once with an error that names the limit.

use crate::sync::lock;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::model::{ErrorCode, ErrorData as McpError, JsonRpcMessage, RequestId};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Mutex;

use super::envelope::Envelope;
use super::lines::{
    LineReader, MAX_DEPTH, Read, close_output, oversized, parse_failure, to_line,
    write_in_background, write_line,
};
use super::tasks;

/// Newline-delimited JSON-RPC over a child's stdout (`read`) and stdin (`write`).
#[derive(Debug)]
pub(crate) struct StdioTransport<R, W> {
    lines: LineReader<R>,
    write: Arc<Mutex<Option<W>>>,
    /// Requests whose answers are rewritten before rmcp parses them (see [`tasks`]).
    pending: Arc<std::sync::Mutex<tasks::Pending>>,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport that reads lines of at most `max_line` bytes.
    pub(crate) fn new(read: R, write: W, max_line: usize) -> Self {
        StdioTransport {
            lines: LineReader::new(read, max_line),
            write: Arc::new(Mutex::new(Some(write))),
            pending: Arc::default(),
        }
    }

    /// The line parsed after the [`tasks`] rewrite, when it answers a request that needs one.
    fn rewritten(&self, line: &[u8]) -> Option<serde_json::Result<RxJsonRpcMessage<RoleClient>>> {
        let asked = lock(&self.pending).answered_by(line)?;
        Some(
            serde_json::from_slice::<Value>(line).and_then(|mut message| {
                tasks::from_upstream(asked, &mut message);
                serde_json::from_value(message)
            }),
        )
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
        write_in_background(
            self.write.clone(),
            to_line(&message),
            "the upstream MCP server",
        );
    }
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
        let asked = tasks::Asked::by(&item);
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
            match self.lines.read_line().await {
                Read::End => return None,
                Read::Oversized { envelope, bytes } => {
                    let why = oversized(bytes, self.lines.max_line(), "ask the tool for less");
                    if let Some(answer) = self.unreadable(&envelope, &why) {
                        return Some(answer);
                    }
                }
                Read::Line => {
                    let line = self.lines.message();
                    if line.iter().all(u8::is_ascii_whitespace) {
                        self.lines.release();
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
                    self.lines.release();
                    if answer.is_some() {
                        return answer;
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        // Closing stdin tells the child to exit.
        close_output(&self.write).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::lines::{KEPT_BUFFER_BYTES, MIN_LINE_BYTES};
    use rmcp::model::NumberOrString;
    use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream, duplex};

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
        assert!(transport.lines.buffer_capacity() <= KEPT_BUFFER_BYTES);
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
