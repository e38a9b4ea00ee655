//! Quick mode (`ferry serve --cli git --cli rg [--allow git:log,status,diff]`): each CLI as one
//! tool taking its command line as a list of strings. The model picks the options, so this is
//! for trusted local use: such a tool is annotated destructive and open-world unless `--allow`
//! limits it to named subcommands, and the options that make a CLI run code or write files are
//! refused, as are the subcommands that do so with ordinary arguments. Those refusals are
//! data, kept in one place each ([`REFUSED_OPTIONS`], [`REFUSED_SUBCOMMANDS`], and the
//! programs that run code in [`super::policy`]), each with its reason. They give clear errors;
//! the kernel sandbox (`serve::sandbox`, read-only, no network) is what holds where they miss.

use super::model::{
    ItemKind, Manifest, OutputKind, Param, ParamKind, Permissions, ServerDef, TaskSupport, ToolDef,
    DEFAULT_CONCURRENCY, DEFAULT_MAX_OUTPUT, DEFAULT_TIMEOUT,
};
use super::policy::file_name;
use super::template::{Element, Refusal};
use crate::Error;
use serde_json::{json, Map};
use std::path::PathBuf;

/// Subcommands refused in quick mode: what they do with ordinary arguments is run programs,
/// write configuration that names programs, or reveal secrets. Refused wherever the word stands
/// before a `--`, since global options with values hide where the subcommand starts.
pub const REFUSED_SUBCOMMANDS: [(&str, &str, &str); 13] = [
    (
        "git",
        "config",
        "writes configuration, which can name programs git runs (core.fsmonitor, aliases)",
    ),
    (
        "git",
        "submodule",
        "runs commands (foreach, update with a !command)",
    ),
    ("git", "bisect", "runs commands (bisect run)"),
    ("git", "filter-branch", "runs the shell filters it is given"),
    ("git", "filter-repo", "runs the code it is given"),
    ("git", "difftool", "runs the diff tool it is given"),
    ("git", "mergetool", "runs the merge tool it is given"),
    (
        "git",
        "send-email",
        "sends mail, and runs --smtp-server as a program",
    ),
    ("git", "daemon", "serves repositories on the network"),
    ("git", "instaweb", "starts a web server and a browser"),
    ("git", "hook", "runs hooks"),
    ("git", "credential", "prints stored credentials"),
    ("git", "credential-store", "prints stored credentials"),
];

/// One option that makes a CLI run code or write files.
#[derive(Debug, Clone, Copy)]
pub struct RefusedOption {
    pub cli: &'static str,
    /// The subcommands it is refused after (empty: anywhere).
    pub subcommands: &'static [&'static str],
    /// `--long` (also `--long=value`), `-x` (also `-xvalue` and inside `-abx`), or a
    /// single-dash word such as find's `-exec` (matched exactly).
    pub option: &'static str,
    pub why: &'static str,
}

const fn refused(
    cli: &'static str,
    subcommands: &'static [&'static str],
    option: &'static str,
    why: &'static str,
) -> RefusedOption {
    RefusedOption {
        cli,
        subcommands,
        option,
        why,
    }
}

/// Options refused in quick mode, whatever else the command line says.
pub const REFUSED_OPTIONS: &[RefusedOption] = &[
    refused(
        "git",
        &[],
        "-c",
        "sets configuration such as alias.x=!command",
    ),
    refused(
        "git",
        &[],
        "--config-env",
        "sets configuration from the environment",
    ),
    refused(
        "git",
        &[],
        "--exec-path",
        "chooses where git's programs are run from",
    ),
    refused("git", &[], "-C", "runs git in another directory"),
    refused("git", &[], "--git-dir", "points git at another repository"),
    refused("git", &[], "--work-tree", "points git at another work tree"),
    refused(
        "git",
        &[],
        "--upload-pack",
        "runs a command on the remote or local side",
    ),
    refused(
        "git",
        &[],
        "--receive-pack",
        "runs a command on the remote or local side",
    ),
    refused(
        "git",
        &["clone", "fetch", "ls-remote", "pull"],
        "-u",
        "short for --upload-pack",
    ),
    refused("git", &[], "--output", "writes a file"),
    refused("git", &[], "--output-directory", "writes files"),
    refused(
        "git",
        &["format-patch"],
        "-o",
        "short for --output-directory",
    ),
    refused(
        "git",
        &[],
        "--ext-diff",
        "runs a configured external diff program",
    ),
    refused(
        "git",
        &[],
        "--textconv",
        "runs configured conversion programs",
    ),
    refused(
        "git",
        &[],
        "--template",
        "copies hooks from a template directory",
    ),
    refused("git", &[], "--open-files-in-pager", "runs a pager program"),
    refused("git", &["grep"], "-O", "short for --open-files-in-pager"),
    refused(
        "rg",
        &[],
        "--pre",
        "runs a preprocessor command on every file",
    ),
    refused("find", &[], "-exec", "runs a command"),
    refused("find", &[], "-execdir", "runs a command"),
    refused("find", &[], "-ok", "runs a command"),
    refused("find", &[], "-okdir", "runs a command"),
    refused("find", &[], "-delete", "deletes files"),
    refused("find", &[], "-fprint", "writes a file"),
    refused("find", &[], "-fprint0", "writes a file"),
    refused("find", &[], "-fprintf", "writes a file"),
    refused("find", &[], "-fls", "writes a file"),
    refused("tar", &[], "--to-command", "pipes every file to a command"),
    refused(
        "tar",
        &[],
        "--use-compress-program",
        "runs a compression program",
    ),
    refused("tar", &[], "-I", "short for --use-compress-program"),
    refused(
        "tar",
        &[],
        "--checkpoint-action",
        "can run a command at checkpoints",
    ),
    refused(
        "tar",
        &[],
        "--info-script",
        "runs a script at the end of each volume",
    ),
    refused(
        "tar",
        &[],
        "--new-volume-script",
        "runs a script at the end of each volume",
    ),
    refused("tar", &[], "-F", "short for --info-script"),
    refused("tar", &[], "--rsh-command", "runs a remote shell command"),
    refused("curl", &[], "--output", "writes a file"),
    refused("curl", &[], "-o", "short for --output"),
    refused("curl", &[], "--remote-name", "writes a file"),
    refused("curl", &[], "-O", "short for --remote-name"),
    refused("curl", &[], "--config", "reads options from a file"),
    refused("curl", &[], "-K", "short for --config"),
    refused("curl", &[], "--upload-file", "sends a local file"),
    refused("curl", &[], "-T", "short for --upload-file"),
    refused("rsync", &[], "--rsh", "runs a remote shell command"),
    refused(
        "git",
        &["rebase"],
        "--exec",
        "runs a shell command after each commit",
    ),
    refused("git", &["rebase"], "-x", "short for --exec"),
    refused(
        "git",
        &["push", "archive"],
        "--exec",
        "runs a command on the remote or local side",
    ),
    refused("git", &["archive"], "-o", "short for --output"),
    refused(
        "git",
        &["clone"],
        "--config",
        "sets configuration such as core.fsmonitor=command",
    ),
    refused(
        "rg",
        &[],
        "--hostname-bin",
        "runs a program to find the host name",
    ),
    refused("curl", &[], "--dump-header", "writes a file"),
    refused("curl", &[], "-D", "short for --dump-header"),
    refused("curl", &[], "--cookie-jar", "writes a file"),
    refused("curl", &[], "-c", "short for --cookie-jar"),
    refused("curl", &[], "--trace", "writes a file"),
    refused("curl", &[], "--trace-ascii", "writes a file"),
    refused("curl", &[], "--stderr", "writes a file"),
    refused("curl", &[], "--libcurl", "writes a file"),
    refused("curl", &[], "--etag-save", "writes a file"),
    refused("curl", &[], "--hsts", "writes a file"),
    refused("curl", &[], "--alt-svc", "writes a file"),
    refused("curl", &[], "--remote-name-all", "writes a file per URL"),
    refused(
        "curl",
        &[],
        "--output-dir",
        "chooses where files are written",
    ),
    refused(
        "git",
        &["checkout-index"],
        "--prefix",
        "writes the index's files under any directory it is given",
    ),
    refused(
        "git",
        &["hash-object"],
        "-w",
        "writes objects into the repository",
    ),
    refused(
        "git",
        &["update-index"],
        "--cacheinfo",
        "puts any stored content into the index, to be written out",
    ),
    refused(
        "tar",
        &[],
        "--index-file",
        "writes its listing to any file it is given",
    ),
    refused(
        "sort",
        &[],
        "--compress-program",
        "runs the program it is given",
    ),
    refused("rsync", &[], "-e", "short for --rsh"),
    refused(
        "rsync",
        &[],
        "--rsync-path",
        "runs the program it is given on the other side",
    ),
];

/// Whether `arg` is `option`, by the option's form. Long options match their unambiguous
/// abbreviations too (`--upload-pa` is `--upload-pack` to git, GNU tar and curl).
fn is_option(arg: &str, option: &str) -> bool {
    if let Some(long) = option.strip_prefix("--") {
        let Some(body) = arg.strip_prefix("--") else {
            return false;
        };
        let name = body.split_once('=').map_or(body, |(name, _)| name);
        return !name.is_empty() && long.starts_with(name);
    }
    let short = option.strip_prefix('-').unwrap_or(option);
    if short.chars().count() == 1 {
        // `-x`, `-xvalue`, or `x` inside a cluster of short options such as `-sSx`.
        match arg.strip_prefix('-') {
            Some(rest) if !rest.starts_with('-') && !rest.is_empty() => rest.contains(short),
            _ => false,
        }
    } else {
        // A single-dash word (find's `-exec`): exactly.
        arg == option
    }
}

/// Why a CLI cannot be served in quick mode, if it cannot: one whose arguments are code never
/// is; one that runs a project's code only when `--allow` names its subcommands (`limited`).
pub fn refused_cli(program: &str, limited: bool) -> Option<String> {
    let runner = super::policy::runs_code(program)?;
    match runner.runs {
        super::policy::Runs::Arguments => Some(runner.why.to_string()),
        super::policy::Runs::Projects if !limited => Some(format!(
            "{}; name the subcommands it may run with --allow",
            runner.why
        )),
        super::policy::Runs::Projects => None,
    }
}

/// Why a command line is refused for `program`, if it is: a refused option, or a subcommand
/// outside `allowed`.
pub fn check_args(
    program: &str,
    args: &[String],
    allowed: Option<&[String]>,
) -> Result<(), Refusal> {
    let cli = file_name(program);
    if args.iter().any(|a| a.contains('\0')) {
        return Err(Refusal("an argument contains a NUL byte".into()));
    }
    if let Some(allowed) = allowed {
        match args.first() {
            Some(first) if allowed.iter().any(|a| a == first) => {}
            _ => {
                return Err(Refusal(format!(
                "{cli} is limited to the subcommands {}; the first argument must be one of them",
                allowed.join(", ")
            )))
            }
        }
    }
    let before_dashes = args.iter().take_while(|a| *a != "--");
    for arg in before_dashes {
        if let Some((_, sub, why)) = REFUSED_SUBCOMMANDS
            .iter()
            .find(|(c, sub, _)| *c == cli && arg == sub)
        {
            return Err(Refusal(format!("{cli} {sub} is refused: it {why}")));
        }
    }
    // Global options with values (`git --namespace x clone`) hide where the subcommand
    // starts: an option scoped to subcommands is refused when any word before `--` names one.
    let words: Vec<&str> = args
        .iter()
        .take_while(|a| *a != "--")
        .filter(|a| !a.starts_with('-'))
        .map(String::as_str)
        .collect();
    // tar's old style: a first word without a dash is a cluster of options (`cIf`).
    let old_style = (cli == "tar")
        .then(|| args.first().filter(|a| !a.starts_with('-')))
        .flatten()
        .map(|a| format!("-{a}"));
    for arg in args.iter().map(String::as_str).chain(old_style.as_deref()) {
        for entry in REFUSED_OPTIONS.iter().filter(|e| e.cli == cli) {
            let scoped =
                entry.subcommands.is_empty() || words.iter().any(|w| entry.subcommands.contains(w));
            if scoped && is_option(arg, entry.option) {
                return Err(Refusal(format!(
                    "{cli} {} is refused: it {}",
                    entry.option, entry.why
                )));
            }
        }
    }
    Ok(())
}

/// The tool for one CLI. `summary` is the start of its `--help`.
pub fn quick_tool(program: &str, summary: &str, allowed: Option<&[String]>) -> ToolDef {
    let cli = file_name(program).to_string();
    let name: String = cli
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let scope = match allowed {
        Some(list) => format!(" Limited to: {cli} {}.", list.join(" | ")),
        None => String::new(),
    };
    let description = format!(
        "Run `{cli}` with the given arguments (one list item per argument; no shell, so no quoting, pipes or globbing).{scope}\n{}",
        summary.trim()
    );
    let mut annotations = Map::new();
    if allowed.is_none() {
        annotations.insert("destructiveHint".into(), json!(true));
        annotations.insert("openWorldHint".into(), json!(true));
    }
    ToolDef {
        name,
        title: None,
        description: description.trim_end().to_string(),
        command: vec![
            Element::Word(program.to_string()),
            Element::Spread("args".into()),
        ],
        annotations,
        timeout: None,
        // rg and grep exit 1 when nothing matched: a finding, not a failure.
        ok_exit: super::policy::ok_exit(program),
        output: OutputKind::Text,
        output_schema: None,
        stdin: None,
        progress: None,
        params: vec![Param {
            description: Some(format!("The arguments after `{cli}`, one per item")),
            default: Some(json!([])),
            required: false,
            allow_dash: true,
            ..Param::new("args", ParamKind::Array(ItemKind::String))
        }],
        // Quick mode is read-only: the model picks the options, so the kernel lets it write
        // nothing (the call's private temporary directory aside).
        permissions: Permissions {
            writes: Some(Vec::new()),
            ..Permissions::default()
        },
        confirm: None,
        needs: Vec::new(),
        task: TaskSupport::Never,
        line: 0,
    }
}

/// One CLI served in quick mode, resolved.
#[derive(Debug, Clone)]
pub struct QuickCli {
    /// The absolute path of the program.
    pub program: String,
    /// The first lines of its `--help`.
    pub summary: String,
    /// The subcommands `--allow` limits it to, if any.
    pub allowed: Option<Vec<String>>,
}

/// Resolves `--cli NAME...` and `--allow CLI:SUB,SUB...`: each CLI found on PATH and not
/// refused, each `--allow` well formed and naming a served CLI. Reads each CLI's `--help`.
pub fn resolve(clis: &[String], allows: &[String]) -> crate::Result<Vec<QuickCli>> {
    if clis.is_empty() {
        return Err(Error::usage("quick mode needs --cli NAME")
            .with_hint("for example --cli git; or write a manifest (ferry serve init git)"));
    }
    for allow in allows {
        let Some((name, _)) = allow.split_once(':') else {
            return Err(
                Error::usage(format!("--allow expects CLI:SUB,SUB, not {allow:?}"))
                    .with_hint("for example: --allow git:log,status,diff"),
            );
        };
        if !clis.iter().any(|c| c == name || file_name(c) == name) {
            return Err(
                Error::usage(format!("--allow names {name}, which no --cli serves"))
                    .with_hint(format!("add --cli {name}")),
            );
        }
    }
    let mut resolved = Vec::new();
    for cli in clis {
        let limited = allows.iter().any(|a| {
            a.split_once(':')
                .is_some_and(|(name, _)| name == cli || name == file_name(cli))
        });
        if let Some(why) = refused_cli(cli, limited) {
            return Err(
                Error::usage(format!("{cli} cannot be served in quick mode: {why}")).with_hint(
                    "write a manifest whose commands fix what may vary (ferry serve init)",
                ),
            );
        }
        let program = which::which(cli).map_err(|_| {
            Error::usage(format!("command {cli:?} not found"))
                .with_hint("install it, or give its full path")
        })?;
        let program = program.display().to_string();
        // Two CLIs of one name would be two tools of one name, and the second unreachable.
        if resolved
            .iter()
            .any(|r: &QuickCli| file_name(&r.program) == file_name(&program))
        {
            return Err(
                Error::usage(format!("--cli {cli} names a CLI already served"))
                    .with_hint("give each CLI once"),
            );
        }
        let allowed = allows
            .iter()
            .filter_map(|a| a.split_once(':'))
            .find(|(name, _)| *name == cli || *name == file_name(cli))
            .map(|(_, subs)| {
                subs.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect::<Vec<_>>()
            });
        // The served directory's own programs are never run to read their help: a
        // repository's file would run unconfined, as the user.
        let served_here = std::env::current_dir()
            .and_then(std::fs::canonicalize)
            .ok()
            .zip(std::fs::canonicalize(&program).ok())
            .is_some_and(|(cwd, file)| file.starts_with(cwd));
        resolved.push(QuickCli {
            summary: if served_here {
                format!(
                    "{} (a program of the served directory: its help is not read)",
                    file_name(&program)
                )
            } else {
                super::help::summary(&program)
            },
            program,
            allowed,
        });
    }
    Ok(resolved)
}

/// The manifest quick mode serves: a tool per CLI, run in `dir`, reaching the network only
/// when `network` says so.
pub fn manifest(clis: &[QuickCli], dir: PathBuf, network: bool) -> Manifest {
    let tools: Vec<ToolDef> = clis
        .iter()
        .map(|cli| {
            let mut tool = quick_tool(&cli.program, &cli.summary, cli.allowed.as_deref());
            tool.permissions.network = network;
            tool
        })
        .collect();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    Manifest {
        file: PathBuf::from("(quick mode)"),
        server: ServerDef {
            name: "ferry-cli".into(),
            instructions: Some(format!(
                "Command-line tools run without a shell: {}.",
                names.join(", ")
            )),
            roots: super::Roots::new(dir, []),
            env: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            max_output: DEFAULT_MAX_OUTPUT,
            concurrency: DEFAULT_CONCURRENCY,
        },
        tools,
        resources: Vec::new(),
        templates: Vec::new(),
        prompts: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cli_given_twice_is_refused() {
        let ls = which::which("ls").unwrap().display().to_string();
        let error = resolve(&["ls".into(), ls], &[]).err().unwrap();
        assert!(
            error.message.contains("already served"),
            "{}",
            error.message
        );
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|a| a.to_string()).collect()
    }

    /// Every refused option, in a command line that uses it, is refused; and the same command
    /// line without it passes. One case per entry of the table.
    #[test]
    fn every_refused_option_is_refused() {
        for entry in REFUSED_OPTIONS {
            let sub = entry.subcommands.first().copied().unwrap_or("log");
            let value = if entry.option.starts_with("--") {
                format!("{}=x", entry.option)
            } else {
                entry.option.to_string()
            };
            let line = args(&[sub, &value, "x"]);
            let refusal = check_args(&format!("/usr/bin/{}", entry.cli), &line, None)
                .expect_err(&format!("{} {:?}", entry.cli, line))
                .0;
            assert!(refusal.contains(entry.option), "{refusal}");
            assert!(check_args(entry.cli, &args(&[sub, "x"]), None).is_ok());
        }
    }

    /// Every refused subcommand is refused, also behind global options.
    #[test]
    fn every_refused_subcommand_is_refused() {
        for (cli, sub, _) in REFUSED_SUBCOMMANDS {
            let program = format!("/usr/bin/{cli}");
            let refusal = check_args(&program, &args(&[sub, "x"]), None)
                .expect_err(sub)
                .0;
            assert!(
                refusal.starts_with(&format!("{cli} {sub} is refused")),
                "{refusal}"
            );
            assert!(check_args(&program, &args(&["--namespace", "n", sub]), None).is_err());
        }
        // After `--` it is a path, not a subcommand.
        assert!(check_args("git", &args(&["log", "--", "config"]), None).is_ok());
    }

    /// The bypasses an adversarial review found, each refused.
    #[test]
    fn abbreviations_hidden_subcommands_and_old_style_tar_are_refused() {
        let refused = |cli: &str, line: &[&str]| check_args(cli, &args(line), None).is_err();
        // GNU-style abbreviations of long options.
        assert!(refused(
            "git",
            &["ls-remote", "--upload-pa=touch x; git-upload-pack", "."]
        ));
        assert!(refused("git", &["grep", "--open-files-in-p=sh", "x"]));
        assert!(refused("git", &["ls-remote", "--exec=touch x", "."]));
        assert!(refused(
            "tar",
            &["-cf", "/dev/null", "--checkpoint-act=exec=touch x", "f"]
        ));
        assert!(refused(
            "tar",
            &["-cf", "x.tar", "--use-compress-prog=sh", "f"]
        ));
        assert!(refused("curl", &["--cookie-ja", "/tmp/x", "http://a"]));
        assert!(refused("curl", &["--confi", "/tmp/x", "http://a"]));
        assert!(refused(
            "curl",
            &["--remote-name-all", "--output-dir", "/tmp", "http://a"]
        ));
        // A global option's value hides where the subcommand starts.
        assert!(refused(
            "git",
            &["--namespace", "x", "clone", "-u", "sh", "u", "d"]
        ));
        assert!(refused(
            "git",
            &["--namespace", "x", "format-patch", "-o", "/tmp", "HEAD~1"]
        ));
        // tar's dash-less first word is options.
        assert!(refused("tar", &["cIf", "touch x", "out.tar", "f"]));
        // Still allowed: options that merely share a beginning, and `--` itself.
        assert!(!refused("git", &["log", "--exclude=x", "--", "src"]));
        assert!(!refused("tar", &["tf", "x.tar"]));
        for cli in [
            "nodejs", "mawk", "stdbuf", "flock", "script", "make", "zip", "busybox",
        ] {
            assert!(refused_cli(cli, false).is_some(), "{cli}");
        }
    }

    #[test]
    fn short_options_are_found_attached_and_in_clusters() {
        assert!(check_args("curl", &args(&["-sSo", "/tmp/x", "http://a"]), None).is_err());
        assert!(check_args("curl", &args(&["-o/tmp/x", "http://a"]), None).is_err());
        assert!(check_args("curl", &args(&["-sS", "http://a"]), None).is_ok());
        assert!(check_args("git", &args(&["-c", "alias.x=!sh", "x"]), None).is_err());
        // Scoped: -u is git clone's --upload-pack, but git log's patch output.
        assert!(check_args("git", &args(&["clone", "-u", "sh", "u"]), None).is_err());
        assert!(check_args("git", &args(&["log", "-u"]), None).is_ok());
        // Long options match whole names only.
        assert!(check_args("rg", &args(&["--pre", "sh", "x"]), None).is_err());
        assert!(check_args("rg", &args(&["--pre-glob", "*.gz", "x"]), None).is_ok());
        assert!(check_args("find", &args(&[".", "-exec", "rm", "{}", ";"]), None).is_err());
        assert!(check_args("find", &args(&[".", "-name", "-exec"]), None).is_err());
    }

    #[test]
    fn allowed_subcommands_limit_the_first_argument() {
        let allowed = args(&["log", "status", "diff"]);
        assert!(check_args("git", &args(&["log", "-n", "3"]), Some(&allowed)).is_ok());
        assert_eq!(
            check_args("git", &args(&["push"]), Some(&allowed)),
            Err(Refusal("git is limited to the subcommands log, status, diff; the first argument must be one of them".into()))
        );
        assert!(check_args("git", &args(&["--no-pager", "log"]), Some(&allowed)).is_err());
    }

    #[test]
    fn shells_and_runners_are_never_served() {
        for runner in super::super::policy::CODE_RUNNERS {
            let program = format!("/usr/bin/{}", runner.name);
            assert!(refused_cli(&program, false).is_some(), "{}", runner.name);
        }
        assert!(refused_cli("/usr/bin/python3.11", true).is_some());
        assert!(refused_cli("node22", true).is_some());
        assert!(refused_cli("git", false).is_none());
        // A package manager runs project code unless limited to named subcommands.
        assert!(refused_cli("npm", false).unwrap().contains("--allow"));
        assert!(refused_cli("npm", true).is_none());
    }

    /// Quick mode, help reading and drafts ask the one table with the one name rule: a
    /// versioned interpreter (`node22`) is the interpreter for each of them.
    #[test]
    fn every_user_of_the_table_finds_a_versioned_name() {
        use crate::manifest::{draft, help};
        // A `node22` that prints help like any program: only the table keeps ferry from
        // running `node22 WORD --help`.
        let dir = std::env::temp_dir().join(format!("ferry-policy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let node22 = dir.join("node22");
        let _ = std::fs::remove_file(&node22);
        std::os::unix::fs::symlink(which::which("ls").unwrap(), &node22).unwrap();
        let node22 = node22.to_str().unwrap();
        assert!(!help::run(node22, &["--help"]).is_empty());
        for program in [node22, "node22", "/usr/bin/python3.11", "perl5.36"] {
            assert!(refused_cli(program, false).is_some(), "quick: {program}");
            assert!(refused_cli(program, true).is_some(), "quick: {program}");
            assert_eq!(
                help::for_command(program, "node22", &["script.js".into()]),
                None,
                "help: {program}"
            );
            assert!(
                draft::draft(program, &[]).contains("can run code or commands it is given"),
                "draft: {program}"
            );
        }
        // And a program that runs no code is read and drafted without the warning.
        assert!(refused_cli("/usr/bin/git", false).is_none());
        assert!(!draft::draft("git", &[]).contains("can run code"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
