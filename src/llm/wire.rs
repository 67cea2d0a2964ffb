//! The OpenAI chat-completions wire format, as far as condense uses it, and the mapping of
//! error responses to [`LlmError`].

use serde::{Deserialize, Serialize};

use super::LlmError;
use super::redact::Redactor;

/// The body of `POST /v1/chat/completions`.
#[derive(Debug, Serialize)]
pub(crate) struct ChatRequest<'a> {
    pub(crate) model: &'a str,
    pub(crate) messages: [Message<'a>; 2],
    pub(crate) max_tokens: u32,
    pub(crate) temperature: f32,
    /// Always a single, whole answer: a streamed overflow comes back from LiteLLM as a 200 with
    /// an empty answer, while a non-streamed one is a clear 400.
    pub(crate) stream: bool,
}

/// One chat message.
#[derive(Debug, Serialize)]
pub(crate) struct Message<'a> {
    pub(crate) role: &'static str,
    pub(crate) content: &'a str,
}

/// The parts of a chat completion that condense reads.
#[derive(Debug, Deserialize)]
pub(crate) struct ChatResponse {
    pub(crate) choices: Vec<Choice>,
    #[serde(default)]
    pub(crate) usage: Option<Usage>,
}

/// One answer of a completion.
#[derive(Debug, Deserialize)]
pub(crate) struct Choice {
    #[serde(default)]
    pub(crate) message: Option<AnswerMessage>,
    #[serde(default)]
    pub(crate) finish_reason: Option<String>,
}

/// The message of an answer; `content` is null when a model answers with tool calls only.
#[derive(Debug, Deserialize)]
pub(crate) struct AnswerMessage {
    #[serde(default)]
    pub(crate) content: Option<String>,
}

/// Token counts the endpoint reports.
#[derive(Debug, Deserialize)]
pub(crate) struct Usage {
    #[serde(default)]
    pub(crate) prompt_tokens: u64,
    #[serde(default)]
    pub(crate) completion_tokens: u64,
}

impl ChatResponse {
    /// The answer's text, or why there is none.
    pub(crate) fn into_text(self) -> Result<String, LlmError> {
        let text = self
            .choices
            .into_iter()
            .next()
            .and_then(|choice| choice.message)
            .and_then(|message| message.content)
            .unwrap_or_default();
        let text = text.trim();
        if text.is_empty() {
            return Err(LlmError::EmptyAnswer);
        }
        Ok(text.to_owned())
    }
}

/// The OpenAI / LiteLLM error envelope: `{"error": {"message", "type", "code", …}}`.
#[derive(Debug, Default, Deserialize)]
struct ErrorEnvelope {
    #[serde(default)]
    error: ErrorDetail,
}

#[derive(Debug, Default, Deserialize)]
struct ErrorDetail {
    #[serde(default)]
    message: Option<serde_json::Value>,
    #[serde(default, rename = "type")]
    kind: Option<String>,
    #[serde(default)]
    code: Option<serde_json::Value>,
}

/// Markers of a context-window overflow: LiteLLM's exception name, OpenAI's error code, and the
/// wording OpenAI-compatible servers (vLLM, llama.cpp) use.
const OVERFLOW_MARKERS: [&str; 4] = [
    "contextwindowexceeded",
    "context_length_exceeded",
    "maximum context length",
    "exceeds the context window",
];

/// The error for a non-success response, its message scrubbed of credentials.
pub(crate) fn error_from_response(
    status: u16,
    body: &str,
    retry_after: Option<std::time::Duration>,
    redactor: &Redactor,
) -> LlmError {
    let detail = serde_json::from_str::<ErrorEnvelope>(body)
        .map(|envelope| envelope.error)
        .unwrap_or_default();
    let raw_message = match &detail.message {
        Some(serde_json::Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None if body.trim().is_empty() => "(empty body)".to_owned(),
        None => body.to_owned(),
    };
    let message = redactor.clean(&raw_message);
    let kind = detail.kind.unwrap_or_default().to_ascii_lowercase();
    let code = match detail.code {
        Some(serde_json::Value::String(code)) => code.to_ascii_lowercase(),
        _ => String::new(),
    };
    let lowered = raw_message.to_ascii_lowercase();
    let overflow = OVERFLOW_MARKERS
        .iter()
        .any(|marker| lowered.contains(marker) || code == *marker);
    match status {
        400 | 413 if overflow => LlmError::ContextWindowExceeded { message },
        401 | 403 => LlmError::Unauthorized { status, message },
        // LiteLLM with a master key and no database checks any other key against the
        // database it does not have.
        400 if kind == "no_db_connection" || kind == "auth_error" => {
            LlmError::Unauthorized { status, message }
        }
        429 => LlmError::RateLimited {
            message,
            retry_after,
        },
        _ => LlmError::Status {
            status,
            message,
            retry_after,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(status: u16, body: &str) -> LlmError {
        error_from_response(status, body, None, &Redactor::new(Some("sk-test-key")))
    }

    #[test]
    fn litellm_context_window_error_is_an_overflow() {
        let body = r#"{"error":{"message":"litellm.ContextWindowExceededError: litellm.BadRequestError: too long","type":"invalid_request_error","param":null,"code":"400"}}"#;
        assert!(error(400, body).is_context_overflow());
    }

    #[test]
    fn openai_context_length_code_is_an_overflow() {
        let body = r#"{"error":{"message":"too long","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
        assert!(error(400, body).is_context_overflow());
    }

    #[test]
    fn litellm_no_db_connection_is_unauthorized() {
        let body = r#"{"error":{"message":"No connected db.","type":"no_db_connection","param":null,"code":"400"}}"#;
        let error = error(400, body);
        assert!(error.is_unauthorized());
        assert_eq!(error.status(), Some(400));
    }

    #[test]
    fn other_400s_are_plain_statuses() {
        let body = r#"{"error":{"message":"Invalid model name passed in model=nope","type":"invalid_request_error","code":"400"}}"#;
        let error = error(400, body);
        assert!(matches!(error, LlmError::Status { status: 400, .. }));
        assert!(error.to_string().contains("Invalid model name"));
    }

    #[test]
    fn too_many_requests_is_rate_limited_with_its_retry_after() {
        let wait = Some(std::time::Duration::from_secs(2));
        let error = error_from_response(429, "{}", wait, &Redactor::new(None));
        assert!(error.is_rate_limited());
        assert_eq!(error.retry_after(), wait);
    }

    #[test]
    fn a_body_that_is_not_json_becomes_the_message() {
        let error = error(502, "<html>Bad Gateway</html>");
        assert!(error.to_string().contains("Bad Gateway"));
    }

    #[test]
    fn messages_are_scrubbed_of_the_key() {
        let body = r#"{"error":{"message":"bad key sk-test-key","type":"auth_error"}}"#;
        let error = error(401, body);
        assert!(!error.to_string().contains("sk-test-key"));
    }

    #[test]
    fn no_choices_is_an_empty_answer() {
        let response: ChatResponse = serde_json::from_str(r#"{"choices":[]}"#).unwrap();
        assert_eq!(response.into_text(), Err(LlmError::EmptyAnswer));
    }

    #[test]
    fn null_or_blank_content_is_an_empty_answer() {
        for body in [
            r#"{"choices":[{"message":{"content":null}}]}"#,
            r#"{"choices":[{"message":{"content":"  \n"}}]}"#,
        ] {
            let response: ChatResponse = serde_json::from_str(body).unwrap();
            assert_eq!(response.into_text(), Err(LlmError::EmptyAnswer), "{body}");
        }
    }

    #[test]
    fn the_first_choice_text_is_the_answer() {
        let body = r#"{"choices":[{"message":{"role":"assistant","content":" A summary. "},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":3}}"#;
        let response: ChatResponse = serde_json::from_str(body).unwrap();
        assert_eq!(response.into_text().unwrap(), "A summary.");
    }
}
