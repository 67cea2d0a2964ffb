//! The MCP proxy against real upstream servers (`server-everything`, `server-filesystem`) and a
//! real client (the official Python SDK), driving the `condense` binary.
//!
//! The tools come from `scripts/mcp/install.sh`, which exports `CONDENSE_TEST_NODE_MODULES` and
//! `CONDENSE_TEST_PYTHON`. Without them the tests print a notice and pass, except under `CI`,
//! where a missing tool is a failure.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) struct Rig {
    node_modules: PathBuf,
    python: PathBuf,
}

pub(crate) fn rig() -> Option<Rig> {
    let node_modules = std::env::var_os("CONDENSE_TEST_NODE_MODULES").map(PathBuf::from);
    let python = std::env::var_os("CONDENSE_TEST_PYTHON").map(PathBuf::from);
    match (node_modules, python) {
        (Some(node_modules), Some(python)) => Some(Rig {
            node_modules,
            python,
        }),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI is set but CONDENSE_TEST_NODE_MODULES / CONDENSE_TEST_PYTHON are not: run scripts/mcp/install.sh"
            );
            eprintln!("skipping: run `eval \"$(scripts/mcp/install.sh)\"` to test the MCP proxy");
            None
        }
    }
}

impl Rig {
    fn everything(&self) -> Vec<String> {
        vec![
            "node".into(),
            self.path("@modelcontextprotocol/server-everything/dist/index.js"),
            "stdio".into(),
        ]
    }

    /// server-everything serving streamable HTTP on a free port, once it accepts connections;
    /// with its MCP endpoint's URL.
    fn everything_over_http(&self) -> (std::process::Child, String) {
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
            listener.local_addr().expect("addr").port()
        };
        let mut server = Command::new("node")
            .arg(self.path("@modelcontextprotocol/server-everything/dist/index.js"))
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .expect("server-everything starts");
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                let _ = server.kill();
                panic!("server-everything did not listen on {port}");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        (server, format!("http://127.0.0.1:{port}/mcp"))
    }

    pub(crate) fn filesystem(&self, root: &Path) -> Vec<String> {
        vec![
            "node".into(),
            self.path("@modelcontextprotocol/server-filesystem/dist/index.js"),
            root.display().to_string(),
        ]
    }

    fn path(&self, relative: &str) -> String {
        self.node_modules.join(relative).display().to_string()
    }

    /// Runs `steps` with the Python client against `target` ("stdio" + command, or "http" + URL).
    pub(crate) fn client(&self, steps: &Value, target: &[String]) -> Value {
        let output = Command::new(&self.python)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py"))
            .arg(steps.to_string())
            .args(target)
            .env("CONDENSE_LOG", "warn")
            .stderr(Stdio::inherit())
            .output()
            .expect("python runs");
        assert!(output.status.success(), "client failed: {output:?}");
        serde_json::from_slice(&output.stdout).expect("client prints JSON")
    }
}

pub(crate) fn via_proxy(upstream: &[String], config: Option<&Path>) -> Vec<String> {
    // The client passes only a few variables on: the store's directory goes by `env`, so the
    // proxy keeps originals in a temporary directory, never the user's cache.
    let mut target = vec![
        "stdio".to_owned(),
        "/usr/bin/env".to_owned(),
        format!("CONDENSE_STORE_DIR={}", crate::cli::test_store_dir()),
        env!("CARGO_BIN_EXE_condense").to_owned(),
        "proxy".to_owned(),
    ];
    if let Some(config) = config {
        target.push("--config".into());
        target.push(config.display().to_string());
    }
    target.push("--".into());
    target.extend(upstream.iter().cloned());
    target
}

fn direct(upstream: &[String]) -> Vec<String> {
    let mut target = vec!["stdio".to_owned()];
    target.extend(upstream.iter().cloned());
    target
}

pub(crate) fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("condense-mcp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
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

#[test]
fn everything_features_pass_through_unchanged() {
    let Some(rig) = rig() else { return };
    let steps = json!([
        {"op": "call_tool", "name": "echo", "arguments": {"message": "hello through the proxy"}},
        {"op": "call_tool", "name": "get-sum", "arguments": {"a": 2, "b": 40}},
        {"op": "call_tool", "name": "get-tiny-image"},
        {"op": "call_tool", "name": "get-structured-content", "arguments": {"location": "New York"}},
        {"op": "call_tool", "name": "get-resource-links", "arguments": {"count": 2}},
        {"op": "call_tool", "name": "get-annotated-message", "arguments": {"messageType": "error", "includeImage": true}},
        {"op": "list_prompts"},
        {"op": "get_prompt", "name": "args-prompt", "arguments": {"city": "Lyon"}},
        {"op": "list_resources"},
        {"op": "list_resource_templates"},
        {"op": "read_resource", "uri": "demo://resource/static/document/features.md"},
        {"op": "complete", "prompt": "completable-prompt", "argument": "department", "value": "E"},
        {"op": "set_level", "level": "debug"},
        {"op": "ping"}
    ]);
    let direct = rig.client(&steps, &direct(&rig.everything()));
    let proxied = rig.client(&steps, &via_proxy(&rig.everything(), None));
    for (index, (want, got)) in direct["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .zip(proxied["steps"].as_array().expect("steps"))
        .enumerate()
    {
        assert!(
            want.get("error").is_none(),
            "direct step {index} failed: {want}"
        );
        assert_eq!(
            got, want,
            "step {index} ({}) differs through the proxy",
            steps[index]["op"]
        );
    }
    let server_info = &proxied["server_info"]["serverInfo"];
    assert!(
        server_info["name"]
            .as_str()
            .is_some_and(|name| name.starts_with("condense (")),
        "{server_info}"
    );
}

/// A config that switches on every tool the proxy can add.
const ALL_ADDED_TOOLS: &str = "[proxy]\nadded_tools = [\"call_tool_summarized\", \"summarize\", \
    \"summarize_for_extraction\", \"condense_retrieve\"]\n";

fn all_added_tools_config(name: &str) -> PathBuf {
    let config = temp_dir(name).join("condense.toml");
    std::fs::write(&config, ALL_ADDED_TOOLS).expect("write config");
    config
}

#[test]
fn tools_gain_query_argument_and_added_tools_are_listed() {
    let Some(rig) = rig() else { return };
    let config = all_added_tools_config("all-added");
    let report = rig.client(
        &json!([{"op": "list_tools"}]),
        &via_proxy(&rig.everything(), Some(&config)),
    );
    let tools = report["steps"][0]["tools"].as_array().expect("tools");
    let echo = tools
        .iter()
        .find(|tool| tool["name"] == "echo")
        .expect("echo listed");
    assert_eq!(
        echo["inputSchema"]["properties"]["condense_query"]["type"],
        "string"
    );
    assert_eq!(echo["inputSchema"]["required"], json!(["message"]));
    for added in [
        "call_tool_summarized",
        "summarize",
        "summarize_for_extraction",
        "condense_retrieve",
    ] {
        assert!(
            tools.iter().any(|tool| tool["name"] == added),
            "{added} is listed"
        );
    }
    // The sampling tool is registered only for clients that offer sampling: the proxy
    // introduced the client's capabilities upstream.
    assert!(
        tools
            .iter()
            .any(|tool| tool["name"] == "trigger-sampling-request")
    );
}

/// Characters and cl100k tokens of a value's compact JSON, as a client sends it on.
fn size(json: &str) -> (usize, usize) {
    let counter = condense::TokenCounter::new(condense::Encoding::Cl100kBase);
    (json.chars().count(), counter.count(json))
}

/// What the proxy adds to a `tools/list` answer, as compact JSON: each upstream tool's query
/// argument and each added tool's definition. Prints it per tool; returns the total tokens.
fn addition_to_tool_list(tools: &[Value], label: &str) -> usize {
    let (mut chars, mut tokens) = (0, 0);
    for tool in tools {
        let name = tool["name"].as_str().expect("name");
        let json = match &tool["inputSchema"]["properties"]["condense_query"] {
            Value::Null => format!(",{tool}"),
            query => format!(",\"condense_query\":{query}"),
        };
        let (c, t) = size(&json);
        eprintln!("{label}: {name:<28} +{c:>4} chars +{t:>3} tokens");
        chars += c;
        tokens += t;
    }
    eprintln!("{label}: total +{chars} chars +{tokens} tokens");
    tokens
}

#[test]
fn the_default_addition_to_a_14_tool_list_stays_within_400_tokens() {
    let Some(rig) = rig() else { return };
    let root = temp_dir("tool-list-cost");
    let upstream = rig.filesystem(&root);
    let list = json!([{"op": "list_tools"}]);
    let tools_of = |report: &Value| {
        report["steps"][0]["tools"]
            .as_array()
            .cloned()
            .expect("tools")
    };
    let direct = tools_of(&rig.client(&list, &direct(&upstream)));
    assert_eq!(direct.len(), 14, "server-filesystem's tool count changed");
    let by_default = tools_of(&rig.client(&list, &via_proxy(&upstream, None)));
    let config = all_added_tools_config("tool-list-cost-all");
    let with_all = tools_of(&rig.client(&list, &via_proxy(&upstream, Some(&config))));
    assert_eq!(
        with_all.len(),
        direct.len() + 4,
        "every added tool is listed"
    );

    let default_tokens = addition_to_tool_list(&by_default, "default");
    addition_to_tool_list(&with_all, "all added tools");
    assert!(
        default_tokens <= 400,
        "the proxy adds {default_tokens} tokens to every request"
    );
    assert!(
        by_default
            .iter()
            .all(|tool| tool["name"] == "condense_retrieve"
                || tool["inputSchema"]["properties"]["condense_query"]["description"].is_string()),
        "every upstream tool gains a described query argument"
    );
}

#[test]
fn a_relayed_elicitation_arrives_as_the_upstream_sent_it() {
    let Some(rig) = rig() else { return };
    let steps = json!([{"op": "call_tool", "name": "trigger-elicitation-request", "timeout": 30}]);
    let direct = rig.client(&steps, &direct(&rig.everything()));
    let proxied = rig.client(&steps, &via_proxy(&rig.everything(), None));
    let asked = direct["elicitations"].as_array().expect("elicitations");
    assert_eq!(asked.len(), 1, "the upstream asked once: {direct}");
    assert!(asked[0].get("_meta").is_none(), "{}", asked[0]);
    // Nothing added on the way, not even rmcp's own progress token. (rmcp writes the schema's
    // numbers as floats: `0` arrives as `0.0`, the same JSON number.)
    assert_eq!(
        as_floats(&proxied["elicitations"]),
        as_floats(&direct["elicitations"])
    );
    assert_eq!(proxied["steps"], direct["steps"]);
}

/// `value` with every number as a float, to compare JSON numbers by value.
fn as_floats(value: &Value) -> Value {
    match value {
        Value::Number(number) => json!(number.as_f64()),
        Value::Array(items) => items.iter().map(as_floats).collect(),
        Value::Object(map) => map
            .iter()
            .map(|(key, item)| (key.clone(), as_floats(item)))
            .collect(),
        other => other.clone(),
    }
}

#[test]
fn summarize_takes_a_chunking_strategy_and_names_a_bad_one() {
    let Some(rig) = rig() else { return };
    let steps = json!([
        {"op": "call_tool", "name": "summarize", "arguments": {"content": "already short", "strategy": "token"}},
        {"op": "call_tool", "name": "summarize", "arguments": {"content": "already short", "strategy": "sentences"}}
    ]);
    let config = all_added_tools_config("summarize-strategy");
    let report = rig.client(&steps, &via_proxy(&rig.everything(), Some(&config)));
    let steps = report["steps"].as_array().expect("steps");
    assert_eq!(steps[0]["isError"], false, "{}", steps[0]);
    assert_eq!(text_of(&steps[0]), "already short");
    assert_eq!(steps[1]["isError"], true, "{}", steps[1]);
    let message = text_of(&steps[1]);
    assert!(
        message.contains("strategy") && message.contains("sentences"),
        "{message}"
    );
}

#[test]
fn server_requests_progress_and_query_argument_round_trip() {
    let Some(rig) = rig() else { return };
    let steps = json!([
        {"op": "call_tool", "name": "trigger-sampling-request", "arguments": {"prompt": "ping", "maxTokens": 10}},
        {"op": "call_tool", "name": "get-roots-list"},
        {"op": "call_tool", "name": "trigger-long-running-operation", "arguments": {"duration": 1, "steps": 3}},
        {"op": "call_tool", "name": "echo", "arguments": {"message": "q", "condense_query": "anything"}}
    ]);
    let report = rig.client(&steps, &via_proxy(&rig.everything(), None));
    let steps = report["steps"].as_array().expect("steps");
    assert!(
        text_of(&steps[0]).contains("sampled: "),
        "sampling: {}",
        steps[0]
    );
    assert!(
        text_of(&steps[1]).contains("test-root"),
        "roots: {}",
        steps[1]
    );
    assert_eq!(steps[2]["isError"], false, "long operation: {}", steps[2]);
    let progress = report["progress"].as_array().expect("progress");
    assert_eq!(
        progress.len(),
        3,
        "progress notifications reach the client: {progress:?}"
    );
    // The query argument was removed before forwarding: echo's strict schema accepted the call.
    assert_eq!(text_of(&steps[3]), "Echo: q", "{}", steps[3]);
}

#[test]
fn large_file_is_condensed_with_header_and_retrievable() {
    let Some(rig) = rig() else { return };
    let root = temp_dir("fs");
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/dev/09-zookeeper-errors/input.txt");
    let corpus = if corpus.exists() {
        corpus
    } else {
        PathBuf::from("/work/shared/corpus/dev/09-zookeeper-errors/input.txt")
    };
    let log = root.join("zookeeper.log");
    std::fs::copy(&corpus, &log).expect("corpus file copied");
    let small = root.join("small.txt");
    std::fs::write(&small, "just a few words\n").expect("write");
    let config = root.join("condense.toml");
    std::fs::write(
        &config,
        "[defaults]\nthreshold_tokens = 2000\nbudget_tokens = 800\n",
    )
    .expect("write");
    let path = |p: &Path| p.display().to_string();
    let steps = json!([
        {"op": "call_tool", "name": "read_text_file", "arguments": {"path": path(&log)}},
        {"op": "call_tool", "name": "read_text_file", "arguments": {"path": path(&log), "condense_query": "ERROR NIOServerCnxn"}},
        {"op": "call_tool", "name": "read_text_file", "arguments": {"path": path(&small)}},
        {"op": "list_tools"}
    ]);
    let report = rig.client(&steps, &via_proxy(&rig.filesystem(&root), Some(&config)));
    let steps = report["steps"].as_array().expect("steps");

    let condensed = text_of(&steps[0]);
    assert!(condensed.starts_with("[condense:"), "{condensed}");
    assert!(
        condensed.len() < 8000,
        "condensed to the budget: {} bytes",
        condensed.len()
    );
    // Drop policy (the default): no huge structuredContent beside the condensed text, and the
    // listed tool no longer promises one.
    assert!(steps[0].get("structuredContent").is_none(), "{}", steps[0]);
    let tools = steps[3]["tools"].as_array().expect("tools");
    let read = tools
        .iter()
        .find(|tool| tool["name"] == "read_text_file")
        .expect("listed");
    assert!(read.get("outputSchema").is_none(), "{read}");

    let with_query = text_of(&steps[1]);
    assert!(with_query.starts_with("[condense:"), "{with_query}");

    // A small result passes byte for byte, structuredContent included.
    assert_eq!(text_of(&steps[2]), "just a few words\n");
    assert_eq!(
        steps[2]["structuredContent"]["content"],
        "just a few words\n"
    );

    let reference = condensed
        .split("kept as ")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("a ref in the header")
        .to_owned();
    // Issue 13: clients start a new proxy process per session. The restarted proxy answers
    // for a ref the first one made, from the disk store, without seeing the file again.
    let steps = json!([
        {"op": "call_tool", "name": "condense_retrieve", "arguments": {"ref": reference, "pattern": "NIOServerCnxn@180", "lines": 5}},
        {"op": "call_tool", "name": "condense_retrieve", "arguments": {"ref": reference, "offset": 0, "lines": 3}},
        {"op": "call_tool", "name": "condense_retrieve", "arguments": {"ref": reference, "pattern": "nioservercnxn@180", "lines": 1}}
    ]);
    let report = rig.client(&steps, &via_proxy(&rig.filesystem(&root), Some(&config)));
    let steps = report["steps"].as_array().expect("steps");
    let grep = text_of(&steps[0]);
    assert!(
        grep.contains("2015-07-29 23:44:28,903 - ERROR [CommitProcessor:1:NIOServerCnxn@180]"),
        "{grep}"
    );
    assert!(grep.contains("[condense: matches 1-1 of 1;"), "{grep}");
    let original = std::fs::read_to_string(&log).expect("read");
    let first_three: String = original.split_inclusive('\n').take(3).collect();
    let lines = text_of(&steps[1]);
    assert!(lines.starts_with(&first_three), "{lines}");
    assert!(
        lines.contains(&format!(
            "the original: {} lines, {} characters; continue with",
            original.lines().count(),
            original.chars().count()
        )),
        "{lines}"
    );
    // Case matters unless the call says otherwise.
    assert!(text_of(&steps[2]).contains("[no match for"), "{}", steps[2]);
    let _ = std::fs::remove_dir_all(&root);
}

/// Issue 15: a 17 MB log read through the real server-filesystem is one JSON-RPC line of about
/// 34 MB (the text and its structured copy), over rmcp's 16 MiB limit. It comes back
/// condensed within seconds instead of hanging.
#[test]
fn a_17_mb_file_read_through_server_filesystem_is_condensed() {
    let Some(rig) = rig() else { return };
    let root = temp_dir("fs-17mb");
    let log = root.join("service.log");
    let mut text = String::with_capacity(17_100_000);
    let mut number = 0u64;
    while text.len() < 17_000_000 {
        let line = if number % 4000 == 1234 {
            format!(
                "2026-02-03 04:05:06,{:03} ERROR [pool-{}] job {number} failed: checksum mismatch in segment {}\n",
                number % 1000,
                number % 16,
                number % 97
            )
        } else {
            format!(
                "2026-02-03 04:05:06,{:03} INFO [pool-{}] job {number} finished in {} ms\n",
                number % 1000,
                number % 16,
                number % 250
            )
        };
        text.push_str(&line);
        number += 1;
    }
    std::fs::write(&log, &text).expect("write the log");
    let steps = json!([
        {"op": "call_tool", "name": "read_text_file", "arguments": {"path": log.display().to_string()}, "timeout": 90}
    ]);
    let started = Instant::now();
    let report = rig.client(&steps, &via_proxy(&rig.filesystem(&root), None));
    let elapsed = started.elapsed();
    let step = &report["steps"][0];
    let condensed = text_of(step);
    assert!(condensed.starts_with("[condense:"), "{step}");
    assert!(condensed.contains("checksum mismatch"), "{condensed}");
    assert!(elapsed < Duration::from_secs(60), "{elapsed:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// `condense proxy --listen` on a free port in front of `upstream` (`--` and a command, or
/// `--upstream-url` and a URL), once its health endpoint answers; with the URL of its MCP
/// endpoint.
fn listening_proxy(upstream: &[String], config: Option<&Path>) -> (std::process::Child, String) {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let addr = format!("127.0.0.1:{port}");
    let mut command = Command::new(env!("CARGO_BIN_EXE_condense"));
    command.arg("proxy");
    if let Some(config) = config {
        command.arg("--config").arg(config);
    }
    let mut proxy = command
        .args(["--listen", &addr])
        .args(upstream)
        .env("CONDENSE_LOG", "warn")
        .env("CONDENSE_STORE_DIR", crate::cli::test_store_dir())
        .stdin(Stdio::null())
        .spawn()
        .expect("proxy starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    let health = loop {
        if let Ok(body) = http_get(&addr, "/health") {
            break body;
        }
        if Instant::now() > deadline {
            let _ = proxy.kill();
            panic!("health endpoint did not answer");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(health.contains("\"status\":\"ok\""), "{health}");
    (proxy, format!("http://{addr}/mcp"))
}

#[test]
fn http_mode_serves_health_and_mcp() {
    let Some(rig) = rig() else { return };
    let (mut proxy, url) = listening_proxy(&command(rig.everything()), None);
    let report = rig.client(
        &json!([{"op": "call_tool", "name": "echo", "arguments": {"message": "over http"}}]),
        &["http".to_owned(), url],
    );
    assert_eq!(text_of(&report["steps"][0]), "Echo: over http");
    let _ = proxy.kill();
    let _ = proxy.wait();
}

fn http_get(addr: &str, path: &str) -> std::io::Result<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    Ok(response)
}

/// A PNG of `width` x `height` whose image data is `bytes` of noise: a valid header is all the
/// proxy reads, and noise does not compress, like a photo.
fn noisy_png(width: u32, height: u32, bytes: usize) -> Vec<u8> {
    let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
    png.extend(width.to_be_bytes());
    png.extend(height.to_be_bytes());
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    while png.len() < bytes {
        // xorshift: cheap bytes no compressor shrinks.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        png.extend(state.to_le_bytes());
    }
    png.truncate(bytes);
    png
}

/// Issue 14 point 7: a 270 KB image read through server-filesystem reaches the model as a
/// one-line description with a ref, in `content` and in `structuredContent`; the ref gives the
/// image back whole.
#[test]
fn a_large_image_is_replaced_by_a_description_and_retrievable() {
    let Some(rig) = rig() else { return };
    let root = temp_dir("fs-image");
    let image = root.join("photo.png");
    let png = noisy_png(1024, 768, 270_000);
    std::fs::write(&image, &png).expect("write the image");
    let steps = json!([
        {"op": "call_tool", "name": "read_media_file", "arguments": {"path": image.display().to_string()}}
    ]);
    let direct_report = rig.client(&steps, &direct(&rig.filesystem(&root)));
    let direct_step = &direct_report["steps"][0];
    assert_eq!(direct_step["content"][0]["type"], "image", "{direct_step}");
    let size = |step: &Value| step.to_string().len();

    let proxied = rig.client(&steps, &via_proxy(&rig.filesystem(&root), None));
    let step = &proxied["steps"][0];
    let description = text_of(step);
    assert!(
        description.starts_with("[image/png, 270,000 bytes, 1024x768 px: "),
        "{step}"
    );
    if let Some(structured) = step.get("structuredContent") {
        assert!(
            !structured
                .to_string()
                .contains(&direct_step["content"][0]["data"].as_str().unwrap()[..64])
        );
    }
    eprintln!(
        "read_media_file of a 270,000-byte PNG: {} characters direct, {} through the proxy",
        size(direct_step),
        size(step)
    );
    assert!(size(step) < 1000, "{step}");

    let reference = description
        .split("ref ")
        .nth(1)
        .and_then(|rest| rest.split(' ').next())
        .expect("a ref in the description")
        .to_owned();
    let steps = json!([
        {"op": "call_tool", "name": "read_media_file", "arguments": {"path": image.display().to_string()}},
        {"op": "call_tool", "name": "condense_retrieve", "arguments": {"ref": reference}}
    ]);
    let report = rig.client(&steps, &via_proxy(&rig.filesystem(&root), None));
    let back = &report["steps"][1]["content"][0];
    assert_eq!(back["type"], "image", "{back}");
    assert_eq!(back["mimeType"], "image/png");
    assert_eq!(back["data"], direct_step["content"][0]["data"]);
    let _ = std::fs::remove_dir_all(&root);
}

/// The steps of the tasks tests: tools listed, a task run to its end, a task cancelled.
fn task_steps() -> Value {
    json!([
        {"op": "list_tools"},
        {"op": "call_tool_as_task", "name": "simulate-research-query", "arguments": {"topic": "tide pools"}},
        {"op": "call_tool_as_task", "name": "simulate-research-query", "arguments": {"topic": "moss"}, "cancel": true}
    ])
}

/// A config low enough that the research report, a few hundred tokens, is condensed.
fn task_config(root: &Path) -> PathBuf {
    let config = root.join("condense.toml");
    std::fs::write(
        &config,
        "[defaults]\nthreshold_tokens = 150\nbudget_tokens = 100\n",
    )
    .expect("write");
    config
}

/// Issue 14 point 2: MCP tasks (protocol 2025-11-25) through the proxy, against
/// server-everything's `simulate-research-query` (which requires task augmentation), driven by
/// the Python SDK's task client: capability, `execution`, create, poll, list, result, cancel.
#[test]
fn tasks_are_relayed_end_to_end_and_their_result_condensed() {
    let Some(rig) = rig() else { return };
    let root = temp_dir("tasks");
    let config = task_config(&root);
    let direct = rig.client(&task_steps(), &direct(&rig.everything()));
    let proxied = rig.client(&task_steps(), &via_proxy(&rig.everything(), Some(&config)));
    assert_tasks_relayed(&direct, &proxied);
    let _ = std::fs::remove_dir_all(&root);
}

/// The same, with the client on streamable HTTP (`condense proxy --listen`).
#[test]
fn tasks_are_relayed_to_a_client_over_http() {
    let Some(rig) = rig() else { return };
    let root = temp_dir("tasks-listen");
    let config = task_config(&root);
    let direct = rig.client(&task_steps(), &direct(&rig.everything()));
    let (mut proxy, url) = listening_proxy(&command(rig.everything()), Some(&config));
    let proxied = rig.client(&task_steps(), &["http".to_owned(), url]);
    let _ = proxy.kill();
    let _ = proxy.wait();
    assert_tasks_relayed(&direct, &proxied);
    let _ = std::fs::remove_dir_all(&root);
}

/// The same, with the upstream on streamable HTTP (`condense proxy --upstream-url`).
#[test]
fn tasks_are_relayed_from_an_upstream_over_http() {
    let Some(rig) = rig() else { return };
    let root = temp_dir("tasks-upstream-url");
    let config = task_config(&root);
    let (mut everything, url) = rig.everything_over_http();
    let direct = rig.client(&task_steps(), &["http".to_owned(), url.clone()]);
    let proxied = rig.client(
        &task_steps(),
        &[
            "stdio".to_owned(),
            "/usr/bin/env".to_owned(),
            format!("CONDENSE_STORE_DIR={}", crate::cli::test_store_dir()),
            env!("CARGO_BIN_EXE_condense").to_owned(),
            "proxy".to_owned(),
            "--config".to_owned(),
            config.display().to_string(),
            "--upstream-url".to_owned(),
            url,
        ],
    );
    let _ = everything.kill();
    let _ = everything.wait();
    assert_tasks_relayed(&direct, &proxied);
    let _ = std::fs::remove_dir_all(&root);
}

/// The same, with both sides on streamable HTTP.
#[test]
fn tasks_are_relayed_between_a_client_and_an_upstream_both_over_http() {
    let Some(rig) = rig() else { return };
    let root = temp_dir("tasks-http-both");
    let config = task_config(&root);
    let (mut everything, url) = rig.everything_over_http();
    let direct = rig.client(&task_steps(), &["http".to_owned(), url.clone()]);
    let (mut proxy, proxy_url) =
        listening_proxy(&["--upstream-url".to_owned(), url], Some(&config));
    let proxied = rig.client(&task_steps(), &["http".to_owned(), proxy_url]);
    for child in [&mut proxy, &mut everything] {
        let _ = child.kill();
        let _ = child.wait();
    }
    assert_tasks_relayed(&direct, &proxied);
    let _ = std::fs::remove_dir_all(&root);
}

/// `--` and the command line of an upstream server.
fn command(upstream: Vec<String>) -> Vec<String> {
    std::iter::once("--".to_owned()).chain(upstream).collect()
}

/// What a client sees of tasks through the proxy (`proxied`) is what it sees of the upstream
/// alone (`direct`), but for the task's final result, condensed.
fn assert_tasks_relayed(direct: &Value, proxied: &Value) {
    let capability = |report: &Value| report["server_info"]["capabilities"]["tasks"].clone();
    assert!(capability(direct).is_object(), "{}", direct["server_info"]);
    assert_eq!(capability(proxied), capability(direct));
    let execution = |report: &Value| {
        report["steps"][0]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .find(|tool| tool["name"] == "simulate-research-query")
            .expect("listed")["execution"]
            .clone()
    };
    assert!(execution(direct).is_object(), "{}", direct["steps"][0]);
    assert_eq!(execution(proxied), execution(direct));

    let (alone, through) = (&direct["steps"][1], &proxied["steps"][1]);
    assert!(through.get("error").is_none(), "{through}");
    assert_eq!(
        through["statuses"].as_array().expect("statuses").last(),
        Some(&json!("completed"))
    );
    let task_id = &through["created"]["task"]["taskId"];
    assert!(
        through["listed"]
            .as_array()
            .expect("listed")
            .contains(task_id),
        "{through}"
    );
    let report = text_of(&alone["result"]);
    let condensed = text_of(&through["result"]);
    assert!(!report.starts_with("[condense:"), "{report}");
    assert!(condensed.starts_with("[condense:"), "{condensed}");
    assert!(condensed.len() < report.len(), "{condensed}");

    // Status notifications: the upstream's, relayed as they were.
    let statuses = |report: &Value, id: &Value| -> Vec<Value> {
        report["task_statuses"]
            .as_array()
            .expect("task statuses")
            .iter()
            .filter(|status| &status["taskId"] == id)
            .map(|status| status["status"].clone())
            .collect()
    };
    let direct_statuses = statuses(direct, &alone["created"]["task"]["taskId"]);
    assert!(
        direct_statuses.contains(&json!("completed")),
        "{direct_statuses:?}"
    );
    assert_eq!(statuses(proxied, task_id), direct_statuses);

    assert!(
        proxied["steps"][2].get("error").is_none(),
        "{}",
        proxied["steps"][2]
    );
    assert_eq!(
        proxied["steps"][2]["cancelled"]["status"],
        direct["steps"][2]["cancelled"]["status"]
    );
}
