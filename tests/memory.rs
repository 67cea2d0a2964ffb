//! Memory stays bounded on large outputs (issue 15, point 2): `condense compress` on an array
//! of many small records, the shape whose parsed tree once took 25× the input, peaks within the
//! documented bound, read from the child's own high-water mark.

#![cfg(target_os = "linux")]

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::Duration;

/// An array of `count` small records, as a JSON API returns them (about 100 bytes each).
fn small_records(count: usize) -> String {
    let mut text = String::from("[");
    for i in 0..count {
        if i > 0 {
            text.push(',');
        }
        let score = (i * 7919 % 10007) as f64 / 10007.0;
        text.push_str(&format!(
            r#"{{"id":{i},"name":"user{i}","active":{},"score":{score},"tags":["a","b"]}}"#,
            i % 3 == 0
        ));
    }
    text.push(']');
    text
}

/// Runs `condense compress --json` on `file` and returns its stdout and its peak resident
/// memory in bytes (`VmHWM`, polled until it exits: the mark only rises, and the last reading
/// comes after the work).
fn compress_peak(file: &std::path::Path) -> (String, u64) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_condense"))
        .args(["compress", "--json", "--query", "user 777"])
        .arg(file)
        .env_remove("CONDENSE_CONFIG")
        .env_remove("CONDENSE_LLM_BASE_URL")
        .env("CONDENSE_LOG", "warn")
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let status = format!("/proc/{}/status", child.id());
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut out).unwrap();
        out
    });
    let mut peak_kib = 0u64;
    while child.try_wait().unwrap().is_none() {
        if let Ok(text) = std::fs::read_to_string(&status)
            && let Some(line) = text.lines().find(|l| l.starts_with("VmHWM:"))
        {
            let kib = line
                .split_whitespace()
                .nth(1)
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            peak_kib = peak_kib.max(kib);
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    (reader.join().unwrap(), peak_kib * 1024)
}

#[test]
fn compress_on_a_large_array_of_small_records_stays_within_three_times_its_size() {
    let dir = std::env::temp_dir().join(format!("condense-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let tiny = dir.join("tiny.json");
    std::fs::write(&tiny, "[1,2]").unwrap();
    let big = dir.join("records.json");
    let text = small_records(80_000);
    std::fs::File::create(&big)
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let input = text.len() as u64;
    drop(text);

    // What the process costs before any input: the binary and the vocabulary.
    let (_, base) = compress_peak(&tiny);
    let (out, peak) = compress_peak(&big);
    let _ = std::fs::remove_dir_all(&dir);
    let out: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(out["method"], "extract", "{out}");
    assert!(
        out["text"]
            .as_str()
            .unwrap()
            .contains(r#""name":"user777""#),
        "{out}"
    );
    let mb = |bytes: u64| bytes as f64 / 1e6;
    // The documented bound, and the work above the base as a ratio of the input: a parsed
    // tree of the records alone took more than 10 times the input.
    assert!(
        peak <= 3 * input + 100_000_000,
        "peak {:.1} MB on {:.1} MB of input",
        mb(peak),
        mb(input)
    );
    let ratio = peak.saturating_sub(base) as f64 / input as f64;
    eprintln!(
        "peak {:.1} MB on {:.1} MB of input, base {:.1} MB: {ratio:.2}× above the base",
        mb(peak),
        mb(input),
        mb(base)
    );
    assert!(
        ratio <= 5.0,
        "{ratio:.1}× the input above a base of {:.1} MB (peak {:.1} MB on {:.1} MB)",
        mb(base),
        mb(peak),
        mb(input)
    );
}

#[tokio::test]
async fn a_call_beyond_the_memory_budget_is_truncated_and_says_why() {
    let mut config = condense::Config::default();
    config.limits.max_inflight_bytes = 1 << 20;
    let condenser = condense::Condenser::new(config).unwrap();
    let text = small_records(5_000);
    let request = condense::Request::new("list_users").query(Some("user 777"));
    let out = condenser.condense(&text, &request).await;
    assert_eq!(out.method, condense::Method::Truncate);
    let reason = out.fallback.unwrap_or_default();
    assert!(reason.contains("[limits] max_inflight_bytes"), "{reason}");
    // Nothing is lost: the original is kept as for any condensed result.
    let kept = condenser
        .retrieve(out.reference.as_deref().unwrap(), condense::Selection::All)
        .await
        .unwrap();
    assert_eq!(kept, text);
}

#[tokio::test]
async fn calls_within_the_memory_budget_are_condensed_as_usual() {
    let condenser = condense::Condenser::new(condense::Config::default()).unwrap();
    let text = small_records(5_000);
    let request = condense::Request::new("list_users").query(Some("user 777"));
    let out = condenser.condense(&text, &request).await;
    assert_eq!(out.method, condense::Method::Extract);
    assert_eq!(out.fallback, None);
}
