//! The rungs of the condensing ladder, and what they share.

pub mod chunk;
pub mod extract;
pub(crate) mod llm;
pub mod mapreduce;
mod reduce_tree;
pub mod truncate;
pub mod verify;
