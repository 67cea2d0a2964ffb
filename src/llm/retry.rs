//! When to try an LLM request again, and how long to wait first.
//!
//! The shape follows tower's `retry::Policy`: after each failed attempt the policy classifies
//! the outcome and either gives up or returns the delay before the next attempt. Retries are
//! bounded twice, because a backend that is failing under load gets worse when every client
//! multiplies its requests:
//!
//! - per call, by [`RetryPolicy::with_max_retries`] (2 by default);
//! - across calls, by a [`RetryBudget`] shared by every clone of a client: retries may add about
//!   20% to the requests of the last ten seconds, plus a small reserve so that a quiet client can
//!   still retry its occasional failure.

use crate::sync::lock;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use super::LlmError;

/// Exponential backoff with full jitter: retry `n` (counting from 0) waits a uniformly random
/// time in `[0, min(cap, base · 2ⁿ)]`.
///
/// Full jitter spreads the retries of many clients that failed together over the whole window
/// instead of sending them back in lockstep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Backoff {
    /// The upper bound of the first wait.
    pub base: Duration,
    /// No wait is longer than this.
    pub cap: Duration,
}

impl Backoff {
    /// A backoff starting at `base` and never longer than `cap`.
    pub fn new(base: Duration, cap: Duration) -> Self {
        Backoff { base, cap }
    }

    /// The longest wait before retry `retry` (counting from 0), before jitter.
    pub fn ceiling(&self, retry: u32) -> Duration {
        let factor = 1u32.checked_shl(retry).unwrap_or(u32::MAX);
        self.base.saturating_mul(factor).min(self.cap)
    }

    /// A jittered wait before retry `retry` (counting from 0).
    pub fn delay(&self, retry: u32) -> Duration {
        let ceiling = self.ceiling(retry);
        let nanos = u64::try_from(ceiling.as_nanos()).unwrap_or(u64::MAX);
        Duration::from_nanos(fastrand::u64(0..=nanos))
    }
}

impl Default for Backoff {
    /// 500 ms base, 8 s cap.
    fn default() -> Self {
        Backoff::new(Duration::from_millis(500), Duration::from_secs(8))
    }
}

/// How many slots the budget's sliding window is divided into.
const WINDOW_SLOTS: usize = 10;

/// A limit on retries across calls: over a sliding window of `ttl`, retries may not exceed
/// `min_per_sec · ttl` plus `retry_ratio` times the calls made.
///
/// The same rule as tower's `TpsBudget` and Finagle's retry budget. Share one budget between
/// every client that talks to the same backend; [`RetryPolicy`] holds it in an `Arc`, so clones
/// of a policy (and of a [`LiteLlm`](super::LiteLlm) client) share it.
#[derive(Debug)]
pub struct RetryBudget {
    slot_length: Duration,
    reserve: f64,
    retry_ratio: f64,
    window: Mutex<Window>,
}

#[derive(Debug)]
struct Window {
    /// Calls and retries per slot; `head` is the slot being filled.
    slots: [(u64, u64); WINDOW_SLOTS],
    head: usize,
    head_started: Instant,
}

impl RetryBudget {
    /// A budget over a window of `ttl` (at least 1 s), with a reserve of `min_per_sec` retries
    /// per second and `retry_ratio` extra retries per call (clamped to `0.0..=1000.0`).
    pub fn new(ttl: Duration, min_per_sec: u32, retry_ratio: f32) -> Self {
        let ttl = ttl.max(Duration::from_secs(1));
        let retry_ratio = if retry_ratio.is_nan() {
            0.0
        } else {
            f64::from(retry_ratio.clamp(0.0, 1000.0))
        };
        RetryBudget {
            slot_length: ttl / WINDOW_SLOTS as u32,
            reserve: f64::from(min_per_sec) * ttl.as_secs_f64(),
            retry_ratio,
            window: Mutex::new(Window {
                slots: [(0, 0); WINDOW_SLOTS],
                head: 0,
                head_started: Instant::now(),
            }),
        }
    }

    /// Records a call (its first attempt), which earns `retry_ratio` retries.
    pub fn deposit(&self) {
        let mut window = self.window();
        let head = window.head;
        window.slots[head].0 += 1;
    }

    /// Takes one retry from the budget; `false` when none is left.
    pub fn withdraw(&self) -> bool {
        let mut window = self.window();
        let (calls, retries) = window
            .slots
            .iter()
            .fold((0u64, 0u64), |(c, r), (calls, retries)| {
                (c + calls, r + retries)
            });
        let balance = self.reserve + self.retry_ratio * calls as f64 - retries as f64;
        if balance < 1.0 {
            return false;
        }
        let head = window.head;
        window.slots[head].1 += 1;
        true
    }

    /// The window with slots older than `ttl` cleared.
    fn window(&self) -> std::sync::MutexGuard<'_, Window> {
        // A panic elsewhere while holding the lock leaves only counters behind, still usable.
        let mut window = lock(&self.window);
        let elapsed = window.head_started.elapsed();
        let steps = (elapsed.as_nanos() / self.slot_length.as_nanos().max(1)) as u64;
        if steps > 0 {
            for _ in 0..steps.min(WINDOW_SLOTS as u64) {
                window.head = (window.head + 1) % WINDOW_SLOTS;
                let head = window.head;
                window.slots[head] = (0, 0);
            }
            let advance = u32::try_from(steps)
                .ok()
                .and_then(|steps| self.slot_length.checked_mul(steps));
            window.head_started = match advance {
                Some(advance) => window.head_started + advance,
                None => Instant::now(),
            };
        }
        window
    }
}

impl Default for RetryBudget {
    /// A 10 s window, a reserve of 1 retry per second, and 20% extra load.
    fn default() -> Self {
        RetryBudget::new(Duration::from_secs(10), 1, 0.2)
    }
}

/// Decides whether a failed LLM attempt is tried again, and after how long.
///
/// Retried: rate limits (429), timeouts on either side (408, client timeout), connection
/// failures and 5xx statuses other than 501 and 505 (see [`LlmError::is_retryable`]). A
/// `Retry-After` the endpoint sends is honoured as the wait; when it asks for longer than
/// [`with_max_retry_after`](Self::with_max_retry_after) allows, the policy gives up at once
/// rather than stall past the caller's deadline, and the error keeps the asked-for wait in
/// [`LlmError::retry_after`].
///
/// Retries are bounded twice, because a backend failing under load gets worse when every
/// client multiplies its requests: per call by [`with_max_retries`](Self::with_max_retries), and
/// across calls by a [`RetryBudget`] that clones of the policy share.
///
/// ```
/// use std::time::Duration;
/// use condense::llm::{Backoff, LlmError, RetryPolicy};
///
/// let policy = RetryPolicy::default()
///     .with_max_retries(1)
///     .with_backoff(Backoff::new(Duration::from_millis(100), Duration::from_secs(2)));
/// policy.on_request();
/// let delay = policy.retry_delay(0, &LlmError::Timeout).expect("a timeout is retried");
/// assert!(delay <= Duration::from_millis(100));
/// assert_eq!(policy.retry_delay(1, &LlmError::Timeout), None, "only one retry per call");
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RetryPolicy {
    max_retries: u32,
    backoff: Backoff,
    max_retry_after: Duration,
    budget: Arc<RetryBudget>,
}

impl Default for RetryPolicy {
    /// 2 retries per call, [`Backoff::default`], `Retry-After` honoured up to 10 s,
    /// [`RetryBudget::default`].
    fn default() -> Self {
        RetryPolicy {
            max_retries: 2,
            backoff: Backoff::default(),
            max_retry_after: Duration::from_secs(10),
            budget: Arc::new(RetryBudget::default()),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn never() -> Self {
        RetryPolicy::default().with_max_retries(0)
    }

    /// Sets the most retries of one call (default 2): a call makes at most `1 + max_retries`
    /// attempts.
    #[must_use]
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Sets the backoff used when the endpoint does not say how long to wait (default
    /// [`Backoff::default`]).
    #[must_use]
    pub fn with_backoff(mut self, backoff: Backoff) -> Self {
        self.backoff = backoff;
        self
    }

    /// Sets the longest `Retry-After` that is waited for (default 10 s); a longer one ends the
    /// call with the error.
    #[must_use]
    pub fn with_max_retry_after(mut self, max_retry_after: Duration) -> Self {
        self.max_retry_after = max_retry_after;
        self
    }

    /// Sets the budget that bounds retries across calls (default [`RetryBudget::default`]).
    #[must_use]
    pub fn with_budget(mut self, budget: RetryBudget) -> Self {
        self.budget = Arc::new(budget);
        self
    }

    /// The most retries of one call.
    pub fn max_retries(&self) -> u32 {
        self.max_retries
    }

    /// Records the start of a call; call once per call, before its first attempt.
    pub fn on_request(&self) {
        self.budget.deposit();
    }

    /// After a failed attempt: the wait before the next one, or `None` to give up with
    /// `error`. `retries_done` is how many retries this call has made so far.
    ///
    /// A `Some` has taken a retry from the budget.
    pub fn retry_delay(&self, retries_done: u32, error: &LlmError) -> Option<Duration> {
        if !error.is_retryable() || retries_done >= self.max_retries {
            return None;
        }
        let delay = match error.retry_after() {
            Some(asked) if asked > self.max_retry_after => return None,
            Some(asked) => asked,
            None => self.backoff.delay(retries_done),
        };
        self.budget.withdraw().then_some(delay)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rate_limited(retry_after: Option<Duration>) -> LlmError {
        LlmError::RateLimited {
            message: String::new(),
            retry_after,
        }
    }

    #[test]
    fn backoff_ceiling_doubles_up_to_the_cap() {
        let backoff = Backoff::new(Duration::from_millis(100), Duration::from_millis(350));
        assert_eq!(backoff.ceiling(0), Duration::from_millis(100));
        assert_eq!(backoff.ceiling(1), Duration::from_millis(200));
        assert_eq!(backoff.ceiling(2), Duration::from_millis(350));
        assert_eq!(backoff.ceiling(200), Duration::from_millis(350));
    }

    #[test]
    fn backoff_delay_stays_within_its_ceiling() {
        let backoff = Backoff::new(Duration::from_millis(100), Duration::from_secs(1));
        for retry in 0..6 {
            for _ in 0..50 {
                assert!(backoff.delay(retry) <= backoff.ceiling(retry));
            }
        }
    }

    #[test]
    fn backoff_delay_is_jittered() {
        let backoff = Backoff::new(Duration::from_secs(1), Duration::from_secs(1));
        let delays: std::collections::HashSet<_> = (0..20).map(|_| backoff.delay(0)).collect();
        assert!(delays.len() > 1);
    }

    #[tokio::test(start_paused = true)]
    async fn budget_allows_the_reserve_then_the_ratio_of_calls() {
        let budget = RetryBudget::new(Duration::from_secs(10), 0, 0.5);
        assert!(!budget.withdraw(), "no calls, no reserve: no retry");
        budget.deposit();
        assert!(!budget.withdraw(), "half a retry is not a retry");
        budget.deposit();
        assert!(budget.withdraw());
        assert!(!budget.withdraw());
    }

    #[tokio::test(start_paused = true)]
    async fn budget_reserve_refills_as_the_window_slides() {
        let budget = RetryBudget::new(Duration::from_secs(1), 2, 0.0);
        assert!(budget.withdraw());
        assert!(budget.withdraw());
        assert!(!budget.withdraw());
        tokio::time::advance(Duration::from_millis(1100)).await;
        assert!(budget.withdraw());
    }

    #[tokio::test(start_paused = true)]
    async fn budget_forgets_calls_older_than_the_window() {
        let budget = RetryBudget::new(Duration::from_secs(1), 0, 1.0);
        budget.deposit();
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(!budget.withdraw());
    }

    #[test]
    fn policy_gives_up_on_errors_that_are_not_retryable() {
        let policy = RetryPolicy::default();
        policy.on_request();
        assert_eq!(policy.retry_delay(0, &LlmError::EmptyAnswer), None);
    }

    #[test]
    fn policy_stops_after_max_retries() {
        let policy = RetryPolicy::default().with_max_retries(1);
        policy.on_request();
        assert!(policy.retry_delay(0, &LlmError::Timeout).is_some());
        assert_eq!(policy.retry_delay(1, &LlmError::Timeout), None);
    }

    #[test]
    fn policy_waits_as_long_as_retry_after_asks() {
        let policy = RetryPolicy::default();
        let asked = Duration::from_secs(3);
        assert_eq!(
            policy.retry_delay(0, &rate_limited(Some(asked))),
            Some(asked)
        );
    }

    #[test]
    fn policy_gives_up_when_retry_after_is_longer_than_allowed() {
        let policy = RetryPolicy::default().with_max_retry_after(Duration::from_secs(5));
        let error = rate_limited(Some(Duration::from_secs(3600)));
        assert_eq!(policy.retry_delay(0, &error), None);
    }

    #[test]
    fn policy_without_retry_after_uses_the_backoff() {
        let backoff = Backoff::new(Duration::from_millis(10), Duration::from_millis(10));
        let policy = RetryPolicy::default().with_backoff(backoff);
        let delay = policy.retry_delay(0, &rate_limited(None)).expect("retried");
        assert!(delay <= Duration::from_millis(10));
    }

    #[tokio::test(start_paused = true)]
    async fn policy_gives_up_when_the_budget_is_spent() {
        let policy =
            RetryPolicy::default().with_budget(RetryBudget::new(Duration::from_secs(10), 0, 0.0));
        policy.on_request();
        assert_eq!(policy.retry_delay(0, &LlmError::Timeout), None);
    }

    #[tokio::test(start_paused = true)]
    async fn clones_of_a_policy_share_one_budget() {
        let policy =
            RetryPolicy::default().with_budget(RetryBudget::new(Duration::from_secs(10), 0, 1.0));
        let clone = policy.clone();
        policy.on_request();
        assert!(clone.retry_delay(0, &LlmError::Timeout).is_some());
        assert_eq!(policy.retry_delay(0, &LlmError::Timeout), None);
    }
}
