//! Integration tests, one binary for faster builds.

mod support;

mod litellm;
mod llm;
