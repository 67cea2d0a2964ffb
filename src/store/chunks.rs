//! Map-reduce chunk and merge summaries in the store, so a grown log re-maps only its new
//! chunks, and a second process sharing the backend (a replica on one Redis, a later CLI run
//! on one disk store) gets the summaries the first paid for without calling the LLM.
//!
//! The hot tier is a byte-bounded cache of this process (`[mapreduce] chunk_cache_max_bytes`,
//! entries kept for `[cache] ttl`); the backend is asked when it misses and written in the
//! background after a fresh answer, like originals and condensed results. Backend keys are
//! keyed by the store's secret, like those of condensed results.

use std::sync::Arc;
use std::time::Duration;

use super::Store;
use super::backend::Kind;
use crate::llm::BoxFuture;
use crate::methods::mapreduce::{ChunkSummaries, MemoryTier};

impl Store {
    /// Keeps chunk summaries too, at most about `max_bytes` of them in memory (0 keeps none,
    /// here or in the backend), each for at most `ttl` in memory.
    pub(crate) fn with_chunk_summaries(mut self, max_bytes: u64, ttl: Duration) -> Self {
        self.chunks = (max_bytes > 0).then(|| MemoryTier::new(max_bytes, Some(ttl)));
        self
    }

    /// Whether this store keeps chunk summaries.
    pub(crate) fn keeps_chunk_summaries(&self) -> bool {
        self.chunks.is_some()
    }

    /// The chunk or merge summary kept under `key`: from memory, else from the backend (then
    /// kept in memory for the next run).
    async fn chunk_summary(&self, key: u128) -> Option<Arc<str>> {
        let chunks = self.chunks.as_ref()?;
        if let Some(hit) = chunks.get(key).await {
            return Some(hit);
        }
        let bytes = self.backend_value(Kind::ChunkSummary, key).await?;
        let answer: Arc<str> = String::from_utf8(bytes).ok()?.into();
        chunks.insert(key, answer.clone()).await;
        Some(answer)
    }

    /// Keeps a fresh chunk or merge summary under `key`: in memory at once, in the backend in
    /// the background.
    async fn keep_chunk_summary(&self, key: u128, answer: Arc<str>) {
        let Some(chunks) = &self.chunks else {
            return;
        };
        chunks.insert(key, answer.clone()).await;
        if self.backend.is_some() {
            let stored_as = self.backend_key(key).await;
            self.persist(Kind::ChunkSummary, stored_as, Arc::new(answer.to_string()));
        }
    }
}

impl ChunkSummaries for Store {
    fn summary(&self, key: u128) -> BoxFuture<'_, Option<Arc<str>>> {
        Box::pin(self.chunk_summary(key))
    }

    fn keep_summary(&self, key: u128, answer: Arc<str>) -> BoxFuture<'_, ()> {
        Box::pin(self.keep_chunk_summary(key, answer))
    }
}
