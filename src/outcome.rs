//! What condensing one text produced: the method, the outcome with its counts, and the typed
//! `_meta.condense` entry a result carries. A leaf of the crate: the engine makes these, the
//! store caches them and the tool types carry them, so none of those depends on another for
//! them.

use std::fmt;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::limits::InputCut;
use crate::tokens::{Encoding, TokenCounter};

/// Which method produced a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub enum Method {
    /// Not condensed: the original text.
    #[serde(rename = "passthrough")]
    PassThrough,
    /// An LLM summary in one call.
    #[serde(rename = "llm")]
    Llm,
    /// An LLM summary by map-reduce over chunks.
    #[serde(rename = "llm-map-reduce")]
    MapReduce,
    /// The extractive, query-aware compressor.
    #[serde(rename = "extract")]
    Extract,
    /// Head and tail truncation.
    #[serde(rename = "truncate")]
    Truncate,
}

impl Method {
    /// The method's name, as shown in headers, metadata and the CLI's JSON.
    pub fn name(self) -> &'static str {
        match self {
            Method::PassThrough => "passthrough",
            Method::Llm => "llm",
            Method::MapReduce => "llm-map-reduce",
            Method::Extract => "extract",
            Method::Truncate => "truncate",
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The outcome of condensing one text.
///
/// The token counts are read through [`Condensed::tokens_before`] and
/// [`Condensed::tokens_after`]: a condensed text's are known (its header states them), and a
/// pass-through text's are counted on first read, so a result that is only handed on never
/// pays for a count (nor, in a fresh process, for building the tokenizer's vocabulary).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Condensed {
    /// The text to hand the agent: the original, or the header line and the condensed body.
    pub text: String,
    /// The method that produced `text`.
    pub method: Method,
    counts: Counts,
    /// The ref under which the original is kept, when condensed.
    pub reference: Option<String>,
    /// Whether the result came from the cache.
    pub cached: bool,
    /// Time spent, including waiting for the LLM.
    pub elapsed: Duration,
    /// Why a higher rung did not answer, when one did not (e.g. the LLM's error).
    pub fallback: Option<String>,
    /// Set when the input was larger than `[limits] max_input_bytes` and only its start was
    /// considered; `text` then holds a marker line saying so.
    pub input_cut: Option<InputCut>,
}

/// An outcome's token counts.
#[derive(Debug, Clone)]
enum Counts {
    /// Counted while condensing.
    Known { before: usize, after: usize },
    /// A pass-through's, counted when first read: `text[..considered]` is the original (its
    /// count is `before` when the policy already made it exactly), the rest the input-cut marker.
    OnRead {
        encoding: Encoding,
        considered: usize,
        before: Option<usize>,
        counted: OnceLock<(usize, usize)>,
    },
}

impl PartialEq for Condensed {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
            && self.method == other.method
            && self.reference == other.reference
            && self.cached == other.cached
            && self.elapsed == other.elapsed
            && self.fallback == other.fallback
            && self.input_cut == other.input_cut
            && self.tokens_before() == other.tokens_before()
            && self.tokens_after() == other.tokens_after()
    }
}

impl Condensed {
    /// An outcome whose counts are known.
    pub(crate) fn counted(text: String, method: Method, before: usize, after: usize) -> Self {
        Self::with_counts(text, method, Counts::Known { before, after })
    }

    /// A pass-through outcome, counted by `encoding` when first read: its first `considered`
    /// bytes are the original (of `before` tokens, when already counted).
    pub(crate) fn pass_through(
        text: String,
        encoding: Encoding,
        considered: usize,
        before: Option<usize>,
    ) -> Self {
        let counts = Counts::OnRead {
            encoding,
            considered,
            before,
            counted: OnceLock::new(),
        };
        Self::with_counts(text, Method::PassThrough, counts)
    }

    fn with_counts(text: String, method: Method, counts: Counts) -> Self {
        Condensed {
            text,
            method,
            counts,
            reference: None,
            cached: false,
            elapsed: Duration::ZERO,
            fallback: None,
            input_cut: None,
        }
    }

    /// Tokens in the original (the part considered, when the input was cut). Exact; for a
    /// pass-through result counted on the first call.
    pub fn tokens_before(&self) -> usize {
        self.counts().0
    }

    /// Tokens in `text`, header included. Exact; for a pass-through result counted on the
    /// first call.
    pub fn tokens_after(&self) -> usize {
        self.counts().1
    }

    fn counts(&self) -> (usize, usize) {
        match &self.counts {
            Counts::Known { before, after } => (*before, *after),
            Counts::OnRead {
                encoding,
                considered,
                before,
                counted,
            } => *counted.get_or_init(|| {
                let counter = TokenCounter::new(*encoding);
                let (original, marker) = self.text.split_at(*considered);
                let before = before.unwrap_or_else(|| counter.count(original));
                // The original is not counted twice: its count plus the marker's.
                (before, before + counter.count(marker))
            }),
        }
    }

    /// Whether the text was condensed (anything but pass-through).
    pub fn was_condensed(&self) -> bool {
        self.method != Method::PassThrough
    }

    /// Whether `text` differs from the input: condensed, or cut at the input limit.
    pub fn was_changed(&self) -> bool {
        self.was_condensed() || self.input_cut.is_some()
    }

    /// What a result's metadata says about this outcome.
    pub fn meta(&self) -> CondenseMeta {
        CondenseMeta {
            method: self.method,
            tokens_before: self.tokens_before(),
            tokens_after: self.tokens_after(),
            reference: self.reference.clone(),
            cached: self.cached,
            fallback: self.fallback.clone(),
            input_cut: self.input_cut.clone(),
        }
    }

    /// The outcome as a JSON object, for a result's metadata slot (`_meta.condense`).
    pub fn to_meta(&self) -> Value {
        self.meta().to_json()
    }
}

/// The typed form of a result's `_meta.condense` entry: what condensing did to one text part.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct CondenseMeta {
    /// The method that produced the text.
    pub method: Method,
    /// Tokens in the original.
    pub tokens_before: usize,
    /// Tokens in the text handed on, header included.
    pub tokens_after: usize,
    /// The ref under which the original is kept, when condensed or cut.
    #[serde(rename = "ref")]
    pub reference: Option<String>,
    /// Whether the result came from the cache.
    pub cached: bool,
    /// Why a higher rung did not answer, when one did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fallback: Option<String>,
    /// Set when only the start of a too-large input was considered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_cut: Option<InputCut>,
}

impl CondenseMeta {
    /// The entry as JSON, as it is written into `_meta.condense`.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Reads a `_meta.condense` entry: one object, or an array of them for a result whose
    /// several parts were condensed. Entries of another shape are skipped.
    pub fn from_entry(entry: &Value) -> Vec<CondenseMeta> {
        let one = |value: &Value| serde_json::from_value::<CondenseMeta>(value.clone()).ok();
        match entry {
            Value::Array(entries) => entries.iter().filter_map(one).collect(),
            other => one(other).into_iter().collect(),
        }
    }
}
