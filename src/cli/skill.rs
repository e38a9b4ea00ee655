//! `ferry skill SERVER... [--dir DIR]` writes skills; `ferry skill --check` asks each skill's
//! server for its tools and lists the stale skills (`--cached` compares against the cache and
//! says how old it is).

use super::config::load_registry;
use super::sources::{list_now, live_sources, source_of};
use super::terminal::emit;
use super::Globals;
use crate::client::CacheEntry;
use crate::clock::now_ms;
use crate::tokens::skill::{fingerprint, read_marker, render_skill, skill_name};
use crate::{Error, Outcome, Result};
use clap::ArgMatches;
use std::path::{Path, PathBuf};

pub fn skill(matches: &ArgMatches, globals: &Globals) -> Result<Outcome> {
    let dir = PathBuf::from(
        matches
            .get_one::<String>("dir")
            .map(String::as_str)
            .unwrap_or("skills"),
    );
    let names: Vec<String> = super::strings(matches, "servers");
    if matches.get_flag("check") {
        if !names.is_empty() {
            return Err(Error::usage(
                "--check checks every skill in the directory; it takes no server names",
            )
            .with_hint(format!("ferry skill --check --dir {}", dir.display())));
        }
        return check_skills(&dir, matches.get_flag("cached"), globals);
    }
    if names.is_empty() {
        return Err(Error::usage("ferry skill needs a server name")
            .with_hint("for example: ferry skill github"));
    }
    let mut out = String::new();
    for source in live_sources(&names, globals)? {
        let folder = dir.join(skill_name(&source.name));
        let path = folder.join("SKILL.md");
        let io = |e: std::io::Error, p: &Path| {
            Error::usage(format!("cannot write {}: {e}", p.display()))
                .with_hint("check the directory's permissions, or pick another with --dir")
        };
        std::fs::create_dir_all(&folder).map_err(|e| io(e, &folder))?;
        std::fs::write(
            &path,
            render_skill(
                &source.name,
                &source.tools,
                source.instructions.as_deref(),
                &|tool| source.pins.as_ref().and_then(|p| p.label(tool)),
            ),
        )
        .map_err(|e| io(e, &path))?;
        out.push_str(&format!(
            "wrote {} ({} tools)\n",
            path.display(),
            source.tools.len()
        ));
    }
    emit(&out)?;
    Ok(Outcome::Success)
}

/// How long ago, in words.
fn age(ms: u64) -> String {
    let secs = now_ms().saturating_sub(ms) / 1000;
    match secs {
        s if s < 120 => format!("{s} s"),
        s if s < 7200 => format!("{} min", s / 60),
        s if s < 172_800 => format!("{} h", s / 3600),
        s => format!("{} days", s / 86_400),
    }
}

fn check_skills(dir: &Path, cached: bool, globals: &Globals) -> Result<Outcome> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        Error::usage(format!("cannot read {}: {e}", dir.display()))
            .with_hint("give the skills directory with --dir DIR")
    })?;
    let registry = load_registry()?;
    let mut stale = 0;
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path().join("SKILL.md"))
        .filter(|p| p.is_file())
        .collect();
    paths.sort();
    let mut out = String::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let Some((server, recorded)) = read_marker(&text) else {
            continue;
        };
        let status = match registry.get(&server) {
            None => "server not configured".to_string(),
            Some(spec) => {
                let listed = if cached {
                    CacheEntry::load(spec)
                        .filter(CacheEntry::has_tools)
                        .ok_or_else(|| format!("unknown: no cached tools (run `ferry {server}`)"))
                } else {
                    list_now(spec, globals.timeout)
                        .map_err(|e| format!("unknown: could not ask {server} ({})", e.message))
                };
                match listed {
                    Err(why) => why,
                    Ok(entry) => {
                        let fetched = entry.fetched_at_ms;
                        let source = source_of(spec, entry);
                        let against = if cached {
                            format!(" (against the cache, listed {} ago)", age(fetched))
                        } else {
                            String::new()
                        };
                        let waiting = source
                            .pins
                            .as_ref()
                            .map(|p| (p.waiting().len(), p.review.clone()))
                            .filter(|(n, _)| *n > 0);
                        if let Some((n, review)) = waiting {
                            stale += 1;
                            format!(
                                "{n} {} changed since you first used {} (not called until reviewed: {review})",
                                if n == 1 { "tool" } else { "tools" },
                                if n == 1 { "it" } else { "them" },
                            )
                        } else if fingerprint(&source.tools) == recorded {
                            format!("up to date{against}")
                        } else {
                            stale += 1;
                            format!(
                                "stale: the tools changed{against} (run `ferry skill {server}`)"
                            )
                        }
                    }
                }
            }
        };
        out.push_str(&format!("{}: {status}\n", path.display()));
    }
    emit(&out)?;
    Ok(if stale > 0 {
        Outcome::Stale
    } else {
        Outcome::Success
    })
}
