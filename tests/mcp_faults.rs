//! The MCP proxy in front of an upstream server that fails: crashes mid-call, exits at start,
//! writes garbage, answers slowly, or (over HTTP) is down. Each test drives the `condense`
//! binary with a real client (the official Python SDK, `tests/mcp/fault_client.py`) in front of
//! `tests/mcp/faulty_server.py`, and checks the error the client sees, that the proxy still
//! answers afterwards, and how often the upstream was started.
//!
//! The client needs `CONDENSE_TEST_PYTHON` from `scripts/mcp/install.sh`. Without it the tests
//! print a notice and pass, except under `CI`, where it is a failure.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The interpreter with the MCP SDK; it also runs the (standard-library only) faulty server.
pub(crate) fn python() -> Option<PathBuf> {
    match std::env::var_os("CONDENSE_TEST_PYTHON") {
        Some(python) => Some(PathBuf::from(python)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but CONDENSE_TEST_PYTHON is not: run scripts/mcp/install.sh"
            );
            eprintln!("skipping: run `eval \"$(scripts/mcp/install.sh)\"` to test the MCP proxy");
            None
        }
    }
}

pub(crate) fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/mcp")
        .join(name)
        .display()
        .to_string()
}

/// A scratch directory with the spawn and event logs the faulty server writes.
pub(crate) struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    pub(crate) fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("condense-mcp-faults-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch { dir }
    }

    pub(crate) fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }

    fn lines(&self, name: &str) -> Vec<String> {
        std::fs::read_to_string(self.dir.join(name))
            .unwrap_or_default()
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// How many times the faulty server started.
    pub(crate) fn spawns(&self) -> usize {
        self.lines("spawns").len()
    }

    pub(crate) fn config(&self, text: &str) -> String {
        let path = self.path("condense.toml");
        std::fs::write(&path, text).expect("write config");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A secret-looking argument: no error the client sees may contain it.
const SECRET: &str = "s3cr3t-token-value";

/// The faulty server's command line, with its logs in `scratch`.
pub(crate) fn faulty(python: &Path, scratch: &Scratch, mode: &str, extra: &[&str]) -> Vec<String> {
    let mut command = vec![
        python.display().to_string(),
        script("faulty_server.py"),
        mode.to_owned(),
        "--spawn-log".to_owned(),
        scratch.path("spawns"),
        "--event-log".to_owned(),
        scratch.path("events"),
        "--secret".to_owned(),
        SECRET.to_owned(),
    ];
    command.extend(extra.iter().map(|arg| (*arg).to_owned()));
    command
}

/// What the proxy calls the upstream in errors: the program's file name.
fn label(python: &Path) -> String {
    python
        .file_name()
        .expect("a file name")
        .to_string_lossy()
        .into_owned()
}

/// Runs `steps` with the Python client against `target` ("stdio" + command, or "http" + URL).
pub(crate) fn client(python: &Path, steps: &Value, target: &[String]) -> Value {
    let output = Command::new(python)
        .arg(script("fault_client.py"))
        .arg(steps.to_string())
        .args(target)
        .stderr(Stdio::inherit())
        .output()
        .expect("python runs");
    assert!(output.status.success(), "client failed: {output:?}");
    serde_json::from_slice(&output.stdout).expect("client prints JSON")
}

/// The client's target: `condense proxy` over stdio with `upstream` (a command after `--`).
pub(crate) fn stdio_proxy(upstream: &[String], config: Option<&str>) -> Vec<String> {
    let mut args = Vec::new();
    if let Some(config) = config {
        args.extend(["--config".to_owned(), config.to_owned()]);
    }
    args.push("--".to_owned());
    args.extend(upstream.iter().cloned());
    stdio_proxy_with(&args)
}

/// The client's target: `condense proxy ARGS` over stdio.
pub(crate) fn stdio_proxy_with(args: &[String]) -> Vec<String> {
    let mut target = vec![
        "stdio".to_owned(),
        env!("CARGO_BIN_EXE_condense").to_owned(),
        "proxy".to_owned(),
    ];
    target.extend(args.iter().cloned());
    target
}

/// `condense proxy --listen` on a free port, killed when dropped.
struct HttpProxy {
    process: Child,
    addr: String,
}

impl HttpProxy {
    fn start(upstream_args: &[String]) -> Self {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr").port()
        };
        let addr = format!("127.0.0.1:{port}");
        let process = Command::new(env!("CARGO_BIN_EXE_condense"))
            .args(["proxy", "--listen", &addr])
            .args(upstream_args)
            .env("CONDENSE_LOG", "warn")
            .stdin(Stdio::null())
            .spawn()
            .expect("proxy starts");
        let mut proxy = HttpProxy { process, addr };
        let deadline = Instant::now() + Duration::from_secs(20);
        while proxy.health().is_none() {
            assert!(Instant::now() < deadline, "health endpoint did not answer");
            std::thread::sleep(Duration::from_millis(50));
        }
        proxy
    }

    /// A proxy in front of the upstream `command` (program and arguments).
    fn in_front_of(command: Vec<String>) -> Self {
        let mut args = vec!["--".to_owned()];
        args.extend(command);
        HttpProxy::start(&args)
    }

    fn url(&self) -> Vec<String> {
        vec!["http".to_owned(), format!("http://{}/mcp", self.addr)]
    }

    fn health(&mut self) -> Option<String> {
        assert!(
            self.process.try_wait().expect("status").is_none(),
            "the proxy exited"
        );
        let mut stream = std::net::TcpStream::connect(&self.addr).ok()?;
        stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
        write!(
            stream,
            "GET /health HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        )
        .ok()?;
        let mut response = String::new();
        stream.read_to_string(&mut response).ok()?;
        response.contains("\"status\":\"ok\"").then_some(response)
    }
}

impl Drop for HttpProxy {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

pub(crate) fn text_of(result: &Value) -> String {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|block| block["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn error_of(result: &Value) -> String {
    result["error"]
        .as_str()
        .unwrap_or_else(|| panic!("expected an error, got {result}"))
        .to_owned()
}

pub(crate) fn echo(text: &str) -> Value {
    json!({"op": "call_tool", "name": "echo", "arguments": {"text": text}})
}

/// A crash mid-call: the pending call gets an error naming the program and the exit status
/// (not its arguments), the next call is served by a restarted upstream, and the client is
/// told the tools may have changed.
fn assert_crash_then_restart(python: &Path, report: &Value, scratch: &Scratch) {
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!(text_of(&steps[0]), "echo: before", "{}", steps[0]);
    let error = error_of(&steps[1]);
    assert!(
        error.contains(&format!(
            "the upstream MCP server `{}` exited (exit status: 1) while handling this request",
            label(python)
        )),
        "{error}"
    );
    assert!(
        !error.contains(SECRET) && !error.contains("faulty_server"),
        "the error shows the command line: {error}"
    );
    assert_eq!(text_of(&steps[2]), "echo: after", "{}", steps[2]);
    let tools = steps[3]["tools"].as_array().expect("tools listed");
    assert!(tools.iter().any(|tool| tool["name"] == "echo"), "{tools:?}");
    assert_eq!(scratch.spawns(), 2, "one start, one restart");
    assert!(
        report["notifications"]
            .as_array()
            .expect("notifications")
            .iter()
            .any(|method| method == "notifications/tools/list_changed"),
        "{report}"
    );
}

fn crash_steps() -> Value {
    json!([echo("before"), echo("crashes"), echo("after"), {"op": "list_tools"}])
}

#[test]
fn crash_mid_call_is_a_clear_error_and_the_next_call_restarts_the_upstream() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("crash-stdio");
    let upstream = faulty(&python, &scratch, "crash-mid-call", &["--good-calls", "1"]);
    let report = client(&python, &crash_steps(), &stdio_proxy(&upstream, None));
    assert_crash_then_restart(&python, &report, &scratch);
}

#[test]
fn crash_mid_call_over_http_restarts_the_sessions_upstream() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("crash-http");
    let mut proxy = HttpProxy::in_front_of(faulty(
        &python,
        &scratch,
        "crash-mid-call",
        &["--good-calls", "1"],
    ));
    let report = client(&python, &crash_steps(), &proxy.url());
    assert_crash_then_restart(&python, &report, &scratch);
    assert!(proxy.health().is_some(), "the proxy still serves /health");
}

#[test]
fn a_restarted_upstream_gets_the_sessions_log_level_and_subscriptions_again() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("setup-replay");
    let upstream = faulty(&python, &scratch, "crash-mid-call", &["--good-calls", "1"]);
    let steps = json!([
        {"op": "set_level", "level": "debug"},
        {"op": "subscribe", "uri": "file:///kept"},
        {"op": "subscribe", "uri": "file:///dropped"},
        {"op": "unsubscribe", "uri": "file:///dropped"},
        echo("before"),
        echo("crashes"),
        echo("after"),
    ]);
    let report = client(&python, &steps, &stdio_proxy(&upstream, None));
    let steps = report["steps"].as_array().expect("steps");
    for step in &steps[..4] {
        assert!(step.get("error").is_none(), "{step}");
    }
    assert!(!error_of(&steps[5]).is_empty(), "{}", steps[5]);
    assert_eq!(text_of(&steps[6]), "echo: after", "{}", steps[6]);
    let pids = scratch.lines("spawns");
    assert_eq!(pids.len(), 2, "one start, one restart");
    let events_of = |pid: &str| -> Vec<String> {
        let prefix = format!("{pid} ");
        scratch
            .lines("events")
            .iter()
            .filter_map(|line| line.strip_prefix(&prefix).map(str::to_owned))
            .collect()
    };
    assert_eq!(
        events_of(&pids[0]),
        [
            "level debug",
            "subscribe file:///kept",
            "subscribe file:///dropped",
            "unsubscribe file:///dropped"
        ]
    );
    // The restarted server hears the level and the subscription still held, before the call
    // that restarted it.
    assert_eq!(
        events_of(&pids[1]),
        ["level debug", "subscribe file:///kept"]
    );
}

#[test]
fn crash_loop_backs_off_instead_of_restarting_on_every_call() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("crash-loop");
    // Every call crashes the server; the client calls every 100 ms for about 3.5 s.
    let upstream = faulty(&python, &scratch, "crash-mid-call", &[]);
    let mut steps = Vec::new();
    for index in 0..35 {
        steps.push(echo(&index.to_string()));
        steps.push(json!({"op": "sleep", "seconds": 0.1}));
    }
    let report = client(&python, &json!(steps), &stdio_proxy(&upstream, None));
    let results = report["steps"].as_array().expect("steps");
    // From the first call to the last: the window in which the proxy could restart.
    let window = Duration::from_millis(
        results
            .iter()
            .map(|result| result["elapsed_ms"].as_u64().expect("elapsed"))
            .sum(),
    );
    let errors: Vec<String> = results.iter().step_by(2).map(error_of).collect();
    let backing_off: Vec<_> = results
        .iter()
        .step_by(2)
        .filter(|result| error_of(result).contains("is down"))
        .collect();

    // With the default backoff (100 ms doubling to 30 s, each delay at least half its
    // ceiling) restart k comes at least 50 + 100 + … + 50·2^(k-1) ms after the first crash.
    let mut most_restarts = 0;
    let mut earliest = Duration::ZERO;
    loop {
        earliest += Duration::from_millis(50 << most_restarts);
        if earliest > window {
            break;
        }
        most_restarts += 1;
    }
    let spawns = scratch.spawns();
    assert!(
        spawns <= 1 + most_restarts,
        "{spawns} starts in {window:?}, at most {} expected: {errors:#?}",
        1 + most_restarts
    );
    assert!(
        spawns >= 4,
        "the upstream is still restarted: {spawns} starts in {window:?}"
    );
    // Restarting on every call would have started it once per call.
    assert!(
        spawns < errors.len() / 3,
        "{spawns} starts for {} calls",
        errors.len()
    );
    // While backing off, calls fail fast and say when the next attempt is.
    assert!(backing_off.len() >= 10, "{errors:#?}");
    for result in backing_off {
        assert!(
            error_of(result).contains("failures in a row); the next attempt is in"),
            "{result}"
        );
        assert!(
            result["elapsed_ms"].as_u64().expect("elapsed") < 500,
            "not fast: {result}"
        );
    }
}

#[test]
fn upstream_that_exits_at_start_fails_initialize_and_the_stdio_proxy_exits_with_the_reason() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("exit-at-start");
    let mut proxy = Command::new(env!("CARGO_BIN_EXE_condense"))
        .args(["proxy", "--"])
        .args(faulty(&python, &scratch, "exit-at-start", &[]))
        .env("CONDENSE_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("proxy starts");
    let initialize = json!({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}
    });
    let mut stdin = proxy.stdin.take().expect("stdin");
    writeln!(stdin, "{initialize}").expect("write");
    let mut answer = String::new();
    BufReader::new(proxy.stdout.take().expect("stdout"))
        .read_line(&mut answer)
        .expect("read");
    let answer: Value = serde_json::from_str(&answer).expect("a JSON-RPC answer");
    let message = answer["error"]["message"].as_str().expect("an error");
    assert!(
        message.contains(&format!(
            "could not start the upstream MCP server `{}`: it exited (exit status: 3) before completing the MCP handshake",
            label(&python)
        )),
        "{message}"
    );
    assert!(!message.contains(SECRET), "{message}");

    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = proxy.try_wait().expect("status") {
            break status;
        }
        assert!(Instant::now() < deadline, "the proxy did not exit");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(!status.success(), "{status}");
    let mut stderr = String::new();
    proxy
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut stderr)
        .expect("read");
    assert!(
        stderr.contains("could not start the upstream MCP server"),
        "{stderr}"
    );
    assert_eq!(scratch.spawns(), 1, "no restart at initialize");
}

/// A client (Claude Code, Cursor) ends a stdio server with SIGINT or SIGTERM while it still holds
/// the server's stdin open: the proxy must stop its upstream and exit at once, not wait for stdin.
/// The upstream command is given without `--`, as the MCP Inspector passes it.
#[cfg(unix)]
#[test]
fn a_stdio_proxy_stops_its_upstream_and_exits_on_a_signal_while_stdin_is_open() {
    let Some(python) = python() else { return };
    for signal in ["-TERM", "-INT"] {
        let scratch = Scratch::new(&format!("signal{signal}"));
        let mut proxy = Command::new(env!("CARGO_BIN_EXE_condense"))
            .arg("proxy")
            .args(faulty(&python, &scratch, "healthy", &[]))
            .env("CONDENSE_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("proxy starts");
        let initialize = json!({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}}
        });
        let mut stdin = proxy.stdin.take().expect("stdin");
        writeln!(stdin, "{initialize}").expect("write");
        let mut answer = String::new();
        BufReader::new(proxy.stdout.take().expect("stdout"))
            .read_line(&mut answer)
            .expect("read");
        let answer: Value = serde_json::from_str(&answer).expect("a JSON-RPC answer");
        assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
        let upstream = scratch.lines("spawns").first().cloned().expect("a spawn");

        let sent = Command::new("kill")
            .args([signal, &proxy.id().to_string()])
            .status();
        assert!(sent.expect("kill runs").success());
        // Generous against a loaded machine; before the fix the proxy never exited.
        let deadline = Instant::now() + Duration::from_secs(5);
        while proxy.try_wait().expect("status").is_none() {
            if Instant::now() > deadline {
                let _ = proxy.kill();
                panic!("the proxy did not exit on kill {signal} while its stdin was open");
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let alive = Command::new("kill")
            .args(["-0", &upstream])
            .stderr(Stdio::null())
            .status()
            .expect("kill runs");
        assert!(!alive.success(), "upstream {upstream} outlived the proxy");
        drop(stdin);
    }
}

#[test]
fn http_proxy_survives_an_upstream_that_exits_at_start_and_the_next_session_starts_it() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("exit-at-start-http");
    let mut proxy = HttpProxy::in_front_of(faulty(
        &python,
        &scratch,
        "healthy",
        &["--fail-starts", "1"],
    ));

    let first = client(&python, &json!([]), &proxy.url());
    let error = first["initialize_error"]
        .as_str()
        .expect("initialize fails");
    assert!(error.contains("exited (exit status: 3)"), "{error}");
    assert!(proxy.health().is_some(), "the proxy still serves /health");

    let second = client(&python, &json!([echo("second session")]), &proxy.url());
    assert_eq!(text_of(&second["steps"][0]), "echo: second session");
    assert_eq!(scratch.spawns(), 2);
}

#[test]
fn garbage_on_the_upstreams_stdout_is_skipped_and_calls_work() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("garbage");
    let upstream = faulty(&python, &scratch, "garbage", &[]);
    let report = client(
        &python,
        &json!([echo("one"), {"op": "list_tools"}, echo("two")]),
        &stdio_proxy(&upstream, None),
    );
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!(text_of(&steps[0]), "echo: one", "{}", steps[0]);
    assert!(steps[1]["tools"].is_array(), "{}", steps[1]);
    assert_eq!(text_of(&steps[2]), "echo: two", "{}", steps[2]);
    assert_eq!(scratch.spawns(), 1, "garbage is no crash");
}

#[test]
fn upstream_that_closes_stdout_but_keeps_running_is_stopped_and_restarted() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("close-stdout");
    let upstream = faulty(&python, &scratch, "close-stdout", &[]);
    let report = client(
        &python,
        &json!([echo("hangs"), {"op": "list_tools"}]),
        &stdio_proxy(&upstream, None),
    );
    let steps = report["steps"].as_array().expect("steps");
    let error = error_of(&steps[0]);
    assert!(error.contains("while handling this request"), "{error}");
    assert!(steps[1]["tools"].is_array(), "{}", steps[1]);
    assert_eq!(scratch.spawns(), 2);
    // The first process, alive with its stdout closed, was killed rather than left behind.
    let first = scratch.lines("spawns")[0].clone();
    assert!(
        !Path::new(&format!("/proc/{first}")).exists()
            || std::fs::read_to_string(format!("/proc/{first}/stat"))
                .is_ok_and(|stat| stat.contains(") Z ")),
        "process {first} still runs"
    );
}

#[test]
fn slow_call_times_out_with_a_clear_error_is_cancelled_upstream_and_blocks_no_other_call() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("timeout");
    let config = scratch.config("[proxy]\nupstream_timeout_ms = 700\n");
    let upstream = faulty(&python, &scratch, "healthy", &[]);
    let steps = json!([
        {"op": "parallel", "steps": [
            {"op": "call_tool", "name": "slow", "arguments": {"seconds": 10}},
            {"op": "call_tool", "name": "echo", "arguments": {"text": "meanwhile"}}
        ]},
        echo("after")
    ]);
    let report = client(&python, &steps, &stdio_proxy(&upstream, Some(&config)));
    let parallel = report["steps"][0]["results"].as_array().expect("results");
    let error = error_of(&parallel[0]);
    assert!(
        error.contains(&format!(
            "the upstream MCP server `{}` did not answer tools/call within 700 ms",
            label(&python)
        )),
        "{error}"
    );
    assert_eq!(text_of(&parallel[1]), "echo: meanwhile");
    assert!(
        parallel[1]["elapsed_ms"].as_u64().expect("elapsed") < 700,
        "the echo waited for the slow call: {}",
        parallel[1]
    );
    assert_eq!(text_of(&report["steps"][1]), "echo: after");
    assert!(
        scratch
            .lines("events")
            .iter()
            .any(|event| event.starts_with("cancelled")),
        "the upstream was told: {:?}",
        scratch.lines("events")
    );
    assert_eq!(scratch.spawns(), 1, "a timeout is no crash");
}

#[test]
fn client_cancellation_of_a_slow_call_is_relayed_upstream() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("cancel");
    let upstream = faulty(&python, &scratch, "healthy", &[]);
    let steps = json!([
        {"op": "cancel", "after": 0.3,
         "step": {"op": "call_tool", "name": "slow", "arguments": {"seconds": 30}}},
        echo("after")
    ]);
    let report = client(&python, &steps, &stdio_proxy(&upstream, None));
    assert_eq!(text_of(&report["steps"][1]), "echo: after", "{report}");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !scratch
        .lines("events")
        .iter()
        .any(|event| event.starts_with("cancelled"))
    {
        assert!(
            Instant::now() < deadline,
            "the cancellation did not reach the upstream"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn http_upstream_that_is_down_is_a_clear_error_and_the_proxy_stays_up() {
    let Some(python) = python() else { return };
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let upstream = format!("http://user:{SECRET}@127.0.0.1:{port}/mcp?token={SECRET}");
    let mut proxy = HttpProxy::start(&["--upstream-url".to_owned(), upstream]);
    for _ in 0..2 {
        let report = client(&python, &json!([]), &proxy.url());
        let error = report["initialize_error"]
            .as_str()
            .expect("initialize fails");
        assert!(
            error.contains(&format!(
                "could not connect to the upstream MCP server at http://127.0.0.1:{port}/mcp"
            )),
            "{error}"
        );
        assert!(!error.contains(SECRET), "{error}");
        assert!(proxy.health().is_some(), "the proxy still serves /health");
    }
}

#[test]
fn http_upstream_that_answers_500_is_a_clear_error_and_the_proxy_stays_up() {
    let Some(python) = python() else { return };
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let _ = stream.write_all(
                b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\nConnection: close\r\n\r\noops",
            );
        }
    });
    let mut proxy = HttpProxy::start(&[
        "--upstream-url".to_owned(),
        format!("http://127.0.0.1:{port}/mcp"),
    ]);
    let report = client(&python, &json!([]), &proxy.url());
    let error = report["initialize_error"]
        .as_str()
        .expect("initialize fails");
    assert!(
        error.contains(&format!(
            "could not connect to the upstream MCP server at http://127.0.0.1:{port}/mcp"
        )),
        "{error}"
    );
    assert!(proxy.health().is_some(), "the proxy still serves /health");
}

#[test]
fn http_upstream_that_goes_away_mid_session_is_reconnected_when_it_is_back() {
    let Some(python) = python() else { return };
    let Some(node_modules) = std::env::var_os("CONDENSE_TEST_NODE_MODULES") else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but CONDENSE_TEST_NODE_MODULES is not"
        );
        return;
    };
    let everything =
        Path::new(&node_modules).join("@modelcontextprotocol/server-everything/dist/index.js");
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let serve = || {
        let server = Command::new("node")
            .arg(&everything)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node runs");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "server-everything did not listen"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        server
    };
    let scratch = Scratch::new("http-upstream-restart");
    let mark = |name: &str| scratch.path(name);
    let echo =
        |text: &str| json!({"op": "call_tool", "name": "echo", "arguments": {"message": text}});
    let steps = json!([
        echo("one"),
        {"op": "touch", "path": mark("first-done")},
        {"op": "wait_for_file", "path": mark("server-down")},
        echo("two"),
        {"op": "touch", "path": mark("second-done")},
        {"op": "wait_for_file", "path": mark("server-up")},
        echo("three")
    ]);
    let mut server = serve();
    let target = stdio_proxy_with(&[
        "--upstream-url".to_owned(),
        format!("http://127.0.0.1:{port}/mcp"),
    ]);
    let wait_for = |name: &str| {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !Path::new(&mark(name)).exists() {
            assert!(Instant::now() < deadline, "the client did not reach {name}");
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let report = std::thread::scope(|scope| {
        let client = scope.spawn(|| client(&python, &steps, &target));
        wait_for("first-done");
        let _ = server.kill();
        let _ = server.wait();
        std::fs::write(mark("server-down"), "").expect("mark");
        wait_for("second-done");
        server = serve();
        std::fs::write(mark("server-up"), "").expect("mark");
        client.join().expect("client thread")
    });
    let _ = server.kill();
    let _ = server.wait();
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!(text_of(&steps[0]), "Echo: one", "{}", steps[0]);
    let error = error_of(&steps[3]);
    assert!(
        error.contains(&format!(
            "upstream MCP server at http://127.0.0.1:{port}/mcp"
        )),
        "{error}"
    );
    assert_eq!(text_of(&steps[6]), "Echo: three", "{}", steps[6]);
}
