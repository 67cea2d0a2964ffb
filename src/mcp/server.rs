//! The server side of the proxy: one [`ProxyServer`] per client session, relaying every request
//! to the session's upstream connection and condensing `tools/call` results on the way back.

// Logging, subscriptions and sampling are deprecated by the newest protocol revision, but the
// revisions the proxy relays have them, and relaying them is the point.
#![allow(deprecated)]

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::ServerPeerInfo;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CancelTaskRequest,
    ClientNotification, ClientRequest, CompleteRequest, CompleteRequestParams, CompleteResult,
    CustomNotification, CustomRequest, CustomResult, ErrorData as McpError, GetPromptRequest,
    GetPromptRequestParams, GetPromptResponse, GetSkillRequest, GetSkillRequestParams,
    GetSkillResult, GetTaskParams, GetTaskRequest, GetTaskResult, Implementation,
    InitializeRequestParams, InitializeResult, JsonObject, ListPromptsRequest, ListPromptsResult,
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
use rmcp::{Peer, RoleServer, ServerHandler};
use tokio::sync::watch;

mod call;
mod custom;
#[cfg(test)]
mod tests;

use super::progress::ProgressRoutes;
use super::relay::{RelayError, relay_request};
use super::setup::SetupChange;
use super::supervisor::{Supervisor, UpstreamFailure};
use super::tools;
use super::upstream::{NEWEST_RELAYED_VERSION, UpstreamHandler, UpstreamSpec};
use crate::{Condenser, StructuredContentPolicy};

/// What every session of one proxy shares.
#[derive(Debug)]
pub(crate) struct Shared {
    pub(crate) upstream: UpstreamSpec,
    /// The configuration in force; replaced on reload.
    pub(crate) loaded: watch::Receiver<Arc<Loaded>>,
}

/// What one version of the configuration file gives the proxy.
#[derive(Debug)]
pub(crate) struct Loaded {
    /// The engine, and through it the one `Config` (the proxy's keys included).
    pub(crate) engine: Condenser,
    /// The engines of earlier versions, newest first: refs they handed out stay retrievable
    /// after a reload.
    pub(crate) previous: Vec<Condenser>,
}

/// One client session: its upstream connection and what the proxy learned from it.
#[derive(Debug)]
struct Session {
    upstream: Supervisor,
    progress_up: ProgressRoutes,
    progress_down: ProgressRoutes,
    /// Output schemas as the upstream listed them, for validating condensed results.
    output_schemas: Mutex<HashMap<String, Arc<JsonObject>>>,
    /// Tools whose own input schema already has an argument named like the query argument.
    own_query_argument: Mutex<HashSet<String>>,
    /// Upstream tools listed under another name because an added tool has theirs: listed
    /// name → the upstream's name. The added tool keeps its name for the whole session.
    renamed: Mutex<HashMap<String, String>>,
    /// Refs of the images, audio and binary resources this session replaced by a description:
    /// `condense_retrieve` answers them with the item itself.
    binary_refs: Mutex<HashSet<String>>,
    /// Task-augmented `tools/call`s by task id, until their result is fetched.
    task_calls: Mutex<HashMap<String, custom::TaskCall>>,
    /// In HTTP mode, a random id that owns the originals this session's calls keep, so no
    /// other session reads them; `None` over stdio, where the process serves one client.
    owner: Option<String>,
}

impl Session {
    fn new(upstream: UpstreamSpec) -> Self {
        Session {
            upstream: Supervisor::new(upstream),
            progress_up: ProgressRoutes::default(),
            progress_down: ProgressRoutes::default(),
            output_schemas: Mutex::default(),
            own_query_argument: Mutex::default(),
            renamed: Mutex::default(),
            binary_refs: Mutex::default(),
            task_calls: Mutex::default(),
            owner: None,
        }
    }
}

/// The MCP server the client talks to.
#[derive(Debug, Clone)]
pub(crate) struct ProxyServer {
    shared: Arc<Shared>,
    session: Arc<Session>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Plain maps: a panic elsewhere cannot leave them half-updated.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

fn unexpected(result: &ServerResult) -> McpError {
    let kind = serde_json::to_value(result)
        .ok()
        .and_then(|value| {
            value
                .as_object()
                .map(|o| o.keys().cloned().collect::<Vec<_>>().join(","))
        })
        .unwrap_or_default();
    McpError::internal_error(
        format!("upstream answered with an unexpected result ({kind})"),
        None,
    )
}

/// Relays `$request` and unwraps the expected result variant.
macro_rules! relay {
    ($self:ident, $context:ident, $request:expr, $variant:ident) => {{
        match $self
            .relay(ClientRequest::from($request), &$context)
            .await?
        {
            ServerResult::$variant(result) => Ok(result),
            other => Err(unexpected(&other)),
        }
    }};
    ($self:ident, $context:ident, $request:expr) => {{
        $self
            .relay(ClientRequest::from($request), &$context)
            .await
            .map(|_| ())
    }};
}

impl ProxyServer {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        let session = Arc::new(Session::new(shared.upstream.clone()));
        ProxyServer { shared, session }
    }

    /// A server for one HTTP session: the originals its calls keep are readable only from it,
    /// unless `[store] share_across_sessions`. The id is the proxy's own, never the client's
    /// session id, so a client cannot name another session's.
    pub(crate) fn for_http_session(shared: Arc<Shared>) -> Self {
        let mut session = Session::new(shared.upstream.clone());
        session.owner = Some(format!("{:032x}", fastrand::u128(..)));
        ProxyServer {
            shared,
            session: Arc::new(session),
        }
    }

    fn loaded(&self) -> Arc<Loaded> {
        self.shared.loaded.borrow().clone()
    }

    fn upstream_info(&self) -> Option<Arc<ServerPeerInfo>> {
        self.session
            .upstream
            .latest_peer()
            .as_ref()
            .and_then(Peer::peer_info)
    }

    /// Stops the upstream connection: closes the child's stdin and gives it `grace` to exit.
    /// A child still running after that is killed.
    pub(crate) async fn close(&self, grace: std::time::Duration) {
        self.session.upstream.close(grace).await;
    }

    /// Relays `request` to the upstream, starting it again first if it crashed.
    async fn relay(
        &self,
        request: ClientRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<ServerResult, McpError> {
        let loaded = self.loaded();
        let proxy = &loaded.engine.config().proxy;
        let supervisor = &self.session.upstream;
        let live = supervisor.acquire(proxy, &context.ct).await?;
        let method = request.method().to_owned();
        let setup_change = SetupChange::of(&request);
        let relayed = relay_request(
            &live.vitals.peer,
            request,
            &context.meta,
            &context.ct,
            &self.session.progress_up,
            proxy.upstream_timeout,
        )
        .await;
        match relayed {
            Ok(result) => {
                if let Some(change) = setup_change {
                    supervisor.setup_accepted(change);
                }
                Ok(result)
            }
            Err(RelayError::ConnectionLost(_)) => {
                let mut error: McpError = supervisor.lost(&live, proxy).await.into();
                let limit = loaded.engine.config().limits.max_input_bytes;
                if let Some(hint) = self.shared.upstream.lost_hint(limit) {
                    error.message = format!("{}{hint}", error.message).into();
                }
                Err(error)
            }
            Err(RelayError::Timeout(after)) => Err(UpstreamFailure::TimedOut {
                upstream: self.shared.upstream.label(),
                method,
                after,
            }
            .into()),
            Err(RelayError::Cancelled) => Err(UpstreamFailure::Cancelled.into()),
            Err(RelayError::Answered(error)) => Err(error),
        }
    }

    async fn notify_upstream(&self, notification: ClientNotification) {
        // Notifications do not start a crashed upstream: a new one would not know what they
        // refer to.
        if let Some(peer) = self.session.upstream.latest_peer()
            && !peer.is_transport_closed()
            && let Err(error) = peer.send_notification(notification).await
        {
            tracing::warn!(%error, "could not relay a notification upstream");
        }
    }

    /// The upstream's name of a tool listed as `listed`: different when an added tool has it.
    fn upstream_name(&self, listed: &str) -> String {
        lock(&self.session.renamed)
            .get(listed)
            .cloned()
            .unwrap_or_else(|| listed.to_owned())
    }

    fn upstream_has_tools(&self) -> bool {
        self.upstream_info()
            .is_some_and(|info| info.capabilities.tools.is_some())
    }
}

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
            self.session.progress_up.clone(),
            self.session.progress_down.clone(),
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
            .progress_down
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
