//! `ferry tokens`: what servers' tools cost in context tokens, on three paths side by side.

use super::sources::{file_source, live_sources, Source};
use super::terminal::emit;
use super::tokens_served::{served, Served};
use super::Globals;
use crate::tokenizer::{Encoding, Tokenizer};
use crate::tokens::meter::{self, break_even, session_cost, Host, Meter, ServerCost, Session};
use crate::tokens::round_trips::{self, Steps};
use crate::{Error, Outcome, Result};
use clap::ArgMatches;
use serde_json::{json, Value};
use std::fmt::Write;

/// `ferry tokens [SERVER...] [--from FILE...] [--tokenizer T] [--host H] [--json] [--tools]
/// [--session N] [--turns T] [--no-cache]`
pub fn tokens(matches: &ArgMatches, globals: &Globals) -> Result<Outcome> {
    let strings = |id: &str| super::strings(matches, id);
    let names = strings("servers");
    let files = strings("from");
    let encoding = match matches.get_one::<String>("tokenizer") {
        Some(name) => Encoding::parse(name)?,
        None => Encoding::O200kBase,
    };
    let host = match matches.get_one::<String>("host") {
        Some(name) => Host::parse(name)?,
        None => Host::Anthropic,
    };
    let as_json = matches.get_flag("json");
    let per_tool = matches.get_flag("tools");
    let mut session = Session {
        tools_used: 5,
        turns: 20,
        prompt_cache: true,
    };
    let mut session_asked = false;
    if let Some(n) = matches.get_one::<usize>("session") {
        session.tools_used = *n;
        session_asked = true;
    }
    if let Some(t) = matches.get_one::<usize>("turns") {
        session.turns = (*t).max(1);
        session_asked = true;
    }
    if matches.get_flag("no-cache") {
        session.prompt_cache = false;
        session_asked = true;
    }
    let served_clis = strings("cli");
    let served_manifest = matches.get_one::<String>("manifest");
    if served_manifest.is_some() || !served_clis.is_empty() {
        let meter = Meter {
            tokenizer: Tokenizer::get(encoding)?,
            host,
        };
        let allows = strings("allow");
        let what = match served_manifest {
            Some(file) => Served::Manifest(file),
            None => Served::Quick {
                clis: &served_clis,
                allows: &allows,
            },
        };
        return served(what, &meter, as_json);
    }
    let mut sources: Vec<Source> = files
        .iter()
        .map(|f| file_source(f))
        .collect::<Result<_>>()?;
    if !names.is_empty() || files.is_empty() {
        sources.extend(live_sources(&names, globals, "not measured")?);
    }
    if sources.is_empty() {
        return Err(Error::usage("no servers to measure")
            .with_hint("configure one (ferry add NAME -- COMMAND) or pass --from tools.json"));
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
    // Through the proxy: its three tools and a catalog line per server, up front.
    let proxy = matches.get_flag("proxy").then(|| {
        let lines: Vec<(String, Option<usize>, Option<String>)> = sources
            .iter()
            .map(|s| (s.name.clone(), Some(s.tools.len()), s.instructions.clone()))
            .collect();
        let per_use = meter::mean(costs.iter().flat_map(|c| &c.tools), |t| t.proxy_use);
        (meter.proxy_upfront(&lines), per_use)
    });
    if let Some(file) = matches.get_one::<String>("svg") {
        let picture = report.picture(&meter, proxy);
        std::fs::write(file, crate::tokens::svg::render(&picture)).map_err(|e| {
            Error::usage(format!("cannot write {file}: {e}"))
                .with_hint("give a path in a directory you can write")
        })?;
    }
    if as_json {
        let mut value = report.to_json(&meter, per_tool || costs.len() == 1, proxy);
        if let Some((upfront, per_use)) = proxy {
            value["proxy"] = json!({"upfront": upfront, "per_use": per_use,
                "break_even_eager": break_even(report.eager as f64, 0.0, upfront as f64, per_use),
                "break_even_deferred": break_even(report.deferred as f64, report.deferred_per_use, upfront as f64, per_use)});
        }
        emit(&crate::render::text::json_for_terminal(
            serde_json::to_string_pretty(&value).unwrap_or_default(),
        ))?;
    } else {
        let mut text = report.to_text(&meter, per_tool || costs.len() == 1, session_asked, proxy);
        if let Some((upfront, per_use)) = proxy {
            text.push_str(&proxy_text(&report, upfront, per_use));
        }
        emit(&text)?;
    }
    Ok(Outcome::Success)
}

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

    /// The paths the session model prices: name, the picture's colour index, up-front
    /// tokens, per-use tokens and model turns spent finding each tool. The last is ferry's
    /// path as it was before `find` showed the top hit's help: the same text, one more turn.
    fn session_paths(&self, proxy: Option<(usize, f64)>) -> Vec<SessionPath> {
        let mut paths = vec![
            SessionPath {
                name: "MCP eager",
                colour: Some(0),
                upfront: self.eager as f64,
                per_use: 0.0,
                steps: round_trips::EAGER,
            },
            SessionPath {
                name: "MCP deferred",
                colour: Some(1),
                upfront: self.deferred as f64,
                per_use: self.deferred_per_use,
                steps: round_trips::DEFERRED,
            },
            SessionPath {
                name: "ferry",
                colour: Some(2),
                upfront: self.ferry_upfront as f64,
                per_use: self.ferry_per_use,
                steps: round_trips::FERRY,
            },
        ];
        if let Some((upfront, per_use)) = proxy {
            paths.push(SessionPath {
                name: "ferry proxy",
                colour: Some(3),
                upfront: upfront as f64,
                per_use,
                steps: round_trips::PROXY,
            });
        }
        paths.push(SessionPath {
            name: "ferry, find then --help",
            colour: None,
            upfront: self.ferry_upfront as f64,
            per_use: self.ferry_per_use,
            steps: round_trips::FIND_THEN_HELP,
        });
        paths
    }

    /// Each path's model turns, billed input tokens and round trips over the session.
    fn sessions(&self, proxy: Option<(usize, f64)>) -> Vec<SessionTotal> {
        self.session_paths(proxy)
            .iter()
            .map(|p| SessionTotal {
                path: p.name,
                turns: self.session.turns.max(1) + self.session.tools_used * p.steps.lookups(),
                billed: session_cost(p.upfront, p.per_use, p.steps.lookups(), self.session),
                steps: p.steps,
            })
            .collect()
    }

    /// The figures as a picture: each server's up-front tokens, the totals with ferry's and
    /// the proxy's, and the session turn by turn.
    fn picture(&self, meter: &Meter, proxy: Option<(usize, f64)>) -> crate::tokens::svg::Picture {
        let mut servers: Vec<(String, [Option<f64>; 4])> = self
            .costs
            .iter()
            .map(|c| {
                (
                    c.server.clone(),
                    [Some(c.eager as f64), Some(c.deferred as f64), None, None],
                )
            })
            .collect();
        servers.push((
            "all servers".into(),
            [
                Some(self.eager as f64),
                Some(self.deferred as f64),
                Some(self.ferry_upfront as f64),
                proxy.map(|(upfront, _)| upfront as f64),
            ],
        ));
        let session: Vec<(usize, Vec<f64>)> = self
            .session_paths(proxy)
            .iter()
            .filter_map(|p| {
                let colour = p.colour?;
                Some((
                    colour,
                    meter::session_by_turn(p.upfront, p.per_use, p.steps.lookups(), self.session),
                ))
            })
            .collect();
        let s = self.session;
        crate::tokens::svg::Picture {
            title: format!(
                "Context tokens up front ({}, {} format; log scale)",
                meter.tokenizer.encoding.name(),
                meter.host.name()
            ),
            servers,
            session,
            session_title: format!(
                "Input tokens billed over a session: {} used in {} task turns (+ lookups), prompt caching {}",
                meter::counted(s.tools_used, "tool"),
                s.turns,
                if s.prompt_cache { "on" } else { "off" }
            ),
        }
    }

    fn to_text(
        &self,
        meter: &Meter,
        per_tool: bool,
        session_asked: bool,
        proxy: Option<(usize, f64)>,
    ) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{}", meter.heading());
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
            "\nper use, deferred: {:.0} with an exact select: search (above); {:.0} with a keyword search that loads {} definitions.",
            self.deferred_per_use,
            meter::mean(self.costs.iter().flat_map(|c| &c.tools), |t| t.deferred_search_use),
            meter::KEYWORD_RESULTS
        );
        let _ = writeln!(
            out,
            "ferry up front: {} tokens (its skill header), once, whatever the number of servers and tools.",
            self.ferry_upfront
        );
        let _ = writeln!(
            out,
            "eager up front is {} ferry's; deferred up front is {}.",
            times(self.eager, self.ferry_upfront),
            times(self.deferred, self.ferry_upfront)
        );
        let eager = break_even(
            self.eager as f64,
            0.0,
            self.ferry_upfront as f64,
            self.ferry_per_use,
        );
        let deferred = break_even(
            self.deferred as f64,
            self.deferred_per_use,
            self.ferry_upfront as f64,
            self.ferry_per_use,
        );
        let _ = writeln!(
            out,
            "against eager loading: {}",
            meter::break_even_of(eager, "ferry", "tool", tools)
        );
        let _ = writeln!(
            out,
            "against deferred loading: {}",
            meter::break_even_of(deferred, "ferry", "tool", tools)
        );
        if per_tool {
            for cost in self.costs {
                // Tool names are the server's: printed escaped, and measured as printed.
                let names: Vec<_> = cost
                    .tools
                    .iter()
                    .map(|t| crate::render::text::escape_line(&t.name))
                    .collect();
                let w = names
                    .iter()
                    .map(|n| n.chars().count())
                    .max()
                    .unwrap_or(4)
                    .max(4);
                let _ = writeln!(
                    out,
                    "\n{}: {:w$}  {:>10}  {:>7}  {:>5}  {:>9}  {:>9}",
                    cost.server, "tool", "definition", "listing", "help", "help/defn", "ferry/use"
                );
                for (tool, name) in cost.tools.iter().zip(&names) {
                    let _ = writeln!(
                        out,
                        "{:pad$}{:w$}  {:>10}  {:>7}  {:>5}  {:>9}  {:>9}",
                        "",
                        name,
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
                "\nsession: {} distinct tools used over {} turns, prompt caching {}; model turns and input tokens billed, in full-price equivalents:",
                s.tools_used,
                s.turns,
                if s.prompt_cache { "on (reads 0.1x, writes 1.25x)" } else { "off" }
            );
            let sessions = self.sessions(proxy);
            let _ = writeln!(
                out,
                "  {:24} {:>6} {:>12} {:>12} {:>9}  steps",
                "path", "turns", "billed", "round trips", "per task"
            );
            for t in &sessions {
                let _ = writeln!(
                    out,
                    "  {:24} {:>6} {:>12.0} {:>12} {:>9.2}  {}",
                    t.path,
                    t.turns,
                    t.billed,
                    t.steps.over(s),
                    t.steps.per_task() as f64,
                    t.steps.shown()
                );
            }
            let find = |name: &str| sessions.iter().find(|t| t.path == name);
            if let (Some(one), Some(two)) = (find("ferry"), find("ferry, find then --help")) {
                let _ = writeln!(
                    out,
                    "  ferry's one-step find saves {} model turns and {:.0} tokens against a find, then --help, per tool.",
                    two.turns - one.turns,
                    two.billed - one.billed
                );
            }
            out.push_str("  (each model turn resends the context; a tool's per-use text joins it after its lookup turns and stays;\n   a round trip is one call from a task to the first tool call, `+` joins what one answer carries)\n");
        }
        out
    }

    fn to_json(&self, meter: &Meter, per_tool: bool, proxy: Option<(usize, f64)>) -> Value {
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
            "note": meter::ESTIMATE_NOTE,
            "ferry_upfront": self.ferry_upfront,
            "servers": servers,
            "total": {
                "eager_upfront": self.eager, "deferred_upfront": self.deferred,
                "deferred_per_use": self.deferred_per_use, "ferry_per_use": self.ferry_per_use,
                "deferred_search_per_use": meter::mean(self.costs.iter().flat_map(|c| &c.tools), |t| t.deferred_search_use),
                "break_even_eager": break_even(self.eager as f64, 0.0, self.ferry_upfront as f64, self.ferry_per_use),
                "break_even_deferred": break_even(self.deferred as f64, self.deferred_per_use, self.ferry_upfront as f64, self.ferry_per_use),
            },
            "session": {
                "tools_used": self.session.tools_used, "turns": self.session.turns, "prompt_cache": self.session.prompt_cache,
                "totals": self.sessions(proxy).iter().map(|t| json!({"path": t.path, "model_turns": t.turns, "input_tokens": t.billed.round(),
                    "round_trips": t.steps.over(self.session), "round_trips_per_task": t.steps.per_task(), "steps": t.steps.0})).collect::<Vec<_>>(),
            },
        })
    }
}

/// One path of the session model.
struct SessionPath {
    name: &'static str,
    /// Where the picture draws it; `None` for a reference line the picture leaves out.
    colour: Option<usize>,
    upfront: f64,
    per_use: f64,
    /// The calls from a task to the tool's first call.
    steps: Steps,
}

/// One path's figures over the session.
struct SessionTotal {
    path: &'static str,
    /// Model turns: the task turns and each tool's lookups.
    turns: usize,
    /// Input tokens billed, in full-price equivalents.
    billed: f64,
    steps: Steps,
}

/// The proxy's figures beside the host's own loading of the same servers.
fn proxy_text(report: &Report, upfront: usize, per_use: f64) -> String {
    // A break-even past every tool the servers offer is no limit a reader can reach.
    let tools: usize = report.costs.iter().map(|c| c.tools.len()).sum();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nthrough ferry serve --servers (find, describe, call; a catalog line per server):"
    );
    let _ = writeln!(out, "  {:14}  {:>8}  {:>8}", "path", "up front", "per use");
    let _ = writeln!(out, "  {:14}  {:>8}  {:>8}", "MCP eager", report.eager, 0);
    let _ = writeln!(
        out,
        "  {:14}  {:>8}  {:>8.0}",
        "MCP deferred", report.deferred, report.deferred_per_use
    );
    let _ = writeln!(
        out,
        "  {:14}  {:>8}  {:>8.0}",
        "ferry proxy", upfront, per_use
    );
    let _ = writeln!(
        out,
        "  against eager loading: {}",
        meter::break_even_of(
            break_even(report.eager as f64, 0.0, upfront as f64, per_use),
            "the proxy",
            "tool",
            tools
        )
    );
    let _ = writeln!(
        out,
        "  against deferred loading: {}",
        meter::break_even_of(
            break_even(
                report.deferred as f64,
                report.deferred_per_use,
                upfront as f64,
                per_use
            ),
            "the proxy",
            "tool",
            tools
        )
    );
    out
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
