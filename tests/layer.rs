//! The tower layer: composition, error pass-through, multi-part results, hooks.

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use condense::{
    CondenseLayer, Condensed, Condenser, Config, Content, Method, Request, TokenCounter, ToolCall,
    ToolClientExt, ToolResult, Verdict, call_tool_summarized,
};
use serde_json::json;
use tower::{BoxError, Layer, Service, ServiceBuilder, ServiceExt, service_fn};

fn big_log(lines: usize) -> String {
    let mut log: String = (0..lines)
        .map(|i| {
            format!(
                "2024-05-01 10:00:{:02} INFO worker-{} handled job {i} in 12ms\n",
                i % 60,
                i % 7
            )
        })
        .collect();
    log.push_str("2024-05-01 10:01:00 ERROR worker-3 job 4242 failed: disk /dev/sdb1 is full\n");
    log
}

fn condenser() -> Condenser {
    Condenser::new(
        Config::from_toml_str(
            "[defaults]\nthreshold_tokens = 500\nbudget_tokens = 300\n",
            "test.toml",
        )
        .unwrap(),
    )
    .unwrap()
}

#[tokio::test]
async fn small_results_pass_through_byte_for_byte() {
    let tools =
        service_fn(|_: ToolCall| async { Ok::<_, Infallible>(ToolResult::text("tiny result")) });
    let mut client = CondenseLayer::new(condenser()).layer(tools);
    let result = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("t", json!({})))
        .await
        .unwrap();
    assert_eq!(result, ToolResult::text("tiny result"));
}

#[tokio::test]
async fn large_results_are_condensed_with_header_and_metadata() {
    let tools =
        service_fn(|_: ToolCall| async { Ok::<_, Infallible>(ToolResult::text(big_log(3000))) });
    let mut client = CondenseLayer::new(condenser()).layer(tools);
    let result = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("read_log", json!({})))
        .await
        .unwrap();
    let text = result.content[0].as_text().unwrap();
    assert!(text.starts_with("[condense: "), "{}", &text[..80]);
    let meta = &result.meta.as_ref().unwrap()["condense"];
    assert!(meta["tokens_after"].as_u64().unwrap() <= 300);
    assert!(meta["tokens_before"].as_u64().unwrap() > 30_000);
    let reference = meta["ref"].as_str().unwrap();
    assert!(text.contains(reference));
}

#[tokio::test]
async fn tool_errors_pass_through_untouched() {
    let tools = service_fn(|_: ToolCall| async { Err::<ToolResult, _>("upstream is down") });
    let mut client = CondenseLayer::new(condenser()).layer(tools);
    let error = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("t", json!({})))
        .await
        .unwrap_err();
    assert_eq!(error, "upstream is down");
}

#[tokio::test]
async fn composes_with_timeout_and_concurrency_limit() {
    let in_flight = Arc::new(AtomicUsize::new(0));
    let peak = Arc::new(AtomicUsize::new(0));
    let tools = {
        let (in_flight, peak) = (in_flight.clone(), peak.clone());
        service_fn(move |_: ToolCall| {
            let (in_flight, peak) = (in_flight.clone(), peak.clone());
            async move {
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, BoxError>(ToolResult::text(big_log(2000)))
            }
        })
    };
    let client = ServiceBuilder::new()
        .timeout(Duration::from_secs(30))
        .concurrency_limit(2)
        .layer(CondenseLayer::new(condenser()))
        .service(tools);
    let calls = (0..6).map(|i| {
        client
            .clone()
            .oneshot(ToolCall::new(format!("t{i}"), json!({})))
    });
    let results = futures_join_all(calls).await;
    for result in results {
        let result = result.unwrap();
        assert!(
            result.content[0]
                .as_text()
                .unwrap()
                .starts_with("[condense: ")
        );
    }
    assert!(peak.load(Ordering::SeqCst) <= 2);
}

#[tokio::test]
async fn a_timeout_outside_the_layer_still_applies() {
    let tools = service_fn(|_: ToolCall| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        Ok::<_, BoxError>(ToolResult::text("late"))
    });
    let mut client = ServiceBuilder::new()
        .timeout(Duration::from_millis(20))
        .layer(CondenseLayer::new(condenser()))
        .service(tools);
    let error = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("t", json!({})))
        .await
        .unwrap_err();
    assert!(error.is::<tower::timeout::error::Elapsed>());
}

#[tokio::test]
async fn images_pass_untouched_and_text_parts_share_the_budget() {
    let image =
        json!({"type": "image", "data": "iVBORw0KGgo".repeat(10_000), "mimeType": "image/png"});
    let short = "status: 3 files read".to_owned();
    let result = ToolResult::new(vec![
        Content::text(short.clone()),
        Content::Other(image.clone()),
        Content::text(big_log(2000)),
        Content::text(big_log(1500)),
    ]);
    let tools = service_fn(move |_: ToolCall| {
        let result = result.clone();
        async move { Ok::<_, Infallible>(result) }
    });
    let mut client = CondenseLayer::new(condenser()).layer(tools);
    let out = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("read_many", json!({})))
        .await
        .unwrap();
    assert_eq!(out.content[0], Content::text(short));
    assert_eq!(out.content[1], Content::Other(image));
    let counter = condense::TokenCounter::default();
    let total: usize = out
        .content
        .iter()
        .filter_map(Content::as_text)
        .map(|t| counter.count(t))
        .sum();
    assert!(total <= 300, "{total}");
    assert!(out.content[2].as_text().unwrap().starts_with("[condense: "));
    assert!(out.content[3].as_text().unwrap().starts_with("[condense: "));
}

#[tokio::test]
async fn a_multi_part_response_is_decided_once() {
    let asked = Arc::new(AtomicUsize::new(0));
    let counted = asked.clone();
    let rules = condense::policy::RulesPolicy::new(condenser().config().clone());
    let policy = move |subject: &condense::policy::Subject<'_>| {
        counted.fetch_add(1, Ordering::SeqCst);
        condense::policy::Policy::decide(&rules, subject)
    };
    let result = ToolResult::new(vec![
        Content::text(big_log(2000)),
        Content::text(big_log(1500)),
        Content::text("status: 2 files read"),
    ]);
    let tools = service_fn(move |_: ToolCall| {
        let result = result.clone();
        async move { Ok::<_, Infallible>(result) }
    });
    let mut client = CondenseLayer::new(condenser())
        .with_policy(policy)
        .layer(tools);
    let out = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("read_many", json!({})))
        .await
        .unwrap();
    assert!(out.content[0].as_text().unwrap().starts_with("[condense: "));
    assert!(out.content[1].as_text().unwrap().starts_with("[condense: "));
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "the parts follow the whole's decision"
    );
}

#[tokio::test]
async fn plain_json_and_string_tools_work() {
    let rows: Vec<_> = (0..800)
        .map(|i| json!({"id": i, "name": format!("user-{i}"), "active": i % 9 != 0}))
        .collect();
    let value = serde_json::Value::Array(rows);
    let json_tool = service_fn(move |_: ToolCall| {
        let value = value.clone();
        async move { Ok::<_, Infallible>(value) }
    });
    let mut client = CondenseLayer::new(condenser()).layer(json_tool);
    let out = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("list_users", json!({})))
        .await
        .unwrap();
    let text = out.as_str().unwrap();
    assert!(text.starts_with("[condense: "));

    let string_tool = service_fn(|_: ToolCall| async { Ok::<_, Infallible>(big_log(2000)) });
    let mut client = CondenseLayer::new(condenser()).layer(string_tool);
    let out = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("cat", json!({})))
        .await
        .unwrap();
    assert!(out.starts_with("[condense: "));
}

/// A condenser without an LLM (threshold 500, budget 300) that shows its outcomes to `hook`.
fn hooked_condenser(hook: impl condense::Hook) -> Condenser {
    let config = Config::from_toml_str(
        "[defaults]\nthreshold_tokens = 500\nbudget_tokens = 300\n",
        "t",
    )
    .unwrap();
    Condenser::builder(config).hook(hook).build().unwrap()
}

#[tokio::test]
async fn the_hook_sees_every_outcome_and_can_veto() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let hook = {
        let seen = seen.clone();
        move |outcome: &Condensed, _: &Request<'_>| {
            seen.lock().unwrap().push(outcome.method);
            if outcome.method == Method::Extract {
                Verdict::Veto
            } else {
                Verdict::Keep
            }
        }
    };
    let condenser = hooked_condenser(hook);
    let small = condenser.condense("small", &Request::new("t")).await;
    assert_eq!(small.method, Method::PassThrough);
    let big = condenser.condense(&big_log(2000), &Request::new("t")).await;
    assert_eq!(big.method, Method::Truncate);
    assert!(big.fallback.as_deref().unwrap().contains("vetoed"));
    assert_eq!(
        *seen.lock().unwrap(),
        vec![Method::PassThrough, Method::Extract, Method::Truncate]
    );
}

#[tokio::test]
async fn the_hook_sees_a_fresh_and_a_cached_outcome_once_each() {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let hook = {
        let seen = seen.clone();
        move |outcome: &Condensed, _: &Request<'_>| {
            seen.lock().unwrap().push((outcome.method, outcome.cached));
            Verdict::Keep
        }
    };
    let condenser = hooked_condenser(hook);
    let log = big_log(2000);
    let first = condenser.condense(&log, &Request::new("t")).await;
    let again = condenser.condense(&log, &Request::new("t")).await;
    assert!(!first.cached && again.cached);
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(Method::Extract, false), (Method::Extract, true)]
    );
}

#[tokio::test]
async fn call_tool_summarized_uses_the_explicit_budget() {
    let tools = service_fn(|call: ToolCall| async move {
        assert_eq!(call.arguments, json!({"path": "/var/log/app.log"}));
        Ok::<_, Infallible>(ToolResult::text(big_log(1000)))
    });
    let mut client = CondenseLayer::new(condenser()).layer(tools);
    let result = call_tool_summarized(
        &mut client,
        "read_file",
        json!({"path": "/var/log/app.log"}),
        Some("which job failed"),
        150,
    )
    .await
    .unwrap();
    let meta = &result.meta.unwrap()["condense"];
    assert!(meta["tokens_after"].as_u64().unwrap() <= 150);
}

#[tokio::test]
async fn call_tool_summarized_is_a_method_of_any_tool_service_behind_a_timeout() {
    let tools = service_fn(|_: ToolCall| async {
        let rows: Vec<String> = big_log(1000).lines().map(str::to_owned).collect();
        Ok::<_, Infallible>(json!({ "rows": rows }))
    });
    let mut client = ServiceBuilder::new()
        .timeout(Duration::from_secs(30))
        .layer(CondenseLayer::new(condenser()))
        .service(tools);
    let answer = client
        .call_tool_summarized("read_rows", json!({}), Some("which job failed"), 200)
        .await
        .unwrap();
    let text = answer
        .as_str()
        .expect("the condensed JSON comes back as text");
    assert!(text.starts_with("[condense: "), "{text}");
    assert!(TokenCounter::default().count(text) <= 200);
}

#[tokio::test]
async fn the_layer_takes_a_policy_and_keeps_sharing_the_originals() {
    let condenser = condenser();
    let tools = service_fn(|call: ToolCall| async move {
        Ok::<_, Infallible>(ToolResult::text(big_log(3000)).with_error(call.name == "failing"))
    });
    let keep_errors = |subject: &condense::policy::Subject<'_>| {
        if subject.is_error() {
            condense::policy::Decision::PassThrough
        } else {
            condense::policy::Decision::Defer
        }
    };
    let policy = condense::policy::Policy::or(
        keep_errors,
        condense::policy::RulesPolicy::new(condenser.config().clone()),
    );
    let mut client = CondenseLayer::new(condenser.clone())
        .with_policy(policy)
        .layer(tools);
    let error = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("failing", json!({})))
        .await
        .unwrap();
    assert_eq!(error.content[0].as_text(), Some(big_log(3000).as_str()));
    let condensed = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("read_log", json!({})))
        .await
        .unwrap();
    let reference = condensed.condense_meta()[0].reference.clone().unwrap();
    // The original is kept in the store the condenser shares with the layer.
    let original = condenser
        .retrieve(&reference, condense::Selection::All)
        .await
        .unwrap();
    assert_eq!(original, big_log(3000));
}

/// A tool whose text and structured copy are both large: 400 rows.
async fn rows_with_structured_copy(call: ToolCall) -> Result<ToolResult, Infallible> {
    let rows: Vec<serde_json::Value> = (0..400)
        .map(|i| json!({"id": i, "name": format!("package-{i}"), "version": format!("1.{i}.0")}))
        .collect();
    let text = if call.name == "small" {
        "3 rows".to_owned()
    } else {
        serde_json::to_string_pretty(&rows).unwrap()
    };
    Ok(ToolResult::text(text).with_structured_content(json!({"total": 400, "rows": rows})))
}

fn call_layer(
    config: &str,
) -> condense::Condense<impl Service<ToolCall, Response = ToolResult, Error = Infallible>> {
    let config = Config::from_toml_str(
        &format!("[defaults]\nthreshold_tokens = 500\nbudget_tokens = 300\n{config}"),
        "test.toml",
    )
    .unwrap();
    CondenseLayer::new(Condenser::new(config).unwrap()).layer(service_fn(rows_with_structured_copy))
}

#[tokio::test]
async fn structured_content_of_a_condensed_result_is_dropped_by_default() {
    let mut client = call_layer("");
    let condensed = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("list_rows", json!({})))
        .await
        .unwrap();
    assert!(condensed.condense_meta()[0].method != Method::PassThrough);
    assert_eq!(condensed.structured_content, None);
    // A result that is not condensed keeps its structured copy.
    let small = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("small", json!({})))
        .await
        .unwrap();
    assert!(small.condense_meta().is_empty());
    assert_eq!(small.structured_content.unwrap()["total"], 400);
}

#[tokio::test]
async fn structured_content_policy_keep_and_condense_follow_the_rule() {
    let mut client = call_layer(
        "[[tools]]\nmatch = \"keep_*\"\nstructured_content = \"keep\"\n[[tools]]\nmatch = \"shrink_*\"\nstructured_content = \"condense\"\n",
    );
    let kept = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("keep_rows", json!({})))
        .await
        .unwrap();
    assert!(!kept.condense_meta().is_empty());
    let kept = kept.structured_content.unwrap();
    assert_eq!(kept["rows"].as_array().unwrap().len(), 400);
    let schema = json!({
        "type": "object",
        "required": ["total", "rows"],
        "properties": {"rows": {"type": "array", "minItems": 10}}
    });
    let shrunk = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("shrink_rows", json!({})).with_output_schema(schema))
        .await
        .unwrap();
    let shrunk = shrunk.structured_content.unwrap();
    let rows = shrunk["rows"].as_array().unwrap().len();
    assert!((10..400).contains(&rows), "{rows} rows");
    assert_eq!(shrunk["total"], 400);
}

#[tokio::test]
async fn condense_meta_reads_what_the_layer_wrote() {
    let mut client = CondenseLayer::new(condenser()).layer(service_fn(|_: ToolCall| async {
        Ok::<_, Infallible>(ToolResult::text(big_log(3000)))
    }));
    let result = client
        .ready()
        .await
        .unwrap()
        .call(ToolCall::new("read_log", json!({})))
        .await
        .unwrap();
    let metas = result.condense_meta();
    assert_eq!(metas.len(), 1);
    let meta = &metas[0];
    let raw = &result.meta.as_ref().unwrap()["condense"];
    assert_eq!(meta.method.name(), raw["method"].as_str().unwrap());
    assert_eq!(meta.reference.as_deref(), raw["ref"].as_str());
    assert_eq!(
        meta.tokens_after as u64,
        raw["tokens_after"].as_u64().unwrap()
    );
    assert!(!meta.cached);
    assert_eq!(&meta.to_json(), raw);
}

async fn futures_join_all<F>(futures: impl Iterator<Item = F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut out = Vec::new();
    for handle in handles {
        out.push(handle.await.unwrap());
    }
    out
}
