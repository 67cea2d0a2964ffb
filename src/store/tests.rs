//! The store front: tiers, refs, background writes.

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
fn pattern_finds_lines_with_context_and_numbers() {
    let got = select(
        TEXT,
        &Selection::Pattern {
            pattern: "error".into(),
            context: 1,
            max_matches: 10,
        },
    )
    .unwrap();
    assert_eq!(
        got,
        "1-alpha\n2:beta ERROR one\n3-gamma\n4-delta\n5:epsilon error two\n6-zeta\n"
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
        store.flush().await;
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
