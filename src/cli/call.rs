//! `ferry <server> [options] [<tool> [args]]`: the listing (from the cache), a tool's help,
//! a call, and the server's resources and prompts. The server's own options are a small clap
//! table; the tool's arguments are parsed by the tool's schema (`flags`).
//!
//! The same code runs in this process and, for a command handed to the daemon, in the daemon
//! ([`Ctx`]): its output goes to a [`Console`] (this process's streams, or the caller's), and
//! its session is one of its own or the warm pool's.

use super::flags::{self, CallOptions, DeferredInput, ParsedCall, ToolRef};
use super::terminal::{Console, Local};
use super::{options, Globals};
use crate::client::cache::View;
use crate::client::catalog::{self, Listing};
use crate::client::config::ServerSpec;
use crate::client::handler::declared_capabilities;
use crate::client::lease::{Caller, Lease};
use crate::client::pins;
use crate::client::pool::Pool;
use crate::client::tasks::{self, Called, Fetched, Task};
use crate::client::{CacheEntry, Era, RequestContext, Session, Target};
use crate::daemon;
use crate::daemon::client::Handed;
use crate::daemon::wire::Run;
use crate::protocol::json_kind;
use crate::protocol::messages::{ListView, ResultView};
use crate::protocol::tools::Tool;
use crate::render::output::{self, OutputContext};
use crate::render::text::escape_line;
use crate::render::{prompts, tool_help};
use crate::schema::ToolSchema;
use crate::signals::block_on_interruptible;
use crate::words::closest;
use crate::{Error, Outcome, Result};
use clap::{Arg, ArgAction, Command};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// How long a server may take to start before a status line says what is happening.
const STATUS_AFTER: Duration = Duration::from_secs(1);

/// What was asked of one server.
pub enum Action {
    ListTools,
    Resources,
    Read(String),
    Prompts,
    Prompt(String, Vec<String>),
    Tool(String, Vec<String>),
    /// `--task ID`: a task's status, or its result once it has ended.
    Task(String),
}

/// The options a server takes before a tool name.
fn server_options() -> Command {
    Command::new("server")
        .no_binary_name(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .args(options::server_args())
        .arg(Arg::new("task").long("task").value_name("ID"))
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
pub fn parse_server_words(
    spec: &ServerSpec,
    words: &[String],
    globals: &mut Globals,
) -> Result<Action> {
    // The common shapes need no options table: nothing (the listing), or a tool first.
    match words.split_first() {
        None => return Ok(Action::ListTools),
        Some((tool, rest)) if !tool.starts_with('-') => {
            return Ok(Action::Tool(tool.clone(), rest.to_vec()))
        }
        Some(_) => {}
    }
    let matches = server_options().try_get_matches_from(words).map_err(|e| {
        let (first, suggestion) = super::clap_message(&e);
        let options = format!(
            "{}, --resources, --read URI, --prompts, --prompt NAME, --task ID",
            options::server_hint()
        );
        let hint = match suggestion {
            Some(s) => format!("did you mean {s}? a server takes {options} before a tool"),
            None => format!(
                "a server takes {options} before a tool; `{}` lists its tools",
                spec.invocation
            ),
        };
        Error::usage(format!("{first} for server {}", spec.name)).with_hint(hint)
    })?;
    globals.refresh |= matches.get_flag("refresh");
    globals.json |= matches.get_flag("json");
    globals.no_daemon |= matches.get_flag("no-daemon");
    globals.detach |= matches.get_flag("detach");
    globals.help |= matches.get_flag("tools");
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
    } else if let Some(id) = matches.get_one::<String>("task") {
        Action::Task(id.clone())
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

/// Where a server command runs: the console it writes to, and, in the daemon, the warm pool
/// its sessions come from (without one, each command starts its server and stops it).
pub struct Ctx {
    pub console: Arc<dyn Console>,
    pub pool: Option<Arc<Pool>>,
}

impl Ctx {
    /// This process, each command with a session of its own.
    pub fn local() -> Ctx {
        Ctx {
            console: Arc::new(Local::new()),
            pool: None,
        }
    }

    /// A session for `spec`, saying on a terminal what takes long (an `npx` download can
    /// take 10 s). `refresh` finds out the protocol era anew (of a server started for it).
    async fn open(
        &self,
        spec: &ServerSpec,
        timeout: Option<f64>,
        refresh: bool,
    ) -> Result<Lease<'_>> {
        self.open_for(spec, timeout, refresh, None).await
    }

    /// As `open`; with `task`, the warm session that holds that task when there is one.
    async fn open_for(
        &self,
        spec: &ServerSpec,
        timeout: Option<f64>,
        refresh: bool,
        task: Option<&str>,
    ) -> Result<Lease<'_>> {
        let caller = Caller {
            handler: self.console.handler(),
            environment: self.console.environment(),
            elicits: self.console.elicits(),
        };
        let opening = Lease::open(spec, self.pool.as_deref(), caller, timeout, refresh, task);
        if !self.console.stderr_is_terminal() {
            return opening.await;
        }
        tokio::pin!(opening);
        tokio::select! {
            opened = &mut opening => return opened,
            _ = tokio::time::sleep(STATUS_AFTER) => {}
        }
        self.console.status(&format!(
            "starting {} (a first start may download it)...",
            crate::render::text::escape_line(&spec.name)
        ));
        let opened = opening.await;
        self.console.status("\r\x1b[K");
        opened
    }

    /// The context of one request: this command's handler, limit and progress.
    fn request(&self, timeout: Duration, headers: Vec<(String, String)>) -> RequestContext {
        RequestContext {
            handler: self.console.handler(),
            timeout,
            progress: self.console.stderr_is_terminal(),
            headers,
            tasks: false,
        }
    }

    /// The server's cached tools list, parsed (the daemon keeps it parsed between calls).
    fn listing(&self, spec: &ServerSpec) -> Option<Arc<Listing>> {
        let view = View::of(&declared_capabilities(self.console.elicits(), false));
        match &self.pool {
            Some(pool) => pool.listing(spec, &view),
            None => Listing::load_in(spec, &view).map(Arc::new),
        }
    }

    /// The cached listing if it is fresh enough to show without asking the server.
    fn fresh_listing(&self, spec: &ServerSpec) -> Option<Arc<Listing>> {
        let listing = self
            .listing(spec)
            .filter(|l| l.entry.has_tools() && !l.entry.is_expired());
        tracing::debug!(server = %spec.name, hit = listing.is_some(), "cache");
        listing
    }

    /// The server's listing checked against its pins (pinning what is new), with this
    /// command's `FERRY_PIN`.
    fn pins(&self, spec: &ServerSpec, tools: &[&Tool]) -> pins::Report {
        pins::observe(spec, tools, &|name| self.console.var(name))
    }

    /// Prints a warning per line.
    fn warn_all(&self, warnings: &[String]) {
        for w in warnings {
            self.console.warn(&format!("warning: {w}"));
        }
    }

    /// Prints lines that say what they are (`warning: ...`, `note: ...`).
    fn warn_all_lines(&self, lines: &[String]) {
        for line in lines {
            self.console.warn(line);
        }
    }
}

/// Runs whatever the words after a server ask for, in this process. A command that needs a
/// server is handed to the daemon when it may be (`handover` makes what it is handed, from
/// the words as typed), and runs cold when it may not or the daemon cannot be had.
pub fn run_server(
    spec: ServerSpec,
    words: &[String],
    mut globals: Globals,
    handover: Option<&dyn Fn() -> Option<Run>>,
) -> Result<Outcome> {
    let action = parse_server_words(&spec, words, &mut globals)?;
    let ctx = Ctx::local();
    if let Action::ListTools = action {
        // The common path: served from disk with no runtime and no server.
        if !globals.refresh {
            if let Some(listing) = ctx.fresh_listing(&spec) {
                print_listing(&spec, &listing, &globals, &ctx)?;
                return Ok(Outcome::Success);
            }
        }
    }
    if let Some(handover) = handover.filter(|_| warm_allowed(&spec, &globals, &ctx)) {
        if let Some(answered) = answer_from_cache(&spec, &action, &globals, &ctx) {
            return answered;
        }
        let handed = match handover() {
            Some(run) => daemon::client::hand_over(
                run,
                true,
                super::handover::answer_question,
                super::status_line::write,
            ),
            None => Handed::Cold,
        };
        match handed {
            Handed::Done(result) => return result,
            Handed::Cold | Handed::Absent => {}
            Handed::Unavailable(why) => warn_cold(&why, &ctx),
        }
    }
    block_on_interruptible(run_action(spec, action, globals, &ctx))
}

/// Runs whatever the words after a server ask for, listing included, with `ctx` (the daemon
/// runs handed-over commands so).
pub async fn run_server_in(
    spec: ServerSpec,
    action: Action,
    globals: Globals,
    ctx: &Ctx,
) -> Result<Outcome> {
    if let Action::ListTools = action {
        if !globals.refresh {
            if let Some(listing) = ctx.fresh_listing(&spec) {
                print_listing(&spec, &listing, &globals, ctx)?;
                return Ok(Outcome::Success);
            }
        }
    }
    run_action(spec, action, globals, ctx).await
}

/// What a tool's words ask for that the cache alone can answer: its `--help`, or a usage
/// error. `None` when a server (or input) is needed.
fn answer_from_cache(
    spec: &ServerSpec,
    action: &Action,
    globals: &Globals,
    ctx: &Ctx,
) -> Option<Result<Outcome>> {
    let Action::Tool(name, words) = action else {
        return None;
    };
    let listing = ctx
        .listing(spec)
        .filter(|l| l.entry.has_tools() && !globals.refresh)?;
    let (tools, warnings) = listing.usable(spec);
    let tool = *tools.iter().find(|t| t.name == *name)?;
    let schema = ToolSchema::from_input_schema(&tool.input_schema);
    let tool_ref = ToolRef {
        tool: name,
        command: &spec.invocation,
    };
    let mut input = DeferredInput::default();
    let answered = match flags::parse_call(tool_ref, &schema, words, &mut input) {
        Ok(parsed) if parsed.options.help => {
            ctx.warn_all(&warnings);
            let report = ctx.pins(spec, &tools);
            ctx.warn_all_lines(&report.warnings());
            ctx.console
                .emit(&marked_help(tool, &report))
                .map(|_| Outcome::Success)
        }
        Err(e) if !input.wants_more() => {
            ctx.warn_all(&warnings);
            Err(e)
        }
        _ => return None,
    };
    Some(answered)
}

fn call_options(globals: &Globals) -> CallOptions {
    CallOptions {
        help: false,
        raw_json: globals.json,
        max_tokens: globals.max_tokens,
        timeout: globals.timeout,
        detach: globals.detach,
    }
}

/// Whether this command may go through the daemon.
pub fn warm_allowed(spec: &ServerSpec, globals: &Globals, ctx: &Ctx) -> bool {
    !globals.no_daemon
        && !daemon::client::disabled_for(spec, ctx.console.var("FERRY_NO_DAEMON").as_deref())
}

/// Says, in one line, that the warm path was not available and the call runs cold.
fn warn_cold(why: &str, ctx: &Ctx) {
    ctx.console.warn(&format!(
        "warning: the ferry daemon is unavailable ({}); calling cold",
        crate::render::text::escape_line(why)
    ));
}

async fn run_action(
    spec: ServerSpec,
    action: Action,
    globals: Globals,
    ctx: &Ctx,
) -> Result<Outcome> {
    let options = call_options(&globals);
    match action {
        Action::ListTools => {
            // --refresh finds out the protocol era anew too.
            let held = ctx.open(&spec, globals.timeout, globals.refresh).await?;
            let entry = catalog::refresh_tools(&spec, held.session()).await;
            held.end(false).await;
            print_listing(&spec, &Listing::new(entry?), &globals, ctx)?;
            Ok(Outcome::Success)
        }
        Action::Tool(name, words) => call_tool(spec, &name, &words, globals, ctx).await,
        Action::Task(id) => fetch_task(spec, &id, &globals, &options, ctx).await,
        Action::Resources => {
            let held = ctx.open(&spec, globals.timeout, false).await?;
            let listed = match declares(&spec, held.session(), "resources") {
                Some(false) => Ok(offers_none(&spec, "resources")),
                _ => list_resources(held.session()).await,
            };
            held.end(false).await;
            ctx.console.emit(&listed?)?;
            Ok(Outcome::Success)
        }
        Action::Read(uri) => {
            let held = ctx.open(&spec, globals.timeout, false).await?;
            let outcome = async {
                if declares(&spec, held.session(), "resources") == Some(false) {
                    return Err(none_to_ask_for(&spec, "resources"));
                }
                let timeout = catalog::timeout_for(&spec, globals.timeout);
                let result = held
                    .session()
                    .request_with(
                        "resources/read",
                        json!({"uri": uri}),
                        &ctx.request(timeout, Vec::new()),
                    )
                    .await;
                let result = match result {
                    Err(e) => Err(unlisted_read(&spec, held.session(), &uri, e).await),
                    ok => ok,
                };
                ctx.console.finish_progress();
                finish(&spec, "resource", result, &options, false, ctx)
            }
            .await;
            held.end(false).await;
            outcome
        }
        Action::Prompts => {
            let held = ctx.open(&spec, globals.timeout, false).await?;
            let prompts = match declares(&spec, held.session(), "prompts") {
                Some(false) => None,
                _ => Some(held.session().list_all("prompts/list", "prompts").await),
            };
            held.end(false).await;
            let Some(prompts) = prompts else {
                ctx.console.emit(&offers_none(&spec, "prompts"))?;
                return Ok(Outcome::Success);
            };
            let mut out = String::new();
            for prompt in prompts?.0 {
                out.push_str(&prompts::prompt_line(&prompt));
                out.push('\n');
            }
            ctx.console.emit(if out.is_empty() {
                "(no prompts)\n"
            } else {
                &out
            })?;
            Ok(Outcome::Success)
        }
        Action::Prompt(name, words) => {
            let held = ctx.open(&spec, globals.timeout, false).await?;
            let outcome = async {
                if declares(&spec, held.session(), "prompts") == Some(false) {
                    return Err(none_to_ask_for(&spec, "prompts"));
                }
                let timeout = catalog::timeout_for(&spec, globals.timeout);
                get_prompt(&spec, held.session(), &name, &words, &options, timeout, ctx).await
            }
            .await;
            held.end(false).await;
            outcome
        }
    }
}

/// `--task ID`: the task's status in one line (exit 75) while it runs, else its result as
/// its call would have printed it.
async fn fetch_task(
    spec: ServerSpec,
    id: &str,
    globals: &Globals,
    options: &CallOptions,
    ctx: &Ctx,
) -> Result<Outcome> {
    let era = catalog::remembered_era(&spec, false);
    if let Some(refusal) = cold_task_refusal(&spec, ctx, Some(id), era.as_ref()) {
        return Err(refusal);
    }
    let held = ctx
        .open_for(&spec, globals.timeout, false, Some(id))
        .await?;
    let timeout = catalog::timeout_for(&spec, globals.timeout);
    let fetched = tasks::fetch(held.session(), id, &ctx.request(timeout, Vec::new())).await;
    held.end(false).await;
    match fetched? {
        Fetched::Running(task) => {
            ctx.console.emit(&if options.raw_json {
                output::compact_json(task.body())
            } else {
                task.line()
            })?;
            Ok(Outcome::TaskRunning)
        }
        Fetched::Done(result) => finish(&spec, "task", Ok(result), options, true, ctx),
    }
}

/// Parses a tool's arguments, reading standard input and `@file`s when they ask for them
/// (through the console: where a signal still stops ferry, with a size limit).
async fn parse_arguments(
    tool: ToolRef<'_>,
    schema: &ToolSchema,
    words: &[String],
    ctx: &Ctx,
) -> Result<ParsedCall> {
    let mut input = DeferredInput::default();
    input.cwd = ctx.console.environment().cwd.clone();
    loop {
        input.rewind();
        match flags::parse_call(tool, schema, words, &mut input) {
            Err(_) if input.wants_more() => {
                if input.wants_stdin {
                    input.set_stdin(ctx.console.read_input(None).await?);
                }
                for path in input.wants_files.clone() {
                    let text = ctx.console.read_input(Some(path.clone())).await?;
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
    ctx: &Ctx,
) -> Result<Outcome> {
    // The call path trusts the cached schema whatever its age: the server validates again,
    // and a stale list costs no extra request.
    let fresh = ctx
        .listing(&spec)
        .filter(|l| l.entry.has_tools() && !globals.refresh);
    let mut report = None;
    let cached_tool = fresh.and_then(|listing| {
        let (tools, warnings) = listing.usable(&spec);
        ctx.warn_all(&warnings);
        let tool = tools.iter().find(|t| t.name == name).map(|t| (*t).clone());
        if tool.is_some() {
            report = Some(ctx.pins(&spec, &tools));
        }
        tool
    });
    tracing::debug!(server = %spec.name, tool = name, hit = cached_tool.is_some(), "cache lookup for the call");
    let mut held: Option<Lease> = None;
    let tool = match cached_tool {
        Some(tool) => tool,
        // Not cached (or not there): list once more before calling it unknown.
        None => {
            let opened = ctx.open(&spec, globals.timeout, globals.refresh).await?;
            let found = match catalog::refresh_tools(&spec, opened.session()).await {
                Ok(entry) => listed_tool(&spec, entry, name, ctx),
                Err(e) => Err(e),
            };
            match found {
                Ok((tool, listed_report)) => {
                    report = Some(listed_report);
                    held = Some(opened);
                    tool
                }
                Err(e) => {
                    opened.end(false).await;
                    return Err(e);
                }
            }
        }
    };
    let report = report.unwrap_or_default();
    // A tool whose definition changed (or hides text) is not called until reviewed; its
    // help still shows, marked.
    let wants_help = words
        .iter()
        .take_while(|w| *w != "--")
        .any(|w| w == "--help" || w == "-h");
    // Everything the call needs before a session is used for it; a refusal, a usage error or
    // the tool's help ends here, and so does a session opened to list the tools.
    let prepared = async {
        if report.blocks(name) && !wants_help {
            return Err(report.refusal(name));
        }
        let schema = ToolSchema::from_input_schema(&tool.input_schema);
        let tool_ref = ToolRef {
            tool: name,
            command: &spec.invocation,
        };
        let parsed = parse_arguments(tool_ref, &schema, words, ctx).await?;
        if parsed.options.help {
            return Ok(None);
        }
        let mut options = call_options(&globals);
        options.raw_json |= parsed.options.raw_json;
        options.detach |= parsed.options.detach;
        options.max_tokens = parsed
            .options
            .max_tokens
            .or(options.max_tokens)
            .or(spec.max_tokens);
        options.timeout = parsed.options.timeout.or(options.timeout);
        let params = json!({"name": name, "arguments": parsed.arguments});
        if options.detach {
            let era = catalog::remembered_era(&spec, false);
            if let Some(refusal) = cold_task_refusal(&spec, ctx, None, era.as_ref()) {
                return Err(refusal);
            }
        }
        Ok(Some((options, params)))
    }
    .await;
    let (options, params) = match prepared {
        Ok(Some(call)) => call,
        stopped => {
            if let Some(held) = held {
                held.end(false).await;
            }
            stopped?;
            ctx.warn_all_lines(&report.warnings());
            ctx.console.emit(&marked_help(&tool, &report))?;
            return Ok(Outcome::Success);
        }
    };
    let timeout = catalog::timeout_for(&spec, options.timeout);
    // Parameters the tool mirrors into headers (`x-mcp-header`) travel as Mcp-Param-*.
    let param_headers =
        crate::protocol::tools::param_headers(&tool.input_schema, &params["arguments"]);
    let held = match held {
        Some(held) => {
            // Opened to list the tools before the call's own options were known.
            held.set_timeout(timeout);
            held
        }
        None => ctx.open(&spec, options.timeout, false).await?,
    };
    let request = ctx.request(timeout, param_headers);
    let outcome = match call_or_task(&spec, &tool, &held, params, &options, &request, ctx).await {
        // Detached: the task's id is out.
        Ok(None) => Ok(Outcome::Success),
        result => {
            ctx.console.finish_progress();
            finish(
                &spec,
                name,
                result.map(Option::unwrap_or_default),
                &options,
                true,
                ctx,
            )
        }
    };
    // The output is out; the cache is brought up to date while the server stops.
    held.end(true).await;
    outcome
}

/// Calls a tool, and waits for it when it becomes a task (its status on the terminal), unless
/// `--detach` asked to leave the task running: then its id is printed and `None` returned.
async fn call_or_task(
    spec: &ServerSpec,
    tool: &Tool,
    held: &Lease<'_>,
    params: Value,
    options: &CallOptions,
    request: &RequestContext,
    ctx: &Ctx,
) -> Result<Option<Value>> {
    let session = held.session();
    let started = tokio::time::Instant::now();
    let augment = tasks::augments(session, tool, options.detach);
    let task = match tasks::call(session, params, augment, request).await? {
        Called::Done(result) => return Ok(Some(result)),
        Called::Task(task) => task,
    };
    if options.detach {
        // An era found out only now may hold the task in this session, which ends with the
        // call: the task is cancelled rather than left where nobody can reach it.
        if let Some(refusal) = cold_task_refusal(spec, ctx, None, Some(&session.era())) {
            drop(session.send_on_drop("tasks/cancel", json!({"taskId": task.id}), request));
            return Err(refusal);
        }
        held.remember_task(&task.id, task.ttl);
        let id = flags::shell_word(&task.id);
        ctx.console.emit(&escape_line(&task.id))?;
        ctx.console.warn(&format!(
            "task {id} is {}; fetch it with: {} --task {id}",
            task.status.name(),
            spec.invocation
        ));
        return Ok(None);
    }
    let shown = AtomicBool::new(false);
    let show = |task: &Task| {
        if request.progress {
            shown.store(true, Ordering::SeqCst);
            let line: String = format!("task {}", task.line()).chars().take(100).collect();
            ctx.console.status(&format!("\r\x1b[K{line}"));
        }
    };
    let result = tasks::wait(session, task, request, &show, started).await;
    if shown.load(Ordering::SeqCst) {
        ctx.console.status("\r\x1b[K");
    }
    result.map(Some)
}

/// Why a task cannot be left running or fetched later by a cold call: a stdio server's tasks
/// live in its process, and a handshake-era server's in the session that made them, both of
/// which a cold call opens and closes. `era` is the server's, when known; `None` where a task
/// outlives the call.
fn cold_task_refusal(
    spec: &ServerSpec,
    ctx: &Ctx,
    fetching: Option<&str>,
    era: Option<&Era>,
) -> Option<Error> {
    if ctx.pool.is_some() {
        return None;
    }
    let holder = if matches!(spec.target, Target::Stdio { .. }) {
        format!(
            "{}'s tasks live in its process, which a cold call starts and stops",
            spec.name
        )
    } else if matches!(era, Some(Era::Handshake(_))) {
        format!(
            "{} keeps a task in the session that made it, which a cold call opens and closes",
            spec.name
        )
    } else {
        return None;
    };
    let (what, hint) = match fetching {
        Some(id) => (
            format!("task {}", escape_line(id)),
            "fetch it through the daemon (without --no-daemon or FERRY_NO_DAEMON=1)",
        ),
        None => (
            "a detached task".to_string(),
            "call it through the daemon (without --no-daemon, FERRY_NO_DAEMON=1 or \"keepAlive\": false), or leave out --detach and wait for the result",
        ),
    };
    Some(Error::usage(format!("{what} needs the warm daemon: {holder}")).with_hint(hint))
}

/// `name` in a list just fetched: the tool and the list checked against the pins, or the
/// "unknown tool" error with a suggestion.
fn listed_tool(
    spec: &ServerSpec,
    entry: CacheEntry,
    name: &str,
    ctx: &Ctx,
) -> Result<(Tool, pins::Report)> {
    let (tools, warnings) = catalog::usable_tools(spec, entry);
    ctx.warn_all(&warnings);
    match tools.iter().find(|t| t.name == name) {
        Some(tool) => {
            let all: Vec<&Tool> = tools.iter().collect();
            Ok((tool.clone(), ctx.pins(spec, &all)))
        }
        None => Err(catalog::unknown_tool(spec, name, &tools)),
    }
}

/// A tool's help, its pin mark (if any) on a line of its own first.
fn marked_help(tool: &Tool, report: &pins::Report) -> String {
    let help = tool_help(tool);
    match report.label(&tool.name) {
        Some(label) => format!("{} {label}\n{help}", escape_line(&tool.name)),
        None => help,
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
    ctx: &Ctx,
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
    let out = OutputContext::new(&spec.name, what);
    let text = if options.raw_json {
        output::compact_json(&result)
    } else {
        output::render_result(&result, &out)
    };
    // An empty answer still says the call ran.
    let text = if text.trim().is_empty() && !options.raw_json {
        "(no output)\n".to_string()
    } else {
        text
    };
    let text = match options.max_tokens {
        Some(max) => output::apply_budget(text, max.max(options::MIN_MAX_TOKENS), &out),
        None => text,
    };
    ctx.console.emit(&text)?;
    Ok(if ResultView::new(&result).is_error() {
        Outcome::ToolReportedError
    } else {
        Outcome::Success
    })
}

/// Why a result cannot be shown as text, if it cannot.
fn malformed_result(result: &Value, tool_call: bool) -> Option<String> {
    if !result.is_object() {
        return Some(format!(
            "the result is {}, not an object",
            json_kind(result)
        ));
    }
    let view = ResultView::new(result);
    match view.content_field() {
        Some(Value::Array(_)) => None,
        None if !tool_call || view.structured_content().is_some() => None,
        None => Some("it has no \"content\"".into()),
        Some(other) => Some(format!(
            "its \"content\" is {}, not a list",
            json_kind(other)
        )),
    }
}

/// The listing: a line per tool, or with `--json` the tools' definitions exactly as the server
/// sent them (a `tools/list` result, filtered as configured).
fn print_listing(spec: &ServerSpec, listing: &Listing, globals: &Globals, ctx: &Ctx) -> Result<()> {
    let (tools, warnings) = listing.usable(spec);
    ctx.warn_all(&warnings);
    let report = ctx.pins(spec, &tools);
    ctx.warn_all_lines(&report.warnings());
    if globals.json {
        // Each listed tool's own entry, as the server sent it: what was skipped stays out.
        let definitions: Vec<&Value> = tools.iter().map(|t| &t.raw).collect();
        return ctx.console.emit(&crate::render::text::json_for_terminal(
            serde_json::to_string_pretty(&json!({ "tools": definitions })).unwrap_or_default(),
        ));
    }
    let mut out = String::with_capacity(tools.len() * 60);
    for (tool, line) in tools.iter().zip(crate::render::listing_lines(&tools)) {
        out.push_str(&line);
        if let Some(label) = report.label(&tool.name) {
            out.push(' ');
            out.push_str(&label);
        }
        out.push('\n');
    }
    if out.is_empty() {
        out.push_str("(no tools)\n");
    }
    // The server's instructions carry its usage rules: under --help, capped.
    let instructions = listing
        .entry
        .description
        .instructions
        .as_deref()
        .map(str::trim)
        .filter(|i| !i.is_empty() && globals.help);
    if let Some(text) = instructions {
        out.push_str(&crate::render::tool::instructions_block(&spec.name, text));
    }
    ctx.console.emit(&out)
}

/// A server's error for reading a URI it never listed (an unknown one, or a template's
/// pattern filled with a value it refuses) is the caller's mistake, whatever code it used.
async fn unlisted_read(spec: &ServerSpec, session: &Session, uri: &str, error: Error) -> Error {
    let answered = format!("{} answered resources/read with an error: ", spec.name);
    let Some(said) = error.message.strip_prefix(&answered) else {
        return error;
    };
    let listed = match session.list_all("resources/list", "resources").await {
        Ok((resources, _)) => resources
            .iter()
            .any(|r| ListView::new(r).uri() == Some(uri)),
        Err(_) => return error,
    };
    if listed {
        return error;
    }
    Error::usage(format!("{} refused resources/read: {said}", spec.name)).with_hint(format!(
        "`ferry {} --resources` lists what it offers, templates included",
        escape_line(&spec.name)
    ))
}

/// Whether the server declares `capability` (`resources`, `prompts`), as its session or the
/// cache knows; `None` when neither does (a stateless session that skipped discovery).
fn declares(spec: &ServerSpec, session: &Session, capability: &str) -> Option<bool> {
    let known = |c: &Value| c.as_object().map(|m| m.contains_key(capability));
    known(&session.description().capabilities)
        .or_else(|| CacheEntry::load_stable(spec).and_then(|e| known(&e.description.capabilities)))
}

/// Asking a server that declares no resources (prompts) for one is the caller's mistake.
fn none_to_ask_for(spec: &ServerSpec, what: &str) -> Error {
    Error::usage(offers_none(spec, what).trim_end()).with_hint(format!(
        "`ferry {} --help` lists its tools",
        escape_line(&spec.name)
    ))
}

/// `NAME offers no resources`: a server that does not declare them has none to list.
fn offers_none(spec: &ServerSpec, what: &str) -> String {
    format!("{} offers no {what}\n", escape_line(&spec.name))
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
    timeout: Duration,
    ctx: &Ctx,
) -> Result<Outcome> {
    let (prompts, _) = session.list_all("prompts/list", "prompts").await?;
    let Some(prompt) = prompts
        .iter()
        .find(|p| ListView::new(p).name() == Some(name))
    else {
        let names = prompts.iter().filter_map(|p| ListView::new(p).name());
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
        description: ListView::new(prompt)
            .description()
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
        ctx,
    )
    .await?;
    if parsed.options.help {
        ctx.console.emit(&tool_help(&as_tool))?;
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
        .request_with(
            "prompts/get",
            json!({"name": name, "arguments": arguments}),
            &ctx.request(timeout, Vec::new()),
        )
        .await;
    ctx.console.finish_progress();
    finish(spec, name, result, &merged, false, ctx)
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
            Ok(Action::Task(id)) => format!("task {id}"),
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
        assert_eq!(action(&["--task", "t-1"]).0, "task t-1");
        let (a, g) = action(&["--detach", "research", "--topic", "x"]);
        assert_eq!(a, "tool research [\"--topic\", \"x\"]");
        assert!(g.detach);
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
