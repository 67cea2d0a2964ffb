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
//!
//! The queue numbers what it queues and tells the session's [`Backlog`] what it queued and
//! sent, so a relayed answer can wait for the notifications queued before it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use rmcp::model::{ProgressToken, ServerNotification};
use rmcp::{Peer, RoleServer};
use tokio::sync::Notify;
use tokio_util::sync::{CancellationToken, DropGuard};

use super::backlog::Backlog;

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

/// One waiting notification and its number in the queue's order; a progress update's latest
/// version is kept beside the order.
#[derive(Debug)]
enum Entry {
    Progress(u64, ProgressToken),
    Other(u64, Box<ServerNotification>),
}

/// The queue itself, without the task that empties it.
#[derive(Debug)]
pub(crate) struct Queue {
    entries: VecDeque<Entry>,
    latest_progress: HashMap<ProgressToken, ServerNotification>,
    capacity: usize,
    /// The number of the last entry queued; entries are numbered from 1 in queue order.
    last_queued: u64,
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
            last_queued: 0,
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
                    self.last_queued += 1;
                    self.entries
                        .push_back(Entry::Progress(self.last_queued, token));
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
                self.last_queued += 1;
                self.entries
                    .push_back(Entry::Other(self.last_queued, Box::new(other)));
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

    /// The oldest waiting notification (a progress update in its latest version) and its
    /// number.
    pub(crate) fn pop(&mut self) -> Option<(u64, ServerNotification)> {
        loop {
            match self.entries.pop_front()? {
                Entry::Other(number, notification) => return Some((number, *notification)),
                Entry::Progress(number, token) => {
                    if let Some(latest) = self.latest_progress.remove(&token) {
                        return Some((number, latest));
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
    /// Told what is queued and sent, for answers that wait for it.
    backlog: Backlog,
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
    /// Starts the task that sends to `client`, reporting to `backlog` what it queues and sends.
    pub(crate) fn start(client: Peer<RoleServer>, capacity: usize, backlog: Backlog) -> Self {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::new(capacity)),
            ready: Notify::new(),
            backlog,
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
        let mut queue = self.shared.lock();
        if queue.push(notification) == Pushed::Queued {
            // Under the queue's lock, so the backlog learns the numbers in order.
            self.shared.backlog.queued(queue.last_queued);
            drop(queue);
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
            Some((number, notification)) => {
                if let Err(error) = client.send_notification(notification).await {
                    tracing::debug!(%error, "the client is gone: no more notifications for it");
                    shared.backlog.outbox_stopped();
                    report(&mut shared.lock());
                    return;
                }
                // rmcp has handed it to the transport: an answer sent from now on follows it.
                shared.backlog.sent(number);
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
    use crate::mcp::downstream::DownstreamStdio;
    use rmcp::model::{ClientConfig, JsonRpcMessage};
    use rmcp::model::{
        LoggingLevel, LoggingMessageNotification, LoggingMessageNotificationParam, NumberOrString,
        ProgressNotification, ProgressNotificationParam, ToolListChangedNotification,
    };
    use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
    use rmcp::transport::Transport;
    use rmcp::{ServerHandler, ServiceExt};

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
        let sent: Vec<_> = std::iter::from_fn(|| queue.pop())
            .map(|(_, notification)| notification)
            .collect();
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
        let (number, first) = queue.pop().expect("first");
        // The merged update keeps the number of the entry it joined.
        assert_eq!((number, progress_value(&first)), (1, Some(2.0)));
        assert!(matches!(
            queue.pop(),
            Some((2, ServerNotification::LoggingMessageNotification(_)))
        ));
        let (number, last) = queue.pop().expect("last");
        assert_eq!((number, progress_value(&last)), (3, Some(5.0)));
        assert!(queue.pop().is_none());
        // A token whose update was sent starts a new entry.
        assert_eq!(queue.push(progress(1, 3.0)), Pushed::Queued);
        assert_eq!(queue.last_queued, 4);
    }

    /// The client's transport, with each notification written `NOTIFICATION_DELAY` late;
    /// counts the notifications written.
    struct SlowNotifications<T> {
        transport: T,
        written: Arc<std::sync::atomic::AtomicUsize>,
    }

    const NOTIFICATION_DELAY: std::time::Duration = std::time::Duration::from_millis(20);

    impl<T: Transport<RoleServer>> Transport<RoleServer> for SlowNotifications<T> {
        type Error = T::Error;

        fn send(
            &mut self,
            item: TxJsonRpcMessage<RoleServer>,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            let notification = matches!(item, JsonRpcMessage::Notification(_));
            let written = self.written.clone();
            let send = self.transport.send(item);
            async move {
                if notification {
                    tokio::time::sleep(NOTIFICATION_DELAY).await;
                }
                let result = send.await;
                if notification {
                    written.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                }
                result
            }
        }

        fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleServer>>> {
            self.transport.receive()
        }

        fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
            self.transport.close()
        }
    }

    #[derive(Debug, Clone)]
    struct Quiet;

    impl ServerHandler for Quiet {}

    #[tokio::test(start_paused = true)]
    async fn the_backlog_settles_once_the_queued_notification_is_written() {
        let (client_io, server_io) = tokio::io::duplex(1 << 16);
        let written = Arc::default();
        let (read, write) = tokio::io::split(server_io);
        let transport = SlowNotifications {
            transport: DownstreamStdio::new(read, write, 1 << 20),
            written: Arc::clone(&written),
        };
        let server = tokio::spawn(Quiet.serve(transport));
        let client = ClientConfig::default()
            .serve(client_io)
            .await
            .expect("handshake");
        let server = server.await.expect("server task").expect("server");

        let backlog = Backlog::default();
        let outbox = Outbox::start(server.peer().clone(), 10, backlog.clone());
        outbox.push(progress(1, 1.0));
        let start = tokio::time::Instant::now();
        backlog.settle().await;
        assert_eq!(written.load(std::sync::atomic::Ordering::SeqCst), 1);
        assert_eq!(start.elapsed(), NOTIFICATION_DELAY);
        let _ = client.cancel().await;
    }
}
