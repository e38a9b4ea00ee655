//! Links the ferry binary as a position-dependent executable on Linux.
//!
//! A position-independent one must be relocated at every start: 13,500 relocations over
//! 250 KB of tables, about 60 page faults and a third of `ferry --version`'s time, paid by
//! every warm call (measured with perf stat, benches/run.sh). The price is that the program's
//! own code is not at a random address (libraries, stack and heap still are).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bin=ferry=-no-pie");
        // Static (scripts/dist.sh builds with crt-static): rust-lld, rustc's default linker
        // here, would still name the dynamic loader as the program's interpreter, and such a
        // program crashes at start. There is nothing for a loader to do: name none.
        let features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
        if features.split(',').any(|f| f == "crt-static") {
            println!("cargo:rustc-link-arg-bin=ferry=-Wl,--no-dynamic-linker");
        }
    }
}
