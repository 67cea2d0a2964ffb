//! A cap on the client sessions an HTTP proxy serves at once.
//!
//! Every session starts its own upstream (a child process, or a connection), and creating one
//! takes nothing but an `initialize` POST: without a cap, a client looping on `initialize`
//! would start processes until memory runs out. rmcp's [`LocalSessionManager`] keeps the
//! sessions; [`SessionLimit`] counts them in front of it, refuses one beyond the cap, and closes
//! the idle ones: a session is idle when no request came for the idle period and none is still
//! being answered, so a long tool call is never cut off for being quiet.

use crate::sync::lock;
use std::cell::Cell;
use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use tokio::time::Instant;

use crate::mcp::relay::AsRelayed;
use tokio_util::sync::CancellationToken;

/// Why a session could not be created or used.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SessionLimitError {
    /// As many sessions are open as the configuration allows.
    #[error("{}", full_message(*.max))]
    Full {
        /// The cap, `[proxy] max_sessions`.
        max: usize,
    },
    /// rmcp's session store failed (an unknown session, a closed one).
    #[error(transparent)]
    Sessions(#[from] LocalSessionManagerError),
}

/// What a client is told when the cap is reached: the cap, and the key that sets it.
pub(crate) fn full_message(max: usize) -> String {
    format!(
        "the proxy already serves {max} sessions, its limit ([proxy] max_sessions = {max}); \
         close a session (HTTP DELETE) or wait for an idle one to expire, or raise the limit"
    )
}

/// How long a session may go without any event even with a request in flight: a backstop for
/// a response stream that is never dropped; longer than any tool call should take.
const STUCK_SESSION_LIMIT: Duration = Duration::from_secs(3600);

/// What keeps a session from being idle: its last request, and requests still answering.
#[derive(Debug)]
struct Use {
    last: Instant,
    in_flight: usize,
}

impl Use {
    fn new() -> Self {
        Use {
            last: Instant::now(),
            in_flight: 0,
        }
    }
}

/// Which sessions are open, and how many are being created.
#[derive(Debug, Default)]
struct Count {
    open: HashMap<SessionId, Use>,
    starting: usize,
}

impl Count {
    fn total(&self) -> usize {
        self.open.len() + self.starting
    }

    fn touch(&mut self, id: &SessionId) {
        if let Some(session) = self.open.get_mut(id) {
            session.last = Instant::now();
        }
    }
}

type Shared = Arc<Mutex<Count>>;

/// rmcp's in-memory sessions, at most `max` at once, each closed after `idle` without a request
/// and with none in flight.
#[derive(Debug)]
pub(crate) struct SessionLimit {
    sessions: LocalSessionManager,
    max: usize,
    idle: Duration,
    count: Shared,
}

impl SessionLimit {
    /// At most `max` sessions; one with no request for `idle`, and none still answering, is
    /// closed by [`SessionLimit::close_idle`] (and its upstream stopped when the session's
    /// server is dropped).
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        let mut sessions = LocalSessionManager::default();
        // rmcp's own idle timeout counts a long tool call as idle and would end it; it stays
        // only as a backstop, and `close_idle` does the reaping.
        sessions.session_config.keep_alive = Some(idle.max(STUCK_SESSION_LIMIT));
        SessionLimit {
            sessions,
            max,
            idle,
            count: Shared::default(),
        }
    }

    /// The cap.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Holds a place for a session about to be created; `None` at the cap.
    pub(crate) fn reserve(&self) -> Option<Place> {
        let mut count = lock(&self.count);
        if count.total() >= self.max {
            return None;
        }
        count.starting += 1;
        Some(Place {
            count: Some(self.count.clone()),
        })
    }

    /// Runs `serve` (rmcp answering one request) with `place` for the session it may create:
    /// the place checked at the HTTP front is the one used, so a refusal is always the front's
    /// clear 503, also when many `initialize`s race. An unused place is given back.
    pub(crate) async fn holding<F: Future>(place: Place, serve: F) -> F::Output {
        RESERVED.scope(Cell::new(Some(place)), serve).await
    }

    /// Closes idle sessions until `shutdown` fires, checking a few times per idle period.
    pub(crate) async fn close_idle(self: Arc<Self>, shutdown: CancellationToken) {
        let period = (self.idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(5));
        let mut ticker = tokio::time::interval(period);
        ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = ticker.tick() => {}
                () = shutdown.cancelled() => return,
            }
            let idle: Vec<SessionId> = lock(&self.count)
                .open
                .iter()
                .filter(|(_, session)| {
                    session.in_flight == 0 && session.last.elapsed() >= self.idle
                })
                .map(|(id, _)| id.clone())
                .collect();
            for id in idle {
                tracing::info!(session = %id, idle_ms = self.idle.as_millis(), "closing an idle MCP session");
                if let Err(error) = self.close_session(&id).await {
                    tracing::debug!(%error, "closing an idle session failed");
                }
            }
        }
    }

    /// Marks a request of session `id` as answering until `stream` ends or is dropped.
    fn in_flight<S>(&self, id: &SessionId, stream: S) -> InFlight<S> {
        let mut count = lock(&self.count);
        if let Some(session) = count.open.get_mut(id) {
            session.in_flight += 1;
            session.last = Instant::now();
        }
        InFlight {
            stream: Box::pin(stream),
            id: id.clone(),
            count: self.count.clone(),
        }
    }
}

tokio::task_local! {
    /// The place reserved for the request this task serves; rmcp creates the session inside the
    /// request's own future, so it is found there.
    static RESERVED: Cell<Option<Place>>;
}

/// A place under the cap, held until a session takes it or it is dropped.
#[derive(Debug)]
pub(crate) struct Place {
    count: Option<Shared>,
}

impl Place {
    /// Turns the reservation into the open session `id`.
    fn open(mut self, id: SessionId) {
        if let Some(count) = self.count.take() {
            let mut count = lock(&count);
            count.starting -= 1;
            count.open.insert(id, Use::new());
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        if let Some(count) = self.count.take() {
            lock(&count).starting -= 1;
        }
    }
}

/// A response stream that keeps its session from counting as idle while it is open.
struct InFlight<S> {
    stream: Pin<Box<S>>,
    id: SessionId,
    count: Shared,
}

impl<S: Stream> Stream for InFlight<S> {
    type Item = S::Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<S::Item>> {
        self.stream.as_mut().poll_next(cx)
    }
}

impl<S> Drop for InFlight<S> {
    fn drop(&mut self) {
        let mut count = lock(&self.count);
        if let Some(session) = count.open.get_mut(&self.id) {
            session.in_flight = session.in_flight.saturating_sub(1);
            session.last = Instant::now();
        }
    }
}

impl SessionManager for SessionLimit {
    type Error = SessionLimitError;
    type Transport = AsRelayed<<LocalSessionManager as SessionManager>::Transport>;

    /// Takes the place the HTTP front reserved for this request ([`SessionLimit::holding`]),
    /// or reserves one: concurrent `initialize`s cannot all pass.
    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let place = match RESERVED.try_with(Cell::take).ok().flatten() {
            Some(place) => place,
            None => self
                .reserve()
                .ok_or(SessionLimitError::Full { max: self.max })?,
        };
        let (id, transport) = self.sessions.create_session().await?;
        place.open(id.clone());
        Ok((id, AsRelayed::new(transport)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        Ok(self.sessions.initialize_session(id, message).await?)
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        Ok(self.sessions.has_session(id).await?)
    }

    /// Called for a client's DELETE and, by rmcp, whenever a session's server ends (idle
    /// timeout, failed `initialize`, shutdown): the place is freed once, whichever comes first.
    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let closed = self.sessions.close_session(id).await;
        lock(&self.count).open.remove(id);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        let stream = self.sessions.create_stream(id, message).await?;
        Ok(self.in_flight(id, stream))
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        lock(&self.count).touch(id);
        Ok(self.sessions.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        lock(&self.count).touch(id);
        Ok(self.sessions.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        lock(&self.count).touch(id);
        Ok(self.sessions.resume(id, last_event_id).await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_session_beyond_the_cap_is_refused_until_one_closes() {
        let limit = SessionLimit::new(2, Duration::from_secs(60));
        let (first, _first_transport) = limit.create_session().await.expect("first");
        let (_second, _second_transport) = limit.create_session().await.expect("second");
        assert!(limit.reserve().is_none(), "full");
        let refused = limit.create_session().await.err().expect("over the cap");
        let message = refused.to_string();
        assert!(message.contains("[proxy] max_sessions = 2"), "{message}");

        limit.close_session(&first).await.expect("closed");
        // A second close (rmcp's own, after the client's DELETE) frees nothing more.
        let _ = limit.close_session(&first).await;
        let place = limit.reserve().expect("a freed place");
        let (_third, _third_transport) = SessionLimit::holding(place, limit.create_session())
            .await
            .expect("created in the reserved place");
        assert!(limit.reserve().is_none(), "full again");
    }

    /// A response stream that never yields, standing for a tool call still running.
    struct Running;

    impl Stream for Running {
        type Item = ();

        fn poll_next(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<()>> {
            Poll::Pending
        }
    }

    #[tokio::test(start_paused = true)]
    async fn idle_sessions_close_but_one_with_a_request_in_flight_stays_until_it_ends() {
        let limit = Arc::new(SessionLimit::new(4, Duration::from_secs(1)));
        let (busy, _busy_transport) = limit.create_session().await.expect("busy");
        let (quiet, _quiet_transport) = limit.create_session().await.expect("quiet");
        let call = limit.in_flight(&busy, Running);
        let shutdown = CancellationToken::new();
        let reaper = tokio::spawn(limit.clone().close_idle(shutdown.clone()));

        tokio::time::sleep(Duration::from_secs(3)).await;
        assert!(
            !limit.has_session(&quiet).await.expect("known"),
            "idle: closed"
        );
        assert!(
            limit.has_session(&busy).await.expect("known"),
            "in flight: kept"
        );

        drop(call);
        tokio::time::sleep(Duration::from_millis(500)).await;
        assert!(
            limit.has_session(&busy).await.expect("known"),
            "just answered"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert!(!limit.has_session(&busy).await.expect("known"), "then idle");
        assert!(limit.reserve().is_some());
        shutdown.cancel();
        reaper.await.expect("reaper ends");
    }

    #[tokio::test]
    async fn an_unused_place_is_given_back() {
        let limit = SessionLimit::new(1, Duration::from_secs(60));
        let place = limit.reserve().expect("a place");
        assert!(limit.reserve().is_none());
        SessionLimit::holding(place, async {}).await;
        assert!(limit.reserve().is_some(), "given back");
    }
}
