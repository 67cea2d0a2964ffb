use tower::Layer;

use super::Condense;
use crate::engine::Condenser;

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
}

impl<S> Layer<S> for CondenseLayer {
    type Service = Condense<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Condense::new(inner, self.condenser.clone())
    }
}
