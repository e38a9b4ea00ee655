//! The `ferry` binary: the composition root. It joins the CLI's options table with serve's,
//! dispatches, and maps the outcome to an exit code; everything else lives in the library.

fn table() -> clap::Command {
    ferry::cli::command().subcommand(ferry::serve::command())
}

fn main() {
    let other = |name: &str, matches: &clap::ArgMatches, _globals: &ferry::cli::Globals| match name
    {
        "serve" => Some(ferry::serve::main(matches)),
        _ => None,
    };
    std::process::exit(ferry::cli::main(std::env::args_os(), table, &other));
}
