//! The `condense` command line.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod proxy_cmd;

/// Keeps large tool results out of an agent's context window.
#[derive(Debug, Parser)]
#[command(name = "condense", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Relay to an MCP server and condense its large tool results.
    Proxy(proxy_cmd::ProxyArgs),
}

#[tokio::main]
async fn main() -> ExitCode {
    let cli = Cli::parse();
    // Logs go to stderr whatever the mode: in stdio mode stdout is the protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("CONDENSE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,rmcp=warn")),
        )
        .init();
    let outcome = match cli.command {
        Command::Proxy(args) => proxy_cmd::run(args).await,
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("condense: {error:#}");
            ExitCode::FAILURE
        }
    }
}
