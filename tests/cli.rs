//! The `condense` binary, run as a user would.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn condense(args: &[&str], stdin: Option<&str>) -> Output {
    condense_with_env(args, stdin, &[])
}

/// The store the binary uses in these tests: a temporary directory, never the user's cache.
pub(crate) fn test_store_dir() -> String {
    std::env::temp_dir()
        .join(format!("condense-test-store-{}", std::process::id()))
        .display()
        .to_string()
}

/// Runs the binary with `env` set on top of an environment without condense's own variables,
/// with its store in [`test_store_dir`].
fn condense_with_env(args: &[&str], stdin: Option<&str>, env: &[(&str, &str)]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_condense"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CONDENSE_CONFIG")
        .env_remove("CONDENSE_LLM_BASE_URL")
        .env("CONDENSE_STORE_DIR", test_store_dir())
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = stdin.unwrap_or("").to_owned();
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || pipe.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    output
}

const SAMPLE: &str = "examples/data/zookeeper.log";

#[test]
fn compress_prints_the_condensed_text_with_its_header() {
    let out = condense(
        &[
            "compress",
            SAMPLE,
            "--budget",
            "800",
            "--query",
            "ERROR events",
        ],
        None,
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.starts_with("[condense: extract, "), "{text}");
    assert!(condense::TokenCounter::default().count(&text) <= 800);
}

#[test]
fn json_mode_prints_exactly_one_object_with_the_stats() {
    let out = condense(
        &[
            "compress", SAMPLE, "--budget", "500", "--method", "truncate", "--json",
        ],
        None,
    );
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for key in [
        "text",
        "method",
        "tokens_before",
        "tokens_after",
        "ref",
        "cached",
        "elapsed_ms",
        "fallback",
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["method"], "truncate");
    // Truncation was asked for, not fallen back to.
    assert_eq!(json.get("fallback"), Some(&serde_json::Value::Null));
    assert!(json["tokens_after"].as_u64().unwrap() <= 500);
    assert!(json["tokens_before"].as_u64().unwrap() > 50_000);
}

#[test]
fn standard_input_and_small_outputs_pass_through() {
    let out = condense(&["compress", "-", "--json"], Some("just a few words\n"));
    assert!(out.status.success());
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["method"], "passthrough");
    assert_eq!(json["text"], "just a few words\n");
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let out = condense(&["compress", "no/such/file.txt"], None);
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("no/such/file.txt"), "{stderr}");
}

#[test]
fn a_bad_config_names_the_file_and_the_key() {
    let dir = std::env::temp_dir().join(format!("condense-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("condense.toml");
    std::fs::write(&config, "[defaults]\nbudget_tokens = \"lots\"\n").unwrap();
    let out = condense(
        &["compress", SAMPLE, "--config", config.to_str().unwrap()],
        None,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("condense.toml") && stderr.contains("defaults.budget_tokens"),
        "{stderr}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn one_config_file_serves_compress_and_proxy_and_both_name_a_bad_proxy_key() {
    let dir = std::env::temp_dir().join(format!("condense-cli-shared-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("condense.toml");
    let shared = "[defaults]\nstructured_content = \"keep\"\n[proxy]\nupstream_timeout_ms = 5000\n\n[[tools]]\nmatch = \"read_*\"\nquery_argument = false\n";
    std::fs::write(&config, shared).unwrap();
    let config = config.to_str().unwrap();
    let out = condense(&["compress", SAMPLE, "--config", config], None);
    assert!(out.status.success(), "{out:?}");

    std::fs::write(
        config,
        shared.replace("upstream_timeout_ms = 5000", "upstream_timout_ms = 5000"),
    )
    .unwrap();
    for args in [
        vec!["compress", SAMPLE, "--config", config],
        vec!["proxy", "--config", config, "--", "true"],
    ] {
        let out = condense(&args, None);
        assert!(!out.status.success());
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(
            stderr.contains("condense.toml") && stderr.contains("proxy.upstream_timout_ms"),
            "{args:?}: {stderr}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn invalid_utf8_is_read_not_refused() {
    let dir = std::env::temp_dir().join(format!("condense-cli-bytes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bytes.bin");
    std::fs::write(&file, b"ok \xff\xfe line\n").unwrap();
    let out = condense(&["compress", file.to_str().unwrap()], None);
    assert!(out.status.success());
    assert!(
        String::from_utf8(out.stdout)
            .unwrap()
            .contains("ok \u{fffd}\u{fffd} line")
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn json_logs_carry_the_service_field() {
    let out = condense(
        &[
            "--log-format",
            "json",
            "--log",
            "info",
            "--service",
            "edge-7",
            "compress",
            SAMPLE,
            "--budget",
            "300",
        ],
        None,
    );
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    let event: serde_json::Value = serde_json::from_str(stderr.lines().next().unwrap()).unwrap();
    assert_eq!(event["service"], "edge-7");
    assert_eq!(event["method"], "extract");
    assert!(event["tokens_before"].as_u64().is_some());
}

#[test]
fn the_shipped_example_config_is_valid() {
    let config = condense::Config::load(Some(std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/condense.toml"
    ))))
    .unwrap();
    assert_eq!(config.rule_for("read_file").threshold_tokens, 8000);
    assert!(config.llm.is_some());
}

/// A scratch directory of this test's own.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "condense-cli-{name}-{}-{}",
        std::process::id(),
        fastrand::u32(..)
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn json_mode_says_why_a_lower_rung_answered_with_the_http_status() {
    let Some((url, key)) = crate::litellm::proxy() else {
        return;
    };
    let env = [
        ("CONDENSE_LLM_BASE_URL", url.as_str()),
        ("CONDENSE_LLM_API_KEY", key.as_str()),
        // The mock model that answers every request with HTTP 500.
        ("CONDENSE_LLM_MODEL", "internal-error"),
        ("CONDENSE_LLM_MAX_RETRIES", "1"),
    ];
    let out = condense_with_env(
        &["compress", SAMPLE, "--budget", "500", "--json"],
        None,
        &env,
    );
    assert!(out.status.success(), "{out:?}");
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["method"], "extract");
    let fallback = json["fallback"].as_str().expect("a fallback reason");
    assert!(fallback.contains("500"), "{fallback}");
    assert!(!fallback.contains("not a chat completion"), "{fallback}");
    assert!(!String::from_utf8_lossy(&out.stderr).contains(&key));
}

#[test]
fn a_base_url_variable_that_is_not_a_url_is_named() {
    let out = condense_with_env(
        &["compress", SAMPLE],
        None,
        &[("CONDENSE_LLM_BASE_URL", "not-a-url")],
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("CONDENSE_LLM_BASE_URL"), "{stderr}");
    assert!(!stderr.contains("llm.base_url"), "{stderr}");
}

#[test]
fn a_missing_prompts_dir_names_the_key_and_the_path() {
    let dir = scratch("prompts");
    let config = dir.join("condense.toml");
    let missing = dir.join("no-such-prompts");
    std::fs::write(
        &config,
        format!("[prompts]\ndir = {:?}\n", missing.to_str().unwrap()),
    )
    .unwrap();
    let out = condense(
        &["compress", SAMPLE, "--config", config.to_str().unwrap()],
        None,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("prompts.dir"), "{stderr}");
    assert!(stderr.contains("no-such-prompts"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A `condense proxy --listen` on a free port, its stderr in a file.
struct Proxy {
    child: std::process::Child,
    port: u16,
    log: std::path::PathBuf,
}

impl Proxy {
    fn start(config: &std::path::Path, log: std::path::PathBuf) -> Proxy {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(env!("CARGO_BIN_EXE_condense"))
            .args([
                "proxy",
                "--listen",
                &format!("127.0.0.1:{port}"),
                "--config",
            ])
            .arg(config)
            // Sessions start the upstream; none is opened here.
            .args(["--", "true"])
            .env("CONDENSE_STORE_DIR", test_store_dir())
            .env_remove("CONDENSE_CONFIG")
            .env_remove("CONDENSE_LLM_BASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap();
        let proxy = Proxy { child, port, log };
        let started = std::time::Instant::now();
        while !proxy.healthy() {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "the proxy did not come up: {}",
                proxy.stderr()
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        proxy
    }

    /// Whether `GET /health` answers 200 within two seconds.
    fn healthy(&self) -> bool {
        use std::io::Read;
        let timeout = std::time::Duration::from_secs(2);
        let Ok(mut stream) = std::net::TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        stream.set_read_timeout(Some(timeout)).unwrap();
        stream.set_write_timeout(Some(timeout)).unwrap();
        let request = "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
        if stream.write_all(request.as_bytes()).is_err() {
            return false;
        }
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        answer.starts_with(b"HTTP/1.1 200")
    }

    fn stderr(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits up to `within` for `needle` in the proxy's log.
    fn wait_for_log(&self, needle: &str, within: std::time::Duration) -> bool {
        let started = std::time::Instant::now();
        while started.elapsed() < within {
            if self.stderr().contains(needle) {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        false
    }

    /// Sends SIGTERM; whether the process exited within ten seconds (it is killed otherwise).
    fn terminate(&mut self) -> bool {
        let pid = self.child.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.unwrap().success());
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_secs(10) {
            if self.child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        false
    }
}

/// A failed assertion must not leave the proxy running.
impl Drop for Proxy {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

#[cfg(unix)]
#[test]
fn a_fifo_in_place_of_the_config_leaves_the_proxy_serving_and_stoppable() {
    let dir = scratch("fifo");
    let config = dir.join("condense.toml");
    std::fs::write(&config, "[defaults]\nthreshold_tokens = 3000\n").unwrap();
    let mut proxy = Proxy::start(&config, dir.join("proxy.log"));

    std::fs::remove_file(&config).unwrap();
    let made = Command::new("mkfifo").arg(&config).status().unwrap();
    assert!(made.success());
    // The file is checked every second: by now the FIFO has been tried.
    std::thread::sleep(std::time::Duration::from_secs(3));
    for _ in 0..3 {
        assert!(proxy.healthy(), "/health stopped answering");
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let log = proxy.stderr();
    assert!(proxy.terminate(), "SIGTERM did not stop the proxy: {log}");
    assert!(
        log.contains("a FIFO"),
        "the reload did not report the FIFO: {log}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A line in the shape of a shadow file's, with a made-up hash.
const SHADOW: &str = "root:$6$Qw3rTy$fakeHashNotReal0123456789abcdefXYZ:19700:0:99999:7:::\n\
                      daemon:*:19700:0:99999:7:::\n";
const SHADOW_HASH: &str = "fakeHashNotReal0123456789abcdefXYZ";

#[cfg(unix)]
#[test]
fn a_config_linked_to_a_password_file_never_shows_its_content() {
    let dir = scratch("shadow");
    let shadow = dir.join("shadow");
    std::fs::write(&shadow, SHADOW).unwrap();
    let real = dir.join("real.toml");
    std::fs::write(&real, "[defaults]\nthreshold_tokens = 3000\n").unwrap();
    let config = dir.join("condense.toml");
    std::os::unix::fs::symlink(&real, &config).unwrap();
    let mut proxy = Proxy::start(&config, dir.join("proxy.log"));

    // Swing the link to the password file, as an attacker with write access to the directory.
    let swing = dir.join("swing.toml");
    std::os::unix::fs::symlink(&shadow, &swing).unwrap();
    std::fs::rename(&swing, &config).unwrap();
    assert!(
        proxy.wait_for_log("not reloaded", std::time::Duration::from_secs(10)),
        "the reload did not fail: {}",
        proxy.stderr()
    );
    let log = proxy.stderr();
    assert!(proxy.terminate());
    assert!(!log.contains(SHADOW_HASH), "{log}");
    assert!(!log.contains("root:"), "{log}");
    assert!(log.contains("line 1"), "{log}");

    let out = condense(
        &["compress", SAMPLE, "--config", config.to_str().unwrap()],
        None,
    );
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("condense.toml"), "{stderr}");
    assert!(!stderr.contains(SHADOW_HASH), "{stderr}");
    assert!(!stderr.contains("root:"), "{stderr}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The ref a `compress --json` run printed.
fn compress_ref(args: &[&str], stdin: Option<&str>) -> String {
    let out = condense(args, stdin);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let reference = json["ref"].as_str().expect("a ref").to_owned();
    assert_eq!(json["retrieve"], format!("condense retrieve {reference}"));
    reference
}

fn retrieved(args: &[&str]) -> (String, String) {
    let out = condense(args, None);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn an_original_compressed_in_one_process_is_retrieved_byte_for_byte_in_the_next() {
    // Issue 13: `compress` printed a ref, then exited, and the original was gone.
    let original = std::fs::read_to_string(SAMPLE).unwrap();
    let reference = compress_ref(&["compress", SAMPLE, "--budget", "400", "--json"], None);
    let (whole, footer) = retrieved(&["retrieve", &reference]);
    assert_eq!(whole, original);
    assert!(footer.contains("nothing follows"), "{footer}");

    let (lines, footer) = retrieved(&["retrieve", &reference, "--lines", "3-7"]);
    let expected: String = original.split_inclusive('\n').skip(2).take(5).collect();
    assert_eq!(lines, expected);
    assert!(footer.contains("--lines 8-12"), "{footer}");

    let (chars, _) = retrieved(&["retrieve", &reference, "--offset", "100", "--length", "250"]);
    let expected: String = original.chars().skip(100).take(250).collect();
    assert_eq!(chars, expected);

    let needle = original.lines().nth(40).unwrap()[..20].to_owned();
    let (found, _) = retrieved(&["retrieve", &reference, "--grep", &needle, "--context", "10"]);
    assert!(found.contains(&needle), "{found}");
    assert!(found.starts_with("[match 1 at line "), "{found}");
}

#[test]
fn compress_says_how_to_get_the_original_back() {
    let out = condense(&["compress", SAMPLE, "--budget", "400"], None);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("condense retrieve cx_"), "{stderr}");
    assert!(stderr.contains(&test_store_dir()), "{stderr}");
}

#[test]
fn retrieve_names_an_unknown_ref_and_a_bad_range() {
    let out = condense(&["retrieve", "cx_0123456789abcdef0123456789abcdef"], None);
    assert!(!out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(
        stderr.contains("cx_0123456789abcdef0123456789abcdef")
            && stderr.contains(&test_store_dir()),
        "{stderr}"
    );
    let reference = compress_ref(&["compress", SAMPLE, "--budget", "400", "--json"], None);
    for range in [["--lines", "9-3"], ["--lines", "x"], ["--lines", "999999-"]] {
        let out = condense(&["retrieve", &reference, range[0], range[1]], None);
        assert!(!out.status.success(), "{range:?}");
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert!(stderr.contains("line"), "{range:?}: {stderr}");
    }
}
