//! `ferry <server> [options] [<tool> [args]]`: the listing (from the cache), a tool's help,
//! a call, and the server's resources and prompts. The server's own options are a small clap
//! table; the tool's arguments are parsed by the tool's schema (`flags`).

use super::flags::{self, read_limited, CallOptions, DeferredInput, ParsedCall, ToolRef};
use super::terminal::{emit, warn, TerminalHandler};
use super::{options, Globals};
use crate::client::catalog;
use crate::client::config::ServerSpec;
use crate::client::{CacheEntry, CallContext, ClientHandler, Session};
use crate::daemon::{self, client::Unavailable};
use crate::protocol::json_kind;
use crate::protocol::tools::Tool;
use crate::render::output::{self, OutputContext};
use crate::render::{prompts, tool_help};
use crate::schema::ToolSchema;
use crate::signals::block_on_interruptible;
use crate::words::closest;
use crate::{Error, Outcome, Result};
use clap::{Arg, ArgAction, Command};
use serde_json::{json, Map, Value};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

/// How long a server may take to start before a status line says what is happening.
const STATUS_AFTER: Duration = Duration::from_secs(1);

/// What was asked of one server.
enum Action {
    ListTools,
    Resources,
    Read(String),
    Prompts,
    Prompt(String, Vec<String>),
    Tool(String, Vec<String>),
}

/// The options a server takes before a tool name.
fn server_options() -> Command {
    Command::new("server")
        .no_binary_name(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .arg(
            Arg::new("refresh")
                .long("refresh")
                .action(ArgAction::SetTrue),
        )
        .arg(Arg::new("json").long("json").action(ArgAction::SetTrue))
        .arg(
            Arg::new("no-daemon")
                .long("no-daemon")
                .action(ArgAction::SetTrue),
        )
        .arg(Arg::new("max-tokens").long("max-tokens").value_name("N"))
        .arg(Arg::new("timeout").long("timeout").value_name("SECONDS"))
        .arg(
            Arg::new("tools")
                .long("tools")
                .short('h')
                .visible_alias("help")
                .action(ArgAction::SetTrue),
        )
        .arg(
            Arg::new("resources")
                .long("resources")
                .action(ArgAction::SetTrue),
        )
        .arg(Arg::new("read").long("read").value_name("URI"))
        .arg(
            Arg::new("prompts")
                .long("prompts")
                .action(ArgAction::SetTrue),
        )
        .arg(
            Arg::new("prompt")
                .long("prompt")
                .value_name("NAME")
                .num_args(1..)
                .allow_hyphen_values(true),
        )
        .arg(
            Arg::new("tool")
                .value_name("TOOL")
                .num_args(1..)
                .trailing_var_arg(true),
        )
}

/// Parses the words after the server: its options, then a tool and the tool's words.
fn parse_server_words(
    spec: &ServerSpec,
    words: &[String],
    globals: &mut Globals,
) -> Result<Action> {
    let matches = server_options()
        .try_get_matches_from(words)
        .map_err(|e| {
            let (first, suggestion) = super::clap_message(&e);
            let options = "--refresh, --json, --max-tokens N, --timeout SECONDS, --resources, --read URI, --prompts, --prompt NAME";
            let hint = match suggestion {
                Some(s) => format!("did you mean {s}? a server takes {options} before a tool"),
                None => format!("a server takes {options} before a tool; `{}` lists its tools", spec.invocation),
            };
            Error::usage(format!("{first} for server {}", spec.name)).with_hint(hint)
        })?;
    globals.refresh |= matches.get_flag("refresh");
    globals.json |= matches.get_flag("json");
    globals.no_daemon |= matches.get_flag("no-daemon");
    if let Some(text) = matches.get_one::<String>("max-tokens") {
        globals.max_tokens = Some(options::parse_max_tokens(text)?);
    }
    if let Some(text) = matches.get_one::<String>("timeout") {
        globals.timeout = Some(options::parse_timeout(text)?);
    }
    let strings = |id: &str| super::strings(&matches, id);
    let tool = strings("tool");
    let prompt = strings("prompt");
    Ok(if let Some((name, rest)) = tool.split_first() {
        Action::Tool(name.clone(), rest.to_vec())
    } else if let Some((name, rest)) = prompt.split_first() {
        Action::Prompt(name.clone(), rest.to_vec())
    } else if let Some(uri) = matches.get_one::<String>("read") {
        Action::Read(uri.clone())
    } else if matches.get_flag("resources") {
        Action::Resources
    } else if matches.get_flag("prompts") {
        Action::Prompts
    } else {
        Action::ListTools
    })
}

/// Runs whatever the words after a server ask for.
pub fn run_server(spec: ServerSpec, words: &[String], mut globals: Globals) -> Result<Outcome> {
    let action = parse_server_words(&spec, words, &mut globals)?;
    if let Action::ListTools = action {
        // The common path: served from disk with no runtime and no server.
        if !globals.refresh {
            if let Some(entry) = catalog::cached(&spec) {
                print_listing(&spec, entry, globals.json)?;
                return Ok(Outcome::Success);
            }
        }
    }
    block_on_interruptible(run_action(spec, action, globals))
}

fn call_options(globals: &Globals) -> CallOptions {
    CallOptions {
        help: false,
        raw_json: globals.json,
        max_tokens: globals.max_tokens,
        timeout: globals.timeout,
    }
}

/// Whether this call may go through the daemon.
fn warm_allowed(spec: &ServerSpec, globals: &Globals) -> bool {
    !globals.no_daemon && !daemon::client::disabled_for(spec)
}

/// Says, in one line, that the warm path was not available and the call runs cold.
fn warn_cold(why: &Unavailable) {
    warn(&format!(
        "warning: the ferry daemon is unavailable ({}); calling cold",
        crate::render::text::escape_line(&why.0)
    ));
}

/// Sends one request through the daemon, if it may be used and can be reached: `None` sends
/// the caller down the cold path (after a warning when the daemon failed).
async fn warm_request(
    spec: &ServerSpec,
    globals: &Globals,
    method: &str,
    params: Value,
    timeout: std::time::Duration,
    handler: Arc<TerminalHandler>,
    headers: &[(String, String)],
) -> Option<Result<Value>> {
    if !warm_allowed(spec, globals) {
        return None;
    }
    let progress = handler.shows_progress();
    match daemon::client::request(spec, method, params, timeout, progress, headers, handler).await {
        Ok(result) => Some(result),
        Err(why) => {
            warn_cold(&why);
            None
        }
    }
}

/// Opens a session, saying on a terminal what takes long (an `npx` download can take 10 s).
async fn open(
    spec: &ServerSpec,
    timeout: Option<f64>,
    refresh: bool,
    handler: Arc<dyn ClientHandler>,
) -> Result<Session> {
    let era = catalog::remembered_era(spec, refresh);
    let opening = catalog::open_session(spec, catalog::timeout_for(spec, timeout), era, handler);
    if !std::io::stderr().is_terminal() {
        return opening.await;
    }
    tokio::pin!(opening);
    tokio::select! {
        opened = &mut opening => return opened,
        _ = tokio::time::sleep(STATUS_AFTER) => {}
    }
    let line = format!(
        "starting {} (a first start may download it)...",
        crate::render::text::escape_line(&spec.name)
    );
    eprint!("{line}");
    let opened = opening.await;
    eprint!("\r\x1b[K");
    opened
}

async fn run_action(spec: ServerSpec, action: Action, globals: Globals) -> Result<Outcome> {
    let handler = Arc::new(TerminalHandler::new());
    let options = call_options(&globals);
    match action {
        Action::ListTools => {
            // --refresh finds out the protocol era anew too.
            let session = open(&spec, globals.timeout, globals.refresh, handler).await?;
            let entry = catalog::refresh_tools(&spec, &session).await;
            session.close().await;
            print_listing(&spec, entry?, globals.json)?;
            Ok(Outcome::Success)
        }
        Action::Tool(name, words) => call_tool(spec, &name, &words, globals, handler).await,
        Action::Resources => {
            let session = open(&spec, globals.timeout, false, handler).await?;
            let listed = list_resources(&session).await;
            session.close().await;
            emit(&listed?)?;
            Ok(Outcome::Success)
        }
        Action::Read(uri) => {
            let timeout = catalog::timeout_for(&spec, globals.timeout);
            let params = json!({"uri": uri});
            if let Some(result) = warm_request(
                &spec,
                &globals,
                "resources/read",
                params,
                timeout,
                handler.clone(),
                &[],
            )
            .await
            {
                return finish(&spec, "resource", result, &options, false);
            }
            let session = open(&spec, globals.timeout, false, handler).await?;
            let result = session.request("resources/read", json!({"uri": uri})).await;
            let outcome = finish(&spec, "resource", result, &options, false);
            session.close().await;
            outcome
        }
        Action::Prompts => {
            let session = open(&spec, globals.timeout, false, handler).await?;
            let prompts = session.list_all("prompts/list", "prompts").await;
            session.close().await;
            let mut out = String::new();
            for prompt in prompts?.0 {
                out.push_str(&prompts::prompt_line(&prompt));
                out.push('\n');
            }
            emit(if out.is_empty() {
                "(no prompts)\n"
            } else {
                &out
            })?;
            Ok(Outcome::Success)
        }
        Action::Prompt(name, words) => {
            let session = open(&spec, globals.timeout, false, handler).await?;
            let outcome = get_prompt(&spec, &session, &name, &words, &options).await;
            session.close().await;
            outcome
        }
    }
}

/// Parses a tool's arguments, reading standard input and `@file`s when they ask for them
/// (off the runtime's thread, so Ctrl-C and SIGTERM are still heard, and with a size limit).
async fn parse_arguments(
    tool: ToolRef<'_>,
    schema: &ToolSchema,
    words: &[String],
) -> Result<ParsedCall> {
    let mut input = DeferredInput::default();
    loop {
        input.rewind();
        match flags::parse_call(tool, schema, words, &mut input) {
            Err(_) if input.wants_more() => {
                if input.wants_stdin {
                    let text = tokio::task::spawn_blocking(|| read_limited(None))
                        .await
                        .map_err(|e| Error::usage(format!("cannot read standard input: {e}")))??;
                    input.set_stdin(text);
                }
                for path in input.wants_files.clone() {
                    let owned = path.clone();
                    let text = tokio::task::spawn_blocking(move || read_limited(Some(&owned)))
                        .await
                        .map_err(|e| Error::usage(format!("cannot read @{path}: {e}")))??;
                    input.set_file(path, text);
                }
            }
            parsed => return parsed,
        }
    }
}

async fn call_tool(
    spec: ServerSpec,
    name: &str,
    words: &[String],
    globals: Globals,
    handler: Arc<TerminalHandler>,
) -> Result<Outcome> {
    let cached = CacheEntry::load(&spec);
    // The call path trusts the cached schema whatever its age: the server validates again,
    // and a stale list costs no extra request.
    let fresh = cached.filter(|e| e.has_tools() && !globals.refresh);
    let cached_tool = fresh.and_then(|entry| {
        let (tools, warnings) = catalog::usable_tools(&spec, entry);
        warnings.iter().for_each(|w| warn(&format!("warning: {w}")));
        tools.into_iter().find(|t| t.name == name)
    });
    tracing::debug!(server = %spec.name, tool = name, hit = cached_tool.is_some(), "cache lookup for the call");
    let mut session: Option<Session> = None;
    let tool = match cached_tool {
        Some(tool) => tool,
        // Not cached (or not there): list once more before calling it unknown, through the
        // daemon when it may be used, else here.
        None => {
            let mut listed_warm = None;
            if warm_allowed(&spec, &globals) {
                let timeout = catalog::timeout_for(&spec, globals.timeout);
                match daemon::client::refresh(&spec, timeout, handler.clone()).await {
                    Ok(listed) => {
                        listed?;
                        let entry = CacheEntry::load(&spec).unwrap_or_default();
                        listed_warm = Some(listed_tool(&spec, entry, name)?);
                    }
                    Err(why) => warn_cold(&why),
                }
            }
            match listed_warm {
                Some(tool) => tool,
                None => {
                    let opened =
                        open(&spec, globals.timeout, globals.refresh, handler.clone()).await?;
                    let found = match catalog::refresh_tools(&spec, &opened).await {
                        Ok(entry) => listed_tool(&spec, entry, name),
                        Err(e) => Err(e),
                    };
                    match found {
                        Ok(tool) => {
                            session = Some(opened);
                            tool
                        }
                        Err(e) => {
                            opened.close().await;
                            return Err(e);
                        }
                    }
                }
            }
        }
    };
    let schema = ToolSchema::from_input_schema(&tool.input_schema);
    let tool_ref = ToolRef {
        tool: name,
        command: &spec.invocation,
    };
    let parsed = match parse_arguments(tool_ref, &schema, words).await {
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
        emit(&tool_help(&tool))?;
        return Ok(Outcome::Success);
    }
    let mut options = call_options(&globals);
    options.raw_json |= parsed.options.raw_json;
    options.max_tokens = parsed
        .options
        .max_tokens
        .or(options.max_tokens)
        .or(spec.max_tokens);
    options.timeout = parsed.options.timeout.or(options.timeout);
    let timeout = catalog::timeout_for(&spec, options.timeout);
    let params = json!({"name": name, "arguments": parsed.arguments});
    // Parameters the tool mirrors into headers (`x-mcp-header`) travel as Mcp-Param-*.
    let param_headers =
        crate::protocol::tools::param_headers(&tool.input_schema, &params["arguments"]);
    if session.is_none() {
        if let Some(result) = warm_request(
            &spec,
            &globals,
            "tools/call",
            params.clone(),
            timeout,
            handler.clone(),
            &param_headers,
        )
        .await
        {
            handler.finish_progress();
            return finish(&spec, name, result, &options, true);
        }
    }
    let session = match session {
        Some(session) => {
            // Opened to list the tools before the call's own options were known.
            session.set_timeout(timeout);
            session
        }
        None => open(&spec, options.timeout, false, handler.clone()).await?,
    };
    let context = CallContext {
        handler: handler.clone(),
        timeout,
        progress: handler.shows_progress(),
        headers: param_headers.clone(),
    };
    let result = session.request_with("tools/call", params, &context).await;
    handler.finish_progress();
    let outcome = finish(&spec, name, result, &options, true);
    // The output is out; the cache is brought up to date while the server stops.
    catalog::close_after_call(&spec, session).await;
    outcome
}

/// `name` in a list just fetched: the tool, or the "unknown tool" error with a suggestion.
fn listed_tool(spec: &ServerSpec, entry: CacheEntry, name: &str) -> Result<Tool> {
    let (tools, warnings) = catalog::usable_tools(spec, entry);
    warnings.iter().for_each(|w| warn(&format!("warning: {w}")));
    match tools.iter().find(|t| t.name == name) {
        Some(tool) => Ok(tool.clone()),
        None => Err(catalog::unknown_tool(spec, name, &tools)),
    }
}

/// Prints a result (before the server is stopped, so the caller sees it at once) and says
/// how the call went: a tool that reported an error is `ToolReportedError`.
fn finish(
    spec: &ServerSpec,
    what: &str,
    result: Result<Value>,
    options: &CallOptions,
    tool_call: bool,
) -> Result<Outcome> {
    let result = result?;
    if !options.raw_json {
        if let Some(problem) = malformed_result(&result, tool_call) {
            return Err(Error::server(format!(
                "{} sent a result ferry cannot read: {problem}",
                spec.name
            ))
            .with_hint("run the same command with --json to see what it sent"));
        }
    }
    let ctx = OutputContext::new(&spec.name, what);
    let text = if options.raw_json {
        output::compact_json(&result)
    } else {
        output::render_result(&result, &ctx)
    };
    let text = match options.max_tokens {
        Some(max) => output::apply_budget(text, max.max(options::MIN_MAX_TOKENS), &ctx),
        None => text,
    };
    emit(&text)?;
    Ok(
        if result.get("isError").and_then(Value::as_bool) == Some(true) {
            Outcome::ToolReportedError
        } else {
            Outcome::Success
        },
    )
}

/// Why a result cannot be shown as text, if it cannot.
fn malformed_result(result: &Value, tool_call: bool) -> Option<String> {
    if !result.is_object() {
        return Some(format!(
            "the result is {}, not an object",
            json_kind(result)
        ));
    }
    match result.get("content") {
        Some(Value::Array(_)) => None,
        None if !tool_call || result.get("structuredContent").is_some() => None,
        None => Some("it has no \"content\"".into()),
        Some(other) => Some(format!(
            "its \"content\" is {}, not a list",
            json_kind(other)
        )),
    }
}

/// The listing: a line per tool, or with `--json` the tools' definitions exactly as the server
/// sent them (a `tools/list` result, filtered as configured).
fn print_listing(spec: &ServerSpec, entry: CacheEntry, json: bool) -> Result<()> {
    let (tools, warnings) = catalog::usable_tools(spec, entry);
    warnings.iter().for_each(|w| warn(&format!("warning: {w}")));
    if json {
        // Each listed tool's own entry, as the server sent it: what was skipped stays out.
        let definitions: Vec<&Value> = tools.iter().map(|t| &t.raw).collect();
        return emit(&crate::render::text::json_for_terminal(
            serde_json::to_string_pretty(&json!({ "tools": definitions })).unwrap_or_default(),
        ));
    }
    let mut out = String::with_capacity(tools.len() * 60);
    for tool in &tools {
        out.push_str(&crate::render::listing_line(tool));
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("(no tools)\n");
    }
    emit(&out)
}

async fn list_resources(session: &Session) -> Result<String> {
    let (resources, _) = session.list_all("resources/list", "resources").await?;
    let mut out = String::new();
    for resource in &resources {
        out.push_str(&prompts::resource_line(resource));
        out.push('\n');
    }
    // Templates are optional; a server without them answers with an error, which is fine.
    if let Ok((templates, _)) = session
        .list_all("resources/templates/list", "resourceTemplates")
        .await
    {
        for template in &templates {
            out.push_str(&prompts::template_line(template));
            out.push('\n');
        }
    }
    if out.is_empty() {
        out.push_str("(no resources)\n");
    }
    Ok(out)
}

async fn get_prompt(
    spec: &ServerSpec,
    session: &Session,
    name: &str,
    words: &[String],
    options: &CallOptions,
) -> Result<Outcome> {
    let (prompts, _) = session.list_all("prompts/list", "prompts").await?;
    let Some(prompt) = prompts
        .iter()
        .find(|p| p.get("name").and_then(Value::as_str) == Some(name))
    else {
        let names = prompts
            .iter()
            .filter_map(|p| p.get("name").and_then(Value::as_str));
        let error = Error::usage(format!(
            "unknown prompt {:?} on {}",
            crate::render::text::escape_line(name),
            spec.name
        ));
        return Err(match closest(name, names) {
            Some(best) => error.with_hint(format!(
                "did you mean `{} --prompt {best}`?",
                spec.invocation
            )),
            None => error.with_hint(format!("see: {} --prompts", spec.invocation)),
        });
    };
    let as_tool = Tool {
        name: name.to_string(),
        description: prompt
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        input_schema: prompts::prompt_schema(prompt),
        raw: prompt.clone(),
    };
    let schema = ToolSchema::from_input_schema(&as_tool.input_schema);
    let command = format!("{} --prompt", spec.invocation);
    let parsed = parse_arguments(
        ToolRef {
            tool: name,
            command: &command,
        },
        &schema,
        words,
    )
    .await?;
    if parsed.options.help {
        emit(&tool_help(&as_tool))?;
        return Ok(Outcome::Success);
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
    finish(spec, name, result, &merged, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(list: &[&str]) -> Vec<String> {
        list.iter().map(|w| w.to_string()).collect()
    }

    fn action(list: &[&str]) -> (String, Globals) {
        let spec = ServerSpec::ad_hoc("srv").unwrap();
        let mut globals = Globals::default();
        let action = match parse_server_words(&spec, &words(list), &mut globals) {
            Ok(Action::Tool(name, rest)) => format!("tool {name} {rest:?}"),
            Ok(Action::Prompt(name, rest)) => format!("prompt {name} {rest:?}"),
            Ok(Action::Read(uri)) => format!("read {uri}"),
            Ok(Action::Resources) => "resources".into(),
            Ok(Action::Prompts) => "prompts".into(),
            Ok(Action::ListTools) => "list".into(),
            Err(e) => format!("error {}", e.message),
        };
        (action, globals)
    }

    #[test]
    fn server_words_are_options_then_a_tool() {
        assert_eq!(action(&[]).0, "list");
        assert_eq!(action(&["-h"]).0, "list");
        assert_eq!(action(&["--resources"]).0, "resources");
        assert_eq!(action(&["--read", "x://y"]).0, "read x://y");
        assert_eq!(
            action(&["--prompt", "p", "--arg", "v"]).0,
            "prompt p [\"--arg\", \"v\"]"
        );
        let (a, g) = action(&[
            "--refresh",
            "--timeout",
            "5",
            "echo",
            "--message",
            "hi",
            "--",
            "x",
        ]);
        assert_eq!(a, "tool echo [\"--message\", \"hi\", \"--\", \"x\"]");
        assert!(g.refresh);
        assert_eq!(g.timeout, Some(5.0));
        assert_eq!(action(&["--", "-x", "--y"]).0, "tool -x [\"--y\"]");
        assert_eq!(action(&["--", "--help"]).0, "tool --help []");
        assert!(
            action(&["--bogus"]).0.starts_with("error "),
            "{}",
            action(&["--bogus"]).0
        );
    }
}
