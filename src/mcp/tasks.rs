//! MCP tasks of protocol revision 2025-11-25, carried through rmcp, whose model knows only the
//! later tasks extension (SEP-2663) and drops the older fields when it parses a message.
//!
//! The proxy's transports (stdio and streamable HTTP, on both sides) rewrite the JSON around
//! rmcp's parsing, so that nothing of a task is lost on the way:
//!
//! - a client's `tools/call` with `task`, and `tasks/get`, `tasks/list`, `tasks/cancel`,
//!   `tasks/result`, reach the proxy as custom requests (method prefixed with [`RAW_PREFIX`]),
//!   which rmcp keeps whole; the proxy relays them under their own method names;
//! - the answers to custom requests come back from the upstream as one string (`RAW_RESULT`
//!   and the result's JSON), the one shape rmcp's untagged result union leaves untouched;
//! - the `tasks` capability (both ways, in `initialize`) and each tool's `execution` ride in
//!   places rmcp keeps (`capabilities.experimental`, the tool's `_meta`) under private keys,
//!   and are put back before the message leaves the proxy.
//!
//! Task status notifications (`notifications/tasks/status`) are custom notifications to rmcp
//! and pass as they are.

use std::collections::HashMap;

use rmcp::model::{ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId};
use serde_json::{Map, Value};

use super::envelope::Envelope;

/// The method prefix that makes rmcp take a client's task request as a custom request.
pub(crate) const RAW_PREFIX: &str = "condense-raw/";

/// The prefix of an upstream result carried as a string.
const RAW_RESULT: &str = "condense-raw:";

/// The private key the `tasks` capability travels under in `capabilities.experimental`.
const TASKS_CAPABILITY: &str = "condense.tasks";

/// The private key a tool's `execution` travels under in its `_meta`.
const EXECUTION: &str = "condense.execution";

/// The methods of 2025-11-25 tasks.
const TASK_METHODS: [&str; 4] = ["tasks/get", "tasks/list", "tasks/cancel", "tasks/result"];

fn object_at<'a>(value: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    path.iter()
        .try_fold(value, |value, key| value.get_mut(*key))
        .and_then(Value::as_object_mut)
}

/// Moves `capabilities.tasks` into `capabilities.experimental` (`out`) or back (`!out`).
fn move_tasks_capability(capabilities: &mut Map<String, Value>, out: bool) {
    if out {
        if let Some(tasks) = capabilities.remove("tasks") {
            capabilities
                .entry("experimental")
                .or_insert_with(|| Value::Object(Map::new()))
                .as_object_mut()
                .map(|experimental| experimental.insert(TASKS_CAPABILITY.to_owned(), tasks));
        }
    } else if let Some(Value::Object(experimental)) = capabilities.get_mut("experimental")
        && let Some(tasks) = experimental.remove(TASKS_CAPABILITY)
    {
        if experimental.is_empty() {
            capabilities.remove("experimental");
        }
        capabilities.insert("tasks".to_owned(), tasks);
    }
}

/// A message from the client, before rmcp parses it.
pub(crate) fn from_client(message: &mut Value) {
    let method = message.get("method").and_then(Value::as_str).unwrap_or("");
    let with_task = method == "tools/call"
        && message
            .get("params")
            .and_then(|params| params.get("task"))
            .is_some();
    if TASK_METHODS.contains(&method) || with_task {
        let renamed = format!("{RAW_PREFIX}{method}");
        message["method"] = Value::String(renamed);
    } else if method == "initialize"
        && let Some(capabilities) = object_at(message, &["params", "capabilities"])
    {
        move_tasks_capability(capabilities, true);
    }
}

/// A message to the client, after rmcp wrote it.
pub(crate) fn to_client(message: &mut Value) {
    if let Some(capabilities) = object_at(message, &["result", "capabilities"]) {
        move_tasks_capability(capabilities, false);
    }
    if let Some(Value::Array(tools)) = message.get_mut("result").and_then(|r| r.get_mut("tools")) {
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            let Some(Value::Object(meta)) = tool.get_mut("_meta") else {
                continue;
            };
            let Some(execution) = meta.remove(EXECUTION) else {
                continue;
            };
            if meta.is_empty() {
                tool.remove("_meta");
            }
            tool.insert("execution".to_owned(), execution);
        }
    }
}

fn contains(text: &[u8], mark: &[u8]) -> bool {
    text.windows(mark.len()).any(|window| window == mark)
}

/// Whether a message from the client may need [`from_client`]: a task's method, a `task`
/// parameter and the `tasks` capability all name `"task…`. A cheap test that spares parsing
/// every message twice.
pub(crate) fn may_need_from_client(text: &[u8]) -> bool {
    contains(text, b"\"task")
}

/// Whether a message the proxy wrote may carry a private key that [`to_client`] puts back: a
/// cheap test that spares parsing every message (tool results above all) again.
pub(crate) fn may_need_to_client(text: &[u8]) -> bool {
    contains(text, b"\"condense.")
}

/// `text`, one JSON-RPC message or a batch, with `rewrite` applied to each message; `None`
/// when it is not JSON (then it goes on as it is, for rmcp to refuse).
pub(crate) fn rewrite_text(text: &[u8], rewrite: impl Fn(&mut Value)) -> Option<Vec<u8>> {
    let mut value = serde_json::from_slice::<Value>(text).ok()?;
    match &mut value {
        Value::Array(batch) => batch.iter_mut().for_each(rewrite),
        message => rewrite(message),
    }
    serde_json::to_vec(&value).ok()
}

/// What the proxy asked the upstream, for reading the answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Asked {
    /// `initialize`: its capabilities may have `tasks`.
    Initialize,
    /// `tools/list`: its tools may have `execution`.
    ListTools,
    /// A custom request (task requests included): the answer is kept whole.
    Custom,
}

impl Asked {
    /// The kind of `message`, with its id, when its answer needs rewriting.
    pub(crate) fn by(message: &ClientJsonRpcMessage) -> Option<(RequestId, Asked)> {
        let JsonRpcMessage::Request(request) = message else {
            return None;
        };
        let asked = match &request.request {
            ClientRequest::InitializeRequest(_) => Asked::Initialize,
            ClientRequest::ListToolsRequest(_) => Asked::ListTools,
            ClientRequest::CustomRequest(_) => Asked::Custom,
            _ => return None,
        };
        Some((request.id.clone(), asked))
    }
}

/// The upstream requests whose answers are rewritten, by id.
#[derive(Debug, Default)]
pub(crate) struct Pending(HashMap<RequestId, Asked>);

impl Pending {
    /// A request of kind `asked` to the upstream, after rmcp wrote it: puts the client's
    /// `tasks` capability back, and remembers that its answer needs rewriting.
    pub(crate) fn sent_upstream(&mut self, id: RequestId, asked: Asked, message: &mut Value) {
        if asked == Asked::Initialize
            && let Some(capabilities) = object_at(message, &["params", "capabilities"])
        {
            move_tasks_capability(capabilities, false);
        }
        self.0.insert(id, asked);
    }

    /// Whether an answer to `id` needs rewriting (takes it off the list).
    pub(crate) fn take(&mut self, id: &RequestId) -> Option<Asked> {
        self.0.remove(id)
    }

    /// Whether no answer waits to be rewritten.
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// What was asked, when `message` (an upstream message, unparsed) answers a request that
    /// needs rewriting (takes it off the list); read only as far as its `id` and `method`.
    pub(crate) fn answered_by(&mut self, message: &[u8]) -> Option<Asked> {
        if self.is_empty() {
            return None;
        }
        let envelope = Envelope::of(message);
        if envelope.has_method() {
            return None;
        }
        self.take(envelope.id()?)
    }
}

/// An upstream answer to a request of kind `asked`, before rmcp parses it.
pub(crate) fn from_upstream(asked: Asked, message: &mut Value) {
    let Some(result) = message.get_mut("result") else {
        return;
    };
    match asked {
        Asked::Initialize => {
            if let Some(capabilities) = result
                .get_mut("capabilities")
                .and_then(Value::as_object_mut)
            {
                move_tasks_capability(capabilities, true);
            }
        }
        Asked::ListTools => {
            let tools = result.get_mut("tools").and_then(Value::as_array_mut);
            for tool in tools.into_iter().flatten().filter_map(Value::as_object_mut) {
                if let Some(execution) = tool.remove("execution") {
                    let meta = tool
                        .entry("_meta")
                        .or_insert_with(|| Value::Object(Map::new()));
                    if let Some(meta) = meta.as_object_mut() {
                        meta.insert(EXECUTION.to_owned(), execution);
                    }
                }
            }
        }
        Asked::Custom => {
            let whole = format!("{RAW_RESULT}{result}");
            *result = Value::String(whole);
        }
    }
}

/// The upstream's answer to a custom request, as it sent it.
pub(crate) fn raw_result(result: Value) -> Value {
    match result {
        Value::String(text) if text.starts_with(RAW_RESULT) => {
            serde_json::from_str(&text[RAW_RESULT.len()..]).unwrap_or(Value::String(text))
        }
        other => other,
    }
}

#[cfg(test)]
mod tests;
