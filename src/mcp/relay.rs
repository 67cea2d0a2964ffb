//! Relaying one request to the other side of the proxy, in either direction: its `_meta`, its
//! progress, its cancellation and its timeout travel with it, and its answer goes back after
//! the notifications the other side sent before it.

use std::future::Future;
use std::time::Duration;

use rmcp::Peer;
use rmcp::model::{
    CancelledNotification, CancelledNotificationParam, ErrorData as McpError, GetExtensions,
    GetMeta, JsonRpcMessage, RequestMetaObject,
};
use rmcp::service::{
    PeerRequestOptions, RxJsonRpcMessage, ServiceError, ServiceRole, TxJsonRpcMessage,
};
use rmcp::transport::Transport;
use tokio_util::sync::CancellationToken;

use super::backlog::Backlog;
use super::progress::ProgressRoutes;
use super::upstream::{error_chain, redact_urls};

/// Why a relayed request got no answer from the other side.
#[derive(Debug)]
pub(crate) enum RelayError {
    /// The other side answered with an error: relayed as it is.
    Answered(McpError),
    /// The connection failed before an answer came (closed, or the request could not be sent).
    ConnectionLost(String),
    /// No answer within the timeout; the request was cancelled on the other side.
    Timeout(Duration),
    /// The caller's client cancelled the request; the cancellation was relayed.
    Cancelled,
}

impl RelayError {
    /// The MCP error for a peer that needs no more detail than the failure itself.
    pub(crate) fn into_mcp(self) -> McpError {
        match self {
            RelayError::Answered(error) => error,
            RelayError::ConnectionLost(reason) => {
                McpError::internal_error(format!("the connection was lost: {reason}"), None)
            }
            RelayError::Timeout(timeout) => McpError::internal_error(
                format!("no answer within {} ms", timeout.as_millis()),
                None,
            ),
            RelayError::Cancelled => McpError::internal_error("request cancelled", None),
        }
    }
}

impl From<ServiceError> for RelayError {
    fn from(error: ServiceError) -> Self {
        match error {
            ServiceError::McpError(error) => RelayError::Answered(error),
            ServiceError::Timeout { timeout } => RelayError::Timeout(timeout),
            ServiceError::TransportClosed => RelayError::ConnectionLost("closed".to_owned()),
            ServiceError::TransportSend(error) => {
                RelayError::ConnectionLost(redact_urls(&error_chain(error.error.as_ref())))
            }
            other => RelayError::Answered(McpError::internal_error(
                redact_urls(&other.to_string()),
                None,
            )),
        }
    }
}

/// What a session keeps for the requests it relays in one direction.
#[derive(Debug, Clone, Default)]
pub(crate) struct RelayPath {
    /// The progress routes of the requests under way.
    pub(crate) progress: ProgressRoutes,
    /// The notifications from the side that answers, read and not yet passed on.
    pub(crate) backlog: Backlog,
}

/// Sends `request` to `peer` with the original request's `_meta`, routes its progress back,
/// cancels it when `cancelled` fires, and, after `timeout` without an answer or a progress
/// update, cancels it on the peer's side. The answer is returned once the notifications the
/// peer sent before it are passed on (see [`Backlog`]), its progress route kept until then.
pub(crate) async fn relay_request<R: ServiceRole>(
    peer: &Peer<R>,
    request: R::Req,
    meta: &RequestMetaObject,
    cancelled: &CancellationToken,
    path: &RelayPath,
    timeout: Option<Duration>,
) -> Result<R::PeerResp, RelayError> {
    let original_token = meta.get_progress_token();
    let mut meta = meta.clone();
    // rmcp sets a progress token of its own on every request; the route maps it back.
    meta.remove("progressToken");
    let mut request = request;
    if original_token.is_none() && timeout.is_none() {
        // Nobody asked for progress: [`AsRelayed`] takes rmcp's token off the wire. Under a
        // timeout the token stays: the other side's progress on it keeps a long call alive.
        request.extensions_mut().insert(WithoutProgressToken);
    }
    let mut options = PeerRequestOptions::no_options().with_meta(meta);
    // rmcp sends `notifications/cancelled` to the peer when the timeout fires.
    options.timeout = timeout;
    // A long request that reports progress is alive: each update starts the timeout again.
    options.reset_timeout_on_progress = timeout.is_some();
    let handle = peer.send_request_with_option(request, options).await?;
    let _route =
        original_token.map(|original| path.progress.route(handle.progress_token.clone(), original));
    let id = handle.id.clone();
    let response = handle.await_response();
    tokio::select! {
        response = response => {
            // The peer's last progress update may still be in its handler or the outbox.
            path.backlog.settle().await;
            Ok(response?)
        }
        () = cancelled.cancelled() => {
            let notification = CancelledNotification::new(CancelledNotificationParam::new(
                Some(id),
                Some("cancelled by the client".to_owned()),
            ));
            // Best effort: the peer may be gone already, and the caller is no longer waiting.
            let _ = peer.send_notification(notification.into()).await;
            Err(RelayError::Cancelled)
        }
    }
}

/// Marks a relayed request whose original carried no progress token (a request extension,
/// never serialized).
#[derive(Debug, Clone, Copy)]
struct WithoutProgressToken;

/// A transport that sends relayed requests as their originals were: rmcp gives every request
/// it sends a `_meta.progressToken`, which [`relay_request`] cannot refuse; this removes it
/// from requests marked [`WithoutProgressToken`] (and the `_meta` it leaves empty), so the
/// other side sees no `_meta` the original did not have.
///
/// Given a [`Backlog`], it also marks every notification it reads, so that answers read after
/// it wait until it is passed on.
#[derive(Debug)]
pub(crate) struct AsRelayed<T> {
    transport: T,
    backlog: Option<Backlog>,
}

impl<T> AsRelayed<T> {
    /// Wraps `transport`, following no notifications: over HTTP, each client message comes in
    /// a request of its own, in no order that a backlog could keep.
    pub(crate) fn new(transport: T) -> Self {
        AsRelayed {
            transport,
            backlog: None,
        }
    }

    /// Wraps `transport`, marking the notifications it reads in `backlog`.
    pub(crate) fn following(transport: T, backlog: Backlog) -> Self {
        AsRelayed {
            transport,
            backlog: Some(backlog),
        }
    }
}

impl<R: ServiceRole, T: Transport<R>> Transport<R> for AsRelayed<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        mut item: TxJsonRpcMessage<R>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &mut item
            && request
                .request
                .extensions()
                .get::<WithoutProgressToken>()
                .is_some()
        {
            let relayed = &mut request.request;
            relayed.get_meta_mut().remove("progressToken");
            if relayed.get_meta().is_empty() {
                // An empty map would still go out as `"_meta": {}`.
                relayed.extensions_mut().remove::<RequestMetaObject>();
            }
        }
        self.transport.send(item)
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<R>>> + Send {
        let AsRelayed { transport, backlog } = self;
        async move {
            let mut message = transport.receive().await?;
            // Counted before rmcp reads the next message: an answer read later finds it counted.
            if let (Some(backlog), JsonRpcMessage::Notification(notification)) =
                (backlog.as_ref(), &mut message)
            {
                let reading = backlog.reading();
                notification.notification.extensions_mut().insert(reading);
            }
            Some(message)
        }
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.transport.close()
    }
}

#[cfg(test)]
mod tests;
