//! Command-line arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Keeps large tool results out of an AI agent's context window.
#[derive(Debug, Parser)]
#[command(name = "condense", version, about, propagate_version = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,

    /// Log format on stderr.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "CONDENSE_LOG_FORMAT")]
    pub(crate) log_format: LogFormat,

    /// The `service` field of JSON logs, to tell instances apart.
    #[arg(
        long,
        global = true,
        default_value = "condense",
        env = "CONDENSE_SERVICE"
    )]
    pub(crate) service: String,

    /// Log filter, in `tracing` env-filter syntax (e.g. `info`, `condense=debug`).
    #[arg(long, global = true, default_value = "warn", env = "CONDENSE_LOG")]
    pub(crate) log: String,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Condense one tool output (a file or standard input) and print the result.
    Compress(CompressArgs),
    /// Print an original that `compress` or the proxy kept, or a part of it.
    Retrieve(crate::retrieve::RetrieveArgs),
    /// Relay to an MCP server and condense its large tool results.
    #[cfg(feature = "mcp")]
    Proxy(crate::proxy_cmd::ProxyArgs),
}

#[derive(Debug, Args)]
pub(crate) struct CompressArgs {
    /// The output to condense; `-` or nothing reads standard input.
    pub(crate) file: Option<PathBuf>,

    /// What the agent is looking for in the output.
    #[arg(long, short)]
    pub(crate) query: Option<String>,

    /// The tool that produced the output (selects the config's per-tool rule).
    #[arg(long, short)]
    pub(crate) tool: Option<String>,

    /// The condensed size in tokens. Also lowers the threshold to this size, so any output
    /// larger than the budget is condensed.
    #[arg(long, short)]
    pub(crate) budget: Option<usize>,

    /// How to condense; `auto` uses the LLM when one is configured, else the extractive
    /// compressor.
    #[arg(long, short, value_enum)]
    pub(crate) method: Option<MethodArg>,

    /// The config file (default: $CONDENSE_CONFIG, else built-in defaults).
    #[arg(long, short)]
    pub(crate) config: Option<PathBuf>,

    /// Print one JSON object: text, method, tokens_before, tokens_after, ref, cached,
    /// elapsed_ms.
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum MethodArg {
    Auto,
    Llm,
    Extract,
    Truncate,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum LogFormat {
    Text,
    Json,
}
