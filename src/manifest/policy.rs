//! Which programs run code they are given: the one table that quick mode refuses from, that
//! help reading never passes a word to (`python WORD --help` runs WORD), and that drafts warn
//! about; and the one rule for a program's name (`/usr/bin/python3.11` and `node22` are
//! `python` and `node`). The kernel sandbox is what holds where the table misses a program;
//! the table gives the clearer error.

/// How a program runs code.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Runs {
    /// Its arguments are code or a command to run: shells, interpreters, command runners,
    /// editors and tools with an escape to a shell.
    Arguments,
    /// It runs a project's or a package's code (package scripts, build scripts): served in
    /// quick mode only when `--allow` names its subcommands.
    Projects,
}

/// One program of the table, by its [`program_name`].
#[derive(Debug, Clone, Copy)]
pub struct CodeRunner {
    pub name: &'static str,
    pub runs: Runs,
    /// Why, in words that follow the program's name ("runs its arguments as code").
    pub why: &'static str,
}

const fn arguments(name: &'static str, why: &'static str) -> CodeRunner {
    CodeRunner {
        name,
        runs: Runs::Arguments,
        why,
    }
}

const fn projects(name: &'static str, why: &'static str) -> CodeRunner {
    CodeRunner {
        name,
        runs: Runs::Projects,
        why,
    }
}

const SHELL: &str = "a shell runs its arguments as code";
const INTERPRETER: &str = "an interpreter runs its arguments as code";
const RUNNER: &str = "it runs any command it is given";
const AWK: &str = "an awk program can run commands (system) and write files";
const EDITOR: &str = "an editor runs commands (:!) and writes files";
const PACKAGE_RUNNER: &str = "it downloads and runs the package it is given";
const PACKAGES: &str = "a package manager runs the project's and its packages' scripts";
const BUILD: &str = "a build tool runs the project's build scripts";

/// The programs that run code, by name.
pub const CODE_RUNNERS: &[CodeRunner] = &[
    arguments("sh", SHELL),
    arguments("bash", SHELL),
    arguments("zsh", SHELL),
    arguments("dash", SHELL),
    arguments("ksh", SHELL),
    arguments("mksh", SHELL),
    arguments("fish", SHELL),
    arguments("csh", SHELL),
    arguments("tcsh", SHELL),
    arguments("pwsh", SHELL),
    arguments("powershell", SHELL),
    arguments("busybox", "it is a shell and every other tool in one"),
    arguments("env", RUNNER),
    arguments("exec", RUNNER),
    arguments("xargs", RUNNER),
    arguments("sudo", "it runs any command it is given, as another user"),
    arguments("doas", "it runs any command it is given, as another user"),
    arguments("su", "it runs a shell as another user"),
    arguments("runuser", "it runs a command as another user"),
    arguments("pkexec", "it runs a command as another user"),
    arguments("nohup", RUNNER),
    arguments("timeout", RUNNER),
    arguments("nice", RUNNER),
    arguments("setsid", RUNNER),
    arguments("chroot", RUNNER),
    arguments("strace", RUNNER),
    arguments("ltrace", RUNNER),
    arguments("watch", "it runs any command it is given through a shell"),
    arguments("stdbuf", RUNNER),
    arguments("ionice", RUNNER),
    arguments("taskset", RUNNER),
    arguments("chrt", RUNNER),
    arguments("flock", RUNNER),
    arguments("script", "it runs any command it is given (-c)"),
    arguments("unshare", RUNNER),
    arguments("nsenter", RUNNER),
    arguments("systemd-run", RUNNER),
    arguments("parallel", "it runs the commands it is given"),
    arguments("time", RUNNER),
    arguments("python", INTERPRETER),
    arguments("pypy", INTERPRETER),
    arguments("node", INTERPRETER),
    arguments("nodejs", INTERPRETER),
    arguments("deno", INTERPRETER),
    arguments("bun", INTERPRETER),
    arguments("ruby", INTERPRETER),
    arguments("irb", INTERPRETER),
    arguments("perl", INTERPRETER),
    arguments("php", INTERPRETER),
    arguments("lua", INTERPRETER),
    arguments("luajit", INTERPRETER),
    arguments("tclsh", INTERPRETER),
    arguments("wish", INTERPRETER),
    arguments("expect", INTERPRETER),
    arguments("Rscript", INTERPRETER),
    arguments("R", INTERPRETER),
    arguments("julia", INTERPRETER),
    arguments("java", "it runs the program it is given"),
    arguments("jshell", INTERPRETER),
    arguments("osascript", INTERPRETER),
    arguments("awk", AWK),
    arguments("gawk", AWK),
    arguments("mawk", AWK),
    arguments("nawk", AWK),
    arguments(
        "sed",
        "a sed script can run commands (e) and write files (w)",
    ),
    arguments(
        "ssh",
        "it runs commands on a remote host, and -o ProxyCommand runs local ones",
    ),
    arguments("scp", "-o ProxyCommand and -S run local programs"),
    arguments("sftp", "-o ProxyCommand and -S run local programs"),
    arguments("make", "a makefile (or --eval) runs commands"),
    arguments("zip", "zip -TT runs the command it is given"),
    arguments("gdb", "a debugger runs programs and commands"),
    arguments("lldb", "a debugger runs programs and commands"),
    arguments("vim", EDITOR),
    arguments("vi", EDITOR),
    arguments("nvim", EDITOR),
    arguments("emacs", EDITOR),
    arguments("ed", "an editor runs commands (!) and writes files"),
    arguments("sqlite", "it runs shell commands (.shell) and writes files"),
    arguments("npx", PACKAGE_RUNNER),
    arguments("pnpx", PACKAGE_RUNNER),
    arguments("bunx", PACKAGE_RUNNER),
    arguments("uvx", PACKAGE_RUNNER),
    arguments("pipx", PACKAGE_RUNNER),
    projects("npm", PACKAGES),
    projects("pnpm", PACKAGES),
    projects("yarn", PACKAGES),
    projects("pip", PACKAGES),
    projects("uv", PACKAGES),
    projects("poetry", PACKAGES),
    projects("gem", PACKAGES),
    projects("bundle", PACKAGES),
    projects("composer", PACKAGES),
    projects("cargo", BUILD),
    projects("go", BUILD),
    projects("mvn", BUILD),
    projects("gradle", BUILD),
    projects("dotnet", BUILD),
    projects("docker", "it runs the images and commands it is given"),
    projects("podman", "it runs the images and commands it is given"),
    projects("kubectl", "it runs commands in the cluster it reaches"),
];

/// Programs whose exit status 1 means "nothing found" or "they differ", not a failure.
const EXIT_ONE_OK: [&str; 7] = ["rg", "grep", "egrep", "fgrep", "ag", "diff", "cmp"];

/// The exit codes that are not errors for `program`, as a manifest's `ok_exit` would say:
/// `[0, 1]` for the searchers and comparers, `[0]` for everything else.
pub fn ok_exit(program: &str) -> Vec<i32> {
    if EXIT_ONE_OK.contains(&program_name(program)) {
        vec![0, 1]
    } else {
        vec![0]
    }
}

/// A program's file name, as it is shown: `/usr/bin/git` and `git.exe` are `git`.
pub fn file_name(program: &str) -> &str {
    let base = program.rsplit(['/', '\\']).next().unwrap_or(program);
    let base = base.strip_suffix(".exe").unwrap_or(base);
    if base.is_empty() {
        program
    } else {
        base
    }
}

/// A program's name as the table knows it: its [`file_name`] without a version suffix
/// (`/usr/bin/python3.11` is `python`, `node22` is `node`, `gcc-12` is `gcc`). Quick mode,
/// help reading and drafts all ask the table through this one rule.
pub fn program_name(program: &str) -> &str {
    let base = file_name(program);
    let name = base.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.' || c == '-');
    if name.is_empty() {
        base
    } else {
        name
    }
}

/// How `program` (a name or a path) runs code, if it does.
pub fn runs_code(program: &str) -> Option<&'static CodeRunner> {
    let name = program_name(program);
    CODE_RUNNERS.iter().find(|r| r.name == name)
}

/// Whether `program` runs what its arguments say (so `program WORD --help` would run WORD).
pub fn runs_arguments(program: &str) -> bool {
    runs_code(program).is_some_and(|r| r.runs == Runs::Arguments)
}

/// Whether a command-line word names the script that follows it: `-c` (shells, python),
/// `-e` and `-E` (node, perl, ruby, sed), `--eval`, `-p`/`--print` (node), `-r` (php),
/// PowerShell's `-Command`, or a cluster of short options ending in one (`-lne`, `-ec`).
pub fn is_script_flag(word: &str) -> bool {
    const FLAGS: [&str; 11] = [
        "-c",
        "-e",
        "-E",
        "--eval",
        "-p",
        "--print",
        "-r",
        "--command",
        "-Command",
        "-command",
        "--exec",
    ];
    if FLAGS.contains(&word) {
        return true;
    }
    let Some(cluster) = word.strip_prefix('-') else {
        return false;
    };
    cluster.len() > 1
        && !cluster.starts_with('-')
        && cluster.chars().all(|c| c.is_ascii_alphabetic())
        && (cluster.ends_with('c') || cluster.ends_with('e'))
}

/// How a value reaches `program`'s script as data, for an error's hint.
pub fn safe_form(program: &str) -> String {
    let shown = file_name(program);
    match program_name(program) {
        "sh" | "bash" | "zsh" | "dash" | "ksh" | "mksh" | "busybox" => {
            format!("[\"{shown}\", \"-c\", \"echo \\\"$1\\\"\", \"{shown}\", \"{{x}}\"]")
        }
        "python" | "pypy" => {
            format!("[\"{shown}\", \"-c\", \"import sys; print(sys.argv[1])\", \"{{x}}\"]")
        }
        "node" | "nodejs" | "deno" | "bun" => {
            format!("[\"{shown}\", \"-e\", \"console.log(process.argv[1])\", \"{{x}}\"]")
        }
        "perl" | "ruby" => format!("[\"{shown}\", \"-e\", \"print $ARGV[0]\", \"{{x}}\"]"),
        _ => format!("[\"{shown}\", ..., SCRIPT OR COMMAND, \"{{x}}\"]"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_rule_for_a_programs_name() {
        for (program, name) in [
            ("/usr/bin/python3.11", "python"),
            ("node22", "node"),
            ("/usr/local/bin/gcc-12", "gcc"),
            ("git", "git"),
            ("7z", "7z"),
            ("/opt/bin/pip3", "pip"),
        ] {
            assert_eq!(program_name(program), name, "{program}");
        }
        // The same rule everywhere: a versioned interpreter is found however it is named.
        for program in ["node22", "/usr/bin/python3.11", "perl5.36", "sh"] {
            assert!(runs_arguments(program), "{program}");
        }
        assert!(!runs_arguments("/usr/bin/git"));
        assert_eq!(runs_code("npm").map(|r| r.runs), Some(Runs::Projects));
        assert!(!runs_arguments("npm"), "`npm install --help` runs nothing");
        assert_eq!(ok_exit("/usr/bin/rg"), [0, 1]);
        assert_eq!(ok_exit("git"), [0]);
        for (program, name) in [
            ("/usr/bin/git", "git"),
            ("git.exe", "git"),
            ("python3.11", "python3.11"),
        ] {
            assert_eq!(file_name(program), name, "{program}");
        }
    }
}
