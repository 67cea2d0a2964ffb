//! When a crashed upstream server may be started again: exponential backoff with jitter,
//! reset once the server has stayed up for a while.

use std::time::Duration;

use crate::config::{DEFAULT_RESTART_BACKOFF_INITIAL, DEFAULT_RESTART_BACKOFF_MAX};
use crate::llm::Backoff;

/// How long an upstream must stay up for its next crash to count as the first in a row.
pub(crate) const STABLE_AFTER: Duration = Duration::from_secs(60);

/// The delays between restarts of a crashing upstream server.
///
/// The `n`-th failure in a row (a crash, or a start that failed) is followed by a delay drawn
/// from `[c/2, c]`, where `c = min(max, initial · 2ⁿ⁻¹)`. Half of the delay is fixed so a crash
/// loop is bounded however the dice fall: at most one start per `initial / 2`, slowing to one
/// per `max / 2`. The other half is random so the sessions of an HTTP proxy whose servers
/// crashed together (a shared database went away) do not restart in lockstep.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RestartBackoff {
    doubling: Backoff,
}

impl RestartBackoff {
    /// A schedule starting at `initial` and never longer than `max`.
    pub(crate) fn new(initial: Duration, max: Duration) -> Self {
        RestartBackoff {
            doubling: Backoff::new(initial, max.max(initial)),
        }
    }

    /// The longest delay after the `failures`-th failure in a row (counting from 1).
    pub(crate) fn ceiling(&self, failures: u32) -> Duration {
        self.doubling.ceiling(failures.saturating_sub(1))
    }

    /// A jittered delay after the `failures`-th failure in a row (counting from 1).
    pub(crate) fn delay(&self, failures: u32) -> Duration {
        self.delay_with(failures, fastrand::f64())
    }

    /// The delay for a given random draw `unit` in `[0, 1]`: `ceiling · (1 + unit) / 2`.
    fn delay_with(&self, failures: u32, unit: f64) -> Duration {
        let ceiling = self.ceiling(failures);
        let half = ceiling / 2;
        half + (ceiling - half).mul_f64(unit.clamp(0.0, 1.0))
    }
}

impl Default for RestartBackoff {
    /// 100 ms doubling to 30 s.
    fn default() -> Self {
        RestartBackoff::new(DEFAULT_RESTART_BACKOFF_INITIAL, DEFAULT_RESTART_BACKOFF_MAX)
    }
}

/// How many failures in a row the upstream has had, given the previous count and how long the
/// connection that just ended had been up (`None`: it never came up).
pub(crate) fn failures_in_a_row(previous: u32, uptime: Option<Duration>) -> u32 {
    match uptime {
        Some(uptime) if uptime >= STABLE_AFTER => 1,
        _ => previous.saturating_add(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(millis: u64) -> Duration {
        Duration::from_millis(millis)
    }

    #[test]
    fn ceiling_starts_at_initial_and_doubles_to_the_cap() {
        let backoff = RestartBackoff::default();
        let ceilings: Vec<_> = (1..=11).map(|n| backoff.ceiling(n)).collect();
        assert_eq!(
            ceilings,
            [
                100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 30000, 30000
            ]
            .map(ms)
        );
    }

    #[test]
    fn ceiling_never_overflows() {
        assert_eq!(RestartBackoff::default().ceiling(u32::MAX), ms(30_000));
    }

    #[test]
    fn delay_lies_between_half_the_ceiling_and_the_ceiling() {
        let backoff = RestartBackoff::default();
        assert_eq!(backoff.delay_with(3, 0.0), ms(200));
        assert_eq!(backoff.delay_with(3, 1.0), ms(400));
        assert_eq!(backoff.delay_with(3, 0.5), ms(300));
        for failures in 1..20 {
            let delay = backoff.delay(failures);
            let ceiling = backoff.ceiling(failures);
            assert!(
                delay >= ceiling / 2 && delay <= ceiling,
                "{delay:?} for {failures}"
            );
        }
    }

    #[test]
    fn delay_is_jittered() {
        let backoff = RestartBackoff::default();
        let delays: std::collections::HashSet<_> = (0..20).map(|_| backoff.delay(5)).collect();
        assert!(delays.len() > 1, "{delays:?}");
    }

    #[test]
    fn a_cap_below_the_initial_delay_is_raised_to_it() {
        let backoff = RestartBackoff::new(ms(500), ms(100));
        assert_eq!(backoff.ceiling(1), ms(500));
        assert_eq!(backoff.ceiling(4), ms(500));
    }

    #[test]
    fn failures_count_up_while_the_upstream_keeps_crashing_early() {
        assert_eq!(failures_in_a_row(0, Some(ms(10))), 1);
        assert_eq!(failures_in_a_row(3, Some(ms(10))), 4);
        assert_eq!(failures_in_a_row(3, None), 4);
    }

    #[test]
    fn failures_reset_after_the_upstream_stayed_up() {
        assert_eq!(failures_in_a_row(7, Some(STABLE_AFTER)), 1);
    }
}
