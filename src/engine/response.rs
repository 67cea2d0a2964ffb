//! Whole tool responses: text parts sharing a budget, the structured-content policy and the
//! rebuild; the seed contract `summarize_if_needed`.

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;

use super::pipeline::part_plan;
use super::shared::Source;
use super::{CallInfo, Condensed, Condenser, HEADER_RESERVE, MIN_METHOD_BUDGET, Method, Request};
use crate::config::Mode;
use crate::limits::cut_input;
use crate::methods::truncate::truncate;
use crate::policy::Decision;
use crate::tokens::TokenCounter;
use crate::tool::{ToolResponse, render_value};

impl Condenser {
    /// Condenses a whole tool response: its text parts share the budget by water-filling
    /// (short parts stay whole, the longest are condensed to a common cap), and images, audio
    /// and binary parts pass untouched. A condensed response's structured copy is handled by
    /// the tool's [`StructuredContentPolicy`](crate::StructuredContentPolicy).
    pub async fn condense_response<R: ToolResponse>(&self, call: &CallInfo, response: R) -> R {
        self.condense_response_with_outcomes(call, None, response)
            .await
            .0
    }

    /// As [`Condenser::condense_response`], and also returns what was done to each text part
    /// that was condensed or cut (empty when the response came back whole). `output_schema`
    /// is the tool's, which a shrunk `structuredContent` must still match.
    pub async fn condense_response_with_outcomes<R: ToolResponse>(
        &self,
        call: &CallInfo,
        output_schema: Option<&Value>,
        mut response: R,
    ) -> (R, Vec<Condensed>) {
        let parts: Vec<String> = response
            .text_parts()
            .into_iter()
            .map(|p| p.into_owned())
            .collect();
        let request = call.request().with_error(response.is_error());
        let (new_parts, outcomes) = match parts.len() {
            0 => return (response, Vec::new()),
            1 => {
                let part = parts.into_iter().next().unwrap_or_default();
                let outcome = self.condense_owned(part, &request).await;
                if !outcome.was_changed() {
                    return (response, Vec::new());
                }
                (vec![Some(outcome.text.clone())], vec![outcome])
            }
            _ => self.condense_parts(parts, request).await,
        };
        if outcomes.is_empty() {
            return (response, outcomes);
        }
        if outcomes.iter().any(Condensed::was_condensed)
            && let Some(slot) = response.structured_content_mut()
            && slot.is_some()
        {
            let rule = self.inner.config.rule_for(&call.tool);
            let budget = call.budget_tokens.unwrap_or(rule.budget_tokens);
            *slot = rule.structured_content.apply(
                slot.take(),
                output_schema,
                budget,
                &TokenCounter::new(rule.encoding),
            );
        }
        (response.rebuild(new_parts, &outcomes), outcomes)
    }

    /// The multi-part response: decided once on the joined text, then each part too long for
    /// the shared budget condensed to the water level.
    async fn condense_parts(
        &self,
        parts: Vec<String>,
        request: Request<'_>,
    ) -> (Vec<Option<String>>, Vec<Condensed>) {
        let rule = self.inner.config.rule_for(request.tool);
        let counter = TokenCounter::new(rule.encoding);
        // Decide on the whole, once: joined, the parts are what the agent would read.
        let joined = parts.join("\n");
        let counted = std::sync::OnceLock::new();
        let plan = match self.decide(&joined, &request, &counted) {
            Decision::Condense(plan) if request.mode != Some(Mode::Passthrough) => plan,
            _ => {
                let limit = self.inner.config.limits.max_input_bytes;
                if parts.iter().any(|part| part.len() > limit) {
                    return self.cut_long_parts(parts, request, limit).await;
                }
                let Ok(_permit) = self.reserve_pass_through(joined.len()).await else {
                    // Short of memory for the whole: each part is passed on, or truncated, on
                    // a reservation of its own.
                    drop(joined);
                    return self.cut_long_parts(parts, request, 0).await;
                };
                // The hook still sees the pass-through outcome.
                let input = cut_input(&joined, None, usize::MAX);
                let counted = counted.get().copied();
                let outcome = self
                    .pass_through(
                        &super::Source::Borrowed(&joined),
                        input,
                        &request,
                        Instant::now(),
                        counted,
                    )
                    .await;
                self.deliver_passed_through(&outcome, &request);
                return (Vec::new(), Vec::new());
            }
        };
        let budget = plan.budget_tokens;
        // The parts are condensed one by one: the joined copy is not needed any more.
        drop(joined);
        // Parts larger than the whole budget are capped whatever the water level: count only
        // up to it.
        let sizes: Vec<Option<usize>> = parts
            .iter()
            .map(|p| counter.count_up_to(p, budget))
            .collect();
        let cap = water_level(&sizes, budget).max(MIN_METHOD_BUDGET + HEADER_RESERVE);
        let mut new_parts = Vec::with_capacity(parts.len());
        let mut outcomes = Vec::new();
        for (part, size) in parts.into_iter().zip(&sizes) {
            if size.is_some_and(|s| s <= cap) {
                new_parts.push(None);
                continue;
            }
            // The part follows the whole's decision at its share of the budget.
            let part_request = request.with_budget_tokens(cap);
            let outcome = self
                .run(
                    Source::Owned(Arc::new(part)),
                    &part_request,
                    Some(part_plan(plan, cap)),
                )
                .await;
            if outcome.was_changed() {
                new_parts.push(Some(outcome.text.clone()));
                outcomes.push(outcome);
            } else {
                new_parts.push(None);
            }
        }
        (new_parts, outcomes)
    }

    /// A pass-through response still hands on no part longer than `limit` (the input limit):
    /// each such part goes through [`Condenser::condense`], which cuts it and says so.
    async fn cut_long_parts(
        &self,
        parts: Vec<String>,
        request: Request<'_>,
        limit: usize,
    ) -> (Vec<Option<String>>, Vec<Condensed>) {
        let mut new_parts = Vec::with_capacity(parts.len());
        let mut outcomes = Vec::new();
        for part in parts {
            if part.len() <= limit {
                new_parts.push(None);
                continue;
            }
            // Passed through, as the whole was decided: only cut, and marked.
            let outcome = self
                .run(
                    Source::Owned(Arc::new(part)),
                    &request,
                    Some(Decision::PassThrough),
                )
                .await;
            new_parts.push(Some(outcome.text.clone()));
            outcomes.push(outcome);
        }
        (new_parts, outcomes)
    }

    /// The seed contract: returns `(text, false)` when `value` (rendered: strings as they are,
    /// anything else pretty-printed JSON) has at most `max_tokens` tokens, else `(condensed,
    /// true)` with a condensed text of at most `max_tokens` tokens, header included.
    /// [`Condenser::summarize_if_needed_outcome`] returns the method and ref as well.
    pub async fn summarize_if_needed(
        &self,
        value: &Value,
        max_tokens: usize,
        query: Option<&str>,
        tool: Option<&str>,
    ) -> (String, bool) {
        let outcome = self
            .summarize_if_needed_outcome(value, max_tokens, query, tool)
            .await;
        let condensed = outcome.was_condensed();
        (outcome.text, condensed)
    }

    /// As [`Condenser::summarize_if_needed`], with the whole outcome: the text, the method
    /// (pass-through when `value` fits `max_tokens`), the counts and the ref under which the
    /// original is kept.
    ///
    /// ```
    /// use condense::{Condenser, Config, Method};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let condenser = Condenser::new(Config::default()).unwrap();
    /// let rows: Vec<String> = (0..2000).map(|i| format!("row {i}: status ok")).collect();
    /// let outcome = condenser
    ///     .summarize_if_needed_outcome(&serde_json::json!(rows), 400, Some("row 1234"), None)
    ///     .await;
    /// assert_eq!(outcome.method, Method::Extract);
    /// assert!(outcome.tokens_after() <= 400);
    /// let original = condenser
    ///     .retrieve(outcome.reference.as_deref().unwrap(), condense::Selection::All)
    ///     .await
    ///     .unwrap();
    /// assert!(original.contains("row 1999: status ok"));
    /// # });
    /// ```
    pub async fn summarize_if_needed_outcome(
        &self,
        value: &Value,
        max_tokens: usize,
        query: Option<&str>,
        tool: Option<&str>,
    ) -> Condensed {
        let started = Instant::now();
        let text = render_value(value);
        let tool = tool.unwrap_or("");
        let counter = TokenCounter::new(self.inner.config.rule_for(tool).encoding);
        let budget = max_tokens.max(1);
        // A text of no more bytes than the budget fits it (a token is at least a byte): its
        // counts wait for a reader. Otherwise the bound decides, and its count is exact.
        let fits = if TokenCounter::trivially_within(&text, budget) {
            Some(None)
        } else {
            counter.count_up_to(&text, budget).map(Some)
        };
        if let Some(before) = fits {
            let len = text.len();
            let mut outcome =
                Condensed::pass_through(text.into_owned(), counter.encoding(), len, before);
            outcome.elapsed = started.elapsed();
            return outcome;
        }
        let request = Request {
            query,
            ..Request::new(tool).with_budget_tokens(budget)
        };
        let outcome = self.condense(&text, &request).await;
        if outcome.was_condensed() {
            return outcome;
        }
        // The rules say pass-through for this tool; honour the caller's limit anyway.
        let cut = truncate(&text, budget, &counter, None);
        let tokens_after = counter.count(&cut);
        let mut truncated =
            Condensed::counted(cut, Method::Truncate, outcome.tokens_before(), tokens_after);
        truncated.elapsed = started.elapsed();
        truncated
    }
}

/// The common cap for water-filling: the largest `c` with `Σ min(size, c) ≤ budget`, where an
/// unknown size (`None`) is larger than the budget.
fn water_level(sizes: &[Option<usize>], budget: usize) -> usize {
    let mut known: Vec<usize> = sizes.iter().map(|s| s.unwrap_or(usize::MAX)).collect();
    known.sort_unstable();
    let mut remaining = budget;
    let mut left = known.len();
    for size in known {
        let share = remaining / left.max(1);
        if size > share {
            return share;
        }
        remaining -= size;
        left -= 1;
    }
    budget
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn water_level_keeps_short_parts_whole() {
        assert_eq!(water_level(&[Some(10), Some(20), None], 100), 70);
        assert_eq!(water_level(&[Some(10), Some(20)], 100), 100);
        assert_eq!(water_level(&[None, None], 100), 50);
        assert_eq!(water_level(&[Some(60), Some(60), Some(10)], 100), 45);
    }
}
