//! What one run is sized and keyed by: the chunk size and part cap that the model's window and
//! the prompts leave, and the cache key of an answer.

use xxhash_rust::xxh3::Xxh3;

use super::MapReduce;
use super::options::CHAT_TEMPLATE_TOKENS;
use super::reduce_tree::MIN_PART_TOKENS;
use crate::llm::CompletionRequest;
use crate::methods::chunk::Chunk;
use crate::methods::mapreduce::Hints;

/// Sizes derived from the model's window and the prompts for one run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Layout {
    pub(super) chunk_tokens: usize,
    /// The most tokens a map or intermediate merge answer may have so that a group of them
    /// still fits a final merge.
    pub(super) part_cap: usize,
}

impl MapReduce {
    /// Chunk size and part cap for this model window, prompts and budget.
    pub(super) fn layout(&self, hints: &Hints<'_>, budget: usize) -> Layout {
        // The model's own tokenizer may count more tokens than ours: keep a tenth spare.
        let window = self.llm.context_window() - self.llm.context_window() / 10;
        let map_prompt = self.request_tokens(&self.prompts.map(&Chunk::new(0, "", ""), hints, 0));
        let merge_prompt = self.request_tokens(&self.prompts.reduce(&[], hints, budget, true));
        let group_size = self.options.group_size.max(2);
        let part_cap = window
            .saturating_sub(merge_prompt.saturating_add(budget))
            .checked_div(group_size)
            .unwrap_or(0)
            .max(MIN_PART_TOKENS);
        let answer = part_cap.min(budget);
        let chunk_tokens = self
            .options
            .chunking
            .chunk_tokens
            .min(window.saturating_sub(map_prompt + answer));
        Layout {
            chunk_tokens,
            part_cap,
        }
    }

    pub(super) fn request_tokens(&self, request: &CompletionRequest) -> usize {
        self.counter.count(&request.system)
            + self.counter.count(&request.user)
            + CHAT_TEMPLATE_TOKENS
    }

    /// A 128-bit key over everything that shapes an answer. Every field is length-prefixed so
    /// that no two different inputs hash the same bytes.
    pub(super) fn key(
        &self,
        tag: &[u8],
        texts: &[&str],
        hints: &Hints<'_>,
        budget: usize,
        is_final: bool,
    ) -> u128 {
        let mut hasher = Xxh3::new();
        let mut field = |bytes: &[u8]| {
            hasher.update(&(bytes.len() as u64).to_le_bytes());
            hasher.update(bytes);
        };
        field(tag);
        field(&self.prompts.fingerprint().to_le_bytes());
        field(self.llm.model().as_bytes());
        for hint in [hints.query, hints.tool, hints.schema_hint] {
            field(hint.unwrap_or("\u{0}none").as_bytes());
        }
        field(&(budget as u64).to_le_bytes());
        field(&[u8::from(is_final)]);
        field(&(texts.len() as u64).to_le_bytes());
        for text in texts {
            field(text.as_bytes());
        }
        hasher.digest128()
    }
}
