//! Serving the proxy over streamable HTTP, with a health endpoint beside it.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::Service;

use super::error::ProxyError;
use super::server::{ProxyServer, Shared};

/// How long the server waits after a failed `accept` before trying again.
const ACCEPT_ERROR_PAUSE: std::time::Duration = std::time::Duration::from_millis(50);

/// The path of the health endpoint.
pub(crate) const HEALTH_PATH: &str = "/health";

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
pub(crate) async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
) -> Result<(), ProxyError> {
    let local = listener.local_addr().map_err(|source| ProxyError::Listen {
        addr: "listener".into(),
        source,
    })?;
    let mut config = StreamableHttpServerConfig::default();
    config.cancellation_token = shutdown.child_token();
    // rmcp accepts loopback Host headers only (against DNS rebinding); a proxy bound to another
    // address must also accept that address.
    let mut allowed_hosts = config.allowed_hosts.clone();
    allowed_hosts.push(local.ip().to_string());
    allowed_hosts.push(local.to_string());
    let config = config.with_allowed_hosts(allowed_hosts);
    let upstream_label = shared.upstream.label();
    let mcp = StreamableHttpService::new(
        move || Ok(ProxyServer::new(shared.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    tracing::info!(%local, "serving MCP over streamable HTTP");
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
        let mcp = mcp.clone();
        let upstream_label = upstream_label.clone();
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let mut mcp = mcp.clone();
            let upstream_label = upstream_label.clone();
            async move {
                if request.uri().path() == HEALTH_PATH {
                    Ok::<_, Infallible>(health(&upstream_label))
                } else {
                    mcp.call(request).await
                }
            }
        });
        let connection_shutdown = shutdown.clone();
        tokio::spawn(async move {
            let builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
            let connection = builder.serve_connection(TokioIo::new(stream), service);
            tokio::select! {
                result = connection => {
                    if let Err(error) = result {
                        tracing::debug!(%error, "HTTP connection ended with an error");
                    }
                }
                () = connection_shutdown.cancelled() => {}
            }
        });
    }
}

fn health(upstream: &str) -> Response<BoxBody<Bytes, Infallible>> {
    let body = serde_json::json!({
        "status": "ok",
        "service": "condense",
        "version": env!("CARGO_PKG_VERSION"),
        "upstream": upstream,
    });
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())).boxed());
    *response.status_mut() = StatusCode::OK;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        header::HeaderValue::from_static("application/json"),
    );
    response
}
