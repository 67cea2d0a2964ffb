//! The extractive compressor run so that a tool call survives it: off the async threads for
//! large inputs, and with a panic contained (it must never have one, but a tool call must
//! outlive it if it does). The engine's extractive rung and map-reduce's deadline fallback both
//! run it this way.

use std::ops::Deref;

use crate::methods::extract::{Hints, extract};
use crate::tokens::TokenCounter;

/// Inputs up to this size are condensed on the calling thread: handing them to the blocking
/// pool costs more than it saves.
const INLINE_BYTES: usize = 64 * 1024;

/// [`extract`] of `text` within `budget` tokens; `None` when it panicked or its thread was lost.
pub(crate) async fn extract_contained<T>(
    text: T,
    hints: Hints<'_>,
    budget: usize,
    counter: TokenCounter,
) -> Option<String>
where
    T: Deref<Target = str> + Send + 'static,
{
    if text.len() <= INLINE_BYTES {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            extract(&text, &hints, budget, &counter)
        }))
        .ok();
    }
    let query = hints.query.map(str::to_owned);
    let tool = hints.tool.map(str::to_owned);
    let arguments = hints.arguments.cloned();
    // A panic on the blocking thread comes back as the join error.
    tokio::task::spawn_blocking(move || {
        let hints = Hints {
            query: query.as_deref(),
            tool: tool.as_deref(),
            arguments: arguments.as_ref(),
            ..Hints::default()
        };
        extract(&text, &hints, budget, &counter)
    })
    .await
    .ok()
}
