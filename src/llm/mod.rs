//! The LLM backend seam: a [`Summarizer`] answers one chat completion.
//!
//! The engine renders prompts and decides budgets; a summarizer only sends the messages to a
//! model and returns its text. [`LiteLlm`] talks to any OpenAI-compatible
//! `/v1/chat/completions` endpoint (a LiteLLM proxy first), retrying per a [`RetryPolicy`] and
//! never putting its API key in an error or a log.

use std::future::Future;
use std::pin::Pin;

mod error;
mod litellm;
mod redact;
mod retry;
mod retry_after;
mod wire;

pub use error::{LlmError, TransportError};
pub(crate) use litellm::chat_completions_url;
pub use litellm::{LiteLlm, LiteLlmBuilder};
pub use retry::{Backoff, RetryBudget, RetryPolicy};

/// A boxed future, as returned by [`Summarizer::complete`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One chat completion to run: a system and a user message and an output cap.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The system message: rules, and that fenced text is data.
    pub system: String,
    /// The user message: tool name, query and the fenced tool output.
    pub user: String,
    /// The most tokens the model may answer with.
    pub max_tokens: u32,
}

impl CompletionRequest {
    /// A request with the given messages and output cap.
    pub fn new(system: impl Into<String>, user: impl Into<String>, max_tokens: u32) -> Self {
        CompletionRequest {
            system: system.into(),
            user: user.into(),
            max_tokens,
        }
    }
}

/// A model that answers chat completions: the backend of the LLM rung.
///
/// Implementations must be cheap to share (`Arc<dyn Summarizer>`), must not log payloads above
/// `trace`, and must never put a credential in an error.
pub trait Summarizer: Send + Sync + std::fmt::Debug {
    /// Runs one completion and returns the model's text.
    fn complete(&self, request: CompletionRequest) -> BoxFuture<'_, Result<String, LlmError>>;

    /// The model's context window in tokens (prompt and answer together). Content larger than
    /// this cannot be summarized in one call.
    fn context_window(&self) -> usize;

    /// The model name or alias, part of every cache key.
    fn model(&self) -> &str;
}
