//! `ferry review [SERVER] [--accept [TOOL...]]`: what changed in the tools a server lists
//! since they were pinned (`client::pins`), old beside new, and taking the new definitions.
//! Exits 1 while something waits for review, 0 when nothing does.

use super::config::load_registry;
use super::terminal::emit;
use crate::client::catalog::Listing;
use crate::client::config::ServerSpec;
use crate::client::pins::{self, named, Mark, Report};
use crate::protocol::tools::Tool;
use crate::render::hidden::visible;
use crate::render::review::changes;
use crate::render::text::escape_line;
use crate::words::closest;
use crate::{Error, Outcome, Result};
use clap::ArgMatches;
use std::fmt::Write;

/// The most tools whose changes are shown in full; the others are named.
const SHOWN_MAX: usize = 50;

pub fn review(matches: &ArgMatches) -> Result<Outcome> {
    let spec = match (
        matches.get_one::<String>("server"),
        matches.get_one::<String>("cmd"),
    ) {
        (_, Some(command)) => ServerSpec::ad_hoc(command)?,
        (Some(word), None) if word.contains("://") => ServerSpec::ad_hoc(word)?,
        (Some(name), None) => {
            let registry = load_registry()?;
            match registry.get(name) {
                Some(spec) => spec.clone(),
                None => {
                    let error = Error::usage(format!(
                        "unknown server {:?}",
                        escape_line(name).into_owned()
                    ));
                    let names = registry.servers.iter().map(|s| s.name.as_str());
                    return Err(match closest(name, names) {
                        Some(best) => {
                            error.with_hint(format!("did you mean `ferry review {best}`?"))
                        }
                        None => error.with_hint("`ferry` lists the configured servers"),
                    });
                }
            }
        }
        (None, None) => return review_all(),
    };
    let accept = matches
        .get_many::<String>("accept")
        .map(|names| names.cloned().collect::<Vec<_>>());
    review_server(&spec, accept)
}

/// `ferry review`: each server with tools waiting for review, a line each.
fn review_all() -> Result<Outcome> {
    let registry = load_registry()?;
    let mut out = String::new();
    let mut waiting = 0;
    for spec in &registry.servers {
        if !pins::enabled(spec, &pins::env_var)
            || !matches!(pins::load(&pins::identity(spec)), Ok(Some(_)))
        {
            continue;
        }
        let Some(listing) = Listing::load_stable(spec).filter(|l| l.entry.has_tools()) else {
            continue;
        };
        let (tools, _) = listing.usable(spec);
        let report = pins::observe(spec, &tools, &pins::env_var);
        let names = report.waiting();
        if names.is_empty() {
            continue;
        }
        waiting += 1;
        let _ = writeln!(
            out,
            "{}: {} {} {}: {}",
            escape_line(&spec.name),
            names.len(),
            if names.len() == 1 { "tool" } else { "tools" },
            if names.len() == 1 {
                "waits for review"
            } else {
                "wait for review"
            },
            named(&names),
        );
    }
    if waiting == 0 {
        emit("nothing waits for review\n")?;
        return Ok(Outcome::Success);
    }
    out.push_str("see each with: ferry review SERVER\n");
    emit(&out)?;
    Ok(Outcome::Stale)
}

/// `ferry review SERVER [--accept [TOOL...]]`.
fn review_server(spec: &ServerSpec, accept: Option<Vec<String>>) -> Result<Outcome> {
    let review = pins::review_command(spec);
    if !pins::enabled(spec, &pins::env_var) {
        emit(&format!(
            "pins are off for {} (\"pin\": false in its config, or FERRY_PIN=off)\n",
            escape_line(&spec.name)
        ))?;
        return Ok(Outcome::Success);
    }
    let Some(listing) = Listing::load_stable(spec).filter(|l| l.entry.has_tools()) else {
        return Err(Error::usage(format!(
            "{} has no listing to review yet",
            escape_line(&spec.name)
        ))
        .with_hint(format!("list its tools once: {}", spec.invocation)));
    };
    let (tools, _) = listing.usable(spec);
    let report = pins::observe(spec, &tools, &pins::env_var);
    if let Some(why) = &report.trouble {
        return Err(Error::usage(why.clone()).with_hint("fix or move the file, then review again"));
    }
    if let Some(names) = accept {
        for name in &names {
            if !tools.iter().any(|t| t.name == *name) {
                let error = Error::usage(format!(
                    "{} does not list a tool {:?}",
                    escape_line(&spec.name),
                    escape_line(name).into_owned()
                ));
                return Err(match closest(name, tools.iter().map(|t| t.name.as_str())) {
                    Some(best) => {
                        error.with_hint(format!("did you mean `{review} --accept {best}`?"))
                    }
                    None => error.with_hint(format!("`{review}` shows what waits for review")),
                });
            }
        }
        let taken = pins::accept(spec, &tools, &names)?;
        let after = pins::observe(spec, &tools, &pins::env_var);
        let mut out = if taken.is_empty() {
            format!("nothing to accept on {}\n", escape_line(&spec.name))
        } else {
            let names: Vec<&str> = taken.iter().map(String::as_str).collect();
            format!("accepted: {}\n", named(&names))
        };
        let left = after.waiting();
        if left.is_empty() {
            emit(&out)?;
            return Ok(Outcome::Success);
        }
        let _ = writeln!(out, "still waiting for review: {}", named(&left));
        emit(&out)?;
        return Ok(Outcome::Stale);
    }
    let out = describe(spec, &tools, &report);
    emit(&out)?;
    Ok(if report.waiting().is_empty() {
        Outcome::Success
    } else {
        Outcome::Stale
    })
}

/// Old beside new for every tool waiting for review, then the new and removed ones.
fn describe(spec: &ServerSpec, tools: &[&Tool], report: &Report) -> String {
    let pinned = pins::load(&pins::identity(spec))
        .ok()
        .flatten()
        .unwrap_or_default();
    let mut out = String::new();
    let waiting: Vec<&&Tool> = tools.iter().filter(|t| report.blocks(&t.name)).collect();
    for tool in waiting.iter().take(SHOWN_MAX) {
        let name = escape_line(&tool.name);
        let new = pins::definition(&tool.raw);
        let pin = pinned.tools.get(&tool.name);
        match (report.mark(&tool.name), pin) {
            (Some(Mark::Changed), Some(pin)) => {
                let _ = writeln!(out, "{name} changed since you first used it:");
                out.push_str(&changes(&pin.definition, &new));
            }
            _ => {
                let _ = writeln!(out, "{name} hides text (not reviewed yet):");
                if let Some(text) = crate::protocol::messages::ListView::new(&new).description() {
                    let _ = writeln!(out, "  description: {}", escape_line(&visible(text)));
                }
            }
        }
        for (place, shown) in report.hidden.get(&tool.name).into_iter().flatten() {
            let _ = writeln!(out, "  its {place} hides text: {}", escape_line(shown));
        }
    }
    if waiting.len() > SHOWN_MAX {
        let rest: Vec<&str> = waiting[SHOWN_MAX..]
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        let _ = writeln!(out, "... and {} more: {}", rest.len(), named(&rest));
    }
    let new: Vec<&str> = report
        .marks
        .iter()
        .filter(|(_, m)| **m == Mark::New)
        .map(|(n, _)| n.as_str())
        .collect();
    if !new.is_empty() {
        let _ = writeln!(
            out,
            "new since the first listing (callable): {}",
            named(&new)
        );
    }
    if !report.removed.is_empty() {
        let removed: Vec<&str> = report.removed.iter().map(String::as_str).collect();
        let _ = writeln!(out, "no longer listed: {}", named(&removed));
    }
    match waiting.len() {
        0 => {
            let _ = writeln!(
                out,
                "nothing waits for review on {}",
                escape_line(&spec.name)
            );
        }
        n => {
            let _ = writeln!(
                out,
                "{n} {} not called until reviewed: `{} --accept` takes {}, or --accept TOOL...",
                if n == 1 { "tool is" } else { "tools are" },
                report.review,
                if n == 1 { "it" } else { "them all" },
            );
        }
    }
    out
}
