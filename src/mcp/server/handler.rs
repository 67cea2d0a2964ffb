//! The MCP methods a client session calls on the proxy: each relayed to the session's upstream
//! (`relay!`), with the proxy's own answers where it has them (server info, the tool list with
//! the added tools and the query argument, `tools/call`).

use std::borrow::Cow;
use std::collections::HashSet;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelTaskRequest,
    ClientNotification, ClientRequest, CompleteRequest, CompleteRequestParams, CompleteResult,
    CustomNotification, CustomRequest, CustomResult, ErrorData as McpError, GetPromptRequest,
    GetPromptRequestParams, GetPromptResponse, GetSkillRequest, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskRequest, GetTaskResult, Implementation,
    InitializeRequestParams, InitializeResult, ListPromptsRequest, ListPromptsResult,
    ListResourceTemplatesRequest, ListResourceTemplatesResult, ListResourcesRequest,
    ListResourcesResult, ListSkillsRequest, ListSkillsResult, ListToolsRequest, ListToolsResult,
    PaginatedRequestParams, PingRequest, ProgressNotification, ProgressNotificationParam,
    ProtocolVersion, ReadResourceDirectoryRequest, ReadResourceDirectoryRequestParams,
    ReadResourceRequest, ReadResourceRequestParams, ReadResourceResponse,
    RootsListChangedNotification, ServerCapabilities, ServerConfig, ServerResult, SetLevelRequest,
    SetLevelRequestParams, SubscribeRequest, SubscribeRequestParams, ToolsCapability,
    UnsubscribeRequest, UnsubscribeRequestParams, UpdateTaskParams, UpdateTaskRequest,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{RoleServer, ServerHandler};

use super::{ProxyServer, lock, unexpected};
use crate::StructuredContentPolicy;
use crate::mcp::tools;
use crate::mcp::upstream::{NEWEST_RELAYED_VERSION, UpstreamHandler};

const INSTRUCTIONS: &str = "Tool results larger than a configured size are condensed by condense, \
a proxy in front of this server. Pass `{query}` to any tool to say what you are looking for.";

/// Appended to [`INSTRUCTIONS`] while `condense_retrieve` is listed.
const RETRIEVE_INSTRUCTIONS: &str = " A condensed result names a ref that `condense_retrieve` pages or greps for the full original.";

impl ServerHandler for ProxyServer {
    fn get_info(&self) -> ServerConfig {
        let Some(info) = self.upstream_info() else {
            let mut config = ServerConfig::new(ServerCapabilities::default());
            config.server_info =
                implementation(format!("condense ({})", self.shared.upstream.label()), None);
            config.protocol_version = NEWEST_RELAYED_VERSION;
            return config;
        };
        let mut capabilities = info.capabilities.clone();
        // The added tools are listed even when the upstream has none.
        capabilities
            .tools
            .get_or_insert_with(ToolsCapability::default);
        let upstream = info.server_info.as_ref();
        let upstream_name =
            upstream.map_or_else(|| self.shared.upstream.label(), |i| i.name.clone());
        let upstream_title = upstream
            .and_then(|i| i.title.clone())
            .unwrap_or_else(|| upstream_name.clone());
        let mut server_info = implementation(
            format!("condense ({upstream_name})"),
            upstream.map(|i| i.version.clone()),
        );
        server_info.title = Some(format!("condense in front of {upstream_title}"));
        let loaded = self.loaded();
        let proxy = &loaded.engine.config().proxy;
        let mut ours = INSTRUCTIONS.replace("{query}", &proxy.query_argument_name);
        if tools::is_enabled_added_tool(&proxy.added_tools, tools::RETRIEVE) {
            ours.push_str(RETRIEVE_INSTRUCTIONS);
        }
        let instructions = match &info.instructions {
            Some(theirs) => format!("{theirs}\n\n{ours}"),
            None => ours,
        };
        let mut config = ServerConfig::new(capabilities).with_instructions(instructions);
        config.server_info = server_info;
        config.protocol_version = info.protocol_version.clone();
        config
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        let newest = self
            .upstream_info()
            .map_or(NEWEST_RELAYED_VERSION, |info| info.protocol_version.clone());
        Cow::Borrowed(ProtocolVersion::known_up_to(&newest))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let loaded = self.loaded();
        let handler = UpstreamHandler::new(
            context.peer.clone(),
            self.session.upward.clone(),
            self.session.downward.clone(),
            loaded.engine.config().limits.max_input_bytes,
        );
        if let Err(failure) = self
            .session
            .upstream
            .start(request.clone(), handler, &loaded.engine.config().proxy)
            .await
        {
            tracing::error!(%failure, "the upstream MCP server is not available");
            return Err(failure.into());
        }
        self.negotiate_initialize(&request)
    }

    async fn ping(&self, context: RequestContext<RoleServer>) -> Result<(), McpError> {
        relay!(self, context, PingRequest::default())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, McpError> {
        relay!(self, context, CompleteRequest::new(request), CompleteResult)
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        relay!(self, context, SetLevelRequest::new(request))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        match self
            .relay(GetPromptRequest::new(request).into(), &context)
            .await?
        {
            ServerResult::GetPromptResult(result) => Ok(GetPromptResponse::Complete(result)),
            ServerResult::InputRequiredResult(input) => Ok(GetPromptResponse::InputRequired(input)),
            other => Err(unexpected(&other)),
        }
    }

    async fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let request = ListPromptsRequest {
            params: request,
            ..Default::default()
        };
        relay!(self, context, request, ListPromptsResult)
    }

    async fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let request = ListResourcesRequest {
            params: request,
            ..Default::default()
        };
        relay!(self, context, request, ListResourcesResult)
    }

    async fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let request = ListResourceTemplatesRequest {
            params: request,
            ..Default::default()
        };
        relay!(self, context, request, ListResourceTemplatesResult)
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match self
            .relay(ReadResourceRequest::new(request).into(), &context)
            .await?
        {
            ServerResult::ReadResourceResult(result) => Ok(ReadResourceResponse::Complete(result)),
            ServerResult::InputRequiredResult(input) => {
                Ok(ReadResourceResponse::InputRequired(input))
            }
            other => Err(unexpected(&other)),
        }
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        relay!(self, context, SubscribeRequest::new(request))
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        relay!(self, context, UnsubscribeRequest::new(request))
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        let first_page = request.as_ref().is_none_or(|page| page.cursor.is_none());
        let mut result = if self.upstream_has_tools() {
            let request = ListToolsRequest {
                params: request,
                ..Default::default()
            };
            relay!(self, context, request, ListToolsResult)?
        } else {
            ListToolsResult::default()
        };
        let loaded = self.loaded();
        let config = loaded.engine.config();
        let query_name = config.proxy.query_argument_name.as_str();
        let listed: HashSet<String> = result.tools.iter().map(|t| t.name.to_string()).collect();
        for tool in &mut result.tools {
            let name = tool.name.to_string();
            if tools::is_enabled_added_tool(&config.proxy.added_tools, &name) {
                let listed_as = tools::collision_free_name(&name, |n| listed.contains(n));
                if lock(&self.session.renamed)
                    .insert(listed_as.clone(), name.clone())
                    .is_none()
                {
                    tracing::warn!(tool = %name, listed_as = %listed_as, "the upstream MCP server has a tool named like one the proxy adds: the proxy's keeps the name, the upstream's is listed as {listed_as}");
                }
                tool.name = listed_as.into();
            }
            let rule = config.rule_for(&name);
            if let Some(schema) = &tool.output_schema {
                lock(&self.session.output_schemas).insert(name.clone(), schema.clone());
            }
            // A dropped structured copy must not be promised: the client would reject results
            // that lack it.
            if rule.structured_content == StructuredContentPolicy::Drop {
                tool.output_schema = None;
            }
            if rule.query_argument && !tools::add_query_argument(tool, query_name) {
                tracing::warn!(tool = %name, argument = query_name, "the tool has its own argument of this name; no query channel for it");
                lock(&self.session.own_query_argument).insert(name);
            }
        }
        if first_page {
            result
                .tools
                .extend(tools::added_tools(&config.proxy.added_tools));
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // The enabled added tools answer to their names whatever the upstream lists (issue 15).
        let added = tools::is_enabled_added_tool(
            &self.loaded().engine.config().proxy.added_tools,
            &request.name,
        );
        if added {
            return self.call_added_tool(request, &context).await;
        }
        let mut request = request;
        request.name = self.upstream_name(&request.name).into();
        self.call_upstream_tool(request, &context, None, None).await
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        self.relay_custom(request, &context).await
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, McpError> {
        relay!(self, context, GetTaskRequest::new(request), GetTaskResult)
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        relay!(self, context, UpdateTaskRequest::new(request))
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), McpError> {
        relay!(self, context, CancelTaskRequest::new(request))
    }

    async fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, McpError> {
        let request = ListSkillsRequest {
            params: request,
            ..Default::default()
        };
        relay!(self, context, request, ListSkillsResult)
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, McpError> {
        relay!(self, context, GetSkillRequest::new(request), GetSkillResult)
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        relay!(
            self,
            context,
            ReadResourceDirectoryRequest::new(request),
            ListResourcesResult
        )
    }

    async fn on_progress(
        &self,
        mut notification: ProgressNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        // Progress the client reports on a request the upstream sent it (through the proxy).
        if let Some(original) = self
            .session
            .downward
            .progress
            .original(&notification.progress_token)
        {
            notification.progress_token = original;
            self.notify_upstream(ProgressNotification::new(notification).into())
                .await;
        }
    }

    async fn on_roots_list_changed(&self, _context: NotificationContext<RoleServer>) {
        self.notify_upstream(RootsListChangedNotification::default().into())
            .await;
    }

    async fn on_custom_notification(
        &self,
        notification: CustomNotification,
        _context: NotificationContext<RoleServer>,
    ) {
        self.notify_upstream(ClientNotification::CustomNotification(notification))
            .await;
    }
}

fn implementation(name: String, version: Option<String>) -> Implementation {
    // Through serde: `Implementation` is non-exhaustive and has no name/version constructor
    // that is stable across rmcp releases.
    serde_json::from_value(serde_json::json!({
        "name": name,
        "version": version.unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned()),
    }))
    .unwrap_or_else(|_| Implementation::from_build_env())
}
