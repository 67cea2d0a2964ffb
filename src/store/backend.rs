//! The seam between the store front and where bytes are kept: one object-safe
//! trait that the disk backend (and a shared one, such as Redis) implements.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use thiserror::Error;

/// A boxed, sendable future: the trait's methods return these so it stays object-safe.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The length of a store's secret, in bytes.
pub const SECRET_LEN: usize = 32;

/// What a stored value is, so one backend can hold every kind side by side without their keys
/// colliding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// A tool output as it was, kept for retrieval under its ref.
    Original,
    /// A condensed result, kept so a repeat of the same call is free.
    Condensed,
    /// A map-reduce chunk or merge summary.
    ChunkSummary,
}

impl Kind {
    /// A short name for the kind, usable in file names and keys.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Original => "originals",
            Kind::Condensed => "condensed",
            Kind::ChunkSummary => "chunks",
        }
    }
}

/// Why a backend could not answer. Never fatal to a tool call: the store logs it and goes on
/// with what the in-process tier holds.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A file system operation failed.
    #[error("{operation} {path}: {source}")]
    Io {
        /// What was being done ("write", "read", "create the directory").
        operation: &'static str,
        /// The file or directory, as displayed.
        path: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The backend is not reachable or answered with an error. The message names no secret.
    #[error("the {backend} store is unavailable: {message}")]
    Unavailable {
        /// The backend's name.
        backend: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A stored value could not be decoded.
    #[error("a stored value under `{key}` is corrupt: {message}")]
    Corrupt {
        /// The value's key.
        key: String,
        /// What was wrong with it.
        message: String,
    },
}

/// Where a condenser's store keeps values beyond the process's own memory.
///
/// Keys are the store's own (refs and keyed hashes made with [`StoreBackend::secret`]): they
/// hold only ASCII letters, digits and `_`. Values are opaque bytes. A value may vanish at
/// any time (eviction, expiry); a `get` that finds nothing answers `Ok(None)`.
pub trait StoreBackend: Send + Sync + fmt::Debug {
    /// The backend's name for logs and messages ("disk", "redis").
    fn name(&self) -> &'static str;

    /// The store's secret, which keys its refs: created with the store on first use and kept
    /// in it, so every process that uses the same store makes the same refs, and a ref cannot
    /// be predicted from content without it.
    fn secret(&self) -> BoxFuture<'_, Result<[u8; SECRET_LEN], StoreError>>;

    /// The value kept under `key`, if any.
    fn get<'a>(
        &'a self,
        kind: Kind,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>>;

    /// Keeps `value` under `key`. Values are content-addressed: a value already kept under
    /// the same key is the same value, and a backend may keep the one it has.
    fn put<'a>(
        &'a self,
        kind: Kind,
        key: &'a str,
        value: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), StoreError>>;
}

/// Whether `key` is safe to use as a file name or a key suffix: non-empty ASCII letters,
/// digits and `_`, at most 128 characters.
pub(crate) fn is_safe_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 128
        && key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}
