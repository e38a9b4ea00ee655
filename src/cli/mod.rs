//! The command line: ferry's own commands, and `ferry <server> [<tool> [args]]` for any server.
//!
//! Words are read in order: ferry's global options, then a command or a server (a configured
//! name, a URL, or `--cmd 'COMMAND'`), then that server's options, then a tool and its
//! arguments, which the tool's schema parses (`flags`). Listing and help come from the tools
//! cache; only calls, refreshes and cache misses start a server.

mod economy;
pub mod flags;

pub mod output;

use crate::client::config::{self, check_server_name, Registry, ServerSpec};
use crate::client::import::{read_servers, ImportSource};
use crate::client::session::{Era, Session, SessionOptions};
use crate::client::CacheEntry;
use crate::protocol::tools::{parse_tools_owned, Tool};
use crate::{Error, ErrorKind, Result};
use flags::{CallOptions, DeferredStdin, ParsedCall};
use output::OutputContext;
use serde_json::{json, Map, Value};
use std::io::Write;
use std::time::Duration;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

const USAGE: &str = "\
ferry: any MCP server as CLI commands

usage:
  ferry                                 configured servers: name, transport, tools, command
  ferry <server>                        its tools, one line each (from the cache)
  ferry <server> <tool> --help          how to call a tool, from its schema
  ferry <server> <tool> [args]          call it: --prop value, --flag/--no-flag, JSON for objects
  ferry <server> --resources | --read URI | --prompts | --prompt NAME [args]
  ferry add NAME -- COMMAND [ARGS...]   add a stdio server (--env K=V before --)
  ferry add NAME URL [--header K:V]     add a Streamable HTTP server
  ferry remove NAME
  ferry import claude|claude-code|cursor|vscode|windsurf|codex|PATH
  ferry find WORDS...                   the best-matching tools of every server (cache only)
  ferry tokens [SERVER...]              what the tools cost in context: MCP eager, deferred, ferry
  ferry skill SERVER... | --check       write skills/<server>/SKILL.md, or list stale ones
  ferry demo                            a tour on a server built into ferry

A server is a configured name, a URL, or --cmd 'COMMAND ARGS'.
options (before the server, or after the tool when no property has the name):
  --refresh          list the server's tools again instead of using the cache
  --json             print the exact result envelope (--json '{...}' after a tool gives its arguments)
  --max-tokens N     keep output under N tokens; the full output is saved to a file
  --timeout SECONDS  per-request limit (default 60)
  --cmd 'COMMAND'    an ad-hoc stdio server

exit codes: 0 ok, 1 the tool reported an error, 2 usage error, 3 server failure,
            4 timeout, 5 authentication needed or refused, 130 interrupted
config: ~/.config/ferry/servers.json (mcpServers), and .mcp.json, .cursor/mcp.json,
        .vscode/mcp.json in this directory and its parents
";

/// Runs ferry with the words after the program name; returns the exit code.
pub fn main(args: Vec<String>) -> i32 {
    match run(args) {
        Ok(code) => code,
        Err(error) => {
            report(&error);
            error.kind.exit_code()
        }
    }
}

/// Prints an error as `error: ...`, a `hint:` line and any server detail.
pub fn report(error: &Error) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {}", error.message);
    if let Some(detail) = &error.detail {
        let _ = writeln!(err, "server stderr (last lines):");
        for line in detail.lines() {
            let _ = writeln!(err, "  {line}");
        }
    }
    if let Some(hint) = &error.hint {
        let _ = writeln!(err, "hint: {hint}");
    }
}

/// Global options, given before the server.
#[derive(Default)]
struct Globals {
    refresh: bool,
    call: CallOptions,
    cmd: Option<String>,
}

fn run(args: Vec<String>) -> Result<i32> {
    let mut globals = Globals::default();
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        let word = args[i].as_str();
        i += 1;
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (word, None),
        };
        let mut value = |what: &str| -> Result<String> {
            if let Some(v) = &inline {
                return Ok(v.clone());
            }
            let v = args
                .get(i)
                .cloned()
                .ok_or_else(|| Error::usage(format!("{name} needs {what}")))?;
            i += 1;
            Ok(v)
        };
        match name {
            "-h" | "--help" => {
                print!("{USAGE}");
                return Ok(0);
            }
            "-V" | "--version" => {
                println!("ferry {}", env!("CARGO_PKG_VERSION"));
                return Ok(0);
            }
            "--refresh" => globals.refresh = true,
            "--json" => globals.call.raw_json = true,
            "--cmd" => globals.cmd = Some(value("a command")?),
            "--max-tokens" => {
                globals.call.max_tokens = Some(flags::parse_max_tokens(&value("a number")?)?)
            }
            "--timeout" => globals.call.timeout = Some(flags::parse_timeout(&value("seconds")?)?),
            // With --cmd, the server's own options (--resources...) may follow directly.
            _ if globals.cmd.is_some() => {
                i -= 1;
                break;
            }
            _ => {
                return Err(
                    Error::usage(format!("unknown option {word}")).with_hint("see: ferry --help")
                )
            }
        }
    }
    let rest = &args[i..];
    if let Some(cmd) = globals.cmd.take() {
        let spec = ServerSpec::ad_hoc(&cmd)?;
        return run_server(spec, rest, globals);
    }
    let Some(first) = rest.first() else {
        return list_servers();
    };
    let rest = &rest[1..];
    match first.as_str() {
        "help" => {
            print!("{USAGE}");
            Ok(0)
        }
        "version" => {
            println!("ferry {}", env!("CARGO_PKG_VERSION"));
            Ok(0)
        }
        "add" => add(rest),
        "remove" => remove(rest),
        "import" => import(rest),
        "demo" => demo(rest, globals),
        "tokens" => economy::tokens(rest),
        "find" => economy::find(rest),
        "skill" => economy::skill(rest),
        "list" => list_servers(),
        word if config::RESERVED_NAMES.contains(&word) => Err(Error::usage(format!(
            "`ferry {word}` is not part of this build yet"
        ))
        .with_hint("see: ferry --help")),
        word if word.contains("://") => run_server(ServerSpec::ad_hoc(word)?, rest, globals),
        name => {
            let registry = load_registry()?;
            match registry.get(name) {
                Some(spec) => run_server(spec.clone(), rest, globals),
                None => Err(unknown_server(name, &registry)),
            }
        }
    }
}

pub(crate) fn load_registry() -> Result<Registry> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::usage(format!("cannot read the current directory: {e}")))?;
    let registry = Registry::load(&cwd)?;
    for warning in &registry.warnings {
        eprintln!("warning: {warning}");
    }
    Ok(registry)
}

fn unknown_server(name: &str, registry: &Registry) -> Error {
    let error = Error::usage(format!("unknown server {name:?}"));
    match flags::closest(name, registry.servers.iter().map(|s| s.name.as_str())) {
        Some(best) => error.with_hint(format!("did you mean {best}? `ferry` lists the configured servers")),
        None => error.with_hint("`ferry` lists the configured servers; add one with `ferry add NAME -- COMMAND` or `ferry add NAME URL`"),
    }
}

/// What was asked of one server.
enum Action {
    ListTools,
    Resources,
    Read(String),
    Prompts,
    Prompt(String, Vec<String>),
    Tool(String, Vec<String>),
}

fn run_server(spec: ServerSpec, words: &[String], mut globals: Globals) -> Result<i32> {
    let mut action = Action::ListTools;
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        let mut value = |what: &str| -> Result<String> {
            let v = words
                .get(i)
                .cloned()
                .ok_or_else(|| Error::usage(format!("{word} needs {what}")))?;
            i += 1;
            Ok(v)
        };
        match word {
            "--refresh" => globals.refresh = true,
            "--json" => globals.call.raw_json = true,
            "-h" | "--help" | "--tools" => action = Action::ListTools,
            "--resources" => action = Action::Resources,
            "--read" => action = Action::Read(value("a resource URI")?),
            "--prompts" => action = Action::Prompts,
            "--prompt" => {
                action = Action::Prompt(value("a prompt name")?, words[i..].to_vec());
                break;
            }
            "--timeout" => globals.call.timeout = Some(flags::parse_timeout(&value("seconds")?)?),
            "--max-tokens" => {
                globals.call.max_tokens = Some(flags::parse_max_tokens(&value("a number")?)?)
            }
            w if w.starts_with('-') => {
                return Err(Error::usage(format!("unknown option {w} for server {}", spec.name))
                    .with_hint("options: --refresh, --json, --resources, --read URI, --prompts, --prompt NAME"));
            }
            tool => {
                action = Action::Tool(tool.to_string(), words[i..].to_vec());
                break;
            }
        }
    }
    if let Action::ListTools = action {
        // The common path: served from disk with no runtime and no server.
        if !globals.refresh {
            if let Some(entry) =
                CacheEntry::load(&spec).filter(|e| e.has_tools() && !e.is_expired())
            {
                print_listing(&spec, entry);
                return Ok(0);
            }
        }
    }
    block_on_interruptible(run_action(spec, action, globals))
}

/// Runs async work to its end, or until SIGINT/SIGTERM, when the work is dropped and with it
/// any server it started. A blocked read of standard input is left behind, not waited for.
pub(crate) fn block_on_interruptible<T>(
    work: impl std::future::Future<Output = Result<T>>,
) -> Result<T> {
    let runtime = runtime()?;
    let outcome = runtime.block_on(async move {
        tokio::select! {
            outcome = work => outcome,
            _ = interrupted() => Err(Error::new(ErrorKind::Interrupted, "interrupted; the server was stopped")),
        }
    });
    runtime.shutdown_background();
    outcome
}

/// Parses a tool's arguments, reading standard input first if they ask for it (`-`).
async fn parse_arguments(
    tool: &str,
    schema: &crate::schema::ToolSchema,
    words: &[String],
) -> Result<ParsedCall> {
    let mut stdin = DeferredStdin::default();
    match flags::parse_call(tool, schema, words, &mut stdin) {
        Err(_) if stdin.wanted => {
            let text = tokio::task::spawn_blocking(|| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::io::stdin(), &mut text).map(|_| text)
            })
            .await
            .map_err(|e| Error::usage(format!("cannot read standard input: {e}")))?
            .map_err(|e| Error::usage(format!("cannot read standard input: {e}")))?;
            flags::parse_call(tool, schema, words, &mut DeferredStdin::with(text))
        }
        parsed => parsed,
    }
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::server(format!("cannot start the async runtime: {e}")))
}

/// Resolves on SIGINT or SIGTERM, so the work is dropped and its server stopped.
async fn interrupted() {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut int), Ok(mut term)) = (
        signal(SignalKind::interrupt()),
        signal(SignalKind::terminate()),
    ) else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
    }
}

fn timeout_for(spec: &ServerSpec, options: &CallOptions) -> Duration {
    options
        .timeout
        .map(Duration::from_secs_f64)
        .or(spec.timeout)
        .unwrap_or(DEFAULT_TIMEOUT)
}

pub(crate) async fn open_session(
    spec: &ServerSpec,
    options: &CallOptions,
    known_era: Option<Era>,
) -> Result<Session> {
    Session::open(
        spec,
        SessionOptions {
            timeout: timeout_for(spec, options),
            known_era,
        },
    )
    .await
}

/// Lists the tools anew through `session` and stores them in the cache.
pub(crate) async fn refresh_tools(spec: &ServerSpec, session: &mut Session) -> Result<CacheEntry> {
    session.tools_changed = false;
    let (mut tools, mut ttl_ms) = session.list_all("tools/list", "tools").await?;
    // Some servers add tools right after the handshake and say so: list once more then.
    if session.tools_changed {
        session.tools_changed = false;
        (tools, ttl_ms) = session.list_all("tools/list", "tools").await?;
    }
    // A stateless session that skipped discovery knows nothing new about the server itself.
    let known = CacheEntry::load(spec).unwrap_or_default();
    let or_known = |fresh: &Value, old: Value| if fresh.is_null() { old } else { fresh.clone() };
    let entry = CacheEntry {
        tools,
        era: Some(session.era.clone()),
        server_info: or_known(&session.server_info, known.server_info),
        instructions: session.instructions.clone().or(known.instructions),
        capabilities: or_known(&session.capabilities, known.capabilities),
        fetched_at_ms: crate::client::cache::now_ms(),
        ttl_ms,
    };
    entry.store(spec);
    Ok(entry)
}

/// The server's tools, filtered by its config, warning once per malformed entry.
pub(crate) fn usable_tools(spec: &ServerSpec, entry: CacheEntry) -> Vec<Tool> {
    let (tools, warnings) = parse_tools_owned(entry.tools);
    for warning in warnings {
        eprintln!("warning: {}: {warning}", spec.name);
    }
    tools
        .into_iter()
        .filter(|t| spec.allows_tool(&t.name))
        .collect()
}

fn print_listing(spec: &ServerSpec, entry: CacheEntry) {
    let mut out = String::new();
    for tool in usable_tools(spec, entry) {
        out.push_str(&crate::render::listing_line(&tool));
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("(no tools)\n");
    }
    emit(&out);
}

/// Writes to stdout; a closed pipe (`| head`) is a quiet end, not an error.
pub(crate) fn emit(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    if !text.is_empty() && !text.ends_with('\n') {
        let _ = stdout.write_all(b"\n");
    }
    let _ = stdout.flush();
}

async fn run_action(spec: ServerSpec, action: Action, globals: Globals) -> Result<i32> {
    match action {
        Action::ListTools => {
            // --refresh finds out the protocol era anew too.
            let era = CacheEntry::load(&spec)
                .and_then(|c| c.era)
                .filter(|_| !globals.refresh);
            let mut session = open_session(&spec, &globals.call, era).await?;
            let entry = refresh_tools(&spec, &mut session).await;
            session.close().await;
            print_listing(&spec, entry?);
            Ok(0)
        }
        Action::Tool(name, words) => call_tool(spec, &name, &words, globals).await,
        Action::Resources => {
            let era = CacheEntry::load(&spec).and_then(|c| c.era);
            let mut session = open_session(&spec, &globals.call, era).await?;
            let listed = list_resources(&mut session).await;
            session.close().await;
            emit(&listed?);
            Ok(0)
        }
        Action::Read(uri) => {
            let era = CacheEntry::load(&spec).and_then(|c| c.era);
            let mut session = open_session(&spec, &globals.call, era).await?;
            let result = session.request("resources/read", json!({"uri": uri})).await;
            let code = finish(&spec, "resource", result, &globals.call);
            session.close().await;
            code
        }
        Action::Prompts => {
            let era = CacheEntry::load(&spec).and_then(|c| c.era);
            let mut session = open_session(&spec, &globals.call, era).await?;
            let prompts = session.list_all("prompts/list", "prompts").await;
            session.close().await;
            let mut out = String::new();
            for prompt in prompts?.0 {
                out.push_str(&prompt_line(&prompt));
                out.push('\n');
            }
            emit(if out.is_empty() {
                "(no prompts)\n"
            } else {
                &out
            });
            Ok(0)
        }
        Action::Prompt(name, words) => {
            let era = CacheEntry::load(&spec).and_then(|c| c.era);
            let mut session = open_session(&spec, &globals.call, era).await?;
            let outcome = get_prompt(&spec, &mut session, &name, &words, &globals.call).await;
            session.close().await;
            outcome
        }
    }
}

async fn list_resources(session: &mut Session) -> Result<String> {
    let (resources, _) = session.list_all("resources/list", "resources").await?;
    let mut out = String::new();
    for resource in &resources {
        let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("");
        let name = resource.get("name").and_then(Value::as_str).unwrap_or("");
        out.push_str(uri);
        if !name.is_empty() && name != uri {
            out.push_str(&format!(" {name}"));
        }
        if let Some(mime) = resource.get("mimeType").and_then(Value::as_str) {
            out.push_str(&format!(" ({mime})"));
        }
        if let Some(d) = resource.get("description").and_then(Value::as_str) {
            let d = crate::protocol::tools::first_sentence(d);
            if !d.is_empty() {
                out.push_str(&format!(" - {d}"));
            }
        }
        out.push('\n');
    }
    // Templates are optional; a server without them answers with an error, which is fine.
    if let Ok((templates, _)) = session
        .list_all("resources/templates/list", "resourceTemplates")
        .await
    {
        for template in &templates {
            let uri = template
                .get("uriTemplate")
                .and_then(Value::as_str)
                .unwrap_or("");
            let name = template.get("name").and_then(Value::as_str).unwrap_or("");
            out.push_str(&format!("{uri} {name} (template)\n"));
        }
    }
    if out.is_empty() {
        out.push_str("(no resources)\n");
    }
    Ok(out)
}

fn prompt_line(prompt: &Value) -> String {
    let name = prompt.get("name").and_then(Value::as_str).unwrap_or("?");
    let args: Vec<String> = prompt
        .get("arguments")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|arg| {
                    let n = arg.get("name").and_then(Value::as_str).unwrap_or("?");
                    let required = arg.get("required").and_then(Value::as_bool) == Some(true);
                    format!("{n}{}:str", if required { "" } else { "?" })
                })
                .collect()
        })
        .unwrap_or_default();
    let description = crate::protocol::tools::first_sentence(
        prompt
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or(""),
    );
    if description.is_empty() {
        format!("{name}({})", args.join(", "))
    } else {
        format!("{name}({}) - {description}", args.join(", "))
    }
}

/// A prompt's arguments as a tool schema (all strings), so the same parser and help apply.
fn prompt_schema(prompt: &Value) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for arg in prompt
        .get("arguments")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(name) = arg.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut prop = json!({"type": "string"});
        if let Some(d) = arg.get("description") {
            prop["description"] = d.clone();
        }
        properties.insert(name.to_string(), prop);
        if arg.get("required").and_then(Value::as_bool) == Some(true) {
            required.push(Value::String(name.to_string()));
        }
    }
    json!({"type": "object", "properties": properties, "required": required})
}

async fn get_prompt(
    spec: &ServerSpec,
    session: &mut Session,
    name: &str,
    words: &[String],
    options: &CallOptions,
) -> Result<i32> {
    let (prompts, _) = session.list_all("prompts/list", "prompts").await?;
    let Some(prompt) = prompts
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
    else {
        let names = prompts
            .iter()
            .filter_map(|p| p.get("name").and_then(Value::as_str));
        let error = Error::usage(format!("unknown prompt {name:?} on {}", spec.name));
        return Err(match flags::closest(name, names) {
            Some(best) => error.with_hint(format!("did you mean {best}?")),
            None => error.with_hint(format!("see: ferry {} --prompts", spec.name)),
        });
    };
    let as_tool = Tool {
        name: name.to_string(),
        description: prompt
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        input_schema: prompt_schema(prompt),
        raw: prompt.clone(),
    };
    let schema = crate::schema::ToolSchema::from_input_schema(&as_tool.input_schema);
    let parsed = parse_arguments(name, &schema, words).await?;
    if parsed.options.help {
        emit(&crate::render::tool_help(
            &format!("{} --prompt", spec.name),
            &as_tool,
        ));
        return Ok(0);
    }
    let mut merged = options.clone();
    merged.raw_json |= parsed.options.raw_json;
    merged.max_tokens = parsed.options.max_tokens.or(merged.max_tokens);
    let arguments: Map<String, Value> = parsed
        .arguments
        .into_iter()
        .map(|(k, v)| {
            (
                k,
                v.as_str().map_or_else(
                    || Value::String(v.to_string()),
                    |s| Value::String(s.to_string()),
                ),
            )
        })
        .collect();
    let result = session
        .request("prompts/get", json!({"name": name, "arguments": arguments}))
        .await;
    finish(spec, name, result, &merged)
}

async fn call_tool(
    spec: ServerSpec,
    name: &str,
    words: &[String],
    globals: Globals,
) -> Result<i32> {
    let cached = CacheEntry::load(&spec);
    let mut session: Option<Session> = None;
    // The call path trusts the cached schema whatever its age: the server validates again,
    // and a stale list costs no extra request.
    let known_era = cached
        .as_ref()
        .and_then(|c| c.era.clone())
        .filter(|_| !globals.refresh);
    let fresh = cached.filter(|e| e.has_tools() && !globals.refresh);
    let mut tool = fresh.and_then(|entry| {
        usable_tools(&spec, entry)
            .into_iter()
            .find(|t| t.name == name)
    });
    if tool.is_none() {
        // Not cached (or not there): list once more before calling it unknown.
        let mut opened = open_session(&spec, &globals.call, known_era.clone()).await?;
        let entry = refresh_tools(&spec, &mut opened).await;
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                opened.close().await;
                return Err(e);
            }
        };
        let tools = usable_tools(&spec, entry);
        tool = tools.iter().find(|t| t.name == name).cloned();
        if tool.is_none() {
            opened.close().await;
            let error = Error::usage(format!("unknown tool {name:?} on {}", spec.name));
            return Err(
                match flags::closest(name, tools.iter().map(|t| t.name.as_str())) {
                    Some(best) => error.with_hint(format!(
                        "did you mean {best}? `ferry {}` lists its tools",
                        spec.name
                    )),
                    None => error.with_hint(format!("`ferry {}` lists its tools", spec.name)),
                },
            );
        }
        session = Some(opened);
    }
    let Some(tool) = tool else { return Ok(2) };
    let schema = crate::schema::ToolSchema::from_input_schema(&tool.input_schema);
    let parsed = match parse_arguments(name, &schema, words).await {
        Ok(parsed) => parsed,
        Err(e) => {
            if let Some(s) = session {
                s.close().await;
            }
            return Err(e);
        }
    };
    if parsed.options.help {
        if let Some(s) = session {
            s.close().await;
        }
        emit(&crate::render::tool_help(&spec.name, &tool));
        return Ok(0);
    }
    let mut options = globals.call.clone();
    options.raw_json |= parsed.options.raw_json;
    options.max_tokens = parsed
        .options
        .max_tokens
        .or(options.max_tokens)
        .or(spec.max_tokens);
    options.timeout = parsed.options.timeout.or(options.timeout);
    let mut session = match session {
        Some(mut session) => {
            // Opened to list the tools before the call's own options were known.
            session.set_timeout(timeout_for(&spec, &options));
            session
        }
        None => open_session(&spec, &options, known_era).await?,
    };
    let result = session
        .request(
            "tools/call",
            json!({"name": name, "arguments": parsed.arguments}),
        )
        .await;
    let code = finish(&spec, name, result, &options);
    // The output is out; bring the cache up to date while the server is still running.
    if session.tools_changed && refresh_tools(&spec, &mut session).await.is_err() {
        CacheEntry::invalidate(&spec);
    }
    session.close().await;
    code
}

/// Prints a result (before the server is stopped, so the caller sees it at once) and picks
/// the exit code: 1 when the tool reported an error.
fn finish(
    spec: &ServerSpec,
    what: &str,
    result: Result<Value>,
    options: &CallOptions,
) -> Result<i32> {
    let result = result?;
    let ctx = OutputContext::new(&spec.name, what);
    let text = if options.raw_json {
        output::compact_json(&result)
    } else {
        output::render_result(&result, &ctx)
    };
    let text = match options.max_tokens {
        Some(max) => output::apply_budget(text, max.max(flags::MIN_MAX_TOKENS), &ctx),
        None => text,
    };
    emit(&text);
    Ok(
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            1
        } else {
            0
        },
    )
}

fn list_servers() -> Result<i32> {
    let registry = load_registry()?;
    if registry.servers.is_empty() {
        eprintln!("no servers configured");
        eprintln!("hint: `ferry add NAME -- COMMAND`, `ferry add NAME URL`, `ferry import claude`, or try `ferry demo`");
        return Ok(0);
    }
    let width = registry
        .servers
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for spec in &registry.servers {
        let tools = match CacheEntry::load(spec).filter(CacheEntry::has_tools) {
            Some(entry) => format!("{} tools", usable_tools(spec, entry).len()),
            None => "? tools".to_string(),
        };
        let target = match &spec.target {
            config::Target::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            config::Target::Http { url, .. } => url.clone(),
        };
        out.push_str(&format!(
            "{:width$}  {:5}  {:>9}  cold  {target}\n",
            spec.name,
            spec.transport_name(),
            tools
        ));
    }
    emit(&out);
    Ok(0)
}

fn add(words: &[String]) -> Result<i32> {
    let usage = || {
        Error::usage(
            "usage: ferry add NAME -- COMMAND [ARGS...]  or  ferry add NAME URL [--header K:V]",
        )
    };
    let name = words.first().ok_or_else(usage)?;
    check_server_name(name)?;
    let mut entry = Map::new();
    let mut env = Map::new();
    let mut headers = Map::new();
    let mut replace = false;
    let mut i = 1;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        match word {
            "--" => {
                let command = words.get(i).ok_or_else(usage)?;
                entry.insert("command".into(), json!(command));
                entry.insert("args".into(), json!(words[i + 1..]));
                break;
            }
            "--env" | "-e" => {
                let pair = words.get(i).ok_or_else(usage)?;
                i += 1;
                let (k, v) = pair.split_once('=').ok_or_else(|| {
                    Error::usage(format!("--env expects KEY=VALUE, not {pair:?}"))
                })?;
                env.insert(k.to_string(), json!(v));
            }
            "--header" | "-H" => {
                let pair = words.get(i).ok_or_else(usage)?;
                i += 1;
                let (k, v) = pair.split_once(':').ok_or_else(|| {
                    Error::usage(format!("--header expects NAME:VALUE, not {pair:?}"))
                })?;
                headers.insert(k.trim().to_string(), json!(v.trim()));
            }
            "--force" => replace = true,
            url if url.starts_with("http://") || url.starts_with("https://") => {
                entry.insert("url".into(), json!(url));
            }
            other => {
                return Err(Error::usage(format!("unexpected {other:?}")).with_hint(
                    "put the server's command after --: ferry add NAME -- COMMAND ARGS",
                ))
            }
        }
    }
    if entry.contains_key("command") {
        if !env.is_empty() {
            entry.insert("env".into(), Value::Object(env));
        }
    } else if entry.contains_key("url") {
        if !headers.is_empty() {
            entry.insert("headers".into(), Value::Object(headers));
        }
    } else {
        return Err(usage());
    }
    // Validate before writing, so a broken entry never lands in the file.
    ServerSpec::from_entry(name, &entry, "the command line")?;
    let skipped = config::write_user_servers(&[(name.clone(), entry)], replace)?;
    if !skipped.is_empty() {
        return Err(Error::usage(format!("server {name:?} already exists"))
            .with_hint("use --force to replace it, or `ferry remove` first"));
    }
    println!("added {name} to {}", config::user_config_path().display());
    Ok(0)
}

fn remove(words: &[String]) -> Result<i32> {
    let [name] = words else {
        return Err(Error::usage("usage: ferry remove NAME"));
    };
    if config::remove_user_server(name)? {
        println!(
            "removed {name} from {}",
            config::user_config_path().display()
        );
        Ok(0)
    } else {
        Err(Error::usage(format!(
            "no server {name:?} in {}",
            config::user_config_path().display()
        ))
        .with_hint("servers from project files (.mcp.json...) are removed by editing those files"))
    }
}

fn import(words: &[String]) -> Result<i32> {
    let [source] = words else {
        return Err(Error::usage(
            "usage: ferry import claude|claude-code|cursor|vscode|windsurf|codex|PATH",
        ));
    };
    let cwd = std::env::current_dir().map_err(|e| Error::usage(e.to_string()))?;
    let source = ImportSource::parse(source);
    let servers = read_servers(&source, &crate::paths::home_dir(), &cwd).map_err(Error::usage)?;
    let mut accepted = Vec::new();
    for (name, entry) in servers {
        if let Err(e) = check_server_name(&name) {
            eprintln!("skipped {name}: {}", e.message);
            continue;
        }
        if let Some(kind) = entry.get("transport").and_then(Value::as_str) {
            eprintln!(
                "warning: {name} uses the {kind} transport; ferry speaks Streamable HTTP to it"
            );
        }
        accepted.push((name, entry));
    }
    let skipped = config::write_user_servers(&accepted, false)?;
    let added: Vec<&str> = accepted
        .iter()
        .map(|(n, _)| n.as_str())
        .filter(|n| !skipped.iter().any(|s| s == n))
        .collect();
    println!(
        "imported {} server(s) into {}: {}",
        added.len(),
        config::user_config_path().display(),
        added.join(", ")
    );
    if !skipped.is_empty() {
        println!("kept existing: {}", skipped.join(", "));
    }
    Ok(0)
}

/// ferry's built-in server, run as a child process like any other.
fn demo_spec() -> Result<ServerSpec> {
    let exe = std::env::current_exe()
        .map_err(|e| Error::server(format!("cannot find ferry's own binary: {e}")))?;
    let mut spec = ServerSpec::ad_hoc("demo")?;
    spec.name = "demo".into();
    spec.target = config::Target::Stdio {
        command: exe.display().to_string(),
        args: vec!["demo".into(), "--server".into()],
        env: Default::default(),
        cwd: None,
    };
    spec.origin = "ferry's built-in demo server".into();
    Ok(spec)
}

/// `ferry demo`: the tour; `ferry demo --server`: the built-in server itself; anything else
/// (`ferry demo --tools`, `ferry demo pixel`) is used like any server's command line.
fn demo(words: &[String], globals: Globals) -> Result<i32> {
    match words.first().map(String::as_str) {
        Some("--server") => return Ok(crate::demo::serve_stdio()),
        Some(_) => return run_server(demo_spec()?, words, globals),
        None => {}
    }
    let spec = demo_spec()?;
    emit("ferry demo: a built-in MCP server (`ferry demo --server`), used as CLI commands.\n");
    let steps: [(&str, &[&str]); 6] = [
        (
            "list the tools, one line each (cached: later listings start no server)",
            &["--refresh"],
        ),
        (
            "how to call a tool, derived from its JSON schema",
            &["convert_temperature", "--help"],
        ),
        (
            "call it; numbers and enums are checked before the server is contacted",
            &["convert_temperature", "--value", "451", "--from", "F"],
        ),
        (
            "the one required argument may be given bare",
            &["word_count", "the quick brown fox", "--unique"],
        ),
        (
            "images are saved to a file and shown as one line",
            &["pixel"],
        ),
        (
            "a mistake is caught locally, with a hint and exit code 2",
            &["convert_temperature", "--value", "3", "--from", "X"],
        ),
    ];
    for (title, args) in steps {
        let shown: Vec<String> = args
            .iter()
            .map(|a| {
                if *a == "--refresh" {
                    "--tools".to_string()
                } else {
                    shlex::try_quote(a)
                        .map(|q| q.into_owned())
                        .unwrap_or_default()
                }
            })
            .collect();
        emit(&format!("\n# {title}\n$ ferry demo {}\n", shown.join(" ")));
        if let Err(error) = run_server(spec.clone(), &words_of(args), Globals::default()) {
            report(&error);
            emit(&format!("(exit code {})\n", error.kind.exit_code()));
        }
    }
    emit("\nnext: ferry add NAME -- COMMAND ARGS, or ferry import claude; then ferry NAME\n");
    Ok(0)
}

fn words_of(words: &[&str]) -> Vec<String> {
    words.iter().map(|w| w.to_string()).collect()
}
