//! A TCP relay on 127.0.0.1 that counts the chat-completion requests passing through it, for
//! counting a client's attempts against a real server that cannot count them itself.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// The request line every chat completion starts with.
const REQUEST_LINE: &[u8] = b"POST /v1/chat/completions ";

/// A running relay to one upstream address; stops accepting when dropped.
pub(crate) struct CountingRelay {
    url: String,
    requests: Arc<AtomicUsize>,
    accept: JoinHandle<()>,
}

impl CountingRelay {
    /// Relays to `upstream` (`host:port`).
    pub(crate) async fn start(upstream: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&requests);
        let accept = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let Ok(server) = TcpStream::connect(&upstream).await else {
                    continue;
                };
                tokio::spawn(relay(client, server, Arc::clone(&counter)));
            }
        });
        CountingRelay {
            url,
            requests,
            accept,
        }
    }

    /// The base URL to point a client at.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Chat-completion requests relayed so far.
    pub(crate) fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for CountingRelay {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

async fn relay(client: TcpStream, server: TcpStream, requests: Arc<AtomicUsize>) {
    let (mut client_read, mut client_write) = client.into_split();
    let (mut server_read, mut server_write) = server.into_split();
    let upstream = async move {
        // Bytes kept from the previous chunk, so a request line split across reads still counts.
        let mut carry: Vec<u8> = Vec::new();
        let mut buffer = [0u8; 16 * 1024];
        loop {
            let read = match client_read.read(&mut buffer).await {
                Ok(0) | Err(_) => break,
                Ok(read) => read,
            };
            carry.extend_from_slice(&buffer[..read]);
            let found = carry
                .windows(REQUEST_LINE.len())
                .filter(|window| *window == REQUEST_LINE)
                .count();
            requests.fetch_add(found, Ordering::SeqCst);
            let keep = carry.len().min(REQUEST_LINE.len() - 1);
            carry.drain(..carry.len() - keep);
            if server_write.write_all(&buffer[..read]).await.is_err() {
                break;
            }
        }
        let _ = server_write.shutdown().await;
    };
    let downstream = async move {
        let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
        let _ = client_write.shutdown().await;
    };
    tokio::join!(upstream, downstream);
}
