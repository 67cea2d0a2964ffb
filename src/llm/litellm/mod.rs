//! [`LiteLlm`]: a [`Summarizer`] for any OpenAI-compatible `/v1/chat/completions` endpoint, a
//! LiteLLM proxy first.

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use reqwest::header::{CONTENT_TYPE, HeaderValue, RETRY_AFTER, USER_AGENT};
use reqwest::{Client, Url};
use tokio::sync::Semaphore;
use tokio::time::Instant;

use super::redact::{REDACTED, Redactor};
use super::retry::RetryPolicy;
use super::retry_after::parse_retry_after;
use super::wire::{ChatRequest, ChatResponse, Message, error_from_response};
use super::{BoxFuture, CompletionRequest, LlmError, Summarizer, TransportError};

/// The largest response body read, in bytes. A chat completion of any sane size is far
/// smaller; a larger body is an endpoint misbehaving, not a summary.
const MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;

/// The most of an error status's body read. LiteLLM's error envelopes are a few hundred bytes;
/// a gateway's HTML error page a few kilobytes.
const MAX_ERROR_BODY_BYTES: usize = 64 * 1024;

/// How much of a cut error body the error message keeps.
const ERROR_BODY_EXCERPT_CHARS: usize = 300;

/// Default [`LiteLlmBuilder::model`].
pub(crate) const DEFAULT_MODEL: &str = "summarizer";
/// Default [`LiteLlmBuilder::timeout`].
pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default [`LiteLlmBuilder::max_concurrency`].
pub(crate) const DEFAULT_MAX_CONCURRENCY: usize = 5;
/// Default [`LiteLlmBuilder::context_window`].
pub(crate) const DEFAULT_CONTEXT_WINDOW: usize = 8192;
/// Default [`LiteLlmBuilder::temperature`].
pub(crate) const DEFAULT_TEMPERATURE: f32 = 0.0;

/// A client for an OpenAI-compatible chat-completions endpoint, such as a LiteLLM proxy.
///
/// Each [`complete`](Summarizer::complete) sends `POST {base_url}/v1/chat/completions` with the
/// model alias, a system and a user message, `max_tokens` and a low temperature, authenticated
/// with `Authorization: Bearer <api key>` when a key is set. Failed attempts are retried per the
/// [`RetryPolicy`]; each attempt has its own timeout; at most
/// [`max_concurrency`](LiteLlmBuilder::max_concurrency) attempts run at once across every clone.
///
/// Cheap to clone: clones share one connection pool, one concurrency limit and one retry
/// budget. Neither `Debug` nor any error shows the API key.
///
/// ```
/// use std::time::Duration;
/// use condense::llm::{LiteLlm, Summarizer};
///
/// let llm = LiteLlm::builder()
///     .base_url("http://127.0.0.1:4000")
///     .model("summarizer")
///     .api_key(std::env::var("LITELLM_API_KEY").ok())
///     .timeout(Duration::from_secs(20))
///     .max_concurrency(4)
///     .build()
///     .expect("a valid configuration");
/// assert_eq!(llm.model(), "summarizer");
/// assert_eq!(llm.endpoint(), "http://127.0.0.1:4000/v1/chat/completions");
/// ```
///
/// Running a completion:
///
/// ```no_run
/// # async fn run(llm: condense::llm::LiteLlm) -> Result<(), condense::llm::LlmError> {
/// use condense::llm::{CompletionRequest, Summarizer};
///
/// let request = CompletionRequest::new("Summarize the data.", "…tool output…", 300);
/// match llm.complete(request).await {
///     Ok(summary) => println!("{summary}"),
///     Err(error) if error.is_context_overflow() => { /* split the input and map-reduce */ }
///     Err(error) => return Err(error),
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct LiteLlm {
    inner: Arc<Inner>,
}

struct Inner {
    http: Client,
    endpoint: Url,
    /// The endpoint without any user or password, for logs and `Debug`.
    endpoint_display: String,
    model: String,
    api_key: Option<HeaderValue>,
    redactor: Redactor,
    timeout: Duration,
    temperature: f32,
    context_window: usize,
    retry: RetryPolicy,
    limit: Arc<Semaphore>,
}

impl fmt::Debug for LiteLlm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let inner = &*self.inner;
        f.debug_struct("LiteLlm")
            .field("endpoint", &inner.endpoint_display)
            .field("model", &inner.model)
            .field("api_key", &inner.api_key.as_ref().map(|_| REDACTED))
            .field("timeout", &inner.timeout)
            .field("temperature", &inner.temperature)
            .field("context_window", &inner.context_window)
            .field("retry", &inner.retry)
            .field("available_permits", &inner.limit.available_permits())
            .finish()
    }
}

impl LiteLlm {
    /// A builder with every setting at its default; only
    /// [`base_url`](LiteLlmBuilder::base_url) has none.
    pub fn builder() -> LiteLlmBuilder {
        LiteLlmBuilder::default()
    }

    /// The chat-completions URL requests go to, without any credential it may hold.
    pub fn endpoint(&self) -> &str {
        &self.inner.endpoint_display
    }

    /// Runs one completion: attempts, retries and waits until an answer, a final error, or the
    /// retry policy gives up.
    async fn run(&self, request: CompletionRequest) -> Result<String, LlmError> {
        let inner = &*self.inner;
        let body = serde_json::to_vec(&ChatRequest {
            model: &inner.model,
            messages: [
                Message {
                    role: "system",
                    content: &request.system,
                },
                Message {
                    role: "user",
                    content: &request.user,
                },
            ],
            max_tokens: request.max_tokens,
            temperature: inner.temperature,
            stream: false,
        })
        .map_err(|error| LlmError::InvalidConfig(format!("request not serializable: {error}")))?;

        inner.retry.on_request();
        let mut retries = 0;
        loop {
            let started = Instant::now();
            let (status, outcome) = self.attempt(body.clone()).await;
            let elapsed_ms = millis(started.elapsed());
            let error = match outcome {
                Ok(answer) => {
                    tracing::debug!(
                        model = %inner.model,
                        attempt = retries + 1,
                        status,
                        elapsed_ms,
                        answer_bytes = answer.len(),
                        "LLM attempt succeeded"
                    );
                    // A model or gateway that echoes the request's key into its answer must
                    // not hand it on to the agent.
                    return Ok(inner.redactor.remove_key(answer));
                }
                Err(error) => error,
            };
            let retry_in = inner.retry.retry_delay(retries, &error);
            tracing::debug!(
                model = %inner.model,
                attempt = retries + 1,
                status,
                elapsed_ms,
                %error,
                retry_in_ms = retry_in.map(millis),
                "LLM attempt failed"
            );
            match retry_in {
                Some(delay) => {
                    tokio::time::sleep(delay).await;
                    retries += 1;
                }
                None => return Err(error),
            }
        }
    }

    /// One HTTP exchange: the status (when a response came) and its outcome.
    async fn attempt(&self, body: Vec<u8>) -> (Option<u16>, Result<String, LlmError>) {
        let inner = &*self.inner;
        // Waiting for a slot is not the endpoint's fault, so it does not count against the
        // per-request timeout; the caller's deadline bounds it.
        let Ok(_permit) = inner.limit.acquire().await else {
            return (None, Err(LlmError::connect("client is shut down")));
        };
        let mut status = None;
        let exchange = self.exchange(body, &mut status);
        let outcome = match tokio::time::timeout(inner.timeout, exchange).await {
            Ok(outcome) => outcome,
            Err(_elapsed) => Err(LlmError::Timeout),
        };
        (status, outcome)
    }

    /// Sends the request and reads the answer. The status is written to `status_seen` as soon
    /// as the headers arrive, so that an attempt that times out while reading the body still
    /// logs what the endpoint said.
    async fn exchange(
        &self,
        body: Vec<u8>,
        status_seen: &mut Option<u16>,
    ) -> Result<String, LlmError> {
        let inner = &*self.inner;
        let mut request = inner
            .http
            .post(inner.endpoint.clone())
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(key) = &inner.api_key {
            request = request.header(reqwest::header::AUTHORIZATION, key.clone());
        }
        let mut response = request
            .send()
            .await
            .map_err(|error| self.transport_error(error))?;
        let status = response.status();
        *status_seen = Some(status.as_u16());
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| parse_retry_after(value, SystemTime::now()));

        if !status.is_success() {
            let body = self.error_body(&mut response).await;
            return Err(error_from_response(
                status.as_u16(),
                &body,
                retry_after,
                &inner.redactor,
            ));
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|error| self.transport_error(error))?
        {
            if bytes.len() + chunk.len() > MAX_RESPONSE_BYTES {
                return Err(LlmError::InvalidResponse(format!(
                    "response body larger than {MAX_RESPONSE_BYTES} bytes"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }

        let response: ChatResponse = serde_json::from_slice(&bytes).map_err(|error| {
            // serde quotes offending values, which could be anything the endpoint sent.
            LlmError::InvalidResponse(inner.redactor.clean(&error.to_string()))
        })?;
        if let Some(usage) = &response.usage {
            tracing::trace!(
                prompt_tokens = usage.prompt_tokens,
                completion_tokens = usage.completion_tokens,
                finish_reason = response
                    .choices
                    .first()
                    .and_then(|choice| choice.finish_reason.as_deref()),
                "LLM usage"
            );
        }
        response.into_text()
    }

    /// The body of an error status, for its message. The status is the answer: a body that is
    /// huge, endless or breaks off must not turn it into a different error, so only its start
    /// is read, and a read that fails ends it.
    async fn error_body(&self, response: &mut reqwest::Response) -> String {
        let mut bytes = Vec::new();
        let mut cut = false;
        while let Ok(Some(chunk)) = response.chunk().await {
            let room = MAX_ERROR_BODY_BYTES - bytes.len();
            if chunk.len() > room {
                bytes.extend_from_slice(&chunk[..room]);
                cut = true;
                break;
            }
            bytes.extend_from_slice(&chunk);
        }
        let body = String::from_utf8_lossy(&bytes);
        if !cut {
            return body.into_owned();
        }
        // A cut body is not JSON any more: its first characters are message enough.
        let start: String = body.chars().take(ERROR_BODY_EXCERPT_CHARS).collect();
        format!("{start} … (body longer than {MAX_ERROR_BODY_BYTES} bytes, not read)")
    }

    /// A transport failure as an error that names its cause but not the URL or the key.
    fn transport_error(&self, error: reqwest::Error) -> LlmError {
        if error.is_timeout() {
            return LlmError::Timeout;
        }
        let error = TransportError::new(error);
        LlmError::Connect {
            message: self.inner.redactor.clean(&error.to_string()),
            source: Some(error),
        }
    }
}

impl Summarizer for LiteLlm {
    fn complete(&self, request: CompletionRequest) -> BoxFuture<'_, Result<String, LlmError>> {
        Box::pin(self.run(request))
    }

    fn context_window(&self) -> usize {
        self.inner.context_window
    }

    fn model(&self) -> &str {
        &self.inner.model
    }
}

/// Configures a [`LiteLlm`] client. Setters cannot fail; [`build`](Self::build) checks the
/// whole configuration.
#[must_use]
#[derive(Clone)]
pub struct LiteLlmBuilder {
    base_url: Option<String>,
    model: String,
    api_key: Option<String>,
    timeout: Duration,
    max_concurrency: usize,
    context_window: usize,
    temperature: f32,
    retry: RetryPolicy,
}

impl Default for LiteLlmBuilder {
    fn default() -> Self {
        LiteLlmBuilder {
            base_url: None,
            model: DEFAULT_MODEL.to_owned(),
            api_key: None,
            timeout: DEFAULT_TIMEOUT,
            max_concurrency: DEFAULT_MAX_CONCURRENCY,
            context_window: DEFAULT_CONTEXT_WINDOW,
            temperature: DEFAULT_TEMPERATURE,
            retry: RetryPolicy::default(),
        }
    }
}

impl fmt::Debug for LiteLlmBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LiteLlmBuilder")
            .field("base_url", &self.base_url.as_deref().map(strip_userinfo))
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| REDACTED))
            .field("timeout", &self.timeout)
            .field("max_concurrency", &self.max_concurrency)
            .field("context_window", &self.context_window)
            .field("temperature", &self.temperature)
            .field("retry", &self.retry)
            .finish()
    }
}

impl LiteLlmBuilder {
    /// Sets the endpoint's base URL (required): `http://host:port`, with or without a trailing
    /// `/` or `/v1`; a URL that already ends in `/chat/completions` is used as it is.
    pub fn base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = Some(base_url.into());
        self
    }

    /// Sets the model name or alias sent with each request (default `"summarizer"`, the alias
    /// condense's docs set up on a LiteLLM proxy).
    pub fn model(mut self, model: impl Into<String>) -> Self {
        self.model = model.into();
        self
    }

    /// Sets the API key sent as `Authorization: Bearer <key>` (default none; an empty key counts
    /// as none). Read it from the environment, never from a file under version control.
    pub fn api_key(mut self, api_key: Option<String>) -> Self {
        self.api_key = api_key.filter(|key| !key.is_empty());
        self
    }

    /// Sets the timeout of one attempt, from sending the request to the end of the answer
    /// (default 30 s). Retries get a fresh timeout each; bound the whole call with a deadline.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets how many attempts may be in flight at once, across every clone of the client
    /// (default 5). Waiting for a slot does not count against the timeout.
    pub fn max_concurrency(mut self, max_concurrency: usize) -> Self {
        self.max_concurrency = max_concurrency;
        self
    }

    /// Sets the most retries of one call (default 2), keeping the rest of the retry policy.
    pub fn max_retries(mut self, max_retries: u32) -> Self {
        self.retry = self.retry.with_max_retries(max_retries);
        self
    }

    /// Replaces the whole retry policy (default [`RetryPolicy::default`]). Clients built with
    /// clones of one policy share its retry budget.
    pub fn retry_policy(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// Sets the model's context window in tokens, prompt and answer together (default 8192).
    /// The engine splits content that does not fit.
    pub fn context_window(mut self, context_window: usize) -> Self {
        self.context_window = context_window;
        self
    }

    /// Sets the sampling temperature (default 0.0: the same input gives the same summary as far
    /// as the model allows, which keeps agents' prompt caches warm).
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = temperature;
        self
    }

    /// Builds the client.
    ///
    /// # Errors
    ///
    /// [`LlmError::InvalidConfig`] when no base URL was set or it is not an `http`/`https` URL;
    /// when the model name is empty; when the timeout, the concurrency limit or the context
    /// window is zero; when the temperature is not a number in `0.0..=2.0`; when the API key
    /// cannot be sent in an HTTP header; or when the HTTP client cannot be created.
    pub fn build(self) -> Result<LiteLlm, LlmError> {
        let invalid = |message: &str| LlmError::InvalidConfig(message.to_owned());
        let base_url = self
            .base_url
            .as_deref()
            .ok_or_else(|| invalid("base_url is not set"))?;
        let endpoint = chat_completions_url(base_url)?;
        if self.model.trim().is_empty() {
            return Err(invalid("model is empty"));
        }
        if self.timeout.is_zero() {
            return Err(invalid("timeout is zero"));
        }
        if self.max_concurrency == 0 {
            return Err(invalid("max_concurrency is zero"));
        }
        if self.context_window == 0 {
            return Err(invalid("context_window is zero"));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(invalid("temperature is not between 0.0 and 2.0"));
        }
        let api_key = match &self.api_key {
            Some(key) => {
                let mut value = HeaderValue::from_str(&format!("Bearer {key}"))
                    .map_err(|_| invalid("api key has characters an HTTP header cannot carry"))?;
                // Keeps the header out of hyper's and reqwest's own debug output.
                value.set_sensitive(true);
                Some(value)
            }
            None => None,
        };
        let http = Client::builder()
            // A redirect would send the prompt, and perhaps the key, somewhere unconfigured.
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(self.timeout.min(Duration::from_secs(10)))
            .default_headers(
                [(
                    USER_AGENT,
                    HeaderValue::from_static(concat!("condense/", env!("CARGO_PKG_VERSION"))),
                )]
                .into_iter()
                .collect(),
            )
            .build()
            .map_err(|error| LlmError::InvalidConfig(format!("HTTP client: {error}")))?;
        Ok(LiteLlm {
            inner: Arc::new(Inner {
                http,
                endpoint_display: strip_userinfo(endpoint.as_str()),
                endpoint,
                model: self.model,
                redactor: Redactor::new(self.api_key.as_deref()),
                api_key,
                timeout: self.timeout,
                temperature: self.temperature,
                context_window: self.context_window,
                retry: self.retry,
                limit: Arc::new(Semaphore::new(self.max_concurrency)),
            }),
        })
    }
}

/// Whole milliseconds, for log fields.
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// The chat-completions URL for a base URL given with or without `/`, `/v1`, or the whole path.
pub(crate) fn chat_completions_url(base_url: &str) -> Result<Url, LlmError> {
    let base = base_url.trim().trim_end_matches('/');
    let full = if base.ends_with("/chat/completions") {
        base.to_owned()
    } else if base.ends_with("/v1") {
        format!("{base}/chat/completions")
    } else {
        format!("{base}/v1/chat/completions")
    };
    // The URL is not echoed: it may carry a password.
    let url = Url::parse(&full)
        .map_err(|error| LlmError::InvalidConfig(format!("base_url is not a URL: {error}")))?;
    if !matches!(url.scheme(), "http" | "https") || !url.has_host() {
        return Err(LlmError::InvalidConfig(
            "base_url must be an http:// or https:// URL with a host".to_owned(),
        ));
    }
    Ok(url)
}

/// `url` without user name or password, for display.
fn strip_userinfo(url: &str) -> String {
    match Url::parse(url) {
        Ok(mut parsed) => {
            // Both fail only for URLs that cannot have credentials anyway.
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.to_string()
        }
        Err(_) => "(not a URL)".to_owned(),
    }
}

#[cfg(test)]
mod tests;
