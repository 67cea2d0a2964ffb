//! What condense keeps: condensed results (so repeats are free) and originals (so nothing is
//! lost). Both are in memory, bounded by bytes, and expire.

use std::fmt;
use std::sync::Arc;

use moka::future::Cache;

use crate::config::CacheConfig;
use crate::error::RetrieveError;

/// The prefix of every original's ref.
pub const REF_PREFIX: &str = "cx_";

/// The content-addressed ref of an original: `cx_` and 16 hex digits of its hash.
pub fn reference_for(original: &str) -> String {
    format!(
        "{REF_PREFIX}{:016x}",
        xxhash_rust::xxh3::xxh3_64(original.as_bytes())
    )
}

/// Which part of an original to return.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Selection {
    /// All of it.
    #[default]
    All,
    /// Lines `start..=end`, 1-based; `end` past the last line means to the end.
    Lines {
        /// The first line, from 1.
        start: usize,
        /// The last line, inclusive.
        end: usize,
    },
    /// The lines containing `pattern` (case-insensitive), each with `context` lines around
    /// it, numbered, at most `max_matches` matches.
    Pattern {
        /// The text to look for.
        pattern: String,
        /// Lines of context before and after each match.
        context: usize,
        /// The most matches returned.
        max_matches: usize,
    },
}

/// The caches behind a [`Condenser`](crate::Condenser). Cheap to clone; clones share.
#[derive(Clone)]
pub(crate) struct Store {
    results: Option<Cache<u128, Arc<crate::engine::Condensed>>>,
    /// Shared with the call that kept them: an original is in memory once, not once here and
    /// once in the engine.
    originals: Cache<String, Arc<String>>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("results", &self.results.as_ref().map(Cache::entry_count))
            .field("originals", &self.originals.entry_count())
            .finish()
    }
}

impl Store {
    pub(crate) fn new(config: &CacheConfig) -> Self {
        let results = (config.max_bytes > 0).then(|| {
            Cache::builder()
                .max_capacity(config.max_bytes)
                .weigher(|_: &u128, v: &Arc<crate::engine::Condensed>| weight(v.text.len() + 128))
                .time_to_live(config.ttl)
                .build()
        });
        let originals = Cache::builder()
            // A ref is handed out as soon as its original is kept, so a new original must always
            // be admitted: under moka's default (TinyLFU) a full cache may turn a new entry away
            // in favour of more popular ones, and the ref would never be retrievable.
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .max_capacity(config.originals_max_bytes)
            .weigher(|k: &String, v: &Arc<String>| weight(k.len() + v.len()))
            .time_to_live(config.originals_ttl)
            .build();
        Store { results, originals }
    }

    pub(crate) fn results(&self) -> Option<&Cache<u128, Arc<crate::engine::Condensed>>> {
        self.results.as_ref()
    }

    /// Keeps `original` (sharing it, not copying it) for `owner` and returns its ref.
    pub(crate) async fn keep(&self, original: Arc<String>, owner: Option<&str>) -> String {
        let reference = reference_for(&original);
        let key = owned_key(&reference, owner);
        if !self.originals.contains_key(&key) {
            self.originals.insert(key, original).await;
        }
        reference
    }

    /// The original kept under `reference` for `owner`.
    pub(crate) async fn original(
        &self,
        reference: &str,
        owner: Option<&str>,
    ) -> Option<Arc<String>> {
        self.originals.get(&owned_key(reference, owner)).await
    }

    pub(crate) async fn retrieve(
        &self,
        reference: &str,
        owner: Option<&str>,
        selection: &Selection,
    ) -> Result<String, RetrieveError> {
        let original = self
            .original(reference, owner)
            .await
            .ok_or_else(|| RetrieveError::UnknownRef(reference.to_owned()))?;
        select(&original, selection)
    }
}

/// The key an original is kept under: its ref, and for an owned original a digest of the
/// owner too, so the same ref looked up for another owner finds nothing (and the caller gets
/// the same "unknown ref" as for a ref never made: nothing says the original exists).
fn owned_key(reference: &str, owner: Option<&str>) -> String {
    match owner {
        None => reference.to_owned(),
        Some(owner) => format!(
            "{reference}_{:032x}",
            xxhash_rust::xxh3::xxh3_128(owner.as_bytes())
        ),
    }
}

fn weight(bytes: usize) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

/// Applies a selection to a text.
pub(crate) fn select(text: &str, selection: &Selection) -> Result<String, RetrieveError> {
    match selection {
        Selection::All => Ok(text.to_owned()),
        Selection::Lines { start, end } => {
            if *start == 0 || end < start {
                return Err(RetrieveError::BadSelection(format!(
                    "lines {start}..={end}: lines are numbered from 1 and the range must not be empty"
                )));
            }
            let total = text.lines().count();
            if *start > total {
                return Err(RetrieveError::BadSelection(format!(
                    "line {start} is past the end: the original has {total} lines"
                )));
            }
            let mut out = String::new();
            for line in text.lines().skip(start - 1).take(end - start + 1) {
                out.push_str(line);
                out.push('\n');
            }
            Ok(out)
        }
        Selection::Pattern {
            pattern,
            context,
            max_matches,
        } => {
            if pattern.is_empty() {
                return Err(RetrieveError::BadSelection("the pattern is empty".into()));
            }
            let needle = pattern.to_lowercase();
            let lines: Vec<&str> = text.lines().collect();
            let hits: Vec<usize> = lines
                .iter()
                .enumerate()
                .filter(|(_, line)| line.to_lowercase().contains(&needle))
                .map(|(i, _)| i)
                .collect();
            let mut out = String::new();
            let mut last_emitted: Option<usize> = None;
            for &hit in hits.iter().take(*max_matches) {
                let from = hit.saturating_sub(*context);
                let to = (hit + context).min(lines.len() - 1);
                let from = match last_emitted {
                    Some(last) if from <= last + 1 => last + 1,
                    Some(_) => {
                        out.push_str("--\n");
                        from
                    }
                    None => from,
                };
                for (i, line) in lines.iter().enumerate().take(to + 1).skip(from) {
                    out.push_str(&format!(
                        "{}{}{line}\n",
                        i + 1,
                        if i == hit { ':' } else { '-' }
                    ));
                }
                last_emitted = Some(to.max(last_emitted.unwrap_or(0)));
            }
            if hits.len() > *max_matches {
                out.push_str(&format!(
                    "[… {} more matches; narrow the pattern or raise the limit …]\n",
                    hits.len() - max_matches
                ));
            }
            if hits.is_empty() {
                out.push_str(&format!("[no line contains `{pattern}`]\n"));
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "alpha\nbeta ERROR one\ngamma\ndelta\nepsilon error two\nzeta\n";

    #[test]
    fn refs_are_content_addressed() {
        assert_eq!(reference_for("a"), reference_for("a"));
        assert_ne!(reference_for("a"), reference_for("b"));
        assert!(reference_for("a").starts_with("cx_"));
        assert_eq!(reference_for("a").len(), 19);
    }

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
        let store = Store::new(&CacheConfig {
            originals_max_bytes: 10_000,
            ..CacheConfig::default()
        });
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
    async fn an_owned_original_is_read_only_by_its_owner() {
        let store = Store::new(&CacheConfig::default());
        let reference = store.keep(Arc::new(TEXT.to_owned()), Some("a")).await;
        assert!(store.original(&reference, Some("a")).await.is_some());
        for other in [Some("b"), None] {
            assert!(matches!(
                store.retrieve(&reference, other, &Selection::All).await,
                Err(RetrieveError::UnknownRef(_))
            ));
        }
    }

    #[tokio::test]
    async fn kept_originals_come_back() {
        let store = Store::new(&CacheConfig::default());
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
                .retrieve("cx_0000000000000000", None, &Selection::All)
                .await,
            Err(RetrieveError::UnknownRef(_))
        ));
    }
}
