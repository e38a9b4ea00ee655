//! `ferry serve --servers [NAMES...]`: the configured MCP servers behind three lazy tools
//! (README, "Many MCP servers behind three tools"), for hosts that put every tool's schema in
//! the context.
//!
//! - `find {query, limit?}`: the best tools of every server from the disk cache, one line each
//!   (`server/tool(required) - summary`), the top hit's whole help under its line.
//! - `describe {tool}`: one tool's help for JSON arguments (`name type required: ...`).
//! - `call {tool, arguments}`: the backend's result passed through (`isError`, structured
//!   content, images, resources) within the output budget, progress forwarded, the backend's
//!   questions (elicitation, sampling, roots) put to the host; an unknown tool or bad
//!   arguments come back as an `isError` result with a "did you mean" and the tool's help,
//!   never as a protocol error; a call is never replayed.
//!
//! Resources, resource templates and prompts of the backends pass through (names as
//! `server/name`, URIs as the backend gave them, `routes` says whose a URI is).
//!
//! `find` and `describe` answer from the cache and start nothing; a server never listed before
//! is listed once, in the background, when serving starts (`catalog`), and what needs its
//! tools meanwhile waits for it. Backends start on their first use and stop when idle (the
//! warm pool, in this process). With `--expose all` every tool is listed as `server__tool`
//! instead (`names`), for hosts that defer schemas themselves.

mod catalog;
mod forward;
mod names;
mod routes;

use super::provider::{invalid, tool_error, CallContext as ServeContext, Listed, Provider};
use crate::client::catalog::timeout_for;
use crate::client::config::ServerSpec;
use crate::client::handler::Unattended;
use crate::client::pins;
use crate::client::pool::Pool;
use crate::client::pool::ServerRef;
use crate::client::session::RequestContext;
use crate::protocol::lenient;
use crate::protocol::messages::ListView;
use crate::protocol::tools::Tool;
use crate::protocol::{BoxFuture, RpcError, ServerDescription};
use crate::render::json_help;
use crate::render::output::OutputContext;
use crate::render::proxy::{self, three_tools, FIND_DEFAULT, FIND_MAX};
use crate::render::text::escape_line;
use crate::render::tool::proxy_find_answer;
use crate::schema::{validate, ToolSchema};
use crate::tokens::find::{fitting_servers, servers_by_fit, shown_tools, WEAK_MARK};
use crate::words::closest;
use catalog::{Catalog, Inner, Listing};
use forward::{within_budget, Forwarder, DEFAULT_MAX_TOKENS};
use names::Exposed;
use routes::Routes;
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::fmt::Write;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// The arguments of the proxy's own tools (`find`, `describe`, `call`), read leniently: a
/// field of the wrong type reads as absent.
#[derive(Debug, Default, serde::Deserialize)]
struct MetaArguments {
    #[serde(default, deserialize_with = "lenient::opt")]
    query: Option<String>,
    #[serde(default, deserialize_with = "lenient::opt")]
    limit: Option<u64>,
    #[serde(default, deserialize_with = "lenient::opt")]
    tool: Option<String>,
    #[serde(default, deserialize_with = "lenient::any")]
    arguments: Option<Value>,
}

impl MetaArguments {
    fn read(arguments: &Map<String, Value>) -> MetaArguments {
        MetaArguments::deserialize(arguments).unwrap_or_default()
    }
}

/// How long serving waits at start for servers never listed, so that the first session's
/// catalog has their tools (a fresh cache only; they go on listing in the background).
const FIRST_LISTING_WAIT: Duration = Duration::from_secs(2);
/// How long `find` and the pass-through lists wait for servers still being listed.
const FIND_WAIT: Duration = Duration::from_secs(5);
/// How many pages of a backend's resources or prompts are passed on.
const PAGES_AT_MOST: usize = 20;

/// The proxy.
pub struct ProxyProvider {
    servers: Vec<ServerSpec>,
    catalog: Arc<Catalog>,
    pool: Arc<Pool>,
    expose_all: bool,
    /// With `--expose all`: the names and the tools as listed, fixed once serving starts.
    exposed: OnceLock<(Exposed, Vec<Value>)>,
    /// Servers never listed, until serving starts and lists them.
    unlisted: Mutex<Vec<ServerSpec>>,
    routes: Routes,
    reaping: std::sync::Once,
    /// The description as of a catalog generation: every request asks for it (for the
    /// capabilities), and it changes only when a listing ends.
    described: Mutex<Option<(u64, ServerDescription)>>,
}

impl ProxyProvider {
    /// Serves `servers`; those never listed are listed when serving starts.
    pub fn new(servers: Vec<ServerSpec>, expose_all: bool) -> crate::Result<ProxyProvider> {
        let (catalog, unlisted) = Catalog::load(&servers);
        Ok(ProxyProvider {
            servers,
            catalog: Arc::new(catalog),
            pool: Arc::new(Pool::default()),
            expose_all,
            exposed: OnceLock::new(),
            unlisted: Mutex::new(unlisted),
            routes: Routes::default(),
            reaping: std::sync::Once::new(),
            described: Mutex::new(None),
        })
    }

    fn spec(&self, name: &str) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.name == name)
    }

    /// A server's tools in the catalog checked against its pins (pinning what is new), as
    /// the CLI checks them: read at each use, so a review takes effect at once.
    fn pins_of(&self, server: &str) -> pins::Report {
        let Some(spec) = self.spec(server) else {
            return pins::Report::default();
        };
        let inner = self.catalog.read();
        let tools: Vec<&Tool> = inner
            .documents
            .documents()
            .iter()
            .filter(|d| d.server == server)
            .map(|d| &d.tool)
            .collect();
        pins::observe(spec, &tools, &pins::env_var)
    }

    /// Idle backends are stopped (checked each second, once anything has started).
    fn reap_idle(&self) {
        self.reaping.call_once(|| {
            let pool = self.pool.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    pool.reap().await;
                }
            });
        });
    }

    async fn find(&self, arguments: &Map<String, Value>) -> Value {
        let args = MetaArguments::read(arguments);
        let Some(query) = args.query.as_deref() else {
            return tool_error("find needs a query: {\"query\": \"what you want to do\"}");
        };
        let limit = args
            .limit
            .map_or(FIND_DEFAULT, |n| (n as usize).clamp(1, FIND_MAX));
        // Servers shown from a piped call's listing may offer the proxy more: wait for them.
        let coming = self.catalog.settled(None, true, FIND_WAIT).await;
        let still = still_listing(&coming);
        let inner = self.catalog.read();
        // No tool shares a word with the task: the nearest by meaning, as weak matches.
        let (ranked, weak) = inner.documents.search(query);
        if ranked.is_empty() {
            // The query is echoed back, but never at length.
            let shown: String = query.chars().take(200).collect();
            let servers: Vec<String> = self
                .servers
                .iter()
                .map(|s| escape_line(&s.name).into_owned())
                .collect();
            return text_result(format!(
                "No tool matches {:?}. Servers: {}.{still}",
                escape_line(&shown),
                servers.join(", ")
            ));
        }
        let mut hits = shown_tools(&ranked, limit);
        let mut reports: std::collections::HashMap<String, pins::Report> = Default::default();
        for hit in &mut hits {
            if !reports.contains_key(hit.server) {
                reports.insert(hit.server.to_string(), self.pins_of(hit.server));
            }
            hit.mark = reports[hit.server]
                .label(&hit.tool.name)
                .or_else(|| weak.then(|| WEAK_MARK.to_string()));
        }
        let mut answer = proxy_find_answer(&hits);
        if weak {
            let mut servers = servers_by_fit(&ranked);
            if servers.is_empty() {
                servers.push(&ranked[0].0.server);
            }
            let names: Vec<String> = servers
                .iter()
                .map(|s| escape_line(s).into_owned())
                .collect();
            answer.push_str(&format!(
                "weak matches: no tool shares a word with the task, these are the nearest by meaning; the servers that fit best: {} (find again with words of their tools)\n",
                names.join(", ")
            ));
        }
        let servers = if weak {
            Vec::new()
        } else {
            fitting_servers(&ranked)
        };
        if !servers.is_empty() {
            let names: Vec<String> = servers
                .iter()
                .map(|s| escape_line(s).into_owned())
                .collect();
            answer.push_str(&format!(
                "close matches; the servers that fit best: {} (find again with more words, or a server's name)\n",
                names.join(", ")
            ));
        }
        if !still.is_empty() {
            answer.push_str(still.trim_start());
        }
        text_result(answer)
    }

    async fn describe(&self, arguments: &Map<String, Value>) -> Value {
        let Some(name) = MetaArguments::read(arguments).tool else {
            return tool_error("describe needs a tool: {\"tool\": \"server/tool\"}");
        };
        match self.resolved(&name).await {
            Ok((server, tool)) => {
                let mark = self
                    .pins_of(&server)
                    .label(&tool.name)
                    .map(|label| format!(" {label}"))
                    .unwrap_or_default();
                text_result(format!(
                    "{}{mark}\n{}",
                    escape_line(&format!("{server}/{}", tool.name)),
                    json_help(&tool)
                ))
            }
            Err(why) => tool_error(why.to_string()),
        }
    }

    /// The tool a name means (`server/tool`, or a bare name only one server has), waiting
    /// for a server whose tools are still coming (bounded by its call timeout).
    async fn resolved(&self, name: &str) -> Result<(String, Tool), Unresolved> {
        if let Ok(found) = resolve(&self.catalog.read(), name) {
            return Ok(found);
        }
        // The listing that could still bring it: its server's when the name says one (an
        // unknown server's will bring nothing), any server's when it does not.
        let among = match name.split_once('/') {
            Some((server, _)) if self.spec(server).is_some() => Some(server),
            Some(_) => return resolve(&self.catalog.read(), name),
            None => None,
        };
        let within = among
            .and_then(|s| self.spec(s))
            .map_or(FIND_WAIT, |spec| timeout_for(spec, None));
        // A name not in a listing shown for a piped call may be in the proxy's own.
        let relisting = resolve(&self.catalog.read(), name).is_err();
        let coming = self.catalog.settled(among, relisting, within).await;
        match resolve(&self.catalog.read(), name) {
            Err(why) if !coming.is_empty() => Err(Unresolved::StillListing {
                why: Box::new(why),
                coming,
            }),
            Err(why) => match among.and_then(|s| self.failed(s)) {
                Some(failure) => Err(Unresolved::ListingFailed {
                    why: Box::new(why),
                    failure,
                }),
                None => Err(why),
            },
            found => found,
        }
    }

    /// Why a server has no tools in the catalog, when its listing failed.
    fn failed(&self, server: &str) -> Option<String> {
        match self.catalog.read().listings.get(server) {
            Some(Listing::Failed(why)) => Some(format!(
                "Listing {}'s tools failed: {}",
                escape_line(server),
                escape_line(why)
            )),
            _ => None,
        }
    }

    /// The tool and arguments a `call` names, accepting the shapes models get wrong in known
    /// ways when they are unambiguous: arguments as JSON text, arguments beside `arguments`.
    fn call_target(
        arguments: &Map<String, Value>,
    ) -> Result<(String, Map<String, Value>), BadCall> {
        let args = MetaArguments::read(arguments);
        let Some(tool) = args.tool.as_deref() else {
            return Err(BadCall::NoTool);
        };
        let beside: Map<String, Value> = arguments
            .iter()
            .filter(|(k, _)| *k != "tool" && *k != "arguments")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let given = match args.arguments {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map),
            Some(Value::String(text)) => match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(map)) => Some(map),
                _ => return Err(BadCall::ArgumentsText),
            },
            Some(_) => return Err(BadCall::ArgumentsNotObject),
        };
        match (given, beside.is_empty()) {
            (Some(map), true) => Ok((tool.to_string(), map)),
            (None, _) => Ok((tool.to_string(), beside)),
            (Some(_), false) => Err(BadCall::Beside(beside.keys().cloned().collect())),
        }
    }

    async fn call_tool(&self, arguments: Map<String, Value>, ctx: ServeContext) -> Value {
        let (name, tool_arguments) = match Self::call_target(&arguments) {
            Ok(target) => target,
            Err(why) => return tool_error(why.to_string()),
        };
        match self.resolved(&name).await {
            Ok((server, tool)) => {
                let shown = format!("{server}/{}", tool.name);
                self.forward(&server, &tool, &shown, tool_arguments, ctx)
                    .await
            }
            Err(why) => tool_error(why.to_string()),
        }
    }

    /// How the proxy starts a backend: as the CLI would in this directory, declaring what
    /// the hosts it forwards to may answer.
    fn server_ref(spec: &ServerSpec) -> crate::Result<ServerRef> {
        let mut server = ServerRef::resolve(spec)?;
        server.elicitation = true;
        server.sampling = true;
        Ok(server)
    }

    /// How a request to a backend is made on the host's behalf: its questions go to the
    /// host, its progress too.
    fn context(
        &self,
        spec: &ServerSpec,
        headers: Vec<(String, String)>,
        ctx: &ServeContext,
    ) -> RequestContext {
        RequestContext {
            handler: Arc::new(Forwarder {
                context: ctx.clone(),
                unattended: Unattended {
                    root: std::env::current_dir().ok(),
                },
            }),
            timeout: timeout_for(spec, None),
            progress: ctx.progress_token.is_some(),
            headers,
            tasks: false,
        }
    }

    /// Sends a request to a backend on the host's behalf.
    async fn request(
        &self,
        spec: &ServerSpec,
        method: &str,
        params: Value,
        headers: Vec<(String, String)>,
        ctx: &ServeContext,
    ) -> crate::Result<Value> {
        self.reap_idle();
        let server = Self::server_ref(spec)?;
        let context = self.context(spec, headers, ctx);
        self.pool.request(&server, method, params, &context).await
    }

    /// Calls a backend's tool; one the backend runs as a task (one that requires it, or one
    /// the server decides to) is waited for here, and its result passed on as any call's.
    async fn call_backend(
        &self,
        spec: &ServerSpec,
        tool: &Tool,
        params: Value,
        headers: Vec<(String, String)>,
        ctx: &ServeContext,
    ) -> crate::Result<Value> {
        use crate::client::tasks;
        self.reap_idle();
        let started = tokio::time::Instant::now();
        let server = Self::server_ref(spec)?;
        let context = self.context(spec, headers, ctx);
        let (session, busy) = self.pool.begin(&server).await?;
        let augment = tasks::augments(&session, tool, false);
        let outcome = match tasks::call(&session, params, augment, &context).await {
            Ok(tasks::Called::Done(result)) => Ok(result),
            Ok(tasks::Called::Task(task)) => {
                let status = |task: &tasks::Task| {
                    ctx.log("info", &spec.name, json!(task.line()));
                };
                tasks::wait(&session, task, &context, &status, started).await
            }
            Err(e) => Err(e),
        };
        drop(busy);
        self.pool.after_call(&server, &session);
        outcome
    }

    /// Checks the arguments against the tool's schema (errors name the tool as the host
    /// knows it, `shown`) and sends the call to its server.
    async fn forward(
        &self,
        server: &str,
        tool: &Tool,
        shown: &str,
        mut arguments: Map<String, Value>,
        ctx: ServeContext,
    ) -> Value {
        let Some(spec) = self.spec(server).cloned() else {
            return tool_error(format!("{}: its server is not served", escape_line(shown)));
        };
        // A tool whose definition changed (or hides text) is not called until reviewed.
        let report = self.pins_of(server);
        if report.blocks(&tool.name) {
            let refusal = report.refusal(&tool.name);
            let hint = refusal.hint.unwrap_or_default();
            return tool_error(format!("{}\nhint: {hint}", refusal.message));
        }
        let schema = ToolSchema::from_input_schema(&tool.input_schema);
        validate::numbers_from_text(&schema, &mut arguments);
        if let Err(violation) = validate::check_arguments(&schema, &arguments) {
            return tool_error(format!(
                "Invalid arguments for {}: {}\n{}",
                escape_line(shown),
                violation.message(),
                json_help(tool)
            ));
        }
        let headers = crate::protocol::tools::param_headers(
            &tool.input_schema,
            &Value::Object(arguments.clone()),
        );
        let params = json!({"name": tool.name, "arguments": arguments});
        match self.call_backend(&spec, tool, params, headers, &ctx).await {
            Ok(result) => {
                self.routes.learn_from_result(&spec.name, &result);
                let budget = spec.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS);
                let output = OutputContext::new(&spec.name, &tool.name);
                within_budget(result, budget, self.expose_all, &output)
            }
            Err(e) => {
                let mut text = format!("{} failed: {}", escape_line(shown), e.message);
                if let Some(detail) = &e.detail {
                    let _ = write!(text, "\n{detail}");
                }
                tool_error(text)
            }
        }
    }

    /// Each server's line of the catalog: name, tool count when known, its instructions.
    fn catalog_entries(&self) -> Vec<(String, Option<usize>, Option<String>)> {
        let inner = self.catalog.read();
        self.servers
            .iter()
            .map(|spec| {
                let count = match inner.listings.get(&spec.name) {
                    Some(Listing::Listed(n)) => Some(*n),
                    _ => None,
                };
                (
                    spec.name.clone(),
                    count,
                    inner.instructions.get(&spec.name).cloned(),
                )
            })
            .collect()
    }

    /// The servers that may have a capability (`resources`, `prompts`), after waiting a
    /// little for those still being listed.
    async fn servers_with(&self, capability: &str) -> Vec<ServerSpec> {
        self.catalog.settled(None, false, FIND_WAIT).await;
        let inner = self.catalog.read();
        self.servers
            .iter()
            .filter(|spec| inner.may_have(&spec.name, capability))
            .cloned()
            .collect()
    }

    /// Every backend's resources, templates or prompts, each named `server/name`.
    async fn pass_list(&self, what: Listed) -> Vec<Value> {
        let (method, key, capability) = match what {
            Listed::Resources => ("resources/list", "resources", "resources"),
            Listed::ResourceTemplates => {
                ("resources/templates/list", "resourceTemplates", "resources")
            }
            Listed::Prompts => ("prompts/list", "prompts", "prompts"),
        };
        let mut all = Vec::new();
        for spec in self.servers_with(capability).await {
            let mut cursor: Option<Value> = None;
            let mut listed = Vec::new();
            for _ in 0..PAGES_AT_MOST {
                let params = match &cursor {
                    Some(cursor) => json!({"cursor": cursor}),
                    None => json!({}),
                };
                let page = match self
                    .request(&spec, method, params, Vec::new(), &ServeContext::quiet())
                    .await
                {
                    Ok(page) => page,
                    Err(e) => {
                        tracing::warn!(server = %spec.name, "{method} failed: {}", e.message);
                        break;
                    }
                };
                let view = ListView::new(&page);
                if let Some(items) = view.items(key) {
                    listed.extend(items.iter().cloned());
                }
                cursor = view.next_cursor().filter(|c| !c.is_null()).cloned();
                if cursor.is_none() {
                    break;
                }
            }
            match what {
                Listed::Resources => {
                    for item in &listed {
                        if let Some(uri) = ListView::new(item).uri() {
                            self.routes.learn(&spec.name, uri);
                        }
                    }
                }
                Listed::ResourceTemplates => self.routes.learn_templates(&spec.name, &listed),
                Listed::Prompts => {}
            }
            all.extend(listed.into_iter().map(|mut item| {
                if let Some(name) = ListView::new(&item).name() {
                    item["name"] = json!(format!("{}/{name}", spec.name));
                }
                item
            }));
        }
        all
    }

    /// The served server a `server/name` names, and the name on that server.
    fn split_name<'n>(&self, name: &'n str) -> Option<(&ServerSpec, &'n str)> {
        self.servers
            .iter()
            .filter_map(|spec| {
                let rest = name.strip_prefix(spec.name.as_str())?.strip_prefix('/')?;
                Some((spec, rest))
            })
            .max_by_key(|(spec, _)| spec.name.len())
    }

    fn upstream_error(e: crate::Error) -> RpcError {
        RpcError {
            code: crate::protocol::INTERNAL_ERROR,
            message: e.message,
            data: None,
        }
    }

    /// serverInfo, capabilities and the catalog in the instructions, as the catalog stands.
    fn describe_now(&self) -> ServerDescription {
        let entries = self.catalog_entries();
        let failed: Vec<(String, String)> = {
            let inner = self.catalog.read();
            self.servers
                .iter()
                .filter_map(|spec| match inner.listings.get(&spec.name) {
                    Some(Listing::Failed(why)) => Some((spec.name.clone(), why.clone())),
                    _ => None,
                })
                .collect()
        };
        let instructions = if self.expose_all {
            proxy::exposed_instructions_text(&entries, &failed)
        } else {
            proxy::instructions_text(&entries, &failed)
        };
        // Logging is declared so clients may set a level; the proxy logs nothing itself.
        let mut capabilities = json!({"tools": {}, "logging": {},
            "extensions": {crate::serve::tasks::EXTENSION: {}}});
        let inner = self.catalog.read();
        for capability in ["resources", "prompts"] {
            if self
                .servers
                .iter()
                .any(|s| inner.may_have(&s.name, capability))
            {
                capabilities[capability] = json!({});
            }
        }
        ServerDescription {
            server_info: json!({"name": "ferry", "version": env!("CARGO_PKG_VERSION")}),
            capabilities,
            instructions: Some(instructions),
        }
    }

    /// Calls a tool by the name `--expose all` listed.
    async fn call_exposed(
        &self,
        name: &str,
        arguments: Map<String, Value>,
        ctx: ServeContext,
    ) -> Result<Value, RpcError> {
        let Some((exposed, _)) = self.exposed.get() else {
            return Err(invalid(format!("Unknown tool: {}", escape_line(name))));
        };
        let Some((server, tool_name)) = exposed.tool(name) else {
            let shown: String = name.chars().take(200).collect();
            let near = closest(name, exposed.names())
                .map(|n| format!(" Did you mean {n}?"))
                .unwrap_or_default();
            return Err(invalid(format!(
                "Unknown tool: {}.{near}",
                escape_line(&shown)
            )));
        };
        let tool = {
            let inner = self.catalog.read();
            inner
                .documents
                .documents()
                .iter()
                .find(|d| d.server == server && d.tool.name == tool_name)
                .map(|d| d.tool.clone())
        };
        match tool {
            Some(tool) => Ok(self.forward(server, &tool, name, arguments, ctx).await),
            None => Err(invalid(format!("Unknown tool: {}", escape_line(name)))),
        }
    }
}

/// How a proxy `call` must be shaped, as its refusals say.
const CALL_SHAPE: &str = "call takes {\"tool\": \"server/tool\", \"arguments\": {...}}";

/// Why a proxy `call`'s arguments name no call (told to the model).
#[derive(Debug, thiserror::Error)]
enum BadCall {
    #[error("{CALL_SHAPE}: the tool is missing.")]
    NoTool,
    #[error("{CALL_SHAPE}: \"arguments\" is text that is not a JSON object.")]
    ArgumentsText,
    #[error("{CALL_SHAPE}: \"arguments\" must be an object.")]
    ArgumentsNotObject,
    #[error("{CALL_SHAPE}: put every argument inside \"arguments\" (found {} beside it).", .0.join(", "))]
    Beside(Vec<String>),
}

/// Why a name leads to no one tool in the catalog (told to the model); names come escaped.
#[derive(Debug, thiserror::Error)]
enum Unresolved {
    #[error("No tool {shown:?} on the connected servers.{near} Use find to search for one.")]
    NoTool { shown: String, near: String },
    #[error("{name:?} is a tool of several servers; say which: {}.", servers.join(", "))]
    Ambiguous { name: String, servers: Vec<String> },
    #[error("{why}{}", still_listing(coming))]
    StillListing {
        why: Box<Unresolved>,
        coming: Vec<String>,
    },
    #[error("{why} {failure}")]
    ListingFailed {
        why: Box<Unresolved>,
        failure: String,
    },
}

/// What a tool name means in the catalog.
fn resolve(inner: &Inner, name: &str) -> Result<(String, Tool), Unresolved> {
    let documents = inner.documents.documents();
    let (server, tool) = match name.split_once('/') {
        Some((server, tool)) => (Some(server), tool),
        None => match name.split_once("__") {
            Some((server, tool)) if documents.iter().any(|d| d.server == server) => {
                (Some(server), tool)
            }
            _ => (None, name),
        },
    };
    let matches: Vec<_> = documents
        .iter()
        .filter(|d| d.tool.name == tool && server.is_none_or(|s| d.server == s))
        .collect();
    match matches.as_slice() {
        [one] => Ok((one.server.clone(), one.tool.clone())),
        [] => {
            let names: Vec<String> = documents
                .iter()
                .map(|d| format!("{}/{}", d.server, d.tool.name))
                .collect();
            let near = closest(name, names.iter().map(String::as_str))
                .map(|n| format!(" Did you mean {}?", escape_line(n)))
                .unwrap_or_default();
            // The name is echoed back, but never at length.
            let shown: String = name.chars().take(200).collect();
            Err(Unresolved::NoTool {
                shown: escape_line(&shown).into_owned(),
                near,
            })
        }
        many => Err(Unresolved::Ambiguous {
            name: escape_line(name).into_owned(),
            servers: many
                .iter()
                .map(|d| escape_line(&format!("{}/{}", d.server, d.tool.name)).into_owned())
                .collect(),
        }),
    }
}

/// The sentence that names servers still being listed (empty when none is).
fn still_listing(coming: &[String]) -> String {
    if coming.is_empty() {
        return String::new();
    }
    let names: Vec<String> = coming.iter().map(|s| escape_line(s).into_owned()).collect();
    format!(
        " Still listing the tools of {}; ask again in a moment.",
        names.join(", ")
    )
}

fn text_result(text: String) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// Waits for every task of `handles`, whatever each ends with.
async fn all_ended(handles: Vec<tokio::task::JoinHandle<()>>) {
    for handle in handles {
        let _ = handle.await;
    }
}

/// Lists a server the proxy has not listed yet, through the warm pool (the first call finds it started), into
/// the cache and the catalog.
async fn list_once(spec: ServerSpec, pool: Arc<Pool>, catalog: Arc<Catalog>) {
    let listed = async {
        let server = ProxyProvider::server_ref(&spec)?;
        let session = pool.session(&server).await?;
        crate::client::catalog::refresh_tools(&spec, &session).await
    };
    match listed.await {
        Ok(entry) => catalog.add(&spec, entry),
        Err(e) => catalog.failed(&spec.name, e.message),
    }
}

impl Provider for ProxyProvider {
    fn description(&self) -> ServerDescription {
        let generation = self.catalog.generation();
        let mut described = self.described.lock().unwrap_or_else(|e| e.into_inner());
        match &*described {
            Some((at, description)) if *at == generation => description.clone(),
            _ => {
                let description = self.describe_now();
                *described = Some((generation, description.clone()));
                description
            }
        }
    }

    fn start(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let unlisted =
                std::mem::take(&mut *self.unlisted.lock().unwrap_or_else(|e| e.into_inner()));
            let longest = unlisted
                .iter()
                .map(|spec| timeout_for(spec, None))
                .max()
                .unwrap_or_default();
            if !unlisted.is_empty() {
                self.reap_idle();
            }
            let listings: Vec<_> = unlisted
                .into_iter()
                .map(|spec| tokio::spawn(list_once(spec, self.pool.clone(), self.catalog.clone())))
                .collect();
            if self.expose_all {
                // The tool list is fixed for the session: it waits for every server, those
                // shown from a piped call's listing meanwhile too (listed again for the proxy).
                let _ = tokio::time::timeout(longest, all_ended(listings)).await;
                self.catalog.settled(None, true, longest).await;
                // What waits for review stays out of the host's list until reviewed.
                let blocked: Vec<(String, String)> = self
                    .servers
                    .iter()
                    .flat_map(|spec| {
                        let report = self.pins_of(&spec.name);
                        report
                            .waiting()
                            .into_iter()
                            .map(|tool| (spec.name.clone(), tool.to_string()))
                            .collect::<Vec<_>>()
                    })
                    .collect();
                let inner = self.catalog.read();
                let documents: Vec<_> = inner
                    .documents
                    .documents()
                    .iter()
                    .filter(|d| {
                        !blocked
                            .iter()
                            .any(|(server, tool)| *server == d.server && *tool == d.tool.name)
                    })
                    .collect();
                let exposed = Exposed::new(
                    documents
                        .iter()
                        .map(|d| (d.server.as_str(), d.tool.name.as_str())),
                );
                let listed = documents
                    .iter()
                    .filter_map(|d| {
                        let mut raw = d.tool.raw.clone();
                        raw["name"] = json!(exposed.name(&d.server, &d.tool.name)?);
                        Some(raw)
                    })
                    .collect();
                let _ = self.exposed.set((exposed, listed));
            } else {
                self.catalog.settled(None, false, FIRST_LISTING_WAIT).await;
            }
        })
    }

    /// A call may outlive its request as a task, for a host that declared the extension
    /// (the backend's call goes on in this process; cancelling the task cancels it).
    fn task_support(&self, name: &str) -> crate::manifest::TaskSupport {
        if self.expose_all || name == "call" {
            crate::manifest::TaskSupport::Optional
        } else {
            crate::manifest::TaskSupport::Never
        }
    }

    fn tools(&self) -> Vec<Value> {
        match self.exposed.get() {
            Some((_, listed)) if self.expose_all => listed.clone(),
            _ if self.expose_all => Vec::new(),
            _ => three_tools(),
        }
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        ctx: ServeContext,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            // A backend's question to the client gives the slot back while it waits.
            let (_slot, asker) = super::provider::Yielding::hold(&ctx).await?;
            let ctx = ServeContext { asker, ..ctx };
            if self.expose_all {
                return self.call_exposed(name, arguments, ctx).await;
            }
            match name {
                "find" => Ok(self.find(&arguments).await),
                "describe" => Ok(self.describe(&arguments).await),
                "call" => Ok(self.call_tool(arguments, ctx).await),
                other => Ok(tool_error(format!(
                    "Unknown tool {:?}: this server has find, describe and call.",
                    escape_line(other)
                ))),
            }
        })
    }

    fn list(&self, what: Listed) -> BoxFuture<'_, Vec<Value>> {
        Box::pin(self.pass_list(what))
    }

    fn read<'a>(
        &'a self,
        uri: &'a str,
        ctx: ServeContext,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            let _slot = ctx.slot().await?;
            let with_resources: Vec<String> = self
                .servers_with("resources")
                .await
                .into_iter()
                .map(|s| s.name)
                .collect();
            let Some(spec) = self
                .routes
                .route(uri, &with_resources)
                .and_then(|name| self.spec(&name).cloned())
            else {
                return Err(super::provider::not_found(uri));
            };
            self.request(
                &spec,
                "resources/read",
                json!({"uri": uri}),
                Vec::new(),
                &ctx,
            )
            .await
            .map_err(Self::upstream_error)
        })
    }

    fn get_prompt<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        ctx: ServeContext,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            let Some((spec, prompt)) = self.split_name(name) else {
                return Err(invalid(format!(
                    "unknown prompt {:?}: prompts are named server/prompt",
                    escape_line(name)
                )));
            };
            let spec = spec.clone();
            let params = json!({"name": prompt, "arguments": arguments});
            let _slot = ctx.slot().await?;
            self.request(&spec, "prompts/get", params, Vec::new(), &ctx)
                .await
                .map_err(Self::upstream_error)
        })
    }
}
