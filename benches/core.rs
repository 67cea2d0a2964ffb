//! Core costs: the pass-through decision, exact counting throughput (one thread below 256 KB,
//! in parts above on a machine of three cores or more), a cache hit, a whole pass-through.
//!
//! `cargo bench --bench core`

use std::hint::black_box;
use std::time::Duration;

use condense::{Condenser, Config, Encoding, Request, TokenCounter};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn log_text(bytes: usize) -> String {
    let mut text = String::with_capacity(bytes + 200);
    let mut i = 0u64;
    while text.len() < bytes {
        text.push_str(&format!(
            "2024-05-01 10:{:02}:{:02},{:03} INFO [worker-{}] handled request id={} path=/api/v1/items/{} in {}ms\n",
            (i / 60) % 60, i % 60, i % 1000, i % 8, i * 7919, i % 1000, i % 250
        ));
        i += 1;
    }
    text
}

fn decision(c: &mut Criterion) {
    let counter = TokenCounter::default();
    let mut group = c.benchmark_group("pass-through decision (threshold 4000)");
    for (name, bytes) in [("4 KB", 4 * 1024), ("1 MB", 1 << 20)] {
        let text = log_text(bytes);
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| b.iter(|| counter.exceeds(black_box(&text), 4000)));
    }
    // The band the byte bounds cannot settle: 4000 < bytes ≤ 128·4000, counted until past T.
    let text = log_text(40 * 1024);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("40 KB (counted until past the threshold)", |b| {
        b.iter(|| counter.exceeds(black_box(&text), 4000))
    });
    group.finish();
}

fn counting(c: &mut Criterion) {
    let text = log_text(1 << 20);
    let json = serde_json::to_string_pretty(
        &(0..6000)
            .map(|i| serde_json::json!({"id": i, "name": format!("item-{i}"), "tags": ["a", "b"], "score": i as f64 / 7.0}))
            .collect::<Vec<_>>(),
    )
    .unwrap();
    let mut group = c.benchmark_group("exact count");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    // Below the size counted in parts: the single-thread rate.
    let small = log_text(200 * 1024);
    for encoding in [Encoding::Cl100kBase, Encoding::O200kBase] {
        let counter = TokenCounter::new(encoding);
        group.throughput(Throughput::Bytes(small.len() as u64));
        group.bench_function(format!("{encoding} log 200 KB (one thread)"), |b| {
            b.iter(|| counter.count(black_box(&small)))
        });
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("{encoding} log 1 MB"), |b| {
            b.iter(|| counter.count(black_box(&text)))
        });
        group.throughput(Throughput::Bytes(json.len() as u64));
        group.bench_function(format!("{encoding} JSON {} KB", json.len() / 1024), |b| {
            b.iter(|| counter.count(black_box(&json)))
        });
    }
    // The reference the tests compare against, under the same load: the speed-up is the ratio.
    let tiktoken = tiktoken_rs::cl100k_base_singleton();
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("tiktoken-rs cl100k_base log 1 MB", |b| {
        b.iter(|| tiktoken.encode_ordinary(black_box(&text)).len())
    });
    group.throughput(Throughput::Bytes(json.len() as u64));
    group.bench_function(
        format!("tiktoken-rs cl100k_base JSON {} KB", json.len() / 1024),
        |b| b.iter(|| tiktoken.encode_ordinary(black_box(&json)).len()),
    );
    group.finish();
}

fn cache_hit(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let condenser = Condenser::new(Config::default()).unwrap();
    let text = log_text(200 * 1024);
    let request = Request::new("read_log").with_query("slow requests");
    runtime.block_on(condenser.condense(&text, &request));
    c.bench_function("cache hit (200 KB output)", |b| {
        b.to_async(&runtime).iter(|| async {
            let out = condenser.condense(black_box(&text), &request).await;
            assert!(out.cached);
        })
    });
}

/// A whole pass-through through the engine: the decision and the count the result reports.
fn pass_through(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let condenser = Condenser::new(Config::default()).unwrap();
    // Just under the 4,000-token threshold: counted whole, and passed through.
    let text = log_text(8 * 1024);
    let request = Request::new("read_log");
    let first = runtime.block_on(condenser.condense(&text, &request));
    assert!(!first.was_condensed());
    c.bench_function("pass-through (8 KB output, under the threshold)", |b| {
        b.to_async(&runtime).iter(|| async {
            let out = condenser.condense(black_box(&text), &request).await;
            assert!(!out.was_condensed());
        })
    });
}

criterion_group!(benches, decision, counting, cache_hit, pass_through);
criterion_main!(benches);
