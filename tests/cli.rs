//! The `condense` binary, run as a user would.

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn condense(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_condense"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env_remove("CONDENSE_CONFIG")
        .env_remove("CONDENSE_LLM_BASE_URL")
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
    ] {
        assert!(json.get(key).is_some(), "missing {key}");
    }
    assert_eq!(json["method"], "truncate");
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
