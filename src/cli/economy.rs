//! `ferry tokens`, `ferry find` and `ferry skill`: the token economy's commands.

use super::{
    block_on_interruptible, emit, load_registry, open_session, refresh_tools, usable_tools,
};
use crate::client::config::ServerSpec;
use crate::client::CacheEntry;
use crate::protocol::tools::{parse_tools, Tool};
use crate::render::listing_line;
use crate::tokens::find::{rank, Document};
use crate::tokens::meter::{self, break_even, session_cost, Host, Meter, ServerCost, Session};
use crate::tokens::skill::{fingerprint, read_marker, render_skill, skill_name};
use crate::tokens::{Encoding, Tokenizer};
use crate::{Error, Result};
use serde_json::{json, Value};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One server's tools, wherever they came from.
struct Source {
    name: String,
    tools: Vec<Tool>,
    instructions: Option<String>,
}

/// The tools of configured servers: from the cache, or listed now when not cached.
fn live_sources(names: &[String]) -> Result<Vec<Source>> {
    let registry = load_registry()?;
    let specs: Vec<ServerSpec> = if names.is_empty() {
        registry.servers.clone()
    } else {
        names
            .iter()
            .map(|name| {
                if name.contains("://") {
                    return ServerSpec::ad_hoc(name);
                }
                registry.get(name).cloned().ok_or_else(|| {
                    Error::usage(format!("unknown server {name:?}"))
                        .with_hint("`ferry` lists the configured servers")
                })
            })
            .collect::<Result<_>>()?
    };
    let mut sources = Vec::new();
    for spec in specs {
        let entry = match CacheEntry::load(&spec).filter(CacheEntry::has_tools) {
            Some(entry) => entry,
            None => block_on_interruptible(async {
                let mut session = open_session(&spec, &Default::default(), None).await?;
                let entry = refresh_tools(&spec, &mut session).await;
                session.close().await;
                entry
            })?,
        };
        let instructions = entry.instructions.clone();
        sources.push(Source {
            name: spec.name.clone(),
            tools: usable_tools(&spec, entry),
            instructions,
        });
    }
    Ok(sources)
}

/// A saved `tools/list` result; the server is named after the file.
fn file_source(path: &str) -> Result<Source> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::usage(format!("cannot read {path}: {e}")))?;
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| Error::usage(format!("{path} is not valid JSON: {e}")))?;
    let entries = meter::tools_from_json(&doc).ok_or_else(|| {
        Error::usage(format!("{path} holds no tools list"))
            .with_hint("give a saved tools/list result: {\"tools\": [...]}")
    })?;
    let (tools, warnings) = parse_tools(entries);
    for warning in warnings {
        eprintln!("warning: {path}: {warning}");
    }
    let file = Path::new(path)
        .file_name()
        .and_then(|f| f.to_str())
        .unwrap_or(path);
    let name = file
        .trim_end_matches(".json")
        .trim_end_matches(".tools")
        .to_string();
    let instructions = doc
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_string);
    Ok(Source {
        name,
        tools,
        instructions,
    })
}

fn take_value(words: &[String], i: &mut usize, flag: &str) -> Result<String> {
    *i += 1;
    words
        .get(*i)
        .cloned()
        .ok_or_else(|| Error::usage(format!("{flag} needs a value")))
}

fn parse_count(text: &str, flag: &str) -> Result<usize> {
    text.parse()
        .map_err(|_| Error::usage(format!("{flag} must be a whole number, not {text:?}")))
}

/// `ferry tokens [SERVER...] [--from FILE...] [--tokenizer T] [--host H] [--json] [--tools]
/// [--session N] [--turns T] [--no-cache]`
pub fn tokens(words: &[String]) -> Result<i32> {
    let mut names = Vec::new();
    let mut files = Vec::new();
    let mut encoding = Encoding::O200kBase;
    let mut host = Host::Anthropic;
    let mut as_json = false;
    let mut per_tool = false;
    let mut session = Session {
        tools_used: 5,
        turns: 20,
        prompt_cache: true,
    };
    let mut session_asked = false;
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        match word {
            "--from" => files.push(take_value(words, &mut i, word)?),
            "--tokenizer" => encoding = Encoding::parse(&take_value(words, &mut i, word)?)?,
            "--host" => host = Host::parse(&take_value(words, &mut i, word)?)?,
            "--json" => as_json = true,
            "--tools" => per_tool = true,
            "--session" => {
                session.tools_used = parse_count(&take_value(words, &mut i, word)?, word)?;
                session_asked = true;
            }
            "--turns" => {
                session.turns = parse_count(&take_value(words, &mut i, word)?, word)?.max(1);
                session_asked = true;
            }
            "--no-cache" => {
                session.prompt_cache = false;
                session_asked = true;
            }
            "-h" | "--help" => {
                emit(TOKENS_HELP);
                return Ok(0);
            }
            flag if flag.starts_with('-') => {
                return Err(Error::usage(format!("unknown option {flag} for tokens"))
                    .with_hint("see: ferry tokens --help"))
            }
            name => names.push(name.to_string()),
        }
        i += 1;
    }
    let mut sources: Vec<Source> = files
        .iter()
        .map(|f| file_source(f))
        .collect::<Result<_>>()?;
    if !names.is_empty() || files.is_empty() {
        sources.extend(live_sources(&names)?);
    }
    if sources.is_empty() {
        return Err(Error::usage("no servers to measure")
            .with_hint("configure one (ferry add) or pass --from tools.json"));
    }
    let meter = Meter {
        tokenizer: Tokenizer::get(encoding)?,
        host,
    };
    let costs: Vec<ServerCost> = sources
        .iter()
        .map(|s| meter.measure(&s.name, &s.tools, s.instructions.as_deref()))
        .collect();
    let report = Report::new(&costs, meter.ferry_upfront(), session);
    if as_json {
        emit(
            &serde_json::to_string_pretty(&report.to_json(&meter, per_tool || costs.len() == 1))
                .unwrap_or_default(),
        );
    } else {
        emit(&report.to_text(&meter, per_tool || costs.len() == 1, session_asked));
    }
    Ok(0)
}

const TOKENS_HELP: &str = "\
usage: ferry tokens [SERVER...] [--from tools.json...] [options]
What each server's tools cost in context tokens on three paths: MCP eager (every definition
up front, in host format), MCP host-deferred (names up front; a search and the definition per
tool used), and ferry (one skill header up front; a find and --help per tool used).
  --from FILE         a saved tools/list result instead of a live server (repeatable)
  --tokenizer NAME    o200k_base (default) or cl100k_base
  --host NAME         anthropic (default) or openai: the format definitions are injected in
  --tools             a line per tool (the default for a single server)
  --session N         price a session using N tools (default 5) ...
  --turns T           ... over T turns (default 20) ...
  --no-cache          ... without prompt caching (default: cached, reads 0.1x, writes 1.25x)
  --json              machine-readable output
Claude's tokenizer is not public: counts are close estimates from OpenAI's public encodings.
";

/// The figures of one run of the meter.
struct Report<'a> {
    costs: &'a [ServerCost],
    ferry_upfront: usize,
    session: Session,
    eager: usize,
    deferred: usize,
    deferred_per_use: f64,
    ferry_per_use: f64,
}

impl<'a> Report<'a> {
    fn new(costs: &'a [ServerCost], ferry_upfront: usize, session: Session) -> Report<'a> {
        let tools = || costs.iter().flat_map(|c| &c.tools);
        Report {
            costs,
            ferry_upfront,
            session,
            eager: costs.iter().map(|c| c.eager).sum(),
            deferred: costs.iter().map(|c| c.deferred).sum(),
            deferred_per_use: meter::mean(tools(), |t| t.deferred_use),
            ferry_per_use: meter::mean(tools(), |t| t.ferry_use),
        }
    }

    fn sessions(&self) -> [(&'static str, f64); 3] {
        [
            (
                "MCP eager",
                session_cost(self.eager as f64, 0.0, self.session),
            ),
            (
                "MCP deferred",
                session_cost(self.deferred as f64, self.deferred_per_use, self.session),
            ),
            (
                "ferry",
                session_cost(self.ferry_upfront as f64, self.ferry_per_use, self.session),
            ),
        ]
    }

    fn to_text(&self, meter: &Meter, per_tool: bool, session_asked: bool) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} tokens, {} tool format. Claude's tokenizer is not public: figures for Claude are close estimates.\n",
            meter.tokenizer.encoding.name(),
            meter.host.name()
        );
        let width = self
            .costs
            .iter()
            .map(|c| c.server.len())
            .max()
            .unwrap_or(6)
            .max(6);
        let _ = writeln!(
            out,
            "{:width$}  {:>5}  {:>8}  {:>8}  {:>8}  {:>8}  {:>6}",
            "", "", "up front", "", "per use", "", "help/"
        );
        let _ = writeln!(
            out,
            "{:width$}  {:>5}  {:>8}  {:>8}  {:>8}  {:>8}  {:>6}",
            "server", "tools", "eager", "deferred", "deferred", "ferry", "defn"
        );
        let mut total_defs = 0;
        let mut total_helps = 0;
        for cost in self.costs {
            total_defs += cost.definitions();
            total_helps += cost.helps();
            let _ = writeln!(
                out,
                "{:width$}  {:>5}  {:>8}  {:>8}  {:>8.0}  {:>8.0}  {:>6}",
                cost.server,
                cost.tools.len(),
                cost.eager,
                cost.deferred,
                cost.deferred_per_use(),
                cost.ferry_per_use(),
                ratio(cost.helps(), cost.definitions())
            );
        }
        let tools: usize = self.costs.iter().map(|c| c.tools.len()).sum();
        if self.costs.len() > 1 {
            let _ = writeln!(
                out,
                "{:width$}  {:>5}  {:>8}  {:>8}  {:>8.0}  {:>8.0}  {:>6}",
                "total",
                tools,
                self.eager,
                self.deferred,
                self.deferred_per_use,
                self.ferry_per_use,
                ratio(total_helps, total_defs)
            );
        }
        let _ = writeln!(
            out,
            "\nferry up front: {} tokens (its skill header), once, whatever the number of servers and tools.",
            self.ferry_upfront
        );
        let _ = writeln!(
            out,
            "eager up front is {} ferry's; deferred up front is {}.",
            times(self.eager, self.ferry_upfront),
            times(self.deferred, self.ferry_upfront)
        );
        match break_even(
            self.eager as f64,
            0.0,
            self.ferry_upfront as f64,
            self.ferry_per_use,
        ) {
            Some(k) => {
                let _ = writeln!(out, "break-even with eager loading: ferry costs less until {k:.0} distinct tools are used.");
            }
            None => {
                let _ = writeln!(
                    out,
                    "break-even with eager loading: none, ferry costs less at any use."
                );
            }
        }
        match break_even(
            self.deferred as f64,
            self.deferred_per_use,
            self.ferry_upfront as f64,
            self.ferry_per_use,
        ) {
            Some(k) => {
                let _ = writeln!(out, "break-even with deferred loading: ferry costs less until {k:.0} distinct tools are used.");
            }
            None => {
                let _ = writeln!(out, "break-even with deferred loading: none, ferry costs less at any number of tools used.");
            }
        }
        if per_tool {
            for cost in self.costs {
                let w = cost
                    .tools
                    .iter()
                    .map(|t| t.name.len())
                    .max()
                    .unwrap_or(4)
                    .max(4);
                let _ = writeln!(
                    out,
                    "\n{}: {:w$}  {:>10}  {:>7}  {:>5}  {:>9}  {:>9}",
                    cost.server, "tool", "definition", "listing", "help", "help/defn", "ferry/use"
                );
                for tool in &cost.tools {
                    let _ = writeln!(
                        out,
                        "{:pad$}{:w$}  {:>10}  {:>7}  {:>5}  {:>9}  {:>9}",
                        "",
                        tool.name,
                        tool.definition,
                        tool.listing_line,
                        tool.help,
                        ratio(tool.help, tool.definition),
                        tool.ferry_use,
                        pad = cost.server.len() + 2
                    );
                }
            }
        }
        if session_asked {
            let s = self.session;
            let _ = writeln!(
                out,
                "\nsession: {} distinct tools used over {} turns, prompt caching {}; input tokens billed, in full-price equivalents:",
                s.tools_used,
                s.turns,
                if s.prompt_cache { "on (reads 0.1x, writes 1.25x)" } else { "off" }
            );
            for (path, total) in self.sessions() {
                let _ = writeln!(out, "  {path:12} {total:>12.0}");
            }
            out.push_str("  (each turn resends the context; a tool's per-use text joins it at first use and stays)\n");
        }
        out
    }

    fn to_json(&self, meter: &Meter, per_tool: bool) -> Value {
        let servers: Vec<Value> = self
            .costs
            .iter()
            .map(|c| {
                let mut server = json!({
                    "server": c.server, "tools": c.tools.len(), "instructions": c.instructions,
                    "eager_upfront": c.eager, "deferred_upfront": c.deferred,
                    "deferred_per_use": c.deferred_per_use(), "ferry_per_use": c.ferry_per_use(),
                    "definitions": c.definitions(), "listing": c.listing, "helps": c.helps(),
                });
                if per_tool {
                    server["per_tool"] = c
                        .tools
                        .iter()
                        .map(|t| json!({"tool": t.name, "definition": t.definition, "listing_line": t.listing_line,
                            "help": t.help, "deferred_per_use": t.deferred_use, "ferry_per_use": t.ferry_use}))
                        .collect();
                }
                server
            })
            .collect();
        json!({
            "tokenizer": meter.tokenizer.encoding.name(),
            "host": meter.host.name(),
            "note": "Claude's tokenizer is not public: figures for Claude are close estimates.",
            "ferry_upfront": self.ferry_upfront,
            "servers": servers,
            "total": {
                "eager_upfront": self.eager, "deferred_upfront": self.deferred,
                "deferred_per_use": self.deferred_per_use, "ferry_per_use": self.ferry_per_use,
                "break_even_eager": break_even(self.eager as f64, 0.0, self.ferry_upfront as f64, self.ferry_per_use),
                "break_even_deferred": break_even(self.deferred as f64, self.deferred_per_use, self.ferry_upfront as f64, self.ferry_per_use),
            },
            "session": {
                "tools_used": self.session.tools_used, "turns": self.session.turns, "prompt_cache": self.session.prompt_cache,
                "totals": self.sessions().iter().map(|(p, t)| json!({"path": p, "input_tokens": t.round()})).collect::<Vec<_>>(),
            },
        })
    }
}

fn ratio(part: usize, whole: usize) -> String {
    if whole == 0 {
        "-".into()
    } else {
        format!("{:.2}", part as f64 / whole as f64)
    }
}

fn times(big: usize, small: usize) -> String {
    if small == 0 {
        "-".into()
    } else {
        format!("{:.1}x", big as f64 / small as f64)
    }
}

/// `ferry find WORDS... [--limit N]`: the best-matching cached tools of every server.
pub fn find(words: &[String]) -> Result<i32> {
    let mut limit = 5;
    let mut query = Vec::new();
    let mut files = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match words[i].as_str() {
            "--limit" | "-n" => {
                limit = parse_count(&take_value(words, &mut i, "--limit")?, "--limit")?
            }
            "--from" => files.push(take_value(words, &mut i, "--from")?),
            "-h" | "--help" => {
                emit("usage: ferry find WORDS... [--limit N] [--from tools.json...]\nThe tools of all configured servers (or of saved tools/list results) that best match the words,\nas listing lines with their server, from the cache: no server is started.\n");
                return Ok(0);
            }
            word => query.push(word.to_string()),
        }
        i += 1;
    }
    if query.is_empty() {
        return Err(Error::usage("ferry find needs words to search for")
            .with_hint("for example: ferry find create issue"));
    }
    let mut documents = Vec::new();
    for file in &files {
        let source = file_source(file)?;
        documents.extend(
            source
                .tools
                .into_iter()
                .map(|t| Document::new(&source.name, t)),
        );
    }
    if files.is_empty() {
        let registry = load_registry()?;
        let mut uncached = Vec::new();
        for spec in &registry.servers {
            match CacheEntry::load(spec).filter(CacheEntry::has_tools) {
                Some(entry) => documents.extend(
                    usable_tools(spec, entry)
                        .into_iter()
                        .map(|t| Document::new(&spec.name, t)),
                ),
                None => uncached.push(spec.name.as_str()),
            }
        }
        if !uncached.is_empty() {
            eprintln!(
                "note: not searched (no cached tools yet; run `ferry NAME` once): {}",
                uncached.join(", ")
            );
        }
    }
    let ranked = rank(&query.join(" "), &documents);
    if ranked.is_empty() {
        eprintln!("no tool matches {:?}", query.join(" "));
        return Ok(0);
    }
    let mut out = String::new();
    for (doc, _) in ranked.into_iter().take(limit.max(1)) {
        let _ = writeln!(out, "{} {}", doc.server, listing_line(&doc.tool));
    }
    emit(&out);
    // The process ends now: freeing hundreds of parsed tools one by one would cost more than
    // the search itself.
    std::mem::forget(documents);
    Ok(0)
}

/// `ferry skill SERVER... [--dir DIR]` writes skills; `ferry skill --check [--dir DIR]` reports stale ones.
pub fn skill(words: &[String]) -> Result<i32> {
    let mut dir = PathBuf::from("skills");
    let mut check = false;
    let mut names = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match words[i].as_str() {
            "--dir" => dir = PathBuf::from(take_value(words, &mut i, "--dir")?),
            "--check" => check = true,
            "-h" | "--help" => {
                emit("usage: ferry skill SERVER... [--dir skills]   write DIR/<server>/SKILL.md\n       ferry skill --check [--dir skills]     list skills whose server's tools changed (exit 1 if any)\n");
                return Ok(0);
            }
            flag if flag.starts_with('-') => {
                return Err(Error::usage(format!("unknown option {flag} for skill"))
                    .with_hint("see: ferry skill --help"))
            }
            name => names.push(name.to_string()),
        }
        i += 1;
    }
    if check {
        return check_skills(&dir);
    }
    if names.is_empty() {
        return Err(Error::usage("ferry skill needs a server name")
            .with_hint("for example: ferry skill github"));
    }
    for source in live_sources(&names)? {
        let folder = dir.join(skill_name(&source.name));
        let path = folder.join("SKILL.md");
        std::fs::create_dir_all(&folder)
            .map_err(|e| Error::usage(format!("cannot create {}: {e}", folder.display())))?;
        std::fs::write(
            &path,
            render_skill(&source.name, &source.tools, source.instructions.as_deref()),
        )
        .map_err(|e| Error::usage(format!("cannot write {}: {e}", path.display())))?;
        println!("wrote {} ({} tools)", path.display(), source.tools.len());
    }
    Ok(0)
}

fn check_skills(dir: &Path) -> Result<i32> {
    let entries = std::fs::read_dir(dir)
        .map_err(|e| Error::usage(format!("cannot read {}: {e}", dir.display())))?;
    let registry = load_registry()?;
    let mut stale = 0;
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join("SKILL.md"))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let Some((server, recorded)) = read_marker(&text) else {
            continue;
        };
        let status = match registry.get(&server) {
            None => "server not configured".to_string(),
            Some(spec) => match CacheEntry::load(spec).filter(CacheEntry::has_tools) {
                None => format!("unknown: no cached tools (run `ferry {server}`)"),
                Some(entry) => {
                    if fingerprint(&usable_tools(spec, entry)) == recorded {
                        "up to date".to_string()
                    } else {
                        stale += 1;
                        format!("stale: the tools changed (run `ferry skill {server}`)")
                    }
                }
            },
        };
        println!("{}: {status}", path.display());
    }
    Ok(if stale > 0 { 1 } else { 0 })
}
