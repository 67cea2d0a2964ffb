use tower::Layer;

use super::Condense;
use crate::engine::Condenser;
use crate::policy::Policy;

/// Condenses the results of the tool client it wraps. Plain configuration: cloning it clones
/// a handle to the same engine, caches and LLM limits.
#[derive(Debug, Clone)]
pub struct CondenseLayer {
    condenser: Condenser,
}

impl CondenseLayer {
    /// A layer condensing with `condenser`.
    pub fn new(condenser: Condenser) -> Self {
        CondenseLayer { condenser }
    }

    /// The same layer deciding with `policy` instead of the condenser's own; caches, originals
    /// and LLM limits stay shared with every other user of the condenser.
    ///
    /// ```
    /// use condense::policy::{Decision, Policy, RulesPolicy, Subject};
    /// use condense::{CondenseLayer, Condenser, Config};
    ///
    /// let condenser = Condenser::new(Config::default()).unwrap();
    /// // Never condense tool errors; otherwise follow the config.
    /// let keep_errors = |subject: &Subject<'_>| {
    ///     if subject.is_error() { Decision::PassThrough } else { Decision::Defer }
    /// };
    /// let layer = CondenseLayer::new(condenser.clone())
    ///     .with_policy(keep_errors.or(RulesPolicy::new(condenser.config().clone())));
    /// # let _ = layer;
    /// ```
    #[must_use]
    pub fn with_policy(self, policy: impl Policy) -> Self {
        CondenseLayer {
            condenser: self.condenser.with_policy(policy),
        }
    }
}

impl<S> Layer<S> for CondenseLayer {
    type Service = Condense<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Condense::new(inner, self.condenser.clone())
    }
}
