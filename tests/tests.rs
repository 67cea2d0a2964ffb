//! The integration tests, as one binary (one link instead of many).

mod support;

mod budget;
mod layer;
mod litellm;
mod llm;
