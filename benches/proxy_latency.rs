//! Latency the MCP proxy adds to a pass-through `tools/call`.
//!
//! Starts `server-everything` in streamable-HTTP mode on loopback, and the proxy in front of it
//! (in this process, HTTP on loopback too). Then calls the `echo` tool sequentially, first
//! directly, then through the proxy, and prints p50, p99 and mean of each and the difference.
//!
//! Needs the test rig: `eval "$(scripts/mcp/install.sh)"` then
//! `cargo bench --bench proxy_latency` (optionally `-- CALLS`, default 2000).

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use condense::mcp::testing::{HttpClient, serve_http};
use condense::mcp::{ProxyOptions, UpstreamSpec};
use serde_json::json;
use tokio_util::sync::CancellationToken;

const WARMUP_CALLS: usize = 200;

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|addr| addr.port())
        .expect("a free loopback port")
}

async fn wait_until_up(url: &str) -> HttpClient {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        match HttpClient::connect(url).await {
            Ok(client) => return client,
            Err(error) if Instant::now() > deadline => panic!("{url} did not come up: {error}"),
            Err(_) => tokio::time::sleep(Duration::from_millis(100)).await,
        }
    }
}

/// Sequential echo calls; returns each call's latency.
async fn measure(client: &HttpClient, calls: usize) -> Vec<Duration> {
    let arguments = json!({"message": "latency probe"});
    for _ in 0..WARMUP_CALLS {
        client
            .call_tool("echo", arguments.clone())
            .await
            .expect("echo");
    }
    let mut latencies = Vec::with_capacity(calls);
    for _ in 0..calls {
        let started = Instant::now();
        let result = client
            .call_tool("echo", arguments.clone())
            .await
            .expect("echo");
        latencies.push(started.elapsed());
        assert_eq!(result["content"][0]["text"], "Echo: latency probe");
    }
    latencies.sort();
    latencies
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index.min(sorted.len() - 1)]
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn report(label: &str, sorted: &[Duration]) -> (f64, f64) {
    let mean = sorted.iter().sum::<Duration>() / sorted.len() as u32;
    let (p50, p99) = (
        millis(percentile(sorted, 0.50)),
        millis(percentile(sorted, 0.99)),
    );
    println!(
        "{label:<14} calls={} p50={p50:.3} ms p99={p99:.3} ms mean={:.3} ms",
        sorted.len(),
        millis(mean)
    );
    (p50, p99)
}

fn main() {
    let Some(node_modules) = std::env::var_os("CONDENSE_TEST_NODE_MODULES") else {
        eprintln!("skipping: run `eval \"$(scripts/mcp/install.sh)\"` first");
        return;
    };
    // `cargo bench` passes `--bench`; a bare number is the call count.
    let calls = std::env::args()
        .skip(1)
        .find_map(|arg| arg.parse::<usize>().ok())
        .unwrap_or(2000);
    let server = std::path::Path::new(&node_modules)
        .join("@modelcontextprotocol/server-everything/dist/index.js");
    let upstream_port = free_port();
    let _upstream = KillOnDrop(
        Command::new("node")
            .arg(&server)
            .arg("streamableHttp")
            .env("PORT", upstream_port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts server-everything"),
    );
    let upstream_url = format!("http://127.0.0.1:{upstream_port}/mcp");

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        let direct = wait_until_up(&upstream_url).await;
        let shutdown = CancellationToken::new();
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .expect("bind");
        let proxy_url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
        let options = ProxyOptions::new(UpstreamSpec::Url(upstream_url.clone()));
        let proxy = tokio::spawn(serve_http(options, listener, shutdown.clone()));
        let proxied = wait_until_up(&proxy_url).await;

        println!("pass-through tools/call `echo`, sequential, loopback HTTP, {WARMUP_CALLS} warm-up calls each");
        let (direct_p50, direct_p99) = report("direct", &measure(&direct, calls).await);
        let (proxy_p50, proxy_p99) = report("via proxy", &measure(&proxied, calls).await);
        println!(
            "added by the proxy: p50 {:+.3} ms, p99 {:+.3} ms",
            proxy_p50 - direct_p50,
            proxy_p99 - direct_p99
        );
        direct.close().await;
        proxied.close().await;
        shutdown.cancel();
        let _ = proxy.await;
    });
}
