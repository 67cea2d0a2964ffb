//! Tests against a real LiteLLM proxy; see `scripts/litellm/start.sh`.
