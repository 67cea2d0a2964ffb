//! The hook, called from here only. Each rung's answer is judged before it is delivered (a
//! veto lets the next rung answer); a delivered outcome no rung answered in this call (a
//! pass-through, a cached result) is shown once, when it is delivered.

use std::sync::atomic::{AtomicBool, Ordering};

use super::{Condensed, Condenser, Hook, Request, Verdict};

/// The hook's view of one call.
pub(super) struct Review<'c, 'r> {
    hook: Option<&'c dyn Hook>,
    request: &'c Request<'r>,
    /// Whether a rung's answer was judged in this call: the outcome delivered is then the
    /// last one judged, which the hook has seen.
    judged: AtomicBool,
}

impl<'c, 'r> Review<'c, 'r> {
    pub(super) fn new(condenser: &'c Condenser, request: &'c Request<'r>) -> Self {
        Review {
            hook: condenser.inner.hook.as_deref(),
            request,
            judged: AtomicBool::new(false),
        }
    }

    /// The request of the call.
    pub(super) fn request(&self) -> &'c Request<'r> {
        self.request
    }

    /// A rung's answer, before it is delivered: [`Verdict::Veto`] asks the next rung for one.
    pub(super) fn judge(&self, outcome: &Condensed) -> Verdict {
        self.judged.store(true, Ordering::Relaxed);
        self.show(outcome)
    }

    /// The outcome delivered: shown unless it is a rung's answer the hook judged already.
    pub(super) fn deliver(&self, outcome: &Condensed) {
        if !self.judged.load(Ordering::Relaxed) {
            self.show(outcome);
        }
    }

    fn show(&self, outcome: &Condensed) -> Verdict {
        match self.hook {
            Some(hook) => hook.on_outcome(outcome, self.request),
            None => Verdict::Keep,
        }
    }
}
