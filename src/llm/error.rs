use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use thiserror::Error;

/// A transport failure of an LLM call, kept as the typed source of [`LlmError::Connect`]. It
/// never names the URL (it is removed, as with `reqwest::Error::without_url`), and the API key
/// travels in a header no transport error quotes.
#[derive(Debug, Clone)]
pub struct TransportError(Arc<reqwest::Error>);

impl TransportError {
    /// Keeps `error`, its URL removed.
    pub(crate) fn new(error: reqwest::Error) -> Self {
        TransportError(Arc::new(error.without_url()))
    }
}

impl fmt::Display for TransportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl std::error::Error for TransportError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source()
    }
}

/// Two transport errors are equal when they say the same.
impl PartialEq for TransportError {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_string() == other.0.to_string()
    }
}

impl Eq for TransportError {}

/// Why an LLM call failed.
///
/// Never carries a credential: every message built from a response body has the API key and any
/// `Bearer <token>` removed first (see [`LiteLlm`](super::LiteLlm)), because misconfigured
/// proxies echo request headers back in their error pages.
///
/// The queries ([`is_retryable`](Self::is_retryable), [`is_context_overflow`](Self::is_context_overflow),
/// …) are the stable way to act on an error; match on variants only when a query does not say
/// enough.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The endpoint answered with a non-success status that no more specific variant covers,
    /// after any retries.
    #[error("LLM endpoint answered {status}: {message}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The endpoint's message, with any credential removed.
        message: String,
        /// How long the endpoint asked the client to wait (`Retry-After`), if it said.
        retry_after: Option<Duration>,
    },
    /// The endpoint is rate limiting this client (HTTP 429), after any retries.
    #[error("LLM endpoint is rate limiting requests: {message}")]
    RateLimited {
        /// The endpoint's message, with any credential removed.
        message: String,
        /// How long the endpoint asked the client to wait (`Retry-After`), if it said. LiteLLM
        /// does not send it.
        retry_after: Option<Duration>,
    },
    /// The endpoint refused the credentials (a missing, wrong or expired API key). Never
    /// retried: the same key fails the same way.
    ///
    /// LiteLLM without a database answers a key that is not its master key with 400
    /// `no_db_connection`; that is reported here too.
    #[error("LLM endpoint refused the credentials ({status}): {message}")]
    Unauthorized {
        /// The HTTP status code (401, 403, or LiteLLM's 400).
        status: u16,
        /// The endpoint's message, with any credential removed.
        message: String,
    },
    /// The prompt and the requested answer do not fit the model's context window. Never
    /// retried: split the content (map-reduce) and try again with smaller requests.
    #[error("LLM prompt does not fit the model's context window: {message}")]
    ContextWindowExceeded {
        /// The endpoint's message, with any credential removed.
        message: String,
    },
    /// An attempt did not complete within the per-request timeout, after any retries.
    #[error("LLM request timed out")]
    Timeout,
    /// The endpoint could not be reached, or dropped the connection, after any retries.
    #[error("could not reach the LLM endpoint: {message}")]
    Connect {
        /// What failed, without the URL or any credential.
        message: String,
        /// The transport's own error (its URL removed), whose sources say why: the connection
        /// was refused, the name did not resolve, the TLS handshake failed.
        #[source]
        source: Option<TransportError>,
    },
    /// The endpoint answered something that is not a chat completion.
    #[error("LLM answer was not a chat completion: {0}")]
    InvalidResponse(String),
    /// The endpoint answered a chat completion with no text in it (no choices, or empty
    /// content). LiteLLM does this when a streamed prompt overflows the window, so an empty
    /// answer is never taken as an empty summary.
    #[error("LLM answered with no text")]
    EmptyAnswer,
    /// The client's configuration cannot work (for example a base URL that is not http(s)).
    #[error("invalid LLM client configuration: {0}")]
    InvalidConfig(String),
}

impl LlmError {
    /// A [`LlmError::Connect`] with no transport error behind it.
    pub fn connect(message: impl Into<String>) -> Self {
        LlmError::Connect {
            message: message.into(),
            source: None,
        }
    }

    /// The error and each of its sources, joined by `": "`: the whole reason in one line, as a
    /// fallback reports it.
    pub fn with_causes(&self) -> String {
        crate::error::error_chain(self)
    }

    /// Whether a later identical request may succeed: rate limits, timeouts, connection
    /// failures, 408 and most 5xx statuses.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. } | LlmError::Timeout | LlmError::Connect { .. } => true,
            LlmError::Status { status, .. } => is_retryable_status(*status),
            LlmError::Unauthorized { .. }
            | LlmError::ContextWindowExceeded { .. }
            | LlmError::InvalidResponse(_)
            | LlmError::EmptyAnswer
            | LlmError::InvalidConfig(_) => false,
        }
    }

    /// Whether an attempt ran out of time, on the client's side ([`LlmError::Timeout`]) or on
    /// the endpoint's (HTTP 408, which LiteLLM answers when its backend is late).
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            LlmError::Timeout | LlmError::Status { status: 408, .. }
        )
    }

    /// Whether the prompt was too large for the model, so that splitting it may help.
    pub fn is_context_overflow(&self) -> bool {
        matches!(self, LlmError::ContextWindowExceeded { .. })
    }

    /// Whether the endpoint refused the credentials.
    pub fn is_unauthorized(&self) -> bool {
        matches!(self, LlmError::Unauthorized { .. })
    }

    /// Whether the endpoint is rate limiting this client.
    pub fn is_rate_limited(&self) -> bool {
        matches!(self, LlmError::RateLimited { .. })
    }

    /// The HTTP status the endpoint answered, when the failure came from a response.
    pub fn status(&self) -> Option<u16> {
        match self {
            LlmError::Status { status, .. } | LlmError::Unauthorized { status, .. } => {
                Some(*status)
            }
            LlmError::RateLimited { .. } => Some(429),
            LlmError::ContextWindowExceeded { .. } => Some(400),
            LlmError::Timeout
            | LlmError::Connect { .. }
            | LlmError::InvalidResponse(_)
            | LlmError::EmptyAnswer
            | LlmError::InvalidConfig(_) => None,
        }
    }

    /// How long the endpoint asked the client to wait before trying again (`Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            LlmError::Status { retry_after, .. } | LlmError::RateLimited { retry_after, .. } => {
                *retry_after
            }
            _ => None,
        }
    }
}

/// Statuses that say "not now" rather than "never": request timeout, rate limit, and server
/// errors other than the ones that describe a permanent mismatch (501 Not Implemented, 505 HTTP
/// Version Not Supported).
pub(crate) fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 429) || ((500..600).contains(&status) && !matches!(status, 501 | 505))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn status(status: u16) -> LlmError {
        LlmError::Status {
            status,
            message: String::new(),
            retry_after: None,
        }
    }

    #[test]
    fn server_errors_and_408_are_retryable() {
        for code in [408, 500, 502, 503, 504, 529] {
            assert!(status(code).is_retryable(), "{code}");
        }
    }

    #[test]
    fn client_errors_and_permanent_server_errors_are_not_retryable() {
        for code in [400, 404, 422, 501, 505] {
            assert!(!status(code).is_retryable(), "{code}");
        }
    }

    #[test]
    fn rate_limit_timeout_and_connection_failures_are_retryable() {
        let rate_limited = LlmError::RateLimited {
            message: String::new(),
            retry_after: None,
        };
        assert!(rate_limited.is_retryable());
        assert!(LlmError::Timeout.is_retryable());
        assert!(LlmError::connect("refused").is_retryable());
    }

    #[test]
    fn auth_overflow_and_bad_answers_are_not_retryable() {
        let unauthorized = LlmError::Unauthorized {
            status: 401,
            message: String::new(),
        };
        let overflow = LlmError::ContextWindowExceeded {
            message: String::new(),
        };
        assert!(!unauthorized.is_retryable());
        assert!(!overflow.is_retryable());
        assert!(!LlmError::InvalidResponse("x".into()).is_retryable());
        assert!(!LlmError::EmptyAnswer.is_retryable());
    }

    #[test]
    fn endpoint_timeout_counts_as_timeout() {
        assert!(status(408).is_timeout());
        assert!(LlmError::Timeout.is_timeout());
        assert!(!status(500).is_timeout());
    }

    #[test]
    fn status_reports_the_http_status_when_there_was_one() {
        assert_eq!(status(503).status(), Some(503));
        let overflow = LlmError::ContextWindowExceeded {
            message: String::new(),
        };
        assert_eq!(overflow.status(), Some(400));
        assert_eq!(LlmError::Timeout.status(), None);
    }
}
