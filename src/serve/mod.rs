//! `ferry serve`: command-line tools as an MCP server (DESIGN.md section 4), over stdio or
//! Streamable HTTP, in both protocol eras.
//!
//! Providers say what is served (`provider`): a manifest or quick mode
//! (`manifest_provider`, running commands through `exec`). `server` speaks the protocol
//! whatever the transport; `stdio` and `http` carry it. `ferry serve init CLI` drafts a
//! manifest from the CLI's `--help`. This module and the CLI never import each other: the
//! binary composes them.

pub mod exec;
pub mod http;
pub mod manifest_provider;
pub mod provider;
pub mod proxy;
pub mod reaper;
pub mod server;
pub mod stdio;

use crate::manifest::{self, quick};
use crate::{Error, Outcome, Result};
use clap::{Arg, ArgAction, ArgMatches, Command};
use manifest_provider::ManifestProvider;
use std::net::SocketAddr;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The manifest `ferry serve --demo` serves (what `ferry demo` tours).
pub const DEMO_MANIFEST: &str = include_str!("../../assets/demo.toml");

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
                .conflicts_with_all(["cli", "demo", "servers"])
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
                .help("A file holding the bearer token HTTP clients must send (or set FERRY_SERVE_TOKEN)"),
        )
        .arg(
            Arg::new("servers")
                .long("servers")
                .value_name("NAME")
                .num_args(0..)
                .conflicts_with_all(["cli", "demo"])
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
        .arg(Arg::new("demo").long("demo").action(ArgAction::SetTrue).hide(true))
        .subcommand(
            Command::new("init")
                .about("Draft a manifest from a CLI's --help, for a person to review")
                .arg(Arg::new("cli").required(true).value_name("CLI")),
        )
}

/// Runs `ferry serve`.
pub fn main(matches: &ArgMatches) -> Result<Outcome> {
    if let Some(("init", init)) = matches.subcommand() {
        let cli = init.get_one::<String>("cli").cloned().unwrap_or_default();
        return draft(&cli);
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
            for warning in &registry.warnings {
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
            let concurrency = provider.concurrency();
            (Arc::new(provider), concurrency)
        };
    reaper::start();
    let server = Arc::new(server::Server::new(provider, concurrency));
    let http = matches.get_one::<String>("http").cloned();
    // Only HTTP has a token: a stale FERRY_SERVE_TOKEN in the environment must not stop
    // stdio serving.
    let token = match &http {
        Some(_) => token(matches)?,
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::server(format!("cannot start the async runtime: {e}")))?;
    let outcome = runtime.block_on(async move {
        let serving = async {
            match http {
                None => {
                    stdio::serve(server).await;
                    Ok(())
                }
                Some(addr) => serve_http(server, &addr, token).await,
            }
        };
        tokio::select! {
            outcome = serving => outcome,
            _ = crate::signals::interrupted() => Ok(()),
        }
    });
    runtime.shutdown_timeout(Duration::from_millis(500));
    outcome.map(|_| Outcome::Success)
}

/// The token HTTP clients must send, if any.
fn token(matches: &ArgMatches) -> Result<Option<String>> {
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
        return Ok(Some(token));
    }
    match std::env::var("FERRY_SERVE_TOKEN").map(|t| t.trim().to_string()) {
        Ok(token) if token.len() >= 16 => Ok(Some(token)),
        Ok(_) => Err(
            Error::usage("FERRY_SERVE_TOKEN is shorter than 16 characters").with_hint(
                "use a long random token, e.g. export FERRY_SERVE_TOKEN=$(openssl rand -hex 32)",
            ),
        ),
        Err(_) => Ok(None),
    }
}

async fn serve_http(server: Arc<server::Server>, addr: &str, token: Option<String>) -> Result<()> {
    let addr: SocketAddr = addr.parse().map_err(|_| {
        Error::usage(format!(
            "--http expects HOST:PORT such as 127.0.0.1:8765, not {addr:?}"
        ))
        .with_hint("ferry serve --http 127.0.0.1:8765")
    })?;
    if !addr.ip().is_loopback() && token.is_none() {
        return Err(Error::usage(format!(
            "serving on {addr}, beyond this machine, needs a bearer token"
        ))
        .with_hint("give --token-file FILE (or FERRY_SERVE_TOKEN), or bind 127.0.0.1"));
    }
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(|e| {
        Error::usage(format!("cannot listen on {addr}: {e}"))
            .with_hint("pick another port, or stop what uses it")
    })?;
    let bound = listener.local_addr().unwrap_or(addr);
    // One line on stderr: where to connect (a port of 0 picks a free one).
    eprintln!("ferry serve: http://{bound}/mcp");
    http::serve(server, listener, http::Guard { addr: bound, token }).await;
    Ok(())
}

/// The provider the options describe.
fn provider(matches: &ArgMatches) -> Result<ManifestProvider> {
    let cwd = std::env::current_dir().map_err(|e| {
        Error::usage(format!("cannot read the current directory: {e}"))
            .with_hint("cd into a directory that exists")
    })?;
    if matches.get_flag("demo") {
        let manifest = manifest::parse(DEMO_MANIFEST, &cwd.join("demo.toml"))
            .map_err(manifest::ManifestError::into_error)?;
        return ManifestProvider::new(manifest);
    }
    if let Some(file) = matches.get_one::<String>("manifest") {
        let manifest =
            manifest::load(Path::new(file)).map_err(manifest::ManifestError::into_error)?;
        return ManifestProvider::new(manifest);
    }
    let strings = |id: &str| -> Vec<String> {
        matches
            .get_many::<String>(id)
            .map(|v| v.cloned().collect())
            .unwrap_or_default()
    };
    let clis = strings("cli");
    if clis.is_empty() {
        return Err(Error::usage("ferry serve needs --manifest FILE or --cli NAME")
            .with_hint("ferry serve --manifest tools.toml  or  ferry serve --cli git; draft a manifest with ferry serve init git"));
    }
    let served = quick::resolve(&clis, &strings("allow"))?;
    ManifestProvider::quick(&served, std::fs::canonicalize(&cwd).unwrap_or(cwd))
}

/// `ferry serve init CLI`: a draft manifest on stdout, checked to load.
fn draft(cli: &str) -> Result<Outcome> {
    let program = which::which(cli).map_err(|_| {
        Error::usage(format!("command {cli:?} not found"))
            .with_hint("install it, or give its full path")
    })?;
    let program_text = program.display().to_string();
    let help = manifest::help::run(&program_text, &["--help"]);
    if help.trim().is_empty() {
        return Err(Error::usage(format!("{cli} --help printed nothing"))
            .with_hint("write the manifest by hand; see the README's manifest example"));
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
