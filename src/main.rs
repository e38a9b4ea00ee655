//! The `ferry` binary: everything lives in the library; this only maps the outcome to an exit code.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(ferry::cli::main(args));
}
