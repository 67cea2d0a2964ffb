//! The ladder of methods: LLM (direct or map-reduce) → extractive → truncation, with the
//! facts guard and the header.

use std::sync::Arc;
use std::time::Instant;

use super::review::Review;
use super::{
    Condensed, Condenser, HEADER_RESERVE, MIN_METHOD_BUDGET, Method, Request, SharedText, Verdict,
};
use crate::config::Mode;
use crate::limits::MEMORY_WAIT;
use crate::llm::{LlmError, Summarizer};
use crate::methods::chunk::ChunkStrategy;
use crate::methods::contained::extract_contained;
use crate::methods::llm::summarize_direct;
use crate::methods::mapreduce::{Hints, MapReduce, MapReduceOptions};
use crate::methods::truncate::{group, truncate};
use crate::methods::verify::guard_facts;
use crate::policy::Plan;
use crate::tokens::TokenCounter;

/// The text a call condenses.
pub(super) struct Input {
    /// What the methods read: the original with its escape codes stripped.
    pub(super) read: SharedText,
    /// The original as the tool gave it (its considered part): what the agent would have paid
    /// for, so what the header's and the outcome's `tokens_before` count.
    pub(super) original: SharedText,
}

impl Condenser {
    /// The ladder: LLM (when allowed and configured) → extractive → truncation, within the
    /// plan's deadline. Each rung's answer is verified (the facts guard, the header fitted to
    /// the budget) and judged by the hook through `review` (which holds the call's request) before it is
    /// returned.
    pub(super) async fn ladder(
        &self,
        input: &Input,
        review: &Review<'_, '_>,
        mut plan: Plan,
        reference: &str,
        note: Option<&str>,
        started: Instant,
    ) -> Condensed {
        let request = review.request();
        let text = &input.read;
        let counter = TokenCounter::new(plan.encoding);
        let deadline = tokio::time::Instant::from_std(started + plan.deadline);
        let mut fallback = None;
        // Held until the result is made: the methods' working memory is what it reserves.
        let _memory = match &self.inner.memory {
            Some(budget) if plan.mode != Mode::Truncate => {
                let wait_until = deadline.min(tokio::time::Instant::now() + MEMORY_WAIT);
                match budget.reserve(text.len(), wait_until).await {
                    Ok(permit) => Some(permit),
                    Err(refused) => {
                        tracing::warn!(bytes = text.len(), "{refused}");
                        fallback = Some(refused.to_string());
                        plan.mode = Mode::Truncate;
                        None
                    }
                }
            }
            _ => None,
        };
        // Count the original while the methods run: the header needs it, and on large inputs
        // it is the slowest part of the extractive path.
        let mut tokens_before = OriginalCount::start(input.original.clone(), counter);
        let body_budget = plan.budget_tokens.saturating_sub(HEADER_RESERVE);
        let mut candidate: Option<(String, Method)> = None;

        // An extractive answer the LLM rung already made (map-reduce's, at its deadline).
        let mut extracted = None;
        let wants_llm = matches!(plan.mode, Mode::Auto | Mode::Llm);
        if wants_llm && body_budget >= MIN_METHOD_BUDGET {
            match &self.inner.llm {
                Some(llm) => match self
                    .summarize(llm, text, request, body_budget, &counter, deadline, plan)
                    .await
                {
                    Ok(summary) => candidate = Some(summary),
                    Err(missed) => {
                        fallback = Some(missed.cause);
                        extracted = missed.extracted;
                    }
                },
                None if plan.mode == Mode::Llm => {
                    fallback = Some("no LLM is configured".into());
                }
                None => {}
            }
        }

        // Every rung's answer is finished and judged by the hook the same way.
        let judged = |body: &str, method: Method, tokens_before: usize| {
            let outcome = self.finish(body, method, tokens_before, reference, note, &counter, plan);
            let verdict = review.judge(&outcome);
            (outcome, verdict)
        };
        if let Some((body, method)) = candidate.take() {
            match judged(&body, method, tokens_before.get().await) {
                (outcome, Verdict::Keep) => return with_fallback(outcome, fallback),
                (_, Verdict::Veto) => {
                    fallback = Some(format!("{method} result vetoed by the hook"));
                }
            }
        }

        if plan.mode != Mode::Truncate && body_budget >= MIN_METHOD_BUDGET {
            let hints = self.hints(request);
            // The extraction runs beside the original's count: neither waits for the other. A
            // very large original is counted first: both at once raised the peak memory of
            // `condense compress` on a 9 MB table from about 40 to 65 MB on a busy machine
            // (tests/memory.rs), and there the count is small beside the extraction.
            let (body, before) = match extracted {
                Some(body) => (Some(body), tokens_before.get().await),
                None if text.len() > JOIN_COUNT_MAX_BYTES => {
                    let before = tokens_before.get().await;
                    let body = extract_contained(text.clone(), hints, body_budget, counter).await;
                    (body, before)
                }
                None => tokio::join!(
                    extract_contained(text.clone(), hints, body_budget, counter),
                    tokens_before.get()
                ),
            };
            match body {
                Some(body) => match judged(&body, Method::Extract, before) {
                    (outcome, Verdict::Keep) => return with_fallback(outcome, fallback),
                    (_, Verdict::Veto) => {
                        fallback = Some("extract result vetoed by the hook".into());
                    }
                },
                None => fallback = Some("the extractive compressor failed".into()),
            }
        }

        // The last rung: the hook is told, but a veto has nothing left to fall back to.
        let body = truncate(text, body_budget.max(1), &counter, Some(reference));
        let (outcome, _) = judged(&body, Method::Truncate, tokens_before.get().await);
        with_fallback(outcome, fallback)
    }

    /// The LLM rung: one call when the output fits (`direct_max_tokens` and the model's
    /// window), map-reduce otherwise or when the endpoint says the prompt overflowed; then the
    /// facts guard, the one verification of an LLM answer. Bounded by `deadline`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn summarize(
        &self,
        llm: &Arc<dyn Summarizer>,
        text: &str,
        request: &Request<'_>,
        body_budget: usize,
        counter: &TokenCounter,
        deadline: tokio::time::Instant,
        plan: Plan,
    ) -> Result<(String, Method), Missed> {
        // Everything below sends text to the model, or derives from what the model saw (the
        // facts guard quotes the redacted text, so a summary never mixes redacted and original
        // lines). The agent still reaches the original through retrieval.
        let secrets = &self.inner.secrets;
        let (text, redacted) = secrets.redact_counted(text);
        let text: &str = &text;
        let query = request.query.map(|query| secrets.redact(query));
        let schema_hint = request.schema_hint.map(|hint| secrets.redact(hint));
        let request = &Request {
            query: query.as_deref(),
            schema_hint: schema_hint.as_deref(),
            ..*request
        };
        if redacted > 0 {
            tracing::debug!(
                secrets_redacted = redacted,
                "secrets masked before the LLM call"
            );
        }
        let missed_deadline =
            || format!("LLM missed the {} ms deadline", plan.deadline.as_millis());
        let settings = &self.inner.config.mapreduce;
        let direct = match counter.count_up_to(text, settings.direct_max_tokens) {
            Some(_) => {
                let hints = self.hints(request);
                let call = summarize_direct(
                    llm.as_ref(),
                    &self.inner.prompts,
                    &self.inner.call_limit,
                    text,
                    &hints,
                    body_budget,
                    counter,
                );
                match tokio::time::timeout_at(deadline, call).await {
                    Ok(answer) => answer,
                    Err(_) => return Err(Missed::cause(missed_deadline())),
                }
            }
            None => Err(LlmError::ContextWindowExceeded {
                message: "larger than a direct call takes".into(),
            }),
        };
        let (summary, method) = match direct {
            Ok(summary) => (summary, Method::Llm),
            Err(error) if error.is_context_overflow() => {
                // Map-reduce keeps its own deadline, and answers extractively when it passes.
                let outcome = self
                    .map_reduce(llm, counter, request.chunk_strategy)
                    .run(text, &self.hints(request), body_budget, deadline)
                    .await;
                if outcome.timed_out {
                    // Its extractive answer is the next rung's: not made a second time.
                    return Err(Missed {
                        cause: missed_deadline(),
                        extracted: Some(outcome.text).filter(|text| !text.is_empty()),
                    });
                }
                if outcome.fallbacks.len() == outcome.chunks && outcome.chunks > 0 {
                    // The cause, not the count: the first call's own error says what is wrong
                    // (the endpoint is down, the key is refused).
                    let error = outcome.first_error.unwrap_or_else(|| {
                        LlmError::InvalidResponse(format!(
                            "every one of {} chunk summaries failed",
                            outcome.chunks
                        ))
                    });
                    return Err(Missed::failed(&error));
                }
                (outcome.text, Method::MapReduce)
            }
            Err(error) => return Err(Missed::failed(&error)),
        };
        let summary = if settings.verify_facts {
            guard_facts(text, &summary, request.query, body_budget, counter)
        } else {
            summary
        };
        Ok((summary, method))
    }

    pub(super) fn hints<'r>(&self, request: &Request<'r>) -> Hints<'r> {
        Hints {
            query: request.query,
            tool: Some(request.tool).filter(|t| !t.is_empty()),
            schema_hint: request.schema_hint,
            arguments: request.arguments,
            kind: None,
        }
    }

    /// The driver for one run; `strategy` overrides the configured one.
    pub(super) fn map_reduce(
        &self,
        llm: &Arc<dyn Summarizer>,
        counter: &TokenCounter,
        strategy: Option<ChunkStrategy>,
    ) -> MapReduce {
        let settings = &self.inner.config.mapreduce;
        let mut options = MapReduceOptions::default()
            .with_chunk_tokens(settings.chunk_tokens)
            .with_overlap_tokens(settings.overlap_tokens)
            .with_strategy(strategy.unwrap_or(settings.strategy))
            .with_group_size(settings.group_size)
            .with_reduce_concurrency(settings.reduce_concurrency)
            .with_max_passes(settings.max_passes)
            .with_critique_rounds(settings.critique_rounds)
            // The facts guard runs once, in `summarize`, on either kind of LLM answer.
            .with_verify_facts(false);
        options.progress = self.inner.progress.clone();
        let prompts: Arc<dyn crate::methods::mapreduce::MapReducePrompts> =
            Arc::new(self.inner.prompts.clone());
        let mut driver = MapReduce::new(llm.clone(), prompts, options, *counter)
            .with_concurrency_limit(self.inner.call_limit.clone())
            .with_reduce_limit(self.inner.merge_limit.clone());
        if let Some(cache) = &self.inner.chunk_cache {
            driver = driver.with_cache(cache.clone());
        }
        driver
    }

    /// Puts the header (and the input-cut marker, if any) on a body and makes sure the whole
    /// is within the budget.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn finish(
        &self,
        body: &str,
        method: Method,
        tokens_before: usize,
        reference: &str,
        note: Option<&str>,
        counter: &TokenCounter,
        plan: Plan,
    ) -> Condensed {
        let budget = plan.budget_tokens;
        let mut body = body;
        let mut after = budget;
        let note = note.map(|note| format!("{note}\n")).unwrap_or_default();
        // The body is counted once (a cut comes with its count); each try counts the header.
        let mut body_tokens = counter.count(body);
        for _ in 0..6 {
            let head = format!(
                "{}\n{note}",
                header(method, tokens_before, after, reference)
            );
            let count = counter.count_joined(&head, body, body_tokens);
            if count > budget {
                // Give the body fewer tokens by the excess, and try again.
                (body, body_tokens) = counter
                    .prefix_within_counted(body, body_tokens.saturating_sub(count - budget + 1));
                continue;
            }
            if count == after {
                let text = head + body;
                return self.condensed(text, method, tokens_before, count, reference);
            }
            after = count;
        }
        // The header's own count keeps moving by a token: settle on a count-free header.
        let text = format!(
            "{}\n{note}{body}",
            header(method, tokens_before, after, reference)
        );
        let (text, count) = counter.prefix_within_counted(&text, budget);
        self.condensed(text.to_owned(), method, tokens_before, count, reference)
    }

    pub(super) fn condensed(
        &self,
        text: String,
        method: Method,
        tokens_before: usize,
        tokens_after: usize,
        reference: &str,
    ) -> Condensed {
        let mut outcome = Condensed::counted(text, method, tokens_before, tokens_after);
        outcome.reference = Some(reference.to_owned());
        outcome
    }
}

pub(super) fn with_fallback(mut outcome: Condensed, fallback: Option<String>) -> Condensed {
    outcome.fallback = fallback;
    outcome
}

/// Why the LLM rung did not answer, and an extractive answer it made on the way, if any.
pub(super) struct Missed {
    /// The reason, as the outcome's `fallback` says it.
    cause: String,
    /// Map-reduce's extractive answer at its deadline: the extractive rung's answer, ready.
    extracted: Option<String>,
}

impl Missed {
    fn cause(cause: String) -> Self {
        Missed {
            cause,
            extracted: None,
        }
    }

    fn failed(error: &LlmError) -> Self {
        // The whole chain: "could not reach the LLM endpoint" alone does not say why.
        Missed::cause(format!("LLM failed: {}", error.with_causes()))
    }
}

/// The header line of a condensed text.
pub(super) fn header(method: Method, before: usize, after: usize, reference: &str) -> String {
    format!(
        "[condense: {method}, {} → {} tokens, original kept as {reference}]",
        group(before),
        group(after)
    )
}

/// Originals up to this size are counted while the extractive compressor runs; larger ones
/// before it, so that the two do not hold memory at once.
const JOIN_COUNT_MAX_BYTES: usize = 4 << 20;

/// The original's exact token count, made on a blocking thread from the start of the ladder and
/// awaited only where a rung's answer needs it for its header.
struct OriginalCount {
    counting: Option<tokio::task::JoinHandle<usize>>,
    counted: Option<usize>,
    /// What the header shows if counting failed (it cannot, short of a panic): the byte
    /// length, an upper bound.
    bytes: usize,
}

impl OriginalCount {
    fn start(original: SharedText, counter: TokenCounter) -> Self {
        let bytes = original.len();
        OriginalCount {
            counting: Some(tokio::task::spawn_blocking(move || {
                counter.count(&original)
            })),
            counted: None,
            bytes,
        }
    }

    async fn get(&mut self) -> usize {
        if let Some(counting) = self.counting.take() {
            self.counted = Some(counting.await.unwrap_or(self.bytes));
        }
        self.counted.unwrap_or(self.bytes)
    }
}
