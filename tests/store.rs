//! The store: keyed refs, the disk backend's bounds and sharing, and paging through originals.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use condense::llm::{BoxFuture, CompletionRequest, LlmError, Summarizer};
use condense::store::{DiskStore, Kind, Page, Selection, StoreBackend};
use condense::{Condenser, Config, Method, Request};

/// The answer cap of the proxy's added tools, less room for the footer.
const PAGE_TOKENS: usize = 19_000;

fn temp_store(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "condense-store-{name}-{}-{}",
        std::process::id(),
        fastrand::u32(..)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn disk_condenser(dir: &std::path::Path) -> Condenser {
    let disk = DiskStore::open(dir, 1 << 30, Duration::from_secs(3600)).unwrap();
    Condenser::builder(Config::default())
        .without_llm()
        .store_backend(Arc::new(disk))
        .build()
        .unwrap()
}

/// A minified JSON response of about 366 KB on one line, with `needle` starting exactly at
/// character `at`.
fn one_line_json(needle: &str, at: usize) -> String {
    let mut text = String::from("{\"items\":[");
    let mut i = 0;
    while text.len() < at - 200 {
        text.push_str(&format!(
            "{{\"id\":{i},\"name\":\"item-{i}\",\"state\":\"ok\",\"score\":{}}},",
            i * 37 % 1000
        ));
        i += 1;
    }
    let prefix = "{\"pad\":\"";
    let pad = at - text.len() - prefix.len();
    text.push_str(prefix);
    text.push_str(&"x".repeat(pad));
    text.push_str(needle);
    text.push_str("\"},");
    while text.len() < 366_000 {
        text.push_str(&format!(
            "{{\"id\":{i},\"name\":\"item-{i}\",\"state\":\"ok\"}},"
        ));
        i += 1;
    }
    text.push_str("{\"end\":true}]}");
    text
}

async fn page(condenser: &Condenser, reference: &str, selection: Selection) -> Page {
    condenser
        .retrieve_page(reference, selection, PAGE_TOKENS)
        .await
        .unwrap()
}

#[tokio::test]
async fn every_byte_of_a_366_kb_single_line_json_is_reachable_by_paging() {
    // Issue 13: offsets counted lines, so a one-line original was readable to ~4,000 tokens.
    let needle = "\"secret_marker\":\"zq-269557\"";
    let json = one_line_json(needle, 269_557);
    assert_eq!(json.find(needle), Some(269_557));
    let dir = temp_store("one-line");
    let condenser = disk_condenser(&dir);
    let outcome = condenser
        .condense(&json, &Request::new("http_get").with_budget_tokens(500))
        .await;
    assert_ne!(outcome.method, Method::PassThrough);
    let reference = outcome.reference.expect("a ref");

    let mut selection = Selection::Lines { start: 1, end: 200 };
    let mut read = String::new();
    let mut pages = 0;
    loop {
        let page = page(&condenser, &reference, selection).await;
        assert_eq!((page.total_lines, page.total_chars), (1, json.len()));
        read.push_str(&page.text);
        pages += 1;
        match page.next {
            Some(next) => selection = next,
            None => break,
        }
        assert!(pages < 100, "paging does not end");
    }
    assert_eq!(read, json, "{pages} pages");
    assert!(pages > 1);

    let found = page(
        &condenser,
        &reference,
        Selection::Pattern {
            pattern: "zq-269557".into(),
            context: 40,
            ignore_case: false,
            skip: 0,
            max_matches: 5,
        },
    )
    .await;
    let at = 269_557 + "\"secret_marker\":\"".len();
    assert!(
        found
            .text
            .starts_with(&format!("[match 1 at line 1, character {at}]\n…")),
        "{}",
        found.text
    );
    assert!(
        found.text.contains(&json[at - 40..at + 49]),
        "{}",
        found.text
    );
    assert_eq!(found.next, None);
    let upper = page(
        &condenser,
        &reference,
        Selection::Pattern {
            pattern: "ZQ-269557".into(),
            context: 10,
            ignore_case: true,
            skip: 0,
            max_matches: 5,
        },
    )
    .await;
    assert!(upper.text.contains("zq-269557"), "{}", upper.text);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn equal_content_has_different_refs_in_two_stores_and_the_same_in_one() {
    let text: String = (0..3000)
        .map(|i| format!("line {i} of the output\n"))
        .collect();
    let request = Request::new("read").with_budget_tokens(200);
    let (one, other) = (temp_store("one"), temp_store("other"));
    let first = disk_condenser(&one).condense(&text, &request).await;
    let second = disk_condenser(&other).condense(&text, &request).await;
    assert_ne!(first.reference, second.reference);
    // Another process on the first directory shares its secret: the same ref.
    let again = disk_condenser(&one).condense(&text, &request).await;
    assert_eq!(first.reference, again.reference);
    let unknown = disk_condenser(&other)
        .retrieve(first.reference.as_deref().unwrap(), Selection::All)
        .await;
    assert!(unknown.is_err());
    for dir in [one, other] {
        let _ = std::fs::remove_dir_all(&dir);
    }
}

#[tokio::test]
async fn a_cached_result_keeps_its_original_retrievable_after_the_original_expired() {
    // Originals expire long before results: the second call is a cache hit whose original
    // the store has forgotten, and must keep again so the ref in the header still answers.
    let mut config = Config::default();
    config.cache.originals_ttl = Duration::from_millis(200);
    config.cache.ttl = Duration::from_secs(3600);
    let condenser = Condenser::builder(config).without_llm().build().unwrap();
    let text: String = (0..3000)
        .map(|i| format!("line {i} of the output\n"))
        .collect();
    let request = Request::new("read").with_budget_tokens(200);
    let first = condenser.condense(&text, &request).await;
    let reference = first.reference.clone().unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        condenser
            .retrieve(&reference, Selection::All)
            .await
            .is_err(),
        "the original should have expired"
    );
    let again = condenser.condense(&text, &request).await;
    assert!(again.cached);
    assert_eq!(again.reference.as_deref(), Some(reference.as_str()));
    let original = condenser.retrieve(&reference, Selection::All).await;
    assert_eq!(original.ok().as_deref(), Some(text.as_str()));
}

fn stored_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let originals = dir.join("v1").join("originals");
    let mut files: Vec<_> = std::fs::read_dir(originals)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn the_disk_store_evicts_the_least_recently_used_beyond_its_size() {
    let dir = temp_store("size");
    let disk = DiskStore::open(&dir, 40_000, Duration::from_secs(3600)).unwrap();
    let mut keys = Vec::new();
    for i in 0..20 {
        // Random bytes do not compress: each file is about 4 KB.
        let value: Vec<u8> = (0..4000).map(|_| fastrand::u8(..)).collect();
        let key = format!("k{i:02}");
        disk.put(Kind::Original, &key, value).await.unwrap();
        let old = SystemTime::now() - Duration::from_secs(1000 - i * 10);
        let path = dir.join("v1").join("originals").join(&key);
        std::fs::File::options()
            .write(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        keys.push(key);
    }
    let left = disk.sweep().unwrap();
    assert!(left <= 40_000, "{left} bytes left");
    let files = stored_files(&dir);
    assert!(files.len() < 20 && files.len() >= 5, "{files:?}");
    // The newest stay, the oldest went.
    assert!(disk.get(Kind::Original, "k19").await.unwrap().is_some());
    assert!(disk.get(Kind::Original, "k00").await.unwrap().is_none());
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn the_disk_store_forgets_what_is_older_than_its_ttl() {
    let dir = temp_store("age");
    let disk = DiskStore::open(&dir, 1 << 30, Duration::from_secs(60)).unwrap();
    disk.put(Kind::Original, "old", b"old value".to_vec())
        .await
        .unwrap();
    disk.put(Kind::Original, "new", b"new value".to_vec())
        .await
        .unwrap();
    let path = dir.join("v1").join("originals").join("old");
    std::fs::File::options()
        .write(true)
        .open(&path)
        .unwrap()
        .set_modified(SystemTime::now() - Duration::from_secs(120))
        .unwrap();
    assert_eq!(disk.get(Kind::Original, "old").await.unwrap(), None);
    disk.sweep().unwrap();
    assert_eq!(stored_files(&dir).len(), 1);
    assert_eq!(
        disk.get(Kind::Original, "new").await.unwrap().as_deref(),
        Some(&b"new value"[..])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn two_processes_write_one_store_at_once() {
    let dir = temp_store("two-processes");
    let inputs: Vec<String> = (0..2)
        .map(|p| {
            (0..4000)
                .map(|i| format!("process {p} line {i}: request served\n"))
                .collect()
        })
        .collect();
    let children: Vec<_> = inputs
        .iter()
        .map(|input| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_condense"))
                .args(["compress", "--budget", "200", "--json"])
                .env_remove("CONDENSE_CONFIG")
                .env_remove("CONDENSE_LLM_BASE_URL")
                .env("CONDENSE_STORE_DIR", &dir)
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            let mut stdin = child.stdin.take().unwrap();
            let input = input.clone();
            std::thread::spawn(move || {
                use std::io::Write;
                stdin.write_all(input.as_bytes()).unwrap();
            });
            child
        })
        .collect();
    let refs: Vec<String> = children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
            json["ref"].as_str().unwrap().to_owned()
        })
        .collect();
    // One secret for the directory, whichever process made it: each ref is readable by a
    // third process.
    for (reference, input) in refs.iter().zip(&inputs) {
        let out = Command::new(env!("CARGO_BIN_EXE_condense"))
            .args(["retrieve", reference])
            .env_remove("CONDENSE_CONFIG")
            .env("CONDENSE_STORE_DIR", &dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(&String::from_utf8(out.stdout).unwrap(), input);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A model that counts its calls and answers with a short, deterministic line drawn from
/// what it was sent, so every chunk and merge gets an answer of its own.
#[derive(Debug, Default)]
pub(super) struct CountingLlm {
    calls: AtomicUsize,
}

impl CountingLlm {
    pub(super) fn calls(&self) -> usize {
        self.calls.load(Ordering::SeqCst)
    }
}

impl Summarizer for CountingLlm {
    fn complete(&self, request: CompletionRequest) -> BoxFuture<'_, Result<String, LlmError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Box::pin(async move {
            let line = request
                .user
                .lines()
                .find(|line| line.contains("request"))
                .unwrap_or("nothing");
            Ok(format!(
                "Summary: {}",
                line.chars().take(80).collect::<String>()
            ))
        })
    }

    fn context_window(&self) -> usize {
        2048
    }

    fn model(&self) -> &str {
        "counting"
    }
}

/// A condenser on `store` (a `[store]` section) whose LLM is `llm`, with a window small
/// enough that a long log goes through map-reduce, and no results cache: a repeat is
/// condensed again, so only chunk summaries can spare its LLM calls.
pub(super) fn map_reduce_condenser(store: &str, llm: &Arc<CountingLlm>) -> Condenser {
    let toml = format!(
        "[defaults]\nthreshold_tokens = 200\nbudget_tokens = 150\n\
         [cache]\nmax_bytes = 0\n\
         [mapreduce]\ndirect_max_tokens = 500\nchunk_tokens = 400\noverlap_tokens = 20\n\
         critique_rounds = 0\n{store}"
    );
    Condenser::builder(Config::from_toml_str(&toml, "test.toml").unwrap())
        .summarizer(llm.clone())
        .build()
        .unwrap()
}

/// A service log long enough for several chunks and a level of merges.
pub(super) fn service_log() -> String {
    (0..600)
        .map(|i| {
            format!(
                "2026-01-01T00:{:02}:{:02} request {i} served in {} ms\n",
                i / 60,
                i % 60,
                i * 7 % 300
            )
        })
        .collect()
}

/// Condenses the service log with a first condenser on `store`, then with a second one (as
/// another process would), and checks the second calls no LLM and says the same.
pub(super) async fn second_condenser_reuses_chunk_summaries(store: &str) {
    let text = service_log();
    let request = Request::new("read_log").with_query("which requests were slow?");
    let first_llm = Arc::new(CountingLlm::default());
    let first = map_reduce_condenser(store, &first_llm);
    let one = first.condense(&text, &request).await;
    assert_eq!(one.method, Method::MapReduce, "{:?}", one.fallback);
    assert!(first_llm.calls() > 2, "{} calls", first_llm.calls());
    first.flush().await;
    drop(first);

    let second_llm = Arc::new(CountingLlm::default());
    let second = map_reduce_condenser(store, &second_llm);
    let two = second.condense(&text, &request).await;
    assert_eq!(two.method, Method::MapReduce, "{:?}", two.fallback);
    assert!(!two.cached, "condensed again, not a results cache hit");
    assert_eq!(
        second_llm.calls(),
        0,
        "every chunk summary came from the store"
    );
    assert_eq!(two.text, one.text);
}

#[tokio::test]
async fn a_second_condenser_on_one_disk_store_reuses_the_chunk_summaries_of_the_first() {
    let dir = temp_store("chunks");
    let store = format!(
        "[store]\nbackend = \"disk\"\ndir = {:?}\n",
        dir.display().to_string()
    );
    second_condenser_reuses_chunk_summaries(&store).await;
    let kept = std::fs::read_dir(dir.join("v1").join(Kind::ChunkSummary.name()))
        .unwrap()
        .count();
    assert!(kept > 2, "{kept} chunk summaries on disk");

    // The control: a condenser on memory alone pays for every summary again.
    let llm = Arc::new(CountingLlm::default());
    let alone = map_reduce_condenser("[store]\nbackend = \"memory\"\n", &llm);
    alone
        .condense(
            &service_log(),
            &Request::new("read_log").with_query("which requests were slow?"),
        )
        .await;
    assert!(llm.calls() > 2);
    let _ = std::fs::remove_dir_all(&dir);
}
