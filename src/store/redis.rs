//! The `redis` backend: a Redis or Valkey server that proxy replicas share, so a ref made by one
//! is retrievable through another and a call one condensed is a cache hit for the others.
//!
//! Keys are `{key_prefix}{kind}:{key}` with the store's TTL; the store's secret lives under
//! `{key_prefix}secret` without one, created once with `SET NX` by whichever process comes
//! first, so every replica makes the same refs. A server that cannot be reached never fails a
//! call: the backend then answers "nothing here" at once, the hot tier in front keeps serving
//! from memory, one warning names the server by host and port (never the URL, which may hold a
//! password), and the connection is tried again after [`RETRY_AFTER`].

use crate::sync::lock;
use std::sync::Mutex;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::time::Instant;

use super::backend::{BoxFuture, Kind, SECRET_LEN, StoreBackend, StoreError};
use super::refs::random_secret;
use crate::config::StoreConfig;

/// How long connecting may take: past it the server counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(1);

/// How long one command may take, a large original included, before the server counts as
/// unreachable: reads are on a tool call's path, so this bounds what an unhealthy server costs.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(2);

/// How long an unreachable server is left alone before the next attempt: meanwhile every
/// operation answers at once instead of waiting for a timeout.
pub(crate) const RETRY_AFTER: Duration = Duration::from_secs(5);

/// The `redis` backend.
pub(crate) struct RedisStore {
    client: redis::Client,
    /// Scheme, host and port: what logs and errors may name.
    endpoint: String,
    prefix: String,
    ttl_s: u64,
    link: Mutex<Link>,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("endpoint", &self.endpoint)
            .field("prefix", &self.prefix)
            .field("ttl_s", &self.ttl_s)
            .finish_non_exhaustive()
    }
}

/// The connection, and whether the server is known to be unreachable.
#[derive(Default)]
struct Link {
    /// Reconnects by itself after a dropped connection; `None` until the first connect works.
    manager: Option<ConnectionManager>,
    /// While set and in the future, the server is not asked.
    down_until: Option<Instant>,
    /// When the logged outage began, if one was logged: one warning per outage, not one per
    /// call; and only a command sent after it began shows the server is back (one answered
    /// just before it may finish just after).
    outage_since: Option<Instant>,
}

impl RedisStore {
    /// A backend for the server `[store] url` names. Does not connect: the first operation
    /// does, so an unreachable server delays nothing at start.
    pub(crate) fn open(config: &StoreConfig) -> Result<Self, StoreError> {
        let endpoint = config.redis_endpoint().unwrap_or_default();
        let unavailable = |message: String| StoreError::Unavailable {
            backend: "redis",
            message,
        };
        let url = config
            .url
            .as_deref()
            .ok_or_else(|| unavailable("[store] url is not set".into()))?;
        if url.starts_with("rediss://") {
            return Err(unavailable(format!(
                "{endpoint}: TLS (rediss://) is not built into this condense; use redis:// on a \
                 private network or behind a TLS sidecar"
            )));
        }
        // The parser's message is not passed on: it may quote the URL, password included.
        let client = redis::Client::open(url)
            .map_err(|_| unavailable(format!("{endpoint}: the url is not a valid Redis URL")))?;
        Ok(RedisStore {
            client,
            endpoint,
            prefix: config.key_prefix.clone(),
            ttl_s: config.ttl.as_secs().max(1),
            link: Mutex::default(),
        })
    }

    fn link(&self) -> std::sync::MutexGuard<'_, Link> {
        // Plain state: a panic elsewhere cannot leave it half-updated.
        lock(&self.link)
    }

    fn key(&self, kind: Kind, key: &str) -> String {
        format!("{}{}:{key}", self.prefix, kind.name())
    }

    /// The connection, connecting first if need be; `None` while the server is unreachable.
    async fn connection(&self) -> Option<ConnectionManager> {
        {
            let mut link = self.link();
            if link.down_until.is_some_and(|until| Instant::now() < until) {
                return None;
            }
            if let Some(manager) = &link.manager {
                return Some(manager.clone());
            }
            // One caller connects; the others meanwhile find the server "down" for a moment
            // and answer from memory, rather than each opening a connection.
            link.down_until = Some(Instant::now() + CONNECT_TIMEOUT);
        }
        let sent = Instant::now();
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_response_timeout(Some(COMMAND_TIMEOUT))
            .set_number_of_retries(1);
        let connected = tokio::time::timeout(
            CONNECT_TIMEOUT + COMMAND_TIMEOUT,
            ConnectionManager::new_with_config(self.client.clone(), config),
        )
        .await;
        match connected {
            Ok(Ok(manager)) => {
                let mut link = self.link();
                link.manager = Some(manager.clone());
                self.up(&mut link, sent);
                Some(manager)
            }
            Ok(Err(error)) => {
                self.down(&describe(&error));
                None
            }
            Err(_) => {
                self.down("connecting timed out");
                None
            }
        }
    }

    /// Marks the server reachable again, as a command sent at `sent` found it, saying so if
    /// an outage was logged before that command was sent.
    fn up(&self, link: &mut Link, sent: Instant) {
        match link.outage_since {
            Some(since) if since < sent => {
                link.outage_since = None;
                link.down_until = None;
                tracing::info!(endpoint = %self.endpoint, "the Redis store is reachable again");
            }
            Some(_) => {}
            None => link.down_until = None,
        }
    }

    /// Marks the server unreachable for [`RETRY_AFTER`]; the first time in an outage, warns.
    fn down(&self, why: &str) {
        let mut link = self.link();
        let now = Instant::now();
        link.down_until = Some(now + RETRY_AFTER);
        if link.outage_since.is_none() {
            link.outage_since = Some(now);
            tracing::warn!(
                endpoint = %self.endpoint,
                reason = why,
                retry_after_s = RETRY_AFTER.as_secs(),
                "the Redis store is unreachable; answering from this process's memory until it is back"
            );
        }
    }

    /// Runs `command`; `Ok(None)` when the server is unreachable (already logged).
    async fn run<T: redis::FromRedisValue>(
        &self,
        command: &redis::Cmd,
    ) -> Result<Option<T>, StoreError> {
        let Some(mut connection) = self.connection().await else {
            return Ok(None);
        };
        let sent = Instant::now();
        match tokio::time::timeout(COMMAND_TIMEOUT, command.query_async(&mut connection)).await {
            Ok(Ok(value)) => {
                let mut link = self.link();
                if link.outage_since.is_some() {
                    self.up(&mut link, sent);
                }
                Ok(Some(value))
            }
            Ok(Err(error)) if is_outage(&error) => {
                self.down(&describe(&error));
                Ok(None)
            }
            Ok(Err(error)) => Err(StoreError::Unavailable {
                backend: "redis",
                message: format!("{}: {}", self.endpoint, describe(&error)),
            }),
            Err(_) => {
                self.down("a command timed out");
                Ok(None)
            }
        }
    }
}

/// Whether an error means the server cannot be reached (rather than refusing one command).
fn is_outage(error: &redis::RedisError) -> bool {
    error.is_io_error()
        || error.is_timeout()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
}

/// What went wrong, in words that name no URL and no password.
fn describe(error: &redis::RedisError) -> String {
    if error.is_connection_refusal() {
        "connection refused".into()
    } else if error.is_timeout() {
        "timed out".into()
    } else if error.is_io_error() || error.is_connection_dropped() {
        "connection lost".into()
    } else if let Some(code) = error.code() {
        format!("the server answered {code}")
    } else {
        format!("{:?}", error.kind())
    }
}

impl StoreBackend for RedisStore {
    fn name(&self) -> &'static str {
        "redis"
    }

    fn secret(&self) -> BoxFuture<'_, Result<[u8; SECRET_LEN], StoreError>> {
        Box::pin(async move {
            let key = format!("{}secret", self.prefix);
            let unreachable = || StoreError::Unavailable {
                backend: "redis",
                message: format!("{}: unreachable", self.endpoint),
            };
            // Whoever comes first creates it; every later process reads that one. No TTL: a
            // new secret would orphan every ref made before it.
            let mut create = redis::cmd("SET");
            create.arg(&key).arg(&random_secret()[..]).arg("NX");
            self.run::<Option<String>>(&create)
                .await?
                .ok_or_else(unreachable)?;
            let stored: Vec<u8> = self
                .run::<Option<Vec<u8>>>(redis::cmd("GET").arg(&key))
                .await?
                .ok_or_else(unreachable)?
                .ok_or_else(unreachable)?;
            <[u8; SECRET_LEN]>::try_from(stored.as_slice()).map_err(|_| StoreError::Corrupt {
                key,
                message: format!("the secret has {} bytes, not {SECRET_LEN}", stored.len()),
            })
        })
    }

    fn get<'a>(
        &'a self,
        kind: Kind,
        key: &'a str,
    ) -> BoxFuture<'a, Result<Option<Vec<u8>>, StoreError>> {
        Box::pin(async move {
            let value = self
                .run::<Option<Vec<u8>>>(redis::cmd("GET").arg(self.key(kind, key)))
                .await?;
            Ok(value.flatten())
        })
    }

    fn put<'a>(
        &'a self,
        kind: Kind,
        key: &'a str,
        value: Vec<u8>,
    ) -> BoxFuture<'a, Result<(), StoreError>> {
        Box::pin(async move {
            // A plain SET, not NX: writing the same value again renews its TTL.
            let mut set = redis::cmd("SET");
            set.arg(self.key(kind, key))
                .arg(value)
                .arg("EX")
                .arg(self.ttl_s);
            self.run::<()>(&set).await?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(url: &str, prefix: &str) -> RedisStore {
        let config = StoreConfig {
            url: Some(url.to_owned()),
            key_prefix: prefix.to_owned(),
            ttl: Duration::from_secs(60),
            ..StoreConfig::default()
        };
        RedisStore::open(&config).expect("a valid url")
    }

    #[tokio::test]
    async fn an_unreachable_server_answers_nothing_at_once_and_names_no_password() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let redis = store(&format!("redis://:hunter2@127.0.0.1:{port}"), "t:");
        let error = redis.secret().await.expect_err("no server");
        assert!(!error.to_string().contains("hunter2"), "{error}");
        assert!(error.to_string().contains(&port.to_string()), "{error}");
        // Within the retry pause nothing waits for a timeout.
        let started = Instant::now();
        assert!(redis.get(Kind::Original, "cx_0").await.unwrap().is_none());
        redis
            .put(Kind::Original, "cx_0", b"x".to_vec())
            .await
            .unwrap();
        assert!(started.elapsed() < Duration::from_millis(100));
    }

    #[test]
    fn a_url_that_does_not_parse_is_refused_without_echoing_it() {
        let config = StoreConfig {
            url: Some("redis://:hunter2@[::1".into()),
            ..StoreConfig::default()
        };
        let error = RedisStore::open(&config).expect_err("not a url");
        assert!(!error.to_string().contains("hunter2"), "{error}");
        let config = StoreConfig {
            url: Some("rediss://:hunter2@cache:6380".into()),
            ..StoreConfig::default()
        };
        let error = RedisStore::open(&config)
            .expect_err("no TLS built in")
            .to_string();
        assert!(
            error.contains("TLS") && error.contains("cache:6380"),
            "{error}"
        );
        assert!(!error.contains("hunter2"), "{error}");
    }

    /// Against `CONDENSE_TEST_REDIS_URL` (scripts/redis/start.sh); skipped without it.
    #[tokio::test]
    async fn stores_on_one_server_share_one_secret_and_their_values() {
        let Ok(url) = std::env::var("CONDENSE_TEST_REDIS_URL") else {
            eprintln!("skipping: run `eval \"$(scripts/redis/start.sh)\"` to test the Redis store");
            return;
        };
        let prefix = format!(
            "condense-unit:{}:{}:",
            std::process::id(),
            fastrand::u64(..)
        );
        let (one, other) = (store(&url, &prefix), store(&url, &prefix));
        let secret = one.secret().await.unwrap();
        assert_eq!(other.secret().await.unwrap(), secret);
        assert_ne!(store(&url, "elsewhere:").secret().await.unwrap(), secret);
        one.put(Kind::Original, "cx_1", b"kept".to_vec())
            .await
            .unwrap();
        assert_eq!(
            other.get(Kind::Original, "cx_1").await.unwrap().as_deref(),
            Some(&b"kept"[..])
        );
        assert!(other.get(Kind::Condensed, "cx_1").await.unwrap().is_none());
        let ttl: i64 = other
            .run(redis::cmd("TTL").arg(format!("{prefix}originals:cx_1")))
            .await
            .unwrap()
            .unwrap();
        assert!((1..=60).contains(&ttl), "{ttl}");
    }
}
