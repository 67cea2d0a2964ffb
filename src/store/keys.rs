//! Which key a store makes refs with, and which keys it can read refs of.
//!
//! A store with a backend makes refs with the backend's secret, so every process on the backend
//! makes the same refs. When the secret cannot be read (Redis down when the process starts), the
//! process makes refs with a key of its own meanwhile, and tries the backend again in the
//! background, at most every [`RETRY_PAUSE`]: once it has the shared secret, new refs are made
//! with it, and the refs made with its own key stay readable through this process.

use crate::sync::lock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::OnceCell;

use super::backend::StoreBackend;
use super::refs::RefKey;

/// How long a process waits before asking the backend for its secret again (short in unit
/// tests, which wait for it).
const RETRY_PAUSE: Duration = if cfg!(test) {
    Duration::from_millis(20)
} else {
    Duration::from_secs(5)
};

/// The keys of one store. Shared by the store's clones.
#[derive(Debug)]
pub(super) struct Keys {
    backend: Option<Arc<dyn StoreBackend>>,
    /// The backend's secret, once read.
    shared: OnceLock<RefKey>,
    /// This process's own key: the only one without a backend, the stand-in while the
    /// backend's secret is unavailable.
    own: RefKey,
    /// Whether a ref was made with `own` (then it stays readable after the shared key comes).
    own_used: AtomicBool,
    /// The first read of the secret, which calls wait for: refs are shared from the start
    /// whenever the backend can be read.
    first: OnceCell<()>,
    /// When the backend may be asked again.
    next_try: Mutex<Instant>,
    /// Whether the secret's absence was already logged at warn.
    warned: AtomicBool,
}

impl Keys {
    pub(super) fn new(backend: Option<Arc<dyn StoreBackend>>) -> Self {
        Keys {
            backend,
            shared: OnceLock::new(),
            own: RefKey::random(),
            own_used: AtomicBool::new(false),
            first: OnceCell::new(),
            next_try: Mutex::new(Instant::now()),
            warned: AtomicBool::new(false),
        }
    }

    /// The key new refs are made with: the backend's secret, or this process's own key while
    /// the secret is unavailable (a new try is then started in the background when due).
    pub(super) async fn current(self: &Arc<Self>) -> &RefKey {
        let Some(backend) = &self.backend else {
            return &self.own;
        };
        self.first.get_or_init(|| self.fetch(backend)).await;
        if let Some(shared) = self.shared.get() {
            return shared;
        }
        self.retry_when_due();
        self.own_used.store(true, Ordering::Relaxed);
        &self.own
    }

    /// Every key this process made refs with, the current one first.
    pub(super) async fn readable(self: &Arc<Self>) -> Vec<&RefKey> {
        let current = self.current().await;
        let mut keys = vec![current];
        if self.own_used.load(Ordering::Relaxed) && !std::ptr::eq(current, &self.own) {
            keys.push(&self.own);
        }
        keys
    }

    /// Reads the backend's secret into `shared`; logs why when it cannot.
    async fn fetch(&self, backend: &Arc<dyn StoreBackend>) {
        match backend.secret().await {
            Ok(secret) => {
                if self.shared.set(RefKey::new(secret)).is_ok()
                    && self.own_used.load(Ordering::Relaxed)
                {
                    tracing::info!(
                        backend = backend.name(),
                        "the store's secret is available again; new refs are shared, earlier ones stay readable through this process"
                    );
                }
            }
            Err(error) => {
                if self.warned.swap(true, Ordering::Relaxed) {
                    tracing::debug!(backend = backend.name(), %error, "the store's secret is still unavailable");
                } else {
                    tracing::warn!(
                        backend = backend.name(),
                        %error,
                        "the store's secret is unavailable; refs made by this process are readable only here until it is back"
                    );
                }
            }
        }
    }

    /// Starts a background read of the secret, unless one started less than
    /// [`RETRY_PAUSE`] ago.
    fn retry_when_due(self: &Arc<Self>) {
        let (Some(backend), Ok(runtime)) =
            (self.backend.clone(), tokio::runtime::Handle::try_current())
        else {
            return;
        };
        {
            let mut next_try = lock(&self.next_try);
            let now = Instant::now();
            if now < *next_try {
                return;
            }
            *next_try = now + RETRY_PAUSE;
        }
        let keys = Arc::clone(self);
        runtime.spawn(async move { keys.fetch(&backend).await });
    }
}
