//! The `ferry` binary: the composition root. It joins the CLI's options table with serve's
//! and the daemon's, dispatches, and maps the outcome to an exit code; everything else lives
//! in the library.
//!
//! ferry starts as a C program (`no_main`): Rust's own start-up reads /proc/self/maps to place
//! a stack guard and installs handlers, a quarter of a warm call's whole time on this binary;
//! `signals::prepare` does the part ferry needs (SIGPIPE ignored, standard streams open).
#![no_main]

fn table() -> clap::Command {
    ferry::cli::table()
}

/// A command handed to the daemon, run with the CLI's code and this binary's whole table.
fn run_handed_over(
    run: ferry::daemon::wire::Run,
    link: std::sync::Arc<ferry::daemon::server::CallerLink>,
    pool: std::sync::Arc<ferry::client::pool::Pool>,
) -> ferry::protocol::BoxFuture<'static, ferry::daemon::server::Handled> {
    ferry::cli::warm::run(run, link, pool, table)
}

/// The process's entry point; a panic (a bug) ends it with status 101, as Rust's would.
#[no_mangle]
extern "C" fn main(
    _argc: std::ffi::c_int,
    _argv: *const *const std::ffi::c_char,
) -> std::ffi::c_int {
    ferry::signals::prepare();
    std::panic::catch_unwind(run).unwrap_or(101)
}

fn run() -> i32 {
    // The daemon, its servers' guards and serve's reaper are ferry's own processes, started
    // by ferry alone.
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    match args.get(1).and_then(|a| a.to_str()) {
        Some("__daemon") => return ferry::daemon::server::run(run_handed_over),
        Some("__reaper") => return ferry::serve::reaper::run(),
        Some("__guard") => {
            let rest: Vec<String> = args[2..]
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .skip_while(|a| a != "--")
                .skip(1)
                .collect();
            return ferry::daemon::guard::run(&rest);
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
    ferry::cli::main(args, table, &other)
}
