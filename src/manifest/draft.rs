//! Drafts a serve manifest from a command-line program's help text (`ferry serve init <cli>`).
//!
//! The caller runs `<cli> --help` (and `<cli> <sub> --help` for each subcommand found here);
//! nothing in this module runs anything. Help texts follow no standard, so reading them is
//! heuristic: the common layouts (git's parse-options, ripgrep, curl, docker/cobra, Python's
//! argparse, clap, GNU getopt) are read well, and anything else yields less, never a manifest
//! that fails to load. The result is a draft for a person to review: every parameter is
//! optional, and options that run other programs or write files are left out.

use crate::render::text::collapse_whitespace;
use std::collections::HashSet;
use std::fmt::Write as _;

/// One help text: the CLI's own (`path` empty) or a subcommand's (`path = ["log"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpText {
    pub path: Vec<String>,
    pub text: String,
}

/// One option found in a help text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OptionSpec {
    /// The long spelling with its dashes and without `[no-]`: `--max-count`, or `-maxdepth`
    /// for programs whose long options take one dash (find, Go's flag package).
    pub long: Option<String>,
    pub short: Option<char>,
    /// The value's name as the help writes it (`NUM`, `file`, `{a,b}`); `None` for a flag.
    pub value: Option<String>,
    /// The value may be left out (`--color[=WHEN]`), so it must be attached (`--color=auto`):
    /// given as a separate word it would be read as an operand.
    pub optional_value: bool,
    pub description: String,
    /// Allowed values, from `[possible values: a, b]`, a clap `Possible values:` list, or `{a,b,c}`.
    pub choices: Vec<String>,
    pub repeatable: bool,
}

/// Parameters per tool at most, so a draft stays reviewable (the first ones are kept).
pub const MAX_PARAMS: usize = 40;

/// Tools per draft at most (a CLI with hundreds of subcommands gets the first ones).
pub const MAX_TOOLS: usize = 100;

/// Descriptions are cut to about this many characters.
const MAX_DESCRIPTION: usize = 200;

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
const RUNS_VALUE_NAMES: &[&str] = &[
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
const RUNS_OPTION_WORDS: &[&str] = &["command", "cmd", "exec", "script", "program"];
/// Phrases in a description that say the value is a program to run.
const RUNS_PHRASES: &[&str] = &[
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
const WRITES_VERBS: &[&str] = &[
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
const CONFIRMED_WORDS: &[(&str, &str)] = &[
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
fn needs_confirming(word: &str, description: &str) -> Option<&'static str> {
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
const READ_ONLY_SUBCOMMANDS: &[(&str, &[&str])] = &[
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
const READ_ONLY_PROGRAMS: &[&str] = &[
    "rg", "grep", "egrep", "fgrep", "ls", "cat", "head", "tail", "wc", "du", "df", "tree", "diff",
    "cmp", "stat", "file",
];

// ---------------------------------------------------------------------------------------------
// Text and lines

/// The help text as plain text: terminal escapes and man-page overstrikes removed, line ends
/// made `\n`, tabs expanded (to columns of 8) so indentation can be compared.
fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut column = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                _ => {}
            },
            // `X\bX` is bold and `_\bX` underlined in man pages: keep the last character.
            '\x08' => {
                if !out.ends_with('\n') && out.pop().is_some() {
                    column = column.saturating_sub(1);
                }
            }
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                    column = 0;
                }
            }
            '\n' => {
                out.push('\n');
                column = 0;
            }
            '\t' => {
                let n = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', n));
                column += n;
            }
            c if c.is_control() => {}
            c => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// One line: its indentation in columns and its text without surrounding blanks.
#[derive(Debug, Clone, Copy)]
struct Line<'a> {
    indent: usize,
    text: &'a str,
}

fn lines(text: &str) -> Vec<Line<'_>> {
    text.lines()
        .map(|raw| {
            let trimmed = raw.trim_start();
            Line {
                indent: raw.chars().count() - trimmed.chars().count(),
                text: trimmed.trim_end(),
            }
        })
        .collect()
}

/// The text up to its first sentence end (a period followed by a capitalised word).
fn first_sentence(text: &str) -> &str {
    let mut from = 0;
    while let Some(i) = text[from..].find(". ") {
        let end = from + i + 1;
        if text[end..]
            .trim_start()
            .starts_with(|c: char| c.is_uppercase())
        {
            return &text[..end];
        }
        from = end;
    }
    text
}

/// At most `max` characters, cut at a word where possible.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(3)).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!(
        "{}...",
        cut.trim_end_matches(|c: char| c == ',' || c == ';' || c == ':' || c.is_whitespace())
    )
}

/// A one-line description: the first sentence when asked or when the whole is too long.
fn summary(text: &str, sentence: bool) -> String {
    let text = collapse_whitespace(text);
    let first = first_sentence(&text);
    if sentence || text.chars().count() > MAX_DESCRIPTION {
        shorten(first, MAX_DESCRIPTION)
    } else {
        text
    }
}

/// The first line of a usage block: `usage: git log …`, `Usage:`, `USAGE:`, `Usage of prog:`.
fn is_usage(line: &Line) -> bool {
    let lower = line.text.to_ascii_lowercase();
    lower.starts_with("usage:") || (line.indent == 0 && lower.starts_with("usage "))
}

/// A line that is a section heading: `Options:`, `Common Commands:`, `CORE COMMANDS`.
fn is_heading(text: &str) -> bool {
    let words = text.split_whitespace().count();
    if text.starts_with('-') || words == 0 {
        return false;
    }
    let capitals =
        text.chars().any(|c| c.is_alphabetic()) && !text.chars().any(|c| c.is_lowercase());
    (text.ends_with(':') && words <= 10) || (capitals && words <= 5)
}

/// A version banner or author line (`ripgrep 13.0.0`, `Andrew Gallant <a@b.c>`), not a description.
fn is_banner(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let version = |w: &str| {
        let w = w.trim_start_matches('v');
        w.contains('.')
            && w.chars().all(|c| c.is_ascii_digit() || c == '.')
            && w.starts_with(|c: char| c.is_ascii_digit())
    };
    (text.contains('@') && text.contains('<'))
        || lower.starts_with("copyright")
        || text.split_whitespace().take(3).any(version)
}

// ---------------------------------------------------------------------------------------------
// Subcommands

/// Subcommands found in a help text: (name, one-line summary), in the help's order.
///
/// Read from sections whose heading mentions commands (`Commands:`, `Common Commands:`,
/// git's "These are common Git commands…" with its grouped lists, `SUBCOMMANDS:`), and from
/// argparse's `{add,remove} ...` in the usage line. `help` is left out.
pub fn subcommands(help: &str) -> Vec<(String, String)> {
    let text = clean(help);
    let lines = lines(&text);
    let mut found = Found::default();
    let mut in_commands = false;
    let mut entry_indent: Option<usize> = None;
    // The entry a more indented line continues (a wrapped summary).
    let mut last: Option<usize> = None;
    for line in &lines {
        if line.text.is_empty() {
            last = None;
            continue;
        }
        let lower = line.text.to_ascii_lowercase();
        if is_usage(line) {
            in_commands = false;
            last = None;
            continue;
        }
        if in_commands && !line.text.starts_with('-') {
            match entry_indent {
                Some(indent) if line.indent > indent => {
                    if let Some(i) = last {
                        let entry = &mut found.list[i].1;
                        if !entry.is_empty() {
                            entry.push(' ');
                        }
                        entry.push_str(line.text);
                    }
                    continue;
                }
                Some(indent) if line.indent == indent => {
                    last = found.add_all(command_entries(line.text));
                    continue;
                }
                None if line.indent > 0 && !is_heading(line.text) => {
                    let entries = command_entries(line.text);
                    if !entries.is_empty() {
                        entry_indent = Some(line.indent);
                        last = found.add_all(entries);
                    }
                    continue;
                }
                _ => {}
            }
        }
        last = None;
        if is_heading(line.text) && line.indent <= 2 {
            in_commands = lower.contains("command");
            entry_indent = None;
        }
        // Other unindented lines are prose or git's group labels ("start a working area"):
        // a commands section goes on past them.
    }
    for (name, summary) in argparse_subcommands(&lines) {
        found.add(name, summary);
    }
    let mut found = found.list;
    for entry in &mut found {
        entry.1 = summary(&entry.1, true);
    }
    found
}

/// The subcommands found so far.
#[derive(Default)]
struct Found {
    list: Vec<(String, String)>,
    seen: HashSet<String>,
}

impl Found {
    /// Adds a subcommand unless it is `help` or already there; its index when added.
    fn add(&mut self, name: String, summary: String) -> Option<usize> {
        if name == "help" || !self.seen.insert(name.clone()) {
            return None;
        }
        self.list.push((name, summary));
        Some(self.list.len() - 1)
    }

    /// Adds subcommands; the index of the one a wrapped summary would continue.
    fn add_all(&mut self, entries: Vec<(String, String)>) -> Option<usize> {
        let single = entries.len() == 1;
        let mut last = None;
        for (name, summary) in entries {
            last = self.add(name, summary);
        }
        last.filter(|_| single)
    }
}

/// A subcommand name: `log`, `cache:clear`, `run-script`.
fn is_command_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
}

/// One line of a commands list: `  build, b    Compile the package`, gh's `  auth:  …`,
/// apt-get's `  update - Retrieve new lists`, or npm's bare `access, adduser, audit,`.
fn command_entries(text: &str) -> Vec<(String, String)> {
    let (head, rest) = match text.find("  ") {
        Some(i) => (&text[..i], text[i..].trim()),
        None => match text.split_once(" - ") {
            Some((head, rest)) if is_command_name(head) => (head, rest.trim()),
            _ => (text, ""),
        },
    };
    let names: Vec<&str> = head
        .split(',')
        .map(|n| n.trim().trim_end_matches(':'))
        .collect();
    let (last, all) = names
        .split_last()
        .map_or((None, &names[..]), |(l, all)| (Some(*l), all));
    // A trailing comma: a list that goes on on the next line.
    let names: &[&str] = if last == Some("") && !all.is_empty() {
        all
    } else {
        &names
    };
    if names.is_empty() || !names.iter().all(|n| is_command_name(n)) {
        return Vec::new();
    }
    if rest.is_empty() && names.len() > 1 {
        // A bare list of commands, no summaries.
        return names
            .iter()
            .map(|n| (n.to_string(), String::new()))
            .collect();
    }
    // Otherwise the first name is the command and the rest its aliases.
    vec![(names[0].to_string(), rest.to_string())]
}

/// argparse's subcommands: the choices of a `{add,remove} ...` in the usage line, with the
/// summaries its `positional arguments` section lists under them.
fn argparse_subcommands(lines: &[Line]) -> Vec<(String, String)> {
    let mut names = Vec::new();
    for synopsis in synopses(lines) {
        let tokens = synopsis_tokens(&synopsis);
        for pair in tokens.windows(2) {
            if pair[1] == "..." && pair[0].starts_with('{') && pair[0].ends_with('}') {
                let inner = &pair[0][1..pair[0].len() - 1];
                names.extend(
                    inner
                        .split(',')
                        .map(str::trim)
                        .filter(|n| is_command_name(n))
                        .map(str::to_string),
                );
            }
        }
    }
    names
        .into_iter()
        .map(|name| {
            let summary = lines
                .iter()
                .filter(|l| l.indent > 0)
                .flat_map(|l| command_entries(l.text))
                .find(|(n, s)| *n == name && !s.is_empty())
                .map(|(_, s)| s)
                .unwrap_or_default();
            (name, summary)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Usage lines

/// The synopses of the usage lines (`git log [<options>] …`), continuation lines joined.
fn synopses(lines: &[Line]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Inside a usage block: its indentation, and whether indented lines continue the last
    // synopsis (`usage: git [-v]` + `    [--bare]`) or each start one (`USAGE:` + lines).
    let mut block: Option<(usize, bool)> = None;
    for line in lines {
        if line.text.is_empty() {
            block = None;
            continue;
        }
        let lower = line.text.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("usage") {
            // "Usage of prog:" (Go) names no synopsis.
            let Some(rest) = rest.strip_prefix(':') else {
                continue;
            };
            let start = line.text.len() - rest.len();
            let synopsis = line.text[start..].trim();
            if !synopsis.is_empty() {
                out.push(synopsis.to_string());
            }
            block = Some((line.indent, !synopsis.is_empty()));
            continue;
        }
        let Some((indent, continues)) = block else {
            continue;
        };
        if let Some(rest) = lower.strip_prefix("or:") {
            let start = line.text.len() - rest.len();
            out.push(line.text[start..].trim().to_string());
        } else if line.indent > indent {
            match out.last_mut() {
                Some(last) if continues => {
                    last.push(' ');
                    last.push_str(line.text);
                }
                _ => out.push(line.text.to_string()),
            }
        } else {
            block = None;
        }
    }
    out
}

/// A synopsis split into words, bracketed groups kept whole: `[--count N]`, `<a b>`.
fn synopsis_tokens(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut depth = 0usize;
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match c {
            '[' | '<' | '{' | '(' => depth += 1,
            ']' | '>' | '}' | ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if let Some(s) = start.take() {
                tokens.push(&text[s..i]);
            }
        } else if start.is_none() && !c.is_whitespace() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        tokens.push(&text[s..]);
    }
    tokens
}

/// What the usage lines say about operands.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct Usage {
    /// Some synopsis takes operands (`<path>...`, `FILE`, `[port]`).
    positional: bool,
    /// Some synopsis shows `--`.
    dashdash: bool,
    /// find's `[path...] [expression]`: operands come before the options.
    expression: bool,
    /// The operands as the synopses write them (`PATTERN`, `<path>`), for the description.
    operands: Vec<String>,
}

impl Usage {
    fn operand(&mut self, text: &str) {
        self.positional = true;
        if !self.operands.iter().any(|o| o == text) {
            self.operands.push(text.to_string());
        }
    }
}

fn usage(lines: &[Line]) -> Usage {
    let mut usage = Usage::default();
    for synopsis in synopses(lines) {
        let tokens = synopsis_tokens(&synopsis);
        let mut seen_group = false;
        // The first word is the program.
        scan_synopsis(
            tokens.get(1..).unwrap_or(&[]),
            0,
            &mut seen_group,
            &mut usage,
        );
    }
    usage
}

/// `[OPTIONS]`, `<options>`, `[OPTION]...` and the like: options, not operands.
fn is_options_placeholder(token: &str) -> bool {
    let word = token
        .trim_end_matches("...")
        .trim_matches(|c| c == '<' || c == '>')
        .to_ascii_lowercase();
    matches!(
        word.as_str(),
        "options"
            | "option"
            | "flags"
            | "flag"
            | "opts"
            | "global options"
            | "global flags"
            | "switches"
    )
}

/// An operand placeholder written in capitals: `FILE`, `ENV_DIR`, `ARG...`, `N[bcwkMG]`
/// (lower case only inside brackets).
fn is_capital_placeholder(token: &str) -> bool {
    let word = token.trim_end_matches("...");
    let mut depth = 0usize;
    for c in word.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if depth == 0
                && !(c.is_ascii_uppercase() || c.is_ascii_digit() || "_-.:=/|+".contains(c)) =>
            {
                return false
            }
            _ => {}
        }
    }
    word.starts_with(|c: char| c.is_ascii_uppercase())
}

/// Reads a synopsis's words for operands; `depth` counts the brackets around them.
fn scan_synopsis(tokens: &[&str], depth: usize, seen_group: &mut bool, usage: &mut Usage) {
    let in_brackets = depth > 0;
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        i += 1;
        let bare = if token == "..." {
            token
        } else {
            token.trim_end_matches("...")
        };
        let enclosed = |open: char, close: char| {
            bare.len() >= 2 && bare.starts_with(open) && bare.ends_with(close)
        };
        if bare == "--" {
            usage.dashdash = true;
        } else if bare == "..." || bare == "|" || bare.is_empty() {
            // Repetition and alternation marks.
        } else if enclosed('[', ']') || enclosed('(', ')') {
            *seen_group = true;
            let inner = bare[1..bare.len() - 1].trim();
            if inner == "--" {
                usage.dashdash = true;
            } else if inner.trim_start_matches('(').starts_with('-')
                || is_options_placeholder(inner)
            {
                // An option group: `[-h]`, `[--count N]`, `[(-c | -C) <commit>]`.
            } else if depth < 8 {
                // Nested brackets deeper than this are not worth reading (and could be endless).
                scan_synopsis(&synopsis_tokens(inner), depth + 1, seen_group, usage);
            }
        } else if bare.starts_with('-') {
            // An option not in a group of its own (`-e PATTERN`, `[NAME | -l label]`): its value
            // is not an operand.
            let next_is_value = tokens.get(i).is_some_and(|n| {
                n.starts_with('<')
                    || is_capital_placeholder(n)
                    || (in_brackets && n.starts_with(|c: char| c.is_ascii_alphanumeric()))
            });
            if !bare.contains('=') && next_is_value {
                i += 1;
            }
        } else if enclosed('<', '>') || is_capital_placeholder(bare) {
            if !is_options_placeholder(bare) {
                usage.operand(bare);
            }
        } else if enclosed('{', '}') {
            usage.operand(bare);
        } else if in_brackets || *seen_group {
            // A bare word after the program's own words is an operand (`prog [-h] filename`).
            usage.operand(bare);
            if bare.eq_ignore_ascii_case("expression") {
                usage.expression = true;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Options

/// Options found in a help text, in the help's order (help and version options included).
///
/// An option line starts with `-` and lists the option's spellings and value
/// (`-m, --max-count=NUM`, `--count N, -c N`, `-o, --output <file>`, `--[no-]decorate[=...]`,
/// `-f, --filter filter`), then its description, inline or on the following, more indented
/// lines. A line indented to the description column is description even when it starts with
/// `-`.
pub fn options(help: &str) -> Vec<OptionSpec> {
    let text = clean(help);
    let mut out = Vec::new();
    let mut pending: Option<Pending> = None;
    for line in lines(&text) {
        if line.text.is_empty() {
            if let Some(p) = &mut pending {
                p.lines.push(String::new());
            }
            continue;
        }
        if let Some(p) = &mut pending {
            if p.desc_col.is_some_and(|col| line.indent >= col) {
                p.lines.push(line.text.to_string());
                continue;
            }
        }
        if let Some(parsed) = option_line(line.text) {
            if let Some(p) = pending.take() {
                p.finish(&mut out);
            }
            let mut lines = Vec::new();
            if !parsed.description.is_empty() {
                lines.push(parsed.description.to_string());
            }
            pending = Some(Pending {
                specs: parsed.specs,
                indent: line.indent,
                desc_col: (!parsed.description.is_empty())
                    .then_some(line.indent + parsed.desc_offset),
                lines,
            });
            continue;
        }
        match &mut pending {
            Some(p) if line.indent > p.indent => {
                p.desc_col.get_or_insert(line.indent);
                p.lines.push(line.text.to_string());
            }
            _ => {
                if let Some(p) = pending.take() {
                    p.finish(&mut out);
                }
            }
        }
    }
    if let Some(p) = pending {
        p.finish(&mut out);
    }
    out
}

/// An option line being read: its option(s), and the description lines so far.
struct Pending {
    /// One option, or several for find's packed lists (`-amin N -anewer FILE`).
    specs: Vec<OptionSpec>,
    indent: usize,
    /// The column descriptions start at, once known.
    desc_col: Option<usize>,
    /// Description lines; an empty one is a paragraph break.
    lines: Vec<String>,
}

impl Pending {
    fn finish(self, out: &mut Vec<OptionSpec>) {
        let paragraph: Vec<&str> = self
            .lines
            .iter()
            .map(String::as_str)
            .skip_while(|l| l.is_empty())
            .take_while(|l| !l.is_empty())
            .collect();
        let description = summary(&paragraph.join(" "), false);
        let all = collapse_whitespace(&self.lines.join(" "));
        let lower = all.to_ascii_lowercase();
        let choices = description_choices(&self.lines);
        let repeatable = [
            "can be repeated",
            "may be repeated",
            "more than once",
            "multiple times",
        ]
        .iter()
        .any(|p| lower.contains(p));
        // Packed lists (find's `-amin N -anewer FILE`) describe none of their options.
        let description = if self.specs.len() > 1 {
            String::new()
        } else {
            description
        };
        for mut spec in self.specs {
            spec.description = description.clone();
            // cobra's value types for options given once per value.
            spec.repeatable |= matches!(
                spec.value.as_deref(),
                Some("list" | "stringArray" | "strings" | "stringSlice" | "stringToString")
            );
            if spec.choices.is_empty() && spec.value.is_some() {
                spec.choices = choices.clone();
            }
            spec.repeatable |= repeatable;
            out.push(spec);
        }
    }
}

/// Allowed values a description lists: clap's `[possible values: a, b]` or its long help's
/// `Possible values:` followed by `- a: …` lines.
fn description_choices(lines: &[String]) -> Vec<String> {
    let all = collapse_whitespace(&lines.join(" "));
    let lower = all.to_ascii_lowercase();
    let mut values: Vec<String> = Vec::new();
    if let Some(i) = lower.find("[possible values:") {
        let rest = &all[i + "[possible values:".len()..];
        let list = rest.split(']').next().unwrap_or("");
        values = list.split(',').map(|v| v.trim().to_string()).collect();
    } else if let Some(at) = lines.iter().position(|l| {
        l.to_ascii_lowercase()
            .trim_end()
            .ends_with("possible values:")
    }) {
        for line in lines.iter().skip(at + 1) {
            let Some(item) = line
                .trim()
                .strip_prefix("- ")
                .or_else(|| line.trim().strip_prefix("* "))
            else {
                break;
            };
            let end = item
                .find(|c: char| c == ':' || c.is_whitespace())
                .unwrap_or(item.len());
            values.push(item[..end].to_string());
        }
    }
    let valid = |v: &String| {
        !v.is_empty() && v.len() <= 64 && !v.starts_with('-') && !v.contains(char::is_whitespace)
    };
    if values.iter().all(valid) {
        values
    } else {
        Vec::new()
    }
}

/// What an option line holds.
struct OptionLine<'a> {
    specs: Vec<OptionSpec>,
    /// The inline description (may be empty).
    description: &'a str,
    /// Where it starts, in characters from the start of the line's text.
    desc_offset: usize,
}

/// A cursor over one line.
struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }
    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }
    fn peek_second(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }
    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += c.len_utf8();
        }
    }
    /// Consumes `s` when the rest starts with it.
    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }
    /// An option name: letters, digits, `-`, `_`, and `.` between them (`--http1.1`; a
    /// trailing `...` is clap's "repeatable").
    fn name(&mut self) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            let inner_dot = c == '.'
                && self
                    .peek_second()
                    .is_some_and(|n| n.is_ascii_alphanumeric());
            if !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || inner_dot) {
                break;
            }
            self.bump();
        }
        &self.text[start..self.pos]
    }
    /// A word, bracketed parts kept whole (`<fractional seconds>`, `{a,b}`), ending at a blank
    /// or a comma outside brackets.
    fn token(&mut self) -> &'a str {
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                '<' | '[' | '{' | '(' => depth += 1,
                '>' | ']' | '}' | ')' => depth = depth.saturating_sub(1),
                c if depth == 0 && (c.is_whitespace() || c == ',') => break,
                _ => {}
            }
            self.bump();
        }
        &self.text[start..self.pos]
    }
}

/// Parses a line as an option line, or `None` when it is not one.
fn option_line(text: &str) -> Option<OptionLine<'_>> {
    let mut s = Scanner { text, pos: 0 };
    let mut specs = Vec::new();
    let mut spec = OptionSpec::default();
    read_form(&mut s, &mut spec)?;
    loop {
        let save = s.pos;
        // Another spelling of the same option: `-a, --all`, `--count N, -c N`, `-v | --verbose`.
        if s.eat(", ") || s.eat(",") || s.eat(" | ") || s.eat("|") || s.eat("/") {
            let mut next = spec.clone();
            if s.peek() == Some('-') && read_form(&mut s, &mut next).is_some() {
                spec = next;
                continue;
            }
            s.pos = save;
            break;
        }
        // find's packed lists: `-amin N -anewer FILE -atime N`, one blank between options
        // (and a second value word skipped: `-fprintf FILE FORMAT -print`).
        if s.eat(" ") {
            let word = s.token();
            if !(is_capital_placeholder(word) && s.rest().starts_with(" -")) {
                s.pos = save;
            }
        }
        if s.rest().starts_with(" -")
            && s.rest()[2..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            s.bump();
            let mut next = OptionSpec::default();
            if read_form(&mut s, &mut next).is_some() {
                specs.push(std::mem::replace(&mut spec, next));
                continue;
            }
            s.pos = save;
        }
        break;
    }
    specs.push(spec);
    let rest = s.rest();
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let description = rest.trim();
    let desc_offset = text.chars().count() - rest.trim_start().chars().count();
    Some(OptionLine {
        specs,
        description,
        desc_offset,
    })
}

/// Reads one spelling (`-n`, `--max-count=NUM`, `--[no-]quiet`, `-maxdepth LEVELS`) into `spec`.
fn read_form(s: &mut Scanner, spec: &mut OptionSpec) -> Option<()> {
    if s.eat("--") {
        s.eat("[no-]");
        let name = s.name();
        if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return None;
        }
        spec.long.get_or_insert_with(|| format!("--{name}"));
    } else if s.eat("-") {
        let first = s.peek()?;
        if first.is_ascii_alphanumeric() {
            let name = s.name();
            let mut chars = name.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => {
                    spec.short.get_or_insert(c);
                }
                _ => {
                    spec.long.get_or_insert_with(|| format!("-{name}"));
                }
            }
        } else if "#?@:!".contains(first) {
            s.bump();
            spec.short.get_or_insert(first);
        } else {
            return None;
        }
    } else {
        return None;
    }
    match s.peek() {
        None | Some(' ' | ',' | '=' | '[' | '<' | '|' | '/' | '.') => {}
        Some(c) if c.is_whitespace() => {}
        _ => return None,
    }
    read_value(s, spec);
    Some(())
}

/// Reads the value an option spelling shows, if any.
fn read_value(s: &mut Scanner, spec: &mut OptionSpec) {
    if s.peek() == Some('.') {
        // clap's `-v, --verbose...`: a flag given more than once.
        if s.eat("...") {
            spec.repeatable = true;
        }
        return;
    }
    if s.eat("=") {
        let token = s.token();
        match token.strip_suffix(':') {
            // kubectl's `--chunk-size=500:` with the description on the next lines: a default.
            Some(default) if s.rest().trim().is_empty() => kubectl_default(spec, default),
            _ => set_value(spec, token, false),
        }
    } else if s.peek() == Some('[') {
        let token = s.token();
        set_value(spec, token, token.ends_with(']'));
    } else if s.peek() == Some('<') {
        let token = s.token();
        set_value(spec, token, false);
    } else if s.peek() == Some(' ') && s.peek_second().is_some_and(|c| !c.is_whitespace()) {
        let save = s.pos;
        s.bump();
        let token = s.token();
        if is_value_token(token, s.rest()) {
            let optional = token.starts_with('[') && token.ends_with(']');
            set_value(spec, token, optional);
        } else {
            s.pos = save;
            return;
        }
    } else {
        return;
    }
    // argparse's `--foo FOO [FOO ...]`: more than one value.
    let save = s.pos;
    if s.eat(" ") {
        let token = s.token();
        if token.starts_with('[') && token.ends_with("...]") {
            spec.repeatable = true;
            return;
        }
    }
    s.pos = save;
}

/// Whether the word after an option spelling and one blank is its value (not the description).
fn is_value_token(token: &str, after: &str) -> bool {
    let bare = token.trim_end_matches("...");
    match bare.chars().next() {
        Some('<' | '{') => true,
        // argparse's `[BAR]`, clap's `[<NAME>]`; git's `[(amend|reword):]commit` alone on its line.
        // A bracket with a word after it (`[-/]MODE`) is a value too.
        Some('[') => {
            !bare.ends_with(']')
                || !bare[1..].starts_with('-')
                || after.is_empty()
                || after.starts_with("  ")
        }
        Some(c) if c.is_ascii_uppercase() => is_capital_placeholder(bare),
        // docker's `--format string` and Go's `-name string`: a lower-case word, then the
        // description after two blanks (or python's ` : `).
        Some(c) if c.is_ascii_lowercase() => {
            bare.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                && (after.is_empty()
                    || after.starts_with("  ")
                    || after.starts_with(',')
                    || after.starts_with(" : "))
        }
        _ => false,
    }
}

/// Reads kubectl's `--name=DEFAULT:`: `false`/`true` make a flag; otherwise the default says
/// what the value is.
fn kubectl_default(spec: &mut OptionSpec, default: &str) {
    if spec.value.is_some() || default == "true" || default == "false" {
        return;
    }
    let value = if default.parse::<i64>().is_ok() {
        "int"
    } else if default.parse::<f64>().is_ok() {
        "float"
    } else if default == "[]" {
        spec.repeatable = true;
        "list"
    } else {
        "string"
    };
    spec.value = Some(value.to_string());
}

/// Records the value shown by `token` (`=NUM`, `<file>`, `[=WHEN]`, `{a,b}`, `<SPEC>...`).
fn set_value(spec: &mut OptionSpec, token: &str, optional: bool) {
    let mut word = token;
    let mut repeat = |w: &mut &str| {
        if *w != "..." {
            if let Some(stripped) = w.strip_suffix("...") {
                *w = stripped;
                spec.repeatable = true;
            }
        }
    };
    repeat(&mut word);
    if optional {
        word = word
            .strip_prefix('[')
            .and_then(|w| w.strip_suffix(']'))
            .unwrap_or(word);
    }
    word = word.strip_prefix('=').unwrap_or(word);
    repeat(&mut word);
    if let Some(inner) = word.strip_prefix('<').and_then(|w| w.strip_suffix('>')) {
        word = inner;
    }
    if let Some(inner) = word.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
        if spec.choices.is_empty() {
            spec.choices = inner
                .split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect();
        }
    }
    if spec.value.is_none() {
        // `--decorate[=...]` names no value.
        let name = if word.is_empty() || word == "..." {
            "VALUE"
        } else {
            word
        };
        spec.value = Some(name.to_string());
        spec.optional_value = optional;
    }
}

// ---------------------------------------------------------------------------------------------
// Drafting

/// The kind of a drafted parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    String,
    Integer,
    Number,
    Path,
    Boolean,
    /// An array of strings (the operands).
    Strings,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Integer => "integer",
            Kind::Number => "number",
            Kind::Path => "path",
            Kind::Boolean => "boolean",
            Kind::Strings => "array",
        }
    }
}

/// One element of a command template, its text already in template syntax.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Element {
    Word(String),
    Group(Vec<String>),
}

/// One drafted parameter and the element it renders as.
#[derive(Debug, Clone)]
struct Param {
    name: String,
    kind: Kind,
    description: String,
    choices: Vec<String>,
    flag: Option<String>,
    element: Element,
}

/// The parameter kind a value name suggests.
fn value_kind(value: &str) -> Kind {
    if value.contains(|c: char| "|:,=[]{}+?()".contains(c)) {
        return Kind::String;
    }
    let word: String = value
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    let integers = [
        "n", "num", "number", "int", "integer", "count", "lines", "level", "levels", "depth",
        "port", "jobs", "limit", "max", "min", "width", "cols", "columns", "int8", "int16",
        "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
    ];
    let numbers = [
        "seconds",
        "secs",
        "sec",
        "float",
        "float32",
        "float64",
        "fractionalseconds",
        "decimal",
    ];
    if integers.contains(&word.as_str()) {
        Kind::Integer
    } else if numbers.contains(&word.as_str()) {
        Kind::Number
    } else if (word.ends_with("file") && word != "profile")
        || word.ends_with("filename")
        || word.ends_with("path")
        || word.ends_with("dir")
        || word.ends_with("directory")
        || word == "folder"
        || word == "archive"
    {
        Kind::Path
    } else {
        Kind::String
    }
}

/// The program's own name: `/usr/bin/git` → `git`.
fn program_base(program: &str) -> &str {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let base = base.strip_suffix(".exe").unwrap_or(base);
    if base.is_empty() {
        program
    } else {
        base
    }
}

fn is_help_or_version(spec: &OptionSpec) -> bool {
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
fn is_denied(spec: &OptionSpec, program: &str, subcommand: bool) -> bool {
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
fn runs_or_writes(spec: &OptionSpec) -> bool {
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
        || value_kind(value) == Kind::Path;
    names_file && WRITES_VERBS.iter().any(|v| lower.contains(v))
}

/// A parameter name for an option: `--max-count` → `max-count`, `-n` → `n`.
fn param_name(spec: &OptionSpec) -> Option<String> {
    let raw = match (&spec.long, spec.short) {
        (Some(long), _) => long.trim_start_matches('-').to_string(),
        (None, Some(c)) if c.is_ascii_alphanumeric() => c.to_string(),
        _ => return None,
    };
    let name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.chars().all(|c| c == '_' || c == '-') {
        None
    } else if name.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        Some(format!("opt_{name}"))
    } else {
        Some(name)
    }
}

/// The parameter for an option, or `None` when it cannot be drafted.
fn option_param(spec: &OptionSpec, name: String) -> Option<Param> {
    let spelled = match (&spec.long, spec.short) {
        (Some(long), _) => long.clone(),
        (None, Some(c)) => format!("-{c}"),
        (None, None) => return None,
    };
    if spelled.contains(['{', '}']) || spelled.contains(char::is_whitespace) {
        return None;
    }
    let shown = match &spec.value {
        Some(v) if spec.optional_value => format!("{spelled}[={v}]"),
        Some(v) => format!("{spelled} {v}"),
        None => spelled.clone(),
    };
    let description = if spec.description.is_empty() {
        shown
    } else {
        spec.description.clone()
    };
    let Some(value) = &spec.value else {
        return Some(Param {
            element: Element::Word(format!("{{{name}}}")),
            flag: Some(spelled),
            name,
            kind: Kind::Boolean,
            description,
            choices: Vec::new(),
        });
    };
    let choices: Vec<String> = dedup(
        spec.choices
            .iter()
            .filter(|c| !c.is_empty() && !c.starts_with('-'))
            .cloned(),
    );
    let kind = if choices.is_empty() {
        value_kind(value)
    } else if choices
        .iter()
        .all(|c| c.parse::<i64>().is_ok_and(|n| n.to_string() == *c))
    {
        // Only choices written as TOML writes them (`0644` or `+1` stay text: the program
        // is given what it listed, and the draft still loads).
        Kind::Integer
    } else {
        Kind::String
    };
    let placeholder = format!("{{{name}}}");
    let element = if !spec.optional_value {
        Element::Group(vec![spelled, placeholder])
    } else if spelled.starts_with("--") {
        // An optional value must be attached: given apart it would be an operand.
        Element::Word(format!("{spelled}={placeholder}"))
    } else if spelled.chars().count() == 2 {
        Element::Word(format!("{spelled}{placeholder}"))
    } else {
        Element::Group(vec![spelled, placeholder])
    };
    Some(Param {
        name,
        kind,
        description,
        choices,
        flag: None,
        element,
    })
}

fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items.filter(|i| seen.insert(i.clone())).collect()
}

/// A tool name: 1-128 of `[A-Za-z0-9_.-]`.
fn tool_name(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    if name.is_empty() {
        "tool".to_string()
    } else {
        name
    }
}

/// A TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML key, quoted unless bare.
fn toml_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_string()
    } else {
        toml_string(key)
    }
}

/// A fixed word of a command template (braces doubled).
fn template_word(word: &str) -> String {
    word.replace('{', "{{").replace('}', "}}")
}

/// A TOML comment, wrapped at about 100 columns; no line breaks or control characters get in.
fn comment(out: &mut String, text: &str) {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + word.chars().count() > 96 {
            let _ = writeln!(out, "# {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(out, "# {line}");
}

/// The first line of a help text that describes the program, for a tool's description.
fn help_summary(text: &str) -> Option<String> {
    let lines = lines(text);
    let mut in_usage = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.text.is_empty() {
            in_usage = false;
            continue;
        }
        let lower = line.text.to_ascii_lowercase();
        if is_usage(&line) {
            in_usage = true;
            continue;
        }
        if in_usage && (line.indent > 0 || lower.starts_with("or:")) {
            continue;
        }
        in_usage = false;
        // Sections and options come after any description.
        if line.text.ends_with(':') || line.text.starts_with('-') {
            return None;
        }
        if is_banner(line.text) {
            continue;
        }
        let mut parts = vec![line.text];
        while let Some(next) = lines.get(i) {
            if next.text.is_empty()
                || next.indent != line.indent
                || next.text.ends_with(':')
                || next.text.starts_with('-')
            {
                break;
            }
            parts.push(next.text);
            i += 1;
        }
        let text = summary(&parts.join(" "), true);
        if !text.is_empty() {
            return Some(text);
        }
    }
    None
}

/// One tool to draft.
struct Plan<'a> {
    /// The subcommand words after the program.
    path: Vec<String>,
    /// The summary the parent's command list gives.
    summary: String,
    help: Option<&'a str>,
}

/// The manifest text. `program` is the CLI as given (e.g. "git"); `helps[0]` is its own
/// help; further entries are subcommands' helps (the caller ran `<cli> <sub> --help` for each
/// name `subcommands()` returned).
pub fn draft(program: &str, helps: &[HelpText]) -> String {
    let program = match program.trim() {
        "" => "program",
        p => p,
    };
    let base = program_base(program);
    let top = helps.iter().find(|h| h.path.is_empty());
    let subs = top.map(|h| subcommands(&h.text)).unwrap_or_default();
    let mut plans: Vec<Plan> = Vec::new();
    if subs.is_empty() {
        plans.push(Plan {
            path: Vec::new(),
            summary: String::new(),
            help: top.map(|h| h.text.as_str()),
        });
    }
    for (name, summary) in subs {
        let help = helps
            .iter()
            .find(|h| h.path.len() == 1 && h.path[0] == name)
            .map(|h| h.text.as_str());
        plans.push(Plan {
            path: vec![name],
            summary,
            help,
        });
    }
    // Deeper helps the caller read too (`docker container ls`).
    for help in helps.iter().filter(|h| !h.path.is_empty()) {
        if !plans.iter().any(|p| p.path == help.path) {
            plans.push(Plan {
                path: help.path.clone(),
                summary: String::new(),
                help: Some(&help.text),
            });
        }
    }

    let mut out = String::new();
    comment(&mut out, &format!("ferry serve manifest for `{program}`, drafted by `ferry serve init` from `{program} --help`."));
    comment(
        &mut out,
        "This is a draft. Review it before serving: check each description, drop the tools and",
    );
    comment(&mut out, "parameters a model should not have, and tighten types (enum, pattern, minimum) where you can.");
    comment(
        &mut out,
        "Options that run other programs or write files were left out on purpose.",
    );
    comment(
        &mut out,
        "Each command runs in a kernel sandbox: it reads the system and the roots, writes only",
    );
    comment(
        &mut out,
        "what `writes` says (nothing when read-only), runs only its own program unless `exec`",
    );
    comment(
        &mut out,
        "names more, and reaches the network only with `network = true`.",
    );
    if super::policy::runs_code(base).is_some() {
        comment(
            &mut out,
            &format!("Careful: `{base}` can run code or commands it is given (scripts, arguments); serve it only if a model may do that."),
        );
    }
    out.push('\n');
    out.push_str("[server]\n");
    let _ = writeln!(out, "name = {}", toml_string(base));
    let instructions =
        format!("Drafted by ferry serve init from `{program} --help`; review before serving.");
    let _ = writeln!(out, "instructions = {}", toml_string(&instructions));
    out.push_str("roots = [\".\"]\ntimeout = 30\n");

    if plans.len() > MAX_TOOLS {
        let rest: Vec<String> = plans[MAX_TOOLS..]
            .iter()
            .map(|p| p.path.join(" "))
            .collect();
        let shown: Vec<&str> = rest.iter().map(String::as_str).take(50).collect();
        let more = if rest.len() > shown.len() {
            ", ..."
        } else {
            ""
        };
        out.push('\n');
        comment(
            &mut out,
            &format!(
                "{} more subcommands were not drafted (at most {MAX_TOOLS} tools): {}{more}",
                rest.len(),
                shown.join(", ")
            ),
        );
        plans.truncate(MAX_TOOLS);
    }
    let mut names: HashSet<String> = HashSet::new();
    let mut drafted = 0;
    for plan in &plans {
        let words: Vec<&str> = std::iter::once(program)
            .chain(plan.path.iter().map(String::as_str))
            .collect();
        let shown = words.join(" ");
        let help = plan.help.map(clean);
        if !plan.path.is_empty() {
            if let Some(text) = &help {
                let nested = subcommands(text);
                if !nested.is_empty() {
                    let list: Vec<&str> = nested.iter().map(|(n, _)| n.as_str()).take(12).collect();
                    let more = if nested.len() > list.len() {
                        ", ..."
                    } else {
                        ""
                    };
                    out.push('\n');
                    comment(&mut out, &format!("`{shown}` has subcommands of its own ({}{more}); add tools for the ones you need.", list.join(", ")));
                    continue;
                }
            }
        }
        let mut name = tool_name(&if plan.path.is_empty() {
            base.to_string()
        } else {
            plan.path.join("_")
        });
        if names.contains(&name) {
            let mut n = 2;
            while names.contains(&format!("{name}_{n}")) {
                n += 1;
            }
            name = format!("{name}_{n}");
        }
        names.insert(name.clone());
        drafted += 1;
        let description = Some(plan.summary.clone())
            .filter(|s| !s.is_empty())
            .or_else(|| help.as_deref().and_then(help_summary))
            .unwrap_or_else(|| format!("Run `{shown}`"));
        write_tool(&mut out, &name, &description, &words, base, help.as_deref());
    }
    if drafted == 0 {
        // Every subcommand had subcommands of its own: still draft something that loads.
        let description = top
            .and_then(|h| help_summary(&clean(&h.text)))
            .unwrap_or_else(|| format!("Run `{program}`"));
        write_tool(
            &mut out,
            &tool_name(base),
            &description,
            &[program],
            base,
            None,
        );
    }
    out
}

/// Writes one `[[tools]]` table and its parameters.
fn write_tool(
    out: &mut String,
    name: &str,
    description: &str,
    words: &[&str],
    base: &str,
    help: Option<&str>,
) {
    let shown = words.join(" ");
    let lines = help.map(lines).unwrap_or_default();
    let usage = usage(&lines);
    let options = help.map(options).unwrap_or_default();

    let mut params: Vec<Param> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    let mut left_out: Vec<String> = Vec::new();
    let mut cut: Vec<String> = Vec::new();
    let room = MAX_PARAMS - usize::from(usage.positional);
    for spec in &options {
        if is_help_or_version(spec) {
            continue;
        }
        let spelled = match (spec.short, &spec.long) {
            (Some(c), Some(long)) => format!("-{c}/{long}"),
            (Some(c), None) => format!("-{c}"),
            (None, Some(long)) => long.clone(),
            (None, None) => continue,
        };
        if is_denied(spec, base, words.len() > 1) || runs_or_writes(spec) {
            if !left_out.contains(&spelled) {
                left_out.push(spelled);
            }
            continue;
        }
        // A capitalised single-dash name is a placeholder (grep's `-NUM`), not an option.
        if spec
            .long
            .as_deref()
            .is_some_and(|l| !l.starts_with("--") && !l.chars().any(|c| c.is_lowercase()))
        {
            continue;
        }
        let Some(param_name) = param_name(spec) else {
            continue;
        };
        if taken.contains(&param_name) {
            continue;
        }
        if params.len() >= room {
            cut.push(spelled);
            continue;
        }
        if let Some(param) = option_param(spec, param_name.clone()) {
            taken.insert(param_name);
            params.push(param);
        }
    }
    let dashdash = usage.dashdash
        || options
            .iter()
            .any(|o| o.long.as_deref().is_some_and(|l| l.starts_with("--")));
    let operands = usage.positional.then(|| {
        let name = ["args", "arguments", "operands", "rest"]
            .iter()
            .map(|n| n.to_string())
            .chain((1..).map(|n| format!("args_{n}")))
            .find(|n| !taken.contains(n))
            .unwrap_or_default();
        let after = if dashdash && !usage.expression {
            " (after --)"
        } else {
            ""
        };
        let shown: Vec<&str> = usage.operands.iter().map(String::as_str).take(6).collect();
        let placeholder = format!("{{{name}*}}");
        Param {
            element: if dashdash && !usage.expression {
                Element::Group(vec!["--".to_string(), placeholder])
            } else {
                Element::Word(placeholder)
            },
            name,
            kind: Kind::Strings,
            description: shorten(
                &format!("Further arguments{after}: {}", shown.join(", ")),
                MAX_DESCRIPTION,
            ),
            choices: Vec::new(),
            flag: None,
        }
    });

    out.push('\n');
    if help.is_none() {
        comment(
            out,
            &format!("No help text for `{shown}` was read: add its parameters by hand."),
        );
    }
    if !left_out.is_empty() {
        comment(
            out,
            &format!(
                "Left out on purpose (they run programs or write files): {}",
                left_out.join(", ")
            ),
        );
    }
    if !cut.is_empty() {
        comment(
            out,
            &format!(
                "{} more options of `{shown}` were left out to keep this tool reviewable (at most {MAX_PARAMS} parameters): {}",
                cut.len(),
                cut.join(", ")
            ),
        );
    }
    out.push_str("[[tools]]\n");
    let _ = writeln!(out, "name = {}", toml_string(name));
    let _ = writeln!(out, "description = {}", toml_string(description));

    // Find takes its operands (paths) before its expression.
    let mut ordered: Vec<&Param> = Vec::new();
    if usage.expression {
        ordered.extend(operands.iter());
    }
    ordered.extend(params.iter());
    if !usage.expression {
        ordered.extend(operands.iter());
    }
    out.push_str("command = [\n");
    for word in words {
        let _ = writeln!(out, "  {},", toml_string(&template_word(word)));
    }
    for param in &ordered {
        match &param.element {
            Element::Word(text) => {
                let _ = writeln!(out, "  {},", toml_string(text));
            }
            Element::Group(items) => {
                let items: Vec<String> = items.iter().map(|i| toml_string(i)).collect();
                let _ = writeln!(out, "  [{}],", items.join(", "));
            }
        }
    }
    out.push_str("]\n");
    let last_word = words.last().copied().unwrap_or_default();
    let read_only = if words.len() > 1 {
        READ_ONLY_SUBCOMMANDS
            .iter()
            .any(|(program, subs)| *program == base && subs.contains(&last_word))
    } else {
        READ_ONLY_PROGRAMS.contains(&base)
    };
    if read_only {
        // The sandbox lets a read-only tool write nothing: no `writes` needed.
        out.push_str("annotations = { readOnlyHint = true }\n");
    } else {
        out.push_str("writes = [\".\"]                   # the roots; narrow to what it writes\n");
    }
    if words.len() > 1 && !read_only {
        if let Some(what) = needs_confirming(last_word, description) {
            let _ = writeln!(
                out,
                "confirm = {}   # a person says yes first",
                toml_string(&format!("Run `{shown}`? It {what}."))
            );
        }
    }
    let exit_one = super::policy::ok_exit(last_word).len() > 1
        || (words.len() == 1 && super::policy::ok_exit(base).len() > 1);
    out.push_str(if exit_one {
        "ok_exit = [0, 1]\n"
    } else {
        "ok_exit = [0]\n"
    });

    for param in &ordered {
        out.push('\n');
        let _ = writeln!(out, "[tools.params.{}]", toml_key(&param.name));
        let _ = writeln!(out, "type = {}", toml_string(param.kind.name()));
        if param.kind == Kind::Strings {
            out.push_str("items = \"string\"\n");
        }
        if !param.description.is_empty() {
            let _ = writeln!(out, "description = {}", toml_string(&param.description));
        }
        if let Some(flag) = &param.flag {
            let _ = writeln!(out, "flag = {}", toml_string(flag));
        }
        if !param.choices.is_empty() {
            let values: Vec<String> = match param.kind {
                // Integer choices are checked to parse as integers: written bare.
                Kind::Integer => param.choices.clone(),
                _ => param.choices.iter().map(|c| toml_string(c)).collect(),
            };
            let _ = writeln!(out, "enum = [{}]", values.join(", "));
        }
        out.push_str("required = false\n");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, HashSet};
    use toml::Value;

    // -----------------------------------------------------------------------------------------
    // A checker for drafts: the rules ferry's manifest loader enforces, restated.

    use super::super::{PARAM_KEYS, SERVER_KEYS, TOOL_KEYS};

    /// One checked tool: its command as JSON-ish text and its params by name.
    #[derive(Debug)]
    struct Tool {
        name: String,
        description: String,
        command: Vec<Value>,
        params: BTreeMap<String, toml::Table>,
        table: toml::Table,
    }

    impl Tool {
        fn param(&self, name: &str) -> &toml::Table {
            self.params.get(name).unwrap_or_else(|| {
                panic!(
                    "tool {} has no param {name}: {:?}",
                    self.name,
                    self.params.keys()
                )
            })
        }
        fn kind(&self, name: &str) -> &str {
            self.param(name)["type"].as_str().unwrap_or_default()
        }
        /// The command as TOML text, for substring checks.
        fn command_text(&self) -> String {
            Value::Array(self.command.clone()).to_string()
        }
    }

    fn only_keys(table: &toml::Table, allowed: &[&str], what: &str) {
        for key in table.keys() {
            assert!(
                allowed.contains(&key.as_str()),
                "{what} has key {key:?}, not one of {allowed:?}"
            );
        }
    }

    fn valid_param_name(name: &str) -> bool {
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            && !name.starts_with(|c: char| c.is_ascii_digit() || c == '-')
    }

    /// The placeholders of one command element as ferry's template parser reads them:
    /// (name, spread); panics where the parser would refuse the element.
    fn placeholders(text: &str) -> Vec<(String, bool)> {
        let chars: Vec<char> = text.chars().collect();
        let mut found = Vec::new();
        let mut literal = false;
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '{' if chars.get(i + 1) == Some(&'{') => {
                    literal = true;
                    i += 2;
                }
                '}' if chars.get(i + 1) == Some(&'}') => {
                    literal = true;
                    i += 2;
                }
                '{' => {
                    let end = chars[i + 1..]
                        .iter()
                        .position(|&c| c == '}')
                        .unwrap_or_else(|| panic!("{text:?}: '{{' with no '}}'"));
                    let inner: String = chars[i + 1..i + 1 + end].iter().collect();
                    let (name, star) = match inner.strip_suffix('*') {
                        Some(n) => (n.to_string(), true),
                        None => (inner.clone(), false),
                    };
                    assert!(
                        !name.is_empty()
                            && name
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                            && !name.starts_with(|c: char| c.is_ascii_digit()),
                        "{text:?}: placeholder {{{inner}}} is not a parameter name"
                    );
                    found.push((name, star));
                    i += end + 2;
                }
                '}' => panic!("{text:?}: '}}' with no '{{'"),
                _ => {
                    literal = true;
                    i += 1;
                }
            }
        }
        if found.iter().any(|(_, star)| *star) {
            assert!(
                found.len() == 1 && !literal,
                "{text:?}: a spread must be a whole element"
            );
        }
        found
    }

    fn walk_command(items: &[Value], top: bool, out: &mut Vec<(String, bool)>) {
        for (i, item) in items.iter().enumerate() {
            match item {
                Value::String(s) => {
                    let named = placeholders(s);
                    if top && i == 0 {
                        assert!(
                            !s.is_empty() && named.is_empty(),
                            "the command must start with a fixed program, not {s:?}"
                        );
                    }
                    out.extend(named);
                }
                Value::Array(inner) => {
                    assert!(
                        !(top && i == 0),
                        "the command must start with a fixed program, not a group"
                    );
                    assert!(
                        !inner.is_empty(),
                        "an optional group must hold at least one element"
                    );
                    walk_command(inner, false, out);
                }
                other => panic!("command elements are strings or arrays, not {other:?}"),
            }
        }
    }

    /// Checks a draft against the loader's rules (and this module's promises); its tools.
    fn check(text: &str) -> Vec<Tool> {
        // The loader `ferry serve` runs is the judge; the checks below are this module's own.
        if let Err(e) = super::super::parse(text, std::path::Path::new("draft.toml")) {
            panic!("the draft does not load: {e:?}\n{text}");
        }
        let doc: toml::Table =
            toml::from_str(text).unwrap_or_else(|e| panic!("not valid TOML: {e}\n{text}"));
        only_keys(&doc, &["server", "tools"], "the manifest");
        let server = doc
            .get("server")
            .and_then(Value::as_table)
            .expect("a [server] table");
        only_keys(server, &SERVER_KEYS, "[server]");
        assert!(server
            .get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty()));
        assert!(server.get("instructions").and_then(Value::as_str).is_some());
        assert_eq!(
            server.get("roots"),
            Some(&Value::Array(vec![Value::String(".".into())]))
        );
        assert_eq!(server.get("timeout").and_then(Value::as_integer), Some(30));
        let tools = doc
            .get("tools")
            .and_then(Value::as_array)
            .expect("[[tools]]");
        assert!(!tools.is_empty(), "no tools");
        let mut names = HashSet::new();
        let mut out = Vec::new();
        for tool in tools {
            let table = tool.as_table().expect("each tool is a table");
            only_keys(table, &TOOL_KEYS, "a tool");
            let name = table
                .get("name")
                .and_then(Value::as_str)
                .expect("a tool name")
                .to_string();
            assert!(
                !name.is_empty()
                    && name.len() <= 128
                    && name
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)),
                "bad tool name {name:?}"
            );
            assert!(names.insert(name.clone()), "a second tool named {name:?}");
            let description = table
                .get("description")
                .and_then(Value::as_str)
                .expect("a description")
                .to_string();
            assert!(
                !description.trim().is_empty(),
                "tool {name}: empty description"
            );
            assert!(
                !description.contains('\n') && description.chars().count() <= MAX_DESCRIPTION + 3,
                "tool {name}: {description:?}"
            );
            let command = table
                .get("command")
                .and_then(Value::as_array)
                .expect("a command array")
                .clone();
            assert!(!command.is_empty());
            let mut named = Vec::new();
            walk_command(&command, true, &mut named);
            let empty = toml::Table::new();
            let params = table
                .get("params")
                .map(|p| p.as_table().expect("params is a table"))
                .unwrap_or(&empty);
            assert!(
                params.len() <= MAX_PARAMS,
                "tool {name}: {} params",
                params.len()
            );
            let mut checked = BTreeMap::new();
            for (pname, param) in params {
                assert!(
                    valid_param_name(pname),
                    "tool {name}: bad param name {pname:?}"
                );
                let param = param.as_table().expect("a param table");
                only_keys(param, &PARAM_KEYS, "a param");
                let kind = param
                    .get("type")
                    .and_then(Value::as_str)
                    .expect("a param type");
                assert!(
                    ["string", "integer", "number", "boolean", "path", "array"].contains(&kind),
                    "type {kind}"
                );
                assert_eq!(
                    param.get("required"),
                    Some(&Value::Boolean(false)),
                    "{name}.{pname} must say required = false"
                );
                assert!(!param.contains_key("allow_dash") && !param.contains_key("default"));
                assert_eq!(
                    param.contains_key("items"),
                    kind == "array",
                    "{name}.{pname}: items goes with arrays"
                );
                if kind == "array" {
                    assert_eq!(param.get("items").and_then(Value::as_str), Some("string"));
                }
                if let Some(flag) = param.get("flag") {
                    let flag = flag.as_str().expect("flag is a string");
                    assert!(
                        kind == "boolean"
                            && flag.starts_with('-')
                            && !flag.contains(char::is_whitespace),
                        "{name}.{pname}: flag {flag:?}"
                    );
                }
                assert!(!param.contains_key("exists") || kind == "path");
                if let Some(values) = param.get("enum") {
                    let values = values.as_array().expect("enum is an array");
                    assert!(!values.is_empty());
                    match kind {
                        "string" => assert!(values.iter().all(Value::is_str)),
                        "integer" => assert!(values.iter().all(Value::is_integer)),
                        other => panic!("{name}.{pname}: enum on a {other}"),
                    }
                }
                if let Some(d) = param.get("description") {
                    let d = d.as_str().expect("description is a string");
                    assert!(!d.trim().is_empty() && !d.contains('\n'));
                }
                checked.insert(pname.clone(), param.clone());
            }
            for (placeholder, spread) in &named {
                let param = checked
                    .get(placeholder)
                    .unwrap_or_else(|| panic!("tool {name}: {{{placeholder}}} is not a param"));
                let is_array = param["type"].as_str() == Some("array");
                assert_eq!(
                    *spread, is_array,
                    "tool {name}: {placeholder} spread/array mismatch"
                );
            }
            for pname in checked.keys() {
                assert!(
                    named.iter().any(|(n, _)| n == pname),
                    "tool {name}: param {pname} is not in the command"
                );
            }
            if let Some(a) = table.get("annotations") {
                assert!(a.is_table());
            }
            let ok_exit = table
                .get("ok_exit")
                .and_then(Value::as_array)
                .expect("ok_exit");
            assert!(
                !ok_exit.is_empty()
                    && ok_exit
                        .iter()
                        .all(|c| c.as_integer().is_some_and(|c| (0..=255).contains(&c)))
            );
            out.push(Tool {
                name,
                description,
                command,
                params: checked,
                table: table.clone(),
            });
        }
        out
    }

    fn help(path: &[&str], text: &str) -> HelpText {
        HelpText {
            path: path.iter().map(|s| s.to_string()).collect(),
            text: text.to_string(),
        }
    }

    fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
        tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
    }

    fn find<'a>(options: &'a [OptionSpec], long: &str) -> &'a OptionSpec {
        options
            .iter()
            .find(|o| o.long.as_deref() == Some(long))
            .unwrap_or_else(|| panic!("no option {long}"))
    }

    fn flag(long: Option<&str>, short: Option<char>, description: &str) -> OptionSpec {
        OptionSpec {
            long: long.map(str::to_string),
            short,
            description: description.to_string(),
            ..OptionSpec::default()
        }
    }

    fn valued(
        long: Option<&str>,
        short: Option<char>,
        value: &str,
        description: &str,
    ) -> OptionSpec {
        OptionSpec {
            value: Some(value.to_string()),
            ..flag(long, short, description)
        }
    }

    // -----------------------------------------------------------------------------------------
    // git: `git --help` lists commands in groups; the caller passes `git <sub> -h`.

    const GIT_TOP: &str = r##"usage: git [-v | --version] [-h | --help] [-C <path>] [-c <name>=<value>]
           [--exec-path[=<path>]] [--html-path] [--man-path] [--info-path]
           [-p | --paginate | -P | --no-pager] [--no-replace-objects] [--no-lazy-fetch]
           [--no-optional-locks] [--no-advice] [--bare] [--git-dir=<path>]
           [--work-tree=<path>] [--namespace=<name>] [--config-env=<name>=<envvar>]
           <command> [<args>]

These are common Git commands used in various situations:

start a working area (see also: git help tutorial)
   clone     Clone a repository into a new directory
   init      Create an empty Git repository or reinitialize an existing one

work on the current change (see also: git help everyday)
   add       Add file contents to the index
   mv        Move or rename a file, a directory, or a symlink

examine the history and state (see also: git help revisions)
   diff      Show changes between commits, commit and working tree, etc
   grep      Print lines matching a pattern
   log       Show commit logs
   status    Show the working tree status

grow, mark and tweak your common history
   commit    Record changes to the repository

'git help -a' and 'git help -g' list available subcommands and some
concept guides. See 'git help <command>' or 'git help <concept>'
to read about a specific subcommand or concept.
See 'git help git' for an overview of the system.
"##;

    const GIT_LOG: &str = r##"usage: git log [<options>] [<revision-range>] [[--] <path>...]
   or: git show [<options>] <object>...

    -q, --[no-]quiet      suppress diff output
    --[no-]source         show source
    --[no-]use-mailmap    use mail map file
    --[no-]decorate-refs <pattern>
                          only decorate refs that match <pattern>
    --[no-]decorate[=...] decorate options
    -L <range:file>       trace the evolution of line range <start>,<end> or function :<funcname> in <file>
    --output <file>       output to a specific file
    --ext-diff            allow an external diff helper to be executed

"##;

    const GIT_COMMIT: &str = r##"usage: git commit [-a | --interactive | --patch] [-s] [-v] [-u<mode>] [--amend]
                  [--dry-run] [(-c | -C | --squash) <commit> | --fixup [(amend|reword):]<commit>]
                  [-F <file> | -m <msg>] [--reset-author] [--allow-empty]
                  [--] [<pathspec>...]

    -q, --[no-]quiet      suppress summary after successful commit
    -v, --[no-]verbose    show diff in commit message template

Commit message options
    -F, --[no-]file <file>
                          read message from file
    --[no-]author <author>
                          override author for commit
    -m, --[no-]message <message>
                          commit message
    -c, --[no-]reedit-message <commit>
                          reuse and edit message from specified commit
    -C, --[no-]reuse-message <commit>
                          reuse message from specified commit
    --[no-]fixup [(amend|reword):]commit
                          use autosquash formatted message to fixup or amend/reword specified commit
    -t, --[no-]template <file>
                          use specified template file
    --[no-]cleanup <mode> how to strip spaces and #comments from message
    -S, --[no-]gpg-sign[=<key-id>]
                          GPG sign commit

Commit contents options
    -a, --[no-]all        commit all changed files
    -n, --no-verify       bypass pre-commit and commit-msg hooks
    -u, --[no-]untracked-files[=<mode>]
                          show untracked files, optional modes: all, normal, no. (Default: all)
"##;

    #[test]
    fn git_commands_are_read_across_groups() {
        let subs = subcommands(GIT_TOP);
        let names: Vec<&str> = subs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["clone", "init", "add", "mv", "diff", "grep", "log", "status", "commit"]
        );
        assert_eq!(subs[6], ("log".to_string(), "Show commit logs".to_string()));
        assert_eq!(
            subs[3].1,
            "Move or rename a file, a directory, or a symlink"
        );
        // The usage has options but no option lines.
        assert!(options(GIT_TOP).is_empty());
    }

    #[test]
    fn git_parse_options_lines() {
        let opts = options(GIT_LOG);
        assert_eq!(
            opts[0],
            flag(Some("--quiet"), Some('q'), "suppress diff output")
        );
        assert_eq!(opts[1], flag(Some("--source"), None, "show source"));
        assert_eq!(
            find(&opts, "--decorate-refs"),
            &valued(
                Some("--decorate-refs"),
                None,
                "pattern",
                "only decorate refs that match <pattern>"
            )
        );
        assert_eq!(
            find(&opts, "--decorate"),
            &OptionSpec {
                optional_value: true,
                ..valued(Some("--decorate"), None, "VALUE", "decorate options")
            }
        );
        assert_eq!(
            opts.iter().find(|o| o.short == Some('L')),
            Some(&valued(
                None,
                Some('L'),
                "range:file",
                "trace the evolution of line range <start>,<end> or function :<funcname> in <file>"
            ))
        );
        assert_eq!(opts.len(), 8);

        let opts = options(GIT_COMMIT);
        assert_eq!(
            find(&opts, "--file"),
            &valued(Some("--file"), Some('F'), "file", "read message from file")
        );
        assert_eq!(
            find(&opts, "--fixup").value.as_deref(),
            Some("[(amend|reword):]commit")
        );
        assert_eq!(
            find(&opts, "--cleanup").description,
            "how to strip spaces and #comments from message"
        );
        let sign = find(&opts, "--gpg-sign");
        assert_eq!(
            (sign.short, sign.value.as_deref(), sign.optional_value),
            (Some('S'), Some("key-id"), true)
        );
        assert_eq!(find(&opts, "--no-verify").short, Some('n'));
        assert_eq!(
            find(&opts, "--untracked-files").description,
            "show untracked files, optional modes: all, normal, no. (Default: all)"
        );
    }

    #[test]
    fn git_draft() {
        let text = draft(
            "git",
            &[
                help(&[], GIT_TOP),
                help(&["log"], GIT_LOG),
                help(&["commit"], GIT_COMMIT),
            ],
        );
        let tools = check(&text);
        assert_eq!(tools.len(), 9);
        assert!(text.starts_with("# "));
        assert!(text.contains("instructions = \"Drafted by ferry serve init from `git --help`; review before serving.\""));
        let log = tool(&tools, "log");
        assert_eq!(log.description, "Show commit logs");
        assert_eq!(
            log.command_text(),
            r#"["git", "log", "{quiet}", "{source}", "{use-mailmap}", ["--decorate-refs", "{decorate-refs}"], "--decorate={decorate}", ["-L", "{L}"], ["--", "{args*}"]]"#
        );
        assert_eq!(log.param("quiet")["flag"].as_str(), Some("--quiet"));
        assert_eq!(
            log.param("args")["description"].as_str(),
            Some("Further arguments (after --): <revision-range>, <path>, <object>")
        );
        assert_eq!(
            log.table["annotations"]["readOnlyHint"].as_bool(),
            Some(true)
        );
        // git's own dangerous options are never drafted.
        assert!(!log.params.contains_key("output") && !log.params.contains_key("ext-diff"));
        let commit = tool(&tools, "commit");
        for gone in ["reedit-message", "template", "c", "t"] {
            assert!(!commit.params.contains_key(gone), "{gone} drafted");
        }
        // `-C` is denied as git's own option (`git -C dir`), not as `git commit -C <commit>`.
        assert_eq!(commit.kind("reuse-message"), "string");
        assert!(text.contains(
            "# Left out on purpose (they run programs or write files): --output, --ext-diff"
        ));
        assert_eq!(commit.kind("file"), "path");
        assert!(commit.param("file").get("exists").is_none());
        assert!(commit.command_text().contains(r#""--gpg-sign={gpg-sign}""#));
        assert!(commit.command_text().contains(r#"["--fixup", "{fixup}"]"#));
        assert!(!commit.table.contains_key("annotations"));
        // Commands whose help was not read are still drafted, and say so.
        assert_eq!(tool(&tools, "clone").command_text(), r#"["git", "clone"]"#);
        assert!(text.contains("# No help text for `git clone` was read"));
        assert_eq!(
            tool(&tools, "grep").table["ok_exit"]
                .as_array()
                .map(Vec::len),
            Some(2)
        );
    }

    #[test]
    fn subcommands_that_delete_overwrite_or_publish_are_drafted_with_confirm() {
        let top = "These are common Git commands used in various situations:\n\n   rm        Remove files from the working tree and from the index\n   push      Update remote refs along with associated objects\n   restore   Restore working tree files\n   zap       Deletes every stash\n   branch    List, create, or delete branches\n   log       Show commit logs\n   tag       Create, list, delete or verify a tag object\n";
        let text = draft("git", &[help(&[], top)]);
        let tools = check(&text);
        let confirm = |name: &str| {
            tool(&tools, name)
                .table
                .get("confirm")
                .and_then(|c| c.as_str())
                .map(str::to_string)
        };
        assert_eq!(confirm("rm").as_deref(), Some("Run `git rm`? It deletes."));
        assert_eq!(
            confirm("push").as_deref(),
            Some("Run `git push`? It publishes.")
        );
        assert_eq!(
            confirm("restore").as_deref(),
            Some("Run `git restore`? It overwrites.")
        );
        assert_eq!(
            confirm("zap").as_deref(),
            Some("Run `git zap`? It deletes.")
        );
        // Listing comes first: no question for what mostly reads.
        for quiet in ["branch", "log", "tag"] {
            assert_eq!(confirm(quiet), None, "{quiet}");
        }
    }

    #[test]
    fn git_own_options_are_denied_only_before_a_subcommand() {
        let own = "usage: git [-C <path>] [-c <name>=<value>] [--bare]\n\n    -C <path>             run as if git was started in <path>\n    -c <name>=<value>     pass a configuration parameter\n    --bare                treat the repository as a bare repository\n";
        let tools = check(&draft("git", &[help(&[], own)]));
        assert_eq!(tools[0].params.keys().collect::<Vec<_>>(), ["bare"]);
        // A subcommand's `-c` and `-C` are other options (`git switch -c <branch>`).
        let top = "These are common Git commands used in various situations:\n\n   switch    Switch branches\n";
        let switch = "usage: git switch [<options>] [<branch>]\n\n    -c, --[no-]create <branch>\n                          create and switch to a new branch\n    -C, --[no-]force-create <branch>\n                          create/reset and switch to a branch\n";
        let tools = check(&draft("git", &[help(&[], top), help(&["switch"], switch)]));
        assert_eq!(
            tools[0].params.keys().collect::<Vec<_>>(),
            ["args", "create", "force-create"]
        );
    }

    // -----------------------------------------------------------------------------------------
    // ripgrep: `rg -h` (one line each) and `rg --help` (descriptions on following lines).

    const RG_SHORT: &str = r##"ripgrep 13.0.0
Andrew Gallant <jamslam@gmail.com>

ripgrep (rg) recursively searches the current directory for a regex pattern.
By default, ripgrep will respect gitignore rules and automatically skip hidden
files/directories and binary files.

Use -h for short descriptions and --help for more details.

USAGE:
    rg [OPTIONS] PATTERN [PATH ...]
    rg [OPTIONS] -e PATTERN ... [PATH ...]
    rg [OPTIONS] -f PATTERNFILE ... [PATH ...]
    command | rg [OPTIONS] PATTERN
    rg [OPTIONS] --help

ARGS:
    <PATTERN>    A regular expression used for searching.
    <PATH>...    A file or directory to search.

OPTIONS:
    -A, --after-context <NUM>                    Show NUM lines after each match.
    -b, --byte-offset
            Print the 0-based byte offset for each matching line.

        --colors <COLOR_SPEC>...                 Configure color settings and styles.
        --dfa-size-limit <NUM+SUFFIX?>           The upper size limit of the regex DFA.
    -f, --file <PATTERNFILE>...                  Search for patterns from the given file.
    -h, --help                                   Prints help information. Use --help for more details.
        --pre <COMMAND>                          search outputs of COMMAND FILE for each FILE
    -e, --regexp <PATTERN>...                    A pattern to search for.
    -0, --null                                   Print a NUL byte after file paths.
    -V, --version                                Prints version information
"##;

    const RG_LONG: &str = "ripgrep 13.0.0
Andrew Gallant <jamslam@gmail.com>

USAGE:
    rg [OPTIONS] PATTERN [PATH ...]

OPTIONS:
    -A, --after-context <NUM>                    
            Show NUM lines after each match.
            
            This overrides the --context and --passthru flags.
             
        --json                                   
            Enable printing results in a JSON Lines format.
            
            The JSON Lines format is only supported for showing search results. It cannot
            be used with other flags that emit other types of output, such as --files,
            --files-with-matches, --files-without-match, --count or --count-matches.
            -e/--regexp is fine, though.
            
        --no-config                              
            Never read configuration files.
    -e, --regexp <PATTERN>...                    
            A pattern to search for. This option can be provided multiple times.
";

    #[test]
    fn ripgrep_short_and_long_help() {
        let opts = options(RG_SHORT);
        assert_eq!(
            opts[0],
            valued(
                Some("--after-context"),
                Some('A'),
                "NUM",
                "Show NUM lines after each match."
            )
        );
        assert_eq!(
            opts[1],
            flag(
                Some("--byte-offset"),
                Some('b'),
                "Print the 0-based byte offset for each matching line."
            )
        );
        assert_eq!(
            opts[2],
            OptionSpec {
                repeatable: true,
                ..valued(
                    Some("--colors"),
                    None,
                    "COLOR_SPEC",
                    "Configure color settings and styles."
                )
            }
        );
        assert_eq!(find(&opts, "--null").short, Some('0'));
        assert_eq!(opts.len(), 10);
        assert!(subcommands(RG_SHORT).is_empty());

        let long = options(RG_LONG);
        let names: Vec<&str> = long.iter().filter_map(|o| o.long.as_deref()).collect();
        // Description lines that start with `--` or `-e/` are not options.
        assert_eq!(
            names,
            ["--after-context", "--json", "--no-config", "--regexp"]
        );
        assert_eq!(long[0].description, "Show NUM lines after each match.");
        assert_eq!(
            long[1].description,
            "Enable printing results in a JSON Lines format."
        );
        assert!(long[3].repeatable);
    }

    #[test]
    fn ripgrep_draft() {
        let tools = check(&draft("rg", &[help(&[], RG_SHORT)]));
        assert_eq!(tools.len(), 1);
        let rg = &tools[0];
        assert_eq!(rg.name, "rg");
        assert_eq!(
            rg.description,
            "ripgrep (rg) recursively searches the current directory for a regex pattern."
        );
        assert!(
            !rg.params.contains_key("pre")
                && !rg.params.contains_key("help")
                && !rg.params.contains_key("version")
        );
        assert_eq!(rg.kind("after-context"), "integer");
        assert_eq!(rg.kind("dfa-size-limit"), "string");
        assert_eq!(rg.kind("file"), "path");
        assert_eq!(rg.param("null")["flag"].as_str(), Some("--null"));
        assert_eq!(
            rg.param("args")["description"].as_str(),
            Some("Further arguments (after --): PATTERN, PATH")
        );
        assert!(rg.command_text().ends_with(r#"["--", "{args*}"]]"#));
        assert_eq!(
            rg.table["ok_exit"],
            Value::Array(vec![Value::Integer(0), Value::Integer(1)])
        );
        assert_eq!(
            rg.table["annotations"]["readOnlyHint"].as_bool(),
            Some(true)
        );
        check(&draft("rg", &[help(&[], RG_LONG)]));
    }

    // -----------------------------------------------------------------------------------------
    // curl: `curl --help all`, values in angle brackets, descriptions after one blank.

    const CURL: &str = r##"Usage: curl [options...] <url>
     --abstract-unix-socket <path> Connect via abstract Unix domain socket
 -a, --append             Append to target file when uploading
     --aws-sigv4 <provider1[:provider2[:region[:service]]]> Use AWS V4 signature authentication
     --connect-timeout <fractional seconds> Maximum time allowed for connection
 -c, --cookie-jar <filename> Write cookies to <filename> after operation
 -K, --config <file>      Read config from a file
 -H, --header <header/@file> Pass custom header(s) to server
     --http1.1            Use HTTP 1.1
 -:, --next               Make next URL use its separate set of options
 -o, --output <file>      Write to file instead of stdout
 -#, --progress-bar       Display transfer progress as a bar
 -O, --remote-name        Write output to a file named as the remote file
 -X, --request <method>   Specify request method to use
     --trace <file>       Write a debug trace to FILE
 -T, --upload-file <file> Transfer local FILE to destination
 -v, --verbose            Make the operation more talkative
 -V, --version            Show version number and quit
"##;

    #[test]
    fn curl_options() {
        let opts = options(CURL);
        assert_eq!(opts.len(), 17);
        assert_eq!(
            opts[0],
            valued(
                Some("--abstract-unix-socket"),
                None,
                "path",
                "Connect via abstract Unix domain socket"
            )
        );
        assert_eq!(
            opts[1],
            flag(
                Some("--append"),
                Some('a'),
                "Append to target file when uploading"
            )
        );
        assert_eq!(
            opts[2],
            valued(
                Some("--aws-sigv4"),
                None,
                "provider1[:provider2[:region[:service]]]",
                "Use AWS V4 signature authentication"
            )
        );
        assert_eq!(opts[3].value.as_deref(), Some("fractional seconds"));
        assert_eq!(find(&opts, "--progress-bar").short, Some('#'));
        assert_eq!(find(&opts, "--next").short, Some(':'));
        assert_eq!(
            find(&opts, "--http1.1"),
            &flag(Some("--http1.1"), None, "Use HTTP 1.1")
        );

        let tools = check(&draft("curl", &[help(&[], CURL)]));
        let curl = &tools[0];
        let drafted: Vec<&str> = curl.params.keys().map(String::as_str).collect();
        assert_eq!(
            drafted,
            [
                "abstract-unix-socket",
                "append",
                "args",
                "aws-sigv4",
                "connect-timeout",
                "header",
                "http1_1",
                "next",
                "progress-bar",
                "request",
                "verbose"
            ]
        );
        assert_eq!(curl.kind("connect-timeout"), "number");
        assert_eq!(curl.kind("abstract-unix-socket"), "path");
        assert_eq!(curl.param("http1_1")["flag"].as_str(), Some("--http1.1"));
        assert!(curl
            .command_text()
            .contains(r#"["--request", "{request}"]"#));
        assert!(!curl.table.contains_key("annotations"));
    }

    // -----------------------------------------------------------------------------------------
    // docker (cobra): command sections, `-f, --filter filter`, wrapped descriptions.

    const DOCKER_TOP: &str = r##"
Usage:  docker [OPTIONS] COMMAND

A self-sufficient runtime for containers

Common Commands:
  run         Create and run a new container from an image
  ps          List containers
  images      List images

Management Commands:
  container   Manage containers
  image       Manage images

Commands:
  attach      Attach local standard input, output, and error streams to a running container
  wait        Block until one or more containers stop, then print their exit codes

Global Options:
      --config string      Location of client config files (default
                           "/root/.docker")
  -c, --context string     Name of the context to use to connect to the
                           daemon (overrides DOCKER_HOST env var and
                           default context set with "docker context use")
  -D, --debug              Enable debug mode
  -v, --version            Print version information and quit

Run 'docker COMMAND --help' for more information on a command.
"##;

    const DOCKER_PS: &str = r##"
Usage:  docker ps [OPTIONS]

List containers

Aliases:
  docker container ls, docker container list, docker container ps, docker ps

Options:
  -a, --all             Show all containers (default shows just running)
  -f, --filter filter   Filter output based on conditions provided
      --format string   Format output using a custom template:
                        'table':            Print output in table format
                        with column headers (default)
  -n, --last int        Show n last created containers (includes all
                        states) (default -1)
      --no-trunc        Don't truncate output
"##;

    const DOCKER_RUN: &str = r##"
Usage:  docker run [OPTIONS] IMAGE [COMMAND] [ARG...]

Create and run a new container from an image

Options:
      --add-host list                    Add a custom host-to-IP mapping
                                         (host:ip)
      --cidfile string                   Write the container ID to the file
      --cpus decimal                     Number of CPUs
  -e, --env list                         Set environment variables
      --health-cmd string                Command to run to check health
  -w, --workdir string                   Working directory inside the container
"##;

    const DOCKER_CONTAINER: &str = r##"
Usage:  docker container COMMAND

Manage containers

Commands:
  attach      Attach local standard input, output, and error streams to a running container
  ls          List containers

Run 'docker container COMMAND --help' for more information on a command.
"##;

    #[test]
    fn docker_sections_and_options() {
        let subs = subcommands(DOCKER_TOP);
        let names: Vec<&str> = subs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "run",
                "ps",
                "images",
                "container",
                "image",
                "attach",
                "wait"
            ]
        );
        assert_eq!(subs[1], ("ps".to_string(), "List containers".to_string()));
        let global = options(DOCKER_TOP);
        assert_eq!(
            global[0],
            valued(
                Some("--config"),
                None,
                "string",
                "Location of client config files (default \"/root/.docker\")"
            )
        );
        assert_eq!(
            global[2],
            flag(Some("--debug"), Some('D'), "Enable debug mode")
        );

        let opts = options(DOCKER_PS);
        assert_eq!(
            opts[1],
            valued(
                Some("--filter"),
                Some('f'),
                "filter",
                "Filter output based on conditions provided"
            )
        );
        assert_eq!(
            opts[2].description,
            "Format output using a custom template: 'table': Print output in table format with column headers (default)"
        );
        assert_eq!(
            opts[3],
            valued(
                Some("--last"),
                Some('n'),
                "int",
                "Show n last created containers (includes all states) (default -1)"
            )
        );
        assert!(subcommands(DOCKER_PS).is_empty());
        assert!(find(&options(DOCKER_RUN), "--env").repeatable);
    }

    #[test]
    fn docker_draft() {
        let helps = [
            help(&[], DOCKER_TOP),
            help(&["ps"], DOCKER_PS),
            help(&["run"], DOCKER_RUN),
            help(&["container"], DOCKER_CONTAINER),
            help(&["container", "ls"], DOCKER_PS),
        ];
        let text = draft("docker", &helps);
        let tools = check(&text);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        // `docker container` has its own commands: left to the reviewer, with a note.
        assert_eq!(
            names,
            [
                "run",
                "ps",
                "images",
                "image",
                "attach",
                "wait",
                "container_ls"
            ]
        );
        assert!(text.contains("# `docker container` has subcommands of its own (attach, ls)"));
        let ps = tool(&tools, "ps");
        assert_eq!(
            ps.command_text(),
            r#"["docker", "ps", "{all}", ["--filter", "{filter}"], ["--format", "{format}"], ["--last", "{last}"], "{no-trunc}"]"#
        );
        assert_eq!(ps.kind("last"), "integer");
        assert!(!ps.params.contains_key("args"));
        let run = tool(&tools, "run");
        assert!(!run.params.contains_key("cidfile") && !run.params.contains_key("health-cmd"));
        assert_eq!(run.kind("cpus"), "number");
        assert_eq!(
            run.param("args")["description"].as_str(),
            Some("Further arguments (after --): IMAGE, COMMAND, ARG")
        );
        assert_eq!(
            tool(&tools, "container_ls").command_text().get(..32),
            Some(r#"["docker", "container", "ls", "{"#)
        );
    }

    // -----------------------------------------------------------------------------------------
    // Python argparse, with subparsers.

    const ARGPARSE_TOP: &str = r##"usage: todo [-h] [--count N] [--file FILE] [--format {text,json}] [-v]
            [--tag TAG [TAG ...]] [--since [SINCE]]
            [--a-really-long-option-name-here SOMETHING_LONG]
            {add,remove,list} ...

Keep a list of things to do.

positional arguments:
  {add,remove,list}
    add                 add a thing
    remove              remove a thing

options:
  -h, --help            show this help message and exit
  --count N, -c N       how many (default: 5)
  --file FILE           the list file
  --format {text,json}  output format
  -v, --verbose         more output; can be repeated
  --tag TAG [TAG ...]   tags to filter by
  --since [SINCE]       only recent items
  --a-really-long-option-name-here SOMETHING_LONG
                        an option whose name is too long for the column so the
                        help goes on the next line
"##;

    const ARGPARSE_ADD: &str = r##"usage: todo add [-h] [--due DATE] [--priority {1,2,3}] text

positional arguments:
  text                  what to do

options:
  -h, --help            show this help message and exit
  --due DATE            when it is due
  --priority {1,2,3}, -p {1,2,3}
                        priority
"##;

    const ARGPARSE_LIST: &str = r##"usage: todo list [-h]

options:
  -h, --help  show this help message and exit
"##;

    const ARGPARSE_PLAIN: &str = r##"usage: server.py [-h] [--cgi] [-b ADDRESS] [-d DIRECTORY] [-p VERSION] [port]

positional arguments:
  port                  bind to this port (default: 8000)

options:
  -h, --help            show this help message and exit
  --cgi                 run as CGI server
  -b ADDRESS, --bind ADDRESS
                        bind to this address (default: all interfaces)
  -d DIRECTORY, --directory DIRECTORY
                        serve this directory (default: current directory)
"##;

    #[test]
    fn argparse_subparsers_and_options() {
        assert_eq!(
            subcommands(ARGPARSE_TOP),
            [
                ("add".to_string(), "add a thing".to_string()),
                ("remove".to_string(), "remove a thing".to_string()),
                ("list".to_string(), String::new())
            ]
        );
        let opts = options(ARGPARSE_TOP);
        assert_eq!(
            opts[0],
            flag(Some("--help"), Some('h'), "show this help message and exit")
        );
        assert_eq!(
            opts[1],
            valued(Some("--count"), Some('c'), "N", "how many (default: 5)")
        );
        assert_eq!(opts[3].choices, ["text", "json"]);
        assert_eq!(opts[3].value.as_deref(), Some("{text,json}"));
        assert!(opts[4].repeatable && opts[4].value.is_none());
        assert_eq!(
            opts[5],
            OptionSpec {
                repeatable: true,
                ..valued(Some("--tag"), None, "TAG", "tags to filter by")
            }
        );
        assert_eq!(
            (opts[6].value.as_deref(), opts[6].optional_value),
            (Some("SINCE"), true)
        );
        assert_eq!(
            opts[7],
            valued(
                Some("--a-really-long-option-name-here"),
                None,
                "SOMETHING_LONG",
                "an option whose name is too long for the column so the help goes on the next line"
            )
        );
        assert_eq!(
            options(ARGPARSE_PLAIN)[2],
            valued(
                Some("--bind"),
                Some('b'),
                "ADDRESS",
                "bind to this address (default: all interfaces)"
            )
        );
    }

    #[test]
    fn argparse_draft() {
        let text = draft(
            "todo",
            &[
                help(&[], ARGPARSE_TOP),
                help(&["add"], ARGPARSE_ADD),
                help(&["list"], ARGPARSE_LIST),
            ],
        );
        let tools = check(&text);
        let add = tool(&tools, "add");
        assert_eq!(add.description, "add a thing");
        assert_eq!(add.kind("priority"), "integer");
        assert_eq!(
            add.param("priority")["enum"],
            Value::Array(vec![
                Value::Integer(1),
                Value::Integer(2),
                Value::Integer(3)
            ])
        );
        assert_eq!(
            add.param("args")["description"].as_str(),
            Some("Further arguments (after --): text")
        );
        let list = tool(&tools, "list");
        assert_eq!(list.description, "Run `todo list`");
        assert_eq!(list.command_text(), r#"["todo", "list"]"#);
        assert!(text.contains("# No help text for `todo remove` was read"));

        let tools = check(&draft("server.py", &[help(&[], ARGPARSE_PLAIN)]));
        let server = &tools[0];
        assert_eq!(server.name, "server.py");
        assert_eq!(server.description, "Run `server.py`");
        assert_eq!(server.kind("directory"), "path");
        assert_eq!(
            server.param("args")["description"].as_str(),
            Some("Further arguments (after --): port")
        );
    }

    // -----------------------------------------------------------------------------------------
    // clap: `Commands:` / `Options:`, possible values, defaults, `...`.

    const CLAP_TOP: &str = r##"A tool for tending gardens

Usage: garden [OPTIONS] <COMMAND>

Commands:
  plant, p  Plant seeds in a bed
  water     Water one bed or all of them; this summary is long enough that clap wraps
            it onto a second line
  help      Print this message or the help of the given subcommand(s)

Options:
  -n, --name <NAME>     Name [default: x] [possible values: a, b]
  -v, --verbose...      More output per occurrence
  -h, --help            Print help
  -V, --version         Print version
"##;

    const CLAP_PLANT: &str = r##"Plant seeds in a bed

Usage: garden plant [OPTIONS] <BED> [SEEDS]...

Arguments:
  <BED>       The bed to plant in
  [SEEDS]...  Seeds to plant

Options:
  -d, --depth <N>                 How deep, in centimetres [default: 2]
      --message-format <FMT>      Error format [possible values: human, short, json,
                                  json-diagnostic-short]
  -p, --package [<SPEC>]          Package to plant (see `garden help pkgid`)
      --dry-run                   Say what would be planted
  -h, --help                      Print help
"##;

    const CLAP_WATER_LONG: &str = r##"Water one bed or all of them

Usage: garden water [OPTIONS]

Options:
      --when <WHEN>
          When to water

          Possible values:
          - now:   Right away
          - later: At dusk

  -h, --help
          Print help (see a summary with '-h')
"##;

    #[test]
    fn clap_commands_and_options() {
        assert_eq!(
            subcommands(CLAP_TOP),
            [
                ("plant".to_string(), "Plant seeds in a bed".to_string()),
                ("water".to_string(), "Water one bed or all of them; this summary is long enough that clap wraps it onto a second line".to_string())
            ]
        );
        let opts = options(CLAP_TOP);
        assert_eq!(
            opts[0],
            OptionSpec {
                choices: vec!["a".into(), "b".into()],
                ..valued(
                    Some("--name"),
                    Some('n'),
                    "NAME",
                    "Name [default: x] [possible values: a, b]"
                )
            }
        );
        assert_eq!(
            opts[1],
            OptionSpec {
                repeatable: true,
                ..flag(Some("--verbose"), Some('v'), "More output per occurrence")
            }
        );
        let opts = options(CLAP_PLANT);
        assert_eq!(
            opts[1].choices,
            ["human", "short", "json", "json-diagnostic-short"]
        );
        assert_eq!(
            (opts[2].value.as_deref(), opts[2].optional_value),
            (Some("SPEC"), true)
        );
        assert_eq!(options(CLAP_WATER_LONG)[0].choices, ["now", "later"]);
        assert_eq!(options(CLAP_WATER_LONG)[0].description, "When to water");
    }

    #[test]
    fn clap_draft() {
        let helps = [
            help(&[], CLAP_TOP),
            help(&["plant"], CLAP_PLANT),
            help(&["water"], CLAP_WATER_LONG),
        ];
        let tools = check(&draft("garden", &helps));
        assert_eq!(tools.len(), 2);
        let plant = tool(&tools, "plant");
        assert_eq!(
            plant.command_text(),
            r#"["garden", "plant", ["--depth", "{depth}"], ["--message-format", "{message-format}"], "--package={package}", "{dry-run}", ["--", "{args*}"]]"#
        );
        assert_eq!(plant.kind("depth"), "integer");
        assert_eq!(
            plant.param("message-format")["enum"]
                .as_array()
                .map(Vec::len),
            Some(4)
        );
        assert_eq!(
            plant.param("args")["description"].as_str(),
            Some("Further arguments (after --): <BED>, SEEDS")
        );
        let water = tool(&tools, "water");
        assert_eq!(
            water.param("when")["enum"],
            Value::Array(vec![
                Value::String("now".into()),
                Value::String("later".into())
            ])
        );
        assert!(!water.params.contains_key("args"));
    }

    // -----------------------------------------------------------------------------------------
    // GNU getopt (ls), and find's packed lists.

    const LS: &str = r##"Usage: ls [OPTION]... [FILE]...
List information about the FILEs (the current directory by default).
Sort entries alphabetically if none of -cftuvSUX nor --sort is specified.

Mandatory arguments to long options are mandatory for short options too.
  -a, --all                  do not ignore entries starting with .
      --block-size=SIZE      with -l, scale sizes by SIZE when printing them;
                             e.g., '--block-size=M'; see SIZE format below

  -c                         with -lt: sort by, and show, ctime (time of last
                             modification of file status information);
                             with -l: show ctime and sort by name;
                             otherwise: sort by ctime, newest first

  -C                         list entries by columns
      --color[=WHEN]         color the output WHEN; more info below
  -h, --human-readable       with -l and -s, print sizes like 1K 234M 2G etc.
  -I, --ignore=PATTERN       do not list implied entries matching shell PATTERN
  -T, --tabsize=COLS         assume tab stops at each COLS instead of 8
  -1                         list one file per line
      --help        display this help and exit
      --version     output version information and exit

The SIZE argument is an integer and optional unit (example: 10K is 10*1024).

Exit status:
 0  if OK,
 1  if minor problems (e.g., cannot access subdirectory),
"##;

    const FIND: &str = r##"Usage: find [-H] [-L] [-P] [-Olevel] [-D debugopts] [path...] [expression]

Default path is the current directory; default expression is -print.

Normal options (always true, specified before other expressions):
      -depth -files0-from FILE -maxdepth LEVELS -mindepth LEVELS

Tests (N can be +N or -N or N):
      -name PATTERN -perm [-/]MODE -size N[bcwkMG] -type [bcdpflsD]

Actions:
      -delete -print0 -printf FORMAT -fprintf FILE FORMAT -print
      -fprint0 FILE -fprint FILE -ls -fls FILE -prune -quit
      -exec COMMAND ; -exec COMMAND {} + -ok COMMAND ;

Other common options:
      --help                   display this help and exit
"##;

    #[test]
    fn gnu_options() {
        let opts = options(LS);
        assert_eq!(
            opts[0],
            flag(
                Some("--all"),
                Some('a'),
                "do not ignore entries starting with ."
            )
        );
        assert_eq!(
            opts[1],
            valued(Some("--block-size"), None, "SIZE", "with -l, scale sizes by SIZE when printing them; e.g., '--block-size=M'; see SIZE format below")
        );
        assert_eq!(
            opts[2],
            flag(
                None,
                Some('c'),
                "with -lt: sort by, and show, ctime (time of last modification of file status information); with -l: show ctime and sort by name; otherwise: sort by ctime, newest first"
            )
        );
        assert_eq!(
            opts[4],
            OptionSpec {
                optional_value: true,
                ..valued(
                    Some("--color"),
                    None,
                    "WHEN",
                    "color the output WHEN; more info below"
                )
            }
        );
        assert_eq!(
            opts[6],
            valued(
                Some("--ignore"),
                Some('I'),
                "PATTERN",
                "do not list implied entries matching shell PATTERN"
            )
        );
        assert_eq!(opts[8], flag(None, Some('1'), "list one file per line"));
        assert_eq!(opts.len(), 11);
        assert!(subcommands(LS).is_empty());
    }

    #[test]
    fn gnu_draft() {
        let tools = check(&draft("/bin/ls", &[help(&[], LS)]));
        let ls = &tools[0];
        assert_eq!(ls.name, "ls");
        assert_eq!(
            ls.description,
            "List information about the FILEs (the current directory by default)."
        );
        assert_eq!(
            ls.command_text(),
            r#"["/bin/ls", "{all}", ["--block-size", "{block-size}"], "{c}", "{C}", "--color={color}", "{human-readable}", ["--ignore", "{ignore}"], ["--tabsize", "{tabsize}"], "{opt_1}", ["--", "{args*}"]]"#
        );
        assert_eq!(ls.param("c")["flag"].as_str(), Some("-c"));
        assert_eq!(ls.param("opt_1")["flag"].as_str(), Some("-1"));
        assert_eq!(ls.kind("tabsize"), "integer");
        assert_eq!(
            ls.table["annotations"]["readOnlyHint"].as_bool(),
            Some(true)
        );
    }

    #[test]
    fn find_packed_lists() {
        let opts = options(FIND);
        let names: Vec<&str> = opts.iter().filter_map(|o| o.long.as_deref()).collect();
        assert_eq!(
            names,
            [
                "-depth",
                "-files0-from",
                "-maxdepth",
                "-mindepth",
                "-name",
                "-perm",
                "-size",
                "-type",
                "-delete",
                "-print0",
                "-printf",
                "-fprintf",
                "-print",
                "-fprint0",
                "-fprint",
                "-ls",
                "-fls",
                "-prune",
                "-quit",
                "-exec",
                "--help"
            ]
        );
        assert_eq!(
            find(&opts, "-maxdepth"),
            &valued(Some("-maxdepth"), None, "LEVELS", "")
        );
        assert_eq!(find(&opts, "-size").value.as_deref(), Some("N[bcwkMG]"));

        let text = draft("find", &[help(&[], FIND)]);
        let tools = check(&text);
        let find_tool = &tools[0];
        for gone in ["delete", "exec", "fprint", "fprint0", "fprintf", "fls"] {
            assert!(!find_tool.params.contains_key(gone), "{gone} drafted");
        }
        // Paths come before find's expression, and find takes no `--`.
        assert!(find_tool
            .command_text()
            .starts_with(r#"["find", "{args*}", "{depth}", ["-files0-from", "{files0-from}"]"#));
        assert!(!find_tool.command_text().contains("\"--\""));
        assert_eq!(
            find_tool.param("maxdepth")["description"].as_str(),
            Some("-maxdepth LEVELS")
        );
    }

    // -----------------------------------------------------------------------------------------
    // Go's flag package, escaping, limits, and input nobody planned for.

    #[test]
    fn go_flag_style() {
        let help_text = "Usage of serve:\n  -addr string\n    \tlisten address (default \":8080\")\n  -v\tverbose logging\n  -workers int\n    \tnumber of workers (default 4)\n";
        let opts = options(help_text);
        assert_eq!(
            opts[0],
            valued(
                Some("-addr"),
                None,
                "string",
                "listen address (default \":8080\")"
            )
        );
        assert_eq!(opts[1], flag(None, Some('v'), "verbose logging"));
        assert_eq!(
            opts[2],
            valued(
                Some("-workers"),
                None,
                "int",
                "number of workers (default 4)"
            )
        );
        let tools = check(&draft("serve", &[help(&[], help_text)]));
        assert_eq!(
            tools[0].command_text(),
            r#"["serve", ["-addr", "{addr}"], "{v}", ["-workers", "{workers}"]]"#
        );
    }

    #[test]
    fn strings_are_escaped() {
        let nasty = "Usage: we\"ird [OPTIONS]\n\nA \"quoted\" \\ tool {with} braces\u{7}.\n\nOptions:\n  -x, --ex\"tra <V>  say \"hi\" \\ {now}\u{1b}[1m bold\u{1b}[0m\n";
        let text = draft("we\"ird{x}", &[help(&[], nasty)]);
        let tools = check(&text);
        assert_eq!(tools[0].command[0].as_str(), Some("we\"ird{{x}}"));
        assert_eq!(tools[0].description, "A \"quoted\" \\ tool {with} braces.");
        assert_eq!(
            toml_string("a\"b\\c\nd\u{7f}"),
            "\"a\\\"b\\\\c\\nd\\u007F\""
        );
        assert_eq!(toml_key("max-count"), "max-count");
        assert_eq!(toml_key("a.b"), "\"a.b\"");
        // Control characters and line breaks cannot escape a comment.
        let mut out = String::new();
        comment(&mut out, "one\ntwo\r\n[server]");
        assert_eq!(out, "# one two [server]\n");
    }

    #[test]
    fn man_page_overstrikes_and_tabs_are_cleaned() {
        assert_eq!(clean("N\u{8}NA\u{8}AM\u{8}ME\r\n\tx"), "NAME\n        x");
        let opts = options("\u{1b}[1m  -a, --all\u{1b}[0m\tshow all\n");
        assert_eq!(opts, [flag(Some("--all"), Some('a'), "show all")]);
    }

    #[test]
    fn params_are_capped() {
        let mut text = String::from("Usage: many [OPTIONS] FILE\n\nOptions:\n");
        for i in 0..60 {
            text.push_str(&format!("  --opt{i:02}   option number {i}\n"));
        }
        let out = draft("many", &[help(&[], &text)]);
        let tools = check(&out);
        assert_eq!(tools[0].params.len(), MAX_PARAMS);
        assert!(tools[0].params.contains_key("opt38") && !tools[0].params.contains_key("opt39"));
        assert!(out.contains("# 21 more options of `many` were left out"));
    }

    #[test]
    fn tools_are_capped() {
        let mut text = String::from("Usage: huge <COMMAND>\n\nCommands:\n");
        for i in 0..150 {
            text.push_str(&format!("  cmd{i}   command number {i}\n"));
        }
        let out = draft("huge", &[help(&[], &text)]);
        assert_eq!(check(&out).len(), MAX_TOOLS);
        assert!(out.contains(
            "# 50 more subcommands were not drafted (at most 100 tools): cmd100, cmd101,"
        ));
    }

    #[test]
    fn other_command_list_layouts() {
        // apt-get's `name - summary`, npm's bare lists, gh's `name:`.
        let apt = "Usage: apt-get [options] command\n\nMost used commands:\n  update - Retrieve new lists of packages\n  install - Install new packages (pkg is libc6 not libc6.deb)\n\nSee apt-get(8) for more information.\n";
        assert_eq!(
            subcommands(apt),
            [
                (
                    "update".to_string(),
                    "Retrieve new lists of packages".to_string()
                ),
                (
                    "install".to_string(),
                    "Install new packages (pkg is libc6 not libc6.deb)".to_string()
                )
            ]
        );
        let npm = "npm <command>\n\nAll commands:\n\n    access, adduser, audit,\n    ci, config\n\nSpecify configs in the ini-formatted file:\n    /root/.npmrc\n";
        let names: Vec<String> = subcommands(npm).into_iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["access", "adduser", "audit", "ci", "config"]);
        let gh = "Work seamlessly with GitHub from the command line.\n\nUSAGE\n  gh <command> <subcommand> [flags]\n\nCORE COMMANDS\n  auth:        Authenticate gh and git with GitHub\n  browse:      Open the repository in the browser\n\nFLAGS\n  --help      Show help for command\n";
        assert_eq!(
            subcommands(gh)[1],
            (
                "browse".to_string(),
                "Open the repository in the browser".to_string()
            )
        );
        assert_eq!(subcommands(gh).len(), 2);
        // kubectl's `--name=DEFAULT:` with the description below.
        let kubectl = "Options:\n    -A, --all-namespaces=false:\n\tIf present, list across all namespaces.\n\n    --chunk-size=500:\n\tReturn large lists in chunks.\n\n    -f, --filename=[]:\n\tFilename, directory, or URL to files.\n\n    -o, --output='':\n\tOutput format. One of: (json, yaml).\n\nUsage:\n  kubectl get [(-o|--output=)json|yaml] (TYPE[.VERSION][.GROUP] [NAME | -l label]) [flags] [options]\n";
        let opts = options(kubectl);
        assert_eq!(
            opts[0],
            flag(
                Some("--all-namespaces"),
                Some('A'),
                "If present, list across all namespaces."
            )
        );
        assert_eq!(opts[1].value.as_deref(), Some("int"));
        assert!(opts[2].repeatable);
        let tools = check(&draft("kubectl", &[help(&[], kubectl)]));
        assert_eq!(tools[0].kind("chunk-size"), "integer");
        // `--output` is kept where it is a format.
        assert_eq!(tools[0].kind("output"), "string");
        assert_eq!(
            tools[0].param("args")["description"].as_str(),
            Some("Further arguments (after --): TYPE[.VERSION][.GROUP], NAME")
        );
    }

    #[test]
    fn numbers_written_otherwise_and_taken_operand_names_still_load() {
        let text = "usage: tool [options] FILE...\n\noptions:\n  --perm {0644,0755}  file mode\n  --level {1,2,3}  how much\n  --args A  x\n  --arguments A  x\n  --operands A  x\n  --rest A  x\n  --args_1 A  x\n";
        let draft = draft(
            "tool",
            &[HelpText {
                path: vec![],
                text: text.into(),
            }],
        );
        check(&draft);
        assert!(draft.contains("enum = [\"0644\", \"0755\"]"), "{draft}");
        assert!(draft.contains("enum = [1, 2, 3]"), "{draft}");
        assert!(draft.contains("[tools.params.args_2]"), "{draft}");
    }

    #[test]
    fn no_help_at_all_still_loads() {
        let tools = check(&draft("tool", &[]));
        assert_eq!(
            (tools[0].name.as_str(), tools[0].description.as_str()),
            ("tool", "Run `tool`")
        );
        let tools = check(&draft("", &[help(&[], "")]));
        assert_eq!(tools[0].command[0].as_str(), Some("program"));
        let tools = check(&draft("my tool!", &[help(&[], "nothing useful here\n")]));
        assert_eq!(tools[0].name, "my_tool_");
    }

    #[test]
    fn arbitrary_input_never_panics() {
        // A small deterministic generator: help-like fragments and hostile characters.
        let pieces = [
            "-",
            "--",
            "-x",
            "--long",
            "=",
            "[",
            "]",
            "<",
            ">",
            "{",
            "}",
            "(",
            ")",
            ",",
            " ",
            "  ",
            "\t",
            "\n",
            "\r",
            "...",
            "Usage:",
            "usage: p [-h] {a,b} ...",
            "Commands:",
            "Options:",
            "NUM",
            "file",
            "é",
            "日本",
            "\u{1b}[",
            "\u{8}",
            "\0",
            "[no-]",
            "=<",
            "|",
            "[possible values:",
            "Possible values:\n - a: x",
            "\u{200b}",
            "🙂",
            "-\u{e9}",
            "--\u{e9}x",
        ];
        // Deep nesting and long lines.
        let deep = format!(
            "usage: p {}x{} y\n  -a {}\n",
            "[".repeat(100_000),
            "]".repeat(100_000),
            "<".repeat(100_000)
        );
        check(&draft("p", &[help(&[], &deep)]));
        let rounds = std::env::var("FERRY_DRAFT_FUZZ_ROUNDS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(400);
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..rounds {
            let mut text = String::new();
            for _ in 0..(round % 60 + 1) {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
            }
            let _ = options(&text);
            let subs = subcommands(&text);
            let helps: Vec<HelpText> = std::iter::once(help(&[], &text))
                .chain(subs.iter().map(|(n, _)| help(&[n.as_str()], &text)))
                .collect();
            check(&draft("p", &helps));
        }
    }

    /// Drafts every `*.txt` in `$FERRY_DRAFT_HELPS` (a help text named after its program, e.g.
    /// `git.txt`, with its subcommands' helps as `git-log.txt`) and checks it; a way to try
    /// real help texts (`cmd --help > dir/cmd.txt`).
    #[test]
    fn real_help_texts_from_a_directory() {
        let Ok(dir) = std::env::var("FERRY_DRAFT_HELPS") else {
            return;
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some("txt") {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let program = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("p")
                .to_string();
            let subs = subcommands(&text);
            let sub_helps: Vec<(String, String)> = subs
                .iter()
                .filter_map(|(n, _)| {
                    std::fs::read_to_string(path.with_file_name(format!("{program}-{n}.txt")))
                        .ok()
                        .map(|t| (n.clone(), t))
                })
                .collect();
            let helps: Vec<HelpText> = std::iter::once(help(&[], &text))
                .chain(sub_helps.iter().map(|(n, t)| help(&[n.as_str()], t)))
                .collect();
            let out = draft(&program, &helps);
            let tools = check(&out);
            eprintln!(
                "{program}: {} subcommands, {} tools, {} options",
                subs.len(),
                tools.len(),
                options(&text).len()
            );
        }
    }
}
