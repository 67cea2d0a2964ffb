//! Locking the crate's plain mutexes.

use std::sync::{Mutex, MutexGuard, PoisonError};

/// Locks `mutex`, taking its value even if a thread panicked while holding it: every mutex in
/// the crate guards plain data (maps, counters, timestamps) that a panic cannot leave
/// half-updated, so a poisoned lock must not turn one panic into many.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}
