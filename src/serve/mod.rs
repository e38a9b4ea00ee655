//! `ferry serve`: command-line tools as an MCP server (docs/manifest.md), over stdio or
//! Streamable HTTP, in both protocol eras.
//!
//! Providers say what is served (`provider`): a manifest or quick mode (`manifest_provider`,
//! running each command through `exec`, inside the kernel `sandbox`, with `reaper` making sure
//! nothing it starts outlives it), or configured MCP servers behind three lazy tools (`proxy`).
//! `server` speaks the protocol whatever the transport, both eras; `stdio` and `http` carry it
//! (`metrics` adds readiness, Prometheus metrics and trace context to HTTP). A call may talk
//! back to its client (`ask`: `ferry ask` and a tool's `confirm`; `rounds`: the 2026-07-28
//! era's multi round-trip requests), run long as a task (`tasks`), and waits for a fair share
//! of the concurrency slots (`slots`). `registry` writes the MCP Registry's `server.json`.
//! `ferry serve init CLI` drafts a manifest from the CLI's `--help` (`manifest::draft`). The
//! binary composes this module with the CLI.

pub mod ask;
pub mod exec;
pub mod http;
pub mod manifest_provider;
pub mod metrics;
pub mod provider;
pub mod proxy;
pub mod reaper;
pub mod registry;
pub mod rounds;
pub mod sandbox;
pub mod server;
pub mod slots;
pub mod stdio;
pub mod tasks;

use crate::manifest::{self, quick};
use crate::{Error, Outcome, Result};
use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};
use manifest_provider::{Confinement, ManifestProvider};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The manifest `ferry serve --demo` serves (what `ferry demo` tours).
pub const DEMO_MANIFEST: &str = include_str!("../../assets/demo.toml");

/// The options that say what `ferry serve` serves; one at most is given.
pub const SERVE_MODES: [&str; 4] = ["manifest", "cli", "servers", "demo"];

/// `ferry serve`'s options, for the binary's one options table.
pub fn command() -> Command {
    Command::new("serve")
        .about("Serve command-line tools as an MCP server (stdio, or Streamable HTTP with --http)")
        .long_about("Serve command-line tools as an MCP server: described by a manifest (--manifest tools.toml), or one tool per CLI in quick mode (--cli git --cli rg), over stdio (what a host's config launches) or Streamable HTTP at http://HOST:PORT/mcp (--http). Both protocol eras are answered on one endpoint.")
        .arg(
            Arg::new("manifest")
                .long("manifest")
                .short('m')
                .value_name("FILE")
                .help("The TOML manifest of tools, resources and prompts to serve"),
        )
        .arg(
            Arg::new("cli")
                .long("cli")
                .value_name("NAME")
                .action(ArgAction::Append)
                .help("Quick mode: serve this CLI as one tool taking its arguments (repeatable; trusted local use)"),
        )
        .arg(
            Arg::new("allow")
                .long("allow")
                .value_name("CLI:SUB,SUB")
                .action(ArgAction::Append)
                .requires("cli")
                .help("Quick mode: limit a CLI to these subcommands (git:log,status,diff)"),
        )
        .arg(
            Arg::new("http")
                .long("http")
                .value_name("HOST:PORT")
                .help("Serve Streamable HTTP at http://HOST:PORT/mcp instead of stdio (loopback unless a token is set)"),
        )
        .arg(
            Arg::new("token-file")
                .long("token-file")
                .value_name("FILE")
                .requires("http")
                .conflicts_with("no-token")
                .help("A file holding the bearer token HTTP clients must send (or set FERRY_SERVE_TOKEN; default: a new random token, printed at start)"),
        )
        .arg(
            Arg::new("no-token")
                .long("no-token")
                .action(ArgAction::SetTrue)
                .requires("http")
                .help("Serve HTTP without a token (loopback only; every local account can then call the tools)"),
        )
        .arg(
            Arg::new("allow-origin")
                .long("allow-origin")
                .value_name("URL")
                .action(ArgAction::Append)
                .requires("http")
                .help("Admit this browser origin (https://app.example.com), CORS preflight included (repeatable)"),
        )
        .arg(
            Arg::new("public-url")
                .long("public-url")
                .value_name("URL")
                .action(ArgAction::Append)
                .requires("http")
                .help("A URL clients reach this server by, through a balancer or proxy (https://mcp.example.com/mcp): its host is accepted in Host, its origin in Origin (repeatable)"),
        )
        .arg(
            Arg::new("drain-timeout")
                .long("drain-timeout")
                .value_name("SECONDS")
                .requires("http")
                .help("On SIGTERM or SIGINT, refuse new requests and let those running finish for this long, then stop them (default 30)"),
        )
        .arg(
            Arg::new("state-key-file")
                .long("state-key-file")
                .value_name("FILE")
                .requires("http")
                .help("A file holding the key that signs request state, shared by the instances behind one balancer so each accepts the others' (32 characters or more)"),
        )
        .arg(
            Arg::new("instance")
                .long("instance")
                .value_name("NAME")
                .requires("http")
                .help("This instance's name behind a balancer: task ids start with it, so tasks/* requests can be routed by their Mcp-Name header (default: random)"),
        )
        .arg(
            Arg::new("network")
                .long("network")
                .action(ArgAction::SetTrue)
                .requires("cli")
                .help("Quick mode: let the CLIs reach the network (the sandbox refuses it otherwise)"),
        )
        .arg(
            Arg::new("unconfined")
                .long("unconfined")
                .action(ArgAction::SetTrue)
                .conflicts_with("servers")
                .help("Run commands without the kernel sandbox (the option tables and path checks alone)"),
        )
        .arg(
            Arg::new("check-sandbox")
                .long("check-sandbox")
                .action(ArgAction::SetTrue)
                .conflicts_with_all(["servers", "http"])
                .help("Print what each tool may read, write, run and reach, and what this kernel enforces, then exit"),
        )
        .arg(
            Arg::new("servers")
                .long("servers")
                .value_name("NAME")
                .num_args(0..)
                .help("Serve the configured MCP servers (all, or these) behind three tools: find, describe, call"),
        )
        .arg(
            Arg::new("expose")
                .long("expose")
                .value_name("WHAT")
                .requires("servers")
                .value_parser(["all"])
                .help("With --servers: list every tool as server__tool instead (for hosts that defer schemas)"),
        )
        .arg(
            Arg::new("server-json")
                .long("server-json")
                .action(ArgAction::SetTrue)
                .requires("manifest")
                .conflicts_with_all(["http", "check-sandbox"])
                .help("Print the MCP Registry server.json that runs this manifest from ferry's npm, PyPI and OCI packages, then exit"),
        )
        .arg(
            Arg::new("registry-name")
                .long("registry-name")
                .value_name("NAMESPACE/NAME")
                .requires("server-json")
                .help("With --server-json: the server's Registry name (io.github.OWNER/NAME; default: local.ferry/<the manifest's server name>)"),
        )
        .arg(
            Arg::new("demo")
                .long("demo")
                .action(ArgAction::SetTrue)
                .help("Serve the demo tools `ferry demo` runs (a first try, nothing to write)"),
        )
        // What is served: one of a manifest, quick mode's CLIs, the configured servers, or
        // the demo.
        .group(ArgGroup::new("mode").args(SERVE_MODES).multiple(false))
        .subcommand(
            Command::new("init")
                .about("Draft a manifest from a CLI's --help, for a person to review")
                .arg(
                    Arg::new("cli")
                        .required(true)
                        .value_name("CLI")
                        .help("The command-line tool to draft a manifest for (its --help is read)"),
                ),
        )
}

/// Runs `ferry serve`.
pub fn main(matches: &ArgMatches) -> Result<Outcome> {
    if let Some(("init", init)) = matches.subcommand() {
        let cli = init.get_one::<String>("cli").cloned().unwrap_or_default();
        return draft(&cli);
    }
    if matches.get_flag("server-json") {
        return server_json(matches);
    }
    // What serving over HTTP needs is checked first: a mistake there is a usage error before
    // anything starts.
    let http = matches.get_one::<String>("http").cloned();
    // Only HTTP has a token: a stale FERRY_SERVE_TOKEN in the environment must not stop
    // stdio serving.
    let token = match &http {
        Some(_) => token(matches)?,
        None => Token::None,
    };
    let balanced = Balanced::from(matches)?;
    // Serve's own secrets are hidden from every command, like ferry's files.
    let secrets: Vec<(&str, std::path::PathBuf)> = ["token-file", "state-key-file"]
        .iter()
        .filter_map(|id| {
            let file = matches.get_one::<String>(id)?;
            Some((*id, std::fs::canonicalize(file).ok()?))
        })
        .collect();
    sandbox::hide_serve_files(secrets.iter().map(|(_, f)| f.clone()).collect());
    for (id, file) in &secrets {
        if let Some(place) = sandbox::readable_by_commands(file) {
            crate::console::warn(&format!(
                "ferry serve: warning: --{id} {} lies in {}, which served commands may read: the sandbox hides it, but keep serve's secrets outside it (docs/deploy.md)",
                file.display(),
                place.display()
            ));
        }
    }
    let mut origins = Vec::new();
    for given in matches
        .get_many::<String>("allow-origin")
        .into_iter()
        .flatten()
    {
        origins.push(http::origin_of(given).ok_or_else(|| {
            Error::usage(format!(
                "--allow-origin expects an origin such as https://app.example.com, not {given:?}"
            ))
            .with_hint("give the scheme, host and port only, as a browser sends it in Origin")
        })?);
    }
    let (provider, concurrency): (Arc<dyn provider::Provider>, usize) =
        if matches.contains_id("servers") && matches.value_source("servers").is_some() {
            let names: Vec<String> = matches
                .get_many::<String>("servers")
                .map(|v| v.cloned().collect())
                .unwrap_or_default();
            let cwd = std::env::current_dir().map_err(|e| {
                Error::usage(format!("cannot read the current directory: {e}"))
                    .with_hint("cd into a directory that exists")
            })?;
            let registry = crate::client::config::Registry::load(&cwd)?;
            let notices = crate::client::config::first_time(&registry.notices);
            for warning in registry.warnings.iter().chain(&notices) {
                crate::console::warn(&format!("warning: {warning}"));
            }
            let servers = registry.select(&names)?;
            let expose_all = matches.get_one::<String>("expose").is_some();
            (
                Arc::new(proxy::ProxyProvider::new(servers, expose_all)?),
                32,
            )
        } else {
            let provider = provider(matches)?;
            if matches.get_flag("check-sandbox") {
                return check_sandbox(&provider);
            }
            let concurrency = provider.concurrency();
            (Arc::new(provider), concurrency)
        };
    reaper::start();
    let mut server = server::Server::new(provider, concurrency);
    if http.is_some() {
        server = server
            .instance(&balanced.instance, balanced.state_key.as_deref())
            .shared();
    }
    let server = Arc::new(server);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::server(format!("cannot start the async runtime: {e}")))?;
    let outcome = runtime.block_on(async move {
        match http {
            None => {
                // Start-up work (the proxy listing servers never listed) gives way to a
                // signal.
                tokio::select! {
                    _ = server.provider().start() => {}
                    _ = crate::signals::interrupted() => return Ok(()),
                }
                tokio::select! {
                    _ = stdio::serve(server) => Ok(()),
                    _ = crate::signals::interrupted() => Ok(()),
                }
            }
            // HTTP starts the provider once listening (/readyz says when it is done), and
            // hears the signals itself: it drains first.
            Some(addr) => serve_http(server, &addr, token, origins, balanced).await,
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(500));
    outcome.map(|_| Outcome::Success)
}

/// What serving as one of several instances behind a balancer takes.
struct Balanced {
    public: Vec<http::PublicUrl>,
    drain_timeout: Duration,
    state_key: Option<Vec<u8>>,
    instance: String,
}

/// The shortest shared state key accepted.
const MIN_STATE_KEY: usize = 32;

impl Balanced {
    fn from(matches: &ArgMatches) -> Result<Balanced> {
        let mut public = Vec::new();
        for given in matches
            .get_many::<String>("public-url")
            .into_iter()
            .flatten()
        {
            public.push(http::PublicUrl::parse(given).ok_or_else(|| {
                Error::usage(format!(
                    "--public-url expects an http(s) URL such as https://mcp.example.com/mcp, not {given:?}"
                ))
                .with_hint("give the URL clients use: scheme, host, optional port and path")
            })?);
        }
        let drain_timeout = match matches.get_one::<String>("drain-timeout") {
            None => Duration::from_secs(30),
            Some(text) => text
                .parse::<u64>()
                .ok()
                .filter(|s| *s <= 24 * 3600)
                .map(Duration::from_secs)
                .ok_or_else(|| {
                    Error::usage(format!(
                        "--drain-timeout expects whole seconds from 0 to 86400, not {text:?}"
                    ))
                    .with_hint("--drain-timeout 30")
                })?,
        };
        let state_key = match matches.get_one::<String>("state-key-file") {
            None => None,
            Some(file) => {
                let text = std::fs::read_to_string(file).map_err(|e| {
                    Error::usage(format!("cannot read the state key file {file}: {e}"))
                        .with_hint("give a file that holds the key on one line")
                })?;
                let key = text.trim();
                if key.len() < MIN_STATE_KEY {
                    return Err(Error::usage(format!(
                        "the state key in {file} is shorter than {MIN_STATE_KEY} characters"
                    ))
                    .with_hint("use a long random key, e.g. `openssl rand -hex 32 > state.key`"));
                }
                Some(key.as_bytes().to_vec())
            }
        };
        let instance = match matches.get_one::<String>("instance") {
            Some(name) => {
                let valid = !name.is_empty()
                    && name.len() <= 32
                    && name
                        .bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
                if !valid {
                    return Err(Error::usage(format!(
                        "--instance expects 1 to 32 letters, digits, '_' or '-', not {name:?}"
                    ))
                    .with_hint("--instance a1"));
                }
                name.clone()
            }
            None => {
                let mut bytes = [0u8; 4];
                ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
                    .map_err(|_| Error::server("no randomness for an instance name"))?;
                bytes.iter().map(|b| format!("{b:02x}")).collect()
            }
        };
        Ok(Balanced {
            public,
            drain_timeout,
            state_key,
            instance,
        })
    }
}

/// The token HTTP clients must send.
enum Token {
    /// `--no-token`: none (loopback only).
    None,
    /// From `--token-file` or `FERRY_SERVE_TOKEN`.
    Given(String),
    /// Made for this run, and printed at start.
    Fresh(String),
}

fn token(matches: &ArgMatches) -> Result<Token> {
    if let Some(file) = matches.get_one::<String>("token-file") {
        let text = std::fs::read_to_string(file).map_err(|e| {
            Error::usage(format!("cannot read the token file {file}: {e}"))
                .with_hint("give a file that holds the token on one line")
        })?;
        let token = text.trim().to_string();
        if token.len() < 16 {
            return Err(
                Error::usage(format!("the token in {file} is shorter than 16 characters"))
                    .with_hint("use a long random token, e.g. `openssl rand -hex 32 > token`"),
            );
        }
        return Ok(Token::Given(token));
    }
    if matches.get_flag("no-token") {
        return Ok(Token::None);
    }
    match std::env::var("FERRY_SERVE_TOKEN").map(|t| t.trim().to_string()) {
        Ok(token) if token.len() >= 16 => Ok(Token::Given(token)),
        Ok(_) => Err(
            Error::usage("FERRY_SERVE_TOKEN is shorter than 16 characters").with_hint(
                "use a long random token, e.g. export FERRY_SERVE_TOKEN=$(openssl rand -hex 32)",
            ),
        ),
        Err(_) => {
            let mut bytes = [0u8; 24];
            ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes)
                .map_err(|_| Error::server("no randomness for a token"))?;
            Ok(Token::Fresh(
                bytes.iter().map(|b| format!("{b:02x}")).collect(),
            ))
        }
    }
}

async fn serve_http(
    server: Arc<server::Server>,
    addr: &str,
    token: Token,
    origins: Vec<String>,
    balanced: Balanced,
) -> Result<()> {
    let addr: SocketAddr = addr.parse().map_err(|_| {
        Error::usage(format!(
            "--http expects HOST:PORT such as 127.0.0.1:8765, not {addr:?}"
        ))
        .with_hint("ferry serve --http 127.0.0.1:8765")
    })?;
    if !addr.ip().is_loopback() && matches!(token, Token::None) {
        return Err(Error::usage(format!(
            "serving on {addr}, beyond this machine, needs a bearer token"
        ))
        .with_hint("drop --no-token (a token is made for each run), or bind 127.0.0.1"));
    }
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        Error::usage(format!("cannot listen on {addr}: {e}"))
            .with_hint("pick another port, or stop what uses it")
    })?;
    let bound = listener.local_addr().unwrap_or(addr);
    // The first line on stderr says where to connect (a port of 0 picks a free one); then
    // how to authenticate. They are said once serving has started.
    let url = format!("http://{bound}/mcp");
    let mut announce = vec![format!("ferry serve: {url}")];
    let token = match token {
        Token::None => {
            announce.push("ferry serve: warning: no token (--no-token): every account on this machine can call these tools".into());
            None
        }
        Token::Given(token) => Some(token),
        Token::Fresh(token) => {
            announce.push(format!("ferry serve: token for this run (clients send \"Authorization: Bearer TOKEN\"): {token}"));
            let snippet = serde_json::json!({"type": "http", "url": url, "headers": {"Authorization": format!("Bearer {token}")}});
            announce.push(format!(
                "ferry serve: a host's config entry for it: {snippet}"
            ));
            Some(token)
        }
    };
    for public in &balanced.public {
        announce.push(format!("ferry serve: also answering as {}", public.origin));
    }
    let guard = http::Guard {
        addr: bound,
        token,
        origins,
        public: balanced.public,
    };
    let drain = Arc::new(http::Drain::default());
    let serving = http::serve(server.clone(), listener, guard, drain.clone());
    tokio::pin!(serving);
    // Alive (/healthz) at once; ready (/readyz, and /mcp answered) once the provider has
    // started. Start-up work (the proxy listing servers never listed) gives way to a signal.
    tokio::select! {
        _ = &mut serving => return Ok(()),
        _ = server.provider().start() => {}
        _ = crate::signals::interrupted() => return Ok(()),
    }
    metrics::set_ready();
    for line in announce {
        eprintln!("{line}");
    }
    tokio::select! {
        _ = &mut serving => return Ok(()),
        _ = crate::signals::interrupted() => {}
    }
    // Stopping: new work is refused (503, and /healthz says so) while what runs finishes, up
    // to the drain timeout; a second signal stops at once.
    drain.start();
    let limit = balanced.drain_timeout;
    eprintln!(
        "ferry serve: draining: finishing what runs (at most {}s; signal again to stop now)",
        limit.as_secs()
    );
    let running = || drain.answering() + server.tasks_running();
    let finished = async {
        loop {
            while running() > 0 {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // The last answer may still be on its way to its client: give it a moment.
            tokio::time::sleep(Duration::from_millis(100)).await;
            if running() == 0 {
                break;
            }
        }
    };
    tokio::select! {
        _ = &mut serving => {}
        _ = finished => return Ok(()),
        _ = tokio::time::sleep(limit) => {}
        _ = crate::signals::interrupted() => {}
    }
    match running() {
        0 => Ok(()),
        // What is left is stopped as a timeout stops it: dropped with the runtime, which kills
        // each command's process group.
        left => Err(Error::timeout(format!(
            "stopped {left} request(s) and task(s) still running after the drain"
        ))
        .with_hint("give them longer with --drain-timeout SECONDS")),
    }
}

/// The provider the options describe.
fn provider(matches: &ArgMatches) -> Result<ManifestProvider> {
    let cwd = std::env::current_dir().map_err(|e| {
        Error::usage(format!("cannot read the current directory: {e}"))
            .with_hint("cd into a directory that exists")
    })?;
    let kernel = sandbox::Kernel::probe();
    let confinement = if matches.get_flag("unconfined") {
        crate::console::warn("ferry serve: warning: --unconfined: commands run without the kernel sandbox; only the option tables and path checks stand between a model and this machine");
        Confinement::Unconfined
    } else {
        Confinement::Kernel
    };
    let gaps = kernel.unenforced();
    let say_gaps = || {
        if confinement != Confinement::Kernel || matches.get_flag("check-sandbox") {
            return;
        }
        if !gaps.is_empty() {
            crate::console::warn(&format!(
                "ferry serve: warning: this kernel ({}) does not enforce: {}",
                kernel.describe(),
                gaps.join("; ")
            ));
        }
        if sandbox::serving_as_root() {
            crate::console::warn("ferry serve: warning: serving as root: commands run without capabilities and may not change modes, but root's files they may read are still theirs; serve as an ordinary user");
        }
    };
    if matches.get_flag("demo") {
        let manifest = manifest::parse(DEMO_MANIFEST, &cwd.join("demo.toml"))
            .map_err(manifest::ManifestError::into_error)?;
        let provider = ManifestProvider::new(manifest, confinement)?;
        say_gaps();
        return Ok(provider);
    }
    if let Some(file) = matches.get_one::<String>("manifest") {
        let manifest =
            manifest::load(Path::new(file)).map_err(manifest::ManifestError::into_error)?;
        let provider = ManifestProvider::new(manifest, confinement)?;
        say_gaps();
        return Ok(provider);
    }
    let strings = |id: &str| -> Vec<String> {
        matches
            .get_many::<String>(id)
            .map(|v| v.cloned().collect())
            .unwrap_or_default()
    };
    let clis = strings("cli");
    if clis.is_empty() {
        return Err(Error::usage(
            "ferry serve needs what to serve: --manifest FILE, --cli NAME, --servers or --demo",
        )
        .with_hint("ferry serve --manifest tools.toml  or  ferry serve --cli git  or  ferry serve --servers  or  ferry serve --demo; draft a manifest with ferry serve init git"));
    }
    let allows = strings("allow");
    // Quick mode lets the model pick the options: without a kernel that confines files, only
    // named subcommands or an explicit --unconfined may stand in for it.
    if confinement == Confinement::Kernel && !kernel.confines_files() && allows.is_empty() {
        return Err(Error::usage(format!(
            "quick mode needs the kernel sandbox, and this kernel ({}) cannot confine files",
            kernel.describe()
        ))
        .with_hint("limit each CLI to named subcommands (--allow git:log,status), or accept the risk with --unconfined"));
    }
    let served = quick::resolve(&clis, &allows)?;
    let provider = ManifestProvider::quick(
        &served,
        std::fs::canonicalize(&cwd).unwrap_or(cwd),
        matches.get_flag("network"),
        confinement,
    )?;
    say_gaps();
    Ok(provider)
}

/// `ferry serve --check-sandbox`: each command's policy and what this kernel enforces.
fn check_sandbox(provider: &ManifestProvider) -> Result<Outcome> {
    let mut out = sandbox::render_kernel(&sandbox::Kernel::probe());
    for (name, policy) in provider.sandboxes() {
        match policy {
            Some(policy) => sandbox::render_policy(&name, &policy, &mut out),
            None => out.push_str(&format!("{name}\n  unconfined (--unconfined)\n")),
        }
    }
    crate::console::emit(&out)?;
    Ok(Outcome::Success)
}

/// `ferry serve --manifest F --server-json`: the Registry entry that runs the manifest.
fn server_json(matches: &ArgMatches) -> Result<Outcome> {
    let file = matches
        .get_one::<String>("manifest")
        .cloned()
        .unwrap_or_default();
    let manifest = manifest::load(Path::new(&file)).map_err(manifest::ManifestError::into_error)?;
    let name = matches.get_one::<String>("registry-name");
    let entry = registry::server_json(&manifest, name.map(String::as_str))?;
    if name.is_none() {
        crate::console::warn("ferry serve: note: named for local use; to publish, name it with --registry-name io.github.OWNER/NAME (a namespace you can prove)");
    }
    let text = serde_json::to_string_pretty(&entry)
        .map_err(|e| Error::server(format!("cannot write server.json: {e}")))?;
    crate::console::emit(&format!("{text}\n"))?;
    Ok(Outcome::Success)
}

/// `ferry serve init CLI`: a draft manifest on stdout, checked to load.
fn draft(cli: &str) -> Result<Outcome> {
    let program = which::which(cli).map_err(|_| {
        Error::usage(format!("command {cli:?} not found"))
            .with_hint("install it, or give its full path")
    })?;
    let program_text = program.display().to_string();
    let help = manifest::help::top(&program_text);
    if help.trim().is_empty() {
        return Err(Error::usage(format!("{cli} --help printed nothing"))
            .with_hint("write the manifest by hand; see the README's manifest example"));
    }
    if manifest::help::refused(&help) {
        let said = help.lines().next().unwrap_or_default().trim();
        return Err(
            Error::usage(format!("{cli} has no --help (it answered: {said})"))
                .with_hint("write the manifest by hand; see the README's manifest example"),
        );
    }
    if manifest::help::is_binary(&help) {
        return Err(
            Error::usage(format!("{cli} --help printed binary data, not a help text"))
                .with_hint("write the manifest by hand; see the README's manifest example"),
        );
    }
    let helps = manifest::help::all(&program_text, &help);
    // The command as the user gave it: a name found on PATH, or a path.
    let text = manifest::draft::draft(cli, &helps);
    // A draft that does not load is a bug: say so rather than print it as good.
    let check = std::env::temp_dir().join(format!("ferry-draft-{}.toml", std::process::id()));
    if let Err(e) = manifest::parse(&text, &check) {
        return Err(Error::server(format!(
            "the draft for {cli} does not load (line {}: {}); this is a ferry bug",
            e.line, e.reason
        ))
        .with_hint("report it with the output of `CLI --help`"));
    }
    crate::console::emit(&text)?;
    Ok(Outcome::Success)
}
