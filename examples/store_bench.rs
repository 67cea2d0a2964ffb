//! Latency of tool calls with the disk store against the memory store: the p50 of pass-through
//! calls (small outputs, which never touch the store) and of condensed calls (each a new
//! output, so each keeps a new original and misses the result cache).
//!
//! ```text
//! cargo run --release --example store_bench -- [FILE] [--calls 200]
//! ```
//!
//! Prints one line per store and round (two rounds, alternated): `store=<name> passthrough_p50_us=<µs> condensed_p50_us=<µs>`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use condense::store::DiskStore;
use condense::{Condenser, Config, Mode, Request};

fn p50(mut samples: Vec<Duration>) -> f64 {
    samples.sort();
    samples[samples.len() / 2].as_secs_f64() * 1e6
}

/// Numbers every condensed output, across rounds, so none is ever a cache hit.
static OUTPUTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

async fn measure(condenser: &Condenser, text: &str, calls: usize) -> (f64, f64) {
    let small = "a short tool result that passes through\n".repeat(10);
    let mut passthrough = Vec::with_capacity(calls);
    let mut condensed = Vec::with_capacity(calls);
    for _ in 0..calls {
        let i = OUTPUTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let request = Request::new("read_file");
        let started = Instant::now();
        let out = condenser.condense(&small, &request).await;
        passthrough.push(started.elapsed());
        assert!(!out.was_condensed());

        // A new output each call: a new original to keep, and no cached result.
        let output = format!("{text}call {i}\n");
        let request = Request::new("read_file")
            .with_budget_tokens(1000)
            .with_mode(Mode::Extract);
        let started = Instant::now();
        let out = condenser.condense(&output, &request).await;
        condensed.push(started.elapsed());
        assert!(out.was_condensed());
    }
    condenser.flush().await;
    (p50(passthrough), p50(condensed))
}

fn main() {
    let mut file = "examples/data/zookeeper.log".to_owned();
    let mut calls = 200;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--calls" => calls = args.next().and_then(|n| n.parse().ok()).unwrap_or(calls),
            _ => file = arg,
        }
    }
    let text = std::fs::read_to_string(&file).expect("the input file");
    let dir = std::env::temp_dir().join(format!("condense-store-bench-{}", std::process::id()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let memory = Condenser::builder(Config::default())
            .without_llm()
            .build()
            .expect("memory condenser");
        let disk = DiskStore::open(&dir, 1 << 30, Duration::from_secs(3600)).expect("disk store");
        let disk = Condenser::builder(Config::default())
            .without_llm()
            .store_backend(Arc::new(disk))
            .build()
            .expect("disk condenser");
        // One untimed round each, so both measure a warm process.
        measure(&memory, &text, 5).await;
        measure(&disk, &text, 5).await;
        // Alternated, so a drift in the machine's load does not favour one store.
        let rounds = [("memory", &memory), ("disk", &disk)].repeat(2);
        for (name, condenser) in rounds {
            let (passthrough, condensed) = measure(condenser, &text, calls).await;
            println!(
                "store={name} passthrough_p50_us={passthrough:.1} condensed_p50_us={condensed:.1} calls={calls} bytes={}",
                text.len()
            );
        }
    });
    let _ = std::fs::remove_dir_all(&dir);
}
