//! Drafts a serve manifest from a command-line program's help text (`ferry serve init <cli>`).
//!
//! The caller runs `<cli> --help` (and `<cli> <sub> --help` for each subcommand found here);
//! nothing in this module runs anything. Help texts follow no standard, so reading them is
//! heuristic: the common layouts (git's parse-options, ripgrep, curl, docker/cobra, Python's
//! argparse, clap, GNU getopt) are read well, and anything else yields less, never a manifest
//! that fails to load. The result is a draft for a person to review: every parameter is
//! optional, and options that run other programs or write files are left out.
//!
//! `text` reads help text into lines, `subcommands` finds the commands it lists, `usage` reads
//! its usage lines, `options` its option lines; `params` turns options and operands into
//! parameters, `rank` picks the options people use when there are more than a tool keeps,
//! `risks` says which to leave out, confirm, keep read-only or let reach the network, and
//! `write` writes the TOML. A help text whose path ends in `-h` is the short help of the one
//! without it (ripgrep's `-h`, git's `log -h` beside its manual).

mod options;
mod params;
mod rank;
mod risks;
mod subcommands;
mod text;
mod usage;
mod write;

pub use options::{options, OptionSpec};
pub use subcommands::subcommands;
pub use text::HelpText;
pub use write::{draft, MAX_PARAMS, MAX_TOOLS};

#[cfg(test)]
mod tests;
