//! Serving the proxy over streamable HTTP, with a health endpoint beside it.
//!
//! What keeps it safe to expose: a cap on sessions and an idle timeout ([`sessions`]), a
//! bearer token and browser-origin checks ([`access`]), and read deadlines ([`timeout`]). The
//! `[proxy]` keys that set them are read once, when the server starts; a reload that changes
//! one logs a warning naming it.

mod access;
mod sessions;
mod tasks;
mod timeout;

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::Service;

use self::access::Access;
use self::sessions::SessionLimit;
use self::timeout::{Activity, TimedBody};
use super::error::ProxyError;
use super::server::{ProxyServer, Shared};
use crate::ProxyConfig;

/// How long the server waits after a failed `accept` before trying again.
const ACCEPT_ERROR_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// The path of the health endpoint.
pub(crate) const HEALTH_PATH: &str = "/health";

/// The header that names an existing MCP session.
const SESSION_HEADER: &str = "mcp-session-id";

type HttpResponse = Response<BoxBody<Bytes, Infallible>>;

/// Binds `addr`; the returned listener's local address is the one to announce.
pub(crate) async fn bind(addr: SocketAddr) -> Result<TcpListener, ProxyError> {
    TcpListener::bind(addr)
        .await
        .map_err(|source| ProxyError::Listen {
            addr: addr.to_string(),
            source,
        })
}

/// Serves MCP on every path but [`HEALTH_PATH`] until `shutdown` fires.
///
/// # Errors
///
/// [`ProxyError::Unprotected`] for a non-loopback address with no token and no
/// `allow_unauthenticated`, [`ProxyError::AuthToken`] when the token's variable is unset.
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    allow_unauthenticated: bool,
    shutdown: CancellationToken,
) -> Result<(), ProxyError> {
    let local = listener.local_addr().map_err(|source| ProxyError::Listen {
        addr: "listener".into(),
        source,
    })?;
    let settings = shared.loaded.borrow().engine.config().proxy.clone();
    let access = Arc::new(Access::new(&settings, local, allow_unauthenticated)?);
    let sessions = Arc::new(SessionLimit::new(
        settings.max_sessions,
        settings.session_idle_timeout,
    ));
    tokio::spawn(sessions.clone().close_idle(shutdown.clone()));
    tokio::spawn(warn_when_start_keys_change(
        shared.loaded.clone(),
        shutdown.clone(),
    ));
    let upstream_label = shared.upstream.label();
    let mcp = StreamableHttpService::new(
        move || Ok(ProxyServer::for_http_session(shared.clone())),
        sessions.clone(),
        server_config(local, &settings, access.requires_token(), &shutdown),
    );
    tracing::info!(
        %local,
        max_sessions = settings.max_sessions,
        "serving MCP over streamable HTTP"
    );
    let read_timeout = settings.read_timeout;
    loop {
        let (stream, _peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Per-connection failures (e.g. too many open files) must not stop the
                    // server. Out of descriptors, accept fails again at once until one is freed:
                    // a short pause keeps that from spinning a core and flooding the log.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                    continue;
                }
            },
            () = shutdown.cancelled() => return Ok(()),
        };
        let _ = stream.set_nodelay(true);
        let activity = Activity::default();
        let service = {
            let (mcp, access, sessions) = (mcp.clone(), access.clone(), sessions.clone());
            let (upstream_label, activity) = (upstream_label.clone(), activity.clone());
            hyper::service::service_fn(move |request: Request<Incoming>| {
                let in_flight = activity.started();
                let mut mcp = mcp.clone();
                let admitted = admit(&request, &access, &sessions, &upstream_label);
                let ending_session = request.method() == Method::DELETE;
                async move {
                    let request = request.map(|body| TimedBody::new(body, read_timeout));
                    let mut response = match admitted {
                        Admitted::No(response) => response,
                        admitted => match tasks::from_client(request).await {
                            Err(refused) => refused,
                            Ok(request) => {
                                let response = match admitted {
                                    Admitted::WithPlace(place) => {
                                        SessionLimit::holding(place, mcp.call(request)).await?
                                    }
                                    _ => mcp.call(request).await?,
                                };
                                tasks::to_client(response).await
                            }
                        },
                    };
                    // rmcp answers a session's DELETE 202; the TypeScript and Python SDK servers
                    // (the upstreams a client knows) answer 200, and so does the proxy.
                    if ending_session && response.status() == StatusCode::ACCEPTED {
                        *response.status_mut() = StatusCode::OK;
                    }
                    // The request is in progress until its response is sent whole.
                    let response = response.map(|body| {
                        body.map_frame(move |frame| {
                            let _ = &in_flight;
                            frame
                        })
                        .boxed()
                    });
                    Ok::<_, Infallible>(response)
                }
            })
        };
        let connection_shutdown = shutdown.clone();
        tokio::spawn(async move {
            let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            builder
                .http1()
                .timer(TokioTimer::new())
                .header_read_timeout(read_timeout);
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                result = connection => {
                    if let Err(error) = result {
                        tracing::debug!(%error, "HTTP connection ended with an error");
                    }
                }
                () = activity.idle(read_timeout) => {
                    tracing::debug!("closed an HTTP connection that sent no request in time");
                }
                () = connection_shutdown.cancelled() => {}
            }
        });
    }
}

/// The `[proxy]` keys the HTTP server reads once, when it starts. The token itself comes from
/// the process's environment, which a reload of the file cannot change, and the `Origin` and
/// `Host` checks are rmcp's, set when its service is made: a change to any of these takes
/// effect when the proxy restarts, and a reload that makes one says so.
const START_KEYS: [(&str, SameKey); 6] = [
    ("auth_token_env", |a, b| {
        a.auth_token_env == b.auth_token_env
    }),
    ("allowed_origins", |a, b| {
        a.allowed_origins == b.allowed_origins
    }),
    ("allow_unauthenticated", |a, b| {
        a.allow_unauthenticated == b.allow_unauthenticated
    }),
    ("max_sessions", |a, b| a.max_sessions == b.max_sessions),
    ("session_idle_timeout_ms", |a, b| {
        a.session_idle_timeout == b.session_idle_timeout
    }),
    ("read_timeout_ms", |a, b| a.read_timeout == b.read_timeout),
];

/// Whether a key has the same value in both settings.
type SameKey = fn(&ProxyConfig, &ProxyConfig) -> bool;

/// The [`START_KEYS`] whose values differ between `started` and `now`.
fn changed_start_keys(started: &ProxyConfig, now: &ProxyConfig) -> Vec<&'static str> {
    START_KEYS
        .iter()
        .filter(|(_, same)| !same(started, now))
        .map(|(name, _)| *name)
        .collect()
}

/// Logs a warning for each reload that changes a key read only at start.
async fn warn_when_start_keys_change(
    mut loaded: tokio::sync::watch::Receiver<Arc<super::server::Loaded>>,
    shutdown: CancellationToken,
) {
    let started = loaded.borrow_and_update().engine.config().proxy.clone();
    loop {
        tokio::select! {
            changed = loaded.changed() => if changed.is_err() { return },
            () = shutdown.cancelled() => return,
        }
        let now = loaded.borrow_and_update().engine.config().proxy.clone();
        let changed = changed_start_keys(&started, &now);
        if !changed.is_empty() {
            tracing::warn!(
                keys = %changed.join(", "),
                "reloaded [proxy] keys the HTTP server reads at start: they take effect when the \
                 proxy restarts (the token is read from the environment then)"
            );
        }
    }
}

/// rmcp's server settings: the shutdown token, and the `Host` and `Origin` checks against
/// DNS rebinding and cross-site requests.
fn server_config(
    local: SocketAddr,
    settings: &ProxyConfig,
    token_required: bool,
    shutdown: &CancellationToken,
) -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(tasks::MAX_REQUEST_BODY_BYTES);
    config.cancellation_token = shutdown.child_token();
    // rmcp accepts loopback Host headers only; a proxy bound to another address must also
    // accept that address.
    let mut allowed_hosts = config.allowed_hosts.clone();
    allowed_hosts.push(local.ip().to_string());
    allowed_hosts.push(local.to_string());
    let config = config
        .with_allowed_hosts(allowed_hosts)
        .with_allowed_origins(access::allowed_origins(settings))
        .enforce_origin_validation();
    // The Host check keeps a rebound DNS name from reaching an open proxy; with a token, the
    // page behind such a name has no token to send (and its `Origin` is refused anyway), while
    // the check would turn away clients that name the machine (`0.0.0.0`, a DNS name).
    if token_required {
        config.disable_allowed_hosts()
    } else {
        config
    }
}

/// Whether rmcp gets the request, and with what.
enum Admitted {
    /// No: the proxy answers itself.
    No(HttpResponse),
    /// Yes, within an existing session (or none).
    Yes,
    /// Yes, with a place under the session cap for the session it may open.
    WithPlace(sessions::Place),
}

/// Answers health, a missing token, and a new session over the cap before rmcp sees the
/// request.
fn admit(
    request: &Request<Incoming>,
    access: &Access,
    sessions: &SessionLimit,
    upstream_label: &str,
) -> Admitted {
    if request.uri().path() == HEALTH_PATH {
        return Admitted::No(health(upstream_label));
    }
    if !access.admits(request.headers()) {
        return Admitted::No(access::unauthorized());
    }
    // A POST without a session may start one (an `initialize`).
    let opens_session =
        request.method() == Method::POST && !request.headers().contains_key(SESSION_HEADER);
    if !opens_session {
        return Admitted::Yes;
    }
    match sessions.reserve() {
        Some(place) => Admitted::WithPlace(place),
        None => {
            tracing::warn!(
                max_sessions = sessions.max(),
                "refused a new MCP session: the session limit is reached"
            );
            Admitted::No(sessions_full(sessions.max()))
        }
    }
}

/// A JSON-RPC error in a 503: the client's `initialize` fails with a message it can show.
fn sessions_full(max: usize) -> HttpResponse {
    let body = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": {"code": -32000, "message": sessions::full_message(max)},
    });
    json_response(StatusCode::SERVICE_UNAVAILABLE, &body)
}

fn health(upstream: &str) -> HttpResponse {
    let body = serde_json::json!({
        "status": "ok",
        "service": "condense",
        "version": env!("CARGO_PKG_VERSION"),
        "upstream": upstream,
    });
    json_response(StatusCode::OK, &body)
}

fn json_response(status: StatusCode, body: &serde_json::Value) -> HttpResponse {
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reload_names_the_start_keys_it_changed() {
        let started = ProxyConfig::default();
        assert!(changed_start_keys(&started, &started.clone()).is_empty());
        let now = ProxyConfig {
            auth_token_env: Some("CONDENSE_TOKEN".into()),
            read_timeout: started.read_timeout * 2,
            query_argument_name: "question".into(),
            ..started.clone()
        };
        assert_eq!(
            changed_start_keys(&started, &now),
            ["auth_token_env", "read_timeout_ms"]
        );
    }
}
