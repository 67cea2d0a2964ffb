//! Newline-delimited JSON-RPC lines, read within a size limit: shared by the transport to an
//! upstream's stdio and the transport to the client's.
//!
//! A line longer than the limit is skipped as it streams (its start is kept to say which
//! request it was), so one huge message never holds more than the limit in memory.

use std::sync::Arc;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use super::envelope::Envelope;

/// The smallest line limit: rmcp's own, so nothing it reads is refused here.
pub(crate) const MIN_LINE_BYTES: usize = 16 << 20;

/// A line buffer larger than this is given back after its line: one huge answer must not keep
/// its memory for the rest of the session.
pub(crate) const KEPT_BUFFER_BYTES: usize = 1 << 20;

/// Large answers are the point: read them in large pieces.
const READ_BUFFER_BYTES: usize = 64 << 10;

/// serde_json's nesting limit, the deepest message that can be read.
pub(crate) const MAX_DEPTH: usize = 128;

/// The longest line read from an upstream whose results may be up to `max_input_bytes`: JSON
/// escaping (quotes, backslashes, newlines) can double a text, and the envelope adds little.
pub(crate) fn line_limit(max_input_bytes: usize) -> usize {
    max_input_bytes
        .saturating_mul(2)
        .saturating_add(1 << 20)
        .max(MIN_LINE_BYTES)
}

/// Reads lines of at most `max_line` bytes from `read`.
#[derive(Debug)]
pub(crate) struct LineReader<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    max_line: usize,
    /// Set while the rest of a line over `max_line` is skipped: what it said about itself,
    /// and its size so far. Kept here, not in a caller's future, because rmcp may drop
    /// `receive`'s future between two reads.
    skipping: Option<(Envelope, usize)>,
}

/// One line's read.
pub(crate) enum Read {
    /// A whole line is in the buffer.
    Line,
    /// A line over the limit was skipped.
    Oversized { envelope: Envelope, bytes: usize },
    /// The peer closed its end, or reading failed.
    End,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// A reader of lines of at most `max_line` bytes.
    pub(crate) fn new(read: R, max_line: usize) -> Self {
        LineReader {
            read: BufReader::with_capacity(READ_BUFFER_BYTES, read),
            line: Vec::new(),
            max_line,
            skipping: None,
        }
    }

    /// The longest line read.
    pub(crate) fn max_line(&self) -> usize {
        self.max_line
    }

    /// Reads one line without letting the buffer grow past `max_line`. Cancel-safe: bytes are
    /// consumed only together with their copy into the buffer (or the skip's count).
    pub(crate) async fn read_line(&mut self) -> Read {
        loop {
            let available = match self.read.fill_buf().await {
                Ok([]) => return Read::End,
                Ok(available) => available,
                Err(error) => {
                    tracing::warn!(%error, "could not read from the MCP peer");
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

    /// The line last read, without its line end (LF or CRLF) or a UTF-8 byte order mark, as
    /// rmcp's own stdio codec takes it.
    pub(crate) fn message(&self) -> &[u8] {
        let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
    }

    /// The line buffer's capacity: a test sees that a huge line's memory was given back.
    #[cfg(test)]
    pub(crate) fn buffer_capacity(&self) -> usize {
        self.line.capacity()
    }

    /// Empties the line buffer, giving its memory back when a large line made it large.
    pub(crate) fn release(&mut self) {
        release(&mut self.line);
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

/// Writes one line and flushes it; fails when the output was closed.
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
pub(crate) fn parse_failure(envelope: &Envelope, error: &serde_json::Error) -> String {
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

/// Why a line over the limit was not read; `advice` says how to send less.
pub(crate) fn oversized(bytes: usize, max_line: usize, advice: &str) -> String {
    const MIB: f64 = 1024.0 * 1024.0;
    format!(
        "it has {:.1} MiB, more than the {:.1} MiB the proxy reads in one message (twice \
         `[limits] max_input_bytes`, at least 16 MiB); raise `[limits] max_input_bytes` or \
         {advice}",
        bytes as f64 / MIB,
        max_line as f64 / MIB,
    )
}

/// Writes `line` in a task of its own, so that a cancelled `receive` cannot cut it short: how
/// a transport answers a message it could not read. A failure is logged at debug, naming `to`.
pub(crate) fn write_in_background<W>(
    write: Arc<Mutex<Option<W>>>,
    line: serde_json::Result<Vec<u8>>,
    to: &'static str,
) where
    W: AsyncWrite + Send + Unpin + 'static,
{
    let send = write_line(write, line);
    tokio::spawn(async move {
        if let Err(error) = send.await {
            tracing::debug!(%error, "could not answer {to}");
        }
    });
}

/// Closes a connection's output (for a child, its stdin: that tells it to exit); a second close
/// does nothing.
pub(crate) async fn close_output<W>(write: &Mutex<Option<W>>)
where
    W: AsyncWrite + Send + Unpin,
{
    if let Some(mut write) = write.lock().await.take() {
        let _ = write.shutdown().await;
    }
}
