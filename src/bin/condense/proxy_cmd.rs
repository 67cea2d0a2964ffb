//! `condense proxy`: condense in front of an MCP server.

use std::ffi::OsString;
use std::net::SocketAddr;
use std::path::PathBuf;

use condense::mcp::{ProxyOptions, UpstreamSpec};

/// Run an MCP server that relays to an upstream MCP server and condenses large tool results.
///
/// Examples:
///   condense proxy -- npx -y @modelcontextprotocol/server-filesystem /data
///   condense proxy --listen 127.0.0.1:8080 --upstream-url http://127.0.0.1:3001/mcp
///   CONDENSE_PROXY_AUTH_TOKEN_ENV=MCP_TOKEN MCP_TOKEN=… condense proxy --listen 0.0.0.0:8080 -- …
#[derive(Debug, clap::Args)]
#[command(verbatim_doc_comment)]
pub(crate) struct ProxyArgs {
    /// The condense.toml to read; it is reloaded when it changes.
    #[arg(long, env = "CONDENSE_CONFIG", value_name = "FILE")]
    config: Option<PathBuf>,

    /// Serve streamable HTTP on this address (MCP on any path, e.g. /mcp; health on /health)
    /// instead of stdio.
    #[arg(long, value_name = "ADDR")]
    listen: Option<SocketAddr>,

    /// With --listen on a non-loopback address, serve without a bearer token
    /// ([proxy] auth_token_env); without this (or [proxy] allow_unauthenticated) the proxy
    /// refuses to start there.
    #[arg(long, requires = "listen")]
    allow_unauthenticated: bool,

    /// The upstream MCP server's streamable-HTTP URL, instead of a command.
    #[arg(long, value_name = "URL", conflicts_with = "command")]
    upstream_url: Option<String>,

    /// The upstream MCP server's command and its arguments, after `--` or directly (some clients,
    /// such as the MCP Inspector, drop the `--`): everything from the first word that is not one
    /// of these options on belongs to the upstream command.
    #[arg(
        trailing_var_arg = true,
        allow_hyphen_values = true,
        value_name = "COMMAND"
    )]
    command: Vec<OsString>,
}

/// Runs the proxy until the client disconnects or a signal stops it.
pub(crate) async fn run(args: ProxyArgs) -> anyhow::Result<()> {
    let upstream = match args.upstream_url {
        Some(url) => UpstreamSpec::Url(url),
        None => UpstreamSpec::command(args.command)?,
    };
    let mut options = ProxyOptions::new(upstream);
    if let Some(config) = args.config {
        options = options.with_config(config);
    }
    if let Some(listen) = args.listen {
        options = options.with_listen(listen);
    }
    options = options.with_allow_unauthenticated(args.allow_unauthenticated);
    condense::mcp::run(options).await?;
    Ok(())
}
