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
///
/// The store is a fresh directory beside `file`: a store shared with earlier runs would answer
/// from its cache and measure nothing.
fn compress_peak(file: &std::path::Path) -> (String, u64) {
    let store = file.with_extension("store");
    let mut child = Command::new(env!("CARGO_BIN_EXE_condense"))
        .args(["compress", "--json", "--query", "user 777"])
        .arg(file)
        .env("CONDENSE_STORE_DIR", &store)
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
    let _ = std::fs::remove_dir_all(&store);
    (reader.join().unwrap(), peak_kib * 1024)
}

/// A CSV table of `rows` rows of six columns (about 45 bytes a row).
fn table(rows: usize) -> String {
    let mut text = String::from("id,region,product,quantity,unit_price,status\n");
    for i in 0..rows {
        let region = ["eu-west", "us-east", "ap-south"][i % 3];
        let status = if i % 997 == 0 { "refunded" } else { "shipped" };
        text.push_str(&format!(
            "{i},{region},product-{},{},{}.{:02},{status}\n",
            i % 1500,
            i * 7 % 100,
            i * 13 % 300,
            i % 100
        ));
    }
    text
}

/// What `condense compress --json` did with `text` (written to a file named `name`), and its
/// peak memory against the input.
struct Measured {
    out: serde_json::Value,
    input: u64,
    peak: u64,
    /// The peak on a tiny input: the binary and the vocabulary.
    base: u64,
}

impl Measured {
    fn of(name: &str, text: String) -> Self {
        let dir =
            std::env::temp_dir().join(format!("condense-memory-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let tiny = dir.join("tiny.json");
        std::fs::write(&tiny, "[1,2]").unwrap();
        let big = dir.join(name);
        std::fs::File::create(&big)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        let input = text.len() as u64;
        drop(text);
        // A tiny run can end between two readings: the base is the highest of a few, so that a
        // missed or early reading does not shrink it and inflate the ratio.
        let base = (0..5).map(|_| compress_peak(&tiny).1).max().unwrap();
        let (out, peak) = compress_peak(&big);
        let _ = std::fs::remove_dir_all(&dir);
        let out: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(out["method"], "extract", "{out}");
        Measured {
            out,
            input,
            peak,
            base,
        }
    }

    /// Asserts the documented bound, and the work above the base as at most `max_ratio` times
    /// the input.
    fn assert_within(&self, max_ratio: f64) {
        let mb = |bytes: u64| bytes as f64 / 1e6;
        let (input, peak, base) = (self.input, self.peak, self.base);
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
            ratio <= max_ratio,
            "{ratio:.1}× the input above a base of {:.1} MB (peak {:.1} MB on {:.1} MB)",
            mb(base),
            mb(peak),
            mb(input)
        );
    }
}

#[test]
fn compress_on_a_large_table_stays_within_the_bound() {
    // Every cell is a field value and every row a unit: at 24 and 72 bytes each the work took
    // 9.5 times the input above the base.
    Measured::of("table.csv", table(200_000)).assert_within(5.0);
}

#[test]
fn compress_on_a_large_array_of_small_records_stays_within_three_times_its_size() {
    let measured = Measured::of("records.json", small_records(80_000));
    let text = measured.out["text"].as_str().unwrap();
    assert!(text.contains(r#""name":"user777""#), "{text}");
    // A parsed tree of the records alone took more than 10 times the input.
    measured.assert_within(5.0);
}

/// A condenser whose calls together may hold 1 MiB.
fn condenser_of_one_mib() -> condense::Condenser {
    let mut config = condense::Config::default();
    config.limits.max_inflight_bytes = 1 << 20;
    condense::Condenser::new(config).unwrap()
}

/// Condenses `text` as `request` asks, checks that it was truncated for want of memory with
/// nothing lost (the original kept as for any condensed result), and returns the reason.
async fn truncated_for_memory(
    condenser: &condense::Condenser,
    text: &str,
    request: &condense::Request<'_>,
) -> String {
    let out = condenser.condense(text, request).await;
    assert_eq!(out.method, condense::Method::Truncate);
    let reason = out.fallback.unwrap_or_default();
    assert!(reason.contains("[limits] max_inflight_bytes"), "{reason}");
    let kept = condenser
        .retrieve(out.reference.as_deref().unwrap(), condense::Selection::All)
        .await
        .unwrap();
    assert_eq!(kept, text);
    reason
}

#[tokio::test]
async fn a_call_beyond_the_memory_budget_is_truncated_and_says_why() {
    let request = condense::Request::new("list_users").with_query("user 777");
    let reason =
        truncated_for_memory(&condenser_of_one_mib(), &small_records(5_000), &request).await;
    assert!(reason.contains("condensing needs about"), "{reason}");
}

#[tokio::test]
async fn a_pass_through_beyond_the_memory_budget_is_truncated_and_says_why() {
    let condenser = condenser_of_one_mib();
    // About 900 KB: two copies of it do not fit in 1 MiB.
    let passed = condense::Request::new("list_users").with_mode(condense::Mode::Passthrough);
    let reason = truncated_for_memory(&condenser, &small_records(9_000), &passed).await;
    assert!(
        reason.contains("passing it through needs about"),
        "{reason}"
    );
    // One that fits the budget passes through whole.
    let small = small_records(2_000);
    let out = condenser.condense(&small, &passed).await;
    assert_eq!(out.method, condense::Method::PassThrough);
    assert_eq!(out.text, small);
}

#[tokio::test]
async fn calls_within_the_memory_budget_are_condensed_as_usual() {
    let condenser = condense::Condenser::new(condense::Config::default()).unwrap();
    let text = small_records(5_000);
    let request = condense::Request::new("list_users").with_query("user 777");
    let out = condenser.condense(&text, &request).await;
    assert_eq!(out.method, condense::Method::Extract);
    assert_eq!(out.fallback, None);
}
