//! `ferry find WORDS... [--limit N] [--from FILE] [--no-help]`: the best-matching cached tools
//! of every server, as listing lines with their server, and the top hit's help under its line,
//! so one command leads from a task to a call. No server is started.
//!
//! The cache is read only for its words (each tool's name, description and parameter names,
//! borrowed from the file's text), and what the search makes of them is kept beside it
//! (`<cache>.find`, remade whenever the cache file changes), so a later search reads that
//! instead; only the servers whose tools are shown are parsed in full. The tool vectors (the
//! dense model's, which the ranking fuses with its words) are kept apart (`<cache>.vectors`). A
//! catalog of ten thousand tools is searched in tens of milliseconds this way.

use super::config::load_registry;
use super::sources::file_source;
use super::terminal::{emit, warn};
use crate::client::config::ServerSpec;
use crate::client::{cache, catalog, CacheEntry};
use crate::protocol::tool_text::tool_texts;
use crate::protocol::tools::Tool;
use crate::render::tool::{find_answer, FoundTool};
use crate::tokens::find::{
    fitting_servers, load_documents, save_documents, save_vectors, servers_by_fit, shown, Document,
    Index, WEAK_MARK,
};
use crate::{Error, Outcome, Result};
use clap::ArgMatches;
use std::path::PathBuf;

/// Where a server's tools come from.
enum Origin {
    Cache(Box<ServerSpec>),
    File(String),
}

/// One server searched: its tools in full once a hit needs them.
struct Searched {
    name: String,
    origin: Origin,
    tools: Option<Vec<Tool>>,
    /// A cached server's tools checked against its pins.
    pins: Option<crate::client::pins::Report>,
    /// Its documents' places in the index, and where their vectors are kept (with the key they
    /// were saved under) when they were read from a search file without them.
    documents: std::ops::Range<usize>,
    vectors: Option<(PathBuf, String)>,
}

impl Searched {
    /// The full tool named `name`, parsing the server's tools the first time (warnings about
    /// unusable tools are printed then). `None` for a tool the full parse refuses.
    fn tool(&mut self, name: &str) -> Option<&Tool> {
        if self.tools.is_none() {
            let tools = match &self.origin {
                Origin::Cache(spec) => CacheEntry::load_stable(spec)
                    .map(|entry| {
                        let (tools, warnings) = catalog::usable_tools(spec, entry);
                        warnings.iter().for_each(|w| warn(&format!("warning: {w}")));
                        tools
                    })
                    .unwrap_or_default(),
                Origin::File(path) => file_source(path).map(|s| s.tools).unwrap_or_default(),
            };
            if let Origin::Cache(spec) = &self.origin {
                let all: Vec<&Tool> = tools.iter().collect();
                let report =
                    crate::client::pins::observe(spec, &all, &crate::client::pins::env_var);
                report.warnings().iter().for_each(|w| warn(w));
                self.pins = Some(report);
            }
            self.tools = Some(tools);
        }
        self.tools.as_ref()?.iter().find(|t| t.name == name)
    }
}

pub fn find(matches: &ArgMatches) -> Result<Outcome> {
    let query: Vec<String> = super::strings(matches, "words");
    let limit = matches
        .get_one::<usize>("limit")
        .copied()
        .unwrap_or(crate::tokens::meter::FIND_LIMIT);
    if limit == 0 {
        return Err(Error::usage("--limit must be 1 or more")
            .with_hint("for example: ferry find create issue --limit 10"));
    }
    let files: Vec<String> = super::strings(matches, "from");
    let mut searched: Vec<Searched> = Vec::new();
    // Each document's tool is (server, name): the server's index in `searched`.
    let mut documents: Vec<Document<(usize, String)>> = Vec::new();
    for file in &files {
        let bytes = std::fs::read(file).map_err(|e| {
            Error::usage(format!("cannot read {file}: {e}"))
                .with_hint("give the path of a saved tools/list result")
        })?;
        let server = searched.len();
        match tool_texts(&bytes) {
            Some((texts, _)) => {
                let name = file_source_name(file);
                documents.extend(texts.iter().map(|t| {
                    Document::from_parts(
                        &name,
                        &t.name,
                        &t.description,
                        t.params.iter().map(|p| p.as_ref()),
                        (server, t.name.to_string()),
                    )
                }));
                searched.push(Searched {
                    name,
                    origin: Origin::File(file.clone()),
                    tools: None,
                    pins: None,
                    documents: 0..0,
                    vectors: None,
                });
            }
            // Another shape of saved list: read in full (and its errors said) as before.
            None => {
                let source = file_source(file)?;
                documents.extend(source.tools.iter().map(|t| {
                    Document::new(&source.name, t.clone()).with_tool((server, t.name.clone()))
                }));
                searched.push(Searched {
                    name: source.name,
                    origin: Origin::File(file.clone()),
                    tools: Some(source.tools),
                    pins: None,
                    documents: 0..0,
                    vectors: None,
                });
            }
        }
    }
    if files.is_empty() {
        let registry = load_registry()?;
        if registry.servers.is_empty() {
            return Err(Error::usage("no servers are configured, so there is nothing to search")
                .with_hint("add one with `ferry add NAME -- COMMAND` or `ferry import claude`, or search a saved list with --from FILE"));
        }
        let (mut uncached, mut refused) = (Vec::new(), Vec::new());
        for spec in &registry.servers {
            let server = searched.len();
            match cached_documents(spec, server) {
                Some((found, vectors)) => {
                    let start = documents.len();
                    documents.extend(found);
                    searched.push(Searched {
                        name: spec.name.clone(),
                        origin: Origin::Cache(Box::new(spec.clone())),
                        tools: None,
                        pins: None,
                        documents: start..documents.len(),
                        vectors,
                    });
                }
                // A project server trust refuses cannot be listed: never suggest running it.
                None if spec.check_trusted().is_err() => refused.push(spec.name.as_str()),
                None => uncached.push(spec.name.as_str()),
            }
        }
        if documents.is_empty() {
            let all: Vec<&str> = uncached.iter().chain(&refused).copied().collect();
            let error = Error::usage(format!(
                "no server's tools are cached yet ({}), so there is nothing to search",
                all.join(", ")
            ));
            return Err(match uncached.first() {
                Some(first) => error.with_hint(format!(
                    "list a server once to cache its tools: ferry {first}"
                )),
                None => error.with_hint(
                    "these are a repository's servers, not trusted here: read its .mcp.json, then run `ferry trust`",
                ),
            });
        }
        if !refused.is_empty() {
            warn(&format!(
                "note: not searched (a repository's servers, not trusted; `ferry trust` allows them): {}",
                refused.join(", ")
            ));
        }
        if !uncached.is_empty() {
            warn(&format!(
                "note: not searched (no cached tools yet; run `ferry NAME` once): {}",
                uncached.join(", ")
            ));
        }
    }
    let mut index = Index::new(documents);
    // The ranking weighs meaning too (and, when no tool shares a word with the task, offers
    // the nearest by meaning as weak matches): the tool vectors kept apart are read in.
    for source in &searched {
        if let Some((path, key)) = &source.vectors {
            if let Ok(bytes) = std::fs::read(path) {
                index.load_vectors(source.documents.clone(), &bytes, key);
            }
        }
    }
    let text = query.join(" ");
    let (mut ranked, weak) = index.search(&text);
    // A hit whose full definition is unusable (the full parse refuses it) is passed over.
    let mut usable: Vec<(usize, String)> = Vec::new();
    let mut kept = Vec::new();
    for (doc, score) in ranked.drain(..) {
        if kept.len() >= limit {
            break;
        }
        let (server, name) = &doc.tool;
        if searched[*server].tool(name).is_some() {
            usable.push((*server, name.clone()));
            kept.push((doc, score));
        }
    }
    if kept.is_empty() {
        warn(&format!("no tool matches {:?}", query.join(" ")));
        return Ok(Outcome::NoMatch);
    }
    let with_help = !matches.get_flag("no-help");
    let picks = shown(&kept, limit);
    let hits: Vec<FoundTool> = picks
        .iter()
        .map(|(i, help)| {
            let (server, name) = &usable[*i];
            let source = &searched[*server];
            FoundTool {
                server: &source.name,
                tool: source
                    .tools
                    .as_ref()
                    .and_then(|tools| tools.iter().find(|t| &t.name == name))
                    .expect("parsed above"),
                with_help: *help && with_help,
                mark: source
                    .pins
                    .as_ref()
                    .and_then(|p| p.label(name))
                    .or_else(|| weak.then(|| WEAK_MARK.to_string())),
            }
        })
        .collect();
    let mut answer = find_answer(&hits);
    if weak {
        let servers = weak_servers(&kept);
        answer.push_str(&format!(
            "weak matches: no tool shares a word with the task, these are the nearest by meaning; the servers that fit best: {} (list one whole: ferry {})\n",
            servers.join(", "),
            servers[0]
        ));
        emit(&answer)?;
        std::mem::forget(index);
        return Ok(Outcome::Success);
    }
    let servers = fitting_servers(&kept);
    if let Some(first) = servers.first() {
        answer.push_str(&format!(
            "close matches; the servers that fit best: {} (list one whole: ferry {first})\n",
            servers.join(", ")
        ));
    }
    emit(&answer)?;
    // The process ends now: freeing thousands of parsed words one by one would cost more than
    // the search itself.
    std::mem::forget(index);
    Ok(Outcome::Success)
}

/// The servers that weak matches come from, best first (at least the first hit's).
fn weak_servers<'a, T>(kept: &[(&'a Document<T>, f64)]) -> Vec<&'a str> {
    let servers = servers_by_fit(kept);
    if servers.is_empty() {
        kept.iter()
            .take(1)
            .map(|(d, _)| d.server.as_str())
            .collect()
    } else {
        servers
    }
}

/// A server's cached tools as documents to search: from the search file kept beside its cache
/// when that was made from the cache as it is, else from the cache (and the search files
/// written for next time). `None` when nothing is cached. Documents read from a search file
/// come without their vectors: where those are kept, and their key, is returned with them.
type Found = (Vec<Document<(usize, String)>>, Option<(PathBuf, String)>);

fn cached_documents(spec: &ServerSpec, server: usize) -> Option<Found> {
    let path = cache::stable_path(spec)?;
    let meta = std::fs::metadata(&path).ok()?;
    let modified = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    // The vectors are the model's as much as the listing's: a new model remakes them.
    let key = format!(
        "{} {} {modified} model {}",
        env!("CARGO_PKG_VERSION"),
        meta.len(),
        crate::tokens::find::dense::MODEL_VERSION
    );
    let saved = path.with_extension("find");
    let vectors = path.with_extension("vectors");
    let keep = |name: &str| spec.allows_tool(name).then(|| (server, name.to_string()));
    if let Some(found) = std::fs::read(&saved)
        .ok()
        .and_then(|bytes| load_documents(&bytes, &key, &spec.name, keep))
    {
        return Some((found, Some((vectors, key))));
    }
    let bytes = std::fs::read(&path).ok()?;
    let (texts, fetched) = tool_texts(&bytes)?;
    if fetched == 0 {
        return None;
    }
    let all: Vec<Document<(usize, String)>> = texts
        .iter()
        .map(|t| {
            Document::from_parts(
                &spec.name,
                &t.name,
                &t.description,
                t.params.iter().map(|p| p.as_ref()),
                (server, t.name.to_string()),
            )
        })
        .collect();
    // Best effort: a search that cannot write its files still answers. The vectors first: a
    // search file is never newer than the vectors beside it.
    let _ = crate::paths::write_private(&vectors, &save_vectors(&all, &key));
    let _ = crate::paths::write_private(&saved, &save_documents(&all, &key));
    Some((
        all.into_iter()
            .filter(|d| spec.allows_tool(&d.tool.1))
            .collect(),
        None,
    ))
}

/// A saved list's server name: its file name without `.tools.json` or `.json`.
fn file_source_name(path: &str) -> String {
    let file = std::path::Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(path);
    file.trim_end_matches(".json")
        .trim_end_matches(".tools")
        .to_string()
}
