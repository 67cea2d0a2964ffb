//! The integration tests, as one binary (one link instead of many).

mod support;

mod budget;
mod cli;
mod engine;
mod extract;
mod extract_corpus;
mod hostile;
mod layer;
mod litellm;
mod litellm_faults;
mod litellm_layer;
mod llm;
mod mapreduce;
mod mcp;
mod mcp_client;
mod mcp_faults;
mod mcp_http;
mod mcp_limits;
mod mcp_load;
mod memory;
#[cfg(feature = "redis")]
mod redis;
mod security;
mod store;
mod tokens;
