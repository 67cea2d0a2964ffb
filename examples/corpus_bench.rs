//! Measures the extractive compressor on the tool-output corpus, beside head truncation.
//!
//! For every case and budget it prints the facts kept (a fact is kept when, with whitespace
//! runs collapsed and case folded, it is a substring of the output), tokens in and out
//! (`cl100k_base`) and the time `extract` took; then the overall share of facts kept. Cases
//! without facts (the holdout split) print tokens and time only.
//!
//! ```text
//! cargo run --release --example corpus_bench -- [--corpus DIR] [--split dev|holdout]
//!     [--budgets 1000,2000,4000] [--case SUBSTRING] [--show]
//! ```
//!
//! The corpus defaults to `../shared/corpus` beside the crate.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use condense::TokenCounter;
use condense::methods::extract::{ExtractHints, extract_with_stats};

struct Args {
    corpus: PathBuf,
    split: String,
    budgets: Vec<usize>,
    case: Option<String>,
    show: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        corpus: Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
        split: "dev".to_owned(),
        budgets: vec![1000, 2000, 4000],
        case: None,
        show: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--corpus" => args.corpus = PathBuf::from(value()?),
            "--split" => args.split = value()?,
            "--budgets" => {
                args.budgets = value()?
                    .split(',')
                    .map(|b| b.trim().parse().map_err(|e| format!("bad budget {b}: {e}")))
                    .collect::<Result<_, _>>()?
            }
            "--case" => args.case = Some(value()?),
            "--show" => args.show = true,
            other => return Err(format!("unknown flag {other}")),
        }
    }
    Ok(args)
}

struct Case {
    name: String,
    input: String,
    query: Option<String>,
    tool: Option<String>,
    facts: Vec<String>,
}

fn load_cases(dir: &Path, filter: Option<&str>) -> Result<Vec<Case>, String> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    entries.sort();
    let mut cases = Vec::new();
    for path in entries {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if filter.is_some_and(|f| !name.contains(f)) {
            continue;
        }
        let input_path = ["input.txt", "input.json"]
            .iter()
            .map(|f| path.join(f))
            .find(|p| p.exists());
        let Some(input_path) = input_path else {
            continue;
        };
        let input = std::fs::read_to_string(&input_path)
            .map_err(|e| format!("{}: {e}", input_path.display()))?;
        let case: serde_json::Value = std::fs::read_to_string(path.join("case.json"))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        let text = |key: &str| case.get(key).and_then(|v| v.as_str()).map(str::to_owned);
        cases.push(Case {
            name,
            input,
            query: text("query"),
            tool: text("tool"),
            facts: case
                .get("facts")
                .and_then(|f| f.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|f| f.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        });
    }
    Ok(cases)
}

fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn kept(facts: &[String], output: &str) -> usize {
    let output = normalize(output);
    facts
        .iter()
        .filter(|f| output.contains(&normalize(f)))
        .count()
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("corpus_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let dir = args.corpus.join(&args.split);
    let cases = match load_cases(&dir, args.case.as_deref()) {
        Ok(cases) => cases,
        Err(e) => {
            eprintln!("corpus_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let counter = TokenCounter::default();
    // Build the vocabulary before timing anything.
    let _ = counter.count("warm up");
    let tokens_in: Vec<usize> = cases.iter().map(|c| counter.count(&c.input)).collect();
    for &budget in &args.budgets {
        println!("\n### Budget {budget} tokens ({} split)\n", args.split);
        println!("| case | kind | tokens in | tokens out | facts (extract) | facts (head) | ms |");
        println!("|---|---|---:|---:|---:|---:|---:|");
        let (mut facts, mut kept_extract, mut kept_head, mut total_ms) = (0, 0, 0, 0.0);
        for (case, &tokens) in cases.iter().zip(&tokens_in) {
            let mut hints = ExtractHints::new();
            if let Some(q) = case.query.as_deref() {
                hints = hints.with_query(q);
            }
            if let Some(t) = case.tool.as_deref() {
                hints = hints.with_tool(t);
            }
            let start = Instant::now();
            let out = extract_with_stats(&case.input, &hints, budget, &counter);
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            total_ms += ms;
            let head = counter.prefix_within(&case.input, budget);
            let fact_cell = |k: usize| {
                if case.facts.is_empty() {
                    "–".to_owned()
                } else {
                    format!("{k}/{}", case.facts.len())
                }
            };
            let (ke, kh) = (kept(&case.facts, &out.text), kept(&case.facts, head));
            facts += case.facts.len();
            kept_extract += ke;
            kept_head += kh;
            println!(
                "| {} | {} | {} | {} | {} | {} | {:.1} |",
                case.name,
                out.stats.kind,
                tokens,
                out.stats.tokens,
                fact_cell(ke),
                fact_cell(kh),
                ms
            );
            if args.show {
                println!("\n```text\n{}\n```\n", out.text);
                let output = normalize(&out.text);
                for fact in case
                    .facts
                    .iter()
                    .filter(|f| !output.contains(&normalize(f)))
                {
                    println!("MISSING: {fact}");
                }
            }
        }
        let share = |k: usize| {
            if facts == 0 {
                "–".to_owned()
            } else {
                format!("{:.1}%", 100.0 * k as f64 / facts as f64)
            }
        };
        println!(
            "\n**Overall at {budget}:** facts kept {} ({kept_extract}/{facts}) vs head truncation {}; total time {:.1} ms over {} cases.",
            share(kept_extract),
            share(kept_head),
            total_ms,
            cases.len()
        );
    }
    ExitCode::SUCCESS
}
