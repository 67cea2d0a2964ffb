//! The tower middleware: [`CondenseLayer`] wraps any tool client so that large results come
//! back condensed.
//!
//! The layer keeps the inner service's error type: a tool error passes through untouched, and a
//! condensing failure never becomes one (the ladder always answers).
//!
//! ```
//! use std::convert::Infallible;
//! use std::time::Duration;
//!
//! use condense::{CondenseLayer, Condenser, Config, ToolCall, ToolResult};
//! use tower::{Service, ServiceBuilder, ServiceExt, service_fn};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! // A tool client: here a function; in practice an MCP peer or an HTTP tool.
//! let tools = service_fn(|call: ToolCall| async move {
//!     let lines: String = (0..20_000).map(|i| format!("{} entry {i}\n", call.name)).collect();
//!     Ok::<_, Infallible>(ToolResult::text(lines))
//! });
//!
//! let condenser = Condenser::new(Config::default()).unwrap();
//! let mut client = ServiceBuilder::new()
//!     .concurrency_limit(8)
//!     .layer(CondenseLayer::new(condenser))
//!     .service(tools);
//!
//! let result = client
//!     .ready()
//!     .await
//!     .unwrap()
//!     .call(ToolCall::new("list_entries", serde_json::json!({})))
//!     .await
//!     .unwrap();
//! let meta = &result.meta.unwrap()["condense"];
//! assert!(meta["tokens_after"].as_u64().unwrap() <= 1500);
//! # });
//! ```

mod future;
#[allow(clippy::module_inception)]
mod layer;
mod service;

pub use future::ResponseFuture;
pub use layer::CondenseLayer;
pub use service::Condense;
