//! `condense proxy --listen` under abuse (issue 15, points 5, 7 and 9): a session cap and idle
//! reaping that stop the upstream children, `Origin` checks, the bearer token, the refusal to
//! serve beyond loopback without one, and read deadlines against slowloris connections.
//!
//! Each test drives the real binary over raw HTTP, in front of `tests/mcp/faulty_server.py`
//! (standard library only), which logs the pid of every start: the tests count live upstream
//! processes from that log. The interpreter comes from `CONDENSE_TEST_PYTHON`
//! (`scripts/mcp/install.sh`); without it the tests print a notice and pass, except under
//! `CI`, where it is a failure.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::mcp_faults::{python, script};

/// A client's `initialize`, in a protocol version that opens a session.
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"http-test","version":"1"}}}"#;

/// A scratch directory with the config and the upstream's spawn log.
pub(super) struct Scratch(PathBuf);

impl Scratch {
    pub(super) fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("condense-http-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("temp dir");
        Scratch(dir)
    }

    pub(super) fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }

    /// What the proxy wrote to stderr.
    pub(super) fn log(&self) -> String {
        std::fs::read_to_string(self.path("stderr")).unwrap_or_default()
    }

    /// The pids of every upstream started so far.
    fn started(&self) -> Vec<u32> {
        std::fs::read_to_string(self.path("spawns"))
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.trim().parse().ok())
            .collect()
    }

    /// How many started upstreams still run (zombies count as gone).
    fn running(&self) -> usize {
        self.started()
            .into_iter()
            .filter(|pid| {
                std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                    let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
                    !state.is_some_and(|rest| rest.starts_with('Z'))
                })
            })
            .count()
    }

    /// Waits up to `limit` for `running()` to become `expected`.
    fn wait_running(&self, expected: usize, limit: Duration) -> usize {
        let deadline = Instant::now() + limit;
        loop {
            let running = self.running();
            if running == expected || Instant::now() > deadline {
                return running;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `condense proxy --listen 127.0.0.1:PORT` with `config`, in front of the faulty server.
pub(super) struct Proxy {
    process: Child,
    pub(super) addr: String,
}

impl Proxy {
    pub(super) fn start(
        python: &Path,
        scratch: &Scratch,
        config: &str,
        env: &[(&str, &str)],
    ) -> Self {
        let addr = format!("127.0.0.1:{}", free_port());
        let config_path = scratch.path("condense.toml");
        std::fs::write(&config_path, config).expect("write config");
        let process = Command::new(env!("CARGO_BIN_EXE_condense"))
            .args(["proxy", "--listen", &addr, "--config"])
            .arg(&config_path)
            .arg("--")
            .args(upstream(python, scratch))
            .env("CONDENSE_LOG", "warn")
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stderr(std::fs::File::create(scratch.path("stderr")).expect("log file"))
            .spawn()
            .expect("proxy starts");
        let proxy = Proxy { process, addr };
        let deadline = Instant::now() + Duration::from_secs(20);
        while request(&proxy.addr, "GET /health HTTP/1.1\r\n", "").status != 200 {
            assert!(Instant::now() < deadline, "health endpoint did not answer");
            std::thread::sleep(Duration::from_millis(50));
        }
        proxy
    }

    /// POSTs an `initialize` with `headers`; then, when a session was opened, the
    /// `initialized` notification.
    pub(super) fn initialize(&self, headers: &str) -> Reply {
        let reply = post(&self.addr, headers, INITIALIZE);
        if let Some(session) = reply.session() {
            let headers = format!("{headers}Mcp-Session-Id: {session}\r\n");
            let body = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
            assert_eq!(post(&self.addr, &headers, body).status, 202);
        }
        reply
    }

    fn delete(&self, session: &str) -> Reply {
        request(
            &self.addr,
            &format!("DELETE /mcp HTTP/1.1\r\nMcp-Session-Id: {session}\r\n"),
            "",
        )
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        let _ = self.process.kill();
        let _ = self.process.wait();
    }
}

fn upstream(python: &Path, scratch: &Scratch) -> Vec<String> {
    vec![
        python.display().to_string(),
        script("faulty_server.py"),
        "healthy".to_owned(),
        "--spawn-log".to_owned(),
        scratch.path("spawns").display().to_string(),
    ]
}

fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("addr").port()
}

/// An HTTP answer, read to the end of the connection.
#[derive(Debug)]
pub(super) struct Reply {
    status: u16,
    head: String,
    pub(super) body: String,
}

impl Reply {
    pub(super) fn session(&self) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (name, value) = line.split_once(':')?;
            name.eq_ignore_ascii_case("mcp-session-id")
                .then(|| value.trim().to_owned())
        })
    }
}

/// Sends `start` (request line and headers, each ending in CRLF), `Host` (unless `start` has
/// one), `Connection: close` and `body`; status 0 when the connection failed.
fn request(addr: &str, start: &str, body: &str) -> Reply {
    let failed = Reply {
        status: 0,
        head: String::new(),
        body: String::new(),
    };
    let Ok(mut stream) = TcpStream::connect(addr) else {
        return failed;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let host = if start.contains("\r\nHost: ") {
        String::new()
    } else {
        format!("Host: {addr}\r\n")
    };
    let message = format!(
        "{start}{host}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    if stream.write_all(message.as_bytes()).is_err() {
        return failed;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    Reply {
        status,
        head: head.to_owned(),
        body: body.to_owned(),
    }
}

fn post(addr: &str, headers: &str, body: &str) -> Reply {
    request(
        addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\n{headers}"
        ),
        body,
    )
}

#[test]
fn an_initialize_beyond_max_sessions_gets_503_naming_the_key_and_starts_nothing() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("cap");
    let proxy = Proxy::start(&python, &scratch, "[proxy]\nmax_sessions = 3\n", &[]);
    let sessions: Vec<String> = (0..3)
        .map(|_| {
            let reply = proxy.initialize("");
            assert_eq!(reply.status, 200, "{reply:?}");
            reply.session().expect("a session id")
        })
        .collect();
    assert_eq!(scratch.wait_running(3, Duration::from_secs(10)), 3);

    let refused = proxy.initialize("");
    assert_eq!(refused.status, 503, "{refused:?}");
    assert!(refused.session().is_none());
    assert!(
        refused.body.contains("[proxy] max_sessions = 3"),
        "{refused:?}"
    );
    assert_eq!(scratch.started().len(), 3, "no upstream started for it");

    // A closed session frees its place and stops its upstream; the DELETE is answered 200, as
    // the SDK servers a client knows answer it.
    assert_eq!(proxy.delete(&sessions[0]).status, 200);
    assert_eq!(scratch.wait_running(2, Duration::from_secs(10)), 2);
    assert_eq!(proxy.initialize("").status, 200);
    assert_eq!(scratch.wait_running(3, Duration::from_secs(10)), 3);
}

#[test]
fn a_burst_of_initializes_opens_exactly_max_sessions_and_refuses_the_rest_with_503() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("burst");
    let proxy = Proxy::start(&python, &scratch, "[proxy]\nmax_sessions = 4\n", &[]);
    let statuses: Vec<u16> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..12)
            .map(|_| scope.spawn(|| proxy.initialize("").status))
            .collect();
        handles
            .into_iter()
            .map(|handle| handle.join().expect("thread"))
            .collect()
    });
    let opened = statuses.iter().filter(|status| **status == 200).count();
    let refused = statuses.iter().filter(|status| **status == 503).count();
    assert_eq!((opened, refused), (4, 8), "{statuses:?}");
    assert_eq!(scratch.wait_running(4, Duration::from_secs(10)), 4);
    assert_eq!(scratch.started().len(), 4);
}

#[test]
fn idle_sessions_are_closed_with_their_upstream_and_free_their_places() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("idle");
    let config = "[proxy]\nmax_sessions = 2\nsession_idle_timeout_ms = 1000\n";
    let proxy = Proxy::start(&python, &scratch, config, &[]);
    for _ in 0..2 {
        assert_eq!(proxy.initialize("").status, 200);
    }
    assert_eq!(scratch.wait_running(2, Duration::from_secs(10)), 2);
    let started = Instant::now();
    assert_eq!(scratch.wait_running(0, Duration::from_secs(10)), 0);
    let reaped_after = started.elapsed();
    assert!(reaped_after < Duration::from_secs(5), "{reaped_after:?}");
    for _ in 0..2 {
        assert_eq!(proxy.initialize("").status, 200, "the places are free");
    }
}

#[test]
fn a_tool_call_longer_than_the_idle_timeout_is_answered_and_keeps_its_session() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("long-call");
    let config = "[proxy]\nsession_idle_timeout_ms = 1000\n";
    let proxy = Proxy::start(&python, &scratch, config, &[]);
    let session = proxy.initialize("").session().expect("a session");
    let headers = format!("Mcp-Session-Id: {session}\r\n");
    let call = |id: u32, tool: &str, arguments: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        );
        post(&proxy.addr, &headers, &body)
    };
    let slow = call(2, "slow", r#"{"seconds":2.5}"#);
    assert_eq!(slow.status, 200, "{slow:?}");
    assert!(slow.body.contains("slept"), "{slow:?}");
    let after = call(3, "echo", r#"{"text":"still here"}"#);
    assert!(after.body.contains("echo: still here"), "{after:?}");
    assert_eq!(scratch.started().len(), 1, "the same upstream all along");
}

#[test]
fn a_foreign_origin_gets_403_and_no_session_while_local_and_absent_origins_pass() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("origin");
    let config = "[proxy]\nallowed_origins = [\"https://app.example.com\"]\n";
    let proxy = Proxy::start(&python, &scratch, config, &[]);
    for foreign in ["http://evil.example", "http://app.example.com", "null"] {
        let refused = proxy.initialize(&format!("Origin: {foreign}\r\n"));
        assert_eq!(refused.status, 403, "{foreign}: {refused:?}");
        assert!(refused.session().is_none());
    }
    // Without a token, a rebound DNS name is refused by its `Host` too.
    let rebound = request(
        &proxy.addr,
        "POST /mcp HTTP/1.1\r\nHost: evil.example:8080\r\n\
         Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n",
        INITIALIZE,
    );
    assert_eq!(rebound.status, 403, "{rebound:?}");
    assert!(scratch.started().is_empty(), "no upstream started");
    for accepted in [
        "",
        "Origin: http://localhost:5173\r\n",
        "Origin: http://127.0.0.1:8080\r\n",
        "Origin: https://app.example.com\r\n",
    ] {
        let reply = proxy.initialize(accepted);
        assert_eq!(reply.status, 200, "{accepted}: {reply:?}");
    }
}

#[test]
fn with_a_token_every_mcp_request_needs_it_and_health_does_not() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("token");
    let token = "http-test-token-6f1c9a";
    let config = "[proxy]\nauth_token_env = \"CONDENSE_TEST_HTTP_TOKEN\"\n";
    let proxy = Proxy::start(
        &python,
        &scratch,
        config,
        &[
            ("CONDENSE_TEST_HTTP_TOKEN", token),
            ("CONDENSE_LOG", "trace"),
        ],
    );
    for wrong in [
        String::new(),
        "Authorization: Bearer wrong-token\r\n".to_owned(),
        format!("Authorization: Basic {token}\r\n"),
        format!("Authorization: Bearer {token}x\r\n"),
    ] {
        let refused = proxy.initialize(&wrong);
        assert_eq!(refused.status, 401, "{wrong}: {refused:?}");
        assert!(!refused.body.contains(token));
    }
    assert!(scratch.started().is_empty(), "no upstream started");
    let headers = format!("Authorization: Bearer {token}\r\n");
    let reply = proxy.initialize(&headers);
    assert_eq!(reply.status, 200, "{reply:?}");
    // With a token, a client may name the machine as it likes (a DNS name, a LAN address).
    let by_name = request(
        &proxy.addr,
        &format!(
            "POST /mcp HTTP/1.1\r\nHost: condense.example:8080\r\n{headers}\
             Accept: application/json, text/event-stream\r\nContent-Type: application/json\r\n"
        ),
        INITIALIZE,
    );
    assert_eq!(by_name.status, 200, "{by_name:?}");
    let session = reply.session().expect("session");
    let without = post(
        &proxy.addr,
        &format!("Mcp-Session-Id: {session}\r\n"),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    );
    assert_eq!(without.status, 401, "a session id is no credential");
    let log = scratch.log();
    assert!(log.contains("initialize"), "traced: {}", log.len());
    assert!(!log.contains(token), "the token is in the log");
}

#[test]
fn a_non_loopback_address_without_a_token_is_refused_unless_allowed_explicitly() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("exposed");
    let addr = format!("0.0.0.0:{}", free_port());
    let refused = Command::new(env!("CARGO_BIN_EXE_condense"))
        .args(["proxy", "--listen", &addr, "--"])
        .args(upstream(&python, &scratch))
        .stdin(Stdio::null())
        .output()
        .expect("runs");
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    for needed in [addr.as_str(), "auth_token_env", "--allow-unauthenticated"] {
        assert!(stderr.contains(needed), "{needed} missing from: {stderr}");
    }

    let mut allowed = Command::new(env!("CARGO_BIN_EXE_condense"))
        .args(["proxy", "--listen", &addr, "--allow-unauthenticated", "--"])
        .args(upstream(&python, &scratch))
        .env("CONDENSE_LOG", "warn")
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let local = addr.replace("0.0.0.0", "127.0.0.1");
    let deadline = Instant::now() + Duration::from_secs(20);
    while request(&local, "GET /health HTTP/1.1\r\n", "").status != 200 {
        assert!(Instant::now() < deadline, "health endpoint did not answer");
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = allowed.kill();
    let output = allowed.wait_with_output().expect("exits");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("without authentication"), "{stderr}");
}

/// Opens a connection, sends `partial`, and returns how long the proxy took to close it
/// (or `None` when it was still open after 5 s).
fn held_for(addr: &str, partial: &str) -> Option<Duration> {
    held_for_bytes(addr, partial.as_bytes()).map(|(held, _)| held)
}

/// As [`held_for`], with what the server sent before it closed the connection.
fn held_for_bytes(addr: &str, partial: &[u8]) -> Option<(Duration, Vec<u8>)> {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let opened = Instant::now();
    stream.write_all(partial).expect("write");
    let mut sink = Vec::new();
    match stream.read_to_end(&mut sink) {
        Ok(_) => Some((opened.elapsed(), sink)),
        Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => {
            Some((opened.elapsed(), sink))
        }
        Err(_) => None,
    }
}

/// An HTTP/2 connection (prior knowledge, no TLS) that sends one whole `GET /health` and then
/// nothing: the preface, an empty SETTINGS frame, and one HEADERS frame ending the stream.
fn http2_health_request(authority: &str) -> Vec<u8> {
    let mut bytes = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    bytes.extend([0, 0, 0, 4, 0, 0, 0, 0, 0]);
    // HPACK: :method GET, :scheme http (static table), :path and :authority as literals.
    let mut block = vec![0x82, 0x86, 0x44, 7];
    block.extend(b"/health");
    block.extend([0x41, u8::try_from(authority.len()).expect("short")]);
    block.extend(authority.as_bytes());
    let length = u32::try_from(block.len()).expect("short").to_be_bytes();
    // HEADERS, END_STREAM | END_HEADERS, stream 1.
    bytes.extend([length[1], length[2], length[3], 1, 0x05, 0, 0, 0, 1]);
    bytes.extend(block);
    bytes
}

#[test]
fn an_http2_connection_idle_after_its_request_is_closed_within_the_read_timeout() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("http2-idle");
    let proxy = Proxy::start(&python, &scratch, "[proxy]\nread_timeout_ms = 500\n", &[]);
    let (held, answer) = held_for_bytes(&proxy.addr, &http2_health_request(&proxy.addr))
        .expect("an idle HTTP/2 connection is closed");
    let answered = answer.windows(13).any(|w| w == br#""status":"ok""#);
    assert!(answered, "the request was served first: {answer:?}");
    // Before, only an HTTP/2 connection's first request had a deadline: this one stayed open.
    assert!(held < Duration::from_secs(3), "held {held:?}");
}

#[test]
fn slowloris_connections_are_closed_within_the_read_timeout() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("slowloris");
    let proxy = Proxy::start(&python, &scratch, "[proxy]\nread_timeout_ms = 500\n", &[]);
    let host = format!("Host: {}\r\n", proxy.addr);
    let partials = [
        // nothing at all
        String::new(),
        // half a request line
        "POST /mcp HT".to_owned(),
        // the start of the HTTP/2 preface, which keeps the protocol undecided
        "PRI * HTTP/2".to_owned(),
        // headers that never end
        format!("POST /mcp HTTP/1.1\r\n{host}Content-Type: application/json\r\n"),
        // whole headers, half a body
        format!(
            "POST /mcp HTTP/1.1\r\n{host}Accept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{{\"jsonrpc\""
        ),
        // an idle keep-alive connection after a whole request
        format!("GET /health HTTP/1.1\r\n{host}\r\n"),
    ];
    let handles: Vec<_> = partials
        .iter()
        .cloned()
        .map(|partial| {
            let addr = proxy.addr.clone();
            std::thread::spawn(move || (held_for(&addr, &partial), partial))
        })
        .collect();
    for handle in handles {
        let (held, partial) = handle.join().expect("thread");
        let held = held.unwrap_or_else(|| panic!("still open after 5 s: {partial:?}"));
        assert!(held < Duration::from_secs(3), "{partial:?} held {held:?}");
    }
    assert_eq!(
        request(&proxy.addr, "GET /health HTTP/1.1\r\n", "").status,
        200
    );
}

/// `tools/call` of `tool` with `arguments` (JSON) in `session`.
pub(super) fn call_tool(addr: &str, session: &str, id: u32, tool: &str, arguments: &str) -> Reply {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    );
    post(addr, &format!("Mcp-Session-Id: {session}\r\n"), &body)
}

/// The ref a condensed answer names (`cx_` and hex digits).
pub(super) fn ref_in(text: &str) -> Option<String> {
    let start = text.find("cx_")?;
    let hex = text[start + 3..]
        .bytes()
        .take_while(u8::is_ascii_hexdigit)
        .count();
    Some(text[start..start + 3 + hex].to_owned())
}

/// The first lines of the original under `reference`, by `condense_retrieve` in `session`;
/// the answer when it has none of the original's lines.
pub(super) fn retrieves(proxy: &Proxy, session: &str, reference: &str) -> Result<String, String> {
    let arguments = format!(r#"{{"ref":"{reference}","lines":3}}"#);
    let reply = call_tool(&proxy.addr, session, 9, "condense_retrieve", &arguments);
    if reply.body.contains("INFO [worker-") {
        Ok(reply.body)
    } else {
        Err(reply.body)
    }
}

#[test]
fn a_session_cannot_read_another_sessions_original_even_with_its_ref() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("scoped");
    let proxy = Proxy::start(&python, &scratch, "[store]\nbackend = \"memory\"\n", &[]);
    let first = proxy.initialize("").session().expect("a session");
    let second = proxy.initialize("").session().expect("a session");
    let condensed = call_tool(&proxy.addr, &first, 2, "big", r#"{"bytes":60000}"#);
    let reference = ref_in(&condensed.body).unwrap_or_else(|| panic!("a ref: {condensed:?}"));
    retrieves(&proxy, &first, &reference).expect("the session that made it reads it");
    let refused = retrieves(&proxy, &second, &reference).expect_err("another session does not");
    // The same answer as for a ref never made: nothing says the original exists.
    assert!(refused.contains("no original is kept"), "{refused}");
    assert!(!refused.contains("INFO [worker-"), "{refused}");
    // The same call in the second session: its own copy, readable there.
    let again = call_tool(&proxy.addr, &second, 3, "big", r#"{"bytes":60000}"#);
    let its_own = ref_in(&again.body).unwrap_or_else(|| panic!("a ref: {again:?}"));
    retrieves(&proxy, &second, &its_own).expect("a session reads what its own call kept");
}

#[test]
fn with_share_across_sessions_every_session_reads_every_original() {
    let Some(python) = python() else { return };
    let scratch = Scratch::new("shared");
    let config = "[store]\nbackend = \"memory\"\nshare_across_sessions = true\n";
    let proxy = Proxy::start(&python, &scratch, config, &[]);
    let first = proxy.initialize("").session().expect("a session");
    let second = proxy.initialize("").session().expect("a session");
    let condensed = call_tool(&proxy.addr, &first, 2, "big", r#"{"bytes":60000}"#);
    let reference = ref_in(&condensed.body).unwrap_or_else(|| panic!("a ref: {condensed:?}"));
    retrieves(&proxy, &second, &reference).expect("shared: the other session reads it");
}
