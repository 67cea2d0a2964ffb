//! One copy of a text, shared by every stage of a call.
//!
//! A large output used to be copied by each stage that needed it past an `.await` or on
//! another thread: the originals store, the count for the header, the extractive compressor.
//! Each copy is the size of the input, so a 60 MB output cost four times that before any work
//! began. The text is now put behind one `Arc` when the call decides to condense (or handed
//! over owned, at no cost), and the stages share it.

use std::ops::Deref;
use std::sync::Arc;

/// The text a call was given: borrowed from the caller, or handed over.
pub(super) enum Source<'a> {
    Borrowed(&'a str),
    Owned(Arc<String>),
}

impl Source<'_> {
    pub(super) fn as_str(&self) -> &str {
        match self {
            Source::Borrowed(text) => text,
            Source::Owned(text) => text,
        }
    }

    /// The text behind an `Arc`: shared when it was handed over, else copied once.
    pub(super) fn shared(&self) -> Arc<String> {
        match self {
            Source::Borrowed(text) => Arc::new((*text).to_owned()),
            Source::Owned(text) => text.clone(),
        }
    }
}

/// The part of a shared text that is condensed: its first `end` bytes (all of it unless the
/// input was cut at `[limits] max_input_bytes`). Cheap to clone.
#[derive(Clone)]
pub(super) struct SharedText {
    whole: Arc<String>,
    end: usize,
}

impl SharedText {
    /// The first `end` bytes of `whole`; `end` must be a character boundary.
    pub(super) fn new(whole: Arc<String>, end: usize) -> Self {
        debug_assert!(whole.is_char_boundary(end));
        SharedText { whole, end }
    }

    /// All of `text`, owned: for a text made anew from the input (escape codes stripped).
    pub(super) fn from_string(text: String) -> Self {
        let end = text.len();
        SharedText::new(Arc::new(text), end)
    }
}

impl Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        &self.whole[..self.end]
    }
}
