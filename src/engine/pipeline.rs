//! The flow of one text, in the order of DESIGN §1: measure → decide → cache → condense (the
//! ladder, which verifies each answer, fits the header and has the hook judge it) → keep →
//! deliver. Every stage is called from [`Condenser::run`] only; rendering a response into text
//! parts and rebuilding it are `response.rs`'s, around this.
//!
//! The original's ref is made before anything is kept (a keyed hash of the content, see
//! `store/refs.rs`): the header and the cache key name it, and the original is kept once the
//! result is made, or found in the cache.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use tracing::Instrument;

use super::review::Review;
use super::shared::{SharedText, Source};
use super::{Condensed, Condenser, Method, Request, ladder};
use crate::config::Mode;
use crate::limits::{Considered, cut_input};
use crate::policy::{Decision, Plan, Subject};
use crate::tokens::Encoding;

impl Condenser {
    /// Runs the flow for one text, traced as one `condense` span. `decided` is a decision
    /// already made for this text (a part of a response decided as a whole); `None` asks the
    /// policy.
    pub(super) async fn run(
        &self,
        source: Source<'_>,
        request: &Request<'_>,
        decided: Option<Decision>,
    ) -> Condensed {
        let started = Instant::now();
        let span = tracing::info_span!(
            "condense",
            tool = request.tool,
            tokens_before = tracing::field::Empty,
            tokens_after = tracing::field::Empty,
            method = tracing::field::Empty,
            cache_hit = tracing::field::Empty,
            elapsed_ms = tracing::field::Empty,
        );
        let review = Review::new(self, request);
        let outcome = self
            .stages(&source, &review, decided, started)
            .instrument(span.clone())
            .await;
        review.deliver(&outcome);
        // The counts of a pass-through are made on first read: only for a span someone sees.
        if !span.is_disabled() {
            span.record("tokens_before", outcome.tokens_before());
            span.record("tokens_after", outcome.tokens_after());
        }
        span.record("method", outcome.method.name());
        span.record("cache_hit", outcome.cached);
        span.record("elapsed_ms", outcome.elapsed.as_millis() as u64);
        span.in_scope(|| {
            tracing::info!(
                fallback = outcome.fallback.as_deref(),
                "{} {} → {} tokens",
                outcome.method,
                outcome.tokens_before(),
                outcome.tokens_after()
            );
        });
        outcome
    }

    /// The stages, in order. The hook is called through `review` only: the ladder has it
    /// judge each rung's answer, and `run` shows it what was delivered otherwise.
    async fn stages(
        &self,
        source: &Source<'_>,
        review: &Review<'_, '_>,
        decided: Option<Decision>,
        started: Instant,
    ) -> Condensed {
        let request = review.request();
        // Measure: only the part within `[limits] max_input_bytes` is ever considered.
        let input = self.considered(source, request);
        // Decide: a count the policy makes exactly is kept for the pass-through's figures.
        let counted = OnceLock::new();
        let decision = decided.unwrap_or_else(|| self.decide(input.considered, request, &counted));
        // A text passed through is held too (its result's copies): it reserves them from the
        // memory budget like a condensed one, and is truncated like one when it cannot.
        let mut memory_refused = None;
        let mut plan = match decision {
            Decision::Condense(plan) if request.mode != Some(Mode::Passthrough) => plan,
            _ => match self.reserve_pass_through(input.considered.len()).await {
                Ok(_permit) => {
                    return self
                        .pass_through(source, input, request, started, counted.get().copied())
                        .await;
                }
                Err(refused) => {
                    tracing::warn!(bytes = input.considered.len(), "{refused}");
                    memory_refused = Some(refused.to_string());
                    Plan {
                        mode: Mode::Truncate,
                        ..Plan::from_rule(&self.inner.config.rule_for(request.tool))
                    }
                }
            },
        };
        if let Some(mode) = request.mode.filter(|_| memory_refused.is_none()) {
            plan.mode = mode;
        }
        // The original's ref, made without keeping it yet: the header and the input-cut marker
        // name it, so the cache key covers it.
        let (kept, cut) = self.original_to_keep(source, input);
        let reference = self.inner.store.reference(&kept).await;
        // Start keeping the original now: the backend's write (compression, file I/O) runs in
        // the background beside the ladder instead of after it. The keep below, after the
        // result is made, is what makes a cached ref never dangle.
        self.inner
            .store
            .keep_under(&reference, kept.clone(), request.owner)
            .await;
        // What is kept starts with the considered part: the methods read it from there.
        let text = SharedText::new(kept.clone(), input.considered.len());
        let note = cut.as_ref().map(|cut| cut.marker(&reference.reference));
        let note = note.as_deref();
        // Cache: the key is of the text as given, before the escape codes are stripped.
        let key = self.cache_key(&text, request, &plan, note);
        // Escape codes are noise to every rung; the kept original has them, and the header
        // counts it as the agent would have paid for it (docs/hostile-input.md).
        let read = match crate::ansi::strip_escapes(&text) {
            std::borrow::Cow::Owned(stripped) => SharedText::from_string(stripped),
            std::borrow::Cow::Borrowed(_) => text.clone(),
        };
        let input = ladder::Input {
            read,
            original: text,
        };
        // Condense and verify: the ladder (LLM → extractive → truncation) checks each answer,
        // fits the header and has the hook judge it.
        let condense = async {
            let mut outcome = self
                .ladder(&input, review, plan, &reference.reference, note, started)
                .await;
            outcome.input_cut = cut.clone();
            outcome
        };
        // A truncation for want of memory is not cached: the next identical call may have it.
        let mut outcome = match memory_refused {
            None => self.cached(key, &reference.reference, plan, condense).await,
            Some(refused) => {
                let mut outcome = condense.await;
                outcome.fallback = Some(refused);
                outcome
            }
        };
        // Keep: after the result is made, and on a cache hit too (an idempotent put), so the
        // ref a result names is never one whose original was evicted meanwhile.
        self.inner
            .store
            .keep_under(&reference, kept, request.owner)
            .await;
        outcome.elapsed = started.elapsed();
        outcome
    }

    /// The result of `condense` from the results cache (this process's, then the store's
    /// backend) under `key`, or made by it and cached. A result made with a fallback caused by
    /// a passing failure is delivered but not cached: the next identical call tries again.
    async fn cached(
        &self,
        key: u128,
        reference: &str,
        plan: Plan,
        condense: impl Future<Output = Condensed>,
    ) -> Condensed {
        let Some(cache) = self.inner.store.results() else {
            return condense.await;
        };
        let fresh = AtomicBool::new(false);
        let result = cache
            .try_get_with(key, async {
                // Another process sharing the store's backend may have condensed this already.
                if let Some(shared) = self.inner.store.shared_result(key, reference).await {
                    return Ok(std::sync::Arc::new(shared));
                }
                fresh.store(true, Ordering::Relaxed);
                let outcome = condense.await;
                // A fallback caused by a passing LLM failure, or a truncation for want of
                // memory, is delivered but not kept: the next identical call should try again.
                let degraded = outcome.method == Method::Truncate && plan.mode != Mode::Truncate;
                if outcome.fallback.is_some()
                    && (matches!(plan.mode, Mode::Auto | Mode::Llm) || degraded)
                {
                    Err(outcome)
                } else {
                    self.inner.store.share_result(key, &outcome).await;
                    Ok(std::sync::Arc::new(outcome))
                }
            })
            .await;
        let mut outcome = match result {
            Ok(shared) => Condensed::clone(&shared),
            Err(shared) => Condensed::clone(&shared),
        };
        outcome.cached = !fresh.load(Ordering::Relaxed);
        outcome
    }

    /// The part of the input that is considered: all of it, or its start when it is larger
    /// than `[limits] max_input_bytes` (said in a warning and, later, in the result).
    fn considered<'s>(&self, source: &'s Source<'_>, request: &Request<'_>) -> Considered<'s> {
        let input = cut_input(
            source.as_str(),
            request.whole_bytes,
            self.inner.config.limits.max_input_bytes,
        );
        if input.is_cut() {
            tracing::warn!(
                considered_bytes = input.considered.len(),
                whole_bytes = input.whole_bytes,
                "input larger than [limits] max_input_bytes: only its start is considered"
            );
        }
        input
    }

    /// The policy's decision on `text`; an exact count it makes on the way is left in
    /// `counted`.
    pub(super) fn decide(
        &self,
        text: &str,
        request: &Request<'_>,
        counted: &OnceLock<(Encoding, usize)>,
    ) -> Decision {
        let subject = Subject::new(request.tool, text)
            .with_error(request.is_error)
            .with_budget_hint(request.budget_tokens)
            .with_count_memo(counted);
        self.inner.policy.decide(&subject)
    }

    /// The outcome for a text that is not condensed: the text itself, or, when it was larger
    /// than the input limit, its considered start and the marker line. `counted` is an exact
    /// count the policy already made, and by which encoding.
    pub(super) async fn pass_through(
        &self,
        source: &Source<'_>,
        input: Considered<'_>,
        request: &Request<'_>,
        started: Instant,
        counted: Option<(Encoding, usize)>,
    ) -> Condensed {
        let encoding = self.inner.config.rule_for(request.tool).encoding;
        // Nothing is counted here: the counts are made when someone reads them, and the
        // policy's exact count is reused when it was made with the same encoding.
        let before = counted.and_then(|(by, tokens)| (by == encoding).then_some(tokens));
        let considered = input.considered.len();
        let mut outcome = if input.is_cut() {
            let (kept, cut) = self.original_to_keep(source, input);
            let reference = self.inner.store.keep(kept, request.owner).await;
            let marker = cut
                .as_ref()
                .map(|cut| cut.marker(&reference))
                .unwrap_or_default();
            let separator = if input.considered.ends_with('\n') || input.considered.is_empty() {
                ""
            } else {
                "\n"
            };
            let text = format!("{}{separator}{marker}\n", input.considered);
            let mut outcome = Condensed::pass_through(text, encoding, considered, before);
            outcome.reference = Some(reference);
            outcome.input_cut = cut;
            outcome
        } else {
            Condensed::pass_through(input.considered.to_owned(), encoding, considered, before)
        };
        outcome.elapsed = started.elapsed();
        outcome
    }

    /// Shows the hook a whole multi-part response passed through: no `run` delivered it, as
    /// its parts were not condensed one by one.
    pub(super) fn deliver_passed_through(&self, outcome: &Condensed, request: &Request<'_>) {
        Review::new(self, request).deliver(outcome);
    }

    /// Reserves what passing `text_bytes` through holds; no permit is needed without a budget.
    pub(super) async fn reserve_pass_through(
        &self,
        text_bytes: usize,
    ) -> Result<Option<crate::limits::MemoryPermit>, crate::limits::MemoryRefused> {
        match &self.inner.memory {
            Some(budget) => {
                let wait_until = tokio::time::Instant::now() + crate::limits::MEMORY_WAIT;
                budget
                    .reserve_pass_through(text_bytes, wait_until)
                    .await
                    .map(Some)
            }
            None => Ok(None),
        }
    }
}

/// A plan for a part of a response decided as a whole: the whole's plan at the part's share
/// of the budget.
pub(super) fn part_plan(plan: Plan, budget_tokens: usize) -> Decision {
    Decision::Condense(Plan {
        budget_tokens,
        ..plan
    })
}
