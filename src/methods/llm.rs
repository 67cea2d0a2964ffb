//! The direct LLM rung: one summary call for an output that fits the model, beside map-reduce
//! for those that do not.

use tokio::sync::Semaphore;

use crate::llm::{LlmError, Summarizer};
use crate::methods::mapreduce::Hints;
use crate::methods::prompts::{Prompts, Template, Vars};
use crate::methods::truncate::group;
use crate::tokens::TokenCounter;

/// Summarizes `text` in one call within `body_budget` tokens: the summarize prompt, or the
/// extraction prompt when a schema hint is given. `call_limit` bounds the calls in flight
/// across the process.
///
/// # Errors
///
/// [`LlmError::ContextWindowExceeded`] before any call when the prompt and the answer would
/// not fit the model's window (the caller then map-reduces), an empty answer, or the client's
/// own error.
pub(crate) async fn summarize_direct(
    llm: &dyn Summarizer,
    prompts: &Prompts,
    call_limit: &Semaphore,
    text: &str,
    hints: &Hints<'_>,
    body_budget: usize,
    counter: &TokenCounter,
) -> Result<String, LlmError> {
    let vars = Vars::new(text, body_budget).with_hints(*hints);
    let template = match hints.schema_hint {
        Some(_) => Template::Extract,
        None => Template::Summarize,
    };
    let completion = prompts.request(template, &vars);
    let prompt_tokens = counter.count(&completion.system) + counter.count(&completion.user);
    // A tenth of the window is left free: the model's tokenizer may count more than ours.
    if prompt_tokens + body_budget > llm.context_window() * 9 / 10 {
        return Err(LlmError::ContextWindowExceeded {
            message: format!(
                "{} prompt tokens and {} for the answer exceed the {}-token window",
                group(prompt_tokens),
                group(body_budget),
                group(llm.context_window())
            ),
        });
    }
    let summary = {
        // The semaphore is never closed; a closed one would only lift the bound.
        let _permit = call_limit.acquire().await.ok();
        llm.complete(completion).await?
    };
    let summary = summary.trim();
    if summary.is_empty() {
        return Err(LlmError::EmptyAnswer);
    }
    Ok(counter.prefix_within(summary, body_budget).to_owned())
}
