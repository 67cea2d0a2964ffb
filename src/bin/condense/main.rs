//! The `condense` binary.
fn main() {}
