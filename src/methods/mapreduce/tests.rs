//! The driver with scripted summarizers.

use super::reduce_tree::MIN_PART_TOKENS;
use super::*;
use crate::methods::chunk::Chunk;

#[derive(Debug)]
struct Window(usize);

impl Summarizer for Window {
    fn complete(
        &self,
        _: CompletionRequest,
    ) -> crate::llm::BoxFuture<'_, Result<String, LlmError>> {
        Box::pin(async { Ok(String::from("ok")) })
    }
    fn context_window(&self) -> usize {
        self.0
    }
    fn model(&self) -> &str {
        "window"
    }
}

#[derive(Debug)]
struct Prompts(u64);

impl MapReducePrompts for Prompts {
    fn map(&self, chunk: &Chunk, _: &Hints<'_>, budget: usize) -> CompletionRequest {
        CompletionRequest::new("map", chunk.text(), budget as u32)
    }
    fn reduce(&self, parts: &[String], _: &Hints<'_>, budget: usize, _: bool) -> CompletionRequest {
        CompletionRequest::new("reduce", parts.join("\n"), budget as u32)
    }
    fn fingerprint(&self) -> u64 {
        self.0
    }
}

fn driver(window: usize, fingerprint: u64) -> MapReduce {
    MapReduce::new(
        Arc::new(Window(window)),
        Arc::new(Prompts(fingerprint)),
        MapReduceOptions::default(),
        TokenCounter::default(),
    )
}

#[test]
fn share_gives_an_equal_share_above_the_floor() {
    let rule = ChunkBudget::Share { floor: 500 };
    assert_eq!(rule.for_parts(1500, 2), 750);
    assert_eq!(rule.for_parts(1500, 64), 500);
    assert_eq!(rule.for_parts(300, 4), 300, "never more than the budget");
    assert_eq!(ChunkBudget::Fixed(42).for_parts(1500, 9), 42);
}

#[test]
fn cache_keys_change_with_every_input() {
    let mr = driver(8192, 1);
    let hints = Hints::default().with_query("q");
    let base = mr.key(b"map", &["ctx", "body"], &hints, 100, false);
    assert_eq!(base, mr.key(b"map", &["ctx", "body"], &hints, 100, false));
    assert_ne!(base, mr.key(b"map", &["ctxb", "ody"], &hints, 100, false));
    assert_ne!(
        base,
        mr.key(b"map", &["ctx", "body"], &Hints::default(), 100, false)
    );
    assert_ne!(base, mr.key(b"map", &["ctx", "body"], &hints, 101, false));
    assert_ne!(
        base,
        mr.key(b"reduce", &["ctx", "body"], &hints, 100, false)
    );
    assert_ne!(
        base,
        driver(8192, 2).key(b"map", &["ctx", "body"], &hints, 100, false)
    );
}

#[test]
fn chunks_shrink_to_fit_a_small_window() {
    let layout = driver(2048, 1).layout(&Hints::default(), 300);
    assert!(layout.chunk_tokens < 2048 - 300, "{layout:?}");
    assert!(layout.part_cap * 4 + 300 < 2048);
    let roomy = driver(128_000, 1).layout(&Hints::default(), 300);
    assert_eq!(roomy.chunk_tokens, 4000);
}

#[test]
fn a_huge_budget_or_a_zero_window_does_not_overflow() {
    let layout = driver(0, 1).layout(&Hints::default(), usize::MAX);
    assert_eq!(layout.part_cap, MIN_PART_TOKENS);
    assert_eq!(
        layout.chunk_tokens, 0,
        "the chunker raises it to its minimum"
    );
}

#[test]
fn empty_answers_are_failures() {
    let mr = driver(8192, 1);
    assert_eq!(mr.fit_answer("  \n", 10), None);
    assert_eq!(mr.fit_answer(" fine ", 10).as_deref(), Some("fine"));
}
