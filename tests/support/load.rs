//! The load scenario for the MCP proxy in HTTP mode, shared by `tests/mcp_load.rs`
//! (correctness, in CI) and `benches/proxy_load.rs` (latency, memory, soak).
//!
//! The real `condense` binary serves streamable HTTP on loopback, in front of the real
//! `server-filesystem` (one child process per client session, as `condense proxy --listen`
//! runs it), with an OpenAI-compatible fake in the calling process as its LLM. Clients open a
//! few sessions and put every call of a plan in flight at once; each answer is checked against
//! the file it read: a small file must come back byte for byte, a large one condensed by the
//! LLM to the budget, with the ref of that very file, and retrievable.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use condense::mcp::testing::HttpClient;
use condense::{Encoding, TokenCounter};
use serde_json::{Value, json};

/// The first word of every fixture file: the fake LLM names the file it summarizes by it, so
/// a summary delivered for the wrong call is caught.
const MARKER: &str = "LOADFILE";

/// Results above this many tokens are condensed.
pub(crate) const THRESHOLD_TOKENS: usize = 1000;

/// The condensed size.
pub(crate) const BUDGET_TOKENS: usize = 300;

/// The query condensed calls send with `condense_query`.
pub(crate) const QUERY: &str = "which requests failed, and why?";

/// Where `server-filesystem` is: `CONDENSE_TEST_NODE_MODULES`, as `scripts/mcp/install.sh`
/// prints it. `None` outside CI when it is not set; under `CI` a missing rig is a failure.
pub(crate) fn node_modules() -> Option<PathBuf> {
    match std::env::var_os("CONDENSE_TEST_NODE_MODULES") {
        Some(path) => Some(PathBuf::from(path)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but CONDENSE_TEST_NODE_MODULES is not: run scripts/mcp/install.sh"
            );
            eprintln!("skipping: run `eval \"$(scripts/mcp/install.sh)\"` to load-test the proxy");
            None
        }
    }
}

/// The command line of `server-filesystem` serving `root`.
pub(crate) fn filesystem_server(node_modules: &Path, root: &Path) -> Vec<String> {
    vec![
        "node".into(),
        node_modules
            .join("@modelcontextprotocol/server-filesystem/dist/index.js")
            .display()
            .to_string(),
        root.display().to_string(),
    ]
}

/// The fake LLM's answer to a chat-completion request body: a one-line summary naming the
/// fixture file found in the prompt.
pub(crate) fn summary_for(body: &Value) -> String {
    let prompt: String = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|message| message["content"].as_str())
        .collect();
    let name = prompt
        .split_once(MARKER)
        .and_then(|(_, rest)| rest.split_whitespace().next())
        .unwrap_or("nothing");
    summary_line(name)
}

fn summary_line(name: &str) -> String {
    format!("Summary of {name}: most requests succeeded; the failures are listed in the original.")
}

/// One file the upstream serves, and what it holds.
#[derive(Debug)]
pub(crate) struct Fixture {
    /// The absolute path, as the tool is called with it.
    pub(crate) path: PathBuf,
    /// The name after the marker, e.g. `large-0007`.
    pub(crate) name: String,
    /// The content.
    pub(crate) text: String,
}

/// The files of one run in a fresh temporary directory (removed on drop).
#[derive(Debug)]
pub(crate) struct Files {
    /// The directory the upstream serves.
    pub(crate) root: PathBuf,
    /// Below the threshold: passed through.
    pub(crate) small: Vec<Fixture>,
    /// Above the threshold, each read by one call per round: condensed by the LLM.
    pub(crate) large: Vec<Fixture>,
    /// Above the threshold, read by many calls with the same query: the cache answers all but
    /// the first.
    pub(crate) shared: Fixture,
}

impl Files {
    /// Writes `small` small files and `large` + 1 large files of `large_lines` log lines.
    pub(crate) fn write(label: &str, small: usize, large: usize, large_lines: usize) -> Files {
        let root =
            std::env::temp_dir().join(format!("condense-load-{label}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("temp dir");
        // The server resolves symlinks; the paths must be the ones it allows.
        let root = root.canonicalize().expect("canonical temp dir");
        let write = |name: String, text: String| {
            let path = root.join(format!("{name}.txt"));
            std::fs::write(&path, &text).expect("write fixture");
            Fixture { path, name, text }
        };
        let small = (0..small)
            .map(|i| {
                let name = format!("small-{i:04}");
                write(name.clone(), small_text(&name, 3 + i % 40))
            })
            .collect();
        let large = (0..large)
            .map(|i| {
                let name = format!("large-{i:04}");
                write(name.clone(), log_text(&name, i, large_lines))
            })
            .collect();
        let shared = write(
            "shared".into(),
            log_text("shared", usize::MAX / 7, large_lines),
        );
        Files {
            root,
            small,
            large,
            shared,
        }
    }
}

impl Drop for Files {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn small_text(name: &str, lines: usize) -> String {
    let mut text = format!("{MARKER} {name}\n");
    for line in 0..lines {
        text.push_str(&format!("setting_{line} = \"{name}/{line}\"\n"));
    }
    text
}

/// A web-server log with a failure now and then; about 30 tokens a line.
fn log_text(name: &str, seed: usize, lines: usize) -> String {
    let mut text = format!("{MARKER} {name} access log\n");
    for line in 0..lines {
        let mix = seed.wrapping_mul(31).wrapping_add(line * 7919);
        let (level, status) = match mix % 23 {
            0 => ("ERROR", 503),
            1 | 2 => ("WARN ", 429),
            _ => ("INFO ", 200),
        };
        text.push_str(&format!(
            "2026-03-01T12:{:02}:{:02}.{:03}Z {level} [worker-{}] GET /api/items/{} {status} in {} ms\n",
            (line / 60) % 60,
            line % 60,
            mix % 1000,
            mix % 8,
            mix % 100_000,
            3 + mix % 400,
        ));
    }
    text
}

/// What kind of call a planned call is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// A small file: forwarded unchanged.
    PassThrough,
    /// A large file read once with its query: one LLM call.
    Condensed,
    /// The shared large file with the shared query: the cache answers.
    CondensedShared,
    /// `condense_retrieve` on a ref a condensed call returned.
    Retrieve,
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Kind::PassThrough => "pass-through",
            Kind::Condensed => "condensed",
            Kind::CondensedShared => "condensed (same)",
            Kind::Retrieve => "retrieve",
        })
    }
}

/// One planned `read_text_file` call.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    /// What it reads and what the answer must be.
    pub(crate) kind: Kind,
    /// The index in `small` or `large` (unused for the shared file).
    pub(crate) file: usize,
    /// The query, for condensed calls.
    pub(crate) query: String,
    /// Whether the caller then retrieves the first lines of the original by the returned ref.
    pub(crate) retrieve_after: bool,
}

/// `calls` calls: 70% small files; 30% large files, half of them the shared file with the same
/// query (so the cache answers) and half each a different large file; the first `retrieves`
/// distinct large reads are followed by a `condense_retrieve` of their ref. Each `round` has
/// queries of its own and moves on through the large files, so every round does the same work
/// and successive rounds fill the caches with new entries.
pub(crate) fn plan(calls: usize, files: &Files, retrieves: usize, round: usize) -> Vec<Call> {
    let query = if round == 0 {
        QUERY.to_owned()
    } else {
        format!("{QUERY} (round {round})")
    };
    let distinct_per_round = (0..calls).filter(|i| i % 10 >= 7).count() / 2;
    let first_large = round * distinct_per_round;
    let mut condensed = 0;
    let mut distinct = 0;
    (0..calls)
        .map(|i| {
            if i % 10 < 7 {
                return Call {
                    kind: Kind::PassThrough,
                    file: i % files.small.len(),
                    query: String::new(),
                    retrieve_after: false,
                };
            }
            condensed += 1;
            if condensed % 2 == 1 {
                return Call {
                    kind: Kind::CondensedShared,
                    file: 0,
                    query: query.clone(),
                    retrieve_after: false,
                };
            }
            distinct += 1;
            Call {
                kind: Kind::Condensed,
                file: (first_large + distinct - 1) % files.large.len(),
                query: query.clone(),
                retrieve_after: distinct <= retrieves,
            }
        })
        .collect()
}

/// How many different large files (so LLM calls, with the one for the shared file) a plan
/// reads.
pub(crate) fn distinct_large_reads(plan: &[Call]) -> usize {
    let mut files: Vec<usize> = plan
        .iter()
        .filter(|call| call.kind == Kind::Condensed)
        .map(|call| call.file)
        .collect();
    files.sort_unstable();
    files.dedup();
    files.len()
}

/// One finished call: its kind, how long it took, and what was wrong with its answer.
#[derive(Debug, Clone)]
pub(crate) struct Sample {
    /// The call's kind.
    pub(crate) kind: Kind,
    /// From sending the request to having the answer.
    pub(crate) latency: Duration,
    /// `None` when the answer was correct.
    pub(crate) error: Option<String>,
}

/// Makes a call and checks its answer.
#[derive(Debug, Clone)]
pub(crate) struct Checker {
    files: Arc<Files>,
    counter: TokenCounter,
}

impl Checker {
    /// A checker for answers about `files`.
    pub(crate) fn new(files: Arc<Files>) -> Self {
        Checker {
            files,
            counter: TokenCounter::new(Encoding::Cl100kBase),
        }
    }

    /// Makes `call` (and its retrieval) on `client`; one sample per request.
    pub(crate) async fn run(&self, client: &HttpClient, call: &Call) -> Vec<Sample> {
        let fixture = match call.kind {
            Kind::PassThrough => &self.files.small[call.file],
            Kind::Condensed => &self.files.large[call.file],
            Kind::CondensedShared | Kind::Retrieve => &self.files.shared,
        };
        let mut arguments = json!({"path": fixture.path.display().to_string()});
        if call.kind != Kind::PassThrough {
            arguments["condense_query"] = Value::String(call.query.clone());
        }
        let started = Instant::now();
        let answer = client.call_tool("read_text_file", arguments).await;
        let latency = started.elapsed();
        let checked = match answer {
            Ok(result) if call.kind == Kind::PassThrough => {
                check_pass_through(&result, fixture).map(|()| None)
            }
            Ok(result) => self.check_condensed(&result, fixture).map(Some),
            Err(error) => Err(format!("protocol error: {error}")),
        };
        let mut samples = vec![Sample {
            kind: call.kind,
            latency,
            error: checked
                .as_ref()
                .err()
                .map(|error| format!("{} {}: {error}", call.kind, fixture.name)),
        }];
        if call.retrieve_after
            && let Ok(Some(reference)) = checked
        {
            samples.push(retrieve(client, &reference, fixture).await);
        }
        samples
    }

    /// Checks a condensed answer and returns its ref.
    fn check_condensed(&self, result: &Value, fixture: &Fixture) -> Result<String, String> {
        let text = only_text(result)?;
        let header = text.lines().next().unwrap_or_default();
        if !header.starts_with("[condense: llm, ") {
            return Err(format!("not an LLM summary: {header}"));
        }
        let reference = header
            .split("original kept as ")
            .nth(1)
            .and_then(|rest| rest.strip_suffix(']'))
            .ok_or_else(|| format!("no ref in the header: {header}"))?;
        // Refs are keyed by the store's secret, so which file a ref names is checked by
        // retrieving it, not by recomputing it.
        if !reference.starts_with("cx_") {
            return Err(format!("not a ref: {reference}"));
        }
        if !text.contains(&summary_line(&fixture.name)) {
            return Err(format!("the summary is not this file's: {text}"));
        }
        let tokens = self.counter.count(text);
        if tokens > BUDGET_TOKENS {
            return Err(format!("{tokens} tokens, over the {BUDGET_TOKENS} budget"));
        }
        if result.get("structuredContent").is_some() {
            return Err("structuredContent kept beside a condensed text".into());
        }
        Ok(reference.to_owned())
    }
}

fn only_text(result: &Value) -> Result<&str, String> {
    if result["isError"] == true {
        return Err(format!("tool error: {result}"));
    }
    match result["content"].as_array().map(Vec::as_slice) {
        Some([block]) => block["text"]
            .as_str()
            .ok_or_else(|| format!("not a text block: {block}")),
        _ => Err(format!("expected one content block: {result}")),
    }
}

fn check_pass_through(result: &Value, fixture: &Fixture) -> Result<(), String> {
    let text = only_text(result)?;
    if text != fixture.text {
        return Err(format!(
            "text differs from the file ({} bytes, file {} bytes)",
            text.len(),
            fixture.text.len()
        ));
    }
    if result["structuredContent"]["content"] != fixture.text.as_str() {
        return Err("structuredContent differs from the file".into());
    }
    if result
        .get("_meta")
        .is_some_and(|meta| meta.get("condense").is_some())
    {
        return Err("a pass-through result carries condense metadata".into());
    }
    Ok(())
}

/// Retrieves the first five lines of an original by its ref and checks them.
async fn retrieve(client: &HttpClient, reference: &str, fixture: &Fixture) -> Sample {
    const LINES: usize = 5;
    let started = Instant::now();
    let answer = client
        .call_tool(
            "condense_retrieve",
            json!({"ref": reference, "offset": 0, "lines": LINES}),
        )
        .await;
    let latency = started.elapsed();
    let expected: String = fixture
        .text
        .lines()
        .take(LINES)
        .map(|line| format!("{line}\n"))
        .collect();
    let error = match answer {
        Ok(result) => match only_text(&result) {
            // The page, then the footer with the original's size and how to continue.
            Ok(text)
                if text
                    .strip_prefix(expected.as_str())
                    .is_some_and(|footer| footer.starts_with("[condense: lines 1-")) =>
            {
                None
            }
            Ok(text) => Some(format!("retrieved {text:?}, expected {expected:?}")),
            Err(error) => Some(error),
        },
        Err(error) => Some(format!("protocol error: {error}")),
    };
    Sample {
        kind: Kind::Retrieve,
        latency,
        error: error.map(|error| format!("retrieve {}: {error}", fixture.name)),
    }
}

/// The outcome of one burst.
#[derive(Debug)]
pub(crate) struct Burst {
    /// Every request's sample.
    pub(crate) samples: Vec<Sample>,
    /// From releasing the calls to the last answer.
    pub(crate) wall: Duration,
    /// The most calls the client had sent and not yet had answered, at once.
    pub(crate) max_in_flight: usize,
}

impl Burst {
    /// The errors, each naming its call.
    pub(crate) fn errors(&self) -> Vec<&str> {
        self.samples
            .iter()
            .filter_map(|sample| sample.error.as_deref())
            .collect()
    }

    /// How many requests of each kind were made.
    pub(crate) fn counts(&self) -> HashMap<Kind, usize> {
        let mut counts = HashMap::new();
        for sample in &self.samples {
            *counts.entry(sample.kind).or_default() += 1;
        }
        counts
    }
}

/// Starts every call of `plan` at once, spread round-robin over `sessions`, and waits for all.
pub(crate) async fn burst(sessions: &[Arc<HttpClient>], checker: &Checker, plan: &[Call]) -> Burst {
    let gate = Arc::new(tokio::sync::Barrier::new(plan.len() + 1));
    let in_flight = Arc::new(AtomicUsize::new(0));
    let max_in_flight = Arc::new(AtomicUsize::new(0));
    let tasks: Vec<_> = plan
        .iter()
        .enumerate()
        .map(|(index, call)| {
            let client = Arc::clone(&sessions[index % sessions.len()]);
            let (checker, call) = (checker.clone(), call.clone());
            let (gate, in_flight, max_in_flight) = (
                Arc::clone(&gate),
                Arc::clone(&in_flight),
                Arc::clone(&max_in_flight),
            );
            tokio::spawn(async move {
                gate.wait().await;
                let now = in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                max_in_flight.fetch_max(now, Ordering::SeqCst);
                let samples = checker.run(&client, &call).await;
                in_flight.fetch_sub(1, Ordering::SeqCst);
                samples
            })
        })
        .collect();
    gate.wait().await;
    let started = Instant::now();
    let mut samples = Vec::with_capacity(plan.len());
    for task in tasks {
        match task.await {
            Ok(done) => samples.extend(done),
            Err(error) => samples.push(Sample {
                kind: Kind::PassThrough,
                latency: Duration::ZERO,
                error: Some(format!("a call's task failed: {error}")),
            }),
        }
    }
    Burst {
        samples,
        wall: started.elapsed(),
        max_in_flight: max_in_flight.load(Ordering::SeqCst),
    }
}

/// Connects `count` client sessions at once (each gets its own upstream child process).
pub(crate) async fn connect_sessions(url: &str, count: usize) -> Vec<Arc<HttpClient>> {
    let connecting: Vec<_> = (0..count)
        .map(|_| {
            let url = url.to_owned();
            tokio::spawn(async move { HttpClient::connect(&url).await })
        })
        .collect();
    let mut sessions = Vec::with_capacity(count);
    for connection in connecting {
        match connection.await {
            Ok(Ok(client)) => sessions.push(Arc::new(client)),
            Ok(Err(error)) => panic!("session to {url}: {error}"),
            Err(error) => panic!("session to {url}: {error}"),
        }
    }
    sessions
}

/// Ends every session; the proxy stops their upstreams.
pub(crate) async fn close_sessions(sessions: Vec<Arc<HttpClient>>) {
    for session in sessions {
        if let Ok(client) = Arc::try_unwrap(session) {
            client.close().await;
        }
    }
}

/// The proxy's memory, from `/proc/<pid>/status`, in KiB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Memory {
    /// Resident now (`VmRSS`).
    pub(crate) rss_kib: u64,
    /// The most ever resident (`VmHWM`).
    pub(crate) peak_kib: u64,
}

/// CPU seconds (user and system) used by processes of the scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(crate) struct Cpu {
    /// The proxy process.
    pub(crate) proxy: f64,
    /// Its upstream children (the running ones).
    pub(crate) upstreams: f64,
}

/// CPU seconds used by the process whose `/proc/<pid>/stat` is at `path` (e.g.
/// `/proc/self/stat`).
pub(crate) fn cpu_seconds(path: &str) -> Option<f64> {
    ticks_to_seconds(&std::fs::read_to_string(path).ok()?)
}

/// The fields after the command name, which is in parentheses and may hold spaces.
fn stat_fields(stat: &str) -> Vec<&str> {
    stat.rsplit_once(')')
        .map(|(_, rest)| rest.split_whitespace().collect())
        .unwrap_or_default()
}

fn parent_pid(stat: &str) -> Option<u32> {
    stat_fields(stat).get(1)?.parse().ok()
}

fn ticks_to_seconds(stat: &str) -> Option<f64> {
    // utime and stime, fields 14 and 15 of stat(5), in clock ticks: 100 a second on Linux
    // (USER_HZ, fixed by the kernel's ABI whatever its internal tick rate).
    let fields = stat_fields(stat);
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// The `condense proxy --listen` child process; stopped on drop.
#[derive(Debug)]
pub(crate) struct Proxy {
    child: Child,
    addr: String,
    log: PathBuf,
}

impl Proxy {
    /// Starts `binary proxy --config config --listen 127.0.0.1:<free port> -- upstream…`,
    /// logging warnings to `log`, and waits until `/health` answers.
    pub(crate) fn start(binary: &Path, config: &Path, upstream: &[String], log: &Path) -> Proxy {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map(|addr| addr.port())
            .expect("a free loopback port");
        let addr = format!("127.0.0.1:{port}");
        let mut command = Command::new(binary);
        command
            .args(["proxy", "--config"])
            .arg(config)
            .args(["--listen", &addr, "--"])
            .args(upstream)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(log).expect("log file"));
        // The scenario's configuration file is the whole configuration.
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("CONDENSE_") {
                command.env_remove(name);
            }
        }
        command.env("CONDENSE_LOG", "warn");
        let child = command.spawn().expect("the condense binary starts");
        let proxy = Proxy {
            child,
            addr,
            log: log.to_path_buf(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while !proxy.healthy() {
            assert!(
                Instant::now() < deadline,
                "the proxy did not answer /health; its log:\n{}",
                proxy.log()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        proxy
    }

    /// The MCP endpoint.
    pub(crate) fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The process id, to read its memory.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Its memory now; `None` where `/proc` does not exist.
    pub(crate) fn memory(&self) -> Option<Memory> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).ok()?;
        let field = |name: &str| {
            status
                .lines()
                .find_map(|line| line.strip_prefix(name))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|kib| kib.parse::<u64>().ok())
        };
        Some(Memory {
            rss_kib: field("VmRSS:")?,
            peak_kib: field("VmHWM:")?,
        })
    }

    /// CPU time used so far by the proxy itself and by its upstream child processes; `None`
    /// where `/proc` does not exist.
    pub(crate) fn cpu(&self) -> Option<Cpu> {
        let pid = self.pid();
        let proxy = cpu_seconds(&format!("/proc/{pid}/stat"))?;
        let upstreams = std::fs::read_dir("/proc")
            .ok()?
            .flatten()
            .filter_map(|entry| {
                let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
                (parent_pid(&stat) == Some(pid)).then(|| ticks_to_seconds(&stat))?
            })
            .sum();
        Some(Cpu { proxy, upstreams })
    }

    /// What it logged so far.
    pub(crate) fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn healthy(&self) -> bool {
        use std::io::{Read, Write};
        let Ok(mut stream) = std::net::TcpStream::connect(&self.addr) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let request = format!(
            "GET /health HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.addr
        );
        let mut response = String::new();
        stream.write_all(request.as_bytes()).is_ok()
            && stream.read_to_string(&mut response).is_ok()
            && response.contains("\"status\":\"ok\"")
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        // SIGTERM first: the proxy then stops its upstream children itself.
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes the proxy's configuration for an LLM at `llm_url` with `max_concurrency`, plus
/// `extra` TOML (e.g. a `[cache]` section), to `path`.
pub(crate) fn write_config(path: &Path, llm_url: &str, max_concurrency: usize, extra: &str) {
    let text = format!(
        "[defaults]\nthreshold_tokens = {THRESHOLD_TOKENS}\nbudget_tokens = {BUDGET_TOKENS}\n\n\
         [llm]\nbase_url = \"{llm_url}\"\nmodel = \"fake\"\nmax_concurrency = {max_concurrency}\n\
         timeout_ms = 30000\n\n{extra}"
    );
    std::fs::write(path, text).expect("write config");
}

/// Latency percentiles of samples, in milliseconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Percentiles {
    /// How many samples.
    pub(crate) count: usize,
    /// Median.
    pub(crate) p50: f64,
    /// 90th percentile.
    pub(crate) p90: f64,
    /// 99th percentile.
    pub(crate) p99: f64,
    /// The slowest.
    pub(crate) max: f64,
}

impl Percentiles {
    /// The percentiles of `latencies` (nearest rank); `None` when empty.
    pub(crate) fn of(mut latencies: Vec<Duration>) -> Option<Self> {
        if latencies.is_empty() {
            return None;
        }
        latencies.sort_unstable();
        let at = |p: f64| {
            let rank = ((latencies.len() as f64) * p).ceil() as usize;
            latencies[rank.clamp(1, latencies.len()) - 1].as_secs_f64() * 1000.0
        };
        Some(Percentiles {
            count: latencies.len(),
            p50: at(0.50),
            p90: at(0.90),
            p99: at(0.99),
            max: at(1.0),
        })
    }
}
