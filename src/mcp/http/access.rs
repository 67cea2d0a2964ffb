//! Who may use the HTTP proxy: the bearer token, the refusal to serve beyond loopback without
//! one, and the browser origins accepted.
//!
//! Anyone who can send an `initialize` runs the upstream server with the proxy's rights, so the
//! defaults keep the proxy to the machine it runs on: loopback addresses and loopback origins.

use std::net::SocketAddr;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};

use super::super::error::ProxyError;
use crate::ProxyConfig;

/// The origins a browser page on this machine sends: every port of the loopback names.
const LOOPBACK_ORIGINS: [&str; 6] = [
    "http://localhost:*",
    "http://127.0.0.1:*",
    "http://[::1]:*",
    "https://localhost:*",
    "https://127.0.0.1:*",
    "https://[::1]:*",
];

/// The origins accepted: loopback ones and the configured `[proxy] allowed_origins`.
pub(crate) fn allowed_origins(settings: &ProxyConfig) -> Vec<String> {
    LOOPBACK_ORIGINS
        .iter()
        .map(|origin| (*origin).to_owned())
        .chain(settings.allowed_origins.iter().cloned())
        .collect()
}

/// The token every MCP request must carry, when one is configured.
pub(crate) struct Access {
    token: Option<Vec<u8>>,
}

impl std::fmt::Debug for Access {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Access")
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl Access {
    /// Reads the token from the variable `[proxy] auth_token_env` names, and refuses to serve
    /// `local` beyond loopback without one unless `allow_unauthenticated` (the flag, or the
    /// key) says so.
    pub(crate) fn new(
        settings: &ProxyConfig,
        local: SocketAddr,
        allow_unauthenticated: bool,
    ) -> Result<Self, ProxyError> {
        let token = match &settings.auth_token_env {
            Some(var) => match std::env::var(var) {
                Ok(token) if !token.trim().is_empty() => Some(token.trim().as_bytes().to_vec()),
                _ => return Err(ProxyError::AuthToken { var: var.clone() }),
            },
            None => None,
        };
        if token.is_none() && !local.ip().is_loopback() {
            if !(allow_unauthenticated || settings.allow_unauthenticated) {
                return Err(ProxyError::Unprotected {
                    addr: local.to_string(),
                });
            }
            tracing::warn!(
                %local,
                "serving MCP without authentication on a non-loopback address: anyone who \
                 reaches it can run the upstream server"
            );
        }
        Ok(Access { token })
    }

    /// Whether requests must carry a token.
    pub(crate) fn requires_token(&self) -> bool {
        self.token.is_some()
    }

    /// Whether the request carries the token (always, when none is configured); a request
    /// without it gets [`unauthorized`].
    pub(crate) fn admits(&self, headers: &HeaderMap) -> bool {
        let Some(expected) = &self.token else {
            return true;
        };
        headers
            .get(header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .is_some_and(|(_, token)| same_secret(token.trim().as_bytes(), expected))
    }
}

/// Compares without stopping at the first difference, so the time taken does not tell an
/// attacker how much of a guess was right (only whether the length was).
fn same_secret(presented: &[u8], expected: &[u8]) -> bool {
    if presented.len() != expected.len() {
        return false;
    }
    let difference = presented
        .iter()
        .zip(expected)
        .fold(0u8, |acc, (a, b)| std::hint::black_box(acc | (a ^ b)));
    difference == 0
}

/// The 401 for a request without the token: it says which header, never the token.
pub(crate) fn unauthorized() -> Response<BoxBody<Bytes, std::convert::Infallible>> {
    let mut response = Response::new(
        Full::new(Bytes::from_static(
            b"Unauthorized: this proxy needs the header `Authorization: Bearer <token>`",
        ))
        .boxed(),
    );
    *response.status_mut() = StatusCode::UNAUTHORIZED;
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(authorization: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(
            header::AUTHORIZATION,
            HeaderValue::from_str(authorization).expect("header"),
        );
        headers
    }

    #[test]
    fn only_the_exact_bearer_token_passes() {
        let access = Access {
            token: Some(b"t0ken-value".to_vec()),
        };
        assert!(access.admits(&headers("Bearer t0ken-value")));
        assert!(access.admits(&headers("bearer t0ken-value")));
        for wrong in [
            "Bearer t0ken-valuX",
            "Bearer t0ken",
            "Basic t0ken-value",
            "t0ken-value",
        ] {
            assert!(!access.admits(&headers(wrong)), "{wrong}");
        }
        assert!(!access.admits(&HeaderMap::new()));
        assert_eq!(unauthorized().status(), StatusCode::UNAUTHORIZED);
    }

    #[test]
    fn without_a_token_every_request_passes() {
        let access = Access { token: None };
        assert!(access.admits(&HeaderMap::new()));
    }

    #[test]
    fn a_non_loopback_address_needs_a_token_or_an_explicit_opt_out() {
        let settings = ProxyConfig::default();
        let public: SocketAddr = "0.0.0.0:8080".parse().expect("addr");
        let error = Access::new(&settings, public, false).expect_err("refused");
        let message = error.to_string();
        assert!(message.contains("0.0.0.0:8080"), "{message}");
        assert!(message.contains("auth_token_env"), "{message}");
        assert!(message.contains("--allow-unauthenticated"), "{message}");
        assert!(Access::new(&settings, public, true).is_ok());
        let loopback: SocketAddr = "127.0.0.1:8080".parse().expect("addr");
        assert!(Access::new(&settings, loopback, false).is_ok());
    }

    #[test]
    fn a_missing_token_variable_names_the_variable_not_a_value() {
        let settings = ProxyConfig {
            auth_token_env: Some("CONDENSE_TEST_TOKEN_THAT_IS_NOT_SET".to_owned()),
            ..ProxyConfig::default()
        };
        let loopback: SocketAddr = "127.0.0.1:8080".parse().expect("addr");
        let message = Access::new(&settings, loopback, false)
            .expect_err("no token")
            .to_string();
        assert!(
            message.contains("CONDENSE_TEST_TOKEN_THAT_IS_NOT_SET"),
            "{message}"
        );
    }
}
