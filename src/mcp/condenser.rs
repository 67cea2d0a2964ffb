//! The one seam between the proxy and the condensing engine.
//!
//! The proxy hands each `tools/call` result, the summarize tools' content and retrieval
//! requests to a [`ResultCondenser`]. [`LocalCondenser`] answers with the crate's exact token
//! counter and extractive compressor and keeps originals in memory, so the proxy condenses with
//! no LLM configured.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use super::settings::{ToolMode, ToolSettings};
use crate::TokenCounter;
use crate::methods::extract::{ExtractHints, extract};

pub(crate) type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One tool result to condense, and what is known about the call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CondenseRequest<'a> {
    pub(crate) tool: &'a str,
    pub(crate) arguments: &'a Value,
    pub(crate) query: Option<&'a str>,
    pub(crate) settings: &'a ToolSettings,
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

/// Condenses with the local extractive compressor; originals kept in a bounded in-memory cache.
#[derive(Clone)]
pub(crate) struct LocalCondenser {
    counter: TokenCounter,
    originals: moka::future::Cache<String, Arc<str>>,
}

impl fmt::Debug for LocalCondenser {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LocalCondenser")
            .field("encoding", &self.counter.encoding())
            .field("originals", &self.originals.entry_count())
            .finish()
    }
}

/// Originals kept at most: the cache evicts the least recently used beyond this many bytes.
const ORIGINALS_MAX_BYTES: u64 = 256 * 1024 * 1024;

impl LocalCondenser {
    pub(crate) fn new(counter: TokenCounter) -> Self {
        let originals = moka::future::Cache::builder()
            .weigher(|_key: &String, value: &Arc<str>| {
                u32::try_from(value.len()).unwrap_or(u32::MAX)
            })
            .max_capacity(ORIGINALS_MAX_BYTES)
            .build();
        LocalCondenser { counter, originals }
    }

    async fn keep(&self, text: &str) -> String {
        let reference = format!("{:032x}", xxhash_rust::xxh3::xxh3_128(text.as_bytes()));
        self.originals
            .insert(reference.clone(), Arc::from(text))
            .await;
        reference
    }

    /// Condenses `text` to `budget` tokens, the header included.
    async fn condense_text(
        &self,
        text: &str,
        request: &CondenseRequest<'_>,
        is_error: bool,
    ) -> String {
        let before = self.counter.count(text);
        let reference = self.keep(text).await;
        let header_for = |after: usize| {
            format!(
                "[condensed by condense: extract, {before} → {after} tokens; original kept as ref {reference}; \
                 call condense_retrieve with this ref (offset/lines or pattern) for more]\n"
            )
        };
        // The header's own size depends on the final count, which is at most the budget:
        // measuring it with the budget in it is an upper bound.
        let header_tokens = self
            .counter
            .count(&header_for(request.settings.budget_tokens));
        let body_budget = request.settings.budget_tokens.saturating_sub(header_tokens);
        let hints = ExtractHints {
            query: request.query,
            tool: Some(request.tool),
            arguments: Some(request.arguments),
        };
        let body = if is_error {
            // An error's first lines say what went wrong: keep them verbatim, then extract.
            let head = self.counter.prefix_within(text, body_budget / 2);
            let rest = &text[head.len()..];
            let tail = extract(rest, &hints, body_budget - body_budget / 2, &self.counter);
            format!("{head}\n…\n{tail}")
        } else {
            extract(text, &hints, body_budget, &self.counter)
        };
        let body = self.counter.prefix_within(&body, body_budget);
        let after = header_tokens + self.counter.count(body);
        format!("{}{body}", header_for(after))
    }
}

impl ResultCondenser for LocalCondenser {
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
            let text = joined_text(&result.content);
            if !self
                .counter
                .exceeds(&text, request.settings.threshold_tokens)
            {
                return Condensed {
                    result,
                    condensed: false,
                };
            }
            let is_error = result.is_error.unwrap_or(false);
            let condensed_text = self.condense_text(&text, &request, is_error).await;
            let mut result = result;
            // The condensed text takes the place of the first text block; images, audio,
            // resources and links stay where they were.
            let mut content = Vec::with_capacity(result.content.len());
            let mut condensed_text = Some(condensed_text);
            for block in result.content.drain(..) {
                match block {
                    ContentBlock::Text(_) => {
                        if let Some(text) = condensed_text.take() {
                            content.push(ContentBlock::text(text));
                        }
                    }
                    other => content.push(other),
                }
            }
            result.content = content;
            Condensed {
                result,
                condensed: true,
            }
        })
    }

    fn summarize<'a>(&'a self, request: SummarizeRequest<'a>) -> BoxFuture<'a, String> {
        Box::pin(async move {
            if !self
                .counter
                .exceeds(request.content, request.max_output_tokens)
            {
                return request.content.to_owned();
            }
            let hints = ExtractHints {
                query: request.focus,
                tool: Some(if request.extraction {
                    "summarize_for_extraction"
                } else {
                    "summarize"
                }),
                arguments: None,
            };
            let body = extract(
                request.content,
                &hints,
                request.max_output_tokens,
                &self.counter,
            );
            self.counter
                .prefix_within(&body, request.max_output_tokens)
                .to_owned()
        })
    }

    fn retrieve<'a>(
        &'a self,
        reference: &'a str,
        selection: &'a Selection,
    ) -> BoxFuture<'a, Result<String, RetrieveError>> {
        Box::pin(async move {
            let original = self
                .originals
                .get(reference)
                .await
                .ok_or_else(|| RetrieveError::UnknownRef(reference.to_owned()))?;
            Ok(select(&original, selection, &self.counter))
        })
    }
}

/// The text of all text blocks, in order, one block per paragraph.
pub(crate) fn joined_text(content: &[ContentBlock]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.as_str()))
        .collect();
    texts.join("\n")
}

/// Pages or greps `original` by `selection`, capped at `selection.max_tokens`.
pub(crate) fn select(original: &str, selection: &Selection, counter: &TokenCounter) -> String {
    let all: Vec<&str> = original.lines().collect();
    let total = all.len();
    let numbered: Vec<(usize, &str)> = match &selection.pattern {
        Some(pattern) => {
            let needle = pattern.to_lowercase();
            all.iter()
                .enumerate()
                .filter(|(_, line)| line.to_lowercase().contains(&needle))
                .skip(selection.offset)
                .take(selection.lines)
                .map(|(number, line)| (number, *line))
                .collect()
        }
        None => all
            .iter()
            .enumerate()
            .skip(selection.offset)
            .take(selection.lines)
            .map(|(number, line)| (number, *line))
            .collect(),
    };
    let mut out = String::new();
    let mut used = 0;
    let mut shown = 0;
    for (number, line) in &numbered {
        let entry = format!("{:>6}\t{line}\n", number + 1);
        let cost = counter.count(&entry);
        if used + cost > selection.max_tokens && shown > 0 {
            break;
        }
        let entry = if used + cost > selection.max_tokens {
            // A single line larger than the cap: show what fits of it.
            format!("{}…\n", counter.prefix_within(&entry, selection.max_tokens))
        } else {
            entry
        };
        used += cost;
        shown += 1;
        out.push_str(&entry);
    }
    let what = match &selection.pattern {
        Some(pattern) => format!("matches of {pattern:?}"),
        None => "lines".to_owned(),
    };
    let next = selection.offset + shown;
    let more = if shown < numbered.len() || selection.offset + numbered.len() < total {
        format!("; for more, call again with offset={next}")
    } else {
        String::new()
    };
    format!(
        "[original: {total} lines; showing {shown} {what} from offset {}{more}]\n{out}",
        selection.offset
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(threshold: usize, budget: usize) -> ToolSettings {
        ToolSettings {
            threshold_tokens: threshold,
            budget_tokens: budget,
            ..ToolSettings::default()
        }
    }

    fn request<'a>(settings: &'a ToolSettings, arguments: &'a Value) -> CondenseRequest<'a> {
        CondenseRequest {
            tool: "read_file",
            arguments,
            query: None,
            settings,
        }
    }

    fn large_text() -> String {
        (0..2000)
            .map(|i| format!("line {i}: INFO everything is fine here\n"))
            .collect()
    }

    #[tokio::test]
    async fn small_result_passes_unchanged() {
        let condenser = LocalCondenser::new(TokenCounter::default());
        let settings = settings(100, 50);
        let arguments = Value::Null;
        let original = CallToolResult::success(vec![ContentBlock::text("hello")]);
        let out = condenser
            .condense(request(&settings, &arguments), original.clone())
            .await;
        assert!(!out.condensed);
        assert_eq!(out.result, original);
    }

    #[tokio::test]
    async fn large_result_fits_budget_and_names_its_ref() {
        let condenser = LocalCondenser::new(TokenCounter::default());
        let settings = settings(100, 200);
        let arguments = Value::Null;
        let original = CallToolResult::success(vec![ContentBlock::text(large_text())]);
        let out = condenser
            .condense(request(&settings, &arguments), original)
            .await;
        assert!(out.condensed);
        let text = joined_text(&out.result.content);
        assert!(TokenCounter::default().count(&text) <= 200, "{text}");
        assert!(text.starts_with("[condensed by condense"), "{text}");
        let reference = text
            .split("ref ")
            .nth(1)
            .and_then(|rest| rest.split(';').next())
            .expect("a ref in the header");
        let selection = Selection {
            offset: 1999,
            lines: 5,
            pattern: None,
            max_tokens: 100,
        };
        let page = condenser
            .retrieve(reference, &selection)
            .await
            .expect("kept");
        assert!(page.contains("line 1999: INFO"), "{page}");
    }

    #[tokio::test]
    async fn images_stay_in_place_when_text_is_condensed() {
        let condenser = LocalCondenser::new(TokenCounter::default());
        let settings = settings(100, 200);
        let arguments = Value::Null;
        let image = ContentBlock::image("aGVsbG8=", "image/png");
        let original =
            CallToolResult::success(vec![image.clone(), ContentBlock::text(large_text())]);
        let out = condenser
            .condense(request(&settings, &arguments), original)
            .await;
        assert_eq!(out.result.content.len(), 2);
        assert_eq!(out.result.content[0], image);
    }

    #[tokio::test]
    async fn error_results_keep_their_first_line() {
        let condenser = LocalCondenser::new(TokenCounter::default());
        let settings = settings(100, 200);
        let arguments = Value::Null;
        let text = format!("Error: ENOENT no such file /data/x.log\n{}", large_text());
        let original = CallToolResult::error(vec![ContentBlock::text(text)]);
        let out = condenser
            .condense(request(&settings, &arguments), original)
            .await;
        assert_eq!(out.result.is_error, Some(true));
        assert!(joined_text(&out.result.content).contains("Error: ENOENT no such file"));
    }

    #[tokio::test]
    async fn passthrough_mode_never_condenses() {
        let condenser = LocalCondenser::new(TokenCounter::default());
        let mut settings = settings(10, 5);
        settings.mode = ToolMode::Passthrough;
        let arguments = Value::Null;
        let original = CallToolResult::success(vec![ContentBlock::text(large_text())]);
        let out = condenser
            .condense(request(&settings, &arguments), original)
            .await;
        assert!(!out.condensed);
    }

    #[tokio::test]
    async fn unknown_ref_is_an_error() {
        let condenser = LocalCondenser::new(TokenCounter::default());
        let selection = Selection {
            offset: 0,
            lines: 5,
            pattern: None,
            max_tokens: 100,
        };
        assert!(condenser.retrieve("nope", &selection).await.is_err());
    }

    #[test]
    fn select_greps_case_insensitively_with_line_numbers() {
        let text = "alpha\nERROR one\nbeta\nerror two\n";
        let selection = Selection {
            offset: 0,
            lines: 10,
            pattern: Some("error".into()),
            max_tokens: 100,
        };
        let out = select(text, &selection, &TokenCounter::default());
        assert!(out.contains("     2\tERROR one"), "{out}");
        assert!(out.contains("     4\terror two"), "{out}");
        assert!(!out.contains("alpha"), "{out}");
    }

    #[test]
    fn select_pages_and_says_where_to_continue() {
        let text: String = (0..100).map(|i| format!("row {i}\n")).collect();
        let selection = Selection {
            offset: 10,
            lines: 5,
            pattern: None,
            max_tokens: 1000,
        };
        let out = select(&text, &selection, &TokenCounter::default());
        assert!(out.contains("row 10") && out.contains("row 14") && !out.contains("row 15"));
        assert!(out.contains("offset=15"), "{out}");
    }

    #[tokio::test]
    async fn summarize_returns_small_content_unchanged() {
        let condenser = LocalCondenser::new(TokenCounter::default());
        let out = condenser
            .summarize(SummarizeRequest {
                content: "short",
                max_output_tokens: 100,
                focus: None,
                extraction: false,
            })
            .await;
        assert_eq!(out, "short");
    }

    #[tokio::test]
    async fn summarize_fits_max_output_tokens() {
        let condenser = LocalCondenser::new(TokenCounter::default());
        let content = large_text();
        let out = condenser
            .summarize(SummarizeRequest {
                content: &content,
                max_output_tokens: 50,
                focus: Some("line 7"),
                extraction: true,
            })
            .await;
        assert!(TokenCounter::default().count(&out) <= 50);
    }
}
