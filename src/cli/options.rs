//! Values of ferry's own options that more than one place reads: `--timeout` and
//! `--max-tokens` (before the server, after it, or after the tool name).

use crate::{Error, Result};

/// Budgets below this cannot hold the cut marker and some output.
pub const MIN_MAX_TOKENS: usize = 64;

/// The value of `--max-tokens`.
pub fn parse_max_tokens(text: &str) -> Result<usize> {
    match text.parse::<usize>() {
        Ok(n) if n >= MIN_MAX_TOKENS => Ok(n),
        Ok(_) => Err(Error::usage(format!(
            "--max-tokens must be at least {MIN_MAX_TOKENS}: the line that reports a cut takes about 40"
        ))
        .with_hint(format!("give --max-tokens {MIN_MAX_TOKENS} or more"))),
        Err(_) => Err(Error::usage(format!(
            "--max-tokens must be a whole number, not {text:?}"
        ))
        .with_hint("for example: --max-tokens 2000")),
    }
}

/// The value of `--timeout`, in seconds.
pub fn parse_timeout(text: &str) -> Result<f64> {
    let max = crate::words::MAX_TIMEOUT_SECS;
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= max)
        .ok_or_else(|| {
            Error::usage(format!(
                "--timeout must be a number of seconds above 0 and at most {max}, not {text:?}"
            ))
            .with_hint("for example: --timeout 120")
        })
}

/// What one of ferry's own options takes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Takes {
    /// Nothing: a flag.
    Nothing,
    /// One value, named so in help (a negative number is a value ferry refuses with its
    /// reason, not an unknown option).
    Value(&'static str),
    /// The rest of the words, named so in help (`--cmd 'COMMAND ARGS' TOOL ...`).
    Words(&'static str),
}

/// One of ferry's own options in a server command, and where it may stand.
#[derive(Debug, Clone, Copy)]
pub struct FerryOption {
    pub long: &'static str,
    pub short: Option<char>,
    pub takes: Takes,
    /// Its line in `ferry --help`.
    pub help: &'static str,
    /// Before the server: one of clap's global options (`ferry --json SERVER ...`).
    pub before_server: bool,
    /// After the server, before a tool (`ferry SERVER --json TOOL`).
    pub after_server: bool,
    /// Named in the hint for an unknown option after the server.
    pub in_server_hint: bool,
    /// After the tool name, where the tool has no property of that name (`flags`).
    pub after_tool: bool,
}

const fn option(long: &'static str, takes: Takes, help: &'static str) -> FerryOption {
    FerryOption {
        long,
        short: None,
        takes,
        help,
        before_server: true,
        after_server: true,
        in_server_hint: true,
        after_tool: false,
    }
}

/// ferry's own options, once: clap's global options, the options a server takes before a
/// tool (and their hint), what the warm path looks for without a table, the options
/// `flags` reads after a tool, and completions (from clap) all come from this table.
pub const OPTIONS: [FerryOption; 8] = [
    option(
        "refresh",
        Takes::Nothing,
        "List the server's tools again (and find out its protocol era anew)",
    ),
    FerryOption {
        after_tool: true,
        ..option("json", Takes::Nothing, "Print the exact result envelope")
    },
    FerryOption {
        after_tool: true,
        ..option(
            "max-tokens",
            Takes::Value("N"),
            "Keep output under N tokens (64 or more); the full output is saved to a file",
        )
    },
    FerryOption {
        after_tool: true,
        ..option(
            "timeout",
            Takes::Value("SECONDS"),
            "Per-request limit (default 60)",
        )
    },
    FerryOption {
        after_server: false,
        in_server_hint: false,
        ..option(
            "cmd",
            Takes::Words("COMMAND"),
            "An ad-hoc stdio server: --cmd 'COMMAND ARGS' [TOOL [ARGS]...]",
        )
    },
    FerryOption {
        in_server_hint: false,
        ..option(
            "no-daemon",
            Takes::Nothing,
            "Start the server for this call only, not through the warm daemon",
        )
    },
    FerryOption {
        short: Some('v'),
        after_server: false,
        in_server_hint: false,
        ..option(
            "verbose",
            Takes::Nothing,
            "Show the JSON-RPC traffic, the era chosen, cache decisions and timings on stderr",
        )
    },
    FerryOption {
        before_server: false,
        after_tool: true,
        ..option(
            "detach",
            Takes::Nothing,
            "Leave a call that becomes a task running, and print its id",
        )
    },
];

impl FerryOption {
    /// The option as clap parses it.
    pub fn arg(&self) -> clap::Arg {
        let arg = clap::Arg::new(self.long).long(self.long).help(self.help);
        let arg = match self.short {
            Some(short) => arg.short(short),
            None => arg,
        };
        match self.takes {
            Takes::Nothing => arg.action(clap::ArgAction::SetTrue),
            Takes::Value(name) => arg.value_name(name).allow_negative_numbers(true),
            Takes::Words(name) => arg.value_name(name).num_args(1..).allow_hyphen_values(true),
        }
    }

    /// As the hint for an unknown option shows it: `--timeout SECONDS`.
    fn shown(&self) -> String {
        match self.takes {
            Takes::Nothing => format!("--{}", self.long),
            Takes::Value(name) | Takes::Words(name) => format!("--{} {name}", self.long),
        }
    }
}

/// clap's global options: those before a server or command.
pub fn global_args() -> impl Iterator<Item = clap::Arg> {
    OPTIONS
        .iter()
        .filter(|o| o.before_server)
        .map(FerryOption::arg)
}

/// ferry's options a server takes before a tool name.
pub fn server_args() -> impl Iterator<Item = clap::Arg> {
    OPTIONS
        .iter()
        .filter(|o| o.after_server)
        .map(FerryOption::arg)
}

/// ferry's options the hint for an unknown option after a server names, before the
/// server's own (`--resources`...).
pub fn server_hint() -> String {
    OPTIONS
        .iter()
        .filter(|o| o.in_server_hint)
        .map(FerryOption::shown)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `name` (without `--`) is one of ferry's options after a tool name.
pub fn after_tool(name: &str) -> bool {
    OPTIONS.iter().any(|o| o.after_tool && o.long == name)
}

/// Whether the words of a server command ask for a cold call (`--no-daemon`), read without
/// the options table on the warm path.
pub fn asks_cold(words: &[String]) -> bool {
    words.iter().any(|w| w == "--no-daemon")
}
