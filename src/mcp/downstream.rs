//! The client-facing stdio transport: newline-delimited JSON-RPC over the proxy's stdin and
//! stdout, with the [`tasks`](super::tasks) rewrites around rmcp's parsing (rmcp's own stdio
//! transport parses straight into its model, which would drop the fields of 2025-11-25 tasks).
//!
//! A message from the client is read within the same line limit as an upstream's (twice
//! `[limits] max_input_bytes`, at least 16 MiB): a longer or too deeply nested request is
//! answered with an error that names the limit, never left waiting, and never held whole.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ErrorData as McpError, JsonRpcMessage};
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

/// Newline-delimited JSON-RPC with the client, over `read` (stdin) and `write` (stdout).
#[derive(Debug)]
pub(crate) struct DownstreamStdio<R, W> {
    lines: LineReader<R>,
    write: Arc<Mutex<Option<W>>>,
}

impl<R, W> DownstreamStdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading the client's messages, lines of at most `max_line` bytes, from
    /// `read` and writing to `write`.
    pub(crate) fn new(read: R, write: W, max_line: usize) -> Self {
        DownstreamStdio {
            lines: LineReader::new(read, max_line),
            write: Arc::new(Mutex::new(Some(write))),
        }
    }

    /// What to do with a message from the client that could not be read: answer the request
    /// it makes with an error, fail the proxy's request it answers, or drop it.
    fn unreadable(&self, envelope: &Envelope, why: &str) -> Option<RxJsonRpcMessage<RoleServer>> {
        let Some(id) = envelope.id().cloned() else {
            tracing::warn!("dropped a message from the client: {why}");
            return None;
        };
        if envelope.has_method() {
            tracing::warn!(%id, "refused a request from the client: {why}");
            let message: TxJsonRpcMessage<RoleServer> = JsonRpcMessage::error(
                McpError::invalid_request(format!("the request could not be read: {why}"), None),
                Some(id),
            );
            write_in_background(self.write.clone(), to_line(&message), "the client");
            return None;
        }
        tracing::warn!(%id, "the client's answer could not be read: {why}");
        Some(JsonRpcMessage::error(
            McpError::invalid_request(
                format!("the client's answer could not be read: {why}"),
                None,
            ),
            Some(id),
        ))
    }
}

impl<R, W> Transport<RoleServer> for DownstreamStdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let line = serde_json::to_value(&item).and_then(|mut message| {
            tasks::to_client(&mut message);
            to_line(&message)
        });
        write_line(self.write.clone(), line)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            let answer = match self.lines.read_line().await {
                Read::End => return None,
                Read::Oversized { envelope, bytes } => {
                    let why = oversized(bytes, self.lines.max_line(), "send a smaller message");
                    self.unreadable(&envelope, &why)
                }
                Read::Line => {
                    let line = self.lines.message();
                    if line.iter().all(u8::is_ascii_whitespace) {
                        self.lines.release();
                        continue;
                    }
                    let parsed = serde_json::from_slice::<Value>(line).and_then(|mut message| {
                        tasks::from_client(&mut message);
                        serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(message)
                    });
                    let answer = match parsed {
                        Ok(message) => Some(message),
                        Err(error) => {
                            let envelope = Envelope::of(line);
                            if envelope.deepest() > MAX_DEPTH || envelope.id().is_some() {
                                self.unreadable(&envelope, &parse_failure(&envelope, &error))
                            } else {
                                tracing::warn!(%error, "skipped a message from the client that is not MCP");
                                None
                            }
                        }
                    };
                    self.lines.release();
                    answer
                }
            };
            if answer.is_some() {
                return answer;
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        close_output(&self.write).await;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ClientRequest, JsonRpcMessage, ServerResult};
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

    use super::*;

    #[tokio::test]
    async fn a_task_call_arrives_whole_and_the_tasks_capability_leaves_in_place() {
        let (mut client_out, proxy_in) = tokio::io::duplex(1 << 16);
        let (proxy_out, client_in) = tokio::io::duplex(1 << 16);
        let mut transport = DownstreamStdio::new(proxy_in, proxy_out, 1 << 20);
        let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "slow", "task": {"ttl": 1000}}});
        // A byte order mark and a CRLF line end, as some clients write them.
        let mut line = b"\xEF\xBB\xBF".to_vec();
        line.extend(call.to_string().as_bytes());
        line.extend(b"\r\n\n");
        client_out.write_all(&line).await.unwrap();
        let Some(JsonRpcMessage::Request(request)) = transport.receive().await else {
            panic!("a request");
        };
        let ClientRequest::CustomRequest(custom) = request.request else {
            panic!("relayed whole: {:?}", request.request);
        };
        assert_eq!(custom.params.unwrap()["task"]["ttl"], 1000);

        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
            "serverInfo": {"name": "s", "version": "1"},
            "capabilities": {"experimental": {"condense.tasks": {"list": {}}}}}});
        let answer: TxJsonRpcMessage<RoleServer> = serde_json::from_value(answer).unwrap();
        assert!(matches!(
            &answer,
            JsonRpcMessage::Response(response) if matches!(response.result, ServerResult::InitializeResult(_))
        ));
        transport.send(answer).await.unwrap();
        let mut written = String::new();
        BufReader::new(client_in)
            .read_line(&mut written)
            .await
            .unwrap();
        let written: Value = serde_json::from_str(&written).unwrap();
        assert_eq!(
            written["result"]["capabilities"],
            json!({"tasks": {"list": {}}})
        );

        drop(client_out);
        assert!(
            transport.receive().await.is_none(),
            "the client closed stdin"
        );
    }

    /// A transport reading lines of at most `max_line` bytes from the returned writer, and
    /// writing to the returned reader.
    fn transport(
        max_line: usize,
    ) -> (
        DownstreamStdio<tokio::io::DuplexStream, tokio::io::DuplexStream>,
        tokio::io::DuplexStream,
        BufReader<tokio::io::DuplexStream>,
    ) {
        let (client_out, proxy_in) = tokio::io::duplex(1 << 16);
        let (proxy_out, client_in) = tokio::io::duplex(1 << 16);
        (
            DownstreamStdio::new(proxy_in, proxy_out, max_line),
            client_out,
            BufReader::new(client_in),
        )
    }

    async fn answer_to_client(client_in: &mut BufReader<tokio::io::DuplexStream>) -> Value {
        let mut written = String::new();
        let read = client_in.read_line(&mut written);
        tokio::time::timeout(std::time::Duration::from_secs(5), read)
            .await
            .expect("the client is answered, not left waiting")
            .unwrap();
        serde_json::from_str(&written).unwrap()
    }

    #[tokio::test]
    async fn a_request_over_the_limit_is_answered_with_the_limit_and_the_next_one_is_read() {
        let (mut transport, mut client_out, mut client_in) = transport(1 << 20);
        let writer = tokio::spawn(async move {
            let big = "x".repeat(2 << 20);
            let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "write_file", "arguments": {"content": big}}});
            client_out
                .write_all(format!("{call}\n").as_bytes())
                .await
                .unwrap();
            let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
            client_out
                .write_all(format!("{ping}\n").as_bytes())
                .await
                .unwrap();
            client_out
        });
        let Some(JsonRpcMessage::Request(next)) = transport.receive().await else {
            panic!("the request after the oversized one is read");
        };
        assert_eq!(next.id, rmcp::model::NumberOrString::Number(4));
        assert!(transport.lines.buffer_capacity() <= crate::mcp::lines::KEPT_BUFFER_BYTES);
        let answer = answer_to_client(&mut client_in).await;
        assert_eq!(answer["id"], 3);
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(
            message.contains("1.0 MiB") && message.contains("[limits] max_input_bytes"),
            "{message}"
        );
        drop(writer.await.unwrap());
    }

    #[tokio::test]
    async fn a_request_nested_too_deep_is_answered_and_an_unreadable_answer_fails_its_request() {
        let (mut transport, mut client_out, mut client_in) = transport(1 << 20);
        let deep = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{{\"name\":\"t\",\"arguments\":{{\"a\":{}1{}}}}}}}\n",
            "[".repeat(200),
            "]".repeat(200)
        );
        client_out.write_all(deep.as_bytes()).await.unwrap();
        // An answer to a request the proxy sent (e.g. an elicitation), too big to read.
        let answer = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{{\"content\":\"{}\"}}}}\n",
            "y".repeat(2 << 20)
        );
        let writer = tokio::spawn(async move {
            client_out.write_all(answer.as_bytes()).await.unwrap();
            client_out
        });
        let Some(JsonRpcMessage::Error(failed)) = transport.receive().await else {
            panic!("the unreadable answer fails the proxy's request");
        };
        assert_eq!(failed.id, Some(rmcp::model::NumberOrString::Number(9)));
        let refused = answer_to_client(&mut client_in).await;
        assert_eq!(refused["id"], 5);
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("levels"), "{message}");
        drop(writer.await.unwrap());
    }
}
