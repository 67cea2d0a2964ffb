//! Custom requests, relayed whole: methods rmcp does not model, and the requests of 2025-11-25
//! tasks (see [`tasks`](crate::mcp::tasks)). A task's final result (`tasks/result` of a
//! task-augmented `tools/call`) is condensed like any other tool result.

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientRequest, CustomRequest, CustomResult,
    ErrorData as McpError, ServerResult,
};
use rmcp::service::RequestContext;
use serde_json::Value;

use super::{ProxyServer, lock};
use crate::engine::CallInfo;
use crate::mcp::tasks::{self, RAW_PREFIX};
use crate::mcp::{McpCall, binary, tools};

/// The upstream tool and query of a task-augmented `tools/call`, kept until its result.
#[derive(Debug, Clone)]
pub(super) struct TaskCall {
    tool: String,
    query: Option<String>,
}

impl ProxyServer {
    pub(super) async fn relay_custom(
        &self,
        mut request: CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        if let Some(method) = request.method.strip_prefix(RAW_PREFIX) {
            request.method = method.to_owned();
        }
        let method = request.method.clone();
        let call = if method == "tools/call" {
            request
                .params
                .as_mut()
                .and_then(|params| self.prepare_task_call(params))
        } else {
            None
        };
        let task_id = request
            .params
            .as_ref()
            .and_then(|params| params.get("taskId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        let result = match self
            .relay(ClientRequest::CustomRequest(request), context)
            .await?
        {
            ServerResult::CustomResult(CustomResult(value)) => tasks::raw_result(value),
            other => serde_json::to_value(other).unwrap_or_default(),
        };
        if let Some(call) = call
            && let Some(id) = result.pointer("/task/taskId").and_then(Value::as_str)
        {
            lock(&self.session.task_calls).insert(id.to_owned(), call);
        }
        if method == "tasks/result"
            && let Some(id) = task_id
        {
            let call = lock(&self.session.task_calls).remove(&id);
            if let Some(call) = call {
                return Ok(CustomResult(self.condense_task_result(&call, result).await));
            }
        }
        Ok(CustomResult(result))
    }

    /// Renames the tool to the upstream's name and takes the query argument out of a
    /// task-augmented `tools/call`'s params.
    fn prepare_task_call(&self, params: &mut Value) -> Option<TaskCall> {
        let listed = params.get("name")?.as_str()?.to_owned();
        let tool = self.upstream_name(&listed);
        params["name"] = Value::String(tool.clone());
        let loaded = self.loaded();
        let config = loaded.engine.config();
        let query = if config.rule_for(&tool).query_argument
            && !lock(&self.session.own_query_argument).contains(&tool)
        {
            let mut arguments = params
                .get_mut("arguments")
                .and_then(Value::as_object_mut)
                .map(std::mem::take);
            let query =
                tools::take_query_argument(&mut arguments, &config.proxy.query_argument_name);
            if let Some(arguments) = arguments {
                params["arguments"] = Value::Object(arguments);
            }
            query
        } else {
            None
        };
        Some(TaskCall { tool, query })
    }

    /// A task's final result, condensed and its binary items replaced as a `tools/call`
    /// result is; returned as it came when nothing changes or it is no tool result.
    async fn condense_task_result(&self, call: &TaskCall, result: Value) -> Value {
        let Ok(parsed) = serde_json::from_value::<CallToolResult>(result.clone()) else {
            return result;
        };
        let loaded = self.loaded();
        let owner = self.owner(loaded.engine.config()).map(str::to_owned);
        let mcp_call = McpCall::new(CallToolRequestParams::new(call.tool.clone()))
            .with_query_opt(call.query.clone())
            .with_owner(owner.clone());
        let schema = lock(&self.session.output_schemas)
            .get(&call.tool)
            .map(|schema| Value::Object(schema.as_ref().clone()));
        let (mut condensed, _) = loaded
            .engine
            .condense_response_with_outcomes(
                &CallInfo::from_request(&mcp_call),
                schema.as_ref(),
                parsed.clone(),
            )
            .await;
        let rule = loaded.engine.config().rule_for(&call.tool);
        let replaced = binary::apply(&loaded.engine, owner.as_deref(), &rule, &mut condensed).await;
        lock(&self.session.binary_refs).extend(replaced.refs);
        if condensed == parsed {
            return result;
        }
        serde_json::to_value(condensed).unwrap_or(result)
    }
}
