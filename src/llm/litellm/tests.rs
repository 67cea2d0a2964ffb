//! The client's request building and answer parsing.

use super::*;

fn endpoint(base_url: &str) -> String {
    chat_completions_url(base_url).unwrap().to_string()
}

#[test]
fn base_url_forms_all_reach_the_same_endpoint() {
    let expected = "http://127.0.0.1:4000/v1/chat/completions";
    for base in [
        "http://127.0.0.1:4000",
        "http://127.0.0.1:4000/",
        "http://127.0.0.1:4000/v1",
        "http://127.0.0.1:4000/v1/",
        "http://127.0.0.1:4000/v1/chat/completions",
    ] {
        assert_eq!(endpoint(base), expected, "{base}");
    }
}

#[test]
fn base_url_keeps_a_path_prefix() {
    assert_eq!(
        endpoint("https://gateway.example/litellm/"),
        "https://gateway.example/litellm/v1/chat/completions"
    );
}

#[test]
fn build_rejects_a_missing_or_non_http_base_url() {
    assert!(LiteLlm::builder().build().is_err());
    for base in ["ftp://host", "not a url", "unix:/tmp/socket"] {
        let built = LiteLlm::builder().base_url(base).build();
        assert!(matches!(built, Err(LlmError::InvalidConfig(_))), "{base}");
    }
}

#[test]
fn build_rejects_zero_limits_and_odd_temperatures() {
    let builder = || LiteLlm::builder().base_url("http://127.0.0.1:1");
    assert!(builder().timeout(Duration::ZERO).build().is_err());
    assert!(builder().max_concurrency(0).build().is_err());
    assert!(builder().context_window(0).build().is_err());
    assert!(builder().temperature(f32::NAN).build().is_err());
    assert!(builder().temperature(-1.0).build().is_err());
    assert!(builder().model(" ").build().is_err());
}

#[test]
fn build_rejects_a_key_that_cannot_be_a_header_without_echoing_it() {
    let built = LiteLlm::builder()
        .base_url("http://127.0.0.1:1")
        .api_key(Some("sk-secret\nvalue".into()))
        .build();
    let error = built.unwrap_err().to_string();
    assert!(!error.contains("sk-secret"), "{error}");
}

#[test]
fn an_empty_key_counts_as_no_key() {
    let llm = LiteLlm::builder()
        .base_url("http://127.0.0.1:1")
        .api_key(Some(String::new()))
        .build()
        .unwrap();
    assert!(llm.inner.api_key.is_none());
}

#[test]
fn debug_of_client_and_builder_hides_the_key_and_url_password() {
    let builder = LiteLlm::builder()
        .base_url("http://user:pa55word@127.0.0.1:4000")
        .api_key(Some("sk-very-secret-key".into()));
    let llm = builder.clone().build().unwrap();
    for shown in [format!("{builder:?}"), format!("{llm:?}")] {
        assert!(!shown.contains("sk-very-secret-key"), "{shown}");
        assert!(!shown.contains("pa55word"), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }
}

#[test]
fn clones_share_the_concurrency_limit() {
    let llm = LiteLlm::builder()
        .base_url("http://127.0.0.1:1")
        .max_concurrency(3)
        .build()
        .unwrap();
    let clone = llm.clone();
    assert!(Arc::ptr_eq(&llm.inner.limit, &clone.inner.limit));
}

/// A server that answers every request with `status` and a body of `body_bytes` bytes.
async fn serve_status_with_body(status: u16, body_bytes: usize) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut request = [0u8; 16 * 1024];
                let _ = socket.read(&mut request).await;
                let head = format!(
                    "HTTP/1.1 {status} Internal Server Error\r\ncontent-type: text/html\r\ncontent-length: {body_bytes}\r\n\r\n"
                );
                let _ = socket.write_all(head.as_bytes()).await;
                let block = vec![b'x'; 64 * 1024];
                let mut left = body_bytes;
                while left > 0 {
                    let n = left.min(block.len());
                    if socket.write_all(&block[..n]).await.is_err() {
                        return;
                    }
                    left -= n;
                }
            });
        }
    });
    format!("http://{addr}")
}

#[tokio::test]
async fn an_error_status_with_a_huge_body_is_reported_by_its_status() {
    let base = serve_status_with_body(500, MAX_RESPONSE_BYTES + 1024).await;
    let client = LiteLlm::builder()
        .base_url(&base)
        .max_retries(0)
        .build()
        .unwrap();
    let error = client
        .complete(CompletionRequest::new("s", "u", 10))
        .await
        .unwrap_err();
    assert_eq!(error.status(), Some(500), "{error}");
    let message = error.to_string();
    assert!(message.contains("500"), "{message}");
    assert!(message.len() < 1024, "{} bytes", message.len());
}
