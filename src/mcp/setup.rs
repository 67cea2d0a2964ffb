//! What a client set up on its upstream during a session (the logging level and the resource
//! subscriptions), kept so that an upstream started again after a crash is set up the same way.
//! Without it, a restarted server would log at its default level and never send the
//! `notifications/resources/updated` the client subscribed to.

// Logging and `resources/subscribe` are deprecated by the newest protocol revision, but the
// proxy relays them for clients and servers that speak the earlier ones.
#![allow(deprecated)]

use crate::sync::lock;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::{
    ClientRequest, LoggingLevel, SetLevelRequest, SetLevelRequestParams, SubscribeRequest,
    SubscribeRequestParams,
};
use rmcp::{Peer, RoleClient};

/// The longest a restarted upstream may take over one setup request, whatever the proxy's
/// `upstream_timeout`: the restart holds back the request that caused it.
const SETUP_TIMEOUT: Duration = Duration::from_secs(10);

/// A change to the session's setup, made by one client request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum SetupChange {
    Level(LoggingLevel),
    Subscribe(String),
    Unsubscribe(String),
}

impl SetupChange {
    /// The change `request` makes once the upstream accepts it, if any.
    pub(crate) fn of(request: &ClientRequest) -> Option<Self> {
        match request {
            ClientRequest::SetLevelRequest(request) => {
                Some(SetupChange::Level(request.params.level))
            }
            ClientRequest::SubscribeRequest(request) => {
                Some(SetupChange::Subscribe(request.params.uri.clone()))
            }
            ClientRequest::UnsubscribeRequest(request) => {
                Some(SetupChange::Unsubscribe(request.params.uri.clone()))
            }
            _ => None,
        }
    }
}

/// The setup of one session: the last level set, and the resources subscribed to, in the order
/// of subscription.
#[derive(Debug, Default)]
pub(crate) struct SessionSetup {
    state: Mutex<Setup>,
}

#[derive(Debug, Default, Clone)]
struct Setup {
    level: Option<LoggingLevel>,
    subscriptions: Vec<String>,
}

impl SessionSetup {
    /// Records a change the upstream accepted.
    pub(crate) fn accepted(&self, change: SetupChange) {
        let mut setup = lock(&self.state);
        match change {
            SetupChange::Level(level) => setup.level = Some(level),
            SetupChange::Subscribe(uri) => {
                if !setup.subscriptions.contains(&uri) {
                    setup.subscriptions.push(uri);
                }
            }
            SetupChange::Unsubscribe(uri) => setup.subscriptions.retain(|kept| *kept != uri),
        }
    }

    /// The requests that set a new upstream up like the one that ended: the level first, then
    /// each subscription.
    pub(crate) fn requests(&self) -> Vec<ClientRequest> {
        let setup = lock(&self.state).clone();
        let level = setup.level.map(|level| {
            ClientRequest::from(SetLevelRequest::new(SetLevelRequestParams::new(level)))
        });
        let subscriptions = setup.subscriptions.into_iter().map(|uri| {
            ClientRequest::from(SubscribeRequest::new(SubscribeRequestParams::new(uri)))
        });
        level.into_iter().chain(subscriptions).collect()
    }

    /// Sends the setup to a freshly started upstream, each request within `timeout` (the
    /// proxy's `upstream_timeout`), at most [`SETUP_TIMEOUT`]. A request the server refuses is
    /// logged and skipped: the client's calls matter more than its setup.
    pub(crate) async fn replay(
        &self,
        peer: &Peer<RoleClient>,
        timeout: Option<Duration>,
        upstream: &str,
    ) {
        let timeout = timeout.map_or(SETUP_TIMEOUT, |timeout| timeout.min(SETUP_TIMEOUT));
        for request in self.requests() {
            let method = request.method().to_owned();
            match tokio::time::timeout(timeout, peer.send_request(request)).await {
                Ok(Ok(_)) => tracing::debug!(upstream, %method, "session setup replayed"),
                Ok(Err(error)) => {
                    tracing::warn!(upstream, %method, %error, "the restarted upstream refused the session setup");
                }
                Err(_) => {
                    tracing::warn!(upstream, %method, "the restarted upstream did not answer the session setup in time");
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn methods_and_uris(setup: &SessionSetup) -> Vec<String> {
        setup
            .requests()
            .iter()
            .map(|request| match request {
                ClientRequest::SetLevelRequest(r) => format!("level {:?}", r.params.level),
                ClientRequest::SubscribeRequest(r) => format!("subscribe {}", r.params.uri),
                other => format!("unexpected {}", other.method()),
            })
            .collect()
    }

    #[test]
    fn the_last_level_and_the_live_subscriptions_are_replayed_in_order() {
        let setup = SessionSetup::default();
        assert!(setup.requests().is_empty());
        for change in [
            SetupChange::Subscribe("file:///a".into()),
            SetupChange::Level(LoggingLevel::Info),
            SetupChange::Subscribe("file:///b".into()),
            SetupChange::Subscribe("file:///a".into()),
            SetupChange::Subscribe("file:///c".into()),
            SetupChange::Unsubscribe("file:///b".into()),
            SetupChange::Level(LoggingLevel::Debug),
        ] {
            setup.accepted(change);
        }
        assert_eq!(
            methods_and_uris(&setup),
            ["level Debug", "subscribe file:///a", "subscribe file:///c"]
        );
    }

    #[test]
    fn only_setup_requests_are_changes() {
        let ping = ClientRequest::from(rmcp::model::PingRequest::default());
        assert_eq!(SetupChange::of(&ping), None);
        let level = ClientRequest::from(SetLevelRequest::new(SetLevelRequestParams::new(
            LoggingLevel::Error,
        )));
        assert_eq!(
            SetupChange::of(&level),
            Some(SetupChange::Level(LoggingLevel::Error))
        );
    }
}
