//! The `ferry` binary: everything lives in the library; this only maps the outcome to an exit code.

fn main() {
    std::process::exit(ferry::cli::main(std::env::args_os()));
}
