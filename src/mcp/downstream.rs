//! The client-facing stdio transport: newline-delimited JSON-RPC over the proxy's stdin and
//! stdout, with the [`tasks`](super::tasks) rewrites around rmcp's parsing (rmcp's own stdio
//! transport parses straight into its model, which would drop the fields of 2025-11-25 tasks).

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::stdio::{to_line, write_line};
use super::tasks;

/// Newline-delimited JSON-RPC with the client, over `read` (stdin) and `write` (stdout).
#[derive(Debug)]
pub(crate) struct DownstreamStdio<R, W> {
    read: BufReader<R>,
    /// The line being read: kept here, not in `receive`, because rmcp may drop `receive`'s
    /// future between two reads and a partial line must not be lost.
    line: Vec<u8>,
    write: Arc<Mutex<Option<W>>>,
}

impl<R, W> DownstreamStdio<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    /// A transport reading the client's messages from `read` and writing to `write`.
    pub(crate) fn new(read: R, write: W) -> Self {
        DownstreamStdio {
            read: BufReader::new(read),
            line: Vec::new(),
            write: Arc::new(Mutex::new(Some(write))),
        }
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
            match self.read.read_until(b'\n', &mut self.line).await {
                // A last line without its newline is still read; the next read ends.
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
            let whole = std::mem::take(&mut self.line);
            // As rmcp's own stdio codec: CRLF line ends and a UTF-8 byte order mark are fine.
            let line = whole.strip_suffix(b"\n").unwrap_or(&whole);
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            let line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = serde_json::from_slice::<Value>(line).and_then(|mut message| {
                tasks::from_client(&mut message);
                serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(message)
            });
            match parsed {
                Ok(message) => return Some(message),
                Err(error) => {
                    tracing::warn!(%error, "skipped a message from the client that is not MCP")
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        let mut write = self.write.lock().await;
        if let Some(mut write) = write.take() {
            let _ = write.shutdown().await;
        }
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
        let mut transport = DownstreamStdio::new(proxy_in, proxy_out);
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
}
