//! Security guarantees: secrets never reach the LLM, the API key never leaks, tool output stays
//! inside its fence, prompt templates stay inside their directory, originals stay in memory.

use std::path::PathBuf;

use condense::secrets::SecretRedactor;
use condense::{Condenser, Config, Method, Request, Selection};
use serde_json::Value;

use crate::support::fake_llm::{FakeLlm, Reply};

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

// ---------------------------------------------------------------------------------------------
// Secrets never reach the LLM.
// ---------------------------------------------------------------------------------------------

/// The API key every test condenser sends. No shape rule matches it, so only the engine's
/// knowledge of its own key can mask it.
const KEY: &str = "condense-proxy-master-Key-93f1c2e4d5b6";

fn secrets_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/secrets")
}

/// The fake-secret corpus: `(file, text, secrets, facts)`.
fn secret_corpus() -> Vec<(String, String, Vec<String>, Vec<String>)> {
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(secrets_dir().join("manifest.json")).expect("manifest"),
    )
    .expect("manifest is JSON");
    let strings = |value: &Value| -> Vec<String> {
        value
            .as_array()
            .expect("a list")
            .iter()
            .map(|s| s.as_str().expect("a string").to_owned())
            .collect()
    };
    manifest
        .as_object()
        .expect("an object")
        .iter()
        .map(|(file, entry)| {
            let text = std::fs::read_to_string(secrets_dir().join(file)).expect("corpus file");
            (
                file.clone(),
                text,
                strings(&entry["secrets"]),
                strings(&entry["facts"]),
            )
        })
        .collect()
}

/// A condenser for the endpoint at `url` with key [`KEY`], condensing anything over 50 tokens
/// with the LLM, and `extra` TOML appended (sections after `[llm]` may be given).
fn condenser(url: &str, llm_keys: &str, extra: &str) -> Condenser {
    let toml = format!(
        "[defaults]\nthreshold_tokens = 50\nbudget_tokens = 300\nmode = \"llm\"\n\n\
         [llm]\nbase_url = \"{url}\"\nmax_retries = 0\n{llm_keys}\n\n{extra}"
    );
    let config = Config::from_toml_str_with_env(
        &toml,
        "security.toml",
        [("CONDENSE_LLM_API_KEY".to_owned(), KEY.to_owned())],
    )
    .expect("a valid config");
    Condenser::new(config).expect("a condenser")
}

/// Every message content of every request the fake endpoint received.
fn sent_texts(server: &FakeLlm) -> Vec<String> {
    server
        .received()
        .iter()
        .flat_map(|request| {
            request.body["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .filter_map(|message| message["content"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test]
async fn no_secret_of_the_corpus_reaches_the_llm() {
    for (file, text, secrets, facts) in secret_corpus() {
        let server = FakeLlm::scripted([Reply::completion("Summary: settings listed.")]).await;
        let condenser = condenser(&server.url(), "", "");

        let outcome = condenser
            .condense(
                &text,
                &Request::new("read_file").query(Some("what is configured?")),
            )
            .await;

        assert_eq!(
            outcome.method,
            Method::Llm,
            "{file}: {:?}",
            outcome.fallback
        );
        let sent = sent_texts(&server).join("\n");
        assert!(!sent.is_empty(), "{file}: nothing was sent");
        for secret in &secrets {
            assert!(
                !sent.contains(secret.as_str()),
                "{file}: `{secret}` reached the LLM"
            );
        }
        for fact in &facts {
            assert!(
                sent.contains(fact.as_str()),
                "{file}: `{fact}` did not reach the LLM:\n{sent}"
            );
        }
        // The agent still gets every original byte back.
        let reference = outcome.reference.expect("a ref");
        let original = condenser
            .retrieve(&reference, Selection::All)
            .await
            .unwrap();
        assert_eq!(original, text, "{file}");
    }
}

#[tokio::test]
async fn redaction_off_sends_the_tool_output_as_it_is() {
    let (_, text, secrets, _) = secret_corpus()
        .into_iter()
        .find(|(file, ..)| file == "app.env")
        .expect("app.env");
    let server = FakeLlm::scripted([Reply::completion("Summary: settings listed.")]).await;
    let condenser = condenser(&server.url(), "redact_secrets = false", "");

    condenser.condense(&text, &Request::new("read_file")).await;

    let sent = sent_texts(&server).join("\n");
    for secret in &secrets {
        assert!(
            sent.contains(secret.as_str()),
            "`{secret}` was masked anyway"
        );
    }
    assert!(!sent.contains("[redacted:"), "{sent}");
}

#[tokio::test]
async fn every_map_reduce_and_critique_call_sees_only_redacted_text() {
    let corpus = secret_corpus();
    // Many copies, so the output is cut into many chunks, merged over levels, then critiqued.
    let mut text = String::new();
    for round in 0..6 {
        for (file, body, ..) in &corpus {
            text.push_str(&format!("==> {file} (copy {round}) <==\n{body}\n"));
        }
    }
    let server = FakeLlm::scripted([Reply::completion("Summary: settings listed.")]).await;
    let condenser = condenser(
        &server.url(),
        "context_window = 4096",
        "[mapreduce]\ndirect_max_tokens = 500\nchunk_tokens = 600\ngroup_size = 2\ncritique_rounds = 1\nchunk_cache_max_bytes = 0\n",
    );

    let outcome = condenser.condense(&text, &Request::new("read_file")).await;

    assert_eq!(outcome.method, Method::MapReduce, "{:?}", outcome.fallback);
    assert!(server.requests() > 10, "only {} calls", server.requests());
    let sent = sent_texts(&server);
    assert!(
        sent.iter().any(|s| s.contains("[redacted:")),
        "the chunks carried no placeholder"
    );
    for (file, _, secrets, _) in &corpus {
        for secret in secrets {
            assert!(
                !sent.iter().any(|s| s.contains(secret.as_str())),
                "{file}: `{secret}` reached the LLM"
            );
        }
    }
    assert!(!outcome.text.contains(KEY));
}

#[tokio::test]
async fn the_summarize_tools_query_and_schema_hint_are_redacted_too() {
    let server = FakeLlm::scripted([Reply::completion("Summary: ok.")]).await;
    let condenser = condenser(&server.url(), "", "");
    let text = "INFO step ok\n".repeat(200);

    condenser
        .condense(
            &text,
            &Request::new("summarize").query(Some("why does password=Qu3ry-FAKE-pw fail?")),
        )
        .await;
    condenser
        .condense(
            &text,
            &Request::new("summarize_for_extraction")
                .schema_hint(Some("tokens like ghp_FAKEh1nt0TOKENcondenseEXAMPLE0000004")),
        )
        .await;

    let sent = sent_texts(&server).join("\n");
    assert_eq!(server.requests(), 2);
    assert!(!sent.contains("Qu3ry-FAKE-pw"), "{sent}");
    assert!(!sent.contains("ghp_FAKEh1nt0"), "{sent}");
    assert!(sent.contains("password=[redacted:password]"), "{sent}");
}

#[tokio::test]
async fn the_api_key_in_tool_output_is_masked_even_with_redaction_off() {
    let server = FakeLlm::scripted([Reply::completion("Summary: ok.")]).await;
    let condenser = condenser(&server.url(), "redact_secrets = false", "");
    let text = format!("{}LITELLM_MASTER_KEY={KEY}\n", "INFO step ok\n".repeat(200));

    condenser.condense(&text, &Request::new("read_env")).await;

    let sent = sent_texts(&server).join("\n");
    assert!(!sent.contains(KEY), "{sent}");
    assert!(sent.contains("LITELLM_MASTER_KEY=[redacted:known-secret]"));
}
