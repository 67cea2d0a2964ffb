//! The whole path through a real LiteLLM proxy: the tower layer, the engine, the HTTP client,
//! LiteLLM's auth and mock model. Run by `scripts/test.sh`, which starts the proxy.

use std::convert::Infallible;

use condense::{CondenseLayer, Condenser, Config, Method, ToolCall, ToolResult};
use serde_json::json;
use tower::{Layer, Service, ServiceExt, service_fn};

use crate::litellm::proxy;
use crate::support::relay::CountingRelay;

fn health_report() -> String {
    let mut text: String = (0..2000)
        .map(|i| {
            format!(
                "10:{:02}:{:02} service-{} health check ok ({} ms)\n",
                (i / 60) % 60,
                i % 60,
                i % 9,
                5 + i % 40
            )
        })
        .collect();
    text.push_str("10:42:00 payments-api health check FAILED (timeout after 5000 ms)\n");
    text
}

fn condenser(url: &str, key: &str) -> Condenser {
    let config = Config::from_toml_str_with_env(
        "[defaults]\nthreshold_tokens = 1000\nbudget_tokens = 400\n[llm]\nbase_url = \"unused\"\nmax_retries = 1\n",
        "test.toml",
        [
            ("CONDENSE_LLM_BASE_URL".to_owned(), url.to_owned()),
            ("CONDENSE_LLM_API_KEY".to_owned(), key.to_owned()),
        ],
    )
    .unwrap();
    Condenser::new(config).unwrap()
}

async fn call(condenser: Condenser) -> ToolResult {
    let tools =
        service_fn(|_: ToolCall| async { Ok::<_, Infallible>(ToolResult::text(health_report())) });
    let mut client = CondenseLayer::new(condenser).layer(tools);
    let call = ToolCall::new("get_health", json!({})).with_query("which service failed?");
    client.ready().await.unwrap().call(call).await.unwrap()
}

#[tokio::test]
async fn a_summary_passes_through_the_layer_with_its_header() {
    let Some((url, key)) = proxy() else { return };
    let result = call(condenser(&url, &key)).await;
    let text = result.content[0].as_text().unwrap();
    assert!(text.starts_with("[condense: llm, "), "{text}");
    assert!(text.contains("payments-api failed 2 health checks"));
    assert_eq!(result.meta.unwrap()["condense"]["method"], "llm");
}

#[tokio::test]
async fn a_bad_key_gives_a_clean_fallback_and_never_shows_the_key() {
    let Some((url, _)) = proxy() else { return };
    let wrong = "sk-wrong-key-that-must-not-leak-42";
    let result = call(condenser(&url, wrong)).await;
    let meta = &result.meta.unwrap()["condense"];
    assert_eq!(meta["method"], Method::Extract.name());
    let reason = meta["fallback"].as_str().unwrap();
    assert!(!reason.contains(wrong), "{reason}");
    let text = result.content[0].as_text().unwrap();
    assert!(text.contains("payments-api health check FAILED"));
    assert!(!text.contains(wrong));
}

#[tokio::test]
async fn the_cache_makes_the_second_identical_call_free() {
    let Some((url, key)) = proxy() else { return };
    let relay = CountingRelay::start(url.trim_start_matches("http://").to_owned()).await;
    let condenser = condenser(relay.url(), &key);
    let first = call(condenser.clone()).await;
    assert_eq!(relay.requests(), 1);
    let second = call(condenser).await;
    assert_eq!(
        relay.requests(),
        1,
        "the second call must not reach the LLM"
    );
    assert_eq!(second.meta.as_ref().unwrap()["condense"]["cached"], true);
    assert_eq!(first.content, second.content);
}
