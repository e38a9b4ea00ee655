//! The `ferry` binary: the composition root. It joins the CLI's options table with serve's
//! and the daemon's, dispatches, and maps the outcome to an exit code; everything else lives
//! in the library.

fn table() -> clap::Command {
    ferry::cli::command()
        .subcommand(ferry::serve::command())
        .subcommand(ferry::serve::ask::command())
        .subcommand(ferry::daemon::command())
}

/// A command handed to the daemon, run with the CLI's code and this binary's whole table.
fn run_handed_over(
    run: ferry::daemon::wire::Run,
    link: std::sync::Arc<ferry::daemon::server::CallerLink>,
    pool: std::sync::Arc<ferry::daemon::pool::Pool>,
) -> ferry::protocol::BoxFuture<'static, ferry::daemon::server::Handled> {
    ferry::cli::warm::run(run, link, pool, table)
}

fn main() {
    // The daemon, its servers' guards and serve's reaper are ferry's own processes, started
    // by ferry alone.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match args.get(1).and_then(|a| a.to_str()) {
        Some("__daemon") => std::process::exit(ferry::daemon::server::run(run_handed_over)),
        Some("__reaper") => std::process::exit(ferry::serve::reaper::run()),
        Some("__guard") => {
            let rest: Vec<String> = args[2..]
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .skip_while(|a| a != "--")
                .skip(1)
                .collect();
            std::process::exit(ferry::daemon::guard::run(&rest))
        }
        _ => {}
    }
    let other = |name: &str, matches: &clap::ArgMatches, _globals: &ferry::cli::Globals| match name
    {
        "serve" => Some(ferry::serve::main(matches)),
        "ask" => Some(ferry::serve::ask::main(matches)),
        "daemon" => Some(ferry::daemon::main(matches)),
        _ => None,
    };
    std::process::exit(ferry::cli::main(args, table, &other));
}
