//! condense
pub mod llm;
pub mod methods;
pub mod tokens;
pub use tokens::{estimate_tokens, Encoding, TokenCounter};
