//! A `ferry <server> ...` command as the daemon runs it for the ferry that handed it over:
//! the same parsing, cache, flags and rendering as a cold run, with the caller's directory,
//! environment and terminals, and the daemon's warm session. The caller only relays the text
//! and the exit status, so warm output is the cold output, byte for byte.

use super::call::{self, Ctx};
use super::terminal::{self, Console};
use crate::client::config::{Environment, Registry, ServerSpec};
use crate::client::handler::{
    not_supported, roots_of, sampling_refused, ClientHandler, ClientRequestError,
};
use crate::client::pool::Pool;
use crate::daemon::server::{CallerLink, Handled};
use crate::daemon::wire::{Answer, Question, Run, Terminal, ToCaller};
use crate::protocol::BoxFuture;
use crate::render::text::escape_line;
use crate::{Error, Result};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Runs a handed-over command in the daemon (what the binary gives `daemon::server::run`);
/// `table` is the binary's whole options table, for the "did you mean" of an unknown name.
pub fn run(
    run: Run,
    link: Arc<CallerLink>,
    pool: Arc<Pool>,
    table: fn() -> clap::Command,
) -> BoxFuture<'static, Handled> {
    Box::pin(async move {
        let Some(command) = super::parse_server_command(&run.args) else {
            return Handled::Cold("not a server command".into());
        };
        let diagnostics = super::diagnostics_level(
            command.verbose,
            run.env.var("FERRY_LOG").map(str::to_string),
        );
        let console = Arc::new(Remote::new(run.env, run.terminal, link.clone()));
        let ctx = Ctx {
            console: console.clone(),
            pool: Some(pool),
        };
        let work = run_command(command, ctx, table, run.warned);
        match diagnostics {
            // This command's diagnostics go to its caller's stderr, as a cold run's would.
            Some(level) => {
                let subscriber = tracing_subscriber::fmt()
                    .with_max_level(level)
                    .with_writer(move || LinkWriter(link.clone()))
                    .with_ansi(false)
                    .with_target(false)
                    .with_timer(tracing_subscriber::fmt::time::uptime())
                    .finish();
                tracing::instrument::WithSubscriber::with_subscriber(work, subscriber).await
            }
            None => work.await,
        }
    })
}

async fn run_command(
    command: super::ServerCommand,
    ctx: Ctx,
    table: fn() -> clap::Command,
    warned: bool,
) -> Handled {
    let console = ctx.console.clone();
    // The registry's warnings wait until the command is known to run here: a cold run in
    // the caller would print them again.
    let Found { spec, warnings } = match find_server(&command.server, console.environment(), table)
    {
        Ok(found) => found,
        Err(error) => return Handled::Ran(Err(error)),
    };
    let warn_all = || {
        for warning in warnings.iter().filter(|_| !warned) {
            console.warn(&format!("warning: {warning}"));
        }
    };
    let spec = match spec {
        Ok(spec) => spec,
        Err(error) => {
            warn_all();
            return Handled::Ran(Err(error));
        }
    };
    let mut globals = command.globals;
    let action = match call::parse_server_words(&spec, &command.words, &mut globals) {
        Ok(action) => action,
        Err(error) => {
            warn_all();
            return Handled::Ran(Err(error));
        }
    };
    if !call::warm_allowed(&spec, &globals, &ctx) {
        return Handled::Cold("this server is called cold".into());
    }
    warn_all();
    Handled::Ran(call::run_server_in(spec, action, globals, &ctx).await)
}

/// A server as a command names it, and the registry's warnings.
struct Found {
    /// The server, or why the name names none.
    spec: Result<ServerSpec>,
    warnings: Vec<String>,
}

/// The server a command names, found as the caller would find it (its directory's project
/// files, its variables); `Err` when the registry cannot be read at all. `table` names the
/// command an unknown name may be a typo of.
fn find_server(
    word: &super::ServerWord,
    env: &Environment,
    table: fn() -> clap::Command,
) -> Result<Found> {
    let ad_hoc = |word: &str| Found {
        spec: ServerSpec::ad_hoc(word),
        warnings: Vec::new(),
    };
    let name = match word {
        super::ServerWord::AdHoc(command) => return Ok(ad_hoc(command)),
        super::ServerWord::Named(url) if url.contains("://") => return Ok(ad_hoc(url)),
        super::ServerWord::Named(name) => name,
    };
    let cwd = env.cwd.clone().ok_or_else(|| {
        Error::usage("cannot read the current directory")
            .with_hint("cd into a directory that exists")
    })?;
    let registry = Registry::load(&cwd)?;
    let spec = match registry.get(name) {
        Some(spec) => Ok(spec.clone()),
        None => Err(super::unknown_server(name, &registry, &table)),
    };
    let mut warnings = registry.warnings;
    warnings.extend(crate::client::config::first_time(&registry.notices));
    Ok(Found { spec, warnings })
}

/// Diagnostics written to the caller's stderr.
struct LinkWriter(Arc<CallerLink>);

impl std::io::Write for LinkWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0
            .send(ToCaller::Err(String::from_utf8_lossy(bytes).into_owned()));
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The console of the ferry that handed a command over: its stdout and stderr through the
/// link, its directory, environment and terminals.
struct Remote {
    link: Arc<CallerLink>,
    environment: Environment,
    terminal: Terminal,
    handler: Arc<RemoteHandler>,
}

impl Remote {
    fn new(environment: Environment, terminal: Terminal, link: Arc<CallerLink>) -> Remote {
        Remote {
            handler: Arc::new(RemoteHandler {
                link: link.clone(),
                cwd: environment.cwd.clone(),
                progress: terminal.stderr,
                progress_shown: AtomicBool::new(false),
                sampling_noted: AtomicBool::new(false),
            }),
            link,
            environment,
            terminal,
        }
    }
}

impl Console for Remote {
    fn emit(&self, text: &str) -> Result<()> {
        let mut text = text.to_string();
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        self.link.send(ToCaller::Out(text));
        Ok(())
    }

    fn warn(&self, line: &str) {
        self.link
            .send(ToCaller::Err(format!("{}\n", escape_line(line))));
    }

    fn status(&self, text: &str) {
        self.link.send(ToCaller::Err(text.to_string()));
    }

    fn stderr_is_terminal(&self) -> bool {
        self.terminal.stderr
    }

    fn handler(&self) -> Arc<dyn ClientHandler> {
        self.handler.clone()
    }

    fn finish_progress(&self) {
        if self.handler.progress_shown.swap(false, Ordering::SeqCst) {
            self.link.send(ToCaller::Err("\r\x1b[K".into()));
        }
    }

    fn read_input(&self, path: Option<String>) -> BoxFuture<'_, Result<String>> {
        Box::pin(async move {
            match self.link.ask(Question::Input(path)).await {
                Some(Answer::Input(text)) => text,
                _ => Err(Error::interrupted()),
            }
        })
    }

    fn environment(&self) -> &Environment {
        &self.environment
    }

    fn var(&self, name: &str) -> Option<String> {
        self.environment.var(name).map(str::to_string)
    }

    fn elicits(&self) -> bool {
        (self.terminal.stdin && self.terminal.stderr)
            || self.environment.var("FERRY_ELICIT") == Some("defaults")
    }
}

/// Answers a server's requests for the caller: roots are its directory, elicitation is
/// asked at its terminal, sampling is refused (said once), progress goes to its stderr.
struct RemoteHandler {
    link: Arc<CallerLink>,
    cwd: Option<std::path::PathBuf>,
    progress: bool,
    progress_shown: AtomicBool,
    sampling_noted: AtomicBool,
}

impl ClientHandler for RemoteHandler {
    fn answer<'a>(
        &'a self,
        method: &'a str,
        params: &'a Value,
    ) -> BoxFuture<'a, std::result::Result<Value, ClientRequestError>> {
        Box::pin(async move {
            match method {
                "roots/list" => Ok(roots_of(self.cwd.as_deref())),
                "elicitation/create" => {
                    match self.link.ask(Question::Elicit(params.clone())).await {
                        Some(Answer::Elicit(answer)) => answer,
                        _ => Err(ClientRequestError {
                            code: -1,
                            message: "the caller went away".into(),
                        }),
                    }
                }
                "sampling/createMessage" => {
                    if !self.sampling_noted.swap(true, Ordering::SeqCst) {
                        self.link.send(ToCaller::Err(format!(
                            "{}\n",
                            escape_line(terminal::SAMPLING_NOTE)
                        )));
                    }
                    Err(sampling_refused())
                }
                _ => Err(not_supported(method)),
            }
        })
    }

    fn progress(&self, params: &Value) {
        if !self.progress {
            return;
        }
        self.progress_shown.store(true, Ordering::SeqCst);
        self.link.send(ToCaller::Err(format!(
            "\r\x1b[K{}",
            terminal::progress_line(params)
        )));
    }
}
