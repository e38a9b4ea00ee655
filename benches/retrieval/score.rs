//! Scores `find`'s ranking on the task sets of benches/retrieval/ (recall at 1, 3 and 5, and
//! the mean reciprocal rank of the first accepted tool) beside a plain BM25 over each tool's
//! name and description, over the 39 snapshot servers. Shared by `tests/find.rs` (floors) and
//! `cargo bench --bench find` (figures).

use ferry::protocol::tools::parse_tools;
use ferry::tokens::find::{Document, Index};
use ferry::tokens::meter::tools_from_json;
use std::collections::HashMap;
use std::path::Path;

/// One task and the tools (`server/tool`) that do it.
pub struct Task {
    pub text: String,
    pub accepted: Vec<String>,
}

/// A part of a set: its tasks and the servers its catalog leaves out.
pub struct Part {
    pub name: String,
    pub tasks: Vec<Task>,
    pub exclude: Vec<String>,
}

/// Recall at 1, 3 and 5 and MRR over `n` tasks.
#[derive(Default, Debug, Clone, Copy)]
pub struct Rates {
    pub n: usize,
    pub at1: usize,
    pub at3: usize,
    pub at5: usize,
    pub mrr: f64,
}

impl Rates {
    fn add(&mut self, rank: Option<usize>) {
        self.n += 1;
        if let Some(r) = rank {
            self.at1 += usize::from(r < 1);
            self.at3 += usize::from(r < 3);
            self.at5 += usize::from(r < 5);
            self.mrr += 1.0 / (r + 1) as f64;
        }
    }

    pub fn line(&self) -> String {
        let n = self.n.max(1) as f64;
        format!(
            "@1 {:3}/{} ({:3.0}%)  @3 {:3}/{} ({:3.0}%)  @5 {:3}/{} ({:3.0}%)  MRR {:.3}",
            self.at1,
            self.n,
            100.0 * self.at1 as f64 / n,
            self.at3,
            self.n,
            100.0 * self.at3 as f64 / n,
            self.at5,
            self.n,
            100.0 * self.at5 as f64 / n,
            self.mrr / n
        )
    }
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// Every part named `which` ("tune" or "sealed") of the sets in benches/retrieval/, those with
/// tasks.
pub fn parts(which: &str) -> Vec<Part> {
    let mut files: Vec<_> = std::fs::read_dir(root().join("benches/retrieval"))
        .expect("benches/retrieval")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|path| {
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            let strings = |v: &serde_json::Value| -> Vec<String> {
                v.as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(|s| s.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let part = Part {
                name: format!("{} {which}", path.file_stem().unwrap().to_string_lossy()),
                tasks: doc[which]
                    .as_array()
                    .expect("a part")
                    .iter()
                    .map(|t| Task {
                        text: t["task"].as_str().unwrap().to_string(),
                        accepted: strings(&t["accepted"]),
                    })
                    .collect(),
                exclude: strings(&doc["exclude_servers"]),
            };
            // A set used while tuning has no sealed part.
            (!part.tasks.is_empty()).then_some(part)
        })
        .collect()
}

/// Every snapshot server's tools: name, description, parameter names.
pub fn catalog() -> Vec<(String, Vec<ferry::protocol::tools::Tool>)> {
    let mut out = Vec::new();
    for dir in ["tests/corpus", "benches/heldout"] {
        let mut files: Vec<_> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".tools.json"))
            .collect();
        files.sort();
        for path in files {
            let doc: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let name = path
                .file_name()
                .unwrap()
                .to_string_lossy()
                .trim_end_matches(".tools.json")
                .to_string();
            out.push((name, parse_tools(tools_from_json(&doc).unwrap()).0));
        }
    }
    out
}

/// The catalog as ferry's index, without the servers a part leaves out.
pub fn index(exclude: &[String]) -> Index {
    let docs = catalog()
        .into_iter()
        .filter(|(s, _)| !exclude.contains(s))
        .flat_map(|(s, tools)| {
            tools
                .into_iter()
                .map(|t| Document::new(&s, t))
                .collect::<Vec<_>>()
        })
        .collect();
    Index::new(docs)
}

/// The rank of the first accepted tool in `names`, best first.
fn first_accepted(names: &[String], accepted: &[String]) -> Option<usize> {
    names.iter().position(|n| accepted.contains(n))
}

/// ferry's rates on `tasks`, with the tasks whose accepted tool is not in the top three.
pub fn ferry_rates(index: &Index, tasks: &[Task]) -> (Rates, Vec<String>) {
    let known: std::collections::HashSet<String> = index
        .documents()
        .iter()
        .map(|d| format!("{}/{}", d.server, d.tool.name))
        .collect();
    let mut rates = Rates::default();
    let mut misses = Vec::new();
    for task in tasks {
        for a in &task.accepted {
            assert!(
                known.contains(a),
                "{:?} accepts {a}, which no server has",
                task.text
            );
        }
        // What `find` shows: the ranking, or the weak matches when no tool shares a word.
        let names: Vec<String> = index
            .search(&task.text)
            .0
            .iter()
            .take(10)
            .map(|(d, _)| format!("{}/{}", d.server, d.tool.name))
            .collect();
        let rank = first_accepted(&names, &task.accepted);
        if rank.is_none_or(|r| r >= 3) {
            misses.push(format!(
                "{:?}: expected {:?}, got {:?}",
                task.text,
                task.accepted,
                &names[..names.len().min(3)]
            ));
        }
        rates.add(rank);
    }
    (rates, misses)
}

/// Plain BM25 (k1 1.2, b 0.75) over each tool's name and description, split at anything not
/// a letter or digit and lower-cased, no stemming: the baseline.
pub fn bm25_rates(exclude: &[String], tasks: &[Task]) -> Rates {
    let words = |text: &str| -> Vec<String> {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect()
    };
    let docs: Vec<(String, Vec<String>)> = catalog()
        .into_iter()
        .filter(|(s, _)| !exclude.contains(s))
        .flat_map(|(s, tools)| {
            tools
                .into_iter()
                .map(|t| {
                    (
                        format!("{s}/{}", t.name),
                        words(&format!("{} {}", t.name, t.description)),
                    )
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let n = docs.len() as f64;
    let average = docs.iter().map(|(_, w)| w.len()).sum::<usize>() as f64 / n;
    let mut df: HashMap<&str, usize> = HashMap::new();
    for (_, w) in &docs {
        let mut seen: Vec<&str> = w.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for s in seen {
            *df.entry(s).or_default() += 1;
        }
    }
    let mut rates = Rates::default();
    for task in tasks {
        let query = words(&task.text);
        let mut scored: Vec<(f64, &str)> = docs
            .iter()
            .map(|(name, w)| {
                let mut score = 0.0;
                for q in &query {
                    let tf = w.iter().filter(|x| *x == q).count() as f64;
                    if tf > 0.0 {
                        let d = df[q.as_str()] as f64;
                        let idf = ((n - d + 0.5) / (d + 0.5) + 1.0).ln();
                        score +=
                            idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * w.len() as f64 / average));
                    }
                }
                (score, name.as_str())
            })
            .filter(|(s, _)| *s > 0.0)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let names: Vec<String> = scored.iter().take(10).map(|(_, n)| n.to_string()).collect();
        rates.add(first_accepted(&names, &task.accepted));
    }
    rates
}
