//! The bounded queue of notifications on their way from the upstream to the client.
//!
//! The upstream can send notifications faster than the client reads them. Waiting for the
//! client would stall the upstream's reader (and with it every answer), and buffering without
//! bound grew the proxy by gigabytes. So the queue has a size, and under pressure it gives way
//! where losing a message is harmless: a progress update replaces the one still queued for the
//! same token (the latest progress wins), and progress updates and log messages beyond the
//! size are dropped. Other notifications (list changes, resource updates, custom ones) are
//! rare and carry state, so they get twice the room before they are dropped too. Drops are
//! counted and reported in one log line when the queue has drained.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressToken, ServerNotification};
use rmcp::{Peer, RoleServer};
use tokio::sync::Notify;
use tokio_util::sync::{CancellationToken, DropGuard};

/// How many progress updates and log messages wait for the client at most.
pub(crate) const NOTIFICATION_QUEUE: usize = 1000;

/// What happened to a pushed notification.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pushed {
    /// It waits in the queue.
    Queued,
    /// It replaced the queued progress update of the same token.
    Coalesced,
    /// The queue was full: it is dropped.
    Dropped,
}

/// One waiting notification; a progress update's latest version is kept beside the order.
#[derive(Debug)]
enum Entry {
    Progress(ProgressToken),
    Other(Box<ServerNotification>),
}

/// The queue itself, without the task that empties it.
#[derive(Debug)]
pub(crate) struct Queue {
    entries: VecDeque<Entry>,
    latest_progress: HashMap<ProgressToken, ServerNotification>,
    capacity: usize,
    dropped: u64,
    coalesced: u64,
}

impl Queue {
    /// A queue for `capacity` progress updates and log messages.
    pub(crate) fn new(capacity: usize) -> Self {
        Queue {
            entries: VecDeque::new(),
            latest_progress: HashMap::new(),
            capacity,
            dropped: 0,
            coalesced: 0,
        }
    }

    /// How many notifications wait.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.entries.len()
    }

    /// Adds a notification, merging or dropping it when the queue is under pressure.
    pub(crate) fn push(&mut self, notification: ServerNotification) -> Pushed {
        let pushed = match notification {
            ServerNotification::ProgressNotification(ref progress) => {
                let token = progress.params.progress_token.clone();
                if let Some(queued) = self.latest_progress.get_mut(&token) {
                    *queued = notification;
                    Pushed::Coalesced
                } else if self.entries.len() >= self.capacity {
                    Pushed::Dropped
                } else {
                    self.latest_progress.insert(token.clone(), notification);
                    self.entries.push_back(Entry::Progress(token));
                    Pushed::Queued
                }
            }
            ServerNotification::LoggingMessageNotification(_)
                if self.entries.len() >= self.capacity =>
            {
                Pushed::Dropped
            }
            other if self.entries.len() >= 2 * self.capacity => {
                tracing::debug!(
                    kind = kind(&other),
                    "dropped a notification: the queue is full"
                );
                Pushed::Dropped
            }
            other => {
                self.entries.push_back(Entry::Other(Box::new(other)));
                Pushed::Queued
            }
        };
        match pushed {
            Pushed::Dropped => self.dropped += 1,
            Pushed::Coalesced => self.coalesced += 1,
            Pushed::Queued => {}
        }
        pushed
    }

    /// The oldest waiting notification (a progress update in its latest version).
    pub(crate) fn pop(&mut self) -> Option<ServerNotification> {
        loop {
            match self.entries.pop_front()? {
                Entry::Other(notification) => return Some(*notification),
                Entry::Progress(token) => {
                    if let Some(latest) = self.latest_progress.remove(&token) {
                        return Some(latest);
                    }
                }
            }
        }
    }

    /// The drop and merge counts since the last report, reset.
    fn take_counts(&mut self) -> (u64, u64) {
        (
            std::mem::take(&mut self.dropped),
            std::mem::take(&mut self.coalesced),
        )
    }
}

fn kind(notification: &ServerNotification) -> &'static str {
    match notification {
        ServerNotification::ProgressNotification(_) => "progress",
        ServerNotification::LoggingMessageNotification(_) => "log message",
        _ => "other",
    }
}

#[derive(Debug)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Notify,
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Queue> {
        crate::sync::lock(&self.queue)
    }
}

/// The queue and the task that sends its notifications to the client, one at a time. Cheap to
/// clone; the task stops when the last clone is dropped.
#[derive(Debug, Clone)]
pub(crate) struct Outbox {
    shared: Arc<Shared>,
    _stop: Arc<DropGuard>,
}

impl Outbox {
    /// Starts the task that sends to `client`.
    pub(crate) fn start(client: Peer<RoleServer>, capacity: usize) -> Self {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::new(capacity)),
            ready: Notify::new(),
        });
        let stop = CancellationToken::new();
        tokio::spawn(send_all(shared.clone(), client, stop.clone()));
        Outbox {
            shared,
            _stop: Arc::new(stop.drop_guard()),
        }
    }

    /// Queues a notification for the client; never waits.
    pub(crate) fn push(&self, notification: ServerNotification) {
        if self.shared.lock().push(notification) == Pushed::Queued {
            self.shared.ready.notify_one();
        }
    }
}

async fn send_all(shared: Arc<Shared>, client: Peer<RoleServer>, stop: CancellationToken) {
    loop {
        let next = {
            let mut queue = shared.lock();
            let next = queue.pop();
            if next.is_none() {
                report(&mut queue);
            }
            next
        };
        match next {
            Some(notification) => {
                if let Err(error) = client.send_notification(notification).await {
                    tracing::debug!(%error, "the client is gone: no more notifications for it");
                    report(&mut shared.lock());
                    return;
                }
            }
            None => tokio::select! {
                () = shared.ready.notified() => {}
                () = stop.cancelled() => {
                    report(&mut shared.lock());
                    return;
                }
            },
        }
    }
}

/// Says, once the pressure is over, how many notifications were dropped or merged.
fn report(queue: &mut Queue) {
    let (dropped, coalesced) = queue.take_counts();
    if dropped == 0 && coalesced > 0 {
        // Merging loses nothing the client needs: the latest progress is what it shows.
        tracing::debug!(coalesced, "progress updates merged into later ones");
    } else if dropped > 0 {
        tracing::warn!(
            dropped,
            coalesced,
            "the client read notifications more slowly than the upstream MCP server sent them: \
             {dropped} progress updates and log messages were dropped and {coalesced} progress \
             updates merged into later ones"
        );
    }
}

#[cfg(test)]
// Log messages are deprecated by the newest protocol revision, but the revisions the proxy
// relays have them, and they are half of any flood.
#[allow(deprecated)]
mod tests {
    use super::*;
    use rmcp::model::{
        LoggingLevel, LoggingMessageNotification, LoggingMessageNotificationParam, NumberOrString,
        ProgressNotification, ProgressNotificationParam, ToolListChangedNotification,
    };

    fn progress(token: i64, value: f64) -> ServerNotification {
        ProgressNotification::new(ProgressNotificationParam::new(
            ProgressToken(NumberOrString::Number(token)),
            value,
        ))
        .into()
    }

    fn log(text: &str) -> ServerNotification {
        LoggingMessageNotification::new(LoggingMessageNotificationParam::new(
            LoggingLevel::Info,
            serde_json::json!(text),
        ))
        .into()
    }

    fn progress_value(notification: &ServerNotification) -> Option<f64> {
        match notification {
            ServerNotification::ProgressNotification(progress) => Some(progress.params.progress),
            _ => None,
        }
    }

    #[test]
    fn a_flood_stays_within_the_bound_and_the_latest_progress_wins() {
        let mut queue = Queue::new(100);
        for number in 0..200_000 {
            queue.push(log(&format!("line {number}")));
            queue.push(progress(1, f64::from(number)));
            assert!(queue.len() <= 100, "{} queued", queue.len());
        }
        assert_eq!(queue.len(), 100);
        assert_eq!(queue.latest_progress.len(), 1);
        let sent: Vec<_> = std::iter::from_fn(|| queue.pop()).collect();
        assert_eq!(sent.len(), 100);
        // The one progress entry carries the last value pushed.
        let progress: Vec<f64> = sent.iter().filter_map(progress_value).collect();
        assert_eq!(progress, vec![199_999.0]);
        let (dropped, coalesced) = queue.take_counts();
        assert_eq!(dropped, 200_000 - 99);
        assert_eq!(coalesced, 199_999);
    }

    #[test]
    fn state_changes_get_room_beyond_the_lossy_bound() {
        let mut queue = Queue::new(2);
        assert_eq!(queue.push(log("a")), Pushed::Queued);
        assert_eq!(queue.push(log("b")), Pushed::Queued);
        assert_eq!(queue.push(log("c")), Pushed::Dropped);
        assert_eq!(queue.push(progress(7, 1.0)), Pushed::Dropped);
        let changed = || ToolListChangedNotification::default().into();
        assert_eq!(queue.push(changed()), Pushed::Queued);
        assert_eq!(queue.push(changed()), Pushed::Queued);
        assert_eq!(queue.push(changed()), Pushed::Dropped);
        assert_eq!(queue.len(), 4);
    }

    #[test]
    fn order_is_kept_and_progress_keeps_its_first_place() {
        let mut queue = Queue::new(10);
        queue.push(progress(1, 1.0));
        queue.push(log("between"));
        assert_eq!(queue.push(progress(1, 2.0)), Pushed::Coalesced);
        queue.push(progress(2, 5.0));
        let first = queue.pop().expect("first");
        assert_eq!(progress_value(&first), Some(2.0));
        assert!(matches!(
            queue.pop(),
            Some(ServerNotification::LoggingMessageNotification(_))
        ));
        assert_eq!(queue.pop().as_ref().and_then(progress_value), Some(5.0));
        assert!(queue.pop().is_none());
        // A token whose update was sent starts a new entry.
        assert_eq!(queue.push(progress(1, 3.0)), Pushed::Queued);
    }
}
