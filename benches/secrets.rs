//! Secret redaction throughput: the pass every text takes before it is sent to an LLM.
//!
//! `cargo bench --bench secrets`

use std::hint::black_box;
use std::time::Duration;

use condense::secrets::SecretRedactor;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

/// About `bytes` of application log; with `secrets`, one line in 200 carries a credential.
fn log_text(bytes: usize, secrets: bool) -> String {
    let mut text = String::with_capacity(bytes + 200);
    let mut i = 0u64;
    while text.len() < bytes {
        text.push_str(&format!(
            "2024-05-01 10:{:02}:{:02},{:03} INFO [worker-{}] handled request id={} user=u{} path=/api/v1/items/{}?page={} in {}ms\n",
            (i / 60) % 60, i % 60, i % 1000, i % 8, i * 7919, i % 97, i % 1000, i % 7, i % 250
        ));
        if secrets && i.is_multiple_of(200) {
            text.push_str(&format!(
                "2024-05-01 10:00:00,000 DEBUG outbound GET https://svc:{i:08x}pw@api.internal/v2 Authorization: Bearer {:040x}\n",
                i * 0x9e37_79b9_7f4a_7c15
            ));
        }
        i += 1;
    }
    text
}

fn json_text(items: usize) -> String {
    serde_json::to_string_pretty(
        &(0..items)
            .map(|i| serde_json::json!({"id": i, "name": format!("item-{i}"), "sha": format!("{:040x}", i * 2654435761), "tags": ["a", "b"], "score": i as f64 / 7.0}))
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

fn redaction(c: &mut Criterion) {
    let redactor = SecretRedactor::new();
    let mut group = c.benchmark_group("secret redaction");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(8));
    for (name, text) in [
        ("log 1 MB, no secrets", log_text(1 << 20, false)),
        (
            "log 1 MB, a secret every 200 lines",
            log_text(1 << 20, true),
        ),
        ("JSON 1 MB", json_text(7000)),
    ] {
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(name, |b| b.iter(|| redactor.redact(black_box(&text))));
    }
    group.finish();
}

criterion_group!(benches, redaction);
criterion_main!(benches);
