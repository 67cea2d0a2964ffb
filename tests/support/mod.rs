//! Shared test doubles and scenarios.

// Each test module uses a different part of the support code.
#![allow(dead_code)]

pub(crate) mod fake_llm;
pub(crate) mod inputs;
pub(crate) mod load;
pub(crate) mod relay;
