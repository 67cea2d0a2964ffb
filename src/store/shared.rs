//! Condensed results in the backend, so a call condensed by one process is a cache hit for
//! every process that shares the backend (proxy replicas on one Redis, CLI runs on one disk).
//!
//! The in-process results cache stays the hot tier: the backend is asked only when it misses,
//! and written in the background after a fresh result. Only clean results are shared: no
//! fallback (the next call should try the LLM again) and no cut input.

use std::sync::Arc;

use serde::{Deserialize, Serialize};

use super::Store;
use super::backend::Kind;
use super::refs::REF_PREFIX;
use crate::outcome::{Condensed, Method};

/// What is kept of a result: what the agent sees and what its metadata says.
#[derive(Serialize, Deserialize)]
struct SharedResult {
    text: String,
    method: Method,
    tokens_before: usize,
    tokens_after: usize,
    reference: String,
}

impl Store {
    /// The result another process kept under the results cache `key`, if it names the same
    /// original as this call (`reference`): a result made with another secret (a process
    /// that could not read the shared one) would name a ref this process cannot serve.
    pub(crate) async fn shared_result(&self, key: u128, reference: &str) -> Option<Condensed> {
        let bytes = self.backend_value(Kind::Condensed, key).await?;
        let shared: SharedResult = serde_json::from_slice(&bytes).ok()?;
        if shared.reference != reference {
            return None;
        }
        let mut outcome = Condensed::counted(
            shared.text,
            shared.method,
            shared.tokens_before,
            shared.tokens_after,
        );
        outcome.reference = Some(shared.reference);
        outcome.cached = true;
        Some(outcome)
    }

    /// Writes a fresh result to the backend in the background, when it is clean.
    pub(crate) async fn share_result(&self, key: u128, outcome: &Condensed) {
        if self.backend.is_none() || outcome.fallback.is_some() || outcome.input_cut.is_some() {
            return;
        }
        let Some(reference) = outcome.reference.clone() else {
            return;
        };
        let shared = SharedResult {
            text: outcome.text.clone(),
            method: outcome.method,
            tokens_before: outcome.tokens_before(),
            tokens_after: outcome.tokens_after(),
            reference,
        };
        if let Ok(json) = serde_json::to_string(&shared) {
            let key = self.backend_key(key).await;
            self.persist(Kind::Condensed, key, Arc::new(json));
        }
    }

    /// What the backend keeps of `kind` under the keyed form of the in-process cache `key`;
    /// a failure to read is logged at debug and is a miss.
    pub(super) async fn backend_value(&self, kind: Kind, key: u128) -> Option<Vec<u8>> {
        let backend = self.backend.as_ref()?;
        match backend.get(kind, &self.backend_key(key).await).await {
            Ok(found) => found,
            Err(error) => {
                tracing::debug!(backend = backend.name(), kind = kind.name(), %error, "could not read from the store");
                None
            }
        }
    }

    /// The backend key of an in-process cache key (a result's or a chunk summary's): keyed by
    /// the store's secret, so what a shared server holds does not say which inputs were seen.
    pub(super) async fn backend_key(&self, key: u128) -> String {
        let tag = self.key().await.reference(&key.to_le_bytes());
        tag[REF_PREFIX.len()..].to_owned()
    }
}
