//! Security guarantees: secrets never reach the LLM, the API key never leaks, tool output stays
//! inside its fence, prompt templates stay inside their directory, originals stay in memory.

use std::path::PathBuf;

use condense::secrets::SecretRedactor;

/// Every input of the tool-output corpus beside the repository: `(case, text)`.
fn corpus_inputs() -> Vec<(String, String)> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let mut inputs = Vec::new();
    for split in ["dev", "holdout"] {
        let Ok(cases) = std::fs::read_dir(root.join(split)) else {
            continue;
        };
        for case in cases.flatten() {
            for name in ["input.txt", "input.json"] {
                if let Ok(text) = std::fs::read_to_string(case.path().join(name)) {
                    inputs.push((
                        format!("{split}/{}", case.file_name().to_string_lossy()),
                        text,
                    ));
                }
            }
        }
    }
    inputs.sort();
    inputs
}

/// The most redactions allowed on the whole tool-output corpus (36 real outputs, 5.8 MB, no
/// credential in any of them): each one is a false positive that hides content from the model.
const MAX_CORPUS_REDACTIONS: usize = 5;

#[test]
fn real_tool_outputs_without_credentials_are_left_almost_untouched() {
    let inputs = corpus_inputs();
    assert!(
        inputs.len() >= 30,
        "the corpus must be beside the repo: found {} inputs",
        inputs.len()
    );
    let redactor = SecretRedactor::new();
    let mut report = Vec::new();
    for (case, text) in &inputs {
        for finding in redactor.find(text) {
            let line_start = text[..finding.range.start].rfind('\n').map_or(0, |i| i + 1);
            let line_end = text[finding.range.end..]
                .find('\n')
                .map_or(text.len(), |i| finding.range.end + i);
            report.push(format!(
                "{case}: {}: {}",
                finding.kind,
                &text[line_start..line_end]
            ));
        }
    }
    // Printed so that `--nocapture` shows what fired, for the numbers in docs/security.md.
    println!("{} redactions on {} inputs", report.len(), inputs.len());
    for line in &report {
        println!("  {line}");
    }
    assert!(
        report.len() <= MAX_CORPUS_REDACTIONS,
        "{} redactions on credential-free outputs:\n{}",
        report.len(),
        report.join("\n")
    );
}
