//! `ferry find WORDS... [--limit N] [--from FILE] [--no-help]`: the best-matching cached tools
//! of every server, as listing lines with their server, and the top hit's help under its line,
//! so one command leads from a task to a call. No server is started.

use super::config::load_registry;
use super::sources::file_source;
use super::terminal::{emit, warn};
use crate::client::{catalog, CacheEntry};
use crate::render::listing_line;
use crate::tokens::find::{Document, Index};
use crate::{Error, Outcome, Result};
use clap::ArgMatches;
use std::fmt::Write;

pub fn find(matches: &ArgMatches) -> Result<Outcome> {
    let query: Vec<String> = super::strings(matches, "words");
    let limit = matches.get_one::<usize>("limit").copied().unwrap_or(5);
    if limit == 0 {
        return Err(Error::usage("--limit must be 1 or more")
            .with_hint("for example: ferry find create issue --limit 10"));
    }
    let files: Vec<String> = super::strings(matches, "from");
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
        if registry.servers.is_empty() {
            return Err(Error::usage("no servers are configured, so there is nothing to search")
                .with_hint("add one with `ferry add NAME -- COMMAND` or `ferry import claude`, or search a saved list with --from FILE"));
        }
        let mut uncached = Vec::new();
        for spec in &registry.servers {
            match CacheEntry::load(spec).filter(CacheEntry::has_tools) {
                Some(entry) => {
                    let (tools, warnings) = catalog::usable_tools(spec, entry);
                    warnings.iter().for_each(|w| warn(&format!("warning: {w}")));
                    documents.extend(tools.into_iter().map(|t| Document::new(&spec.name, t)));
                }
                None => uncached.push(spec.name.as_str()),
            }
        }
        if documents.is_empty() {
            let first = uncached.first().copied().unwrap_or("NAME");
            return Err(Error::usage(format!(
                "no server's tools are cached yet ({}), so there is nothing to search",
                uncached.join(", ")
            ))
            .with_hint(format!(
                "list a server once to cache its tools: ferry {first}"
            )));
        }
        if !uncached.is_empty() {
            warn(&format!(
                "note: not searched (no cached tools yet; run `ferry NAME` once): {}",
                uncached.join(", ")
            ));
        }
    }
    let index = Index::new(documents);
    let ranked = index.rank(&query.join(" "));
    if ranked.is_empty() {
        warn(&format!("no tool matches {:?}", query.join(" ")));
        return Ok(Outcome::Success);
    }
    let with_help = !matches.get_flag("no-help");
    let mut out = String::new();
    for (i, (doc, _)) in ranked.into_iter().take(limit).enumerate() {
        let _ = writeln!(out, "{} {}", doc.server, listing_line(&doc.tool));
        if i == 0 && with_help {
            out.push_str(&crate::render::tool::indented_help(&doc.tool, "    "));
        }
    }
    emit(&out)?;
    // The process ends now: freeing hundreds of parsed tools one by one would cost more than
    // the search itself.
    std::mem::forget(index);
    Ok(Outcome::Success)
}
