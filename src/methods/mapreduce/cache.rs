//! Where map and merge answers are kept, so a grown log re-maps only its new chunks and a
//! repeat of a merge is free.
//!
//! A [`Condenser`](crate::Condenser) keeps them in its store (the store's hot tier, then its
//! disk or Redis backend, shared with other processes); a [`ChunkCache`] made on its own keeps
//! them in this process's memory. Either way the memory tier is a [`MemoryTier`].

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;

use crate::llm::BoxFuture;

/// Something that keeps map and merge answers by their key (a 128-bit hash of everything that
/// shapes the answer, stable across processes).
pub(crate) trait ChunkSummaries: Send + Sync + fmt::Debug {
    /// The answer kept under `key`, if any.
    fn summary(&self, key: u128) -> BoxFuture<'_, Option<Arc<str>>>;

    /// Keeps a fresh `answer` under `key`.
    fn keep_summary(&self, key: u128, answer: Arc<str>) -> BoxFuture<'_, ()>;
}

/// Answers in this process's memory, weighted by bytes. Cheap to clone; clones share.
#[derive(Clone)]
pub(crate) struct MemoryTier {
    entries: Cache<u128, Arc<str>>,
}

impl fmt::Debug for MemoryTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryTier")
            .field("entries", &self.entries.entry_count())
            .field("bytes", &self.entries.weighted_size())
            .finish()
    }
}

impl MemoryTier {
    /// A tier holding at most about `max_bytes` of answers, each for at most `ttl` when given.
    pub(crate) fn new(max_bytes: u64, ttl: Option<Duration>) -> Self {
        let mut builder = Cache::builder()
            .max_capacity(max_bytes)
            // The key and the entry's bookkeeping cost about as much as a short answer.
            .weigher(|_key: &u128, answer: &Arc<str>| {
                u32::try_from(answer.len() + 64).unwrap_or(u32::MAX)
            });
        if let Some(ttl) = ttl {
            builder = builder.time_to_live(ttl);
        }
        MemoryTier {
            entries: builder.build(),
        }
    }

    /// The answer under `key`, if this process has it.
    pub(crate) async fn get(&self, key: u128) -> Option<Arc<str>> {
        self.entries.get(&key).await
    }

    /// Keeps `answer` under `key` in this process.
    pub(crate) async fn insert(&self, key: u128, answer: Arc<str>) {
        self.entries.insert(key, answer).await;
    }
}

impl ChunkSummaries for MemoryTier {
    fn summary(&self, key: u128) -> BoxFuture<'_, Option<Arc<str>>> {
        Box::pin(self.get(key))
    }

    fn keep_summary(&self, key: u128, answer: Arc<str>) -> BoxFuture<'_, ()> {
        Box::pin(self.insert(key, answer))
    }
}

/// Where map and merge answers are kept. Cheap to clone; clones share entries, so one cache
/// serves every run of every [`MapReduce`](super::MapReduce) it is given to.
///
/// A handle, not a cache of its own: the drivers of a [`Condenser`](crate::Condenser) hold
/// one on its store, so answers also go to the store's backend (disk or Redis) and other
/// processes sharing it reuse them. One made with [`new`](ChunkCache::new) or
/// [`with_ttl`](ChunkCache::with_ttl) keeps them in this process's memory only.
#[derive(Clone, Debug)]
pub struct ChunkCache {
    summaries: Arc<dyn ChunkSummaries>,
}

impl ChunkCache {
    /// A cache holding at most about `max_bytes` of answers in memory, kept until evicted.
    pub fn new(max_bytes: u64) -> Self {
        Self::over(Arc::new(MemoryTier::new(max_bytes, None)))
    }

    /// A cache holding at most about `max_bytes` of answers in memory, each for at most `ttl`.
    pub fn with_ttl(max_bytes: u64, ttl: Duration) -> Self {
        Self::over(Arc::new(MemoryTier::new(max_bytes, Some(ttl))))
    }

    /// A handle on `summaries` (the store's chunk summaries).
    pub(crate) fn over(summaries: Arc<dyn ChunkSummaries>) -> Self {
        ChunkCache { summaries }
    }

    pub(super) async fn get(&self, key: u128) -> Option<Arc<str>> {
        self.summaries.summary(key).await
    }

    pub(super) async fn insert(&self, key: u128, answer: Arc<str>) {
        self.summaries.keep_summary(key, answer).await;
    }
}
