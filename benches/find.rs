//! How fast `ferry find` is over a large catalog: ten thousand cached tools (the 39 snapshots
//! of `tests/corpus/` and `benches/heldout/`, twelve times over, as 468 configured servers with
//! their caches), searched by the release binary in a fresh process (cold: it reads every
//! cache file), and by the proxy's `find` in a long-lived process (warm: the index is built
//! once, each call ranks and renders). Prints figures only.
//!
//! Run: `cargo bench --bench find` (`-- --copies N` for another size; `-- --keep` leaves the
//! configuration and caches in place and says where, to run `ferry find` on them by hand).

use ferry::client::config::Registry;
use ferry::client::CacheEntry;
use ferry::protocol::tools::parse_tools;
use ferry::render::tool::proxy_find_answer;
use ferry::tokens::find::{shown_tools, Document, Index};
use ferry::tokens::meter::tools_from_json;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "retrieval/score.rs"]
mod score;

/// Tasks as people ask them, searched in turn.
const QUERIES: [&str; 8] = [
    "make a new folder",
    "log the hours I spent on a Jira ticket",
    "take a screenshot of the page",
    "create a merge request",
    "send a message to a slack channel",
    "refund a payment",
    "what time is it in Tokyo",
    "search the web",
];

fn snapshots() -> Vec<(String, Vec<Value>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    for dir in ["tests/corpus", "benches/heldout"] {
        let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(dir))
            .expect("snapshot directory")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
            .collect();
        files.sort();
        for path in files {
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let name = path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".tools.json")
                .to_string();
            out.push((name, tools_from_json(&doc).unwrap().clone()));
        }
    }
    out
}

fn median(mut times: Vec<Duration>) -> (f64, f64) {
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (
        ms(times[times.len() / 2]),
        ms(times[(times.len() * 9 / 10).min(times.len() - 1)]),
    )
}

/// Retrieval on the sets of benches/retrieval/: ferry beside a plain BM25, in the same run.
fn retrieval() {
    println!("retrieval (benches/retrieval/; the sealed parts were never tuned on):");
    for part in score::parts("tune")
        .into_iter()
        .chain(score::parts("sealed"))
    {
        let index = score::index(&part.exclude);
        let (ferry, _) = score::ferry_rates(&index, &part.tasks);
        let bm25 = score::bm25_rates(&part.exclude, &part.tasks);
        println!("  {:14} ferry {}", part.name, ferry.line());
        println!("  {:14} bm25  {}", "", bm25.line());
    }
    println!();
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    retrieval();
    let copies: usize = args
        .iter()
        .position(|a| a == "--copies")
        .and_then(|i| args.get(i + 1))
        .and_then(|n| n.parse().ok())
        .unwrap_or(12);
    let snapshots = snapshots();
    let root = std::env::temp_dir().join(format!("ferry-find-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    for dir in ["config", "cache", "home"] {
        std::fs::create_dir_all(root.join(dir)).unwrap();
    }
    // The servers, configured and cached as `ferry NAME` would have left them.
    let mut servers = serde_json::Map::new();
    for copy in 0..copies {
        for (name, _) in &snapshots {
            servers.insert(
                format!("{name}_{copy}"),
                // Each server its own identity, as real servers have: pins are kept per
                // command and arguments, and one identity listing another's tools is a change.
                json!({"command": "true", "args": [name, format!("{copy}")]}),
            );
        }
    }
    std::fs::write(
        root.join("config/servers.json"),
        json!({ "mcpServers": servers }).to_string(),
    )
    .unwrap();
    std::env::set_var("FERRY_CONFIG_DIR", root.join("config"));
    std::env::set_var("FERRY_CACHE_DIR", root.join("cache"));
    std::env::set_var("HOME", root.join("home"));
    let registry = Registry::load(&root).expect("the bench's config");
    let mut tool_count = 0;
    for spec in &registry.servers {
        let base = spec
            .name
            .rsplit_once('_')
            .map_or(spec.name.as_str(), |(b, _)| b);
        let (_, tools) = snapshots.iter().find(|(n, _)| n == base).unwrap();
        tool_count += tools.len();
        CacheEntry {
            tools: tools.clone(),
            fetched_at_ms: 1,
            ..CacheEntry::default()
        }
        .store(spec);
    }
    println!(
        "{tool_count} tools of {} servers ({copies} copies of {} snapshots)\n",
        registry.servers.len(),
        snapshots.len()
    );

    // Cold: a fresh release process per search.
    let ferry = env!("CARGO_BIN_EXE_ferry");
    let search = |query: &str| -> Duration {
        let started = Instant::now();
        let output = Command::new(ferry)
            .arg("find")
            .args(query.split_whitespace())
            .current_dir(&root)
            .env("FERRY_NO_DAEMON", "1")
            .output()
            .expect("ferry runs");
        let elapsed = started.elapsed();
        assert!(output.status.success(), "{output:?}");
        elapsed
    };
    // The first search reads every cache file and keeps what it made of each beside it.
    let first = search(QUERIES[0]);
    let runs = 5;
    let mut times = Vec::new();
    for _ in 0..runs {
        for query in QUERIES {
            times.push(search(query));
        }
    }
    let (median_ms, p90) = median(times);
    println!(
        "ferry find, first search:   {:6.1} ms (reads the caches, writes the search files)",
        first.as_secs_f64() * 1000.0
    );
    println!(
        "ferry find, cold process:   median {median_ms:6.1} ms   p90 {p90:6.1} ms   (target < 50 ms)"
    );

    // Warm: the proxy's index built once, then a find per call.
    let started = Instant::now();
    let mut documents = Vec::new();
    for spec in &registry.servers {
        let entry = CacheEntry::load(spec).unwrap();
        let (tools, _) = parse_tools(&entry.tools);
        documents.extend(tools.into_iter().map(|t| Document::new(&spec.name, t)));
    }
    let index = Index::new(documents).with_postings();
    let built = started.elapsed();
    let mut times = Vec::new();
    let mut bytes = 0;
    for _ in 0..20 {
        for query in QUERIES {
            let started = Instant::now();
            let ranked = index.rank(query);
            bytes += proxy_find_answer(&shown_tools(&ranked, 3)).len();
            times.push(started.elapsed());
        }
    }
    let (median_ms, p90) = median(times);
    println!(
        "proxy find, warm index:     median {median_ms:6.2} ms   p90 {p90:6.2} ms   (target < 1 ms; index built once in {:.0} ms)",
        built.as_secs_f64() * 1000.0
    );
    assert!(bytes > 0);
    if args.iter().any(|a| a == "--keep") {
        println!(
            "\nkept: FERRY_CONFIG_DIR={} FERRY_CACHE_DIR={}",
            root.join("config").display(),
            root.join("cache").display()
        );
    } else {
        let _ = std::fs::remove_dir_all(&root);
    }
}
