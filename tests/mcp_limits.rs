//! Issue 15: the MCP proxy's transport never hangs and never hoards. Results over rmcp's 16 MiB
//! line or nested deeper than serde_json's 128 levels answer within seconds (condensed, or an
//! error naming the limit), a notification flood keeps the proxy small, and the proxy's
//! `condense_retrieve` keeps its name when the upstream has a tool of the same name.
//!
//! The client is the official Python SDK (`tests/mcp/fault_client.py`) or, where the client
//! must read slowly, a raw JSON-RPC client here; the upstream is `tests/mcp/faulty_server.py`
//! over stdio, or `tests/mcp/http_server.py` (the Python SDK) over streamable HTTP.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::mcp_faults::{
    Scratch, client, echo, error_of, faulty, python, script, stdio_proxy, stdio_proxy_with, text_of,
};

/// A result just over rmcp's 16 MiB line limit once escaped, as in the report.
const BIG_RESULT_BYTES: u64 = 17_000_000;

fn big(bytes: u64) -> Value {
    // The client's own timeout turns a hang into a failure instead of a stuck test.
    json!({"op": "call_tool", "name": "big", "arguments": {"bytes": bytes}, "timeout": 90})
}

fn elapsed_ms(step: &Value) -> u64 {
    step["elapsed_ms"].as_u64().expect("elapsed_ms")
}

#[test]
fn a_17_mb_result_is_condensed_instead_of_hanging() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("big-result");
    let upstream = faulty(&python, &scratch, "healthy", &[]);
    let steps = json!([big(BIG_RESULT_BYTES), echo("after")]);
    let report = client(&python, &steps, &stdio_proxy(&upstream, None));
    let steps = report["steps"].as_array().expect("steps");
    let condensed = text_of(&steps[0]);
    assert!(condensed.starts_with("[condense:"), "{}", steps[0]);
    assert!(
        condensed.contains("disk quota exceeded"),
        "the errors are kept: {condensed}"
    );
    assert!(elapsed_ms(&steps[0]) < 60_000, "{}", steps[0]);
    assert_eq!(text_of(&steps[1]), "echo: after");
}

#[test]
fn results_over_the_line_limit_or_too_deep_fail_at_once_naming_the_limit() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("over-limits");
    // 4 MiB of input reads lines of up to 16 MiB, rmcp's own limit: 17 MB is over it.
    let config = scratch.config("[limits]\nmax_input_bytes = 4194304\n");
    let upstream = faulty(&python, &scratch, "healthy", &[]);
    let steps = json!([
        big(BIG_RESULT_BYTES),
        {"op": "call_tool", "name": "deep", "arguments": {"depth": 200}, "timeout": 30},
        echo("after")
    ]);
    let report = client(&python, &steps, &stdio_proxy(&upstream, Some(&config)));
    let steps = report["steps"].as_array().expect("steps");

    let too_long = error_of(&steps[0]);
    assert!(
        too_long.contains("[limits] max_input_bytes") && too_long.contains("16.0 MiB"),
        "{too_long}"
    );
    assert!(elapsed_ms(&steps[0]) < 10_000, "{}", steps[0]);

    let too_deep = error_of(&steps[1]);
    assert!(
        too_deep.contains("nested 202 levels deep, more than the 128 levels"),
        "{too_deep}"
    );
    assert!(elapsed_ms(&steps[1]) < 5_000, "{}", steps[1]);

    // The connection is intact: nothing was left half-read.
    assert_eq!(text_of(&steps[2]), "echo: after");
    assert_eq!(scratch.spawns(), 1, "no restart");
}

/// `tests/mcp/http_server.py` (the Python SDK over streamable HTTP) on a free port, killed when
/// dropped.
struct HttpUpstream {
    process: std::process::Child,
    url: String,
}

impl HttpUpstream {
    fn start(python: &std::path::Path) -> Self {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr").port()
        };
        let server = script("http_server.py");
        let process = Command::new(python)
            .arg(&server)
            .arg(port.to_string())
            .current_dir(std::path::Path::new(&server).parent().expect("tests/mcp"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python runs");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "the HTTP upstream did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        HttpUpstream {
            process,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpUpstream {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

/// Over streamable HTTP, rmcp's client drops an event over 16 MiB; the proxy reads events as
/// large as stdio lines, so the 17 MB result is condensed there too. A too-deep one ends its
/// call at once (rmcp closes the connection; the next call reconnects).
#[test]
fn an_http_upstreams_17_mb_result_is_condensed_and_a_too_deep_one_ends_at_once() {
    let Some(python) = python() else { return };
    let upstream = HttpUpstream::start(&python);
    let steps = json!([
        big(BIG_RESULT_BYTES),
        {"op": "call_tool", "name": "deep", "arguments": {"depth": 200}, "timeout": 30},
        {"op": "call_tool", "name": "echo", "arguments": {"text": "after"}}
    ]);
    let target = stdio_proxy_with(&["--upstream-url".to_owned(), upstream.url.clone()]);
    let report = client(&python, &steps, &target);
    let steps = report["steps"].as_array().expect("steps");
    let condensed = text_of(&steps[0]);
    assert!(condensed.starts_with("[condense:"), "{}", steps[0]);
    assert!(elapsed_ms(&steps[0]) < 60_000, "{}", steps[0]);
    error_of(&steps[1]);
    assert!(elapsed_ms(&steps[1]) < 5_000, "{}", steps[1]);
    assert_eq!(text_of(&steps[2]), "echo: after");
}

#[test]
fn an_http_upstreams_event_over_the_limit_fails_its_call_naming_the_limit() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("http-over-limit");
    // 4 MiB of input reads events of up to 16 MiB: the 17 MB result is over it.
    let config = scratch.config("[limits]\nmax_input_bytes = 4194304\n");
    let upstream = HttpUpstream::start(&python);
    let steps = json!([
        big(BIG_RESULT_BYTES),
        {"op": "call_tool", "name": "echo", "arguments": {"text": "after"}}
    ]);
    let target = stdio_proxy_with(&[
        "--config".to_owned(),
        config,
        "--upstream-url".to_owned(),
        upstream.url.clone(),
    ]);
    let report = client(&python, &steps, &target);
    let steps = report["steps"].as_array().expect("steps");
    let error = error_of(&steps[0]);
    assert!(
        error.contains("[limits] max_input_bytes") && error.contains("16.0 MiB"),
        "{error}"
    );
    assert!(elapsed_ms(&steps[0]) < 10_000, "{}", steps[0]);
    assert_eq!(text_of(&steps[1]), "echo: after");
}

/// The default `upstream_timeout_ms` (120 s) must not cut a long call that shows it is alive.
#[test]
fn a_call_that_reports_progress_outlives_the_timeout_and_a_silent_one_does_not() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("progress-timeout");
    let config = scratch.config("[proxy]\nupstream_timeout_ms = 700\n");
    let upstream = faulty(&python, &scratch, "healthy", &[]);
    let slow = |progress: bool| json!({"op": "call_tool", "name": "slow", "arguments": {"seconds": 2, "progress": progress}, "timeout": 30});
    let steps = json!([slow(true), slow(false)]);
    let report = client(&python, &steps, &stdio_proxy(&upstream, Some(&config)));
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!(text_of(&steps[0]), "slept", "{}", steps[0]);
    let error = error_of(&steps[1]);
    assert!(
        error.contains("did not answer tools/call within 700 ms"),
        "{error}"
    );
}

#[test]
fn the_proxys_retrieve_tool_keeps_its_name_and_the_upstreams_is_renamed() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("collide");
    let upstream = faulty(&python, &scratch, "healthy", &["--collide"]);
    let retrieve = |name: &str| json!({"op": "call_tool", "name": name, "arguments": {"ref": "cx_0000000000000000"}});
    let steps = json!([
        retrieve("condense_retrieve"),
        {"op": "list_tools"},
        retrieve("condense_retrieve"),
        retrieve("condense_retrieve_upstream")
    ]);
    let report = client(&python, &steps, &stdio_proxy(&upstream, None));
    let steps = report["steps"].as_array().expect("steps");
    // Before and after the listing, the proxy answers: an unknown ref is its error.
    for step in [&steps[0], &steps[2]] {
        assert_eq!(step["isError"], true, "{step}");
        assert!(text_of(step).contains("cx_0000000000000000"), "{step}");
    }
    let tools = steps[1]["tools"].as_array().expect("tools");
    let named = |name: &str| tools.iter().filter(|tool| tool["name"] == name).count();
    assert_eq!(named("condense_retrieve"), 1, "{tools:?}");
    assert_eq!(named("condense_retrieve_upstream"), 1, "{tools:?}");
    let ours = tools
        .iter()
        .find(|tool| tool["name"] == "condense_retrieve")
        .expect("listed");
    assert!(
        ours["description"]
            .as_str()
            .is_some_and(|text| text.contains("condensed result")),
        "{ours}"
    );
    // The upstream's tool stays reachable under its new name.
    assert_eq!(text_of(&steps[3]), "upstream condense_retrieve");
}

/// The peak resident size of a process, from `/proc/<pid>/status`, in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// A raw JSON-RPC client over the proxy's stdio: it can stop reading, which the SDK cannot.
struct RawClient {
    stdin: std::process::ChildStdin,
    stdout: BufReader<std::process::ChildStdout>,
}

impl RawClient {
    fn send(&mut self, message: &Value) {
        writeln!(self.stdin, "{message}").expect("write to the proxy");
        self.stdin.flush().expect("flush");
    }

    /// Reads messages until the answer to `id`; returns it and the notifications before it,
    /// counted by method.
    fn answer(&mut self, id: u64) -> (Value, std::collections::BTreeMap<String, u64>) {
        let mut notifications = std::collections::BTreeMap::new();
        let mut line = String::new();
        loop {
            line.clear();
            let read = self
                .stdout
                .read_line(&mut line)
                .expect("read from the proxy");
            assert!(read > 0, "the proxy closed its stdout");
            let message: Value = serde_json::from_str(&line).expect("JSON-RPC");
            if message["id"] == id && message.get("method").is_none() {
                return (message, notifications);
            }
            if let Some(method) = message["method"].as_str() {
                *notifications.entry(method.to_owned()).or_default() += 1;
            }
        }
    }
}

#[test]
fn a_notification_flood_to_a_slow_client_keeps_the_proxy_small_and_the_call_answers() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("flood");
    let upstream = faulty(&python, &scratch, "healthy", &[]);
    let log = std::fs::File::create(scratch.path("proxy.log")).expect("log file");
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_condense"))
        .arg("proxy")
        .arg("--")
        .args(&upstream)
        .env("CONDENSE_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(log)
        .spawn()
        .expect("proxy starts");
    let mut client = RawClient {
        stdin: proxy.stdin.take().expect("stdin"),
        stdout: BufReader::new(proxy.stdout.take().expect("stdout")),
    };
    client.send(
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"}}}),
    );
    client.answer(1);
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    let count = 200_000;
    let started = Instant::now();
    client.send(
        &json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "flood", "arguments": {"count": count}, "_meta": {"progressToken": "flood"}}}),
    );
    // A client busy elsewhere: the proxy's stdout fills while the upstream keeps sending.
    std::thread::sleep(Duration::from_secs(3));
    let (answer, notifications) = client.answer(2);
    let elapsed = started.elapsed();
    let peak_mib = peak_rss_kib(proxy.id()) / 1024;
    // The rest of the queue drains while the client reads on; then the drops are reported.
    let RawClient { stdin, stdout } = client;
    let drain = std::thread::spawn(move || std::io::copy(&mut { stdout }, &mut std::io::sink()));
    let reported = "progress updates and log messages were dropped";
    let deadline = Instant::now() + Duration::from_secs(20);
    let log = loop {
        let log = std::fs::read_to_string(scratch.path("proxy.log")).expect("log");
        if log.contains(reported) || Instant::now() > deadline {
            break log;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    drop(stdin);
    let _ = proxy.wait();
    let _ = drain.join();

    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!("flooded {count}"),
        "{answer}"
    );
    let relayed = |method: &str| notifications.get(method).copied().unwrap_or_default();
    eprintln!(
        "flood of {count} log messages and {count} progress updates: answered in {elapsed:?}, \
         proxy peak RSS {peak_mib} MiB, relayed before the answer: {} log messages, {} progress",
        relayed("notifications/message"),
        relayed("notifications/progress"),
    );
    assert!(
        peak_mib < 100,
        "the proxy grew to {peak_mib} MiB for the flood"
    );
    assert!(relayed("notifications/message") > 0, "{notifications:?}");
    assert!(log.contains(reported), "the drops are reported: {log}");
}
