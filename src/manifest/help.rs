//! Reading command-line programs' own help: what `ferry serve init` drafts from, quick mode's
//! tool descriptions, and what `ferry tokens --manifest` counts as the shell path's cost.
//!
//! Only help-like arguments are ever passed: `--help`, and `-h` after a subcommand the
//! program's own help lists or where `--help` itself documents `-h` as help. A program's top
//! level never gets `-h` otherwise (except where it refused `--help` as an unknown option): it
//! means other things to some (`ls -h`, `shutdown -h`). Each run gets a cleared environment, a
//! fresh empty directory and `HOME` (no repository's or user's configuration in effect), no
//! stdin, pagers set to `cat`, a 256 KiB cap per stream and 10 seconds; its whole process group
//! is killed after.

use super::draft::{self, HelpText};
use super::policy::runs_arguments;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const STREAM_LIMIT: u64 = 256 * 1024;
const DEADLINE: Duration = Duration::from_secs(10);

/// A fresh private directory (`home/` and `cwd/` inside), removed when dropped.
struct Neutral(std::path::PathBuf);

impl Neutral {
    fn new() -> Option<Neutral> {
        use std::os::unix::fs::DirBuilderExt;
        static COUNT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ferry-help-{}-{n}", std::process::id()));
        std::fs::DirBuilder::new().mode(0o700).create(&dir).ok()?;
        let neutral = Neutral(dir);
        for sub in ["home", "cwd"] {
            std::fs::create_dir(neutral.0.join(sub)).ok()?;
        }
        Some(neutral)
    }
}

impl Drop for Neutral {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Runs `program ARGS` and returns what it printed, stdout then stderr.
///
/// It runs in a fresh empty directory with a fresh empty `HOME`, so no repository's or user's
/// configuration is in effect (git honours a repository's `man.viewer` and `man.<tool>.cmd`
/// when asked for help); git's system configuration is ignored too.
pub fn run(program: &str, args: &[&str]) -> String {
    let Some(neutral) = Neutral::new() else {
        return String::new();
    };
    let home = neutral.0.join("home");
    let cwd = neutral.0.join("cwd");
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(&cwd)
        .env_clear()
        .envs(
            crate::words::utf8_env()
                .filter(|(k, _)| matches!(k.as_str(), "PATH" | "LANG") || k.starts_with("LC_")),
        )
        .env("HOME", &home)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CEILING_DIRECTORIES", &neutral.0)
        .env("GIT_PAGER", "cat")
        .env("PAGER", "cat")
        .env("MANPAGER", "cat")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let Ok(mut child) = command.spawn() else {
        return String::new();
    };
    let pgid = child.id() as i32;
    // Both streams are read as they come: a manual can fill a pipe.
    fn drain(stream: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(stream) = stream {
                let _ = stream.take(STREAM_LIMIT).read_to_end(&mut bytes);
            }
            bytes
        })
    }
    let out = drain(child.stdout.take());
    let err = drain(child.stderr.take());
    let deadline = Instant::now() + DEADLINE;
    while Instant::now() < deadline {
        if !matches!(child.try_wait(), Ok(None)) {
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    // SAFETY: killpg only signals the group this call created; a pager or `man` it started
    // would otherwise hold the pipes open.
    unsafe {
        libc::killpg(pgid, libc::SIGKILL);
    }
    let _ = child.wait();
    let bytes = [
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    ]
    .concat();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Whether what a program printed is binary data rather than text: NUL bytes, or more than
/// one character in twenty undecodable or a control character other than layout.
pub fn is_binary(text: &str) -> bool {
    let total = text.chars().count().max(1);
    let odd = text
        .chars()
        .filter(|&c| c == '\u{FFFD}' || (c.is_control() && !"\n\r\t\x1b\x08\x0c".contains(c)))
        .count();
    text.contains('\0') || odd * 20 > total
}

/// A CLI's own help for a draft: its `--help`, or its `-h` when `--help` was refused as an
/// unknown option and `-h` prints a usage (mawk's `awk: not an option: --help`). Only then:
/// `-h` means other things to some programs.
pub fn top(program: &str) -> String {
    let long = run(program, &["--help"]);
    if refused(&long) {
        let short = run(program, &["-h"]);
        if is_usage(&short) {
            return short;
        }
    }
    long
}

/// Whether a program's answer to a help option refused it (`sh: 0: Illegal option --`) and
/// shows no usage or options: it has no help to draft from.
pub fn refused(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let refusal = [
        "not an option",
        "illegal option",
        "unrecognized option",
        "unknown option",
        "invalid option",
    ]
    .iter()
    .any(|w| lower.contains(w));
    refusal && !is_usage(text) && draft::options(text).is_empty()
}

/// The first lines of a CLI's `--help`: quick mode's description.
pub fn summary(program: &str) -> String {
    let text = run(program, &["--help"]);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .take(6)
        .collect();
    lines.join("\n")
}

/// Whether a text reads as a usage summary rather than a manual page or an error.
fn is_usage(text: &str) -> bool {
    let head: String = text.chars().take(600).collect::<String>().to_lowercase();
    head.contains("usage")
}

/// A subcommand's help: `--help`, or `-h` when `--help` opened a manual (git does) or printed
/// no usage. `None` when neither printed anything.
pub fn subcommand(program: &str, sub: &str) -> Option<(&'static str, String)> {
    let long = run(program, &[sub, "--help"]);
    if is_usage(&long) && !draft::options(&long).is_empty() {
        return Some(("--help", long));
    }
    let short = run(program, &[sub, "-h"]);
    if is_usage(&short) {
        return Some(("-h", short));
    }
    (!long.trim().is_empty()).then_some(("--help", long))
}

/// A subcommand's helps for a draft: its `--help`, and its `-h` as the short help (path
/// `[sub, "-h"]`) where `--help` opened a manual (git's: the manual lists every option, `-h` the
/// ones people use).
fn subcommand_helps(program: &str, sub: &str) -> Vec<HelpText> {
    let path = vec![sub.to_string()];
    let long = run(program, &[sub, "--help"]);
    if is_usage(&long) && !draft::options(&long).is_empty() {
        return vec![HelpText { path, text: long }];
    }
    let short = run(program, &[sub, "-h"]);
    match (is_usage(&short), long.trim().is_empty()) {
        (true, false) if !draft::options(&long).is_empty() => vec![
            HelpText {
                path: path.clone(),
                text: long,
            },
            HelpText {
                path: vec![sub.to_string(), "-h".to_string()],
                text: short,
            },
        ],
        (true, _) => vec![HelpText { path, text: short }],
        (false, false) => vec![HelpText { path, text: long }],
        (false, true) => vec![HelpText {
            path,
            text: String::new(),
        }],
    }
}

/// The CLI's help and its subcommands' (the first 40, read eight at a time): what
/// `ferry serve init` drafts from. `top` is the CLI's own `--help`, already read; its `-h`
/// is read too where `--help` documents it as help and it prints a shorter usage (ripgrep's).
pub fn all(program: &str, top: &str) -> Vec<HelpText> {
    let mut helps = vec![HelpText {
        path: Vec::new(),
        text: top.to_string(),
    }];
    if documents_short_help(top) {
        let short = run(program, &["-h"]);
        if is_usage(&short) && short.len() < top.len() {
            helps.push(HelpText {
                path: vec!["-h".to_string()],
                text: short,
            });
        }
    }
    let subs: Vec<String> = draft::subcommands(top)
        .into_iter()
        .take(40)
        .map(|(sub, _)| sub)
        .collect();
    for batch in subs.chunks(8) {
        let texts: Vec<Vec<HelpText>> = std::thread::scope(|scope| {
            let handles: Vec<_> = batch
                .iter()
                .map(|sub| scope.spawn(move || subcommand_helps(program, sub)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_default())
                .collect()
        });
        helps.extend(texts.into_iter().flatten());
    }
    helps
}

/// The help an agent in a shell would read before running a command: the program's own
/// `--help`, or its subcommand's when the command's second word is a subcommand the
/// program's help lists. `shown` is the program as the manifest names it.
#[derive(Debug, Clone, PartialEq)]
pub struct ShellHelp {
    /// The command that printed it, as an agent would type it (`git log -h`).
    pub command: String,
    pub text: String,
}

/// Reads the shell help for a command whose program resolved to `program` and whose literal
/// words follow it. `None` when the program runs scripts (reading the script's help would run
/// it) or printed nothing.
pub fn for_command(program: &str, shown: &str, words: &[String]) -> Option<ShellHelp> {
    // `program WORD --help` runs WORD when program runs its arguments.
    if runs_arguments(program) {
        return None;
    }
    let top = run(program, &["--help"]);
    if let Some(sub) = words.first() {
        let listed = draft::subcommands(&top).iter().any(|(name, _)| name == sub);
        if listed {
            if let Some((flag, text)) = subcommand(program, sub) {
                return Some(ShellHelp {
                    command: format!("{shown} {sub} {flag}"),
                    text,
                });
            }
        }
    }
    if documents_short_help(&top) {
        // ripgrep's -h is a summary of its --help manual: the one an agent would read.
        let short = run(program, &["-h"]);
        if is_usage(&short) && short.len() < top.len() {
            return Some(ShellHelp {
                command: format!("{shown} -h"),
                text: short,
            });
        }
    }
    (!top.trim().is_empty()).then(|| ShellHelp {
        command: format!("{shown} --help"),
        text: top,
    })
}

/// Whether a help text documents `-h` as a spelling of `--help`.
fn documents_short_help(text: &str) -> bool {
    draft::options(text)
        .iter()
        .any(|o| o.short == Some('h') && o.long.as_deref() == Some("--help"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_runners_are_never_given_their_next_word() {
        assert!(runs_arguments("/usr/bin/python3.11"));
        assert!(runs_arguments("sh"));
        assert!(runs_arguments("/usr/bin/env"));
        assert!(
            runs_arguments("node22"),
            "the same name rule as quick mode's"
        );
        assert!(!runs_arguments("/usr/bin/git"));
        assert_eq!(for_command("/bin/sh", "sh", &["script.sh".into()]), None);
    }

    #[test]
    fn usage_is_told_from_a_manual() {
        assert!(is_usage("usage: git log [<options>]\n"));
        assert!(is_usage("Usage: wc [OPTION]... [FILE]...\n"));
        assert!(!is_usage(
            "GIT-LOG(1)    Git Manual\n\nNAME\n  git-log - Show commit logs\nSYNOPSIS\n"
        ));
    }

    #[test]
    fn short_help_is_used_only_where_help_documents_it() {
        assert!(documents_short_help(
            "Usage: rg [OPTIONS] PATTERN\n\nOptions:\n  -h, --help    Print help (see more with '--help')\n"
        ));
        assert!(!documents_short_help(
            "Usage: ls [OPTION]... [FILE]...\n  -h, --human-readable  with -l, print sizes like 1K\n      --help     display this help and exit\n"
        ));
    }

    #[test]
    fn a_missing_program_prints_nothing() {
        assert_eq!(run("/nonexistent/ferry-no-such-program", &["--help"]), "");
        assert_eq!(
            for_command("/nonexistent/ferry-no-such-program", "x", &[]),
            None
        );
    }
}
