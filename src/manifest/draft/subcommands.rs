//! Subcommands a help text lists: commands sections (git's grouped lists, cobra, clap, gh,
//! apt-get, npm) and argparse's `{add,remove} ...` choices.

use super::text::{clean, is_heading, is_usage, lines, summary, Line};
use super::usage::{synopses, synopsis_tokens};
use std::collections::HashSet;

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
pub(super) struct Found {
    pub(super) list: Vec<(String, String)>,
    pub(super) seen: HashSet<String>,
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
pub(super) fn is_command_name(name: &str) -> bool {
    name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.:".contains(c))
}

/// One line of a commands list: `  build, b    Compile the package`, gh's `  auth:  …`,
/// apt-get's `  update - Retrieve new lists`, or npm's bare `access, adduser, audit,`.
pub(super) fn command_entries(text: &str) -> Vec<(String, String)> {
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
pub(super) fn argparse_subcommands(lines: &[Line]) -> Vec<(String, String)> {
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
