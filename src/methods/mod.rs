//! The rungs of the condensing ladder, and what they share.

pub mod chunk;
pub(crate) mod contained;
pub mod extract;
mod hints;
pub(crate) mod llm;
pub mod mapreduce;
pub(crate) mod prompts;
pub mod truncate;
pub(crate) mod verify;

pub use hints::Hints;
