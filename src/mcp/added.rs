//! What the proxy's added tools ask of the engine: `summarize` / `summarize_for_extraction`
//! (content the model hands over) and `condense_retrieve` (part of a kept original).

use crate::methods::chunk::ChunkStrategy;
use crate::{Condenser, Mode, Request, RetrieveError, Selection, TokenCounter};

/// Content to summarize on request.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SummarizeRequest<'a> {
    pub(crate) content: &'a str,
    pub(crate) max_output_tokens: usize,
    /// Focus areas or a schema hint: what to keep.
    pub(crate) focus: Option<&'a str>,
    /// Keep every detail that matches `focus` (extraction mode).
    pub(crate) extraction: bool,
    /// How content too large for one LLM call is cut; `None` is the configured strategy.
    pub(crate) strategy: Option<ChunkStrategy>,
    /// Who may read the original kept of the content (the HTTP session).
    pub(crate) owner: Option<&'a str>,
}

/// Summarizes content to at most `max_output_tokens`, unchanged when it already fits.
pub(crate) async fn summarize(engine: &Condenser, request: SummarizeRequest<'_>) -> String {
    let counter = TokenCounter::new(engine.config().defaults.encoding);
    // Seed 000's bypass: content that already fits comes back unchanged.
    if !counter.exceeds(request.content, request.max_output_tokens) {
        return request.content.to_owned();
    }
    let tool = if request.extraction {
        "summarize_for_extraction"
    } else {
        "summarize"
    };
    let mut engine_request = Request::new(tool)
        .budget(Some(request.max_output_tokens))
        .chunk_strategy(request.strategy)
        .owner(request.owner);
    engine_request = if request.extraction {
        engine_request.schema_hint(request.focus)
    } else {
        engine_request.query(request.focus)
    };
    let outcome = engine.condense(request.content, &engine_request).await;
    if outcome.was_condensed() {
        outcome.text
    } else {
        // The rules say pass-through for these tools; the caller's limit still holds.
        let request = Request::new(tool)
            .budget(Some(request.max_output_tokens))
            .mode(Some(Mode::Truncate))
            .owner(request.owner);
        engine.condense(&outcome.text, &request).await.text
    }
}

/// Which lines of an original `condense_retrieve` returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page {
    /// The first line (or match) to return, from 0.
    pub(crate) offset: usize,
    /// How many lines at most.
    pub(crate) lines: usize,
    /// Only lines containing this text (case-insensitive), with their line numbers.
    pub(crate) pattern: Option<String>,
    /// The answer's size cap in tokens.
    pub(crate) max_tokens: usize,
}

/// Returns a page of the original kept under `reference` by the first of `engines` that
/// knows it: after a reload, the engines of earlier configurations still answer for their refs.
pub(crate) async fn retrieve(
    engines: &[&Condenser],
    owner: Option<&str>,
    reference: &str,
    page: &Page,
) -> Result<String, RetrieveError> {
    let selection = match &page.pattern {
        Some(pattern) => Selection::Pattern {
            pattern: pattern.clone(),
            context: 0,
            max_matches: page.offset + page.lines,
        },
        None => Selection::Lines {
            start: page.offset + 1,
            end: page.offset + page.lines,
        },
    };
    let mut answer = Err(RetrieveError::UnknownRef(reference.to_owned()));
    let mut answered_by = None;
    for engine in engines {
        answer = engine
            .retrieve_as(owner, reference, selection.clone())
            .await;
        answered_by = Some(*engine);
        if !matches!(answer, Err(RetrieveError::UnknownRef(_))) {
            break;
        }
    }
    let text = answer?;
    let text = if page.pattern.is_some() {
        // The store returns the first matches; skip the ones already seen.
        text.lines()
            .skip(page.offset)
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text
    };
    let encoding = answered_by.map(|engine| engine.config().defaults.encoding);
    let counter = TokenCounter::new(encoding.unwrap_or_default());
    let capped = counter.prefix_within(&text, page.max_tokens);
    if capped.len() < text.len() {
        Ok(format!(
            "{capped}\n[cut at {} tokens: ask for fewer lines or a later offset]",
            page.max_tokens
        ))
    } else {
        Ok(text)
    }
}
