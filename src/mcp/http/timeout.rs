//! Read deadlines, so a client that sends slowly (or not at all) cannot hold a connection, a
//! task and a descriptor for as long as it likes.
//!
//! Three places wait on the client: before the first request (hyper-util first reads a few
//! bytes to tell HTTP/1 from HTTP/2, with no deadline of its own), for a request's headers
//! (hyper's `header_read_timeout`, which also closes an idle keep-alive connection), and for a
//! request's body ([`TimedBody`]). Each gets the one `[proxy] read_timeout_ms`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::time::Sleep;

/// Why a request body could not be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum BodyReadError {
    /// The client did not send the whole body in time.
    #[error("the request body did not arrive within {} ms ([proxy] read_timeout_ms)", .0.as_millis())]
    TimedOut(Duration),
    /// The connection failed while the body was read.
    #[error(transparent)]
    Read(#[from] hyper::Error),
}

/// A request body that fails once `limit` has passed since the headers arrived.
#[derive(Debug)]
pub(crate) struct TimedBody {
    inner: Incoming,
    deadline: Pin<Box<Sleep>>,
    limit: Duration,
}

impl TimedBody {
    /// `inner`, to be read whole within `limit` from now.
    pub(crate) fn new(inner: Incoming, limit: Duration) -> Self {
        TimedBody {
            inner,
            deadline: Box::pin(tokio::time::sleep(limit)),
            limit,
        }
    }
}

impl Body for TimedBody {
    type Data = Bytes;
    type Error = BodyReadError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BodyReadError>>> {
        let this = &mut *self;
        if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(BodyReadError::from)));
        }
        if this.deadline.as_mut().poll(cx).is_ready() {
            return Poll::Ready(Some(Err(BodyReadError::TimedOut(this.limit))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// Set once a connection has delivered the headers of its first request.
#[derive(Debug, Clone, Default)]
pub(crate) struct FirstRequest(Arc<AtomicBool>);

impl FirstRequest {
    /// Records that a request's headers arrived.
    pub(crate) fn arrived(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Waits `limit`, then never finishes if a request arrived by then: a future to race
    /// against the connection, which is dropped (closed) when this one finishes first.
    pub(crate) async fn missed(self, limit: Duration) {
        tokio::time::sleep(limit).await;
        if self.0.load(Ordering::Relaxed) {
            // From here on hyper's own header deadline applies.
            std::future::pending::<()>().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_connection_without_a_request_misses_its_deadline() {
        let first = FirstRequest::default();
        let missed = tokio::time::timeout(
            Duration::from_secs(2),
            first.clone().missed(Duration::from_secs(1)),
        )
        .await;
        assert!(missed.is_ok(), "finished at the deadline");
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_with_a_request_never_misses() {
        let first = FirstRequest::default();
        first.arrived();
        let missed = tokio::time::timeout(
            Duration::from_secs(5),
            first.clone().missed(Duration::from_secs(1)),
        )
        .await;
        assert!(missed.is_err(), "still pending");
    }
}
