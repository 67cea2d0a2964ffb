//! Retention of the extractive compressor on the shared corpus and the crate's own `corpus/`:
//! the share of needed facts kept at 2,000 tokens must not fall more than two points below the
//! figure recorded here, and every output must fit its budget by the exact counter. Every
//! input, the held-out ones too, must fill each budget it exceeds (1,000, 2,000 and 4,000
//! tokens) to at least 90%. The shared splits are skipped when `../shared/corpus` is absent.

use std::path::{Path, PathBuf};

use condense::TokenCounter;
use condense::methods::extract::{Hints, extract};

/// The budget retention is recorded at.
const BUDGET: usize = 2000;
/// How far below its recorded figure a split may fall, in percentage points.
const TOLERANCE: f64 = 2.0;
/// Facts kept at 2,000 tokens when the figure was last recorded, per split, in percent (own:
/// 43 cases; fifteen of them, p34–p48, were added with queries written before the compressor
/// ran on them, and lowered the figure from 88.5% over the 28 before to 86.3%; the asked
/// members of pretty-printed JSON rendered with their colon's space raised it to 88.2%, room
/// for the texts of several lines the query names and the colon's space before any value of
/// an asked member to 89.6%, a flat map of many short values shown a member a line to 90.0%,
/// a deep tree's context lines shown by their short members only to 89.6%: `npm ls`'s
/// `_id` of a package kept only as the context of its dependencies; the rules of later blind
/// checks to 91.5%, and dev2 to 96.1%, then to 96.9% with definition-list entries raised
/// whole; own to 91.9% with listings sorted largest first ranked by their sorted column, to
/// 92.4% with a comment in a Markdown code block kept with the line it explains).
const RECORDED: &[(&str, f64)] = &[("dev", 97.6), ("dev2", 96.9), ("own", 92.4)];
/// Own cases known to keep fewer than half their facts at 2,000 tokens, with the shape that
/// loses them. Every other case must keep half; a listed case that reaches half fails the test
/// too, so that it leaves this list.
const BELOW_HALF: &[(&str, &str)] = &[];
/// The split kept in the crate's own `corpus/`.
const OWN_SPLIT: &str = "own";

struct Case {
    name: String,
    input: String,
    query: Option<String>,
    tool: Option<String>,
    facts: Vec<String>,
}

fn load(split: &Path) -> Vec<Case> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(split)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    dirs.sort();
    dirs.into_iter()
        .filter_map(|dir| {
            let input = std::fs::read_to_string(dir.join("input.txt"))
                .or_else(|_| std::fs::read_to_string(dir.join("input.json")))
                .ok()?;
            let case: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("case.json")).ok()?)
                    .unwrap_or_else(|e| panic!("{}: bad case.json: {e}", dir.display()));
            let text = |key: &str| case.get(key).and_then(|v| v.as_str()).map(str::to_owned);
            Some(Case {
                name: dir.file_name()?.to_string_lossy().into_owned(),
                input,
                query: text("query"),
                tool: text("tool"),
                facts: case
                    .get("facts")?
                    .as_array()?
                    .iter()
                    .filter_map(|f| f.as_str().map(str::to_owned))
                    .collect(),
            })
        })
        .collect()
}

/// Whitespace runs collapsed and case folded, as the corpus bench compares facts.
fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[test]
fn retention_at_2000_tokens_does_not_regress() {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = crate_root.join("../shared/corpus");
    let counter = TokenCounter::default();
    for &(split, recorded) in RECORDED {
        let dir = if split == OWN_SPLIT {
            crate_root.join("corpus")
        } else if root.is_dir() {
            root.join(split)
        } else {
            eprintln!(
                "skipping {split}: the shared corpus is not at {}",
                root.display()
            );
            continue;
        };
        let cases = load(&dir);
        assert!(!cases.is_empty(), "no cases in {split}");
        let (mut facts, mut kept) = (0, 0);
        for case in &cases {
            let mut hints = Hints::new();
            if let Some(q) = case.query.as_deref() {
                hints = hints.with_query(q);
            }
            if let Some(t) = case.tool.as_deref() {
                hints = hints.with_tool(t);
            }
            let out = extract(&case.input, &hints, BUDGET, &counter);
            let tokens = counter.count(&out);
            assert!(
                tokens <= BUDGET,
                "{split}/{}: {tokens} tokens over {BUDGET}",
                case.name
            );
            // An input larger than the budget fills it, rather than stopping early.
            if counter.count(&case.input) > BUDGET {
                assert!(
                    tokens * 10 >= BUDGET * 9,
                    "{split}/{}: {tokens} tokens, under 90% of {BUDGET}",
                    case.name
                );
            }
            let output = normalize(&out);
            let case_kept = case
                .facts
                .iter()
                .filter(|f| output.contains(&normalize(f)))
                .count();
            // No case may fall below half its facts, whatever the split's total does.
            let known_below = BELOW_HALF
                .iter()
                .find(|(name, _)| split == OWN_SPLIT && *name == case.name)
                .map(|(_, why)| *why);
            assert_eq!(
                case_kept * 2 >= case.facts.len(),
                known_below.is_none(),
                "{split}/{}: {case_kept} of {} facts kept at {BUDGET} tokens (listed below half: \
                 {known_below:?})",
                case.name,
                case.facts.len()
            );
            facts += case.facts.len();
            kept += case_kept;
        }
        let share = 100.0 * kept as f64 / facts as f64;
        assert!(
            share >= recorded - TOLERANCE,
            "{split}: {share:.1}% of facts kept at {BUDGET} tokens, recorded {recorded:.1}%"
        );
    }
}

/// Budgets every input is filled at.
const FILL_BUDGETS: &[usize] = &[1000, 2000, 4000];

/// The inputs of a split, by case name (queries and facts aside).
fn inputs(split: &Path) -> Vec<(String, String)> {
    let mut inputs: Vec<(String, String)> = std::fs::read_dir(split)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .filter_map(|case| {
            let input = std::fs::read_to_string(case.join("input.txt"))
                .or_else(|_| std::fs::read_to_string(case.join("input.json")))
                .ok()?;
            Some((case.file_name()?.to_string_lossy().into_owned(), input))
        })
        .collect();
    inputs.sort();
    inputs
}

/// Every input of every split (the held-out ones too, which have no queries), condensed with
/// no query, fills each budget it exceeds to at least 90%, and never passes it.
#[test]
fn inputs_fill_every_budget_they_exceed() {
    let crate_root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared = crate_root.join("../shared/corpus");
    let splits = [
        ("dev", shared.join("dev")),
        ("dev2", shared.join("dev2")),
        ("holdout", shared.join("holdout")),
        (OWN_SPLIT, crate_root.join("corpus")),
    ];
    let counter = TokenCounter::default();
    for (split, dir) in &splits {
        let inputs = inputs(dir);
        if inputs.is_empty() {
            eprintln!("skipping {split}: no inputs at {}", dir.display());
            continue;
        }
        for (name, input) in &inputs {
            let tokens_in = counter.count(input);
            for &budget in FILL_BUDGETS {
                let out = extract(input, &Hints::new(), budget, &counter);
                let tokens = counter.count(&out);
                assert!(
                    tokens <= budget,
                    "{split}/{name}: {tokens} tokens over {budget}"
                );
                if tokens_in > budget {
                    assert!(
                        tokens * 10 >= budget * 9,
                        "{split}/{name}: {tokens} tokens, under 90% of {budget}"
                    );
                }
            }
        }
    }
}
