//! The upstream MCP server: a child process over stdio or a streamable-HTTP endpoint, and the
//! client-side handler that relays its requests and notifications to the downstream client.

use std::ffi::OsString;
use std::process::Stdio;

use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ClientConfig, ClientResult,
    ErrorData as McpError, GetMeta, ProtocolVersion, RequestMetaObject, ServerNotification,
    ServerRequest,
};
use rmcp::service::{
    NotificationContext, PeerRequestOptions, RequestContext, RunningService, ServiceError,
    ServiceRole,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{Peer, RoleClient, RoleServer, Service, ServiceExt};
use tokio_util::sync::CancellationToken;

use super::error::ProxyError;
use super::progress::ProgressRoutes;

/// Where the upstream MCP server is.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UpstreamSpec {
    /// A command started as a child process that speaks MCP over its stdin and stdout. It is
    /// stopped when the proxy (or, over HTTP, the client's session) stops.
    Command {
        /// The program.
        program: OsString,
        /// Its arguments.
        args: Vec<OsString>,
    },
    /// A streamable-HTTP MCP endpoint, e.g. `http://127.0.0.1:3001/mcp`.
    Url(String),
}

impl UpstreamSpec {
    /// A child-process upstream from a command line (program first).
    ///
    /// # Errors
    ///
    /// [`ProxyError::NoUpstream`] when the command line is empty.
    pub fn command<I, S>(command_line: I) -> Result<Self, ProxyError>
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        let mut parts = command_line.into_iter().map(Into::into);
        let program = parts.next().ok_or(ProxyError::NoUpstream)?;
        Ok(UpstreamSpec::Command {
            program,
            args: parts.collect(),
        })
    }

    /// A short label for logs and the server name: the program's file name or the URL's host.
    pub(crate) fn label(&self) -> String {
        match self {
            UpstreamSpec::Command { program, .. } => std::path::Path::new(program)
                .file_name()
                .unwrap_or(program.as_os_str())
                .to_string_lossy()
                .into_owned(),
            UpstreamSpec::Url(url) => redact_url(url),
        }
    }
}

/// The URL without credentials or query: what may appear in logs and the health answer.
fn redact_url(url: &str) -> String {
    let without_query = url.split(['?', '#']).next().unwrap_or_default();
    match without_query.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            let host = authority
                .rsplit_once('@')
                .map_or(authority, |(_, host)| host);
            format!("{scheme}://{host}{path}")
        }
        None => without_query.to_owned(),
    }
}

/// A running connection to the upstream server.
pub(crate) type UpstreamConnection = RunningService<RoleClient, UpstreamHandler>;

/// The newest protocol version the proxy speaks on both sides.
///
/// The upstream connection uses the `initialize` handshake; later revisions replaced it with
/// per-request metadata and moved subscriptions and pings, which a relay cannot translate to an
/// older upstream. Clients that ask for a later version negotiate down to this one.
pub(crate) const NEWEST_RELAYED_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// Connects to the upstream, introducing the downstream client (its capabilities, so the
/// upstream only asks for sampling, roots or elicitation when the client offers them).
pub(crate) async fn connect(
    spec: &UpstreamSpec,
    mut client: ClientConfig,
    handler: UpstreamHandler,
) -> Result<UpstreamConnection, ProxyError> {
    if client.protocol_version.as_str() > NEWEST_RELAYED_VERSION.as_str() {
        client.protocol_version = NEWEST_RELAYED_VERSION;
    }
    let handler = handler.with_client(client);
    let handshake =
        |error: rmcp::service::ClientInitializeError| ProxyError::Handshake(error.to_string());
    match spec {
        UpstreamSpec::Command { program, args } => {
            let mut command = tokio::process::Command::new(program);
            command.args(args).kill_on_drop(true);
            let (transport, _stderr) = TokioChildProcess::builder(command)
                .stderr(Stdio::inherit())
                .spawn()
                .map_err(|source| ProxyError::Spawn {
                    program: program.to_string_lossy().into_owned(),
                    source,
                })?;
            handler.serve(transport).await.map_err(handshake)
        }
        UpstreamSpec::Url(url) => {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            handler.serve(transport).await.map_err(handshake)
        }
    }
}

/// The client side of the proxy: answers the upstream's requests by asking the downstream
/// client, and relays its notifications.
#[derive(Debug, Clone)]
pub(crate) struct UpstreamHandler {
    downstream: Peer<RoleServer>,
    /// Upstream-side progress token → the client's token, for requests sent up.
    pub(crate) progress_up: ProgressRoutes,
    /// Client-side progress token → the upstream's token, for requests relayed down.
    pub(crate) progress_down: ProgressRoutes,
    client: ClientConfig,
}

impl UpstreamHandler {
    pub(crate) fn new(
        downstream: Peer<RoleServer>,
        progress_up: ProgressRoutes,
        progress_down: ProgressRoutes,
    ) -> Self {
        UpstreamHandler {
            downstream,
            progress_up,
            progress_down,
            client: ClientConfig::default(),
        }
    }

    fn with_client(mut self, client: ClientConfig) -> Self {
        self.client = client;
        self
    }
}

impl Service<RoleClient> for UpstreamHandler {
    async fn handle_request(
        &self,
        request: ServerRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<ClientResult, McpError> {
        // Sampling, elicitation, roots, pings and custom requests: the client answers.
        relay_request(
            &self.downstream,
            request,
            &context.meta,
            &context.ct,
            &self.progress_down,
        )
        .await
    }

    async fn handle_notification(
        &self,
        notification: ServerNotification,
        context: NotificationContext<RoleClient>,
    ) -> Result<(), McpError> {
        let mut notification = match notification {
            // rmcp already cancelled the relayed request's token, which cancels it downstream.
            ServerNotification::CancelledNotification(_) => return Ok(()),
            ServerNotification::ProgressNotification(mut progress) => {
                // Progress for a request that is no longer running (or never was) is dropped.
                let Some(original) = self.progress_up.original(&progress.params.progress_token)
                else {
                    return Ok(());
                };
                progress.params.progress_token = original;
                ServerNotification::ProgressNotification(progress)
            }
            other => other,
        };
        notification.get_meta_mut().extend(context.meta);
        self.downstream
            .send_notification(notification)
            .await
            .map_err(service_error)
    }

    fn get_info(&self) -> ClientConfig {
        self.client.clone()
    }
}

/// Sends `request` to `peer` with the original request's `_meta`, routes its progress back,
/// and cancels it when `cancelled` fires.
pub(crate) async fn relay_request<R: ServiceRole>(
    peer: &Peer<R>,
    request: R::Req,
    meta: &RequestMetaObject,
    cancelled: &CancellationToken,
    progress: &ProgressRoutes,
) -> Result<R::PeerResp, McpError> {
    let original_token = meta.get_progress_token();
    let mut meta = meta.clone();
    // rmcp sets a progress token of its own on every request; the route maps it back.
    meta.remove("progressToken");
    let options = PeerRequestOptions::no_options().with_meta(meta);
    let handle = peer
        .send_request_with_option(request, options)
        .await
        .map_err(service_error)?;
    let _route =
        original_token.map(|original| progress.route(handle.progress_token.clone(), original));
    let id = handle.id.clone();
    let response = handle.await_response();
    tokio::select! {
        response = response => response.map_err(service_error),
        () = cancelled.cancelled() => {
            let notification = CancelledNotification::new(CancelledNotificationParam::new(
                Some(id),
                Some("cancelled by the client".to_owned()),
            ));
            // Best effort: the peer may be gone already, and the caller is no longer waiting.
            let _ = peer.send_notification(notification.into()).await;
            Err(McpError::internal_error("request cancelled", None))
        }
    }
}

/// An MCP error for the client from a failure to reach the other side.
pub(crate) fn service_error(error: ServiceError) -> McpError {
    match error {
        ServiceError::McpError(error) => error,
        other => McpError::internal_error(format!("upstream: {other}"), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_needs_a_program() {
        assert!(matches!(
            UpstreamSpec::command(Vec::<String>::new()),
            Err(ProxyError::NoUpstream)
        ));
    }

    #[test]
    fn label_is_the_program_file_name() {
        let spec = UpstreamSpec::command(["/usr/bin/npx", "-y", "server"]).expect("spec");
        assert_eq!(spec.label(), "npx");
        assert_eq!(
            UpstreamSpec::Url("http://h/mcp".into()).label(),
            "http://h/mcp"
        );
    }

    #[test]
    fn url_label_hides_credentials_and_query() {
        let spec = UpstreamSpec::Url("https://user:s3cret@example.com:8443/mcp?token=abc".into());
        assert_eq!(spec.label(), "https://example.com:8443/mcp");
    }
}
