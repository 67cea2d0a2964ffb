//! The upstream MCP server: a child process over stdio or a streamable-HTTP endpoint, and the
//! client-side handler that relays its requests and notifications to the downstream client.

use std::ffi::OsString;
use std::process::{ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    ClientConfig, ClientResult, ErrorData as McpError, GetMeta, ProtocolVersion,
    ServerNotification, ServerRequest, ToolListChangedNotification,
};
use rmcp::service::{
    ClientInitializeError, NotificationContext, RequestContext, RunningService, ServiceError,
};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{Peer, RoleClient, RoleServer, Service, ServiceExt};
use tokio::process::Child;
use tokio::sync::{oneshot, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::error::ProxyError;
use super::lines::line_limit;
use super::outbox::{NOTIFICATION_QUEUE, Outbox};
use super::relay::{AsRelayed, RelayError, RelayPath, relay_request};
use super::stdio::StdioTransport;
use super::upstream_http::TasksHttpClient;

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

    /// What a lost connection may have been, beyond the upstream's own doing: over HTTP, an
    /// event larger than the proxy reads (`max_input_bytes` sets it) ends its response stream,
    /// and rmcp reports that as a closed connection without the cause; a child's message of
    /// that size is named as such by the stdio transport.
    pub(crate) fn lost_hint(&self, max_input_bytes: usize) -> Option<String> {
        const MIB: f64 = 1024.0 * 1024.0;
        match self {
            UpstreamSpec::Command { .. } => None,
            UpstreamSpec::Url(_) => Some(format!(
                "; an answer event over {:.1} MiB, the most the proxy reads in one message (twice \
                 `[limits] max_input_bytes`, at least 16 MiB), ends it so: if the tool returns \
                 that much, raise `[limits] max_input_bytes` or ask the tool for less",
                line_limit(max_input_bytes) as f64 / MIB
            )),
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

/// A running MCP session with the upstream server.
pub(crate) type UpstreamConnection = RunningService<RoleClient, UpstreamHandler>;

/// The newest protocol version the proxy speaks on both sides.
///
/// The upstream connection uses the `initialize` handshake; later revisions replaced it with
/// per-request metadata and moved subscriptions and pings, which a relay cannot translate to an
/// older upstream. Clients that ask for a later version negotiate down to this one.
pub(crate) const NEWEST_RELAYED_VERSION: ProtocolVersion = ProtocolVersion::LATEST_WITH_INITIALIZE;

/// How long to wait for a child's exit status once its connection closed: the status says
/// more than "connection closed", and usually arrives within milliseconds.
const EXIT_STATUS_WAIT: Duration = Duration::from_secs(1);

/// Why the upstream server could not be started.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    /// The command could not be run at all.
    #[error("could not run `{program}`: {source}")]
    Spawn {
        /// The program as given.
        program: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The process exited before the handshake completed.
    #[error("it exited ({0}) before completing the MCP handshake")]
    ExitedAtStart(ExitStatus),
    /// The handshake failed for another reason.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// The handshake did not complete in time.
    #[error("it did not complete the MCP handshake within {} ms", .0.as_millis())]
    HandshakeTimeout(Duration),
}

/// How a connection to the upstream ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Ending {
    /// The child process exited, or was killed by a signal.
    Exited(ExitStatus),
    /// The connection closed while the process (if any) kept running; the process is stopped.
    Closed,
}

impl std::fmt::Display for Ending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Ending::Exited(status) => write!(f, "exited ({status})"),
            Ending::Closed => f.write_str("closed the connection"),
        }
    }
}

/// A child process's exit, as seen by its watcher.
#[derive(Debug, Clone, Copy)]
struct Exit {
    status: ExitStatus,
    at: Instant,
}

/// What tells whether a connection is still alive: its peer and, for a child process, the
/// process's exit. Cheap to clone, so a request can check the connection it used.
#[derive(Debug, Clone)]
pub(crate) struct Vitals {
    /// The peer to send requests to.
    pub(crate) peer: Peer<RoleClient>,
    exit: Option<watch::Receiver<Option<Exit>>>,
}

impl Vitals {
    fn exit(&self) -> Option<Exit> {
        self.exit.as_ref().and_then(|exit| *exit.borrow())
    }

    /// How the connection ended, or `None` while it is alive.
    pub(crate) async fn ending(&self) -> Option<(Ending, Instant)> {
        if let Some(exit) = self.exit() {
            return Some((Ending::Exited(exit.status), exit.at));
        }
        if !self.peer.is_transport_closed() {
            return None;
        }
        Some(self.ending_after_failure().await)
    }

    /// How the connection ended, once a request on it failed at the transport: the child's
    /// exit status if it exits within a second, else [`Ending::Closed`].
    pub(crate) async fn ending_after_failure(&self) -> (Ending, Instant) {
        if let Some(exit) = &self.exit {
            let mut exit = exit.clone();
            if let Ok(Ok(seen)) =
                tokio::time::timeout(EXIT_STATUS_WAIT, exit.wait_for(Option::is_some)).await
                && let Some(exit) = *seen
            {
                return (Ending::Exited(exit.status), exit.at);
            }
        }
        (Ending::Closed, Instant::now())
    }
}

/// A child process running the upstream server, watched by a task that records its exit.
#[derive(Debug)]
struct ChildProcess {
    exit: watch::Receiver<Option<Exit>>,
    /// Dropping it (with the connection) kills the process if it still runs.
    _kill: oneshot::Sender<()>,
    /// Set when the proxy stops the process on purpose: its exit is then no crash.
    stopping: Arc<AtomicBool>,
}

impl ChildProcess {
    fn watch(mut child: Child, label: String, connection: CancellationToken) -> Self {
        let (exit_sender, exit) = watch::channel(None);
        let (kill, killed) = oneshot::channel::<()>();
        let stopping = Arc::new(AtomicBool::new(false));
        let stopping_seen = stopping.clone();
        let pid = child.id();
        tokio::spawn(async move {
            let status = tokio::select! {
                status = child.wait() => status,
                _ = killed => {
                    stopping_seen.store(true, Ordering::Relaxed);
                    let _ = child.start_kill();
                    child.wait().await
                }
            };
            // Requests still waiting on this process fail now, even when a process it started
            // keeps its stdout open.
            connection.cancel();
            match status {
                Ok(status) => {
                    if stopping_seen.load(Ordering::Relaxed) {
                        tracing::debug!(upstream = %label, pid, %status, "the upstream MCP server stopped");
                    } else {
                        tracing::warn!(upstream = %label, pid, %status, "the upstream MCP server exited");
                    }
                    exit_sender.send_replace(Some(Exit {
                        status,
                        at: Instant::now(),
                    }));
                }
                Err(error) => {
                    tracing::warn!(upstream = %label, pid, %error, "could not wait for the upstream MCP server's process");
                }
            }
        });
        ChildProcess {
            exit,
            _kill: kill,
            stopping,
        }
    }
}

/// A connection to the upstream server: the MCP session and, for a command, its process.
#[derive(Debug)]
pub(crate) struct Connection {
    service: UpstreamConnection,
    process: Option<ChildProcess>,
    started: Instant,
}

impl Connection {
    /// The peer and exit watch of this connection.
    pub(crate) fn vitals(&self) -> Vitals {
        Vitals {
            peer: self.service.peer().clone(),
            exit: self.process.as_ref().map(|process| process.exit.clone()),
        }
    }

    /// When the handshake completed.
    pub(crate) fn started(&self) -> Instant {
        self.started
    }

    /// Ends the session: closes the child's stdin, gives it `grace` to exit, then kills it.
    pub(crate) async fn close(mut self, grace: Duration) {
        if let Some(process) = &self.process {
            process.stopping.store(true, Ordering::Relaxed);
        }
        let _ = self.service.close_with_timeout(grace).await;
        if let Some(process) = self.process.take() {
            let mut exit = process.exit.clone();
            let _ = tokio::time::timeout(grace, exit.wait_for(Option::is_some)).await;
            // Dropping `process` kills a child that is still running.
        }
    }
}

/// Connects to the upstream, introducing the downstream client (its capabilities, so the
/// upstream only asks for sampling, roots or elicitation when the client offers them).
///
/// `handshake_timeout` bounds the wait for the server's `initialize` answer.
pub(crate) async fn connect(
    spec: &UpstreamSpec,
    mut client: ClientConfig,
    handler: UpstreamHandler,
    handshake_timeout: Option<Duration>,
) -> Result<Connection, StartError> {
    if client.protocol_version.as_str() > NEWEST_RELAYED_VERSION.as_str() {
        client.protocol_version = NEWEST_RELAYED_VERSION;
    }
    let handler = handler.with_client(client);
    let session = CancellationToken::new();
    let (handshake, process) = match spec {
        UpstreamSpec::Command { program, args } => {
            let mut command = tokio::process::Command::new(program);
            command
                .args(args)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .kill_on_drop(true);
            let spawn_error = |source| StartError::Spawn {
                program: program.to_string_lossy().into_owned(),
                source,
            };
            let mut child = command.spawn().map_err(spawn_error)?;
            let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
                return Err(spawn_error(std::io::Error::other("no pipes to its stdio")));
            };
            let process = ChildProcess::watch(child, spec.label(), session.clone());
            let transport = StdioTransport::new(stdout, stdin, handler.max_message_bytes);
            let transport = AsRelayed::following(transport, handler.upward.backlog.clone());
            let handshake = handler.serve_with_ct(transport, session.clone());
            (bounded(handshake, handshake_timeout).await, Some(process))
        }
        UpstreamSpec::Url(url) => {
            let config = StreamableHttpClientTransportConfig::with_uri(url.as_str())
                .max_sse_event_size(handler.max_message_bytes);
            let client = TasksHttpClient::new().map_err(|error| {
                StartError::Handshake(format!("could not set up the HTTP client: {error}"))
            })?;
            let transport = StreamableHttpClientTransport::with_client(client, config);
            let transport = AsRelayed::following(transport, handler.upward.backlog.clone());
            let handshake = handler.serve_with_ct(transport, session.clone());
            (bounded(handshake, handshake_timeout).await, None)
        }
    };
    let failed = match handshake {
        Ok(Ok(service)) => {
            return Ok(Connection {
                service,
                process,
                started: Instant::now(),
            });
        }
        Ok(Err(error)) => StartError::Handshake(describe_handshake_error(&error)),
        Err(timeout) => StartError::HandshakeTimeout(timeout),
    };
    session.cancel();
    // A process that exited explains the failure better than the handshake error.
    if let Some(process) = &process {
        let mut exit = process.exit.clone();
        if let Ok(Ok(seen)) =
            tokio::time::timeout(EXIT_STATUS_WAIT, exit.wait_for(Option::is_some)).await
            && let Some(exit) = *seen
        {
            return Err(StartError::ExitedAtStart(exit.status));
        }
    }
    Err(failed)
}

/// A handshake failure in the user's terms: the transport's own error and its causes, without
/// rmcp's type names, and without credentials in any URL.
fn describe_handshake_error(error: &ClientInitializeError) -> String {
    let text = match error {
        ClientInitializeError::TransportError { error, .. } => error_chain(error.error.as_ref()),
        ClientInitializeError::ConnectionClosed(_) => {
            "the connection closed during the handshake".to_owned()
        }
        other => other.to_string(),
    };
    redact_urls(&text)
}

pub(super) use crate::error::error_chain;

async fn bounded<F: std::future::Future>(
    future: F,
    timeout: Option<Duration>,
) -> Result<F::Output, Duration> {
    match timeout {
        Some(timeout) => tokio::time::timeout(timeout, future)
            .await
            .map_err(|_| timeout),
        None => Ok(future.await),
    }
}

/// `text` with every URL in it reduced to scheme, host and path: transport errors quote the
/// URL they failed on, which may carry credentials or a token in its query.
pub(crate) fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(found) = rest.find("://") {
        let start = rest[..found]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .map_or(0, |index| index + 1);
        let end = rest[found..]
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '"' | '\'' | '>' | ','))
            .map_or(rest.len(), |index| found + index);
        out.push_str(&rest[..start]);
        out.push_str(&redact_url(&rest[start..end]));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// The client side of the proxy: answers the upstream's requests by asking the downstream
/// client, and relays its notifications.
#[derive(Debug, Clone)]
pub(crate) struct UpstreamHandler {
    downstream: Peer<RoleServer>,
    /// Notifications on their way to the client: bounded, so a flood never blocks the
    /// upstream's reader nor grows the proxy.
    outbox: Outbox,
    /// Requests sent up: upstream-side progress token → the client's token, and the
    /// upstream's notifications on their way to the client.
    upward: RelayPath,
    /// Requests relayed down: client-side progress token → the upstream's token, and the
    /// client's notifications on their way to the upstream.
    downward: RelayPath,
    client: ClientConfig,
    /// The longest message read from the upstream, from `[limits] max_input_bytes`.
    max_message_bytes: usize,
}

impl UpstreamHandler {
    /// A handler that relays to `downstream` and reads results of up to `max_input_bytes`
    /// (`[limits] max_input_bytes`) from the upstream.
    pub(crate) fn new(
        downstream: Peer<RoleServer>,
        upward: RelayPath,
        downward: RelayPath,
        max_input_bytes: usize,
    ) -> Self {
        UpstreamHandler {
            outbox: Outbox::start(
                downstream.clone(),
                NOTIFICATION_QUEUE,
                upward.backlog.clone(),
            ),
            downstream,
            upward,
            downward,
            client: ClientConfig::default(),
            max_message_bytes: line_limit(max_input_bytes),
        }
    }

    fn with_client(mut self, client: ClientConfig) -> Self {
        self.client = client;
        self
    }

    /// Tells the downstream client that the tool list may have changed.
    pub(crate) async fn notify_tools_changed(&self) -> Result<(), ServiceError> {
        self.downstream
            .send_notification(ServerNotification::ToolListChangedNotification(
                ToolListChangedNotification::default(),
            ))
            .await
    }
}

impl Service<RoleClient> for UpstreamHandler {
    async fn handle_request(
        &self,
        request: ServerRequest,
        context: RequestContext<RoleClient>,
    ) -> Result<ClientResult, McpError> {
        // Sampling, elicitation, roots, pings and custom requests: the client answers.
        // The client's own timeouts apply to what it is asked.
        relay_request(
            &self.downstream,
            request,
            &context.meta,
            &context.ct,
            &self.downward,
            None,
        )
        .await
        .map_err(RelayError::into_mcp)
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
                let Some(original) = self
                    .upward
                    .progress
                    .original(&progress.params.progress_token)
                else {
                    return Ok(());
                };
                progress.params.progress_token = original;
                ServerNotification::ProgressNotification(progress)
            }
            other => other,
        };
        notification.get_meta_mut().extend(context.meta);
        self.outbox.push(notification);
        Ok(())
    }

    fn get_info(&self) -> ClientConfig {
        self.client.clone()
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
    fn a_lost_http_connection_names_the_event_limit() {
        let url = UpstreamSpec::Url("http://h/mcp".into());
        let hint = url.lost_hint(4 << 20).expect("over HTTP");
        assert!(hint.contains("over 16.0 MiB"), "{hint}");
        assert!(hint.contains("[limits] max_input_bytes"), "{hint}");
        let command = UpstreamSpec::command(["server"]).expect("spec");
        assert_eq!(command.lost_hint(4 << 20), None);
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
    fn urls_in_error_text_lose_credentials_and_query() {
        let text = "error sending request for url (https://u:pw@h.example/mcp?key=k1), retry: see http://x/y";
        assert_eq!(
            redact_urls(text),
            "error sending request for url (https://h.example/mcp), retry: see http://x/y"
        );
        assert_eq!(redact_urls("no url here"), "no url here");
    }

    #[test]
    fn url_label_hides_credentials_and_query() {
        let spec = UpstreamSpec::Url("https://user:s3cret@example.com:8443/mcp?token=abc".into());
        assert_eq!(spec.label(), "https://example.com:8443/mcp");
    }
}
