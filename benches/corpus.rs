//! Token figures of ferry's renderings over the real `tools/list` snapshots in
//! `tests/corpus/`: per server, the host-format definitions (what an MCP host loads), the
//! listing (tokens per tool), the mean `--help`, and help/definition. Prints figures only.
//!
//! Run: `cargo bench --bench corpus` (o200k_base; `-- cl100k_base` for the other encoding;
//! `-- benches/heldout` or any directory of `*.tools.json` for snapshots the renderings were
//! not tuned on; `-- --lines` also prints every listing line, to read what the rules make).

use ferry::protocol::tools::parse_tools;
use ferry::render::{listing_lines, tool_help};
use ferry::tokenizer::{Encoding, Tokenizer};
use ferry::tokens::meter::{host_definition, tools_from_json, Host};
use std::time::Instant;

fn main() {
    let print_lines = std::env::args().any(|a| a == "--lines");
    let words: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let encoding = match words.iter().find(|w| w.ends_with("_base")) {
        Some(name) => Encoding::parse(name).expect("o200k_base or cl100k_base"),
        None => Encoding::O200kBase,
    };
    let dir = words
        .iter()
        .find(|w| !w.ends_with("_base"))
        .cloned()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus").to_string());
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {dir}: {e}"))
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
        .collect();
    files.sort();
    let started = Instant::now();
    let tokenizer = Tokenizer::get(encoding).expect("tokenizer");
    let built = started.elapsed();
    println!(
        "{} (encoder built in {:.0} ms), anthropic host format\n",
        encoding.name(),
        built.as_secs_f64() * 1000.0
    );
    println!(
        "{:20} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "server", "tools", "host", "listing", "list/tool", "help avg", "help/host"
    );
    let (mut all_tools, mut all_host, mut all_listing, mut all_help) = (0, 0, 0, 0);
    let timer = Instant::now();
    for path in &files {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let (tools, _) = parse_tools(tools_from_json(&doc).unwrap());
        let server = path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .trim_end_matches(".tools.json")
            .to_string();
        let host: usize = tools
            .iter()
            .map(|t| tokenizer.count(&host_definition(t, Host::Anthropic)))
            .sum();
        let listing: String = listing_lines(&tools)
            .iter()
            .map(|l| l.clone() + "\n")
            .collect();
        if print_lines {
            print!("{listing}");
        }
        let listing = tokenizer.count(&listing);
        let help: usize = tools.iter().map(|t| tokenizer.count(&tool_help(t))).sum();
        let n = tools.len().max(1);
        println!(
            "{:20} {:>5} {:>9} {:>9} {:>9.1} {:>9.0} {:>9.2}",
            server,
            tools.len(),
            host,
            listing,
            listing as f64 / n as f64,
            help as f64 / n as f64,
            help as f64 / host.max(1) as f64
        );
        all_tools += tools.len();
        all_host += host;
        all_listing += listing;
        all_help += help;
    }
    println!(
        "{:20} {:>5} {:>9} {:>9} {:>9.1} {:>9.0} {:>9.2}",
        "all",
        all_tools,
        all_host,
        all_listing,
        all_listing as f64 / all_tools.max(1) as f64,
        all_help as f64 / all_tools.max(1) as f64,
        all_help as f64 / all_host.max(1) as f64
    );
    println!(
        "\nrendering and counting all of it: {:.0} ms",
        timer.elapsed().as_secs_f64() * 1000.0
    );
    println!(
        "targets: listing <= 14 tokens per tool on average; total help <= 0.6x total host format"
    );
}
