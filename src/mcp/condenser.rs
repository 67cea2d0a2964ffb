//! The one seam between the proxy and the condensing engine.
//!
//! The proxy hands each `tools/call` result, the summarize tools' content and retrieval
//! requests to a [`ResultCondenser`]; the engine answers (see `engine.rs`). Keeping the seam
//! narrow keeps rmcp's types on this side of it.

use std::fmt;
use std::future::Future;
use std::pin::Pin;

use rmcp::model::CallToolResult;
use serde_json::Value;

use crate::methods::chunk::ChunkStrategy;

use super::settings::ToolSettings;

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One tool result to condense, and what is known about the call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CondenseRequest<'a> {
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a Value,
    pub(crate) query: Option<&'a str>,
    pub(crate) settings: &'a ToolSettings,
    /// An explicit budget (also the threshold), from `call_tool_summarized`.
    pub(crate) budget_override: Option<usize>,
}

/// What the condenser made of a result.
#[derive(Debug)]
pub(crate) struct Condensed {
    pub(crate) result: CallToolResult,
    /// Whether the text was replaced (and `structuredContent` policy applies).
    pub(crate) condensed: bool,
}

/// Content to summarize on request (the `summarize` and `summarize_for_extraction` tools).
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
}

/// Which part of an original to return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Selection {
    /// The first line to return, from 0.
    pub(crate) offset: usize,
    /// How many lines at most.
    pub(crate) lines: usize,
    /// Only lines containing this text (case-insensitive), with their line numbers.
    pub(crate) pattern: Option<String>,
    /// The answer's size cap in tokens.
    pub(crate) max_tokens: usize,
}

/// Why a retrieval failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum RetrieveError {
    #[error("no original is kept under ref `{0}` (it may have expired)")]
    UnknownRef(String),
    #[error("{0}")]
    BadSelection(String),
}

/// Condenses tool results, summarizes content and returns originals by ref.
pub(crate) trait ResultCondenser: Send + Sync + fmt::Debug + 'static {
    /// Condenses `result` when the policy says so; never fails (a failure forwards the result).
    fn condense<'a>(
        &'a self,
        request: CondenseRequest<'a>,
        result: CallToolResult,
    ) -> BoxFuture<'a, Condensed>;

    /// Summarizes content to at most `max_output_tokens`, unchanged when it already fits.
    fn summarize<'a>(&'a self, request: SummarizeRequest<'a>) -> BoxFuture<'a, String>;

    /// Returns part of an original kept under `reference`.
    fn retrieve<'a>(
        &'a self,
        reference: &'a str,
        selection: &'a Selection,
    ) -> BoxFuture<'a, Result<String, RetrieveError>>;
}
