//! Keeping one client session's upstream connected: the first start at `initialize`, restarts
//! of a server that crashed (or reconnects to an HTTP server that went away) with backoff, and
//! the errors the client sees meanwhile.
//!
//! Restarts are lazy: the upstream is started again by the next request that needs it, never in
//! the background, so a server that keeps crashing costs nothing while the client is idle and
//! at most one start per backoff delay while it is busy.

use crate::sync::lock;
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use rmcp::model::{ClientConfig, ErrorData as McpError};
use rmcp::{Peer, RoleClient};
use serde_json::json;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::backoff::{RestartBackoff, failures_in_a_row};
use super::setup::{SessionSetup, SetupChange};
use super::upstream::{
    self, Connection, Ending, StartError, UpstreamHandler, UpstreamSpec, Vitals,
};
use crate::config::ProxyConfig;

/// A request that finds a restart due within this long waits for it instead of failing: the
/// first few restarts of a crash loop stay invisible to a client that retries at once.
const RESTART_WAIT_LIMIT: Duration = Duration::from_secs(1);

/// Why a request could not be relayed to the upstream server.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum UpstreamFailure {
    /// A request came before `initialize`.
    NotInitialized,
    /// The session is over.
    Closed,
    /// The server could not be started (at `initialize`, or when it was restarted).
    StartFailed {
        /// The program's file name or the redacted URL.
        upstream: String,
        /// Why, without the command's arguments or environment.
        reason: String,
        /// When the next attempt is allowed, after a failed restart.
        retry_in: Option<Duration>,
    },
    /// The connection ended while this request was waiting for its answer.
    Lost {
        /// The program's file name or the redacted URL.
        upstream: String,
        /// How it ended.
        ending: Ending,
        /// When the next start is allowed.
        retry_in: Duration,
    },
    /// The server is down and the next start is not due yet.
    BackingOff {
        /// The program's file name or the redacted URL.
        upstream: String,
        /// How the last connection or start attempt ended, as a clause.
        last: String,
        /// Failures in a row so far.
        failures: u32,
        /// When the next start is allowed.
        retry_in: Duration,
    },
    /// No answer within `[proxy] upstream_timeout_ms`; the request was cancelled upstream.
    TimedOut {
        /// The program's file name or the redacted URL.
        upstream: String,
        /// The request's method.
        method: String,
        /// The timeout.
        after: Duration,
    },
    /// The client cancelled the request while it waited for a restart.
    Cancelled,
}

fn seconds(duration: Duration) -> String {
    format!("{:.1} s", duration.as_secs_f64())
}

/// Whether a label names a URL: a command's label is a file name, which has no `/`.
fn is_url(upstream: &str) -> bool {
    upstream.contains("://")
}

impl std::fmt::Display for UpstreamFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            UpstreamFailure::NotInitialized => f.write_str("the session is not initialized"),
            UpstreamFailure::Closed => f.write_str("the session is closed"),
            UpstreamFailure::StartFailed {
                upstream,
                reason,
                retry_in,
            } => {
                if is_url(upstream) {
                    write!(
                        f,
                        "could not connect to the upstream MCP server at {upstream}: {reason}"
                    )?;
                } else {
                    write!(
                        f,
                        "could not start the upstream MCP server `{upstream}`: {reason}"
                    )?;
                }
                match retry_in {
                    Some(retry_in) => write!(
                        f,
                        "; the next attempt is in {}, on the first request after that",
                        seconds(*retry_in)
                    ),
                    None if is_url(upstream) => {
                        f.write_str("; check that the server is running at that address")
                    }
                    None => f.write_str("; check its command line, and its messages on stderr"),
                }
            }
            UpstreamFailure::Lost {
                upstream,
                ending,
                retry_in,
            } => {
                if is_url(upstream) {
                    write!(
                        f,
                        "the connection to the upstream MCP server at {upstream} was lost while handling this request; the next request reconnects"
                    )?;
                } else {
                    write!(
                        f,
                        "the upstream MCP server `{upstream}` {ending} while handling this request; the next request starts it again"
                    )?;
                }
                write!(f, " (not before {})", seconds(*retry_in))
            }
            UpstreamFailure::BackingOff {
                upstream,
                last,
                failures,
                retry_in,
            } => write!(
                f,
                "the upstream MCP server {} is down ({last}; {failures} failures in a row); the next attempt is in {}, on the first request after that",
                if is_url(upstream) {
                    format!("at {upstream}")
                } else {
                    format!("`{upstream}`")
                },
                seconds(*retry_in)
            ),
            UpstreamFailure::TimedOut {
                upstream,
                method,
                after,
            } => write!(
                f,
                "the upstream MCP server {} did not answer {method} within {} ms (`[proxy] upstream_timeout_ms`); the request was cancelled upstream",
                if is_url(upstream) {
                    format!("at {upstream}")
                } else {
                    format!("`{upstream}`")
                },
                after.as_millis()
            ),
            UpstreamFailure::Cancelled => f.write_str("request cancelled"),
        }
    }
}

impl From<UpstreamFailure> for McpError {
    fn from(failure: UpstreamFailure) -> Self {
        let message = failure.to_string();
        let (reason, retry_in) = match &failure {
            UpstreamFailure::NotInitialized => return McpError::invalid_request(message, None),
            UpstreamFailure::Closed => ("closed", None),
            UpstreamFailure::StartFailed { retry_in, .. } => ("start_failed", *retry_in),
            UpstreamFailure::Lost { retry_in, .. } => ("lost", Some(*retry_in)),
            UpstreamFailure::BackingOff { retry_in, .. } => ("backing_off", Some(*retry_in)),
            UpstreamFailure::TimedOut { .. } => ("timeout", None),
            UpstreamFailure::Cancelled => ("cancelled", None),
        };
        // Programs can tell the cases apart without parsing the message.
        let mut data = json!({ "upstream": reason });
        if let Some(retry_in) = retry_in {
            data["retry_in_ms"] = json!(u64::try_from(retry_in.as_millis()).unwrap_or(u64::MAX));
        }
        McpError::internal_error(message, Some(data))
    }
}

/// What the upstream is introduced with: the downstream client's `initialize` parameters, and
/// the handler that relays the upstream's requests to that client.
#[derive(Debug, Clone)]
struct Introduction {
    client: ClientConfig,
    handler: UpstreamHandler,
}

#[derive(Debug)]
enum State {
    Unstarted,
    Up {
        connection: Connection,
        generation: u64,
        /// Failures in a row before this connection came up.
        failures_before: u32,
    },
    Down {
        /// How the last connection or start attempt ended, as a clause.
        last: String,
        failures: u32,
        next_attempt: Instant,
        generation: u64,
    },
    Closed,
}

/// A connection handed to one request: its peer, and what tells whether it is still alive.
#[derive(Debug, Clone)]
pub(crate) struct Live {
    /// How to reach the upstream, and whether it is still there.
    pub(crate) vitals: Vitals,
    generation: u64,
}

/// The upstream of one client session.
#[derive(Debug)]
pub(crate) struct Supervisor {
    spec: UpstreamSpec,
    label: String,
    introduction: OnceLock<Introduction>,
    state: tokio::sync::Mutex<State>,
    /// The newest connection's peer, for what needs no live connection (its server info).
    latest: Mutex<Option<Peer<RoleClient>>>,
    /// The logging level and subscriptions the client set, given again to a restarted server.
    setup: SessionSetup,
}

impl Supervisor {
    pub(crate) fn new(spec: UpstreamSpec) -> Self {
        Supervisor {
            label: spec.label(),
            spec,
            introduction: OnceLock::new(),
            state: tokio::sync::Mutex::new(State::Unstarted),
            latest: Mutex::new(None),
            setup: SessionSetup::default(),
        }
    }

    /// Records a setup request (a logging level, a subscription) the upstream accepted, so that
    /// a restarted upstream gets it too.
    pub(crate) fn setup_accepted(&self, change: SetupChange) {
        self.setup.accepted(change);
    }

    /// The peer of the newest connection, alive or not.
    pub(crate) fn latest_peer(&self) -> Option<Peer<RoleClient>> {
        lock(&self.latest).clone()
    }

    /// Starts the upstream for a client's `initialize`. Once: a second `initialize` finds it
    /// started. A server that cannot start is not retried here: the client is told at once.
    pub(crate) async fn start(
        &self,
        client: ClientConfig,
        handler: UpstreamHandler,
        settings: &ProxyConfig,
    ) -> Result<(), UpstreamFailure> {
        let introduction = self
            .introduction
            .get_or_init(|| Introduction { client, handler })
            .clone();
        let mut state = self.state.lock().await;
        if !matches!(*state, State::Unstarted) {
            return Ok(());
        }
        match self.connect(introduction, settings).await {
            Ok(connection) => {
                *state = State::Up {
                    connection,
                    generation: 1,
                    failures_before: 0,
                };
                Ok(())
            }
            Err(error) => {
                let backoff = backoff(settings);
                *state = State::Down {
                    last: error.to_string(),
                    failures: 1,
                    next_attempt: Instant::now() + backoff.delay(1),
                    generation: 1,
                };
                Err(self.start_failed(&error, None))
            }
        }
    }

    /// A live connection for one request: the current one, or a new one when the current one
    /// ended and its backoff delay is over (or ends within [`RESTART_WAIT_LIMIT`]).
    pub(crate) async fn acquire(
        &self,
        settings: &ProxyConfig,
        cancelled: &CancellationToken,
    ) -> Result<Live, UpstreamFailure> {
        let mut state = self.state.lock().await;
        loop {
            match &*state {
                State::Unstarted => return Err(UpstreamFailure::NotInitialized),
                State::Closed => return Err(UpstreamFailure::Closed),
                State::Up {
                    connection,
                    generation,
                    ..
                } => {
                    let vitals = connection.vitals();
                    match vitals.ending().await {
                        None => {
                            return Ok(Live {
                                vitals,
                                generation: *generation,
                            });
                        }
                        Some((ending, at)) => {
                            let up = std::mem::replace(&mut *state, State::Closed);
                            *state = self.went_down(up, ending, at, settings);
                        }
                    }
                }
                State::Down {
                    last,
                    failures,
                    next_attempt,
                    generation,
                } => {
                    let wait = next_attempt.saturating_duration_since(Instant::now());
                    if wait > RESTART_WAIT_LIMIT {
                        return Err(UpstreamFailure::BackingOff {
                            upstream: self.label.clone(),
                            last: last.clone(),
                            failures: *failures,
                            retry_in: wait,
                        });
                    }
                    let (failures, generation) = (*failures, *generation + 1);
                    tokio::select! {
                        () = tokio::time::sleep(wait) => {}
                        () = cancelled.cancelled() => return Err(UpstreamFailure::Cancelled),
                    }
                    tracing::warn!(
                        upstream = %self.label,
                        %last,
                        failures,
                        "restarting the upstream MCP server"
                    );
                    let introduction = self
                        .introduction
                        .get()
                        .cloned()
                        .ok_or(UpstreamFailure::NotInitialized)?;
                    // A cancelled request drops a half-done start: its process is killed and
                    // the state stays down, so the next request starts afresh.
                    let started = tokio::select! {
                        started = self.connect(introduction.clone(), settings) => started,
                        () = cancelled.cancelled() => return Err(UpstreamFailure::Cancelled),
                    };
                    match started {
                        Ok(connection) => {
                            tracing::info!(upstream = %self.label, "the upstream MCP server is up again");
                            let vitals = connection.vitals();
                            self.setup
                                .replay(&vitals.peer, settings.upstream_timeout, &self.label)
                                .await;
                            *state = State::Up {
                                connection,
                                generation,
                                failures_before: failures,
                            };
                            tell_tools_may_have_changed(&vitals, &introduction).await;
                            return Ok(Live { vitals, generation });
                        }
                        Err(error) => {
                            let failures = failures_in_a_row(failures, None);
                            let delay = backoff(settings).delay(failures);
                            tracing::warn!(
                                upstream = %self.label,
                                %error,
                                failures,
                                retry_in_ms = delay.as_millis() as u64,
                                "the upstream MCP server did not start again"
                            );
                            *state = State::Down {
                                last: error.to_string(),
                                failures,
                                next_attempt: Instant::now() + delay,
                                generation,
                            };
                            return Err(self.start_failed(&error, Some(delay)));
                        }
                    }
                }
            }
        }
    }

    /// Records that `live` failed at the transport while a request waited on it, and says so
    /// in the terms the client needs: what happened and when the next start is.
    pub(crate) async fn lost(&self, live: &Live, settings: &ProxyConfig) -> UpstreamFailure {
        let (ending, at) = live.vitals.ending_after_failure().await;
        let mut state = self.state.lock().await;
        if matches!(&*state, State::Up { generation, .. } if *generation == live.generation) {
            let up = std::mem::replace(&mut *state, State::Closed);
            *state = self.went_down(up, ending.clone(), at, settings);
        }
        let retry_in = match &*state {
            State::Down { next_attempt, .. } => {
                next_attempt.saturating_duration_since(Instant::now())
            }
            _ => Duration::ZERO,
        };
        UpstreamFailure::Lost {
            upstream: self.label.clone(),
            ending,
            retry_in,
        }
    }

    /// Ends the session's upstream for good: closes the child's stdin, gives it `grace` to
    /// exit, then kills it.
    pub(crate) async fn close(&self, grace: Duration) {
        let previous = std::mem::replace(&mut *self.state.lock().await, State::Closed);
        if let State::Up { connection, .. } = previous {
            connection.close(grace).await;
        }
    }

    async fn connect(
        &self,
        introduction: Introduction,
        settings: &ProxyConfig,
    ) -> Result<Connection, StartError> {
        // Boxed: the handshake's future is large, and it runs deep inside a request's handler.
        let connection = Box::pin(upstream::connect(
            &self.spec,
            introduction.client,
            introduction.handler,
            settings.upstream_timeout,
        ))
        .await?;
        *lock(&self.latest) = Some(connection.vitals().peer);
        Ok(connection)
    }

    /// The state after the connection in `up` ended at `at`: down until the backoff delay is
    /// over. Dropping the connection stops what is left of it.
    fn went_down(&self, up: State, ending: Ending, at: Instant, settings: &ProxyConfig) -> State {
        let State::Up {
            connection,
            generation,
            failures_before,
        } = up
        else {
            return up;
        };
        let uptime = at.saturating_duration_since(connection.started());
        let failures = failures_in_a_row(failures_before, Some(uptime));
        let delay = backoff(settings).delay(failures);
        tracing::warn!(
            upstream = %self.label,
            %ending,
            uptime_ms = uptime.as_millis() as u64,
            failures,
            retry_in_ms = delay.as_millis() as u64,
            "the upstream MCP server is down; the next request after the backoff starts it again"
        );
        State::Down {
            last: format!("it {ending}"),
            failures,
            next_attempt: at + delay,
            generation,
        }
    }

    fn start_failed(&self, error: &StartError, retry_in: Option<Duration>) -> UpstreamFailure {
        UpstreamFailure::StartFailed {
            upstream: self.label.clone(),
            reason: error.to_string(),
            retry_in,
        }
    }
}

fn backoff(settings: &ProxyConfig) -> RestartBackoff {
    RestartBackoff::new(
        settings.restart_backoff_initial,
        settings.restart_backoff_max,
    )
}

/// After a restart the server's tools may differ from those the client listed: a client that
/// was told the list can change is told it may have.
async fn tell_tools_may_have_changed(vitals: &Vitals, introduction: &Introduction) {
    let announced = vitals
        .peer
        .peer_info()
        .and_then(|info| info.capabilities.tools.as_ref()?.list_changed)
        .unwrap_or(false);
    if announced && let Err(error) = introduction.handler.notify_tools_changed().await {
        tracing::debug!(%error, "could not tell the client its tools may have changed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(failure: UpstreamFailure) -> String {
        McpError::from(failure).message.into_owned()
    }

    #[test]
    fn lost_names_the_exit_and_when_the_next_start_is() {
        let text = message(UpstreamFailure::Lost {
            upstream: "server.py".into(),
            ending: Ending::Closed,
            retry_in: Duration::from_millis(1500),
        });
        assert!(text.contains("`server.py` closed the connection"), "{text}");
        assert!(text.contains("not before 1.5 s"), "{text}");
    }

    #[test]
    fn backing_off_says_when_the_next_attempt_is() {
        let error = McpError::from(UpstreamFailure::BackingOff {
            upstream: "npx".into(),
            last: "it exited (exit status: 1)".into(),
            failures: 5,
            retry_in: Duration::from_millis(3200),
        });
        assert!(error.message.contains("5 failures in a row"), "{error:?}");
        assert!(
            error.message.contains("next attempt is in 3.2 s"),
            "{error:?}"
        );
        let data = error.data.expect("data");
        assert_eq!(data["upstream"], "backing_off");
        assert_eq!(data["retry_in_ms"], 3200);
    }

    #[test]
    fn a_url_upstream_is_connected_to_not_started() {
        let text = message(UpstreamFailure::StartFailed {
            upstream: "http://127.0.0.1:9/mcp".into(),
            reason: "connection refused".into(),
            retry_in: None,
        });
        assert!(
            text.starts_with("could not connect to the upstream MCP server at http://127.0.0.1:9/mcp: connection refused"),
            "{text}"
        );
    }

    #[test]
    fn a_request_before_initialize_is_an_invalid_request() {
        let error = McpError::from(UpstreamFailure::NotInitialized);
        assert_eq!(error.code, rmcp::model::ErrorCode::INVALID_REQUEST);
    }

    #[tokio::test]
    async fn requests_before_initialize_are_refused() {
        let supervisor = Supervisor::new(UpstreamSpec::Url("http://127.0.0.1:9/mcp".into()));
        let error = supervisor
            .acquire(&ProxyConfig::default(), &CancellationToken::new())
            .await
            .expect_err("not initialized");
        assert_eq!(error, UpstreamFailure::NotInitialized);
    }

    #[tokio::test]
    async fn a_closed_session_is_never_restarted() {
        let supervisor = Supervisor::new(UpstreamSpec::Url("http://127.0.0.1:9/mcp".into()));
        supervisor.close(Duration::from_millis(10)).await;
        let error = supervisor
            .acquire(&ProxyConfig::default(), &CancellationToken::new())
            .await
            .expect_err("closed");
        assert_eq!(error, UpstreamFailure::Closed);
    }
}
