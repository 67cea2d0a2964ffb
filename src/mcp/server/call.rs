//! The proxy's `tools/call` path: an upstream tool's call, condensed on the way back, and the
//! tools the proxy adds (`call_tool_summarized`, `summarize`, `summarize_for_extraction`,
//! `condense_retrieve`).

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest,
    ContentBlock, ErrorData as McpError, ServerResult,
};
use rmcp::service::RequestContext;
use serde_json::Value;
use tracing::Instrument;

use super::{ProxyServer, lock, unexpected};
use crate::mcp::condenser::{CondenseRequest, RetrieveError, Selection, SummarizeRequest};
use crate::mcp::structured;
use crate::mcp::tools::{self, ADDED_TOOLS};

impl ProxyServer {
    pub(super) async fn call_upstream_tool(
        &self,
        mut params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        query: Option<String>,
        budget: Option<usize>,
    ) -> Result<CallToolResponse, McpError> {
        let name = params.name.to_string();
        let settings = self.settings();
        let mut tool_settings = settings.for_tool(&name);
        let loaded = self.loaded();
        let query = match query {
            Some(query) => Some(query),
            None if tool_settings.query_argument
                && !lock(&self.session.own_query_argument).contains(&name) =>
            {
                tools::take_query_argument(&mut params.arguments, &settings.query_argument_name)
            }
            None => None,
        };
        if let Some(budget) = budget {
            tool_settings.budget_tokens = budget;
        }
        let arguments = params
            .arguments
            .clone()
            .map(Value::Object)
            .unwrap_or(Value::Null);
        let span = tracing::info_span!(
            "tool_call",
            tool = %name,
            query = query.is_some(),
            tokens_before = tracing::field::Empty,
            tokens_after = tracing::field::Empty,
            condensed = tracing::field::Empty,
        );
        async {
            let started = std::time::Instant::now();
            let response = match self
                .relay(
                    ClientRequest::CallToolRequest(CallToolRequest::new(params)),
                    context,
                )
                .await?
            {
                ServerResult::CallToolResult(result) => CallToolResponse::Complete(result),
                ServerResult::CreateTaskResult(task) => CallToolResponse::Task(task),
                ServerResult::InputRequiredResult(input) => CallToolResponse::InputRequired(input),
                other => return Err(unexpected(&other)),
            };
            let CallToolResponse::Complete(result) = response else {
                return Ok(response);
            };
            let structured_before = result.structured_content.clone();
            let condensed = loaded
                .condenser
                .condense(
                    CondenseRequest {
                        tool: &name,
                        arguments: &arguments,
                        query: query.as_deref(),
                        settings: &tool_settings,
                        budget_override: budget,
                    },
                    result,
                )
                .await;
            let mut result = condensed.result;
            if condensed.condensed {
                let schema = lock(&self.session.output_schemas).get(&name).cloned();
                result.structured_content = structured::for_condensed_result(
                    structured_before,
                    schema.as_deref(),
                    tool_settings.structured_content,
                    tool_settings.budget_tokens,
                    &loaded.counter,
                );
            }
            tracing::Span::current().record("condensed", condensed.condensed);
            tracing::debug!(
                elapsed_ms = started.elapsed().as_millis() as u64,
                "tool call done"
            );
            Ok(CallToolResponse::Complete(result))
        }
        .instrument(span)
        .await
    }

    pub(super) async fn call_added_tool(
        &self,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let settings = self.settings();
        let default_budget = settings.defaults.budget_tokens;
        let budget_or_default = |tokens: usize| if tokens == 0 { default_budget } else { tokens };
        let name = params.name.to_string();
        let text = match name.as_str() {
            tools::CALL_TOOL_SUMMARIZED => {
                let args: tools::CallToolSummarizedArgs =
                    match tools::parse_args(&name, params.arguments) {
                        Ok(args) => args,
                        Err(message) => return Ok(tool_error(message)),
                    };
                if ADDED_TOOLS.contains(&args.tool.as_str()) {
                    return Ok(tool_error(format!("{} cannot call {}", name, args.tool)));
                }
                let mut inner = CallToolRequestParams::new(args.tool);
                inner.arguments = args.arguments;
                let budget = args
                    .max_tokens
                    .map(budget_or_default)
                    .unwrap_or(default_budget);
                return self
                    .call_upstream_tool(inner, context, args.query, Some(budget))
                    .await;
            }
            tools::SUMMARIZE => {
                let args: tools::SummarizeArgs = match tools::parse_args(&name, params.arguments) {
                    Ok(args) => args,
                    Err(message) => return Ok(tool_error(message)),
                };
                let focus =
                    (!args.focus_areas.trim().is_empty()).then_some(args.focus_areas.as_str());
                self.loaded()
                    .condenser
                    .summarize(SummarizeRequest {
                        content: &args.content,
                        max_output_tokens: budget_or_default(args.max_output_tokens),
                        focus,
                        extraction: false,
                        strategy: args.strategy,
                    })
                    .await
            }
            tools::SUMMARIZE_FOR_EXTRACTION => {
                let args: tools::SummarizeForExtractionArgs =
                    match tools::parse_args(&name, params.arguments) {
                        Ok(args) => args,
                        Err(message) => return Ok(tool_error(message)),
                    };
                self.loaded()
                    .condenser
                    .summarize(SummarizeRequest {
                        content: &args.content,
                        max_output_tokens: budget_or_default(args.max_output_tokens),
                        focus: Some(&args.schema_hint),
                        extraction: true,
                        strategy: None,
                    })
                    .await
            }
            _ => {
                let args: tools::RetrieveArgs = match tools::parse_args(&name, params.arguments) {
                    Ok(args) => args,
                    Err(message) => return Ok(tool_error(message)),
                };
                let selection = Selection {
                    offset: args.offset,
                    lines: args.lines.unwrap_or(200).max(1),
                    pattern: args.pattern.filter(|pattern| !pattern.is_empty()),
                    max_tokens: default_budget.max(settings.defaults.threshold_tokens),
                };
                let loaded = self.loaded();
                let mut answer = Err(RetrieveError::UnknownRef(args.reference.clone()));
                for condenser in std::iter::once(&loaded.condenser).chain(&loaded.previous) {
                    answer = condenser.retrieve(&args.reference, &selection).await;
                    if !matches!(answer, Err(RetrieveError::UnknownRef(_))) {
                        break;
                    }
                }
                match answer {
                    Ok(text) => text,
                    Err(error) => return Ok(tool_error(error.to_string())),
                }
            }
        };
        Ok(CallToolResponse::Complete(CallToolResult::success(vec![
            ContentBlock::text(text),
        ])))
    }
}

fn tool_error(message: String) -> CallToolResponse {
    CallToolResponse::Complete(CallToolResult::error(vec![ContentBlock::text(message)]))
}
