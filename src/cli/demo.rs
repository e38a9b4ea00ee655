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
        args: vec!["demo".into(), "--server".into()],
        env: Default::default(),
        cwd: None,
    };
    spec.origin = "ferry's built-in demo server".into();
    spec.invocation = "ferry demo".into();
    Ok(spec)
}

/// `ferry demo`: the tour; `ferry demo --server`: the built-in server itself; anything else
/// (`ferry demo --tools`, `ferry demo pixel`) is used like any server's command line.
pub fn demo(words: &[String], globals: Globals) -> Result<Outcome> {
    match words.first().map(String::as_str) {
        Some("--server") => {
            crate::demo::serve_stdio();
            return Ok(Outcome::Success);
        }
        Some(_) => return run_server(demo_spec()?, words, globals),
        None => {}
    }
    let spec = demo_spec()?;
    emit("ferry demo: a built-in MCP server (`ferry demo --server`), used as CLI commands.\n")?;
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
                    super::flags::shell_word(a)
                }
            })
            .collect();
        emit(&format!("\n# {title}\n$ ferry demo {}\n", shown.join(" ")))?;
        let words: Vec<String> = args.iter().map(|w| w.to_string()).collect();
        if let Err(error) = run_server(spec.clone(), &words, globals.clone()) {
            if error.kind == crate::ErrorKind::ClosedPipe {
                return Err(error);
            }
            report(&error);
            emit(&format!("(exit code {})\n", error.kind.exit_code()))?;
        }
    }
    emit("\nnext: ferry add NAME -- COMMAND ARGS, or ferry import claude; then ferry NAME\n")?;
    Ok(Outcome::Success)
}
