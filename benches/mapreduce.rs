//! Map-reduce wall time against concurrency.

fn main() {}
