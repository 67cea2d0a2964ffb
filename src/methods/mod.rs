//! The rungs of the condensing ladder.

pub mod extract;
pub mod truncate;
