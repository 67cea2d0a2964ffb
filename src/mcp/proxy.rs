//! Running the proxy: options, the configuration watcher, and the stdio or HTTP front.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rmcp::service::ServerInitializeError;
use rmcp::transport::Transport;
use rmcp::{RoleServer, ServiceExt};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use super::backlog::Backlog;
use super::downstream::DownstreamStdio;
use super::error::ProxyError;
use super::http;
use super::lines::line_limit;
use super::relay::AsRelayed;
use super::server::{Loaded, ProxyServer, Shared};
use super::upstream::UpstreamSpec;
use crate::{Condenser, Config};

/// How long a child upstream gets to exit once its stdin is closed before it is killed.
const CHILD_EXIT_GRACE: Duration = Duration::from_secs(1);

/// How the proxy runs: the upstream, the configuration file and the client-facing transport.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ProxyOptions {
    /// The upstream MCP server.
    pub upstream: UpstreamSpec,
    /// The `condense.toml` to read, and to reload when it changes. Default: none (built-in
    /// defaults).
    pub config: Option<PathBuf>,
    /// Serve streamable HTTP on this address instead of stdio. Default: stdio.
    pub listen: Option<SocketAddr>,
    /// How often the configuration file is checked for changes. Default: 1 s.
    pub reload_interval: Duration,
    /// Serve HTTP on a non-loopback address without a token (`[proxy] auth_token_env`), as
    /// `[proxy] allow_unauthenticated` does. Default: false, the proxy refuses to start.
    pub allow_unauthenticated: bool,
}

impl ProxyOptions {
    /// Options for a proxy in front of `upstream`, over stdio, with built-in defaults.
    pub fn new(upstream: UpstreamSpec) -> Self {
        ProxyOptions {
            upstream,
            config: None,
            listen: None,
            reload_interval: Duration::from_secs(1),
            allow_unauthenticated: false,
        }
    }

    /// Reads (and watches) this configuration file.
    #[must_use]
    pub fn with_config(mut self, path: impl Into<PathBuf>) -> Self {
        self.config = Some(path.into());
        self
    }

    /// Serves streamable HTTP on `addr` (MCP on any path, health on `/health`).
    #[must_use]
    pub fn with_listen(mut self, addr: SocketAddr) -> Self {
        self.listen = Some(addr);
        self
    }

    /// Serves a non-loopback address even without a token; a warning is logged.
    #[must_use]
    pub fn with_allow_unauthenticated(mut self, allow: bool) -> Self {
        self.allow_unauthenticated = allow;
        self
    }

    /// Checks the configuration file for changes this often.
    #[must_use]
    pub fn with_reload_interval(mut self, interval: Duration) -> Self {
        self.reload_interval = interval;
        self
    }
}

/// Runs the proxy until the client disconnects (stdio), or until `SIGINT`/`SIGTERM`.
///
/// In stdio mode stdout carries the protocol: log to stderr only.
///
/// # Errors
///
/// A [`ProxyError`] when the configuration is invalid at start, the HTTP address cannot be
/// bound, or the client transport fails. A failing upstream is reported to the client as MCP
/// errors instead.
pub async fn run(options: ProxyOptions) -> Result<(), ProxyError> {
    let shutdown = CancellationToken::new();
    tokio::spawn(cancel_on_signal(shutdown.clone()));
    match options.listen {
        Some(addr) => {
            let listener = http::bind(addr).await?;
            serve_http(options, listener, shutdown).await
        }
        None => serve_stdio(options, shutdown).await,
    }
}

/// Serves HTTP on an already bound listener until `shutdown` fires: for callers that bind
/// port 0 and need the address first (tests, benches).
pub async fn serve_http(
    options: ProxyOptions,
    listener: tokio::net::TcpListener,
    shutdown: CancellationToken,
) -> Result<(), ProxyError> {
    let shared = shared(&options, &shutdown)?;
    http::serve(listener, shared, options.allow_unauthenticated, shutdown).await
}

/// The client-facing transport over this process's stdin and stdout, reading messages within
/// the line limit that `max_input_bytes` sets, and marking the client's notifications in
/// `backlog`.
fn stdio_transport(
    max_input_bytes: usize,
    backlog: Backlog,
) -> impl Transport<RoleServer, Error = std::io::Error> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let transport = DownstreamStdio::new(stdin, stdout, line_limit(max_input_bytes));
    AsRelayed::following(transport, backlog)
}

async fn serve_stdio(options: ProxyOptions, shutdown: CancellationToken) -> Result<(), ProxyError> {
    let shared = shared(&options, &shutdown)?;
    let max_input_bytes = shared
        .loaded
        .borrow()
        .engine
        .config()
        .limits
        .max_input_bytes;
    let server = ProxyServer::new(shared);
    let transport = stdio_transport(max_input_bytes, server.client_backlog());
    let running = match server
        .clone()
        .serve_with_ct(transport, shutdown.child_token())
        .await
    {
        Ok(running) => running,
        Err(error) => {
            server.close(CHILD_EXIT_GRACE).await;
            shutdown.cancel();
            // A stdio proxy serves one client: when its upstream cannot start, exiting with the
            // reason is what the client (and its log) shows best.
            return Err(match error {
                ServerInitializeError::InitializeFailed(error) => {
                    ProxyError::Initialize(error.message.into_owned())
                }
                other => ProxyError::Serve(other.to_string()),
            });
        }
    };
    let outcome = running.waiting().await;
    // The client left (stdin closed) or a signal came: stop the upstream before exiting so no
    // child process outlives the proxy.
    server.close(CHILD_EXIT_GRACE).await;
    shutdown.cancel();
    outcome
        .map(|_| ())
        .map_err(|error| ProxyError::Serve(error.to_string()))
}

fn shared(options: &ProxyOptions, shutdown: &CancellationToken) -> Result<Arc<Shared>, ProxyError> {
    let loaded = load(options.config.as_deref(), Vec::new())?;
    let (sender, receiver) = watch::channel(Arc::new(loaded));
    if let Some(path) = options.config.clone() {
        tokio::spawn(watch_config(
            path,
            options.reload_interval,
            sender,
            shutdown.clone(),
        ));
    }
    Ok(Arc::new(Shared {
        upstream: options.upstream.clone(),
        loaded: receiver,
    }))
}

/// How many earlier configurations keep answering retrievals after reloads.
const KEPT_CONDENSERS: usize = 3;

/// Reads the file (or the defaults) into the one `Config` and its engine. It touches the file
/// system (the config, the prompts directory), so the watcher runs it off the async runtime.
pub(super) fn load(path: Option<&Path>, previous: Vec<Condenser>) -> Result<Loaded, ProxyError> {
    let invalid = |message: String| ProxyError::Config {
        path: path.map(Path::to_path_buf).unwrap_or_default(),
        message,
    };
    let text = match path {
        // Only a regular file of bounded size, opened without blocking: a FIFO or a device put
        // in the file's place is an error, not a proxy that waits forever.
        Some(path) => {
            crate::config::read_regular_file(path).map_err(|error| invalid(error.to_string()))?
        }
        None => String::new(),
    };
    let origin = path.map_or_else(|| "defaults".to_owned(), |p| p.display().to_string());
    // The whole file, `[proxy]` included, is read and checked once, by the core's reader.
    let config =
        Config::from_toml_str_with_env(&text, &origin, std::env::vars()).map_err(|error| {
            // The engine's message starts with the file, which the proxy's error names already.
            let message = error.to_string();
            let prefix = format!("{origin}: ");
            invalid(message.strip_prefix(&prefix).unwrap_or(&message).to_owned())
        })?;
    let mut config = config;
    // Clients restart a stdio proxy per session: its originals outlive it on disk unless
    // `[store] backend` says otherwise.
    config
        .store
        .backend
        .get_or_insert(crate::config::StoreBackendKind::Disk);
    let engine = Condenser::new(config).map_err(|error| invalid(error.to_string()))?;
    Ok(Loaded { engine, previous })
}

/// The file's identity for change detection: modification time and length. `stat` never blocks
/// on a FIFO, so this is safe on the runtime.
fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

/// Reloads when the file changes; a bad edit is logged and the old configuration kept.
async fn watch_config(
    path: PathBuf,
    interval: Duration,
    sender: watch::Sender<Arc<Loaded>>,
    shutdown: CancellationToken,
) {
    // Polling keeps this portable and dependency-free; a one-second delay is fine for a file
    // edited by hand.
    let mut last = stamp(&path);
    let mut ticker = tokio::time::interval(interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = ticker.tick() => {}
            () = shutdown.cancelled() => return,
        }
        let now = stamp(&path);
        if now == last {
            continue;
        }
        last = now;
        let current = sender.borrow().clone();
        let mut previous = vec![current.engine.clone()];
        previous.extend(current.previous.iter().take(KEPT_CONDENSERS - 1).cloned());
        // Off the runtime: whatever the path now names, a slow or stuck file system must not
        // stall the threads that answer `/health`, MCP calls and signals.
        let reading = path.clone();
        let reloaded = tokio::task::spawn_blocking(move || load(Some(&reading), previous)).await;
        let Ok(reloaded) = reloaded else {
            tracing::warn!(
                "configuration not reloaded (the reader panicked); the previous one stays in force"
            );
            continue;
        };
        match reloaded {
            Ok(loaded) => {
                tracing::info!(path = %path.display(), "configuration reloaded");
                sender.send_replace(Arc::new(loaded));
            }
            Err(error) => {
                tracing::warn!(%error, "configuration not reloaded; the previous one stays in force");
            }
        }
    }
}

async fn cancel_on_signal(shutdown: CancellationToken) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut terminate) = signal(SignalKind::terminate()) else {
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = terminate.recv() => {}
            () = shutdown.cancelled() => return,
        }
    }
    #[cfg(not(unix))]
    {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            () = shutdown.cancelled() => return,
        }
    }
    tracing::info!("stopping on signal");
    shutdown.cancel();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bad_edit_keeps_previous_settings_and_good_edit_applies() {
        let dir = std::env::temp_dir().join(format!("condense-reload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join("condense.toml");
        std::fs::write(&path, "[defaults]\nthreshold_tokens = 111\n").expect("write");
        let (sender, receiver) =
            watch::channel(Arc::new(load(Some(&path), Vec::new()).expect("valid")));
        let shutdown = CancellationToken::new();
        let watcher = tokio::spawn(watch_config(
            path.clone(),
            Duration::from_millis(20),
            sender,
            shutdown.clone(),
        ));

        std::fs::write(&path, "[defaults]\nthreshold_tokens = \"oops\"\n").expect("write");
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert_eq!(
            receiver.borrow().engine.config().defaults.threshold_tokens,
            111
        );

        std::fs::write(&path, "[defaults]\nthreshold_tokens = 222\n").expect("write");
        let mut receiver = receiver;
        tokio::time::timeout(Duration::from_secs(5), async {
            while receiver.borrow().engine.config().defaults.threshold_tokens != 222 {
                receiver.changed().await.expect("sender alive");
            }
        })
        .await
        .expect("reloaded in time");
        shutdown.cancel();
        watcher.await.expect("watcher ends");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
