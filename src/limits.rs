//! The input-size limit: how much of one tool output condense looks at.
//!
//! Everything condense does with an output (counting, detecting its kind, extracting, chunking,
//! summarizing) costs memory and time in proportion to its size. A tool that prints 10 GB, by
//! mistake or on purpose, must not take the process down with it, so every output is cut to
//! `[limits] max_input_bytes` before any of that work starts, and the result says so in a marker
//! line. The cut falls after the last newline near the limit, so no line is split when lines
//! are of any sensible length, and never inside a character.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::methods::truncate::group;
use crate::tokens::floor_char_boundary;

/// How far back from the limit a newline is looked for. Past it the cut falls at a character
/// boundary instead: one very long line is cut rather than dropped whole.
const LINE_SEARCH_BYTES: usize = 1 << 20;

/// The part of an output that condense considers, and how large the whole was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub(crate) struct Considered<'t> {
    /// The start of the output that is counted, condensed or passed on.
    pub considered: &'t str,
    /// The whole output's size in bytes (at least `considered.len()`).
    pub whole_bytes: usize,
}

impl Considered<'_> {
    /// Whether part of the output is left out.
    pub(crate) fn is_cut(&self) -> bool {
        self.whole_bytes > self.considered.len()
    }
}

/// Cuts `text` to at most `max_bytes`, preferring a line boundary. `whole_bytes` is the size of
/// the whole output when `text` is already only its start (a reader stopped at the limit);
/// `None` means `text` is the whole output. A text that is known to be partial is cut at a line
/// boundary even when it is within the limit, so its last, partial line is not passed on as if
/// it were whole.
pub(crate) fn cut_input(
    text: &str,
    whole_bytes: Option<usize>,
    max_bytes: usize,
) -> Considered<'_> {
    let whole_bytes = whole_bytes.unwrap_or(0).max(text.len());
    if whole_bytes <= max_bytes && text.len() == whole_bytes {
        return Considered {
            considered: text,
            whole_bytes,
        };
    }
    let end = floor_char_boundary(text, max_bytes);
    let search_from = floor_char_boundary(text, end.saturating_sub(LINE_SEARCH_BYTES));
    let end = match text.as_bytes()[search_from..end]
        .iter()
        .rposition(|&b| b == b'\n')
    {
        Some(newline) => search_from + newline + 1,
        None => end,
    };
    Considered {
        considered: &text[..end],
        whole_bytes,
    }
}

/// What a result says about an input that was cut: how much was considered, and whether the
/// whole original can still be retrieved.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct InputCut {
    /// Bytes of the output that were considered.
    pub considered_bytes: usize,
    /// Bytes of the whole output.
    pub whole_bytes: usize,
    /// Whether the whole output, not only the considered part, is kept under the result's ref.
    pub whole_kept: bool,
}

impl InputCut {
    /// The marker line put into the result, naming the sizes and what is retrievable.
    pub fn marker(&self, reference: &str) -> String {
        let kept = if self.whole_kept {
            format!("the whole original is kept as {reference}")
        } else {
            format!(
                "only the first {} bytes are kept as {reference}, the rest cannot be retrieved",
                group(self.considered_bytes)
            )
        };
        format!(
            "[condense: input cut at {} of {} ({} of {} bytes, [limits] max_input_bytes); {kept}]",
            human_bytes(self.considered_bytes),
            human_bytes(self.whole_bytes),
            group(self.considered_bytes),
            group(self.whole_bytes),
        )
    }

    /// The cut as a JSON object, for a result's metadata.
    pub fn to_meta(&self) -> Value {
        json!({
            "considered_bytes": self.considered_bytes,
            "whole_bytes": self.whole_bytes,
            "whole_kept": self.whole_kept,
        })
    }
}

/// `67108864` → `64.0 MiB`: sizes as a person reads them.
fn human_bytes(bytes: usize) -> String {
    const UNITS: [&str; 4] = ["KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// What condensing a text holds at its peak, as a multiple of the text's size: the text
/// itself and the extractive compressor's units, rendered records and field values (measured
/// at 2.5–4.5× on arrays of small records, logs and tables; docs/benchmarks.md).
const WORKING_SET_FACTOR: usize = 4;

/// What passing a text through unchanged holds, as a multiple of its size: the result's copy
/// of it, and the joined copy a multi-part response is decided on.
const PASS_THROUGH_FACTOR: usize = 2;

/// The longest a call waits for other calls to release memory before it is truncated instead.
pub(crate) const MEMORY_WAIT: Duration = Duration::from_secs(2);

/// The memory that condensing calls may hold at once (`[limits] max_inflight_bytes`), shared
/// by every clone of one engine: a proxy's or a layer's calls together. Each call reserves what
/// its input is expected to cost before the LLM or the extractive rung runs, and releases it
/// when its result is made; a call that cannot reserve within [`MEMORY_WAIT`] is truncated,
/// which needs next to nothing, rather than growing the process.
#[derive(Debug, Clone)]
pub(crate) struct MemoryBudget {
    /// One permit per KiB, so that budgets beyond 4 GiB still fit the semaphore's `u32`.
    permits: Arc<Semaphore>,
    total_kib: u32,
}

/// A reservation of memory, released when dropped.
#[derive(Debug)]
pub(crate) struct MemoryPermit {
    _permit: OwnedSemaphorePermit,
}

/// Why a call could not reserve its memory: the reason a truncated result gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "memory budget: {doing} needs about {} and {} of [limits] max_inflight_bytes = {} {}; truncated instead",
    human_bytes(*needed),
    human_bytes(*available),
    human_bytes(*total),
    if needed > total { "is less than that" } else { "stayed free for too short" }
)]
pub(crate) struct MemoryRefused {
    /// What the memory was for: condensing, or passing the text through.
    doing: &'static str,
    needed: usize,
    available: usize,
    total: usize,
}

impl MemoryBudget {
    /// A budget of `max_bytes`; `None` when `max_bytes` is 0 (no budget).
    pub(crate) fn new(max_bytes: usize) -> Option<Self> {
        let total_kib = u32::try_from(max_bytes / 1024).unwrap_or(u32::MAX);
        (max_bytes > 0).then(|| MemoryBudget {
            permits: Arc::new(Semaphore::new(total_kib.max(1) as usize)),
            total_kib: total_kib.max(1),
        })
    }

    /// Reserves what condensing `text_bytes` of text is expected to hold, waiting until
    /// `wait_until` at most for other calls to release theirs.
    ///
    /// # Errors
    ///
    /// When the reservation is larger than the whole budget, or was not free in time.
    pub(crate) async fn reserve(
        &self,
        text_bytes: usize,
        wait_until: tokio::time::Instant,
    ) -> Result<MemoryPermit, MemoryRefused> {
        let needed = text_bytes.saturating_mul(WORKING_SET_FACTOR);
        self.reserve_for("condensing", needed, wait_until).await
    }

    /// As [`MemoryBudget::reserve`], for a text passed through unchanged: its result holds
    /// copies of it too, if no working set.
    ///
    /// # Errors
    ///
    /// As [`MemoryBudget::reserve`].
    pub(crate) async fn reserve_pass_through(
        &self,
        text_bytes: usize,
        wait_until: tokio::time::Instant,
    ) -> Result<MemoryPermit, MemoryRefused> {
        self.reserve_for(
            "passing it through",
            text_bytes.saturating_mul(PASS_THROUGH_FACTOR),
            wait_until,
        )
        .await
    }

    async fn reserve_for(
        &self,
        doing: &'static str,
        needed: usize,
        wait_until: tokio::time::Instant,
    ) -> Result<MemoryPermit, MemoryRefused> {
        let kib = u32::try_from(needed.div_ceil(1024))
            .unwrap_or(u32::MAX)
            .max(1);
        let refused = |budget: &Self| MemoryRefused {
            doing,
            needed,
            available: budget.permits.available_permits() * 1024,
            total: budget.total_kib as usize * 1024,
        };
        if kib > self.total_kib {
            return Err(refused(self));
        }
        let acquire = self.permits.clone().acquire_many_owned(kib);
        match tokio::time::timeout_at(wait_until, acquire).await {
            Ok(Ok(permit)) => Ok(MemoryPermit { _permit: permit }),
            _ => Err(refused(self)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cut_falls_after_the_last_whole_line_within_the_limit() {
        let text = "first line\nsecond line\nthird line\n";
        let cut = cut_input(text, None, 16);
        assert_eq!(cut.considered, "first line\n");
        assert_eq!(cut.whole_bytes, text.len());
        assert!(cut.is_cut());

        let whole = cut_input(text, None, 1024);
        assert_eq!(whole.considered, text);
        assert!(!whole.is_cut());
    }

    #[test]
    fn text_within_the_limit_is_whole() {
        let cut = cut_input("abc\ndef", None, 7);
        assert_eq!(cut.considered, "abc\ndef");
        assert!(!cut.is_cut());
    }

    #[test]
    fn cut_falls_after_the_last_newline_before_the_limit() {
        let cut = cut_input("abc\ndef\nghi\n", None, 10);
        assert_eq!(cut.considered, "abc\ndef\n");
        assert_eq!(cut.whole_bytes, 12);
    }

    #[test]
    fn one_long_line_is_cut_at_a_character_boundary() {
        let text = "é".repeat(100);
        let cut = cut_input(&text, None, 11);
        assert_eq!(cut.considered, "é".repeat(5));
    }

    #[test]
    fn a_known_partial_text_loses_its_partial_last_line() {
        let cut = cut_input("abc\nde", Some(100), 1024);
        assert_eq!(cut.considered, "abc\n");
        assert_eq!(cut.whole_bytes, 100);
        assert!(cut.is_cut());
    }

    #[test]
    fn marker_names_sizes_and_what_is_retrievable() {
        let cut = InputCut {
            considered_bytes: 64 << 20,
            whole_bytes: 100 << 20,
            whole_kept: false,
        };
        let marker = cut.marker("cx_1");
        assert!(marker.contains("64.0 MiB of 100.0 MiB"), "{marker}");
        assert!(
            marker.contains("67,108,864 of 104,857,600 bytes"),
            "{marker}"
        );
        assert!(marker.contains("cannot be retrieved"), "{marker}");
        let kept = InputCut {
            whole_kept: true,
            ..cut
        };
        assert!(
            kept.marker("cx_1")
                .contains("whole original is kept as cx_1")
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_waits_for_memory_then_is_refused_with_the_reason() {
        let budget = MemoryBudget::new(6 << 20).unwrap();
        let wait = || tokio::time::Instant::now() + MEMORY_WAIT;
        let held = budget.reserve(1 << 20, wait()).await.unwrap();
        let refused = budget.reserve(1 << 20, wait()).await.unwrap_err();
        let reason = refused.to_string();
        assert!(reason.contains("max_inflight_bytes = 6.0 MiB"), "{reason}");
        assert!(reason.contains("truncated instead"), "{reason}");
        drop(held);
        assert!(budget.reserve(1 << 20, wait()).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_pass_through_reserves_its_copies_and_says_so_when_refused() {
        let budget = MemoryBudget::new(6 << 20).unwrap();
        let wait = || tokio::time::Instant::now() + MEMORY_WAIT;
        // Two copies of 2 MiB fit in 6 MiB; a second pass-through of the same size does not.
        let held = budget.reserve_pass_through(2 << 20, wait()).await.unwrap();
        let refused = budget
            .reserve_pass_through(2 << 20, wait())
            .await
            .unwrap_err();
        let reason = refused.to_string();
        assert!(
            reason.contains("passing it through needs about 4.0 MiB"),
            "{reason}"
        );
        drop(held);
        assert!(budget.reserve_pass_through(2 << 20, wait()).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_waiting_call_goes_ahead_once_memory_is_released() {
        let budget = MemoryBudget::new(8 << 20).unwrap();
        let held = budget
            .reserve(2 << 20, tokio::time::Instant::now() + MEMORY_WAIT)
            .await
            .unwrap();
        let release = tokio::spawn(async move {
            tokio::time::sleep(MEMORY_WAIT / 2).await;
            drop(held);
        });
        let waited = budget
            .reserve(1 << 20, tokio::time::Instant::now() + MEMORY_WAIT)
            .await;
        assert!(waited.is_ok());
        release.await.unwrap();
    }

    #[tokio::test]
    async fn a_call_larger_than_the_whole_budget_is_refused_at_once() {
        let budget = MemoryBudget::new(1 << 20).unwrap();
        let far = tokio::time::Instant::now() + Duration::from_secs(3600);
        let reason = budget.reserve(1 << 20, far).await.unwrap_err().to_string();
        assert!(reason.contains("is less than that"), "{reason}");
        assert!(MemoryBudget::new(0).is_none());
    }

    #[test]
    fn sizes_read_like_a_person_writes_them() {
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(64 << 20), "64.0 MiB");
    }
}
