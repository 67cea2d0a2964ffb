//! The rungs of the condensing ladder.

pub mod chunk;
pub mod extract;
pub mod mapreduce;
pub mod verify;
