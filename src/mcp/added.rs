//! What the proxy's added tools ask of the engine: `summarize` / `summarize_for_extraction`
//! (content the model hands over) and `condense_retrieve` (part of a kept original).

use super::tools::RetrieveArgs;
use crate::methods::chunk::ChunkStrategy;
use crate::store::DEFAULT_PATTERN_CONTEXT;
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
    let (query, schema_hint) = if request.extraction {
        (None, request.focus)
    } else {
        (request.focus, None)
    };
    let engine_request = Request {
        query,
        schema_hint,
        chunk_strategy: request.strategy,
        owner: request.owner,
        ..Request::new(tool).with_budget_tokens(request.max_output_tokens)
    };
    let outcome = engine.condense(request.content, &engine_request).await;
    if outcome.was_condensed() {
        outcome.text
    } else {
        // The rules say pass-through for these tools; the caller's limit still holds.
        let request = Request {
            owner: request.owner,
            ..Request::new(tool)
                .with_budget_tokens(request.max_output_tokens)
                .with_mode(Mode::Truncate)
        };
        engine.condense(&outcome.text, &request).await.text
    }
}

/// What `condense_retrieve` was asked for: a selection of an original, and the answer's cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Page {
    pub(crate) selection: Selection,
    /// The answer's size cap in tokens, footer included.
    pub(crate) max_tokens: usize,
}

/// Lines a page holds when the call does not say.
const DEFAULT_LINES: usize = 200;
/// Matches a pattern page holds when the call does not say.
const DEFAULT_MATCHES: usize = 20;
/// Tokens kept for the footer that says how to continue.
const FOOTER_TOKENS: usize = 120;

impl Page {
    /// The page `args` ask for: `pattern` windows (`offset` matches skipped, `lines` matches at
    /// most, `chars` of context), else `chars` characters from character `offset`, else
    /// `lines` lines from line `offset` (both from 0).
    pub(crate) fn from_args(args: &RetrieveArgs, max_tokens: usize) -> Self {
        let selection = match (&args.pattern, args.chars) {
            (Some(pattern), context) if !pattern.is_empty() => Selection::Pattern {
                pattern: pattern.clone(),
                context: context.unwrap_or(DEFAULT_PATTERN_CONTEXT),
                ignore_case: args.ignore_case,
                skip: args.offset,
                max_matches: args.lines.unwrap_or(DEFAULT_MATCHES).max(1),
            },
            (_, Some(length)) => Selection::Chars {
                offset: args.offset,
                length,
            },
            _ => Selection::Lines {
                start: args.offset.saturating_add(1),
                end: args
                    .offset
                    .saturating_add(args.lines.unwrap_or(DEFAULT_LINES).max(1)),
            },
        };
        Page {
            selection,
            max_tokens,
        }
    }
}

/// The `condense_retrieve` arguments that ask for `selection` of `reference`.
pub(crate) fn arguments_for(reference: &str, selection: &Selection) -> serde_json::Value {
    let mut args = serde_json::json!({"ref": reference});
    match selection {
        Selection::Lines { start, end } => {
            args["offset"] = (start - 1).into();
            args["lines"] = (end - start + 1).into();
        }
        Selection::Chars { offset, length } => {
            args["offset"] = (*offset).into();
            args["chars"] = (*length).into();
        }
        Selection::Pattern {
            pattern,
            context,
            ignore_case,
            skip,
            max_matches,
        } => {
            args["pattern"] = pattern.as_str().into();
            args["offset"] = (*skip).into();
            args["lines"] = (*max_matches).into();
            args["chars"] = (*context).into();
            if *ignore_case {
                args["ignore_case"] = true.into();
            }
        }
        _ => {}
    }
    args
}

/// Returns a page of the original kept under `reference` by the first of `engines` that
/// knows it (after a reload, the engines of earlier configurations still answer for their
/// refs), ending with the original's size and the exact arguments that continue it.
pub(crate) async fn retrieve(
    engines: &[&Condenser],
    owner: Option<&str>,
    reference: &str,
    page: &Page,
) -> Result<String, RetrieveError> {
    let mut answer = Err(RetrieveError::UnknownRef(reference.to_owned()));
    let body_tokens = page.max_tokens.saturating_sub(FOOTER_TOKENS).max(1);
    for engine in engines {
        answer = engine
            .retrieve_page_as(owner, reference, page.selection.clone(), body_tokens)
            .await;
        if !matches!(answer, Err(RetrieveError::UnknownRef(_))) {
            break;
        }
    }
    let found = answer?;
    let next = match &found.next {
        Some(next) => format!("continue with {}", arguments_for(reference, next)),
        None => "nothing follows".to_owned(),
    };
    let separator = if found.text.ends_with('\n') || found.text.is_empty() {
        ""
    } else {
        "\n"
    };
    Ok(format!(
        "{}{separator}[condense: {}; the original: {} lines, {} characters; {next}]",
        found.text, found.range, found.total_lines, found.total_chars
    ))
}
