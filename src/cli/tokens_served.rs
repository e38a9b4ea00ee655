//! `ferry tokens --manifest FILE` / `--cli NAME`: the reverse direction. What the tools
//! `ferry serve` would offer cost a host as MCP (eager and deferred), beside what the same
//! commands cost an agent that runs them in a shell and reads their own help when first needed.

use super::terminal::emit;
use crate::manifest::{self, help, policy, quick, Manifest};
use crate::tokens::meter::{break_even, Meter};
use crate::{Error, Outcome, Result};
use serde_json::json;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One served tool's costs.
struct ServedTool {
    name: String,
    /// The host-format definition.
    definition: usize,
    /// Deferred path, per use: the search and the definition.
    deferred_use: usize,
    /// The help command an agent in a shell would run, and what running and reading it costs;
    /// `None` when it cannot be read without running something else.
    shell: Option<(String, usize)>,
    /// A tool with `confirm`: what its question hands the host per call (the elicitation
    /// request's message and schema), placeholders unfilled.
    asks: Option<usize>,
}

/// What to meter: a manifest file, or quick mode's CLIs.
pub enum Served<'a> {
    Manifest(&'a str),
    Quick {
        clis: &'a [String],
        allows: &'a [String],
    },
}

/// Meters the served tools and prints the report.
pub fn served(what: Served, meter: &Meter, as_json: bool) -> Result<Outcome> {
    let (manifest, shown_as, quick_mode) = match what {
        Served::Manifest(file) => {
            let manifest =
                manifest::load(Path::new(file)).map_err(manifest::ManifestError::into_error)?;
            (manifest, format!("ferry serve --manifest {file}"), false)
        }
        Served::Quick { clis, allows } => {
            let cwd = std::env::current_dir().map_err(|e| {
                Error::usage(format!("cannot read the current directory: {e}"))
                    .with_hint("cd into a directory that exists")
            })?;
            let resolved = quick::resolve(clis, allows)?;
            let shown = clis
                .iter()
                .map(|c| format!("--cli {c}"))
                .collect::<Vec<_>>()
                .join(" ");
            (
                quick::manifest(&resolved, cwd, false),
                format!("ferry serve {shown}"),
                true,
            )
        }
    };
    if manifest.tools.is_empty() {
        return Err(Error::usage(format!("{shown_as} serves no tools"))
            .with_hint("add [[tools]] to the manifest"));
    }
    let tools = manifest.tools();
    let cost = meter.measure(
        &manifest.server.name,
        &tools,
        manifest.server.instructions.as_deref(),
    );
    let near = match what {
        Served::Manifest(file) => Path::new(file).parent().map(Path::to_path_buf),
        Served::Quick { .. } => std::env::current_dir().ok(),
    };
    let near = near.map(|n| {
        if n.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            n
        }
    });
    let helps = shell_helps(&manifest, quick_mode, near.as_deref());
    let served: Vec<ServedTool> = cost
        .tools
        .iter()
        .zip(&helps)
        .zip(&manifest.tools)
        .map(|((tool, help), def)| ServedTool {
            name: tool.name.clone(),
            definition: tool.definition,
            deferred_use: tool.deferred_use,
            shell: help
                .as_ref()
                .map(|h| (h.command.clone(), meter.shell_use(&h.command, &h.text))),
            asks: def.confirm.as_ref().map(|message| {
                let question = crate::protocol::question::Question::Confirm {
                    message: message.clone(),
                };
                let (method, params) = question.request();
                let request = json!({"method": method, "params": params});
                meter.tokenizer.count(&request.to_string())
            }),
        })
        .collect();
    let shell_costs: Vec<usize> = served
        .iter()
        .filter_map(|t| t.shell.as_ref())
        .map(|s| s.1)
        .collect();
    let shell_per_use = if shell_costs.is_empty() {
        None
    } else {
        Some(shell_costs.iter().sum::<usize>() as f64 / shell_costs.len() as f64)
    };
    let deferred_per_use = cost.deferred_per_use();
    let report = Report {
        shown_as,
        tools: served,
        eager: cost.eager,
        deferred: cost.deferred,
        deferred_per_use,
        shell_per_use,
    };
    let text = if as_json {
        crate::render::text::json_for_terminal(
            serde_json::to_string_pretty(&report.to_json(meter)).unwrap_or_default(),
        )
    } else {
        report.to_text(meter)
    };
    emit(&text)?;
    Ok(Outcome::Success)
}

/// Each tool's shell help, read concurrently (once per distinct command).
/// A program under a root or beside the manifest (`near`) is never run to read its help: a
/// repository's script would run unconfined, as the user.
fn shell_helps(
    manifest: &Manifest,
    quick_mode: bool,
    near: Option<&Path>,
) -> Vec<Option<help::ShellHelp>> {
    let root = manifest.server.roots.working_dir().clone();
    let served: Vec<PathBuf> = manifest
        .server
        .roots
        .all()
        .iter()
        .cloned()
        .chain(near.and_then(|n| std::fs::canonicalize(n).ok()))
        .collect();
    // (resolved program, as the manifest names it, fixed words)
    let commands: Vec<Option<(String, String, Vec<String>)>> = manifest
        .tools
        .iter()
        .map(|tool| {
            let (program, words) = tool.program_and_words()?;
            let resolved = which::which_in(program, std::env::var_os("PATH"), &root).ok()?;
            let file = std::fs::canonicalize(&resolved).ok()?;
            if served.iter().any(|s| file.starts_with(s)) {
                return None;
            }
            let shown = policy::file_name(program).to_string();
            // Quick mode's tool is the whole CLI: its top-level help is what a shell user reads.
            let words = if quick_mode { Vec::new() } else { words };
            Some((resolved.display().to_string(), shown, words))
        })
        .collect();
    let mut distinct: Vec<&(String, String, Vec<String>)> = Vec::new();
    for command in commands.iter().flatten() {
        if !distinct.contains(&command) {
            distinct.push(command);
        }
    }
    let mut read: HashMap<&(String, String, Vec<String>), Option<help::ShellHelp>> = HashMap::new();
    for batch in distinct.chunks(8) {
        let texts: Vec<Option<help::ShellHelp>> = std::thread::scope(|scope| {
            let handles: Vec<_> = batch
                .iter()
                .map(|(program, shown, words)| {
                    scope.spawn(move || help::for_command(program, shown, words))
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().ok().flatten())
                .collect()
        });
        read.extend(batch.iter().copied().zip(texts));
    }
    commands
        .iter()
        .map(|c| c.as_ref().and_then(|c| read.get(c).cloned().flatten()))
        .collect()
}

struct Report {
    shown_as: String,
    tools: Vec<ServedTool>,
    eager: usize,
    deferred: usize,
    deferred_per_use: f64,
    /// The mean over the tools whose help could be read.
    shell_per_use: Option<f64>,
}

impl Report {
    fn to_text(&self, meter: &Meter) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", meter.heading());
        let _ = writeln!(
            out,
            "{}: {} as MCP, beside the same commands in a shell.\n",
            self.shown_as,
            crate::tokens::meter::counted(self.tools.len(), "tool")
        );
        let _ = writeln!(out, "{:14}  {:>8}  {:>8}", "path", "up front", "per use");
        let _ = writeln!(out, "{:14}  {:>8}  {:>8}", "MCP eager", self.eager, 0);
        let _ = writeln!(
            out,
            "{:14}  {:>8}  {:>8.0}",
            "MCP deferred", self.deferred, self.deferred_per_use
        );
        match self.shell_per_use {
            Some(per_use) => {
                let _ = writeln!(out, "{:14}  {:>8}  {:>8.0}", "shell", 0, per_use);
            }
            None => {
                let _ = writeln!(out, "{:14}  {:>8}  {:>8}", "shell", 0, "-");
            }
        }
        let width = self
            .tools
            .iter()
            .map(|t| t.name.len())
            .max()
            .unwrap_or(4)
            .max(4);
        // The confirm column is shown only when some tool asks.
        let asking = self.tools.iter().any(|t| t.asks.is_some());
        let asks_head = if asking {
            format!("  {:>8}", "ask/call")
        } else {
            String::new()
        };
        let _ = writeln!(
            out,
            "\n{:width$}  {:>10}  {:>12}{asks_head}  {:>9}  help read in the shell",
            "tool", "definition", "deferred/use", "shell/use"
        );
        for tool in &self.tools {
            let (shell, command) = match &tool.shell {
                Some((command, cost)) => (cost.to_string(), command.as_str()),
                None => (
                    "-".into(),
                    "(none: a script runner, a program of the served tree, or no help printed)",
                ),
            };
            let asks = match (asking, tool.asks) {
                (false, _) => String::new(),
                (true, Some(n)) => format!("  {n:>8}"),
                (true, None) => format!("  {:>8}", "-"),
            };
            let _ = writeln!(
                out,
                "{:width$}  {:>10}  {:>12}{asks}  {:>9}  {command}",
                tool.name, tool.definition, tool.deferred_use, shell
            );
        }
        if asking {
            out.push_str("\nask/call: a tool with confirm hands the host its question on every call (the elicitation's message and schema); a host that shows it to its model pays it as context. A command that runs `ferry ask` adds its own questions the same way, and --sample a model call.\n");
        }
        out.push_str("\nshell up front is 0: an agent with a shell already has it. Per use, it reads the command's help the first time it needs the command; an agent that knows the command already pays nothing.\n");
        if let Some(per_use) = self.shell_per_use {
            let _ = writeln!(
                out,
                "against eager loading: {}",
                shell_versus(self.eager as f64, 0.0, per_use, self.tools.len())
            );
            let _ = writeln!(
                out,
                "against deferred loading: {}",
                shell_versus(
                    self.deferred as f64,
                    self.deferred_per_use,
                    per_use,
                    self.tools.len()
                )
            );
        }
        out
    }

    fn to_json(&self, meter: &Meter) -> serde_json::Value {
        let tools: Vec<_> = self
            .tools
            .iter()
            .map(|t| {
                json!({
                    "tool": t.name, "definition": t.definition, "deferred_per_use": t.deferred_use,
                    "shell_per_use": t.shell.as_ref().map(|s| s.1),
                    "shell_help": t.shell.as_ref().map(|s| &s.0),
                    "ask_per_call": t.asks,
                })
            })
            .collect();
        json!({
            "tokenizer": meter.tokenizer.encoding.name(),
            "host": meter.host.name(),
            "note": crate::tokens::meter::ESTIMATE_NOTE,
            "served": self.shown_as,
            "eager_upfront": self.eager,
            "deferred_upfront": self.deferred,
            "deferred_per_use": self.deferred_per_use,
            "shell_upfront": 0,
            "shell_per_use": self.shell_per_use,
            "shell_break_even_eager": self.shell_per_use.and_then(|s| break_even(self.eager as f64, 0.0, 0.0, s)),
            "shell_break_even_deferred": self.shell_per_use.and_then(|s| break_even(self.deferred as f64, self.deferred_per_use, 0.0, s)),
            "tools": tools,
        })
    }
}

/// How the shell compares with an MCP path that costs `upfront` and `per_use`.
fn shell_versus(upfront: f64, per_use: f64, shell_per_use: f64, commands: usize) -> String {
    crate::tokens::meter::break_even_of(
        break_even(upfront, per_use, 0.0, shell_per_use),
        "the shell",
        "command",
        commands,
    )
}
