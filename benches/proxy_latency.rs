//! Latency of a pass-through tools/call through the proxy vs directly (filled in below).
fn main() {}
