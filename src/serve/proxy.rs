//! `ferry serve --servers [NAMES...]`: the configured MCP servers behind three lazy tools
//! (DESIGN.md section 4, "MCP to MCP"), for hosts that put every tool's schema in the context.
//!
//! - `find {query, limit?}`: the best tools of every server from the disk cache, one line each
//!   (`server/tool(required) - summary`), the top hit's whole help under its line.
//! - `describe {tool}`: one tool's help for JSON arguments (`name type required: ...`).
//! - `call {tool, arguments}`: the backend's result passed through unchanged, progress
//!   forwarded; an unknown tool or bad arguments come back as an `isError` result with a
//!   "did you mean" and the tool's help, never as a protocol error; a call is never replayed.
//!
//! `find` and `describe` answer from the cache and start nothing; a server never listed before
//! is listed once, in the background, when the proxy starts. Backends start on their first
//! call and stop when idle (the warm pool, in this process). With `--expose all` every tool is
//! listed as `server__tool` instead, for hosts that defer schemas themselves.

use super::provider::{invalid, tool_error, CallContext as ServeContext, Provider};
use crate::client::config::ServerSpec;
use crate::client::handler::{ClientHandler, ClientRequestError, Unattended};
use crate::client::session::CallContext;
use crate::client::{catalog, CacheEntry};
use crate::daemon::pool::Pool;
use crate::daemon::wire::ServerRef;
use crate::protocol::{BoxFuture, RpcError, ServerDescription};
use crate::render::json_help;
use crate::render::proxy::{self, three_tools, FIND_DEFAULT, FIND_MAX};
use crate::render::tool::{proxy_find_answer, FoundTool};
use crate::schema::{validate, ToolSchema};
use crate::tokens::find::{shown, Document, Index};
use crate::words::closest;
use serde_json::{json, Map, Value};
use std::fmt::Write;
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The tools of every served server, as the cache holds them.
#[derive(Default)]
struct Catalog {
    documents: Index,
}

impl Catalog {
    fn load(servers: &[ServerSpec]) -> (Catalog, Vec<ServerSpec>) {
        let mut documents = Vec::new();
        let mut unlisted = Vec::new();
        for spec in servers {
            match CacheEntry::load(spec).filter(CacheEntry::has_tools) {
                Some(entry) => {
                    let (tools, _) = catalog::usable_tools(spec, entry);
                    documents.extend(tools.into_iter().map(|t| Document::new(&spec.name, t)));
                }
                None => unlisted.push(spec.clone()),
            }
        }
        let documents = Index::new(documents).with_postings();
        (Catalog { documents }, unlisted)
    }

    fn add(&mut self, spec: &ServerSpec, entry: CacheEntry) {
        let mut documents = std::mem::take(&mut self.documents).into_documents();
        documents.retain(|d| d.server != spec.name);
        let (tools, _) = catalog::usable_tools(spec, entry);
        documents.extend(tools.into_iter().map(|t| Document::new(&spec.name, t)));
        self.documents = Index::new(documents).with_postings();
    }

    /// A tool by `server/tool`, or by its bare name when only one server has it.
    fn resolve(&self, name: &str) -> Result<&Document, String> {
        let (server, tool) = match name.split_once('/') {
            Some((server, tool)) => (Some(server), tool),
            None => match name.split_once("__") {
                Some((server, tool))
                    if self
                        .documents
                        .documents()
                        .iter()
                        .any(|d| d.server == server) =>
                {
                    (Some(server), tool)
                }
                _ => (None, name),
            },
        };
        let matches: Vec<&Document> = self
            .documents
            .documents()
            .iter()
            .filter(|d| d.tool.name == tool && server.is_none_or(|s| d.server == s))
            .collect();
        match matches.as_slice() {
            [one] => Ok(one),
            [] => {
                let names: Vec<String> = self
                    .documents
                    .documents()
                    .iter()
                    .map(|d| format!("{}/{}", d.server, d.tool.name))
                    .collect();
                let near = closest(name, names.iter().map(String::as_str))
                    .map(|n| format!(" Did you mean {n}?"))
                    .unwrap_or_default();
                // The name is echoed back, but never at length.
                let shown: String = name.chars().take(200).collect();
                Err(format!(
                    "No tool {shown:?} on the connected servers.{near} Use find to search for one."
                ))
            }
            many => Err(format!(
                "{name:?} is a tool of several servers; say which: {}.",
                many.iter()
                    .map(|d| format!("{}/{}", d.server, d.tool.name))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

/// Answers what a backend asks during a call on behalf of this proxy's client: progress goes
/// to the client; roots are the proxy's directory and elicitation is declined, as for any
/// caller with nobody to ask.
struct Forwarder {
    context: ServeContext,
    unattended: Unattended,
}

impl ClientHandler for Forwarder {
    fn answer<'a>(
        &'a self,
        method: &'a str,
        params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ClientRequestError>> {
        self.unattended.answer(method, params)
    }

    fn progress(&self, params: &Value) {
        let done = params
            .get("progress")
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let total = params.get("total").and_then(Value::as_f64);
        let message = params.get("message").and_then(Value::as_str);
        self.context.progress(done, total, message);
    }
}

/// The proxy.
pub struct ProxyProvider {
    servers: Vec<ServerSpec>,
    catalog: Arc<RwLock<Catalog>>,
    pool: Arc<Pool>,
    expose_all: bool,
    listed: Vec<Value>,
    instructions: String,
    reaping: std::sync::Once,
}

impl ProxyProvider {
    /// Serves `servers`. Servers never listed are listed now in the background (at once with
    /// `--expose all`, whose tool list must hold them from the start).
    pub fn new(servers: Vec<ServerSpec>, expose_all: bool) -> crate::Result<ProxyProvider> {
        let (catalog, unlisted) = Catalog::load(&servers);
        let catalog = Arc::new(RwLock::new(catalog));
        if !unlisted.is_empty() {
            let lister = {
                let catalog = catalog.clone();
                std::thread::spawn(move || list_in_background(unlisted, catalog))
            };
            if expose_all {
                let _ = lister.join();
            }
        }
        let listed = if expose_all {
            exposed_tools(&catalog.read().unwrap_or_else(|e| e.into_inner()))
        } else {
            three_tools()
        };
        let instructions = instructions(&servers);
        Ok(ProxyProvider {
            servers,
            catalog,
            pool: Arc::new(Pool::default()),
            expose_all,
            listed,
            instructions,
            reaping: std::sync::Once::new(),
        })
    }

    fn catalog(&self) -> std::sync::RwLockReadGuard<'_, Catalog> {
        self.catalog.read().unwrap_or_else(|e| e.into_inner())
    }

    fn find(&self, arguments: &Map<String, Value>) -> Value {
        let Some(query) = arguments.get("query").and_then(Value::as_str) else {
            return tool_error("find needs a query: {\"query\": \"what you want to do\"}");
        };
        let limit = arguments
            .get("limit")
            .and_then(Value::as_u64)
            .map_or(FIND_DEFAULT, |n| (n as usize).clamp(1, FIND_MAX));
        let catalog = self.catalog();
        let ranked = catalog.documents.rank(query);
        if ranked.is_empty() {
            // The query is echoed back, but never at length.
            let shown: String = query.chars().take(200).collect();
            return text_result(format!(
                "No tool matches {shown:?}. Servers: {}.",
                self.servers
                    .iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        let hits: Vec<FoundTool> = shown(&ranked, limit)
            .into_iter()
            .map(|(i, with_help)| FoundTool {
                server: &ranked[i].0.server,
                tool: &ranked[i].0.tool,
                with_help,
            })
            .collect();
        text_result(proxy_find_answer(&hits))
    }

    fn describe(&self, arguments: &Map<String, Value>) -> Value {
        let Some(name) = arguments.get("tool").and_then(Value::as_str) else {
            return tool_error("describe needs a tool: {\"tool\": \"server/tool\"}");
        };
        let catalog = self.catalog();
        match catalog.resolve(name) {
            Ok(doc) => text_result(format!(
                "{}/{}\n{}",
                doc.server,
                doc.tool.name,
                json_help(&doc.tool)
            )),
            Err(why) => tool_error(why),
        }
    }

    /// The tool and arguments a `call` names, accepting the shapes models get wrong in known
    /// ways when they are unambiguous: arguments as JSON text, arguments beside `arguments`.
    fn call_target(arguments: &Map<String, Value>) -> Result<(String, Map<String, Value>), String> {
        let shape = "call takes {\"tool\": \"server/tool\", \"arguments\": {...}}";
        let Some(tool) = arguments.get("tool").and_then(Value::as_str) else {
            return Err(format!("{shape}: the tool is missing."));
        };
        let beside: Map<String, Value> = arguments
            .iter()
            .filter(|(k, _)| *k != "tool" && *k != "arguments")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let given = match arguments.get("arguments") {
            None | Some(Value::Null) => None,
            Some(Value::Object(map)) => Some(map.clone()),
            Some(Value::String(text)) => match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(map)) => Some(map),
                _ => {
                    return Err(format!(
                        "{shape}: \"arguments\" is text that is not a JSON object."
                    ))
                }
            },
            Some(_) => return Err(format!("{shape}: \"arguments\" must be an object.")),
        };
        match (given, beside.is_empty()) {
            (Some(map), true) => Ok((tool.to_string(), map)),
            (None, _) => Ok((tool.to_string(), beside)),
            (Some(_), false) => Err(format!(
                "{shape}: put every argument inside \"arguments\" (found {} beside it).",
                beside.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
        }
    }

    async fn call_tool(&self, arguments: Map<String, Value>, ctx: ServeContext) -> Value {
        let (name, tool_arguments) = match Self::call_target(&arguments) {
            Ok(target) => target,
            Err(why) => return tool_error(why),
        };
        self.forward(&name, tool_arguments, ctx).await
    }

    /// Checks the arguments against the tool's schema and sends the call to its server.
    async fn forward(
        &self,
        name: &str,
        mut arguments: Map<String, Value>,
        ctx: ServeContext,
    ) -> Value {
        let (spec, tool) = {
            let catalog = self.catalog();
            let doc = match catalog.resolve(name) {
                Ok(doc) => doc,
                Err(why) => return tool_error(why),
            };
            let spec = self.servers.iter().find(|s| s.name == doc.server).cloned();
            (spec, doc.tool.clone())
        };
        let Some(spec) = spec else {
            return tool_error(format!("{name}: its server is not served"));
        };
        let schema = ToolSchema::from_input_schema(&tool.input_schema);
        validate::numbers_from_text(&schema, &mut arguments);
        if let Err(violation) = validate::check_arguments(&schema, &arguments) {
            return tool_error(format!(
                "Invalid arguments for {}/{}: {}\n{}",
                spec.name,
                tool.name,
                violation.message(),
                json_help(&tool)
            ));
        }
        self.reaping.call_once(|| {
            let pool = self.pool.clone();
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    pool.reap().await;
                }
            });
        });
        let server = match ServerRef::resolve(&spec) {
            Ok(server) => server,
            Err(e) => return tool_error(format!("{}: {}", spec.name, e.message)),
        };
        let context = CallContext {
            handler: Arc::new(Forwarder {
                context: ctx.clone(),
                unattended: Unattended {
                    root: std::env::current_dir().ok(),
                },
            }),
            timeout: catalog::timeout_for(&spec, None),
            progress: ctx.progress_token.is_some(),
            headers: crate::protocol::tools::param_headers(
                &tool.input_schema,
                &Value::Object(arguments.clone()),
            ),
            // Task-augmented calls are the proxy's to pass through, not handled here yet.
            tasks: false,
        };
        let params = json!({"name": tool.name, "arguments": arguments});
        match self
            .pool
            .request(&server, "tools/call", params, &context)
            .await
        {
            Ok(result) => result,
            Err(e) => {
                let mut text = format!("{}/{} failed: {}", spec.name, tool.name, e.message);
                if let Some(detail) = &e.detail {
                    let _ = write!(text, "\n{detail}");
                }
                tool_error(text)
            }
        }
    }
}

fn text_result(text: String) -> Value {
    json!({"content": [{"type": "text", "text": text}]})
}

/// Lists servers that were never listed, one after another, into the cache and the catalog.
fn list_in_background(servers: Vec<ServerSpec>, catalog: Arc<RwLock<Catalog>>) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async {
        for spec in servers {
            let handler = Arc::new(Unattended::default());
            let timeout = catalog::timeout_for(&spec, None);
            let Ok(session) = catalog::open_session(&spec, timeout, None, handler).await else {
                continue;
            };
            if let Ok(entry) = catalog::refresh_tools(&spec, &session).await {
                catalog
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .add(&spec, entry);
            }
            session.close().await;
        }
    });
}

/// `--expose all`: every tool as `server__tool`, its schema as the server gave it.
fn exposed_tools(catalog: &Catalog) -> Vec<Value> {
    catalog
        .documents
        .documents()
        .iter()
        .map(|d| {
            let mut raw = d.tool.raw.clone();
            raw["name"] = json!(format!("{}__{}", d.server, d.tool.name));
            raw
        })
        .collect()
}

/// The catalog every session starts with: a line per server, its name, a few words, and its
/// tool count.
fn instructions(servers: &[ServerSpec]) -> String {
    let lines: Vec<(String, Option<usize>, Option<String>)> = servers
        .iter()
        .map(|spec| {
            let entry = CacheEntry::load(spec).unwrap_or_default();
            let count = entry
                .has_tools()
                .then(|| catalog::usable_tools(spec, entry.clone()).0.len());
            (spec.name.clone(), count, entry.description.instructions)
        })
        .collect();
    proxy::instructions_text(&lines)
}

impl Provider for ProxyProvider {
    fn description(&self) -> ServerDescription {
        ServerDescription {
            server_info: json!({"name": "ferry", "version": env!("CARGO_PKG_VERSION")}),
            // Logging is declared so clients may set a level; the proxy logs nothing itself.
            capabilities: json!({"tools": {}, "logging": {}}),
            instructions: Some(self.instructions.clone()),
        }
    }

    fn tools(&self) -> Vec<Value> {
        self.listed.clone()
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        arguments: Map<String, Value>,
        ctx: ServeContext,
    ) -> BoxFuture<'a, Result<Value, RpcError>> {
        Box::pin(async move {
            if self.expose_all {
                if !self.listed.iter().any(|t| t["name"] == json!(name)) {
                    return Err(invalid(format!("Unknown tool: {name}")));
                }
                return Ok(self.forward(name, arguments, ctx).await);
            }
            match name {
                "find" => Ok(self.find(&arguments)),
                "describe" => Ok(self.describe(&arguments)),
                "call" => Ok(self.call_tool(arguments, ctx).await),
                other => Ok(tool_error(format!(
                    "Unknown tool {other:?}: this server has find, describe and call."
                ))),
            }
        })
    }
}
