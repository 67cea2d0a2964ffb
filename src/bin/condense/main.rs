//! The `condense` command: a thin shell over the library.

mod cli;
mod compress;
mod logging;
#[cfg(feature = "mcp")]
mod proxy_cmd;
mod retrieve;

use std::process::ExitCode;

use clap::Parser;

/// How long exiting waits for the runtime's remaining tasks and blocking reads.
const RUNTIME_SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_millis(50);

/// How long exiting waits for originals still being written to the store.
const STORE_FLUSH_GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// The runtime a command runs on. `compress` and `retrieve` make one call and exit: their
/// parallel work (the header's count, a large extraction, store writes) runs on the blocking
/// pool, so a current-thread runtime serves them without starting (and, at exit, joining) a
/// worker per core, about a millisecond of a cold run. The proxy serves many clients at once.
fn runtime_for(command: &cli::Command) -> std::io::Result<tokio::runtime::Runtime> {
    let mut builder = match command {
        cli::Command::Compress(_) | cli::Command::Retrieve(_) => {
            tokio::runtime::Builder::new_current_thread()
        }
        #[cfg(feature = "mcp")]
        cli::Command::Proxy(_) => tokio::runtime::Builder::new_multi_thread(),
    };
    builder.enable_all().build()
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    if let Err(error) = logging::init(cli.log_format, &cli.log, &cli.service) {
        eprintln!("condense: {error:#}");
        return ExitCode::from(2);
    }
    let runtime = match runtime_for(&cli.command) {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("condense: cannot start the async runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let result = runtime.block_on(async {
        match cli.command {
            cli::Command::Compress(args) => compress::run(args).await,
            cli::Command::Retrieve(args) => retrieve::run(args).await,
            #[cfg(feature = "mcp")]
            cli::Command::Proxy(args) => proxy_cmd::run(args).await,
        }
    });
    // Originals are written to the store in the background: the refs this run printed or
    // answered with must be retrievable by the next one.
    runtime.block_on(async {
        if tokio::time::timeout(STORE_FLUSH_GRACE, condense::store::flush())
            .await
            .is_err()
        {
            eprintln!("condense: the store is slow; some originals may not have been written");
        }
    });
    // A stdio proxy stopped by a signal still has a thread blocked reading its stdin, which the
    // client keeps open; dropping the runtime would wait for that read forever. Everything that
    // matters (the upstream child) was stopped before `block_on` returned.
    runtime.shutdown_timeout(RUNTIME_SHUTDOWN_GRACE);
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("condense: {error:#}");
            ExitCode::FAILURE
        }
    }
}
