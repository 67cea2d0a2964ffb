//! In-process ("warm") time of one `Condenser::condense` call in extract mode: the best of N
//! calls, each with a new query so the cache never answers. Used by `scripts/bench/vs-headroom.sh`.
//!
//! ```text
//! cargo run --release --example warm_bench -- FILE [QUERY] [--budget 2000] [--runs 5]
//! ```
//!
//! Prints one line: `best_ms=<ms> tokens_before=<n> tokens_after=<n>`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use condense::{Condenser, Config, Mode, Request};

struct Args {
    file: String,
    query: String,
    budget: usize,
    runs: usize,
}

fn parse_args() -> Result<Args, String> {
    let mut positional = Vec::new();
    let mut budget = 2000;
    let mut runs = 5;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--budget" => budget = value()?.parse().map_err(|e| format!("--budget: {e}"))?,
            "--runs" => runs = value()?.parse().map_err(|e| format!("--runs: {e}"))?,
            _ => positional.push(arg),
        }
    }
    let mut positional = positional.into_iter();
    let file = positional.next().ok_or("usage: warm_bench FILE [QUERY]")?;
    let query = positional.next().unwrap_or_default();
    Ok(Args {
        file,
        query,
        budget,
        runs: runs.max(1),
    })
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("warm_bench: {e}");
            return ExitCode::from(2);
        }
    };
    let text = match std::fs::read(&args.file) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => {
            eprintln!("warm_bench: cannot read {}: {e}", args.file);
            return ExitCode::FAILURE;
        }
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let condenser = match Condenser::builder(Config::default()).without_llm().build() {
        Ok(condenser) => condenser,
        Err(e) => {
            eprintln!("warm_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    // One untimed call warms the process (vocabulary, regexes, allocator), as in a server.
    let warm_up = format!("{} (warm-up)", args.query);
    runtime.block_on(condense(&condenser, &text, &warm_up, args.budget));
    let mut best = Duration::MAX;
    let mut tokens = (0, 0);
    for run in 0..args.runs {
        let query = format!("{} (run {run})", args.query);
        let started = Instant::now();
        let outcome = runtime.block_on(condense(&condenser, &text, &query, args.budget));
        best = best.min(started.elapsed());
        assert!(!outcome.cached, "a new query must miss the cache");
        tokens = (outcome.tokens_before(), outcome.tokens_after());
    }
    println!(
        "best_ms={:.2} tokens_before={} tokens_after={}",
        best.as_secs_f64() * 1000.0,
        tokens.0,
        tokens.1
    );
    ExitCode::SUCCESS
}

async fn condense(
    condenser: &Condenser,
    text: &str,
    query: &str,
    budget: usize,
) -> condense::Condensed {
    let request = Request::new("read_file")
        .with_query(query)
        .with_budget_tokens(budget)
        .with_mode(Mode::Extract);
    condenser.condense(text, &request).await
}
