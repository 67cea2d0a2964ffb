//! The MCP proxy under load: latency, throughput and memory of the real `condense` binary in
//! HTTP mode, and a soak that watches its memory over minutes.
//!
//! The scenario is `tests/support/load.rs`'s: `condense proxy --listen` on loopback in front of
//! `server-filesystem` (one child process per client session), with a fake LLM in this process
//! that answers after a fixed latency and counts the requests it has in flight. Every answer is
//! checked (small files byte for byte, large ones an LLM summary of that file within the
//! budget, with its ref, retrievable); any wrong answer makes the run fail.
//!
//! ```text
//! eval "$(scripts/mcp/install.sh)"
//! cargo bench --bench proxy_load                      # bursts of 1,000 concurrent calls
//! cargo bench --bench proxy_load -- --soak 600        # 10 minutes of steady load
//! ```
//!
//! Options: `--calls N` (1000), `--sessions N` (20), `--rounds N` (3), `--llm-latency-ms N`
//! (50), `--llm-concurrency N` (4); soak: `--soak SECONDS`, `--rate CALLS_PER_SECOND` (100),
//! `--sample-every SECONDS` (5).

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "../tests/support/mod.rs"]
mod support;

use support::fake_llm::{FakeLlm, Reply};
use support::load::{self, Checker, Cpu, Files, Kind, Memory, Percentiles, Proxy, Sample};

/// The run's settings, from the command line.
#[derive(Debug, Clone)]
struct Options {
    calls: usize,
    sessions: usize,
    rounds: usize,
    llm_latency: Duration,
    llm_concurrency: usize,
    soak: Option<Duration>,
    rate: f64,
    sample_every: Duration,
}

impl Options {
    fn parse() -> Result<Options, String> {
        let mut options = Options {
            calls: 1000,
            sessions: 20,
            rounds: 3,
            llm_latency: Duration::from_millis(50),
            llm_concurrency: 4,
            soak: None,
            rate: 100.0,
            sample_every: Duration::from_secs(5),
        };
        // `cargo bench` adds `--bench`; everything else is ours.
        let mut args = std::env::args().skip(1).filter(|arg| arg != "--bench");
        while let Some(flag) = args.next() {
            let mut value = |name: &str| -> Result<f64, String> {
                let text = args.next().ok_or_else(|| format!("{name} needs a value"))?;
                text.parse::<f64>()
                    .ok()
                    .filter(|number| *number > 0.0 && number.is_finite())
                    .ok_or_else(|| format!("{name} {text}: expected a positive number"))
            };
            match flag.as_str() {
                "--calls" => options.calls = value("--calls")? as usize,
                "--sessions" => options.sessions = value("--sessions")? as usize,
                "--rounds" => options.rounds = value("--rounds")? as usize,
                "--llm-latency-ms" => {
                    options.llm_latency = Duration::from_secs_f64(value("--llm-latency-ms")? / 1e3);
                }
                "--llm-concurrency" => {
                    options.llm_concurrency = value("--llm-concurrency")? as usize;
                }
                "--soak" => options.soak = Some(Duration::from_secs_f64(value("--soak")?)),
                "--rate" => options.rate = value("--rate")?,
                "--sample-every" => {
                    options.sample_every = Duration::from_secs_f64(value("--sample-every")?);
                }
                other => {
                    return Err(format!(
                        "unknown option {other} (see benches/proxy_load.rs)"
                    ));
                }
            }
        }
        if options.sessions == 0 || options.calls < options.sessions {
            return Err("need at least one session and one call per session".into());
        }
        Ok(options)
    }
}

/// What the run set up: the fake LLM, the files, the proxy and the client sessions.
struct Rig {
    llm: FakeLlm,
    files: Arc<Files>,
    proxy: Proxy,
    sessions: Vec<Arc<condense::mcp::testing::HttpClient>>,
    checker: Checker,
}

async fn start(options: &Options, large_files: usize, cache: &str) -> Rig {
    let latency = options.llm_latency;
    let llm = FakeLlm::with_handler(move |request| {
        Reply::completion(&load::summary_for(&request.body)).after(latency)
    })
    .await;
    let files = Arc::new(Files::write("bench", 200, large_files, 120));
    let config = files.root.join("condense.toml");
    load::write_config(&config, &llm.url(), options.llm_concurrency, cache);
    let node_modules = load::node_modules().expect("checked in main");
    let proxy = Proxy::start(
        env!("CARGO_BIN_EXE_condense").as_ref(),
        &config,
        &load::filesystem_server(&node_modules, &files.root),
        &files.root.join("proxy.log"),
    );
    let sessions = load::connect_sessions(&proxy.url(), options.sessions).await;
    let checker = Checker::new(Arc::clone(&files));
    Rig {
        llm,
        files,
        proxy,
        sessions,
        checker,
    }
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

fn memory(proxy: &Proxy) -> Memory {
    proxy.memory().unwrap_or(Memory {
        rss_kib: 0,
        peak_kib: 0,
    })
}

fn cpu(proxy: &Proxy) -> Cpu {
    proxy.cpu().unwrap_or_default()
}

/// CPU seconds of this process: the client sessions and the fake LLM.
fn own_cpu() -> f64 {
    load::cpu_seconds("/proc/self/stat").unwrap_or(0.0)
}

fn print_latencies(samples: &[Sample]) {
    let mut by_kind: BTreeMap<Kind, Vec<Duration>> = BTreeMap::new();
    for sample in samples {
        by_kind.entry(sample.kind).or_default().push(sample.latency);
    }
    println!(
        "  {:<18} {:>6} {:>9} {:>9} {:>9} {:>9}",
        "kind", "count", "p50 ms", "p90 ms", "p99 ms", "max ms"
    );
    let all = samples.iter().map(|sample| sample.latency).collect();
    let rows = std::iter::once(("all".to_owned(), all))
        .chain(by_kind.into_iter().map(|(kind, l)| (kind.to_string(), l)));
    for (label, latencies) in rows {
        if let Some(p) = Percentiles::of(latencies) {
            println!(
                "  {label:<18} {:>6} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
                p.count, p.p50, p.p90, p.p99, p.max
            );
        }
    }
}

/// `rounds` bursts of `calls` concurrent calls; returns the number of wrong answers.
async fn bursts(options: &Options) -> usize {
    let distinct_per_round = (0..options.calls).filter(|i| i % 10 >= 7).count() / 2;
    let rig = start(options, distinct_per_round * options.rounds, "").await;
    let idle = memory(&rig.proxy);
    println!(
        "proxy pid {}: {} sessions connected, RSS {:.1} MiB",
        rig.proxy.pid(),
        rig.sessions.len(),
        mib(idle.rss_kib)
    );
    let mut wrong = 0;
    for round in 0..options.rounds {
        let plan = load::plan(options.calls, &rig.files, 20, round);
        let llm_before = rig.llm.requests();
        let before = memory(&rig.proxy);
        let (cpu_before, own_before) = (cpu(&rig.proxy), own_cpu());
        let burst = load::burst(&rig.sessions, &rig.checker, &plan).await;
        let (cpu_after, own_after) = (cpu(&rig.proxy), own_cpu());
        let after = memory(&rig.proxy);
        let errors = burst.errors();
        wrong += errors.len();
        println!(
            "\nround {}: {} calls in flight at once over {} sessions ({} requests with the retrievals)",
            round + 1,
            options.calls,
            rig.sessions.len(),
            burst.samples.len()
        );
        println!(
            "  errors {}, wall {:.2} s, throughput {:.0} requests/s, client max in flight {}",
            errors.len(),
            burst.wall.as_secs_f64(),
            burst.samples.len() as f64 / burst.wall.as_secs_f64(),
            burst.max_in_flight
        );
        for error in errors.iter().take(5) {
            println!("  wrong: {error}");
        }
        print_latencies(&burst.samples);
        println!(
            "  CPU during the burst: proxy {:.2} s, upstream servers {:.2} s, client and fake LLM {:.2} s",
            cpu_after.proxy - cpu_before.proxy,
            cpu_after.upstreams - cpu_before.upstreams,
            own_after - own_before
        );
        println!(
            "  LLM: {} requests (expected {}), max in flight {} (max_concurrency {})",
            rig.llm.requests() - llm_before,
            load::distinct_large_reads(&plan) + 1,
            rig.llm.max_in_flight(),
            options.llm_concurrency
        );
        println!(
            "  proxy RSS before {:.1} MiB, after {:.1} MiB, peak so far (VmHWM) {:.1} MiB",
            mib(before.rss_kib),
            mib(after.rss_kib),
            mib(after.peak_kib)
        );
    }
    if rig.llm.max_in_flight() > options.llm_concurrency {
        println!("FAIL: the LLM had more requests in flight than max_concurrency");
        wrong += 1;
    }
    load::close_sessions(rig.sessions).await;
    wrong
}

/// One RSS sample of the soak.
#[derive(Debug, Clone, Copy)]
struct MemorySample {
    at: Duration,
    memory: Memory,
    requests: usize,
}

/// Steady load at `rate` calls per second for `length`; returns the number of wrong answers.
async fn soak(options: &Options, length: Duration) -> usize {
    // Bounds small enough that the first two minutes fill them (about 1,700 condensed results
    // and 900 originals at the default rate): after that the soak shows whether memory levels
    // off at the bounds or keeps growing with the number of calls.
    let cache = "[cache]\nmax_bytes = 2097152\noriginals_max_bytes = 8388608\n";
    let rig = start(options, 2000, cache).await;
    println!(
        "soak: {:.0} s at {} calls/s over {} sessions; [cache] max_bytes 2 MiB, originals_max_bytes 8 MiB; \
         {} large files of {} KiB; proxy pid {}",
        length.as_secs_f64(),
        options.rate,
        rig.sessions.len(),
        rig.files.large.len(),
        rig.files.large[0].text.len() / 1024,
        rig.proxy.pid()
    );
    let samples: Arc<Mutex<Vec<Sample>>> = Arc::default();
    let in_flight = Arc::new(tokio::sync::Semaphore::new(2000));
    let started = Instant::now();
    let mut memory_samples = vec![MemorySample {
        at: Duration::ZERO,
        memory: memory(&rig.proxy),
        requests: 0,
    }];
    let mut next_sample = options.sample_every;
    let mut ticker = tokio::time::interval(Duration::from_secs_f64(1.0 / options.rate));
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let mut calls = 0usize;
    let mut saturated = 0usize;
    println!(
        "{:>7} {:>9} {:>9} {:>9} {:>7} {:>6}",
        "t (s)", "RSS MiB", "peak MiB", "requests", "errors", "LLM"
    );
    'rounds: for round in 1.. {
        for call in load::plan(1000, &rig.files, 5, round) {
            ticker.tick().await;
            let now = started.elapsed();
            if now >= next_sample {
                let done = samples.lock().expect("samples").clone();
                let sample = MemorySample {
                    at: now,
                    memory: memory(&rig.proxy),
                    requests: done.len(),
                };
                println!(
                    "{:>7.0} {:>9.1} {:>9.1} {:>9} {:>7} {:>6}",
                    now.as_secs_f64(),
                    mib(sample.memory.rss_kib),
                    mib(sample.memory.peak_kib),
                    sample.requests,
                    done.iter().filter(|s| s.error.is_some()).count(),
                    rig.llm.requests()
                );
                memory_samples.push(sample);
                next_sample += options.sample_every;
            }
            if now >= length {
                break 'rounds;
            }
            let Ok(permit) = Arc::clone(&in_flight).try_acquire_owned() else {
                // The proxy is not keeping up: skip rather than queue without end.
                saturated += 1;
                continue;
            };
            let client = Arc::clone(&rig.sessions[calls % rig.sessions.len()]);
            let (checker, samples) = (rig.checker.clone(), Arc::clone(&samples));
            tokio::spawn(async move {
                let done = checker.run(&client, &call).await;
                samples.lock().expect("samples").extend(done);
                drop(permit);
            });
            calls += 1;
        }
    }
    // Let the calls in flight finish.
    let _ = in_flight.acquire_many(2000).await;
    let samples = samples.lock().expect("samples").clone();
    let elapsed = started.elapsed();
    let errors: Vec<&str> = samples.iter().filter_map(|s| s.error.as_deref()).collect();
    println!(
        "\n{} calls ({} requests) in {:.0} s: {:.1} requests/s; {} calls skipped because 2000 were in flight; errors {}",
        calls,
        samples.len(),
        elapsed.as_secs_f64(),
        samples.len() as f64 / elapsed.as_secs_f64(),
        saturated,
        errors.len()
    );
    for error in errors.iter().take(5) {
        println!("  wrong: {error}");
    }
    print_latencies(&samples);
    println!(
        "  LLM: {} requests, max in flight {} (max_concurrency {})",
        rig.llm.requests(),
        rig.llm.max_in_flight(),
        options.llm_concurrency
    );
    let end = memory(&rig.proxy);
    println!(
        "  proxy RSS at the end {:.1} MiB, peak (VmHWM) {:.1} MiB",
        mib(end.rss_kib),
        mib(end.peak_kib)
    );
    memory_verdict(&memory_samples);
    let mut wrong = errors.len();
    if rig.llm.max_in_flight() > options.llm_concurrency {
        println!("FAIL: the LLM had more requests in flight than max_concurrency");
        wrong += 1;
    }
    load::close_sessions(rig.sessions).await;
    wrong
}

/// The soak's memory verdict: growth from minute 2 to the end, the least-squares slope of RSS
/// over that span, and over each half of it. Memory held by bounded caches grows ever more
/// slowly as they fill; a leak grows at the same pace throughout.
fn memory_verdict(samples: &[MemorySample]) {
    let warm = Duration::from_secs(120);
    let points: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.at >= warm)
        .map(|s| (s.at.as_secs_f64() / 60.0, mib(s.memory.rss_kib)))
        .collect();
    if points.len() < 4 {
        println!("  memory: fewer than 4 samples after minute 2; no verdict");
        return;
    }
    let (first, last) = (points[0], points[points.len() - 1]);
    let middle = points.len() / 2;
    let (early, late) = (slope(&points[..=middle]), slope(&points[middle..]));
    let (low, high) = points.iter().fold((f64::MAX, f64::MIN), |(low, high), p| {
        (low.min(p.1), high.max(p.1))
    });
    println!(
        "  memory from {:.0} s to {:.0} s ({} samples): RSS {:.1} → {:.1} MiB ({:+.1} MiB), range {:.1}–{:.1} MiB",
        first.0 * 60.0,
        last.0 * 60.0,
        points.len(),
        first.1,
        last.1,
        last.1 - first.1,
        low,
        high,
    );
    println!(
        "  slope {:+.3} MiB/min overall; first half {:+.3}, second half {:+.3} MiB/min",
        slope(&points),
        early,
        late
    );
    // Levelling off: the second half grows at most a quarter as fast as the first, and at
    // most 0.1 MiB/min (6 MiB an hour). A steady leak keeps the same slope in both halves.
    let levelling_off = late <= 0.1 && (late <= early / 4.0 || late <= 0.0);
    println!(
        "  verdict: {}",
        if levelling_off {
            "levelling off"
        } else {
            "GROWING"
        }
    );
}

/// The least-squares slope of `points` (x in minutes, y in MiB).
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let covariance: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    let variance: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    if variance > 0.0 {
        covariance / variance
    } else {
        0.0
    }
}

fn main() -> ExitCode {
    let options = match Options::parse() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("proxy_load: {message}");
            return ExitCode::FAILURE;
        }
    };
    if load::node_modules().is_none() {
        return ExitCode::SUCCESS;
    }
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    println!(
        "condense proxy --listen (release build) in front of server-filesystem, one upstream per session; \
         fake LLM {} ms, [llm] max_concurrency {}; threshold {} tokens, budget {}",
        options.llm_latency.as_millis(),
        options.llm_concurrency,
        load::THRESHOLD_TOKENS,
        load::BUDGET_TOKENS
    );
    let wrong = runtime.block_on(async {
        match options.soak {
            Some(length) => soak(&options, length).await,
            None => bursts(&options).await,
        }
    });
    if wrong == 0 {
        ExitCode::SUCCESS
    } else {
        println!("FAIL: {wrong} wrong answers");
        ExitCode::FAILURE
    }
}
