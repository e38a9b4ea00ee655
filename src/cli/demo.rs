//! `ferry demo`: the tour on ferry's built-in server, run as a child process exactly like any
//! other server; `ferry demo --server` is that server; `ferry demo TOOL ...` uses it.

use super::call::run_server;
use super::terminal::{emit, report};
use super::Globals;
use crate::client::config::{ServerSpec, Target};
use crate::{Error, Outcome, Result};

/// ferry's built-in server, run as a child process like any other.
fn demo_spec() -> Result<ServerSpec> {
    let exe = std::env::current_exe().map_err(|e| {
        Error::server(format!("cannot find ferry's own binary: {e}"))
            .with_hint("run ferry by its full path")
    })?;
    let mut spec = ServerSpec::ad_hoc("demo")?;
    spec.name = "demo".into();
    spec.target = Target::Stdio {
        command: exe.display().to_string(),
        args: vec!["serve".into(), "--demo".into()],
        env: Default::default(),
        cwd: None,
    };
    spec.origin = "ferry's built-in demo server".into();
    spec.invocation = "ferry demo".into();
    // The tour's calls go warm like any others; its server does not stay long after.
    spec.idle_timeout = Some(std::time::Duration::from_secs(60));
    Ok(spec)
}

/// `ferry demo`: the tour; `ferry demo --server`: the built-in server itself; anything else
/// (`ferry demo --tools`, `ferry demo pixel`) is used like any server's command line.
pub fn demo(given: &[String], globals: Globals) -> Result<Outcome> {
    match given.first().map(String::as_str) {
        Some("--server") => {
            // The built-in server is `ferry serve --demo`: run it in the foreground.
            let exe = std::env::current_exe()
                .map_err(|e| Error::server(format!("cannot find ferry's own binary: {e}")))?;
            let status = std::process::Command::new(exe)
                .args(["serve", "--demo"])
                .status()
                .map_err(|e| Error::server(format!("cannot start ferry serve --demo: {e}")))?;
            return Ok(if status.success() {
                Outcome::Success
            } else {
                Outcome::ToolReportedError
            });
        }
        Some(_) => return run_server(demo_spec()?, given, globals, None),
        None => {}
    }
    let spec = demo_spec()?;
    emit("ferry demo: command-line tools served as MCP (`ferry serve --demo`, safe read-only commands\nover this directory), used through ferry like any MCP server.\n")?;
    // A file of this directory, if there is one, for the word count.
    let file = std::fs::read_dir(".")
        .ok()
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') && !n.starts_with('-'))
        .min();
    let mut steps: Vec<(&str, Vec<String>)> = vec![
        (
            "list the tools, one line each (cached: later listings start no server)",
            words(&["--refresh"]),
        ),
        (
            "how to call a tool, derived from its JSON schema",
            words(&["list_files", "--help"]),
        ),
        (
            "call it: the server runs `ls` itself, with no shell in between",
            words(&["list_files", "--sort", "extension"]),
        ),
        (
            "flags become the command's own options only where the manifest says",
            words(&["date", "--utc", "--format", "%H:%M"]),
        ),
    ];
    if let Some(file) = &file {
        steps.push((
            "the one required argument may be given bare",
            vec!["word_count".to_string(), file.clone()],
        ));
    }
    steps.extend([
        (
            "images are saved to a file and shown as one line",
            words(&["pixel"]),
        ),
        (
            "a path outside the served directory is refused by the server (exit code 1)",
            words(&["word_count", "/etc/passwd"]),
        ),
        (
            "a mistake is caught locally, with a hint and exit code 2",
            words(&["list_files", "--sort", "newest"]),
        ),
    ]);
    for (title, args) in steps {
        let shown: Vec<String> = args
            .iter()
            .map(|a| {
                if a == "--refresh" {
                    "--tools".to_string()
                } else {
                    super::flags::shell_word(a)
                }
            })
            .collect();
        emit(&format!("\n# {title}\n$ ferry demo {}\n", shown.join(" ")))?;
        match run_server(spec.clone(), &args, globals.clone(), None) {
            Ok(crate::Outcome::Success) => {}
            Ok(outcome) => emit(&format!("(exit code {})\n", crate::exit_code(&Ok(outcome))))?,
            Err(error) => {
                if error.kind == crate::ErrorKind::ClosedPipe {
                    return Err(error);
                }
                report(&error);
                emit(&format!("(exit code {})\n", error.kind.exit_code()))?;
            }
        }
    }
    emit("\nnext: ferry add NAME -- COMMAND ARGS, or ferry import claude; then ferry NAME\n      ferry serve --manifest tools.toml to serve your own commands (ferry serve init CLI drafts one)\n")?;
    Ok(Outcome::Success)
}

fn words(list: &[&str]) -> Vec<String> {
    list.iter().map(|w| w.to_string()).collect()
}
