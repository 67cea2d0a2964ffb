//! `[store]`: where originals, condensed results and chunk summaries are kept beyond memory.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use crate::error::ConfigError;

/// Which backend keeps what the store holds (`[store] backend`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum StoreBackendKind {
    /// Compressed files under a directory: survives restarts, shared by the processes on one
    /// machine. The default of the `condense` binary.
    Disk,
    /// This process's memory only. The library's default.
    Memory,
    /// A Redis or Valkey server, shared by replicas.
    Redis,
}

impl StoreBackendKind {
    /// The name used in the file.
    pub fn name(self) -> &'static str {
        match self {
            StoreBackendKind::Disk => "disk",
            StoreBackendKind::Memory => "memory",
            StoreBackendKind::Redis => "redis",
        }
    }
}

/// `[store]`.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct StoreConfig {
    /// The backend; `None` when the file does not say, and the front door picks: the library
    /// keeps to memory, the `condense` binary (CLI and proxy) uses disk.
    pub backend: Option<StoreBackendKind>,
    /// The disk store's directory; default `$XDG_CACHE_HOME/condense` or `~/.cache/condense`.
    pub dir: Option<PathBuf>,
    /// The disk store's bound on the bytes of its (compressed) files. Default 1 GiB.
    pub max_bytes: u64,
    /// How long the disk and Redis stores keep a value. Default 7 days.
    pub ttl: Duration,
    /// Whether an original may be read from any MCP session, not only the one that made it
    /// (HTTP mode). Default false.
    pub share_across_sessions: bool,
    /// The Redis server, `redis://`, `rediss://` or `unix://`. May carry a password: never
    /// logged (see [`StoreConfig::redis_endpoint`]).
    pub url: Option<String>,
    /// The prefix of every Redis key, so several deployments can share one server. Default
    /// `condense:`.
    pub key_prefix: String,
}

impl Default for StoreConfig {
    fn default() -> Self {
        StoreConfig {
            backend: None,
            dir: None,
            max_bytes: 1 << 30,
            ttl: Duration::from_secs(7 * 24 * 3600),
            share_across_sessions: false,
            url: None,
            key_prefix: "condense:".into(),
        }
    }
}

impl fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoreConfig")
            .field("backend", &self.backend)
            .field("dir", &self.dir)
            .field("max_bytes", &self.max_bytes)
            .field("ttl", &self.ttl)
            .field("share_across_sessions", &self.share_across_sessions)
            .field("url", &self.redis_endpoint())
            .field("key_prefix", &self.key_prefix)
            .finish()
    }
}

impl StoreConfig {
    /// The Redis server as it may be logged: scheme, host and port, never a user or password.
    pub fn redis_endpoint(&self) -> Option<String> {
        let url = self.url.as_deref()?;
        let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let host = authority
            .rsplit_once('@')
            .map_or(authority, |(_, host)| host);
        Some(format!("{scheme}://{host}"))
    }
}

/// `[store]` as written.
#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub(super) struct FileStore {
    backend: Option<StoreBackendKind>,
    dir: Option<PathBuf>,
    max_bytes: Option<u64>,
    ttl_s: Option<u64>,
    share_across_sessions: Option<bool>,
    url: Option<String>,
    key_prefix: Option<String>,
}

impl FileStore {
    /// `overridden` maps the JSON pointers that environment variables set to the variables,
    /// so an error names the variable rather than the file.
    pub(super) fn resolve(
        self,
        origin: &str,
        overridden: &BTreeMap<String, String>,
    ) -> Result<StoreConfig, ConfigError> {
        let d = StoreConfig::default();
        let invalid = |key: &str, message: String| match overridden.get(&format!("/store/{key}")) {
            Some(var) => ConfigError::Env {
                var: var.clone(),
                message,
            },
            None => ConfigError::Invalid {
                origin: origin.to_owned(),
                key: format!("store.{key}"),
                message,
            },
        };
        if let Some(url) = &self.url {
            let scheme = url.split_once("://").map(|(scheme, _)| scheme);
            if !matches!(scheme, Some("redis" | "rediss" | "unix" | "redis+unix")) {
                // The URL is not echoed: it may carry a password.
                return Err(invalid(
                    "url",
                    "must start with redis://, rediss:// or unix://".into(),
                ));
            }
        }
        if self.backend == Some(StoreBackendKind::Redis) && self.url.is_none() {
            return Err(invalid(
                "url",
                "backend = \"redis\" needs the server's url (redis://host:port)".into(),
            ));
        }
        if let Some(dir) = &self.dir
            && dir.as_os_str().is_empty()
        {
            return Err(invalid("dir", "is empty".into()));
        }
        Ok(StoreConfig {
            backend: self.backend,
            dir: self.dir,
            max_bytes: self.max_bytes.unwrap_or(d.max_bytes),
            ttl: self.ttl_s.map_or(d.ttl, Duration::from_secs),
            share_across_sessions: self
                .share_across_sessions
                .unwrap_or(d.share_across_sessions),
            url: self.url,
            key_prefix: self.key_prefix.unwrap_or(d.key_prefix),
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::Config;

    use super::*;

    #[test]
    fn store_section_parses_with_defaults_and_env_overrides() {
        let config = Config::from_toml_str("", "t").unwrap();
        assert_eq!(config.store, StoreConfig::default());
        let config = Config::from_toml_str_with_env(
            "[store]\nbackend = \"disk\"\ndir = \"/tmp/x\"\nttl_s = 60\n",
            "t",
            [("CONDENSE_STORE_MAX_BYTES".to_owned(), "1000".to_owned())],
        )
        .unwrap();
        assert_eq!(config.store.backend, Some(StoreBackendKind::Disk));
        assert_eq!(config.store.max_bytes, 1000);
        assert_eq!(config.store.ttl, Duration::from_secs(60));
    }

    #[test]
    fn redis_needs_a_url_and_never_shows_its_password() {
        let err = Config::from_toml_str("[store]\nbackend = \"redis\"\n", "t").unwrap_err();
        assert!(err.to_string().contains("store.url"), "{err}");
        let err = Config::from_toml_str("[store]\nurl = \"http://u:hunter2@h\"\n", "t")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("store.url") && !err.contains("hunter2"),
            "{err}"
        );
        let config = Config::from_toml_str(
            "[store]\nbackend = \"redis\"\nurl = \"redis://u:hunter2@cache:6379/0\"\n",
            "t",
        )
        .unwrap();
        assert_eq!(
            config.store.redis_endpoint().as_deref(),
            Some("redis://cache:6379")
        );
        assert!(!format!("{config:?}").contains("hunter2"));
        let err = Config::from_toml_str("[store]\nbackend = \"tape\"\n", "t").unwrap_err();
        assert!(err.to_string().contains("store"), "{err}");
    }
}
