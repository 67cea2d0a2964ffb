//! The store front: tiers, refs, background writes.

use super::select::page;
use super::*;

const TEXT: &str = "alpha\nbeta ERROR one\ngamma\ndelta\nepsilon error two\nzeta\n";

#[test]
fn line_ranges_are_one_based_and_inclusive() {
    let got = select(TEXT, &Selection::Lines { start: 2, end: 3 }).unwrap();
    assert_eq!(got, "beta ERROR one\ngamma\n");
    let got = select(TEXT, &Selection::Lines { start: 6, end: 100 }).unwrap();
    assert_eq!(got, "zeta\n");
    assert!(select(TEXT, &Selection::Lines { start: 0, end: 1 }).is_err());
    assert!(select(TEXT, &Selection::Lines { start: 9, end: 9 }).is_err());
}

#[test]
fn patterns_are_case_sensitive_unless_asked_and_say_where_each_match_is() {
    let pattern = |ignore_case| Selection::Pattern {
        pattern: "error".into(),
        context: 3,
        ignore_case,
        skip: 0,
        max_matches: 10,
    };
    let got = select(TEXT, &pattern(false)).unwrap();
    assert_eq!(got, "[match 1 at line 5, character 41]\n…on error tw…\n");
    let got = select(TEXT, &pattern(true)).unwrap();
    assert_eq!(
        got,
        "[match 1 at line 2, character 11]\n…ta ERROR on…\n[match 2 at line 5, character 41]\n…on error tw…\n"
    );
}

#[test]
fn pages_that_do_not_fit_say_how_to_continue() {
    let fits = |part: &str| part.len().min(12);
    let first = page(TEXT, &Selection::Lines { start: 1, end: 6 }, &fits).unwrap();
    assert_eq!(first.text, "alpha\n");
    assert_eq!(first.next, Some(Selection::Lines { start: 2, end: 6 }));
    assert_eq!(
        (first.total_lines, first.total_chars),
        (6, TEXT.chars().count())
    );
    // A line longer than the page is read by characters, all of it.
    let mut selection = Selection::Lines { start: 2, end: 2 };
    let mut read = String::new();
    for _ in 0..10 {
        let page = page(TEXT, &selection, &fits).unwrap();
        read.push_str(&page.text);
        match page.next {
            Some(next) if read.len() < "beta ERROR one".len() => selection = next,
            _ => break,
        }
    }
    assert!(read.starts_with("beta ERROR one"), "{read}");
}

#[test]
fn character_ranges_count_characters_not_bytes() {
    let text = "é1234\nxyz";
    let got = page(
        text,
        &Selection::Chars {
            offset: 1,
            length: 3,
        },
        &|p| p.len(),
    )
    .unwrap();
    assert_eq!(got.text, "123");
    assert_eq!(
        got.next,
        Some(Selection::Chars {
            offset: 4,
            length: 3
        })
    );
    assert!(
        select(
            text,
            &Selection::Chars {
                offset: 9,
                length: 1
            }
        )
        .is_err()
    );
}

#[tokio::test]
async fn a_new_original_is_retrievable_when_the_store_is_full_of_popular_ones() {
    // Found by the proxy's soak: a condensed result named a ref that was never retrievable.
    let store = Store::new(
        &CacheConfig {
            originals_max_bytes: 10_000,
            ..CacheConfig::default()
        },
        &StoreConfig::default(),
        None,
    );
    for i in 0..10 {
        let reference = store.keep(Arc::new(format!("{i:0>980}")), None).await;
        for _ in 0..5 {
            assert!(store.original(&reference, None).await.is_some());
        }
    }
    store.originals.run_pending_tasks().await;
    let fresh = "x".repeat(980);
    let reference = store.keep(Arc::new(fresh.clone()), None).await;
    store.originals.run_pending_tasks().await;
    assert_eq!(
        store.retrieve(&reference, None, &Selection::All).await.ok(),
        Some(fresh)
    );
}

#[tokio::test]
async fn kept_originals_come_back() {
    let store = Store::new(&CacheConfig::default(), &StoreConfig::default(), None);
    let reference = store.keep(Arc::new(TEXT.to_owned()), None).await;
    assert_eq!(
        store
            .retrieve(&reference, None, &Selection::All)
            .await
            .unwrap(),
        TEXT
    );
    assert!(matches!(
        store
            .retrieve("cx_00000000000000000000000000000000", None, &Selection::All)
            .await,
        Err(RetrieveError::UnknownRef(_))
    ));
}

#[tokio::test]
async fn an_owned_original_is_read_only_by_its_owner() {
    let store = Store::new(&CacheConfig::default(), &StoreConfig::default(), None);
    let reference = store.keep(Arc::new(TEXT.to_owned()), Some("a")).await;
    assert!(store.original(&reference, Some("a")).await.is_some());
    for other in [Some("b"), None] {
        assert!(matches!(
            store.retrieve(&reference, other, &Selection::All).await,
            Err(RetrieveError::UnknownRef(_))
        ));
    }
}

fn disk_store(dir: &std::path::Path) -> Store {
    let disk = DiskStore::open(dir, 1 << 30, std::time::Duration::from_secs(3600)).unwrap();
    Store::new(
        &CacheConfig::default(),
        &StoreConfig::default(),
        Some(Arc::new(disk)),
    )
}

#[tokio::test]
async fn a_disk_original_survives_the_process_that_kept_it() {
    let dir = std::env::temp_dir().join(format!("condense-store-{}", fastrand::u64(..)));
    let reference = {
        let store = disk_store(&dir);
        let reference = store.keep(Arc::new(TEXT.to_owned()), None).await;
        flush().await;
        reference
    };
    // A new store on the same directory: same secret, so the same ref, read from disk.
    let store = disk_store(&dir);
    assert_eq!(
        store
            .retrieve(&reference, None, &Selection::All)
            .await
            .unwrap(),
        TEXT
    );
    assert_eq!(store.keep(Arc::new(TEXT.to_owned()), None).await, reference);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn equal_content_has_different_refs_in_different_stores() {
    let one = Store::new(&CacheConfig::default(), &StoreConfig::default(), None);
    let other = Store::new(&CacheConfig::default(), &StoreConfig::default(), None);
    let text = Arc::new(TEXT.to_owned());
    let reference = one.keep(text.clone(), None).await;
    assert_ne!(reference, other.keep(text, None).await);
    assert!(other.original(&reference, None).await.is_none());
}

#[test]
fn a_pattern_page_that_does_not_fit_ends_at_a_match_and_continues_after_it() {
    let text = "x ERROR 1\ny ERROR 2\nz ERROR 3\n";
    let pattern = |skip| Selection::Pattern {
        pattern: "ERROR".into(),
        context: 2,
        ignore_case: false,
        skip,
        max_matches: 10,
    };
    // Room for one block and a half: one is shown, and the next page starts at the second.
    let one_block = "[match 1 at line 1, character 2]\nx ERROR 1\n".len();
    let fits = move |part: &str| part.len().min(one_block + one_block / 2);
    let first = page(text, &pattern(0), &fits).unwrap();
    assert_eq!(first.text, "[match 1 at line 1, character 2]\nx ERROR 1\n");
    assert_eq!(first.range, "matches 1-1 of 3");
    assert_eq!(first.next, Some(pattern(1)));
    let second = page(text, &pattern(1), &fits).unwrap();
    assert_eq!(
        second.text,
        "[match 2 at line 2, character 12]\ny ERROR 2\n"
    );
}

/// A shared backend in memory that can be taken down: then every operation fails, as an
/// unreachable Redis does.
#[derive(Debug, Default)]
struct Flaky {
    down: std::sync::atomic::AtomicBool,
    secret: std::sync::Mutex<Option<[u8; SECRET_LEN]>>,
    values: std::sync::Mutex<std::collections::HashMap<String, Vec<u8>>>,
}

impl Flaky {
    fn check(&self) -> Result<(), StoreError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(StoreError::Unavailable {
                backend: "flaky",
                message: "down".into(),
            });
        }
        Ok(())
    }
}

impl StoreBackend for Flaky {
    fn name(&self) -> &'static str {
        "flaky"
    }

    fn secret(&self) -> BoxFuture<'_, Result<[u8; SECRET_LEN], StoreError>> {
        Box::pin(async move {
            self.check()?;
            let mut secret = self.secret.lock().unwrap();
            Ok(*secret.get_or_insert_with(|| [fastrand::u8(..); SECRET_LEN]))
        })
    }

    fn get<'a>(
        &'a self,
        kind: Kind,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        Box::pin(async move {
            self.check()?;
            let values = self.values.lock().unwrap();
            Ok(values.get(&format!("{}:{key}", kind.name())).cloned())
        })
    }

    fn put<'a>(
        &'a self,
        kind: Kind,
        key: &'a str,
        value: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            self.check()?;
            let mut values = self.values.lock().unwrap();
            values.insert(format!("{}:{key}", kind.name()), value);
            Ok(())
        })
    }
}

fn store_on(backend: &Arc<Flaky>) -> Store {
    let backend: Arc<dyn StoreBackend> = backend.clone();
    Store::new(
        &CacheConfig::default(),
        &StoreConfig::default(),
        Some(backend),
    )
}

#[tokio::test]
async fn a_store_that_started_without_its_secret_adopts_it_once_the_backend_is_back() {
    let backend = Arc::new(Flaky::default());
    backend.down.store(true, Ordering::SeqCst);
    let late = store_on(&backend);
    let before = late.keep(Arc::new("kept while down".into()), None).await;
    let owned = late.keep(Arc::new("a session's".into()), Some("s")).await;

    backend.down.store(false, Ordering::SeqCst);
    let other = store_on(&backend);
    let text = Arc::new(TEXT.to_owned());
    let shared = other.keep(text.clone(), None).await;
    // The next try runs in the background once the pause is over.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while late.keep(text.clone(), None).await != shared {
        assert!(
            std::time::Instant::now() < deadline,
            "the secret was never adopted"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    flush().await;

    // New refs are shared both ways; the one made before stays readable where it was made.
    assert!(late.original(&shared, None).await.is_some());
    let after = late.keep(Arc::new("kept once back".into()), None).await;
    flush().await;
    assert!(other.original(&after, None).await.is_some());
    assert_eq!(
        late.retrieve(&before, None, &Selection::All).await.unwrap(),
        "kept while down"
    );
    assert!(other.original(&before, None).await.is_none());
    assert!(late.original(&owned, Some("s")).await.is_some());
    assert!(late.original(&owned, Some("t")).await.is_none());
}
