//! The command line: ferry's own commands, one options table in clap ([`command`]), and
//! `ferry <server> [<tool> [args]]` for any server, an external subcommand whose tool
//! arguments the tool's schema parses (`flags`).
//!
//! Listing and help come from the tools cache; only calls, refreshes and cache misses start a
//! server. A server command goes to the warm daemon whole when one runs (`warm`, which is also
//! how the daemon runs it), and needs no options table in its common shapes. Every command
//! ends in an `Outcome` or an `Error`, and `error::exit_code` is the one mapping to the process
//! status. Each command lives in its own file.

mod auth;
mod call;
mod completions;
mod config;
mod demo;
mod find;
pub mod flags;
mod handover;
pub mod options;
mod review;
mod skill;
mod sources;
pub mod status_line;
pub mod terminal;
mod tokens;
mod tokens_served;
pub mod warm;

use crate::client::config::ServerSpec;
use crate::daemon::client::Handed;
use crate::{exit_code, Error, Outcome, Result};
use clap::{Arg, ArgAction, ArgMatches, Command};
use std::ffi::OsString;
use terminal::{emit, report};

/// ferry's own options that come before a server (and, where it has no property of that
/// name, after a tool).
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Globals {
    pub refresh: bool,
    pub json: bool,
    pub max_tokens: Option<usize>,
    pub timeout: Option<f64>,
    /// Call cold: start the server for this call only, not through the daemon.
    pub no_daemon: bool,
    /// Leave a call that becomes a task running, and print its id.
    pub detach: bool,
    /// `ferry SERVER --help`: the listing and the server's instructions.
    pub help: bool,
}

const ABOUT: &str =
    "ferry: any MCP server as CLI commands, and command-line tools as an MCP server";

const AFTER_HELP: &str = "\
A server is a configured name, a URL, or --cmd 'COMMAND ARGS'. After it:
  ferry <server>                        its tools, one line each (from the cache)
  ferry <server> --help                 the same, then the server's instructions (capped)
  ferry <server> <tool> --help          how to call a tool, from its schema
  ferry <server> <tool> [args]          call it: --prop value, --flag/--no-flag, JSON for objects
  ferry <server> --resources | --read URI | --prompts | --prompt NAME [args]
  ferry <server> -- <tool> [args]       a tool whose name starts with '-'
  ferry <server> <tool> --detach [args] a call that becomes a task (MCP tasks) keeps running:
                                        its id on stdout (a call waits for it otherwise)
  ferry <server> --task ID              that task's status (exit 75 while it runs) or result
--refresh, --json, --max-tokens and --timeout also work after the server, and after the tool
when it has no property of that name; --no-daemon and --detach after the server too. After
the tool, --json is the arguments object ('{...}', @file or -); the envelope is --json before it.
A string argument '@path' is that file's text when the file exists, and '-' is standard input.
Calls go through a per-user daemon that keeps servers warm (ferry daemon status); --no-daemon,
FERRY_NO_DAEMON=1 or keepAlive: false in a server's config call cold instead.

exit codes: 0 ok, 1 the tool reported an error (or find found nothing, or output could not
            be written), 2 usage error, 3 server failure, 4 timeout, 5 authentication needed
            or refused, 75 the task asked for still runs, 130 interrupted, 141 the reader of
            the output went away
config: ~/.config/ferry/servers.json (mcpServers), and .mcp.json, .cursor/mcp.json,
        .vscode/mcp.json from here up to the repository's root (after `ferry trust`)
diagnostics: --verbose or FERRY_LOG=debug shows the JSON-RPC traffic on stderr";

/// The one definition of ferry's commands and options: parsing, `--help`, "did you mean" and
/// shell completions all come from it.
pub fn command() -> Command {
    let count = || clap::builder::ValueParser::new(whole_number);
    Command::new("ferry")
        .about(ABOUT)
        .version(env!("CARGO_PKG_VERSION"))
        .allow_external_subcommands(true)
        .external_subcommand_value_parser(clap::value_parser!(String))
        .override_usage("ferry [OPTIONS] [COMMAND | SERVER [TOOL [ARGS]...]]")
        .after_help(AFTER_HELP)
        .args(options::global_args())
        .subcommand(
            Command::new("add")
                .about("Add a server: NAME -- COMMAND [ARGS...] (stdio) or NAME URL (Streamable HTTP)")
                .arg(
                    Arg::new("name")
                        .required(true)
                        .value_name("NAME")
                        .help("The server's name, as you will type it: ferry NAME"),
                )
                .arg(Arg::new("url").value_name("URL").help("The server's Streamable HTTP endpoint"))
                .arg(
                    Arg::new("command")
                        .last(true)
                        .num_args(1..)
                        .value_name("COMMAND")
                        .help("After --: the command that starts a stdio server"),
                )
                .arg(
                    Arg::new("env")
                        .long("env")
                        .short('e')
                        .value_name("KEY=VALUE")
                        .action(ArgAction::Append)
                        .help("An environment variable for a stdio server (repeatable)"),
                )
                .arg(
                    Arg::new("header")
                        .long("header")
                        .short('H')
                        .value_name("NAME:VALUE")
                        .action(ArgAction::Append)
                        .help("An HTTP header for a URL server (repeatable)"),
                )
                .arg(
                    Arg::new("client-id")
                        .long("client-id")
                        .value_name("ID")
                        .help("A URL server's OAuth client id, registered with its authorization server"),
                )
                .arg(
                    Arg::new("client-secret")
                        .long("client-secret")
                        .value_name("SECRET")
                        .requires("client-id")
                        .help("Its secret, best as ${VAR} (expanded when used, never stored expanded)"),
                )
                .arg(
                    Arg::new("private-key")
                        .long("private-key")
                        .value_name("KEY")
                        .requires("client-id")
                        .help("Its private key instead of a secret (private_key_jwt): an absolute PEM file path, or ${VAR} holding the PEM"),
                )
                .arg(
                    Arg::new("force")
                        .long("force")
                        .action(ArgAction::SetTrue)
                        .help("Replace a server of that name"),
                ),
        )
        .subcommand(
            Command::new("remove")
                .about("Remove servers from your config")
                .arg(
                    Arg::new("name")
                        .required(true)
                        .num_args(1..)
                        .value_name("NAME")
                        .help("The servers to remove, as `ferry` lists them (your servers.json only)"),
                ),
        )
        .subcommand(
            Command::new("import")
                .about("Import servers from another host's config")
                .arg(
                    Arg::new("source")
                        .required(true)
                        .value_name("SOURCE")
                        .help(format!(
                            "{}, or a file",
                            crate::client::import::host_words()
                        )),
                )
                .arg(
                    Arg::new("force")
                        .long("force")
                        .action(ArgAction::SetTrue)
                        .help("Re-sync: replace servers whose entry the host changed (none is removed)"),
                ),
        )
        .subcommand(
            Command::new("find")
                .about("The best-matching tools of every server, from the cache (no server is started)")
                .arg(
                    Arg::new("words")
                        .required(true)
                        .num_args(1..)
                        .value_name("WORDS")
                        .help("What the task needs, in any words (\"read a pdf\", \"create issue\")"),
                )
                .arg(
                    Arg::new("limit")
                        .long("limit")
                        .short('n')
                        .value_name("N")
                        .value_parser(count())
                        .help("How many tools to show (default 5)"),
                )
                .arg(
                    Arg::new("from")
                        .long("from")
                        .value_name("FILE")
                        .action(ArgAction::Append)
                        .help("Search a saved tools/list result instead (repeatable)"),
                )
                .arg(
                    Arg::new("no-help")
                        .long("no-help")
                        .action(ArgAction::SetTrue)
                        .help("Leave out the top hit's help (shown under its line by default)"),
                ),
        )
        .subcommand(
            Command::new("tokens")
                .about("What the tools cost in context tokens: MCP eager, host-deferred, and ferry")
                .long_about("What each server's tools cost in context tokens on three paths: MCP eager (every definition up front, in host format), MCP host-deferred (names up front; a search and the definition per tool used), and ferry (one skill header up front; one find, which shows the top hit's help, per tool used). With --manifest or --cli, the other direction: what ferry serve's tools cost a host as MCP beside what the same commands cost an agent in a shell (their own help, read when needed). Claude's tokenizer is not public: counts are close estimates from OpenAI's public encodings.")
                .arg(
                    Arg::new("servers")
                        .num_args(0..)
                        .value_name("SERVER")
                        .help("The servers to meter (default: every configured one)"),
                )
                .arg(
                    Arg::new("from")
                        .long("from")
                        .value_name("FILE")
                        .action(ArgAction::Append)
                        .help("A saved tools/list result instead of a live server (repeatable)"),
                )
                .arg(
                    Arg::new("tokenizer")
                        .long("tokenizer")
                        .value_name("NAME")
                        .help("o200k_base (default) or cl100k_base"),
                )
                .arg(
                    Arg::new("host")
                        .long("host")
                        .value_name("NAME")
                        .help("The format definitions are injected in: anthropic (default) or openai"),
                )
                .arg(
                    Arg::new("proxy")
                        .long("servers")
                        .action(ArgAction::SetTrue)
                        .conflicts_with_all(["manifest", "cli"])
                        .help("Also what a host sees through ferry serve --servers: three tools up front, a find and a call per tool used"),
                )
                .arg(
                    Arg::new("manifest")
                        .long("manifest")
                        .value_name("FILE")
                        .conflicts_with_all(["servers", "from", "cli"])
                        .help("Meter a ferry serve manifest: its tools as MCP beside the same commands in a shell"),
                )
                .arg(
                    Arg::new("cli")
                        .long("cli")
                        .value_name("NAME")
                        .action(ArgAction::Append)
                        .conflicts_with_all(["servers", "from"])
                        .help("Meter quick mode's tool for this CLI beside the CLI's own --help (repeatable)"),
                )
                .arg(
                    Arg::new("allow")
                        .long("allow")
                        .value_name("CLI:SUB,SUB")
                        .action(ArgAction::Append)
                        .requires("cli")
                        .help("As ferry serve --allow"),
                )
                .arg(
                    Arg::new("svg")
                        .long("svg")
                        .value_name("FILE")
                        .help("Also draw the figures as a self-contained SVG picture in FILE"),
                )
                .arg(Arg::new("json").long("json").action(ArgAction::SetTrue).help("Machine-readable output"))
                .arg(Arg::new("tools").long("tools").action(ArgAction::SetTrue).help("A line per tool (the default for a single server)"))
                .arg(
                    Arg::new("session")
                        .long("session")
                        .value_name("N")
                        .value_parser(count())
                        .help("Price a session using N distinct tools (default 5)..."),
                )
                .arg(
                    Arg::new("turns")
                        .long("turns")
                        .value_name("T")
                        .value_parser(count())
                        .help("...over T task turns (default 20; each lazy path adds a lookup turn per tool)..."),
                )
                .arg(
                    Arg::new("no-cache")
                        .long("no-cache")
                        .action(ArgAction::SetTrue)
                        .help("...without prompt caching (default: cached, reads 0.1x, writes 1.25x)"),
                ),
        )
        .subcommand(
            Command::new("skill")
                .about("Write skills/<server>/SKILL.md, or list stale skills with --check")
                .arg(
                    Arg::new("servers")
                        .num_args(0..)
                        .value_name("SERVER")
                        .help("The servers to write a skill for (with --check: the skills to check; default all)"),
                )
                .arg(
                    Arg::new("dir")
                        .long("dir")
                        .value_name("DIR")
                        .help("Where skills go (default: skills)"),
                )
                .arg(
                    Arg::new("check")
                        .long("check")
                        .action(ArgAction::SetTrue)
                        .help("Ask each skill's server for its tools and list the skills that are stale (exit 1 if any)"),
                )
                .arg(
                    Arg::new("cached")
                        .long("cached")
                        .action(ArgAction::SetTrue)
                        .requires("check")
                        .help("With --check: compare against the tools cache instead of asking the servers"),
                ),
        )
        .subcommand(
            Command::new("review")
                .about("What changed in a server's tools since you first used them; --accept takes the new definitions")
                .arg(Arg::new("server").value_name("SERVER").help("A configured name or a URL (every server with changes when left out)"))
                .arg(
                    Arg::new("cmd")
                        .long("cmd")
                        .value_name("COMMAND")
                        .conflicts_with("server")
                        .help("An ad-hoc stdio server, as ferry --cmd 'COMMAND ARGS' names it"),
                )
                .arg(
                    Arg::new("accept")
                        .long("accept")
                        .value_name("TOOL")
                        .num_args(0..)
                        .help("Take the listed definitions as the pins: of these tools, or of all"),
                ),
        )
        .subcommand(
            Command::new("auth")
                .about("Sign in to a server reached by URL (OAuth); --status, --logout")
                .arg(Arg::new("server").value_name("SERVER").help("A configured name or a URL"))
                .arg(
                    Arg::new("paste")
                        .long("paste")
                        .action(ArgAction::SetTrue)
                        .help("For a remote shell: paste back the address the browser ends on"),
                )
                .arg(
                    Arg::new("status")
                        .long("status")
                        .action(ArgAction::SetTrue)
                        .conflicts_with_all(["paste", "logout"])
                        .help("Each server's sign-in (never its token)"),
                )
                .arg(
                    Arg::new("logout")
                        .long("logout")
                        .action(ArgAction::SetTrue)
                        .help("Forget the server's sign-in"),
                ),
        )
        .subcommand(
            Command::new("trust")
                .about("Allow this repository's project servers (.mcp.json...) to start")
                .arg(
                    Arg::new("list")
                        .long("list")
                        .action(ArgAction::SetTrue)
                        .conflicts_with("revoke")
                        .help("List the trusted project files"),
                )
                .arg(
                    Arg::new("revoke")
                        .long("revoke")
                        .action(ArgAction::SetTrue)
                        .help("Withdraw trust from this directory's project files (or FILE)"),
                )
                .arg(Arg::new("file").value_name("FILE").help("One project file instead of all of this directory's")),
        )
        .subcommand(
            Command::new("demo")
                .about("A tour on a server built into ferry; `ferry demo TOOL ...` uses that server")
                .arg(
                    Arg::new("words")
                        .num_args(0..)
                        .trailing_var_arg(true)
                        .allow_hyphen_values(true)
                        .value_name("ARGS")
                        .help("Nothing for the tour; --tools for the demo server's tools; TOOL [ARGS] to call one"),
                ),
        )
        .subcommand(
            Command::new("completions")
                .about("Print a shell completion script (server and tool names included)")
                .arg(
                    Arg::new("shell")
                        .value_parser(["bash", "zsh", "fish"])
                        .value_name("SHELL")
                        .help("bash, zsh or fish"),
                ),
        )
        .subcommand(Command::new("list").about("The configured servers (as plain `ferry`)"))
        .subcommand(
            Command::new("config")
                .about("Where servers are configured: your file, and the project files here with their trust"),
        )
        .subcommand(Command::new("version").about("Print ferry's version (as --version)"))
        .subcommand(
            Command::new("__complete")
                .hide(true)
                .arg(Arg::new("what").required(true))
                .arg(Arg::new("server"))
                .arg(Arg::new("tool")),
        )
}

/// The binary's whole options table: [`command`] with serve's, `ask`'s and the daemon's.
pub fn table() -> Command {
    command()
        .subcommand(crate::serve::command())
        .subcommand(crate::serve::ask::command())
        .subcommand(crate::daemon::command())
}

/// Runs a command this module does not know (`serve`, `daemon`), given its matches and the
/// global options; `None` when it does not know it either.
pub type Other<'a> = &'a dyn Fn(&str, &ArgMatches, &Globals) -> Option<Result<Outcome>>;

/// Runs ferry with the process's arguments and returns the exit code. `table` builds the
/// whole options table ([`command`] with the binary's other commands added); `other` runs
/// those.
pub fn main(
    args: impl IntoIterator<Item = OsString>,
    table: impl Fn() -> Command,
    other: Other,
) -> i32 {
    let args: Vec<OsString> = args.into_iter().collect();
    let result = match fast_path(&args, &table) {
        Some(result) => result,
        None => run(args, table(), other),
    };
    if let Err(error) = &result {
        report(error);
    }
    exit_code(&result)
}

/// A `ferry <server> ...` command: the server as typed, the words after it, and ferry's own
/// options before it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerCommand {
    pub server: ServerWord,
    pub words: Vec<String>,
    pub globals: Globals,
    pub verbose: bool,
}

/// How a command names its server.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerWord {
    /// A configured name, or a URL.
    Named(String),
    /// `--cmd 'COMMAND ARGS'`.
    AdHoc(String),
}

/// The two shapes agents type most, read without the options table: `ferry <server> ...`
/// (a word that is none of ferry's commands names a server whatever the table says) and
/// `ferry --cmd 'COMMAND' TOOL ...`.
fn quick_server_command(args: &[String]) -> Option<ServerCommand> {
    let first = args.first()?;
    let command = |server, words: &[String]| ServerCommand {
        server,
        words: words.to_vec(),
        globals: Globals::default(),
        verbose: false,
    };
    if first == "--cmd" && args.len() >= 2 {
        if args[1].starts_with('-') {
            return None;
        }
        return Some(command(ServerWord::AdHoc(args[1].clone()), &args[2..]));
    }
    let is_command = crate::client::config::RESERVED_NAMES.contains(&first.as_str());
    if first.starts_with('-') || is_command || first.is_empty() {
        return None;
    }
    Some(command(ServerWord::Named(first.clone()), &args[1..]))
}

/// The server command in the words after `ferry`, if they are one (the daemon reads handed-
/// over commands so): the quick shapes, else through the options table.
pub fn parse_server_command(args: &[String]) -> Option<ServerCommand> {
    if let Some(command) = quick_server_command(args) {
        return Some(command);
    }
    let table = command();
    let matches = table
        .clone()
        .try_get_matches_from(std::iter::once("ferry").chain(args.iter().map(String::as_str)))
        .ok()?;
    let globals = globals_of(&matches).ok()?;
    // The daemon's table lacks the binary's other commands (serve, daemon): no reserved word
    // is taken for a server here.
    server_command_of(&matches, globals, &table)
        .ok()?
        .filter(|command| match &command.server {
            ServerWord::Named(name) => {
                !crate::client::config::RESERVED_NAMES.contains(&name.as_str())
            }
            ServerWord::AdHoc(_) => true,
        })
}

/// The two commands an agent runs most, without building the options table: `ferry
/// --version`, and a server command, which goes to the daemon first when one runs.
fn fast_path(args: &[OsString], table: &dyn Fn() -> Command) -> Option<Result<Outcome>> {
    let first = args.get(1)?.to_str()?;
    if args.len() == 2 && (first == "--version" || first == "-V") {
        return Some(
            emit(&format!("ferry {}\n", env!("CARGO_PKG_VERSION"))).map(|_| Outcome::Success),
        );
    }
    let words = args[1..]
        .iter()
        .map(|a| a.to_str().map(str::to_string))
        .collect::<Option<Vec<String>>>()?;
    let command = quick_server_command(&words)?;
    diagnostics(false);
    // A running daemon does the whole command: no config, cache or schema read here.
    let maybe_warm = !crate::daemon::client::disabled_by_env() && !options::asks_cold(&words);
    if maybe_warm {
        if let Some(run) = handover::handover(args, false) {
            if let Handed::Done(result) = crate::daemon::client::hand_over(
                run,
                false,
                handover::answer_question,
                status_line::write,
            ) {
                return Some(result);
            }
        }
    }
    Some(run_server_command(command, args, table))
}

/// Runs a server command in this process (handing it to the daemon where it needs a server
/// and may). `table` is asked only when no server has the name, for the command it may be a
/// typo of.
fn run_server_command(
    command: ServerCommand,
    args: &[OsString],
    table: &dyn Fn() -> Command,
) -> Result<Outcome> {
    let spec = match &command.server {
        ServerWord::AdHoc(word) => ServerSpec::ad_hoc(word)?,
        ServerWord::Named(word) if word.contains("://") => ServerSpec::ad_hoc(word)?,
        ServerWord::Named(word) => {
            let registry = config::load_registry()?;
            match registry.get(word) {
                Some(spec) => spec.clone(),
                None => return Err(unknown_server(word, &registry, table)),
            }
        }
    };
    // A named server's config was read (and its warnings printed) here.
    let warned = matches!(&command.server, ServerWord::Named(word) if !word.contains("://"));
    let handover = || handover::handover(args, warned);
    call::run_server(spec, &command.words, command.globals, Some(&handover))
}

/// The server command clap found: `--cmd`, or a word that is not one of the table's
/// commands; `None` for ferry's own commands.
fn server_command_of(
    matches: &ArgMatches,
    globals: Globals,
    table: &Command,
) -> Result<Option<ServerCommand>> {
    let verbose = matches.get_flag("verbose");
    if let Some(mut words) = matches
        .get_many::<String>("cmd")
        .map(|w| w.cloned().collect::<Vec<_>>())
    {
        if let Some((name, _)) = matches.subcommand() {
            return Err(Error::usage(format!(
                "--cmd takes a server's command, not `ferry {name}`"
            ))
            .with_hint("put ferry's own commands first: ferry --cmd 'COMMAND' TOOL ..."));
        }
        let server = ServerWord::AdHoc(words.remove(0));
        return Ok(Some(ServerCommand {
            server,
            words,
            globals,
            verbose,
        }));
    }
    match matches.subcommand() {
        Some((name, sub)) if table.find_subcommand(name).is_none() => Ok(Some(ServerCommand {
            server: ServerWord::Named(name.to_string()),
            words: strings(sub, ""),
            globals,
            verbose,
        })),
        _ => Ok(None),
    }
}

/// ferry's own options before a server or command.
fn globals_of(matches: &ArgMatches) -> Result<Globals> {
    Ok(Globals {
        refresh: matches.get_flag("refresh"),
        json: matches.get_flag("json"),
        no_daemon: matches.get_flag("no-daemon"),
        detach: false,
        help: false,
        max_tokens: matches
            .get_one::<String>("max-tokens")
            .map(|t| options::parse_max_tokens(t))
            .transpose()?,
        timeout: matches
            .get_one::<String>("timeout")
            .map(|t| options::parse_timeout(t))
            .transpose()?,
    })
}

/// Turns a clap error into ferry's one line and hint; help and version are printed.
fn clap_outcome(error: clap::Error) -> Result<Outcome> {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            emit(&error.to_string())?;
            return Ok(Outcome::Success);
        }
        _ => {}
    }
    let (first, suggestion) = clap_message(&error);
    let usage = match error.get(ContextKind::Usage) {
        Some(ContextValue::StyledStr(usage)) => usage.to_string(),
        _ => String::new(),
    };
    let command: String = usage
        .trim_start_matches("Usage: ")
        .split_whitespace()
        .take_while(|w| !w.starts_with(['[', '<', '-']))
        .collect::<Vec<_>>()
        .join(" ");
    let command = if command.is_empty() {
        "ferry".to_string()
    } else {
        command
    };
    let hint = match suggestion {
        Some(s) => format!("did you mean {s}? see: {command} --help"),
        // What is missing reads best beside the whole usage line.
        None if error.kind() == ErrorKind::MissingRequiredArgument => {
            let line = usage.lines().next().unwrap_or("").trim();
            format!(
                "usage: {}; see: {command} --help",
                line.trim_start_matches("Usage: ")
            )
        }
        // A count's example beside where to read more.
        None if error.kind() == ErrorKind::ValueValidation => {
            match error.get(ContextKind::InvalidArg) {
                Some(ContextValue::String(arg)) => format!(
                    "for example: {} 10",
                    arg.split_whitespace().next().unwrap_or(arg)
                ),
                _ => format!("see: {command} --help"),
            }
        }
        None => format!("see: {command} --help"),
    };
    Err(Error::usage(first).with_hint(hint))
}

/// A count given to one of ferry's own options (`--limit`, `--session`, `--turns`).
fn whole_number(text: &str) -> std::result::Result<usize, NotAWholeNumber> {
    text.parse().map_err(|_| NotAWholeNumber)
}

/// What a count must be, said in the error of a value that is not one.
#[derive(Debug, Clone)]
struct NotAWholeNumber;

impl std::fmt::Display for NotAWholeNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a whole number")
    }
}

impl std::error::Error for NotAWholeNumber {}

/// A clap error's one line, in ferry's words, and the option or command it suggests.
pub(crate) fn clap_message(error: &clap::Error) -> (String, Option<String>) {
    use clap::error::{ContextKind, ContextValue, ErrorKind};
    let invalid = match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => Some(arg.clone()),
        _ => None,
    };
    let first = match (error.kind(), invalid) {
        // `--limit -1`: a negative number reads as an option to clap; it is a value out of range.
        (ErrorKind::UnknownArgument, Some(arg)) if arg.parse::<f64>().is_ok() => {
            format!(
                "{arg} is not a value ferry takes: counts and limits are whole numbers, 1 or more"
            )
        }
        (ErrorKind::UnknownArgument, Some(arg)) if arg.starts_with('-') => {
            format!("unknown option {arg}")
        }
        // A value of the wrong type for one of ferry's own options: the option, what it must
        // be, what was given.
        (ErrorKind::ValueValidation, Some(arg)) => {
            let flag = arg.split_whitespace().next().unwrap_or(&arg).to_string();
            let what = std::error::Error::source(error)
                .map_or_else(|| "valid".to_string(), |e| e.to_string());
            match error.get(ContextKind::InvalidValue) {
                Some(ContextValue::String(value)) => {
                    format!("{flag} must be {what}, not {value:?}")
                }
                _ => format!("{flag} must be {what}"),
            }
        }
        (ErrorKind::UnknownArgument, Some(arg)) => format!("unexpected argument {arg:?}"),
        // clap's own text lists the names on the lines after its first.
        (ErrorKind::MissingRequiredArgument, _) => match error.get(ContextKind::InvalidArg) {
            Some(ContextValue::Strings(names)) if names.len() > 1 => {
                format!("missing required arguments {}", names.join(", "))
            }
            Some(ContextValue::Strings(names)) if names.len() == 1 => {
                format!("missing required argument {}", names[0])
            }
            _ => "missing a required argument".to_string(),
        },
        _ => error
            .to_string()
            .lines()
            .next()
            .unwrap_or("invalid arguments")
            .trim_start_matches("error: ")
            .to_string(),
    };
    let suggestion = match error.get(ContextKind::SuggestedArg) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(s)) => s.first().cloned(),
        _ => match error.get(ContextKind::SuggestedSubcommand) {
            Some(ContextValue::String(s)) => Some(s.clone()),
            Some(ContextValue::Strings(s)) => s.first().cloned(),
            _ => None,
        },
    };
    (first, suggestion)
}

fn run(args: Vec<OsString>, table: Command, other: Other) -> Result<Outcome> {
    let matches = match table.clone().try_get_matches_from(
        std::iter::once(OsString::from("ferry")).chain(args.iter().skip(1).cloned()),
    ) {
        Ok(matches) => matches,
        Err(error) => return clap_outcome(error),
    };
    diagnostics(matches.get_flag("verbose"));
    let globals = globals_of(&matches)?;
    if let Some(command) = server_command_of(&matches, globals.clone(), &table)? {
        return run_server_command(command, &args, &|| table.clone());
    }
    let Some((name, sub)) = matches.subcommand() else {
        refuse_globals("ferry", &globals, &[])?;
        return config::list_servers();
    };
    match name {
        "add" => {
            refuse_globals("add", &globals, &[])?;
            config::add(sub)
        }
        "remove" => {
            refuse_globals("remove", &globals, &[])?;
            config::remove(sub)
        }
        "import" => {
            refuse_globals("import", &globals, &[])?;
            config::import(sub)
        }
        "trust" => {
            refuse_globals("trust", &globals, &[])?;
            config::trust(sub)
        }
        "review" => {
            refuse_globals("review", &globals, &[])?;
            review::review(sub)
        }
        "auth" => {
            refuse_globals("auth", &globals, &[])?;
            auth::auth(sub)
        }
        "list" => {
            refuse_globals("list", &globals, &[])?;
            config::list_servers()
        }
        "config" => {
            refuse_globals("config", &globals, &[])?;
            config::show_config()
        }
        "version" => {
            refuse_globals("version", &globals, &[])?;
            emit(&format!("ferry {}\n", env!("CARGO_PKG_VERSION")))?;
            Ok(Outcome::Success)
        }
        "find" => {
            refuse_globals("find", &globals, &[])?;
            find::find(sub)
        }
        "tokens" => {
            refuse_globals("tokens", &globals, &["--refresh", "--timeout"])?;
            tokens::tokens(sub, &globals)
        }
        "skill" => {
            refuse_globals("skill", &globals, &["--refresh", "--timeout"])?;
            skill::skill(sub, &globals)
        }
        "demo" => demo::demo(&strings(sub, "words"), globals),
        "completions" => {
            refuse_globals("completions", &globals, &[])?;
            completions::completions(sub, table)
        }
        "__complete" => completions::complete(sub),
        name if table.find_subcommand(name).is_some() => {
            refuse_globals(name, &globals, &[])?;
            other(name, sub, &globals).unwrap_or_else(|| {
                Err(
                    Error::usage(format!("`ferry {name}` is not part of this build"))
                        .with_hint("see: ferry --help"),
                )
            })
        }
        // Every other word is a server: server_command_of took it.
        server => Err(
            Error::usage(format!("`ferry {server}` is not part of this build"))
                .with_hint("see: ferry --help"),
        ),
    }
}

/// The error for a name that is neither a server nor a command, with the nearest of each.
pub(crate) fn unknown_server(
    word: &str,
    registry: &crate::client::config::Registry,
    table: &dyn Fn() -> Command,
) -> Error {
    config::unknown_server(word, registry, suggested_command(table(), word).as_deref())
}

/// The command of the options table closest to `word`, by clap's own "did you mean" (which
/// external subcommands, taken as server names, otherwise switch off: both settings that
/// allow them are undone here).
fn suggested_command(table: Command, word: &str) -> Option<String> {
    use clap::error::{ContextKind, ContextValue};
    let error = table
        .allow_external_subcommands(false)
        .external_subcommand_value_parser(clap::builder::Resettable::Reset)
        .try_get_matches_from(["ferry", word])
        .err()?;
    match error.get(ContextKind::SuggestedSubcommand) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(s)) => s.first().cloned(),
        _ => None,
    }
}

/// The values of a multi-valued argument (or of an external subcommand's words).
pub(crate) fn strings(matches: &ArgMatches, id: &str) -> Vec<String> {
    matches
        .get_many::<String>(id)
        .map(|v| v.cloned().collect())
        .unwrap_or_default()
}

/// Refuses global options that a command would ignore: silence would mislead.
fn refuse_globals(command: &str, globals: &Globals, used: &[&str]) -> Result<()> {
    let given = [
        ("--refresh", globals.refresh),
        ("--json", globals.json),
        ("--max-tokens", globals.max_tokens.is_some()),
        ("--timeout", globals.timeout.is_some()),
    ];
    for (flag, set) in given {
        if set && !used.contains(&flag) {
            let shown = if command == "ferry" {
                "`ferry` (the server list)".to_string()
            } else {
                format!("`ferry {command}`")
            };
            let hint = match (command, flag) {
                ("find", "--refresh") => {
                    "find searches the cache; refresh a server's with `ferry --refresh NAME`"
                        .to_string()
                }
                ("tokens", "--json") => {
                    "write it after the command: ferry tokens --json".to_string()
                }
                _ => format!(
                    "see: ferry {} --help",
                    if command == "ferry" { "" } else { command }
                )
                .replace("  ", " "),
            };
            return Err(Error::usage(format!("{flag} does not apply to {shown}"))
                .with_hint(hint.trim_end().to_string()));
        }
    }
    Ok(())
}

/// `--verbose` or `FERRY_LOG=debug|trace|info`: diagnostics on stderr. Nothing is installed
/// otherwise, so the call path pays one relaxed load per would-be message.
fn diagnostics(verbose: bool) {
    if let Some(level) = diagnostics_level(verbose, std::env::var("FERRY_LOG").ok()) {
        let _ = tracing_subscriber::fmt()
            .with_max_level(level)
            .with_writer(std::io::stderr)
            .with_ansi(false)
            .with_target(false)
            .with_timer(tracing_subscriber::fmt::time::uptime())
            .try_init();
    }
}

/// The diagnostics asked for by `--verbose` and `FERRY_LOG` (the daemon asks with its
/// caller's).
pub fn diagnostics_level(verbose: bool, ferry_log: Option<String>) -> Option<tracing::Level> {
    match ferry_log.as_deref() {
        Some("trace") => Some(tracing::Level::TRACE),
        Some("debug") => Some(tracing::Level::DEBUG),
        Some("info") => Some(tracing::Level::INFO),
        _ if verbose => Some(tracing::Level::DEBUG),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_table_is_consistent() {
        command().debug_assert();
    }
}
