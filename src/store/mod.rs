//! What condense keeps: originals (so nothing is lost), condensed results (so repeats are
//! free), and map-reduce chunk summaries (so a grown log re-maps only its new chunks).
//!
//! The store behind every [`Condenser`](crate::Condenser) has two tiers. The hot tier is this
//! process's memory (moka, bounded by `[cache]`): repeats inside one process never leave it.
//! Behind it, a [`StoreBackend`] chosen by `[store] backend` keeps values beyond the process:
//! [`DiskStore`] (compressed files that survive restarts and are shared by the processes on one
//! machine) or a shared server. With `backend = "memory"` there is no second tier: the hot tier
//! is the store.
//!
//! Writing to the backend never holds up a tool call: an original goes into the hot tier at
//! once (so a retrieve right after finds it) and is written to the backend by a background
//! task; [`Condenser::flush`](crate::Condenser::flush) waits for those writes before a process
//! exits. A failing backend never fails a call: the store logs one warning and keeps to memory.
//!
//! Refs are keyed (see `refs.rs`): `cx_` and 128 bits of HMAC-SHA-256 under the store's secret.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use moka::future::Cache;
use tokio::sync::Notify;

use crate::config::{CacheConfig, StoreBackendKind, StoreConfig};
use crate::error::RetrieveError;

mod backend;
mod chunks;
mod disk;
mod keys;
#[cfg(feature = "redis")]
mod redis;
mod refs;
mod select;
mod shared;

pub use backend::{BoxFuture, Kind, SECRET_LEN, StoreBackend, StoreError};
pub use disk::{DiskStore, default_dir};
pub use refs::REF_PREFIX;
pub(crate) use select::select;
pub use select::{DEFAULT_PATTERN_CONTEXT, Page, Selection};

use keys::Keys;
use refs::RefKey;

/// The store behind a [`Condenser`](crate::Condenser). Cheap to clone; clones share.
#[derive(Clone)]
pub(crate) struct Store {
    results: Option<Cache<u128, Arc<crate::outcome::Condensed>>>,
    /// Shared with the call that kept them: an original is in memory once, not once here and
    /// once in the engine.
    originals: Cache<String, Arc<String>>,
    /// Map-reduce chunk and merge summaries (see `chunks.rs`); none unless asked for.
    chunks: Option<crate::methods::mapreduce::MemoryTier>,
    backend: Option<Arc<dyn StoreBackend>>,
    /// The keys refs are made with (see `keys.rs`).
    keys: Arc<Keys>,
}

impl fmt::Debug for Store {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Store")
            .field("results", &self.results.as_ref().map(Cache::entry_count))
            .field("originals", &self.originals.entry_count())
            .field("chunks", &self.chunks)
            .field("backend", &self.backend.as_ref().map(|b| b.name()))
            .finish()
    }
}

impl Store {
    /// A store with the backend `[store]` names (memory when it names none), or `backend`
    /// when given.
    pub(crate) fn new(
        cache: &CacheConfig,
        config: &StoreConfig,
        backend: Option<Arc<dyn StoreBackend>>,
    ) -> Self {
        let results = (cache.max_bytes > 0).then(|| {
            Cache::builder()
                .max_capacity(cache.max_bytes)
                .weigher(|_: &u128, v: &Arc<crate::outcome::Condensed>| weight(v.text.len() + 128))
                .time_to_live(cache.ttl)
                .build()
        });
        let originals = Cache::builder()
            // A ref is handed out as soon as its original is kept, so a new original must always
            // be admitted: under moka's default (TinyLFU) a full cache may turn a new entry away
            // in favour of more popular ones, and the ref would never be retrievable.
            .eviction_policy(moka::policy::EvictionPolicy::lru())
            .max_capacity(cache.originals_max_bytes)
            .weigher(|k: &String, v: &Arc<String>| weight(k.len() + v.len()))
            .time_to_live(cache.originals_ttl)
            .build();
        let backend = backend.or_else(|| backend_from_config(config));
        let keys = Arc::new(Keys::new(backend.clone()));
        Store {
            results,
            originals,
            chunks: None,
            backend,
            keys,
        }
    }

    pub(crate) fn results(&self) -> Option<&Cache<u128, Arc<crate::outcome::Condensed>>> {
        self.results.as_ref()
    }

    /// The key new refs are made with: the backend's secret, or, while the backend cannot
    /// give it, a key of this process's own (refs then stay readable here, not elsewhere).
    async fn key(&self) -> &RefKey {
        self.keys.current().await
    }

    /// Keeps `original` (sharing it, not copying it) for `owner` and returns its ref. The
    /// backend write runs in the background.
    pub(crate) async fn keep(&self, original: Arc<String>, owner: Option<&str>) -> String {
        let reference = self.reference(&original).await;
        self.keep_under(&reference, original, owner).await;
        reference.reference
    }

    /// The ref `original` will be kept under, made before it is kept: a result can name it
    /// (and be cached under it) while the original is kept once the result is made.
    pub(crate) async fn reference(&self, original: &str) -> PendingRef {
        let key = self.key().await.clone();
        PendingRef {
            reference: key.reference(original.as_bytes()),
            key,
        }
    }

    /// Keeps `original` under the ref made for it. Idempotent, and cheap when it is kept
    /// already (one presence check): a cached result's original is kept again this way, so a
    /// ref in a result never names an original evicted meanwhile.
    pub(crate) async fn keep_under(
        &self,
        pending: &PendingRef,
        original: Arc<String>,
        owner: Option<&str>,
    ) {
        let stored_as = owned_key(&pending.key, &pending.reference, owner);
        if !self.originals.contains_key(&stored_as) {
            self.originals
                .insert(stored_as.clone(), original.clone())
                .await;
            self.persist(Kind::Original, stored_as, original);
        }
    }

    /// Writes `value` to the backend in a background task that [`Store::flush`] waits for.
    fn persist(&self, kind: Kind, key: String, value: Arc<String>) {
        let Some(backend) = self.backend.clone() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let write = Write::start();
        runtime.spawn(async move {
            let result = backend.put(kind, &key, value.as_bytes().to_vec()).await;
            if let Err(error) = result {
                write.failed(backend.name(), &error);
            }
        });
    }

    /// The original kept under `reference` for `owner`: from memory, else from the backend
    /// (then kept in memory for the next read). A backend value that is not what the ref names
    /// is refused.
    pub(crate) async fn original(
        &self,
        reference: &str,
        owner: Option<&str>,
    ) -> Option<Arc<String>> {
        if !refs::is_well_formed(reference) {
            return None;
        }
        // Refs made with this process's own key before the shared secret came stay readable.
        let keys = self.keys.readable().await;
        let mut candidates: Vec<String> = keys
            .iter()
            .map(|key| owned_key(key, reference, owner))
            .collect();
        candidates.dedup();
        for stored_as in &candidates {
            if let Some(hit) = self.originals.get(stored_as).await {
                return Some(hit);
            }
        }
        let backend = self.backend.as_ref()?;
        for stored_as in candidates {
            let bytes = match backend.get(Kind::Original, &stored_as).await {
                Ok(Some(bytes)) => bytes,
                Ok(None) => continue,
                Err(error) => {
                    tracing::warn!(backend = backend.name(), %error, "could not read an original");
                    return None;
                }
            };
            if !keys.iter().any(|key| key.reference(&bytes) == reference) {
                tracing::warn!(
                    backend = backend.name(),
                    reference,
                    "a stored original does not match its ref; ignored"
                );
                return None;
            }
            let original = Arc::new(String::from_utf8(bytes).ok()?);
            self.originals.insert(stored_as, original.clone()).await;
            return Some(original);
        }
        None
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

    /// A page of the original under `reference`; `fits` says how many bytes of a text fit
    /// the page.
    pub(crate) async fn retrieve_page(
        &self,
        reference: &str,
        owner: Option<&str>,
        selection: &Selection,
        fits: &(dyn Fn(&str) -> usize + Sync),
    ) -> Result<Page, RetrieveError> {
        let original = self
            .original(reference, owner)
            .await
            .ok_or_else(|| RetrieveError::UnknownRef(reference.to_owned()))?;
        select::page(&original, selection, fits)
    }
}

/// An original's ref before the original is kept, with the key it was made with: kept later,
/// the original is stored under this ref even when the store's key changed meanwhile (its
/// shared secret arrived).
#[derive(Debug, Clone)]
pub(crate) struct PendingRef {
    /// The ref, as results name it.
    pub(crate) reference: String,
    key: RefKey,
}

/// The key an original is kept under: its ref, and for an owned original a keyed digest of
/// the owner too, so the same ref looked up for another owner finds nothing (and the caller
/// gets the same "unknown ref" as for a ref never made: nothing says the original exists).
fn owned_key(key: &RefKey, reference: &str, owner: Option<&str>) -> String {
    match owner {
        None => reference.to_owned(),
        Some(owner) => {
            let tag = key.reference(format!("owner\0{owner}").as_bytes());
            format!("{reference}_{}", &tag[REF_PREFIX.len()..])
        }
    }
}

/// The backend `[store]` names. Failing to open it is not fatal: the store keeps to memory.
fn backend_from_config(config: &StoreConfig) -> Option<Arc<dyn StoreBackend>> {
    match config.backend? {
        StoreBackendKind::Memory => None,
        StoreBackendKind::Disk => {
            let Some(dir) = config.dir.clone().or_else(default_dir) else {
                tracing::warn!(
                    "no [store] dir and no home or XDG cache directory; originals are kept in memory only"
                );
                return None;
            };
            match DiskStore::open(&dir, config.max_bytes, config.ttl) {
                Ok(disk) => Some(Arc::new(disk)),
                Err(error) => {
                    tracing::warn!(%error, "the disk store cannot be opened; originals are kept in memory only");
                    None
                }
            }
        }
        #[cfg(feature = "redis")]
        StoreBackendKind::Redis => match redis::RedisStore::open(config) {
            Ok(redis) => Some(Arc::new(redis)),
            Err(error) => {
                tracing::warn!(%error, "the Redis store cannot be used; originals are kept in memory only");
                None
            }
        },
        #[cfg(not(feature = "redis"))]
        StoreBackendKind::Redis => {
            tracing::warn!(
                endpoint = config.redis_endpoint().as_deref().unwrap_or(""),
                "this build has no Redis store (the `redis` feature); originals are kept in memory only"
            );
            None
        }
    }
}

/// Waits until every value this process's stores handed to their backends so far is written
/// (or failed). Writes run in the background, off the tool call's path; a process about to
/// exit calls this (or [`Condenser::flush`](crate::Condenser::flush)) so the refs it handed
/// out stay retrievable by the next one.
pub async fn flush() {
    loop {
        let idle = WRITES.idle.notified();
        tokio::pin!(idle);
        idle.as_mut().enable();
        if WRITES.in_flight.load(Ordering::Acquire) == 0 {
            return;
        }
        idle.await;
    }
}

/// Background writes in flight in this process, so it can wait for them before it exits.
/// One count for the process, not one per store: a front door that builds its engines deep
/// inside (the proxy, on every reload) can still wait for all of them.
static WRITES: Writes = Writes {
    in_flight: AtomicUsize::new(0),
    idle: Notify::const_new(),
    warned: AtomicBool::new(false),
};

#[derive(Debug)]
struct Writes {
    in_flight: AtomicUsize,
    idle: Notify,
    /// Whether a failed write was already logged at warn: a full disk must not flood the log.
    warned: AtomicBool,
}

/// One background write; dropping it marks it done.
struct Write;

impl Write {
    fn start() -> Self {
        WRITES.in_flight.fetch_add(1, Ordering::AcqRel);
        Write
    }

    fn failed(&self, backend: &str, error: &StoreError) {
        if WRITES.warned.swap(true, Ordering::Relaxed) {
            tracing::debug!(backend, %error, "could not write to the store");
        } else {
            tracing::warn!(backend, %error, "could not write to the store; what is not written stays in memory only (further failures are logged at debug)");
        }
    }
}

impl Drop for Write {
    fn drop(&mut self) {
        if WRITES.in_flight.fetch_sub(1, Ordering::AcqRel) == 1 {
            WRITES.idle.notify_waiters();
        }
    }
}

fn weight(bytes: usize) -> u32 {
    u32::try_from(bytes).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests;
