//! `condense compress`.

use std::io::{IsTerminal, Read, Write};

use anyhow::Context;
use condense::methods::mapreduce::Progress;
use condense::{Condenser, Config, Mode, Request};

use crate::cli::{CompressArgs, MethodArg};

pub(crate) async fn run(args: CompressArgs) -> anyhow::Result<()> {
    let config = Config::load(args.config.as_deref())?;
    let input = read_input(args.file.as_deref())?;
    let mut builder = Condenser::builder(config);
    if std::io::stderr().is_terminal() {
        builder = builder.progress(show_progress);
    }
    let condenser = builder.build()?;
    let mode = args.method.map(|m| match m {
        MethodArg::Auto => Mode::Auto,
        MethodArg::Llm => Mode::Llm,
        MethodArg::Extract => Mode::Extract,
        MethodArg::Truncate => Mode::Truncate,
    });
    let request = Request::new(args.tool.as_deref().unwrap_or(""))
        .query(args.query.as_deref())
        .budget(args.budget)
        .mode(mode);
    let outcome = condenser.condense(&input, &request).await;
    let mut stdout = std::io::stdout().lock();
    if args.json {
        let json = serde_json::json!({
            "text": outcome.text,
            "method": outcome.method.name(),
            "tokens_before": outcome.tokens_before,
            "tokens_after": outcome.tokens_after,
            "ref": outcome.reference,
            "cached": outcome.cached,
            "elapsed_ms": outcome.elapsed.as_secs_f64() * 1000.0,
        });
        writeln!(stdout, "{json}")?;
    } else {
        stdout.write_all(outcome.text.as_bytes())?;
        if !outcome.text.ends_with('\n') {
            writeln!(stdout)?;
        }
    }
    if let Some(reason) = &outcome.fallback {
        tracing::warn!("{reason}; answered with {}", outcome.method);
    }
    Ok(())
}

/// One status line on the terminal, rewritten as a long map-reduce run advances.
fn show_progress(progress: Progress) {
    let line = match progress {
        Progress::Chunked { chunks } => format!("condense: {chunks} chunks"),
        Progress::Mapped { done, total } => format!("condense: summarized {done}/{total} chunks"),
        Progress::Reduced { level, done, total } => {
            format!("condense: merge level {level}: {done}/{total}")
        }
        Progress::Critiqued { round } => format!("condense: critique round {round}"),
        Progress::Finished => {
            eprint!("\r\x1b[2K");
            return;
        }
        _ => return,
    };
    eprint!("\r\x1b[2K{line}");
}

/// Reads the whole input; bytes that are not UTF-8 become U+FFFD rather than an error, since
/// tool output is whatever the tool printed.
fn read_input(file: Option<&std::path::Path>) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    match file {
        None => {
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
        }
        Some(path) if path.as_os_str() == "-" => {
            std::io::stdin()
                .read_to_end(&mut bytes)
                .context("cannot read standard input")?;
        }
        Some(path) => {
            bytes =
                std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        }
    }
    Ok(match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(error) => String::from_utf8_lossy(error.as_bytes()).into_owned(),
    })
}
