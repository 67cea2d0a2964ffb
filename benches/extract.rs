//! Speed of the extractive compressor on real tool outputs of about 100,000 tokens.
//!
//! Inputs are built from the dev corpus (`../shared/corpus/dev` beside the crate, or
//! `CONDENSE_CORPUS`): a log, a JSON document and command output, each repeated until it holds
//! about 100,000 `cl100k_base` tokens. The bench is skipped when the corpus is absent.
//!
//! ```text
//! cargo bench --bench extract
//! ```

use std::hint::black_box;
use std::path::PathBuf;

use condense::TokenCounter;
use condense::methods::extract::{Hints, extract};
use criterion::{Criterion, criterion_group, criterion_main};

const TARGET_TOKENS: usize = 100_000;

fn corpus_dir() -> PathBuf {
    std::env::var_os("CONDENSE_CORPUS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/dev"))
}

/// The input of `case`, repeated until it has `TARGET_TOKENS` tokens (text is then cut back to
/// about that many at a line end; a JSON document stays whole, so it may have more).
fn grown(case: &str, file: &str, counter: &TokenCounter) -> Option<(String, usize)> {
    let text = std::fs::read_to_string(corpus_dir().join(case).join(file)).ok()?;
    let per_copy = counter.count(&text).max(1);
    let copies = TARGET_TOKENS.div_ceil(per_copy);
    let grown = if file.ends_with(".json") {
        // A JSON document repeated is no longer JSON; repeat it as elements of an array.
        if copies > 1 {
            format!("[{}]", vec![text.as_str(); copies].join(","))
        } else {
            text
        }
    } else {
        // Cut back to the target at a line end, so every case is about the same size.
        let repeated = text.repeat(copies);
        let head = counter.prefix_within(&repeated, TARGET_TOKENS);
        head[..head.rfind('\n').map_or(head.len(), |i| i + 1)].to_owned()
    };
    let tokens = counter.count(&grown);
    Some((grown, tokens))
}

fn bench_extract(c: &mut Criterion) {
    let counter = TokenCounter::default();
    let cases = [
        (
            "log",
            "09-zookeeper-errors",
            "input.txt",
            "Which ERROR events happened, and when was the last one?",
        ),
        (
            "json",
            "03-gh-workflow-runs-failure",
            "input.json",
            "Which run did not succeed? Give its URL and head SHA.",
        ),
        (
            "cli",
            "13-requests-git-log-stat",
            "input.txt",
            "Which commit reverted caching a default SSLContext?",
        ),
    ];
    let mut group = c.benchmark_group("extract_100k_tokens");
    group.sample_size(20);
    for (name, case, file, query) in cases {
        let Some((input, tokens)) = grown(case, file, &counter) else {
            eprintln!(
                "corpus case {case} not found under {}; skipped",
                corpus_dir().display()
            );
            continue;
        };
        let hints = Hints::new().with_query(query);
        group.bench_function(format!("{name}_{tokens}_tokens_to_2000"), |b| {
            b.iter(|| extract(black_box(&input), &hints, 2000, &counter))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_extract);
criterion_main!(benches);
