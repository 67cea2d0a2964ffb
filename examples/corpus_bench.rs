//! Measures the extractive compressor on the tool-output corpus, beside head truncation.
//!
//! For every case and budget it prints the facts kept (a fact is kept when, with whitespace
//! runs collapsed and case folded, it is a substring of the output), tokens in and out
//! (`cl100k_base`) and the time `extract` took; then the overall share of facts kept per split
//! and budget, and at the end one summary line per split and budget. Cases without facts (the
//! holdout split) print tokens and time only.
//!
//! ```text
//! cargo run --release --example corpus_bench -- [--corpus DIR] [--split dev|dev2|holdout|own]
//!     [--budgets 1000,2000,4000] [--case SUBSTRING] [--show]
//! ```
//!
//! The shared corpus defaults to `../shared/corpus` beside the crate; the split `own` is the
//! crate's own `corpus/`. Without `--split`, the splits `dev`, `dev2` and `own` run in turn
//! (those that are present).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use condense::TokenCounter;
use condense::methods::extract::{Hints, extract_with_stats};

struct Args {
    corpus: PathBuf,
    splits: Vec<String>,
    /// No split was named: absent default splits are skipped rather than an error.
    default_splits: bool,
    budgets: Vec<usize>,
    case: Option<String>,
    show: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        corpus: Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus"),
        splits: Vec::new(),
        default_splits: false,
        budgets: vec![1000, 2000, 4000],
        case: None,
        show: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--corpus" => args.corpus = PathBuf::from(value()?),
            "--split" => args.splits.push(value()?),
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
    if args.splits.is_empty() {
        args.splits = DEFAULT_SPLITS.map(str::to_owned).to_vec();
        args.default_splits = true;
    }
    Ok(args)
}

/// The splits run when none is named.
const DEFAULT_SPLITS: [&str; 3] = ["dev", "dev2", OWN_SPLIT];

/// The split name of the crate's own corpus, kept in `corpus/` at the crate root.
const OWN_SPLIT: &str = "own";

/// Where the cases of `split` are.
fn split_dir(args: &Args, split: &str) -> PathBuf {
    if split == OWN_SPLIT {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
    } else {
        args.corpus.join(split)
    }
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
        // An output in a legacy encoding (an HTML page in Latin-1) is read as `condense
        // compress` reads it: invalid bytes become U+FFFD.
        let input = std::fs::read(&input_path)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
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

/// Facts kept by extract and by head truncation, out of all facts, for one split and budget.
struct Tally {
    split: String,
    budget: usize,
    facts: usize,
    kept_extract: usize,
    kept_head: usize,
    cases: usize,
    ms: f64,
}

fn share(kept: usize, facts: usize) -> String {
    if facts == 0 {
        "–".to_owned()
    } else {
        format!("{:.1}%", 100.0 * kept as f64 / facts as f64)
    }
}

fn run_split(split: &str, cases: &[Case], args: &Args, counter: &TokenCounter) -> Vec<Tally> {
    let tokens_in: Vec<usize> = cases.iter().map(|c| counter.count(&c.input)).collect();
    let mut tallies = Vec::new();
    for &budget in &args.budgets {
        println!("\n### Budget {budget} tokens ({split} split)\n");
        println!("| case | kind | tokens in | tokens out | facts (extract) | facts (head) | ms |");
        println!("|---|---|---:|---:|---:|---:|---:|");
        let mut tally = Tally {
            split: split.to_owned(),
            budget,
            facts: 0,
            kept_extract: 0,
            kept_head: 0,
            cases: cases.len(),
            ms: 0.0,
        };
        for (case, &tokens) in cases.iter().zip(&tokens_in) {
            let mut hints = Hints::new();
            if let Some(q) = case.query.as_deref() {
                hints = hints.with_query(q);
            }
            if let Some(t) = case.tool.as_deref() {
                hints = hints.with_tool(t);
            }
            let start = Instant::now();
            let out = extract_with_stats(&case.input, &hints, budget, counter);
            let ms = start.elapsed().as_secs_f64() * 1000.0;
            tally.ms += ms;
            let head = counter.prefix_within(&case.input, budget);
            let fact_cell = |k: usize| {
                if case.facts.is_empty() {
                    "–".to_owned()
                } else {
                    format!("{k}/{}", case.facts.len())
                }
            };
            let (ke, kh) = (kept(&case.facts, &out.text), kept(&case.facts, head));
            tally.facts += case.facts.len();
            tally.kept_extract += ke;
            tally.kept_head += kh;
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
        println!(
            "\n**Overall at {budget}:** facts kept {} ({}/{}) vs head truncation {}; total time {:.1} ms over {} cases.",
            share(tally.kept_extract, tally.facts),
            tally.kept_extract,
            tally.facts,
            share(tally.kept_head, tally.facts),
            tally.ms,
            tally.cases
        );
        tallies.push(tally);
    }
    tallies
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(e) => {
            eprintln!("corpus_bench: {e}");
            return ExitCode::FAILURE;
        }
    };
    let counter = TokenCounter::default();
    // Build the vocabulary before timing anything.
    let _ = counter.count("warm up");
    let mut tallies = Vec::new();
    for split in &args.splits {
        let dir = split_dir(&args, split);
        // A split asked for by name must exist; a default one may be absent.
        if !dir.is_dir() && args.default_splits {
            eprintln!(
                "corpus_bench: skipping {split}: {} is absent",
                dir.display()
            );
            continue;
        }
        let cases = match load_cases(&dir, args.case.as_deref()) {
            Ok(cases) => cases,
            Err(e) => {
                eprintln!("corpus_bench: {e}");
                return ExitCode::FAILURE;
            }
        };
        if cases.is_empty() {
            continue;
        }
        tallies.extend(run_split(split, &cases, &args, &counter));
    }
    println!("\n### Summary\n");
    for t in &tallies {
        println!(
            "SUMMARY split={} budget={} facts={} extract={} ({}/{}) head={} cases={} ms={:.1}",
            t.split,
            t.budget,
            t.facts,
            share(t.kept_extract, t.facts),
            t.kept_extract,
            t.facts,
            share(t.kept_head, t.facts),
            t.cases,
            t.ms
        );
    }
    ExitCode::SUCCESS
}
