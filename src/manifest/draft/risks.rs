//! What a draft leaves out, asks about or marks read-only: options that run programs, load
//! configuration or write files; subcommands that delete, overwrite or publish; programs and
//! subcommands that only read. (Which programs run code at all is [`crate::manifest::policy`].)

use super::options::OptionSpec;
use super::params::value_kind;
use crate::manifest::model::ParamKind;

/// Options never drafted because they run other programs, load configuration that can, or
/// write files: `(program, scope, options)`, program `"*"` for any. A trailing `*` matches every
/// option that starts that way; an option is matched by any of its spellings (`-o`, `--output`).
pub const DENIED_OPTIONS: &[(&str, Scope, &[&str])] = &[
    (
        "*",
        Scope::Any,
        &[
            "--output-file",
            "--output-dir",
            "--output-directory",
            "--output-document",
            "--exec",
            "--exec-path",
            "--config",
        ],
    ),
    // These start an editor or wait for a person at a terminal.
    (
        "*",
        Scope::Any,
        &["--edit", "--interactive", "--reedit-message"],
    ),
    // git's own options, before the subcommand (`git -c x=y log`); a subcommand's `-c` is
    // something else (`git switch -c`, `git grep -c`).
    (
        "git",
        Scope::Program,
        &[
            "-c",
            "--config-env",
            "--exec-path",
            "-C",
            "--git-dir",
            "--work-tree",
        ],
    ),
    (
        "git",
        Scope::Any,
        &[
            "--upload-pack",
            "--receive-pack",
            "--output",
            "--output-directory",
            "--ext-diff",
            "--textconv",
            "--template",
        ],
    ),
    ("rg", Scope::Any, &["--pre"]),
    (
        "find",
        Scope::Any,
        &[
            "-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint*", "-fls",
        ],
    ),
    (
        "tar",
        Scope::Any,
        &[
            "--to-command",
            "--use-compress-program",
            "-I",
            "--checkpoint-action",
            "--info-script",
            "--new-volume-script",
            "-F",
            "--rsh-command",
        ],
    ),
    (
        "curl",
        Scope::Any,
        &[
            "-o",
            "--output",
            "-O",
            "--remote-name",
            "-K",
            "--config",
            "-T",
            "--upload-file",
        ],
    ),
    ("rsync", Scope::Any, &["-e", "--rsh"]),
];

/// Which tools of a program a `DENIED_OPTIONS` entry covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Every tool: the program's own and its subcommands'.
    Any,
    /// The program's own options only (its tool when it has no subcommands).
    Program,
}

/// Value names that say the value is a program to run.
pub(super) const RUNS_VALUE_NAMES: &[&str] = &[
    "command",
    "cmd",
    "prog",
    "program",
    "script",
    "exec",
    "executable",
    "shell",
    "hook",
    "editor",
    "pager",
];
/// Words in a long option's name that say its value is a program to run.
pub(super) const RUNS_OPTION_WORDS: &[&str] = &["command", "cmd", "exec", "script", "program"];
/// Phrases in a description that say the value is a program to run.
pub(super) const RUNS_PHRASES: &[&str] = &[
    "execute",
    "command to run",
    "program to run",
    "script to run",
    "run command",
    "run the command",
    "run a command",
    "shell command",
    "external command",
    "program to use",
];
/// Verbs in a description that, with a file or directory, say the option writes one.
pub(super) const WRITES_VERBS: &[&str] = &[
    "write",
    "save",
    "dump",
    "created",
    "create ",
    "generated",
    "copy ",
    "redirect",
    "append to",
];

/// Subcommand words that delete, overwrite or publish: a tool for one is drafted with
/// `confirm`, so a person, not the model, says yes. Its description's first word counts too
/// ("Remove files from the working tree").
pub(super) const CONFIRMED_WORDS: &[(&str, &str)] = &[
    ("rm", "deletes"),
    ("remove", "deletes"),
    ("delete", "deletes"),
    ("del", "deletes"),
    ("prune", "deletes"),
    ("purge", "deletes"),
    ("destroy", "deletes"),
    ("drop", "deletes"),
    ("erase", "deletes"),
    ("wipe", "deletes"),
    ("clean", "deletes"),
    ("rmi", "deletes"),
    ("uninstall", "deletes"),
    ("unpublish", "deletes"),
    ("kill", "stops"),
    ("reset", "overwrites"),
    ("overwrite", "overwrites"),
    ("replace", "overwrites"),
    ("restore", "overwrites"),
    ("publish", "publishes"),
    ("push", "publishes"),
    ("deploy", "publishes"),
    ("upload", "publishes"),
];

/// What a subcommand does that a person should confirm, from its word or its description.
pub(super) fn needs_confirming(word: &str, description: &str) -> Option<&'static str> {
    let first = description
        .split(|c: char| !c.is_ascii_alphabetic())
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .to_ascii_lowercase();
    let word = word.to_ascii_lowercase();
    CONFIRMED_WORDS
        .iter()
        .find(|(w, _)| *w == word || *w == first || first.strip_suffix('s') == Some(*w))
        .map(|(_, what)| *what)
}

/// Subcommands, by program, and programs that only read (their drafted options included),
/// so a tool for them may say `readOnlyHint`. Keyed by program: the same word elsewhere can
/// write (`npm version` edits package.json and tags a commit), and hosts may approve a
/// read-only tool without asking.
pub(super) const READ_ONLY_SUBCOMMANDS: &[(&str, &[&str])] = &[
    (
        "git",
        &[
            "log", "show", "status", "diff", "grep", "blame", "shortlog", "describe",
        ],
    ),
    (
        "docker",
        &[
            "ps", "images", "info", "inspect", "search", "version", "history", "logs", "top",
            "stats",
        ],
    ),
    (
        "podman",
        &[
            "ps", "images", "info", "inspect", "search", "version", "history", "logs", "top",
            "stats",
        ],
    ),
];
pub(super) const READ_ONLY_PROGRAMS: &[&str] = &[
    "rg",
    "grep",
    "egrep",
    "fgrep",
    "ls",
    "cat",
    "head",
    "tail",
    "wc",
    "du",
    "df",
    "tree",
    "diff",
    "cmp",
    "stat",
    "file",
    "jq",
    "sort",
    "uniq",
    "cut",
    "tr",
    "find",
    "base64",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "nl",
    "tac",
    "comm",
    "join",
    "paste",
    "fold",
    "fmt",
    "column",
    "date",
    "seq",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "od",
    "hexdump",
    "xxd",
    "strings",
    "expand",
    "unexpand",
    "numfmt",
    "cksum",
    "b2sum",
    "sum",
    "whoami",
    "id",
    "uname",
    "printenv",
    "pwd",
    "echo",
    "printf",
    "true",
    "false",
    "yq",
    "tsort",
    "shuf",
];

/// Programs that run code they are given (see [`crate::manifest::policy`]) and whose job is to
/// write files: drafted with `writes`, where the other code runners are read-only.
pub(super) const WRITING_CODE_RUNNERS: &[&str] = &["make", "zip"];

/// Programs, and subcommands by program, whose job is the network: drafted with
/// `network = true` and a comment that says so.
pub(super) const NETWORK_PROGRAMS: &[&str] = &[
    "curl",
    "wget",
    "ssh",
    "scp",
    "sftp",
    "rsync",
    "nc",
    "ncat",
    "netcat",
    "telnet",
    "ftp",
    "dig",
    "host",
    "nslookup",
    "ping",
    "ping6",
    "traceroute",
    "aria2c",
    "http",
    "https",
    "xh",
    "whois",
    "mosh",
    "socat",
];
pub(super) const NETWORK_SUBCOMMANDS: &[(&str, &[&str])] = &[
    ("git", &["clone", "fetch", "pull", "push", "ls-remote"]),
    ("docker", &["pull", "push", "login", "search"]),
    ("podman", &["pull", "push", "login", "search"]),
    ("npm", &["install", "view", "search", "publish", "ci"]),
];

pub(super) fn is_help_or_version(spec: &OptionSpec) -> bool {
    match &spec.long {
        Some(long) => {
            let name = long.trim_start_matches('-').to_ascii_lowercase();
            matches!(
                name.as_str(),
                "help" | "version" | "usage" | "long-help" | "manual"
            ) || name.starts_with("help-")
        }
        None => matches!(spec.short, Some('h' | '?' | 'V')),
    }
}

/// Whether `DENIED_OPTIONS` names any spelling of `spec` for `program` (`subcommand`: for a
/// subcommand's tool, not the program's own).
pub(super) fn is_denied(spec: &OptionSpec, program: &str, subcommand: bool) -> bool {
    let short = spec.short.map(|c| format!("-{c}"));
    let spellings: Vec<&str> = spec
        .long
        .iter()
        .map(String::as_str)
        .chain(short.as_deref())
        .collect();
    DENIED_OPTIONS
        .iter()
        .filter(|(p, scope, _)| {
            (*p == "*" || *p == program) && (*scope == Scope::Any || !subcommand)
        })
        .flat_map(|(_, _, list)| list.iter())
        .any(|denied| match denied.strip_suffix('*') {
            Some(prefix) => spellings.iter().any(|s| s.starts_with(prefix)),
            None => spellings.contains(denied),
        })
}

/// Whether a value-taking option, by its name, value name or description, runs a program or
/// writes a file (beyond `DENIED_OPTIONS`, which names the known ones).
pub(super) fn runs_or_writes(spec: &OptionSpec) -> bool {
    let Some(value) = &spec.value else {
        return false;
    };
    let value_word: String = value
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    if RUNS_VALUE_NAMES.contains(&value_word.as_str()) {
        return true;
    }
    if let Some(long) = &spec.long {
        let long = long.to_ascii_lowercase();
        if long
            .trim_start_matches('-')
            .split(['-', '_'])
            .any(|w| RUNS_OPTION_WORDS.contains(&w))
        {
            return true;
        }
    }
    let lower = spec.description.to_ascii_lowercase();
    if RUNS_PHRASES.iter().any(|p| lower.contains(p)) {
        return true;
    }
    // `--output` is a file for some programs and a format for others (kubectl's `-o json`).
    let output = matches!(
        spec.long.as_deref(),
        Some("--output" | "--out" | "--outfile" | "--log-file")
    );
    if output && !(lower.starts_with("format") || lower.contains("output format")) {
        return true;
    }
    let names_file = ["file", " dir", "directory", "folder"]
        .iter()
        .any(|w| lower.contains(w))
        || value_kind(value) == ParamKind::Path;
    names_file && WRITES_VERBS.iter().any(|v| lower.contains(v))
}
