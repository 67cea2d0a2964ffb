use thiserror::Error;

/// Why an LLM call failed. Never carries a credential.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum LlmError {
    /// The endpoint answered with a non-success status after any retries.
    #[error("LLM endpoint answered {status}: {message}")]
    Status {
        /// The HTTP status code.
        status: u16,
        /// The endpoint's message, with any credential removed.
        message: String,
    },
    /// The request did not complete in time.
    #[error("LLM request timed out")]
    Timeout,
    /// The endpoint could not be reached.
    #[error("could not connect to the LLM endpoint: {0}")]
    Connect(String),
    /// The endpoint answered something that is not a chat completion.
    #[error("LLM answer was not a chat completion: {0}")]
    InvalidResponse(String),
}
