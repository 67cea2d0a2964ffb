//! Helpers for the crate's own benches and tests: a minimal MCP client over streamable HTTP,
//! so that code outside this module never touches rmcp. Not part of the stable API.

use rmcp::model::{CallToolRequestParams, ClientConfig, JsonObject};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};

use super::error::ProxyError;

pub use super::proxy::serve_http;

/// An MCP client session over streamable HTTP.
#[derive(Debug)]
pub struct HttpClient {
    service: RunningService<RoleClient, ClientConfig>,
}

impl HttpClient {
    /// Connects and completes the handshake.
    ///
    /// # Errors
    ///
    /// [`ProxyError::Handshake`] when the server cannot be reached or refuses the handshake.
    pub async fn connect(url: &str) -> Result<Self, ProxyError> {
        let transport = StreamableHttpClientTransport::from_uri(url);
        let service = ClientConfig::default()
            .serve(transport)
            .await
            .map_err(|error| ProxyError::Handshake(error.to_string()))?;
        Ok(HttpClient { service })
    }

    /// Calls a tool and returns its result as JSON.
    ///
    /// # Errors
    ///
    /// [`ProxyError::Serve`] when the call fails at the protocol level.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: serde_json::Value,
    ) -> Result<serde_json::Value, ProxyError> {
        let mut params = CallToolRequestParams::new(name.to_owned());
        params.arguments = arguments
            .as_object()
            .cloned()
            .or_else(|| Some(JsonObject::new()));
        let result = self
            .service
            .call_tool(params)
            .await
            .map_err(|error| ProxyError::Serve(error.to_string()))?;
        serde_json::to_value(result).map_err(|error| ProxyError::Serve(error.to_string()))
    }

    /// Ends the session.
    pub async fn close(mut self) {
        let _ = self.service.close().await;
    }
}
