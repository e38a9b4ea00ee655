//! The sandbox in words: what a policy allows (`ferry serve --check-sandbox`), and, when a
//! command fails on a denial, which rule it ran into, so the model that called it learns what
//! to do differently instead of guessing from "Permission denied".

use super::{Kernel, Place, Policy};
use std::path::{Path, PathBuf};

/// Words that say a command was denied something.
const DENIALS: [&str; 6] = [
    "insufficient permission",
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "Device or resource busy",
    "Couldn't connect to server",
];
/// Words that say a command was writing.
const WRITING: [&str; 8] = [
    "adding",
    "create",
    "write",
    "remove",
    "delete",
    "mkdir",
    "rename",
    "Cannot open",
];
/// Words that say a network operation failed.
const NETWORK: [&str; 6] = [
    "connect",
    "Could not resolve",
    "resolve host",
    "Network is unreachable",
    "socket",
    "getaddrinfo",
];

/// The rule a failed command ran into: its name (a metrics label) and a line for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Denial {
    /// One of `hidden`, `exec`, `read`, `read-only`, `git`, `write`, `network`.
    pub rule: &'static str,
    pub line: String,
}

/// The rule a failed command ran into, when its output shows a denial.
pub fn explain_denial(policy: &Policy, cwd: &Path, output: &str) -> Option<Denial> {
    let line = output
        .lines()
        .find(|l| DENIALS.iter().any(|d| l.contains(d)))?;
    let say = |rule: &'static str, why: &str| {
        Some(Denial {
            rule,
            line: format!("refused by the sandbox: {why}"),
        })
    };
    let writing = WRITING.iter().any(|w| line.contains(w));
    for word in candidates(line) {
        let path = if word.contains('/') {
            cwd.join(&word)
        } else {
            // `sh: 1: sleep: Permission denied`: a program the command tried to run.
            match which::which(&word) {
                Ok(found) => found,
                Err(_) => continue,
            }
        };
        let path = super::canonical_as_far_as_it_exists(&path);
        if under(&path, &policy.hidden).is_some() {
            return say(
                "hidden",
                "ferry's own files and the system's secrets are not readable by served commands",
            );
        }
        let runnable = under(&path, &policy.exec).is_some();
        let is_program = std::fs::metadata(&path).is_ok_and(|m| {
            use std::os::unix::fs::PermissionsExt;
            m.is_file() && m.permissions().mode() & 0o111 != 0
        });
        let readable =
            under(&path, &policy.reads).is_some() || under(&path, &policy.writes).is_some();
        // A program that may be read but was denied: it was run.
        if is_program && !runnable && !writing && (readable || !word.contains('/')) {
            return say(
                "exec",
                &format!(
                "running {} is not allowed for this tool; it may run only {} (a manifest adds programs with exec = [...])",
                path.display(),
                names(&policy.exec)
            ),
            );
        }
        if !writing && !readable {
            return say("read", "reads outside the roots are not allowed for this tool (a manifest adds places with reads = [...])");
        }
        if policy.writes.is_empty() {
            return say(
                "read-only",
                "writes are not allowed for this tool: it is read-only",
            );
        }
        if let Some(place) = under(&path, &policy.writes) {
            let in_git = path.strip_prefix(&place.path).is_ok_and(|rest| {
                rest.components()
                    .any(|c| c.as_os_str() == std::ffi::OsStr::new(".git"))
            });
            if in_git {
                return say(
                    "git",
                    ".git stays read-only for this tool unless its writes name it",
                );
            }
        }
        return say(
            "write",
            "writes outside the roots are not allowed for this tool",
        );
    }
    if !policy.network && NETWORK.iter().any(|w| line.contains(w)) {
        return say("network", "network access is not allowed for this tool (a manifest allows it with network = true)");
    }
    None
}

/// The words of a line that may name a file or a program, most likely first: the field
/// before the denial (`cat: FILE: Permission denied`, `sh: 1: PROGRAM: Permission denied`),
/// then the words that look like paths (`open("/x")`, `'/x'`).
fn candidates(line: &str) -> Vec<String> {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| c.is_whitespace() || "'\"`‘’“”()[]<>,;=".contains(c))
            .map(|w| w.trim_end_matches(':').to_string())
            .filter(|w| !w.is_empty())
            .collect()
    };
    let mut found: Vec<String> = Vec::new();
    let fields: Vec<&str> = line.split(": ").collect();
    if let Some(at) = fields
        .iter()
        .position(|f| DENIALS.iter().any(|d| f.trim_start().starts_with(d)))
    {
        if let Some(word) = at.checked_sub(1).and_then(|i| words(fields[i]).pop()) {
            found.push(word);
        }
    }
    for word in words(line) {
        let pathlike = word.contains('/') && !word.contains("://");
        if pathlike && !found.contains(&word) {
            found.push(word);
        }
    }
    found
}

/// The place of `places` that holds `path`, if any.
fn under<'a>(path: &Path, places: &'a [Place]) -> Option<&'a Place> {
    places.iter().find(|p| path.starts_with(&p.path))
}

fn names(places: &[Place]) -> String {
    let mut names: Vec<String> = places
        .iter()
        .filter(|p| p.why == "program" || p.why == "declared" || p.why == "helpers")
        .map(|p| p.path.display().to_string())
        .collect();
    names.dedup();
    names.join(", ")
}

/// One tool's policy, for `--check-sandbox`: what it may read, write, run and reach.
pub fn render_policy(name: &str, policy: &Policy, out: &mut String) {
    let group = |places: &[Place]| -> String {
        let mut groups: Vec<(&str, Vec<String>)> = Vec::new();
        for p in places {
            let shown = p.path.display().to_string();
            match groups.iter_mut().find(|(why, _)| *why == p.why) {
                Some((_, list)) => list.push(shown),
                None => groups.push((p.why, vec![shown])),
            }
        }
        groups
            .iter()
            .map(|(why, list)| format!("{why}: {}", list.join(" ")))
            .collect::<Vec<_>>()
            .join("; ")
    };
    out.push_str(&format!("{name}\n"));
    out.push_str(&format!("  reads   {}\n", group(&policy.reads)));
    let writes = if policy.writes.is_empty() {
        "nothing (read-only)".to_string()
    } else {
        let git: Vec<PathBuf> = policy.kept_git();
        let kept = if git.is_empty() {
            String::new()
        } else {
            format!(
                " (read-only inside: {})",
                git.iter()
                    .map(|g| g.display().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        format!("{}{kept}", group(&policy.writes))
    };
    out.push_str(&format!(
        "  writes  {writes}; and its own temporary directory (TMPDIR)\n"
    ));
    out.push_str(&format!("  runs    {}\n", group(&policy.exec)));
    out.push_str(&format!(
        "  network {}\n",
        if policy.network {
            "yes (IPv4 and IPv6; no Unix sockets)"
        } else {
            "none"
        }
    ));
    out.push_str(&format!("  hidden  {}\n", group(&policy.hidden)));
    let kernel = Kernel::probe();
    let mut missing: Vec<&str> = Vec::new();
    if kernel.namespace.is_none() {
        if !policy.writes.is_empty() {
            missing.push(super::NO_TOP_LEVEL);
            missing.push("mode and times outside the writable places");
            missing.push("removing a .git it makes is all ferry can do (after the call)");
        }
        missing.push("watches (inotify) on hidden places");
        if !kernel.seccomp {
            missing.push("System V IPC");
        }
    }
    if !missing.is_empty() {
        out.push_str(&format!(
            "  not enforced here (no mount namespace): {}\n",
            missing.join("; ")
        ));
    }
}

/// The heading of `--check-sandbox`: what enforces the policy on this machine, and what no
/// kernel rule covers.
pub fn render_kernel(kernel: &Kernel) -> String {
    let gaps = kernel.unenforced();
    let mut out = if gaps.is_empty() {
        format!(
            "sandbox: {}: this kernel enforces every rule below\n",
            kernel.describe()
        )
    } else {
        format!(
            "sandbox: {}: this kernel does NOT enforce: {}\n",
            kernel.describe(),
            gaps.join("; ")
        )
    };
    out.push_str(LIMITS);
    out
}

/// What the rules below do not cover, on any kernel (docs/sandbox.md says more).
const LIMITS: &str = "limits: code the dynamic loader maps (ld.so FILE, or any mmap with PROT_EXEC of a file it may read, such as /usr/bin/id or one it wrote in TMPDIR) runs without an exec check: it runs, inside this same sandbox, reading, writing and reaching no more than the command; a memfd can be made only sealed against exec, and execveat is refused; file names (not contents) outside the allowed places can be probed; other processes' command lines are visible, as to any account\n";
