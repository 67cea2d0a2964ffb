//! Keeping a relayed answer behind the notifications that came before it.
//!
//! rmcp handles every notification it reads in a task of its own, while the answer to a
//! request wakes the task that sent the request directly. So a progress update the other side
//! sent just before its answer may still be on its way through the proxy when the answer
//! arrives: its handler can run after the relayed request has returned and its progress route
//! is gone (the update is dropped), and the outbox can send it to the client after the answer
//! (clients drop progress for a request they have the answer to).
//!
//! A [`Backlog`] follows the notifications from one side: the transport marks each one it
//! reads ([`Backlog::reading`]), the mark goes with the notification into its handler and is
//! dropped when the handler is done, and the outbox reports what it queued and sent. Once an
//! answer has arrived, [`Backlog::settle`] waits until every notification read before it is
//! handled and sent on, and not longer than [`SETTLE_LIMIT`]: a client that stopped reading
//! must not hold up answers. With nothing in flight, it returns at once.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

use crate::sync::lock;

/// The longest an answer waits for the notifications before it. Handling one takes
/// microseconds and sending one to a reading client well under a millisecond; this is for
/// a busy machine, and short enough that a stalled client costs little per answer.
pub(crate) const SETTLE_LIMIT: Duration = Duration::from_millis(100);

/// The notifications from one side of the proxy that are read and not yet passed on. Cheap to
/// clone; a session keeps one per direction.
#[derive(Debug, Clone, Default)]
pub(crate) struct Backlog {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Fired whenever a handler finishes or the outbox sends.
    changed: Notify,
}

#[derive(Debug, Default)]
struct State {
    /// How many notifications the transport has read: the last one's number.
    read: u64,
    /// The numbers of the read notifications whose handler is not done.
    in_handler: BTreeSet<u64>,
    /// The number of the last notification the outbox queued (its own numbering).
    queued: u64,
    /// The number of the last notification the outbox sent; it sends in queue order.
    sent: u64,
    /// The outbox can send no more (the client is gone): nothing queued is worth waiting for.
    outbox_stopped: bool,
}

/// Marks one read notification as being handled, until its last clone is dropped. It travels
/// in the notification's extensions, which rmcp moves into the handler's context, so it drops
/// when the handler returns (or when rmcp discards the notification unhandled).
#[derive(Debug, Clone)]
pub(crate) struct Reading {
    _mark: Arc<Mark>,
}

#[derive(Debug)]
struct Mark {
    backlog: Backlog,
    number: u64,
}

impl Drop for Mark {
    fn drop(&mut self) {
        self.backlog.lock().in_handler.remove(&self.number);
        self.backlog.shared.changed.notify_waiters();
    }
}

impl Backlog {
    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // Plain counters: a panic elsewhere cannot leave them half-updated.
        lock(&self.shared.state)
    }

    /// Counts a notification the transport has just read; the mark says when its handler is
    /// done.
    pub(crate) fn reading(&self) -> Reading {
        let mut state = self.lock();
        state.read += 1;
        let number = state.read;
        state.in_handler.insert(number);
        Reading {
            _mark: Arc::new(Mark {
                backlog: self.clone(),
                number,
            }),
        }
    }

    /// The outbox queued its notification number `number`.
    pub(crate) fn queued(&self, number: u64) {
        self.lock().queued = number;
    }

    /// The outbox sent its notification number `number` (and so every one before it).
    pub(crate) fn sent(&self, number: u64) {
        self.lock().sent = number;
        self.shared.changed.notify_waiters();
    }

    /// The outbox stopped sending: answers no longer wait for it.
    pub(crate) fn outbox_stopped(&self) {
        self.lock().outbox_stopped = true;
        self.shared.changed.notify_waiters();
    }

    /// Waits, at most [`SETTLE_LIMIT`], until every notification read so far is handled and
    /// what the handlers queued is sent. Called once an answer has arrived: the notifications
    /// its side sent before it were read before it, so they are among those waited for.
    pub(crate) async fn settle(&self) {
        let read = self.lock().read;
        let mut deadline = None;
        let handled = |state: &State| state.in_handler.first().is_none_or(|&first| first > read);
        if !self.wait_until(&mut deadline, handled).await {
            return;
        }
        let queued = self.lock().queued;
        let sent = |state: &State| state.outbox_stopped || state.sent >= queued;
        self.wait_until(&mut deadline, sent).await;
    }

    /// Waits until `done` holds or the deadline (set on the first wait) passes; whether it holds.
    async fn wait_until(
        &self,
        deadline: &mut Option<Instant>,
        done: impl Fn(&State) -> bool,
    ) -> bool {
        loop {
            let changed = self.shared.changed.notified();
            let mut changed = std::pin::pin!(changed);
            // Registered before the check, so a change between the check and the wait wakes it.
            changed.as_mut().enable();
            if done(&self.lock()) {
                return true;
            }
            let deadline = *deadline.get_or_insert_with(|| Instant::now() + SETTLE_LIMIT);
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                tracing::debug!(
                    "answered before the notifications that came first were passed on: \
                     they took longer than {} ms",
                    SETTLE_LIMIT.as_millis()
                );
                return false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether `settle` returned without waiting (under a paused clock, any wait shows).
    async fn settles_at_once(backlog: &Backlog) -> bool {
        let start = Instant::now();
        backlog.settle().await;
        start.elapsed().is_zero()
    }

    #[tokio::test(start_paused = true)]
    async fn nothing_in_flight_costs_no_wait() {
        let backlog = Backlog::default();
        assert!(settles_at_once(&backlog).await);
        drop(backlog.reading());
        backlog.queued(1);
        backlog.sent(1);
        assert!(settles_at_once(&backlog).await);
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_waits_for_the_handler_of_an_earlier_notification() {
        let backlog = Backlog::default();
        let reading = backlog.reading();
        let handler = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            drop(reading);
        });
        let start = Instant::now();
        backlog.settle().await;
        assert_eq!(start.elapsed(), Duration::from_millis(20));
        handler.await.expect("handler");
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_waits_for_the_outbox_to_send_what_was_queued_before_it() {
        let backlog = Backlog::default();
        backlog.queued(2);
        backlog.sent(1);
        let outbox = backlog.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(5)).await;
            outbox.queued(3);
            outbox.sent(2);
        });
        let start = Instant::now();
        backlog.settle().await;
        // Number 3 was queued after the answer arrived: not waited for.
        assert_eq!(start.elapsed(), Duration::from_millis(5));
    }

    #[tokio::test(start_paused = true)]
    async fn notifications_read_after_the_answer_are_not_waited_for() {
        let backlog = Backlog::default();
        let earlier = backlog.reading();
        let reader = backlog.clone();
        let handlers = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(10)).await;
            // Read while the answer waits, and never done: it must not hold the answer.
            let later = reader.reading();
            tokio::time::sleep(Duration::from_millis(10)).await;
            drop(earlier);
            later
        });
        let start = Instant::now();
        backlog.settle().await;
        assert_eq!(start.elapsed(), Duration::from_millis(20));
        drop(handlers.await.expect("handlers"));
    }

    #[tokio::test(start_paused = true)]
    async fn a_stuck_client_delays_an_answer_by_the_limit_at_most() {
        let backlog = Backlog::default();
        backlog.queued(1);
        let start = Instant::now();
        backlog.settle().await;
        assert_eq!(start.elapsed(), SETTLE_LIMIT);
        backlog.outbox_stopped();
        assert!(settles_at_once(&backlog).await);
    }
}
