//! The disk backend: compressed, content-addressed files under one directory, bounded by size
//! and age, shared safely by every process that uses the directory.
//!
//! Layout: `DIR/secret` (the store's secret, mode 0600), `DIR/v1/<kind>/<key>` (deflate), and
//! `DIR/v1/tmp/` for files being written. A value is written to a temporary file and renamed
//! into place, so a reader in any process sees a whole file or none. Two processes writing the
//! same key write the same bytes (keys are content-addressed), so the last rename wins harmlessly.
//! Eviction removes files older than the TTL, then the least recently used (by modification
//! time, which a read refreshes) until the total is under 90% of the bound; a reader that
//! loses a race with eviction sees a miss.

use crate::sync::lock;
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use flate2::Compression;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;

use super::backend::{BoxFuture, Kind, SECRET_LEN, StoreBackend, StoreError, is_safe_key};

const LAYOUT: &str = "v1";
const KINDS: [Kind; 3] = [Kind::Original, Kind::Condensed, Kind::ChunkSummary];
/// A temporary file this old was left by a writer that died.
const STALE_TMP: Duration = Duration::from_secs(3600);

/// The directory a disk store uses when none is configured: `$XDG_CACHE_HOME/condense`, else
/// `~/.cache/condense` (`%LOCALAPPDATA%\condense` on Windows). `None` when the environment
/// names no home.
pub fn default_dir() -> Option<PathBuf> {
    let absolute = |var: &str| {
        std::env::var_os(var)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    if let Some(cache) = absolute("XDG_CACHE_HOME") {
        return Some(cache.join("condense"));
    }
    if cfg!(windows) {
        return absolute("LOCALAPPDATA").map(|p| p.join("condense"));
    }
    absolute("HOME").map(|home| home.join(".cache").join("condense"))
}

/// Keeps values as compressed files in one directory. Cheap to clone.
#[derive(Debug, Clone)]
pub struct DiskStore {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    dir: PathBuf,
    max_bytes: u64,
    ttl: Duration,
    /// Bytes this process believes are on disk: set by each sweep, grown by each write, so a
    /// sweep runs only when the bound may be passed, not after every write.
    approx_bytes: AtomicU64,
    sweeping: AtomicBool,
    last_sweep: Mutex<Option<Instant>>,
}

impl DiskStore {
    /// Opens (creating it if needed) the store in `dir`, bounded to `max_bytes` of compressed
    /// files and values younger than `ttl`. The first write sweeps out what is too old or too
    /// much, so a store left by earlier runs is bounded too.
    ///
    /// # Errors
    ///
    /// When the directory cannot be created.
    pub fn open(dir: &Path, max_bytes: u64, ttl: Duration) -> Result<Self, StoreError> {
        for sub in KINDS.iter().map(|k| k.name()).chain(["tmp"]) {
            let path = dir.join(LAYOUT).join(sub);
            create_private_dir(&path).map_err(|source| StoreError::Io {
                operation: "create the directory",
                path: path.display().to_string(),
                source,
            })?;
        }
        Ok(DiskStore {
            inner: Arc::new(Inner {
                dir: dir.to_owned(),
                max_bytes,
                ttl,
                approx_bytes: AtomicU64::new(0),
                sweeping: AtomicBool::new(false),
                last_sweep: Mutex::new(None),
            }),
        })
    }

    /// The directory the store is in.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// Removes what is expired, then the least recently used until the store is within its
    /// bound. Returns the bytes left.
    ///
    /// # Errors
    ///
    /// When the directory cannot be listed.
    pub fn sweep(&self) -> Result<u64, StoreError> {
        self.inner.sweep()
    }
}

impl Inner {
    fn path(&self, kind: Kind, key: &str) -> Result<PathBuf, StoreError> {
        if !is_safe_key(key) {
            return Err(StoreError::Corrupt {
                key: key.chars().take(40).collect(),
                message: "not a key this store makes".into(),
            });
        }
        Ok(self.dir.join(LAYOUT).join(kind.name()).join(key))
    }

    fn read(&self, kind: Kind, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let path = self.path(kind, key)?;
        let file = match fs::File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(io_error("read", &path, source)),
        };
        let modified = file.metadata().and_then(|m| m.modified()).ok();
        if modified.is_some_and(|m| age(m) > self.ttl) {
            let _ = fs::remove_file(&path);
            return Ok(None);
        }
        let mut value = Vec::new();
        DeflateDecoder::new(io::BufReader::new(&file))
            .read_to_end(&mut value)
            .map_err(|e| StoreError::Corrupt {
                key: key.to_owned(),
                message: e.to_string(),
            })?;
        // A read makes the value recently used, so eviction takes it last. Best effort: a
        // read-only store still answers.
        let _ = fs::OpenOptions::new()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_modified(SystemTime::now()));
        Ok(Some(value))
    }

    fn write(&self, kind: Kind, key: &str, value: &[u8]) -> Result<(), StoreError> {
        let path = self.path(kind, key)?;
        if fs::metadata(&path)
            .is_ok_and(|m| age(m.modified().unwrap_or(SystemTime::now())) < self.ttl)
        {
            // Already kept (content-addressed): refresh it rather than write it again.
            let _ = fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .and_then(|f| f.set_modified(SystemTime::now()));
            return Ok(());
        }
        let tmp = self.dir.join(LAYOUT).join("tmp").join(format!(
            "{key}.{}.{:016x}",
            std::process::id(),
            fastrand::u64(..)
        ));
        let written = (|| {
            let file = fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&tmp)?;
            let mut encoder = DeflateEncoder::new(io::BufWriter::new(file), Compression::fast());
            encoder.write_all(value)?;
            let mut out = encoder.finish()?;
            out.flush()?;
            let size = out.get_ref().metadata()?.len();
            fs::rename(&tmp, &path)?;
            Ok(size)
        })();
        let size = match written {
            Ok(size) => size,
            Err(source) => {
                let _ = fs::remove_file(&tmp);
                return Err(io_error("write", &path, source));
            }
        };
        let total = self.approx_bytes.fetch_add(size, Ordering::Relaxed) + size;
        if total > self.max_bytes || self.sweep_due() {
            self.sweep()?;
        }
        Ok(())
    }

    /// A sweep is due on the first write (the store may hold what earlier runs left) and then
    /// every tenth of the TTL, at least a minute apart, so expired files go in good time.
    fn sweep_due(&self) -> bool {
        let last = *lock(&self.last_sweep);
        let every = (self.ttl / 10).max(Duration::from_secs(60));
        last.is_none_or(|at| at.elapsed() >= every)
    }

    fn sweep(&self) -> Result<u64, StoreError> {
        if self.sweeping.swap(true, Ordering::AcqRel) {
            return Ok(self.approx_bytes.load(Ordering::Relaxed));
        }
        let result = self.sweep_now();
        *lock(&self.last_sweep) = Some(Instant::now());
        self.sweeping.store(false, Ordering::Release);
        result
    }

    fn sweep_now(&self) -> Result<u64, StoreError> {
        let mut files = Vec::new();
        for kind in KINDS {
            let dir = self.dir.join(LAYOUT).join(kind.name());
            let entries = fs::read_dir(&dir).map_err(|e| io_error("list", &dir, e))?;
            for entry in entries.flatten() {
                let Ok(meta) = entry.metadata() else { continue };
                if !meta.is_file() {
                    continue;
                }
                let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                if age(modified) > self.ttl {
                    let _ = fs::remove_file(entry.path());
                } else {
                    files.push((modified, meta.len(), entry.path()));
                }
            }
        }
        let tmp = self.dir.join(LAYOUT).join("tmp");
        for entry in fs::read_dir(&tmp).into_iter().flatten().flatten() {
            let stale = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|m| age(m) > STALE_TMP);
            if stale {
                let _ = fs::remove_file(entry.path());
            }
        }
        let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
        if total > self.max_bytes {
            // Down to 90%, so the next few writes do not each trigger a sweep.
            let target = self.max_bytes / 10 * 9;
            files.sort_by_key(|(modified, _, _)| *modified);
            for (_, len, path) in files {
                if total <= target {
                    break;
                }
                match fs::remove_file(&path) {
                    Ok(()) => total -= len,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => total -= len,
                    Err(_) => {}
                }
            }
        }
        self.approx_bytes.store(total, Ordering::Relaxed);
        Ok(total)
    }

    /// Reads the secret, or creates it: written to a temporary file first and linked into
    /// place, which fails if another process made one meanwhile; then theirs is used.
    fn secret(&self) -> Result<[u8; SECRET_LEN], StoreError> {
        let path = self.dir.join("secret");
        if let Some(secret) = read_secret(&path)? {
            return Ok(secret);
        }
        let tmp = self.dir.join(LAYOUT).join("tmp").join(format!(
            "secret.{}.{:016x}",
            std::process::id(),
            fastrand::u64(..)
        ));
        let secret = super::refs::random_secret();
        let created = private_file(&tmp)
            .and_then(|mut f| f.write_all(&secret).and_then(|()| f.sync_all()))
            .and_then(|()| fs::hard_link(&tmp, &path));
        let _ = fs::remove_file(&tmp);
        match created {
            Ok(()) => Ok(secret),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => read_secret(&path)?
                .ok_or_else(|| io_error("read", &path, io::ErrorKind::NotFound.into())),
            Err(source) => Err(io_error("create", &path, source)),
        }
    }
}

fn read_secret(path: &Path) -> Result<Option<[u8; SECRET_LEN]>, StoreError> {
    match fs::read(path) {
        Ok(bytes) => bytes.try_into().map(Some).map_err(|_| StoreError::Corrupt {
            key: "secret".into(),
            message: format!("{} is not {SECRET_LEN} bytes long", path.display()),
        }),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(io_error("read", path, source)),
    }
}

fn age(modified: SystemTime) -> Duration {
    SystemTime::now()
        .duration_since(modified)
        .unwrap_or(Duration::ZERO)
}

fn io_error(operation: &'static str, path: &Path, source: io::Error) -> StoreError {
    StoreError::Io {
        operation,
        path: path.display().to_string(),
        source,
    }
}

fn create_private_dir(path: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(path)
}

fn private_file(path: &Path) -> io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Runs blocking file work off the async threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Unavailable {
            backend: "disk",
            message: e.to_string(),
        })?
}

impl StoreBackend for DiskStore {
    fn name(&self) -> &'static str {
        "disk"
    }

    fn secret(&self) -> BoxFuture<'_, Result<[u8; SECRET_LEN], StoreError>> {
        let inner = self.inner.clone();
        Box::pin(blocking(move || inner.secret()))
    }

    fn get<'a>(
        &'a self,
        kind: Kind,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        let inner = self.inner.clone();
        let key = key.to_owned();
        Box::pin(blocking(move || inner.read(kind, &key)))
    }

    fn put<'a>(
        &'a self,
        kind: Kind,
        key: &'a str,
        value: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        let inner = self.inner.clone();
        let key = key.to_owned();
        Box::pin(blocking(move || inner.write(kind, &key, &value)))
    }
}
