//! The server side of the proxy: one [`ProxyServer`] per client session, relaying every request
//! to the session's upstream connection and condensing `tools/call` results on the way back.

// Logging, subscriptions and sampling are deprecated by the newest protocol revision, but the
// revisions the proxy relays have them, and relaying them is the point.
#![allow(deprecated)]

use crate::sync::lock;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use rmcp::model::ServerPeerInfo;
use rmcp::model::{
    ClientNotification, ClientRequest, ErrorData as McpError, JsonObject, ServerResult,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer};
use tokio::sync::watch;

mod call;
mod custom;
#[cfg(test)]
mod tests;

use super::backlog::Backlog;
use super::relay::{RelayError, RelayPath, relay_request};
use super::setup::SetupChange;
use super::supervisor::{Supervisor, UpstreamFailure};
use super::upstream::UpstreamSpec;
use crate::Condenser;

/// What every session of one proxy shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) upstream: UpstreamSpec,
    /// The configuration in force; replaced on reload.
    pub(crate) loaded: watch::Receiver<Arc<Loaded>>,
}

/// What one version of the configuration file gives the proxy.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The engine, and through it the one `Config` (the proxy's keys included).
    pub(crate) engine: Condenser,
    /// The engines of earlier versions, newest first: refs they handed out stay retrievable
    /// after a reload.
    pub(crate) previous: Vec<Condenser>,
}

/// One client session: its upstream connection and what the proxy learned from it.
#[derive(Debug)]
struct Session {
    upstream: Supervisor,
    /// Requests relayed to the upstream: their progress routes, and the upstream's
    /// notifications on their way to the client.
    upward: RelayPath,
    /// Requests the upstream makes of the client: their progress routes, and the client's
    /// notifications on their way to the upstream.
    downward: RelayPath,
    /// Output schemas as the upstream listed them, for validating condensed results.
    output_schemas: Mutex<HashMap<String, Arc<JsonObject>>>,
    /// Tools whose own input schema already has an argument named like the query argument.
    own_query_argument: Mutex<HashSet<String>>,
    /// Upstream tools listed under another name because an added tool has theirs: listed
    /// name → the upstream's name. The added tool keeps its name for the whole session.
    renamed: Mutex<HashMap<String, String>>,
    /// Refs of the images, audio and binary resources this session replaced by a description:
    /// `condense_retrieve` answers them with the item itself.
    binary_refs: Mutex<HashSet<String>>,
    /// Task-augmented `tools/call`s by task id, until their result is fetched.
    task_calls: Mutex<HashMap<String, custom::TaskCall>>,
    /// In HTTP mode, a random id that owns the originals this session's calls keep, so no
    /// other session reads them; `None` over stdio, where the process serves one client.
    owner: Option<String>,
}

impl Session {
    fn new(upstream: UpstreamSpec) -> Self {
        Session {
            upstream: Supervisor::new(upstream),
            upward: RelayPath::default(),
            downward: RelayPath::default(),
            output_schemas: Mutex::default(),
            own_query_argument: Mutex::default(),
            renamed: Mutex::default(),
            binary_refs: Mutex::default(),
            task_calls: Mutex::default(),
            owner: None,
        }
    }
}

/// The MCP server the client talks to.
#[derive(Debug, Clone)]
pub(crate) struct ProxyServer {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

fn unexpected(result: &ServerResult) -> McpError {
    let kind = serde_json::to_value(result)
        .ok()
        .and_then(|value| {
            value
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(","))
        })
        .unwrap_or_default();
    McpError::internal_error(
        format!("upstream answered with an unexpected result ({kind})"),
        None,
    )
}

/// Relays `$request` and unwraps the expected result variant.
macro_rules! relay {
    ($self:ident, $context:ident, $request:expr, $variant:ident) => {{
        match $self
            .relay(ClientRequest::from($request), &$context)
            .await?
        {
            ServerResult::$variant(result) => Ok(result),
            other => Err(unexpected(&other)),
        }
    }};
    ($self:ident, $context:ident, $request:expr) => {{
        $self
            .relay(ClientRequest::from($request), &$context)
            .await
            .map(|_| ())
    }};
}

// After `relay!`, which the handler uses.
mod handler;

impl ProxyServer {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        let session = Arc::new(Session::new(shared.upstream.clone()));
        ProxyServer { shared, session }
    }

    /// A server for one HTTP session: the originals its calls keep are readable only from it,
    /// unless `[store] share_across_sessions`. The id is the proxy's own, never the client's
    /// session id, so a client cannot name another session's.
    pub(crate) fn for_http_session(shared: Arc<Shared>) -> Self {
        let mut session = Session::new(shared.upstream.clone());
        session.owner = Some(format!("{:032x}", fastrand::u128(..)));
        ProxyServer {
            shared,
            session: Arc::new(session),
        }
    }

    /// The client's notifications on their way to the upstream, for a transport that reads
    /// them in order (stdio) to mark.
    pub(crate) fn client_backlog(&self) -> Backlog {
        self.session.downward.backlog.clone()
    }

    fn loaded(&self) -> Arc<Loaded> {
        self.shared.loaded.borrow().clone()
    }

    fn upstream_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.session
            .upstream
            .latest_peer()
            .as_ref()
            .and_then(Peer::peer_info)
    }

    /// Stops the upstream connection: closes the child's stdin and gives it `grace` to exit.
    /// A child still running after that is killed.
    pub(crate) async fn close(&self, grace: std::time::Duration) {
        self.session.upstream.close(grace).await;
    }

    /// Relays `request` to the upstream, starting it again first if it crashed.
    async fn relay(
        &self,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        let loaded = self.loaded();
        let proxy = &loaded.engine.config().proxy;
        let supervisor = &self.session.upstream;
        let live = supervisor.acquire(proxy, &context.ct).await?;
        let method = request.method().to_owned();
        let setup_change = SetupChange::of(&request);
        let relayed = relay_request(
            &live.vitals.peer,
            request,
            &context.meta,
            &context.ct,
            &self.session.upward,
            proxy.upstream_timeout,
        )
        .await;
        match relayed {
            Ok(result) => {
                if let Some(change) = setup_change {
                    supervisor.setup_accepted(change);
                }
                Ok(result)
            }
            Err(RelayError::ConnectionLost(_)) => {
                let mut error: McpError = supervisor.lost(&live, proxy).await.into();
                let limit = loaded.engine.config().limits.max_input_bytes;
                if let Some(hint) = self.shared.upstream.lost_hint(limit) {
                    error.message = format!("{}{hint}", error.message).into();
                }
                Err(error)
            }
            Err(RelayError::Timeout(after)) => Err(UpstreamFailure::TimedOut {
                upstream: self.shared.upstream.label(),
                method,
                after,
            }
            .into()),
            Err(RelayError::Cancelled) => Err(UpstreamFailure::Cancelled.into()),
            Err(RelayError::Answered(error)) => Err(error),
        }
    }

    async fn notify_upstream(&self, notification: ClientNotification) {
        // Notifications do not start a crashed upstream: a new one would not know what they
        // refer to.
        if let Some(peer) = self.session.upstream.latest_peer()
            && !peer.is_transport_closed()
            && let Err(error) = peer.send_notification(notification).await
        {
            tracing::warn!(%error, "could not relay a notification upstream");
        }
    }

    /// The upstream's name of a tool listed as `listed`: different when an added tool has it.
    fn upstream_name(&self, listed: &str) -> String {
        lock(&self.session.renamed)
            .get(listed)
            .cloned()
            .unwrap_or_else(|| listed.to_owned())
    }

    fn upstream_has_tools(&self) -> bool {
        self.upstream_info()
            .is_some_and(|info| info.capabilities.tools.is_some())
    }
}
