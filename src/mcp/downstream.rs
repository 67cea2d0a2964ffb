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
            let line = std::mem::take(&mut self.line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let parsed = serde_json::from_slice::<Value>(&line).and_then(|mut message| {
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
