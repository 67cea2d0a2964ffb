//! Small conversions used by command-line tools: durations, byte sizes, roman numerals,
//! and word wrapping.

pub mod bytes;
pub mod duration;
pub mod roman;
pub mod wrap;
