//! Progress token routing.
//!
//! rmcp gives every outgoing request a progress token of its own, so the token the upstream
//! reports progress with is never the one the client asked with. A [`ProgressRoutes`] maps the
//! forwarded request's token back to the original one for as long as the request runs.

use crate::sync::lock;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use rmcp::model::ProgressToken;

/// Forwarded-token → original-token map, shared by a session's request handlers.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProgressRoutes {
    routes: Arc<Mutex<HashMap<ProgressToken, ProgressToken>>>,
}

/// Keeps one route alive; dropping it removes the route.
#[derive(Debug)]
pub(crate) struct RouteGuard {
    routes: ProgressRoutes,
    forwarded: ProgressToken,
}

impl ProgressRoutes {
    /// Routes progress reported under `forwarded` to `original` until the guard drops.
    pub(crate) fn route(&self, forwarded: ProgressToken, original: ProgressToken) -> RouteGuard {
        self.lock().insert(forwarded.clone(), original);
        RouteGuard {
            routes: self.clone(),
            forwarded,
        }
    }

    /// The original token for a forwarded one, if its request is still running.
    pub(crate) fn original(&self, forwarded: &ProgressToken) -> Option<ProgressToken> {
        self.lock().get(forwarded).cloned()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, ProgressToken>> {
        // The map holds plain data: a panic elsewhere cannot leave it half-updated.
        lock(&self.routes)
    }
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.forwarded);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::NumberOrString;

    fn token(n: i64) -> ProgressToken {
        ProgressToken(NumberOrString::Number(n))
    }

    #[test]
    fn routes_forwarded_token_to_original_while_guard_lives() {
        let routes = ProgressRoutes::default();
        let guard = routes.route(
            token(7),
            ProgressToken(NumberOrString::String("abc".into())),
        );
        assert_eq!(
            routes.original(&token(7)),
            Some(ProgressToken(NumberOrString::String("abc".into())))
        );
        drop(guard);
        assert_eq!(routes.original(&token(7)), None);
    }

    #[test]
    fn unknown_token_has_no_route() {
        assert_eq!(ProgressRoutes::default().original(&token(1)), None);
    }
}
