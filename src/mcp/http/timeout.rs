//! Read deadlines, so a client that sends slowly (or not at all) cannot hold a connection, a
//! task and a descriptor for as long as it likes.
//!
//! Three places wait on the client: between requests (before the first one, hyper-util reads a
//! few bytes to tell HTTP/1 from HTTP/2 with no deadline of its own, and an HTTP/2 connection
//! may stay open between streams: [`Activity`] closes a connection with no request in progress
//! for the deadline), for a request's headers (hyper's `header_read_timeout` for HTTP/1), and
//! for a request's body ([`TimedBody`]). Each gets the one `[proxy] read_timeout_ms`.

use crate::sync::lock;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use hyper::body::{Body, Frame, Incoming, SizeHint};
use tokio::time::{Instant, Sleep};

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

/// A connection's requests in progress, and when it last began or ended one: what tells an
/// idle connection from a busy one. hyper's header deadline covers only HTTP/1; an HTTP/2
/// client opens streams on a connection it keeps, so the proxy closes one that has had no
/// request in progress for the read deadline itself, before its first request as after its
/// last.
#[derive(Debug, Clone)]
pub(crate) struct Activity(Arc<ActivityState>);

#[derive(Debug)]
struct ActivityState {
    in_flight: AtomicUsize,
    last: Mutex<Instant>,
}

/// A request in progress, from its headers until its response is sent (or dropped): a
/// response streamed for as long as the session lasts keeps its connection open.
#[derive(Debug)]
pub(crate) struct InFlight(Activity);

impl Default for Activity {
    fn default() -> Self {
        Activity(Arc::new(ActivityState {
            in_flight: AtomicUsize::new(0),
            last: Mutex::new(Instant::now()),
        }))
    }
}

impl Activity {
    /// Records that a request's headers arrived; the request is in progress until the guard
    /// is dropped.
    pub(crate) fn started(&self) -> InFlight {
        self.0.in_flight.fetch_add(1, Ordering::SeqCst);
        self.touch();
        InFlight(self.clone())
    }

    fn touch(&self) {
        *lock(&self.0.last) = Instant::now();
    }

    fn last(&self) -> Instant {
        *lock(&self.0.last)
    }

    /// Finishes once the connection has had no request in progress for `limit`: a future to
    /// race against the connection, which is dropped (closed) when this one finishes first.
    pub(crate) async fn idle(self, limit: Duration) {
        loop {
            let now = Instant::now();
            let busy = self.0.in_flight.load(Ordering::SeqCst) > 0;
            let deadline = self.last() + limit;
            if !busy && now >= deadline {
                return;
            }
            // A request in progress is looked at again after another `limit`.
            tokio::time::sleep_until(if busy { now + limit } else { deadline }).await;
        }
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.touch();
        self.0.0.in_flight.fetch_sub(1, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_connection_without_a_request_is_idle_at_its_deadline() {
        let activity = Activity::default();
        let idle = tokio::time::timeout(
            Duration::from_secs(2),
            activity.clone().idle(Duration::from_secs(1)),
        )
        .await;
        assert!(idle.is_ok(), "finished at the deadline");
    }

    #[tokio::test(start_paused = true)]
    async fn a_request_in_progress_keeps_its_connection_and_the_deadline_restarts_after_it() {
        let activity = Activity::default();
        let limit = Duration::from_secs(1);
        let request = activity.started();
        let watcher = tokio::spawn(activity.clone().idle(limit));
        // A long response (a session's event stream) is not idleness.
        tokio::time::sleep(Duration::from_secs(5)).await;
        assert!(!watcher.is_finished(), "busy for 5 s, still open");
        drop(request);
        // The deadline runs from the end of the last request: a second request's headers
        // are awaited for `limit`, as on the first.
        tokio::time::sleep(limit / 2).await;
        assert!(!watcher.is_finished(), "idle for half the deadline");
        tokio::time::sleep(limit).await;
        assert!(watcher.is_finished(), "idle past the deadline");
    }
}
