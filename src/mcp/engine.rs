//! The condensing engine behind the proxy: [`Condenser`] answers the [`ResultCondenser`] seam.
//!
//! Results cross from rmcp's types to the crate's through their MCP JSON shape, so the engine
//! never sees rmcp.

use rmcp::model::CallToolResult;

use super::condenser::{
    BoxFuture, CondenseRequest, Condensed, ResultCondenser, RetrieveError, Selection,
    SummarizeRequest,
};
use super::settings::ToolMode;
use crate::store::Selection as StoreSelection;
use crate::{CallInfo, Condenser, Mode, Request, TokenCounter, ToolResult};

/// The crate's engine as the proxy's condenser.
#[derive(Debug, Clone)]
pub(crate) struct EngineCondenser {
    engine: Condenser,
    counter: TokenCounter,
}

impl EngineCondenser {
    pub(crate) fn new(engine: Condenser) -> Self {
        let counter = TokenCounter::new(engine.config().defaults.encoding);
        EngineCondenser { engine, counter }
    }
}

impl ResultCondenser for EngineCondenser {
    fn condense<'a>(
        &'a self,
        request: CondenseRequest<'a>,
        result: CallToolResult,
    ) -> BoxFuture<'a, Condensed> {
        Box::pin(async move {
            if request.settings.mode == ToolMode::Passthrough {
                return Condensed {
                    result,
                    condensed: false,
                };
            }
            let Ok(json) = serde_json::to_value(&result) else {
                return Condensed {
                    result,
                    condensed: false,
                };
            };
            let call = CallInfo {
                tool: request.tool.to_owned(),
                arguments: Some(request.arguments.clone()),
                query: request.query.map(str::to_owned),
                budget_tokens: request.budget_override,
            };
            let condensed = self
                .engine
                .condense_response(&call, ToolResult::from_mcp_json(&json))
                .await;
            let was_condensed = condensed
                .meta
                .as_ref()
                .is_some_and(|meta| meta.contains_key("condense"));
            if !was_condensed {
                // Forward the upstream's result itself, byte for byte.
                return Condensed {
                    result,
                    condensed: false,
                };
            }
            match serde_json::from_value::<CallToolResult>(condensed.to_mcp_json()) {
                Ok(rebuilt) => Condensed {
                    result: rebuilt,
                    condensed: true,
                },
                Err(error) => {
                    tracing::warn!(%error, "condensed result did not convert back; forwarding the original");
                    Condensed {
                        result,
                        condensed: false,
                    }
                }
            }
        })
    }

    fn summarize<'a>(&'a self, request: SummarizeRequest<'a>) -> BoxFuture<'a, String> {
        Box::pin(async move {
            // Seed 000's bypass: content that already fits comes back unchanged.
            if !self
                .counter
                .exceeds(request.content, request.max_output_tokens)
            {
                return request.content.to_owned();
            }
            let tool = if request.extraction {
                "summarize_for_extraction"
            } else {
                "summarize"
            };
            let mut engine_request = Request::new(tool)
                .budget(Some(request.max_output_tokens))
                .chunk_strategy(request.strategy);
            engine_request = if request.extraction {
                engine_request.schema_hint(request.focus)
            } else {
                engine_request.query(request.focus)
            };
            let outcome = self.engine.condense(request.content, &engine_request).await;
            if outcome.was_condensed() {
                outcome.text
            } else {
                // The rules say pass-through for these tools; the caller's limit still holds.
                let request = Request::new(tool)
                    .budget(Some(request.max_output_tokens))
                    .mode(Some(Mode::Truncate));
                self.engine.condense(&outcome.text, &request).await.text
            }
        })
    }

    fn retrieve<'a>(
        &'a self,
        reference: &'a str,
        selection: &'a Selection,
    ) -> BoxFuture<'a, Result<String, RetrieveError>> {
        Box::pin(async move {
            let store_selection = match &selection.pattern {
                Some(pattern) => StoreSelection::Pattern {
                    pattern: pattern.clone(),
                    context: 0,
                    max_matches: selection.offset + selection.lines,
                },
                None => StoreSelection::Lines {
                    start: selection.offset + 1,
                    end: selection.offset + selection.lines,
                },
            };
            let text = self
                .engine
                .retrieve(reference, store_selection)
                .await
                .map_err(|error| match error {
                    crate::RetrieveError::UnknownRef(reference) => {
                        RetrieveError::UnknownRef(reference)
                    }
                    other => RetrieveError::BadSelection(other.to_string()),
                })?;
            let text = if selection.pattern.is_some() {
                // The store returns the first matches; skip the ones already seen.
                text.lines()
                    .skip(selection.offset)
                    .collect::<Vec<_>>()
                    .join("\n")
            } else {
                text
            };
            let capped = self.counter.prefix_within(&text, selection.max_tokens);
            if capped.len() < text.len() {
                Ok(format!(
                    "{capped}\n[cut at {} tokens: ask for fewer lines or a later offset]",
                    selection.max_tokens
                ))
            } else {
                Ok(text)
            }
        })
    }
}
