//! The proxy's error type.

use std::path::PathBuf;

/// Why the proxy could not start or stopped with a failure.
///
/// Failures while serving one request never end the proxy: they reach the client as an MCP
/// error or as a tool result with `isError`. Messages never carry the upstream's environment or
/// any credential.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ProxyError {
    /// Neither an upstream command nor an upstream URL was given.
    #[error("no upstream MCP server: give its command (after `--`, or directly) or --upstream-url")]
    NoUpstream,
    /// The upstream command could not be started.
    #[error("could not start the upstream command `{program}`")]
    Spawn {
        /// The program that was run.
        program: String,
        /// Why it failed.
        #[source]
        source: std::io::Error,
    },
    /// The MCP handshake with the upstream server failed.
    #[error("the upstream MCP server did not complete the handshake: {0}")]
    Handshake(String),
    /// The proxy's configuration file could not be read or parsed.
    #[error("invalid proxy configuration in {path}: {message}")]
    Config {
        /// The file that was read.
        path: PathBuf,
        /// What is wrong with it, naming the key when known.
        message: String,
    },
    /// The HTTP listener could not be bound.
    #[error("could not listen on {addr}")]
    Listen {
        /// The address asked for.
        addr: String,
        /// Why binding failed.
        #[source]
        source: std::io::Error,
    },
    /// `[proxy] auth_token_env` names a variable that is not set, or is empty.
    #[error(
        "[proxy] auth_token_env names the environment variable `{var}`, but it is not set or is \
         empty: set it to the token clients must send as `Authorization: Bearer <token>`"
    )]
    AuthToken {
        /// The variable's name (never its value).
        var: String,
    },
    /// HTTP was asked for on a non-loopback address with no token and no explicit opt-out.
    #[error(
        "refusing to serve MCP on {addr} without authentication: anyone who reaches it could \
         run the upstream server. Set [proxy] auth_token_env to a variable holding a token, \
         listen on a loopback address (127.0.0.1), or pass --allow-unauthenticated \
         ([proxy] allow_unauthenticated = true) when something else guards the address"
    )]
    Unprotected {
        /// The address that would have been served.
        addr: String,
    },
    /// The client's `initialize` failed, typically because the upstream server could not be
    /// started; the client was told why.
    #[error("the MCP handshake with the client failed: {0}")]
    Initialize(String),
    /// Serving the downstream client failed.
    #[error("serving the MCP client failed: {0}")]
    Serve(String),
}
