//! condense
pub mod llm;
pub mod methods;
pub mod tokens;
pub use tokens::{Encoding, TokenCounter, estimate_tokens};
#[cfg(feature = "mcp")]
pub mod mcp;
