//! A cap on the client sessions an HTTP proxy serves at once.
//!
//! Every session starts its own upstream (a child process, or a connection), and creating one
//! takes nothing but an `initialize` POST: without a cap, a client looping on `initialize`
//! would start processes until memory runs out. rmcp's [`LocalSessionManager`] keeps the
//! sessions; [`SessionLimit`] counts them in front of it and refuses one beyond the cap.

use std::collections::HashSet;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use futures_core::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::ServerSseMessage;
use rmcp::transport::streamable_http_server::session::local::{
    LocalSessionManager, LocalSessionManagerError,
};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

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

/// Which sessions are open, and how many are being created.
#[derive(Debug, Default)]
struct Count {
    open: HashSet<SessionId>,
    starting: usize,
}

impl Count {
    fn total(&self) -> usize {
        self.open.len() + self.starting
    }
}

/// rmcp's in-memory sessions, at most `max` at once, each closed after `idle` without traffic.
#[derive(Debug)]
pub(crate) struct SessionLimit {
    sessions: LocalSessionManager,
    max: usize,
    count: Mutex<Count>,
}

impl SessionLimit {
    /// At most `max` sessions; one with no request for `idle` is closed (and its upstream
    /// stopped, when the session's server is dropped).
    pub(crate) fn new(max: usize, idle: Duration) -> Self {
        let mut sessions = LocalSessionManager::default();
        sessions.session_config.keep_alive = Some(idle);
        SessionLimit {
            sessions,
            max,
            count: Mutex::default(),
        }
    }

    /// The cap.
    pub(crate) fn max(&self) -> usize {
        self.max
    }

    /// Whether a new session would be refused now.
    pub(crate) fn is_full(&self) -> bool {
        self.count().total() >= self.max
    }

    fn count(&self) -> std::sync::MutexGuard<'_, Count> {
        // Counters only: a panic elsewhere cannot leave them half-updated.
        self.count.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SessionManager for SessionLimit {
    type Error = SessionLimitError;
    type Transport = <LocalSessionManager as SessionManager>::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        {
            // Reserve a place before creating, so concurrent `initialize`s cannot all pass.
            let mut count = self.count();
            if count.total() >= self.max {
                return Err(SessionLimitError::Full { max: self.max });
            }
            count.starting += 1;
        }
        let created = self.sessions.create_session().await;
        let mut count = self.count();
        count.starting -= 1;
        let (id, transport) = created?;
        count.open.insert(id.clone());
        Ok((id, transport))
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
        self.count().open.remove(id);
        Ok(closed?)
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.sessions.create_stream(id, message).await?)
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        Ok(self.sessions.accept_message(id, message).await?)
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        Ok(self.sessions.create_standalone_stream(id).await?)
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
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
        assert!(limit.is_full());
        let refused = limit.create_session().await.err().expect("over the cap");
        let message = refused.to_string();
        assert!(message.contains("[proxy] max_sessions = 2"), "{message}");

        limit.close_session(&first).await.expect("closed");
        // A second close (rmcp's own, after the client's DELETE) frees nothing more.
        let _ = limit.close_session(&first).await;
        assert!(!limit.is_full());
        let (_third, _third_transport) = limit.create_session().await.expect("a freed place");
        assert!(limit.is_full());
    }
}
