//! The engine's request-side value types: requests, hooks and the captured call. What a call
//! produces is `crate::outcome`'s.

use serde_json::Value;

use crate::config::Mode;
use crate::methods::chunk::ChunkStrategy;
use crate::outcome::Condensed;
use crate::tool::ToolRequest;

/// What the engine knows about one text to condense besides the text itself.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct Request<'a> {
    /// The tool's name; selects the config rule. Empty when unknown.
    pub tool: &'a str,
    /// What the agent is looking for.
    pub query: Option<&'a str>,
    /// The tool's arguments.
    pub arguments: Option<&'a Value>,
    /// An explicit budget, overriding the rule's (and its threshold, when lower).
    pub budget_tokens: Option<usize>,
    /// An explicit mode, overriding the rule's.
    pub mode: Option<Mode>,
    /// Whether the tool reported an error.
    pub is_error: bool,
    /// Extraction mode: the kinds of detail the LLM must keep verbatim (names, ids,
    /// relationships, numbers). `None` is a plain query-aware summary.
    pub schema_hint: Option<&'a str>,
    /// The whole output's size in bytes when the text handed over is only its start (the
    /// caller stopped reading at `[limits] max_input_bytes`). `None`: the text is the whole
    /// output.
    pub whole_bytes: Option<usize>,
    /// How a map-reduce cuts this text, overriding `[mapreduce] strategy`. Only text too large
    /// for one LLM call is chunked; extraction mode always chunks semantically.
    pub chunk_strategy: Option<ChunkStrategy>,
    /// Who may read the original this call keeps: `None`, anyone who has its ref; `Some`,
    /// only a retrieval naming the same owner (the HTTP proxy names the MCP session, so one
    /// session cannot read another's originals, even with the ref).
    pub owner: Option<&'a str>,
}

impl<'a> Request<'a> {
    /// A request for output of `tool`.
    pub fn new(tool: &'a str) -> Self {
        Request {
            tool,
            ..Request::default()
        }
    }

    /// Sets the query.
    #[must_use]
    pub fn with_query(mut self, query: &'a str) -> Self {
        self.query = Some(query);
        self
    }

    /// Sets the tool's arguments.
    #[must_use]
    pub fn with_arguments(mut self, arguments: &'a Value) -> Self {
        self.arguments = Some(arguments);
        self
    }

    /// Sets an explicit budget.
    #[must_use]
    pub fn with_budget_tokens(mut self, budget: usize) -> Self {
        self.budget_tokens = Some(budget);
        self
    }

    /// Sets an explicit mode.
    #[must_use]
    pub fn with_mode(mut self, mode: Mode) -> Self {
        self.mode = Some(mode);
        self
    }

    /// Marks the output as a tool error.
    #[must_use]
    pub fn with_error(mut self, is_error: bool) -> Self {
        self.is_error = is_error;
        self
    }

    /// Turns on extraction mode: the LLM keeps every detail of these kinds.
    #[must_use]
    pub fn with_schema_hint(mut self, hint: &'a str) -> Self {
        self.schema_hint = Some(hint);
        self
    }

    /// Says that the text is only the start of an output of `bytes` bytes, so the result can
    /// say how much was left out.
    #[must_use]
    pub fn with_whole_bytes(mut self, bytes: usize) -> Self {
        self.whole_bytes = Some(bytes);
        self
    }

    /// Sets how a map-reduce cuts this text, overriding the configured strategy.
    ///
    /// ```
    /// use condense::Request;
    /// use condense::methods::chunk::ChunkStrategy;
    ///
    /// let request = Request::new("read_file").with_chunk_strategy(ChunkStrategy::Token);
    /// assert_eq!(request.chunk_strategy, Some(ChunkStrategy::Token));
    /// ```
    #[must_use]
    pub fn with_chunk_strategy(mut self, strategy: ChunkStrategy) -> Self {
        self.chunk_strategy = Some(strategy);
        self
    }

    /// Scopes the kept original to `owner`: only [`Condenser::retrieve_as`] with the same
    /// owner reads it.
    ///
    /// [`Condenser::retrieve_as`]: crate::Condenser::retrieve_as
    #[must_use]
    pub fn with_owner(mut self, owner: &'a str) -> Self {
        self.owner = Some(owner);
        self
    }
}

/// A hook's answer about an outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Deliver it.
    Keep,
    /// Do not deliver it: the next rung of the ladder answers instead. Ignored for pass-through
    /// results, cached results and the last rung.
    Veto,
}

/// Receives every outcome before it is delivered: to export metrics, or to veto a summary and
/// keep the fallback.
pub trait Hook: Send + Sync + 'static {
    /// Called once per candidate outcome.
    fn on_outcome(&self, outcome: &Condensed, request: &Request<'_>) -> Verdict;
}

impl<F> Hook for F
where
    F: Fn(&Condensed, &Request<'_>) -> Verdict + Send + Sync + 'static,
{
    fn on_outcome(&self, outcome: &Condensed, request: &Request<'_>) -> Verdict {
        self(outcome, request)
    }
}

/// What the layer captures from a request before the inner service consumes it.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct CallInfo {
    /// The tool's name.
    pub tool: String,
    /// The tool's arguments.
    pub arguments: Option<Value>,
    /// What the agent is looking for.
    pub query: Option<String>,
    /// An explicit budget.
    pub budget_tokens: Option<usize>,
    /// Who may read the originals the call keeps ([`ToolRequest::owner`]).
    pub owner: Option<String>,
}

impl CallInfo {
    /// Captures what the engine needs from `request`.
    pub fn from_request<Q: ToolRequest>(request: &Q) -> Self {
        CallInfo {
            tool: request.tool_name().to_owned(),
            arguments: request.arguments().cloned(),
            query: request.query().map(str::to_owned),
            budget_tokens: request.budget_tokens(),
            owner: request.owner().map(str::to_owned),
        }
    }

    /// The engine request for this call.
    pub fn request(&self) -> Request<'_> {
        Request {
            query: self.query.as_deref(),
            arguments: self.arguments.as_ref(),
            budget_tokens: self.budget_tokens,
            owner: self.owner.as_deref(),
            ..Request::new(&self.tool)
        }
    }
}
