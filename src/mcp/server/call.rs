//! The proxy's `tools/call` path: an upstream tool's call, condensed on the way back, and the
//! tools the proxy adds (`call_tool_summarized`, `summarize`, `summarize_for_extraction`,
//! `condense_retrieve`).

use rmcp::RoleServer;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResponse, CallToolResult, ClientRequest,
    ContentBlock, ErrorData as McpError, JsonObject, ServerResult,
};
use rmcp::service::RequestContext;
use serde_json::Value;
use tracing::Instrument;

use super::{ProxyServer, lock, unexpected};
use tower::{Layer, ServiceExt};

use crate::mcp::McpCall;
use crate::mcp::added::{self, Page, SummarizeRequest};
use crate::mcp::binary;
use crate::mcp::tools::{self, ADDED_TOOLS};
use crate::{CondenseLayer, Condenser, Config, ToolRequest};

impl ProxyServer {
    /// Calls an upstream tool through the library's layer: the upstream connection is the
    /// inner service, and the layer condenses what it answers (one pipeline for both front
    /// doors).
    pub(super) async fn call_upstream_tool(
        &self,
        mut params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        query: Option<String>,
        budget: Option<usize>,
    ) -> Result<CallToolResponse, McpError> {
        let name = params.name.to_string();
        let loaded = self.loaded();
        let config = loaded.engine.config();
        let query = match query {
            Some(query) => Some(query),
            None if config.rule_for(&name).query_argument
                && !lock(&self.session.own_query_argument).contains(&name) =>
            {
                tools::take_query_argument(&mut params.arguments, &config.proxy.query_argument_name)
            }
            None => None,
        };
        let schema = lock(&self.session.output_schemas)
            .get(&name)
            .map(|schema| Value::Object(JsonObject::clone(schema)));
        let mut call = McpCall::new(params)
            .with_query_opt(query)
            .with_owner(self.owner(config).map(str::to_owned));
        if let Some(budget) = budget {
            call = call.with_budget_tokens(budget);
        }
        if let Some(schema) = schema {
            call = call.with_output_schema(schema);
        }
        let span = tracing::info_span!("tool_call", tool = %name, query = call.query().is_some());
        let upstream = tower::service_fn(|call: McpCall| async move {
            let request = CallToolRequest::new(call.into_params());
            match self
                .relay(ClientRequest::CallToolRequest(request), context)
                .await?
            {
                ServerResult::CallToolResult(result) => Ok(CallToolResponse::Complete(result)),
                ServerResult::CreateTaskResult(task) => Ok(CallToolResponse::Task(task)),
                ServerResult::InputRequiredResult(input) => {
                    Ok(CallToolResponse::InputRequired(input))
                }
                other => Err(unexpected(&other)),
            }
        });
        let mut response = CondenseLayer::new(loaded.engine.clone())
            .layer(upstream)
            .oneshot(call)
            .instrument(span)
            .await?;
        if let CallToolResponse::Complete(result) = &mut response {
            let replaced = binary::apply(
                &loaded.engine,
                self.owner(config),
                &config.rule_for(&name),
                result,
            )
            .await;
            lock(&self.session.binary_refs).extend(replaced.refs);
        }
        Ok(response)
    }

    /// Who owns the originals this session's calls keep (see `Session::owner`): nobody,
    /// so every session reads them, under `[store] share_across_sessions`.
    pub(super) fn owner(&self, config: &Config) -> Option<&str> {
        self.session
            .owner
            .as_deref()
            .filter(|_| !config.store.share_across_sessions)
    }

    pub(super) async fn call_added_tool(
        &self,
        params: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let loaded = self.loaded();
        let defaults = &loaded.engine.config().defaults;
        let default_budget = defaults.budget_tokens;
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
                let mut inner = CallToolRequestParams::new(self.upstream_name(&args.tool));
                inner.arguments = args.arguments;
                let budget = tools::answer_budget(args.max_tokens, default_budget);
                return self
                    .call_upstream_tool(inner, context, args.query, Some(budget))
                    .await;
            }
            tools::SUMMARIZE | tools::SUMMARIZE_FOR_EXTRACTION => {
                let extraction = name == tools::SUMMARIZE_FOR_EXTRACTION;
                let parsed = if extraction {
                    tools::parse_args::<tools::SummarizeForExtractionArgs>(&name, params.arguments)
                        .map(tools::SummarizeArgs::from)
                } else {
                    tools::parse_args(&name, params.arguments)
                };
                let args: tools::SummarizeArgs = match parsed {
                    Ok(args) => args,
                    Err(message) => return Ok(tool_error(message)),
                };
                // A schema hint always applies; empty focus areas mean none.
                let focus = (extraction || !args.focus_areas.trim().is_empty())
                    .then_some(args.focus_areas.as_str());
                added::summarize(
                    &loaded.engine,
                    SummarizeRequest {
                        content: &args.content,
                        max_output_tokens: tools::answer_budget(
                            Some(args.max_output_tokens),
                            default_budget,
                        ),
                        focus,
                        extraction,
                        strategy: args.strategy,
                        owner: self.owner(loaded.engine.config()),
                    },
                )
                .await
            }
            _ => {
                let args: tools::RetrieveArgs = match tools::parse_args(&name, params.arguments) {
                    Ok(args) => args,
                    Err(message) => return Ok(tool_error(message)),
                };
                let page = Page::from_args(
                    &args,
                    tools::answer_budget(None, default_budget.max(defaults.threshold_tokens)),
                );
                let engines: Vec<&Condenser> = std::iter::once(&loaded.engine)
                    .chain(&loaded.previous)
                    .collect();
                let replaced_binary = lock(&self.session.binary_refs).contains(&args.reference);
                if replaced_binary
                    && let Some(block) = binary::retrieve(
                        &engines,
                        self.owner(loaded.engine.config()),
                        &args.reference,
                    )
                    .await
                {
                    return Ok(CallToolResponse::Complete(CallToolResult::success(vec![
                        block,
                    ])));
                }
                match added::retrieve(
                    &engines,
                    self.owner(loaded.engine.config()),
                    &args.reference,
                    &page,
                )
                .await
                {
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
