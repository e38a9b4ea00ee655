//! The meter: what a server's tools cost in context tokens on three paths, side by side.
//!
//! - **MCP eager**: every tool definition, in the format a host injects it (name, description,
//!   input schema; `outputSchema`, annotations and `_meta` never reach the model), loaded up
//!   front, plus the server's instructions.
//! - **MCP host-deferred** (Claude Code's tool search): tool names and server instructions up
//!   front; per tool used, a search call and the tool's definition.
//! - **ferry**: one skill header up front, whatever the number of servers and tools; per tool
//!   used, one `ferry find`, which shows the top hit's help under its line.
//!
//! The meter takes plain `Tool`s, so anything that can describe tools (a live server, a saved
//! `tools/list`, a serve manifest) can be measured.

use crate::protocol::messages::ListView;
use crate::protocol::tools::Tool;
use crate::render::tool::{find_answer, proxy_find_answer, FoundTool};
use crate::render::{listing_lines, tool_help};
use crate::tokenizer::Tokenizer;
use crate::tokens::find::{shown, Document, Index};
use serde_json::{json, Value};

/// How many results `ferry find` shows at most unless asked.
pub const FIND_LIMIT: usize = 5;
/// How many tools a host's keyword search returns (Claude Code's ToolSearch default).
pub const KEYWORD_RESULTS: usize = 5;

/// The wire format a host sends tool definitions in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Host {
    /// Anthropic Messages API: `{name, description, input_schema}`.
    Anthropic,
    /// OpenAI function tools: `{type: function, function: {name, description, parameters}}`.
    OpenAi,
}

impl Host {
    pub fn parse(name: &str) -> crate::Result<Host> {
        match name {
            "anthropic" | "claude" => Ok(Host::Anthropic),
            "openai" => Ok(Host::OpenAi),
            other => Err(
                crate::Error::usage(format!("unknown host format {other:?}"))
                    .with_hint("use anthropic or openai"),
            ),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Host::Anthropic => "anthropic",
            Host::OpenAi => "openai",
        }
    }
}

/// A tool's definition as the host sends it to the model.
pub fn host_definition(tool: &Tool, host: Host) -> String {
    let value = match host {
        Host::Anthropic => {
            json!({"name": tool.name, "description": tool.description, "input_schema": tool.input_schema})
        }
        Host::OpenAi => json!({"type": "function", "function": {
            "name": tool.name, "description": tool.description, "parameters": tool.input_schema}}),
    };
    serde_json::to_string(&value).unwrap_or_default()
}

/// The always-loaded header of ferry's own skill, counted as ferry's up-front cost.
pub const FERRY_SKILL: &str = include_str!("../../skills/ferry/SKILL.md");

/// The YAML frontmatter of a SKILL.md: what a host keeps loaded before the skill is used.
pub fn skill_header(skill: &str) -> &str {
    let Some(rest) = skill.strip_prefix("---\n") else {
        return "";
    };
    match rest.find("\n---") {
        Some(end) => &skill[..4 + end + 4],
        None => "",
    }
}

/// What one tool costs on each path.
#[derive(Debug, Clone)]
pub struct ToolCost {
    pub name: String,
    /// The host-format definition (eager: up front; deferred: per use).
    pub definition: usize,
    /// Its line in `ferry <server>` and `ferry find`.
    pub listing_line: usize,
    /// `ferry <server> <tool> --help`, command included.
    pub help: usize,
    /// Deferred path, per use: an exact `select:` search plus the definition it returns.
    pub deferred_use: usize,
    /// Deferred path with a keyword search: the search plus every definition it returns.
    pub deferred_search_use: usize,
    /// ferry path, per use: `ferry find` with the tool's name as the query, ranked among its
    /// server's tools, and what it prints (the hits shown, the top hit's help, a close
    /// second's help); the tool's `--help` too when the find did not show it.
    pub ferry_use: usize,
    /// Through the proxy, per use: a `find` call and its answer, as for ferry (a `describe`
    /// when the answer lacks the tool's help), and what the `call` wrapper adds to a direct
    /// call of the tool.
    pub proxy_use: usize,
}

/// What one server costs.
#[derive(Debug, Clone)]
pub struct ServerCost {
    pub server: String,
    pub tools: Vec<ToolCost>,
    pub instructions: usize,
    /// Eager up front: all definitions and the instructions.
    pub eager: usize,
    /// Deferred up front: the tool names and the instructions.
    pub deferred: usize,
    /// The whole `ferry <server>` listing.
    pub listing: usize,
}

impl ServerCost {
    /// Mean per-use cost on the deferred path.
    pub fn deferred_per_use(&self) -> f64 {
        mean(&self.tools, |t| t.deferred_use)
    }
    /// Mean per-use cost on ferry's path.
    pub fn ferry_per_use(&self) -> f64 {
        mean(&self.tools, |t| t.ferry_use)
    }
    /// Mean per-use cost on the deferred path with a keyword search.
    pub fn deferred_search_per_use(&self) -> f64 {
        mean(&self.tools, |t| t.deferred_search_use)
    }
    pub fn definitions(&self) -> usize {
        self.tools.iter().map(|t| t.definition).sum()
    }
    pub fn helps(&self) -> usize {
        self.tools.iter().map(|t| t.help).sum()
    }
}

/// The mean of one cost over some tools (0 for none).
pub fn mean<'a>(
    tools: impl IntoIterator<Item = &'a ToolCost>,
    cost: impl Fn(&ToolCost) -> usize,
) -> f64 {
    let (sum, count) = tools
        .into_iter()
        .fold((0, 0), |(sum, count), t| (sum + cost(t), count + 1));
    if count == 0 {
        0.0
    } else {
        sum as f64 / count as f64
    }
}

/// Counts with one tokenizer in one host format.
pub struct Meter {
    pub tokenizer: Tokenizer,
    pub host: Host,
}

/// Said with every report: the counts for Claude are estimates.
pub const ESTIMATE_NOTE: &str =
    "Claude's tokenizer is not public: figures for Claude are close estimates.";

impl Meter {
    /// A report's first line: the encoding and the host format counted in.
    pub fn heading(&self) -> String {
        // Figures for an OpenAI host in its own encoding are exact: no note about Claude.
        let note = match self.host {
            Host::Anthropic => format!(" {ESTIMATE_NOTE}"),
            Host::OpenAi => String::new(),
        };
        format!(
            "{} tokens, {} tool format.{note}\n",
            self.tokenizer.encoding.name(),
            self.host.name()
        )
    }

    /// Measures one server's tools.
    pub fn measure(&self, server: &str, tools: &[Tool], instructions: Option<&str>) -> ServerCost {
        let count = |text: &str| self.tokenizer.count(text);
        let instructions = instructions.map_or(0, count);
        let lines: Vec<usize> = listing_lines(tools).iter().map(|l| count(l) + 1).collect();
        let definitions: Vec<usize> = tools
            .iter()
            .map(|t| count(&host_definition(t, self.host)))
            .collect();
        let mean_definition = if definitions.is_empty() {
            0
        } else {
            definitions.iter().sum::<usize>() / definitions.len()
        };
        // A keyword search (Claude Code's ToolSearch with max_results) loads several full
        // definitions: the one wanted and up to four others.
        let others = tools.len().saturating_sub(1).min(KEYWORD_RESULTS - 1);
        let mut costs = Vec::with_capacity(tools.len());
        let mut names = 0;
        let index = Index::new(
            tools
                .iter()
                .enumerate()
                .map(|(i, t)| Document::new(server, t.clone()).with_tool(i))
                .collect(),
        );
        for (position, ((tool, line), definition)) in
            tools.iter().zip(&lines).zip(definitions).enumerate()
        {
            // Claude Code lists deferred tools by their prefixed names, one per line.
            names += count(&format!("mcp__{server}__{}\n", tool.name));
            let search = count(&format!(
                r#"{{"name":"ToolSearch","input":{{"query":"select:mcp__{server}__{}"}}}}"#,
                tool.name
            ));
            let help =
                count(&format!("ferry {server} {} --help\n", tool.name)) + count(&tool_help(tool));
            // What `ferry find` prints for the tool's name as the query, ranked among this
            // server's tools: the lines and helps it shows. When the tool is not a hit shown
            // with its help, its `--help` is read too.
            let query = tool.name.replace(['_', '-'], " ");
            let ranked = index.rank(&query);
            let picks = shown(&ranked, FIND_LIMIT);
            let found = |hits: &[(usize, bool)]| -> (Vec<FoundTool>, bool) {
                let mut helped = false;
                let found = hits
                    .iter()
                    .map(|(i, with_help)| {
                        let doc = ranked[*i].0;
                        helped |= *with_help && doc.tool == position;
                        FoundTool {
                            server,
                            tool: &tools[doc.tool],
                            with_help: *with_help,
                            mark: None,
                        }
                    })
                    .collect();
                (found, helped)
            };
            let (hits, helped) = found(&picks);
            let find = count(&format!("ferry find {query}\n"))
                + count(&find_answer(&hits))
                + if helped { 0 } else { help };
            let proxy_picks = shown(&ranked, crate::render::proxy::FIND_DEFAULT);
            let (hits, helped) = found(&proxy_picks);
            let proxy_find = count(&format!(
                r#"{{"name":"find","input":{{"query":"{query}"}}}}"#
            )) + count(&proxy_find_answer(&hits))
                + if helped {
                    0
                } else {
                    count(&format!(
                        r#"{{"name":"describe","input":{{"tool":"{server}/{}"}}}}"#,
                        tool.name
                    )) + count(&crate::render::json_help(tool))
                };
            // The call through the proxy costs what it adds to the direct call every path
            // makes (the arguments are the same on each).
            let proxy_call = count(&format!(
                r#"{{"name":"call","input":{{"tool":"{server}/{}","arguments":{{}}}}}}"#,
                tool.name
            ))
            .saturating_sub(count(&format!(
                r#"{{"name":"mcp__{server}__{}","input":{{}}}}"#,
                tool.name
            )));
            costs.push(ToolCost {
                name: tool.name.clone(),
                definition,
                listing_line: *line,
                help,
                deferred_use: search + definition,
                deferred_search_use: count(&format!(
                    r#"{{"name":"ToolSearch","input":{{"query":"{}","max_results":{KEYWORD_RESULTS}}}}}"#,
                    tool.name.replace(['_', '-'], " ")
                )) + definition
                    + others * mean_definition,
                ferry_use: find,
                proxy_use: proxy_find + proxy_call,
            });
        }
        let eager = costs.iter().map(|c| c.definition).sum::<usize>() + instructions;
        ServerCost {
            server: server.to_string(),
            listing: lines.iter().sum(),
            tools: costs,
            instructions,
            eager,
            deferred: names + instructions,
        }
    }

    /// The shell path's cost of one command: the agent types the help command and reads what
    /// it prints, the first time it needs the command.
    pub fn shell_use(&self, help_command: &str, help: &str) -> usize {
        self.tokenizer.count(&format!("{help_command}\n")) + self.tokenizer.count(help)
    }

    /// What a host loads up front through the proxy: its three tools in host format and its
    /// instructions, a line per server (name, tool count, the server's own first words).
    pub fn proxy_upfront(&self, servers: &[(String, Option<usize>, Option<String>)]) -> usize {
        let tools: usize = crate::render::proxy::listed_tools()
            .iter()
            .map(|t| self.tokenizer.count(&host_definition(t, self.host)))
            .sum();
        tools
            + self
                .tokenizer
                .count(&crate::render::proxy::instructions_text(servers, &[]))
    }

    /// ferry's up-front cost: its skill header, paid once whatever is configured.
    pub fn ferry_upfront(&self) -> usize {
        self.tokenizer.count(skill_header(FERRY_SKILL))
    }
}

/// A session to price: how many distinct tools get used over how many turns, and whether the
/// host caches the prompt prefix.
#[derive(Debug, Clone, Copy)]
pub struct Session {
    pub tools_used: usize,
    pub turns: usize,
    pub prompt_cache: bool,
}

/// Model turns a path spends finding a tool before its first call: none when every definition
/// is loaded up front; one search (a host's tool search, ferry's `find` with the top hit's help,
/// the proxy's `find`); two for a list-then-help path such as `ferry find` followed by
/// `ferry <server> <tool> --help`.
pub const LOOKUPS_EAGER: usize = 0;
pub const LOOKUPS_ONE_STEP: usize = 1;
pub const LOOKUPS_TWO_STEP: usize = 2;

/// Input tokens billed over a session, in full-price token equivalents.
///
/// Every model turn resends the whole context. Up-front text is in it from the first turn.
/// Each tool's first use (uses spread evenly over the session's task turns) is preceded by
/// `lookups` turns that find it; its per-use text joins the context after them and stays. With
/// prompt caching, text already sent is read from the cache at 0.1x and new text is written at
/// 1.25x (Anthropic's published multipliers).
pub fn session_cost(upfront: f64, per_use: f64, lookups: usize, session: Session) -> f64 {
    session_by_turn(upfront, per_use, lookups, session)
        .last()
        .copied()
        .unwrap_or(0.0)
}

/// As [`session_cost`], the running total after each model turn: the session's turns plus
/// `lookups` for each distinct tool used.
pub fn session_by_turn(upfront: f64, per_use: f64, lookups: usize, session: Session) -> Vec<f64> {
    let turns = session.turns.max(1);
    let mut context = 0.0;
    let mut pending = upfront;
    let mut total = 0.0;
    let mut used = 0;
    let mut totals = Vec::with_capacity(turns + session.tools_used * lookups);
    let mut model_turn = |pending: &mut f64, context: &mut f64, total: &mut f64| {
        *total += if session.prompt_cache {
            0.1 * *context + 1.25 * *pending
        } else {
            *context + *pending
        };
        *context += *pending;
        *pending = 0.0;
        totals.push(*total);
    };
    for turn in 1..=turns {
        let used_now = (session.tools_used * turn).div_ceil(turns);
        for _ in used..used_now {
            for _ in 0..lookups {
                model_turn(&mut pending, &mut context, &mut total);
            }
            pending += per_use;
        }
        used = used_now;
        model_turn(&mut pending, &mut context, &mut total);
    }
    totals
}

/// The number of tools used at which ferry's total passes a path that costs more up front and
/// less per use; `None` when ferry is cheaper at any number.
pub fn break_even(
    other_upfront: f64,
    other_per_use: f64,
    ferry_upfront: f64,
    ferry_per_use: f64,
) -> Option<f64> {
    if ferry_per_use <= other_per_use {
        return None;
    }
    Some(((other_upfront - ferry_upfront) / (ferry_per_use - other_per_use)).max(0.0))
}

/// Says, in words, where a path that costs less up front (`who`) stops costing less, given the
/// [`break_even`] point; `one` names what is used, in the singular (`tool`).
/// `1 tool`, `2 tools`.
pub fn counted(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

/// As [`break_even_words`], for a catalog of `available` items: a break-even past all of them
/// means the cheaper path stays cheaper whatever is used.
pub fn break_even_of(point: Option<f64>, who: &str, one: &str, available: usize) -> String {
    match point {
        Some(k) if k.floor() >= available as f64 && available > 0 => format!(
            "{who} costs less whichever of the {} are used (break-even past all of them, at {}).",
            counted(available, one),
            k.floor()
        ),
        _ => break_even_words(point, who, one),
    }
}

pub fn break_even_words(point: Option<f64>, who: &str, one: &str) -> String {
    match point {
        None => format!("{who} costs less at any number of {one}s used."),
        Some(k) if k < 1.0 => format!("{who} costs more from the first {one} used on."),
        Some(k) if k < 2.0 => format!("{who} costs less for 1 {one} used, more beyond."),
        Some(k) => format!(
            "{who} costs less up to {} distinct {one}s used, more beyond.",
            k.floor()
        ),
    }
}

/// Reads a saved `tools/list` result: `{"tools": [...]}`, a bare array, or a JSON-RPC envelope.
pub fn tools_from_json(doc: &Value) -> Option<&Vec<Value>> {
    let doc_view = ListView::new(doc);
    let tools = match doc_view.items("tools") {
        Some(tools) => Some(tools),
        // Not a list under "tools": as the envelope's result, when there is no "tools" at all.
        None if !doc.as_object().is_some_and(|o| o.contains_key("tools")) => doc_view
            .result()
            .and_then(|r| ListView::new(r).items("tools")),
        None => None,
    };
    tools.or_else(|| doc.as_array())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::Encoding;

    #[test]
    fn host_format_drops_what_the_model_never_sees() {
        let tool = Tool::from_value(&json!({"name": "t", "description": "d", "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}, "_meta": {"x": 1}}))
        .unwrap();
        assert_eq!(
            host_definition(&tool, Host::Anthropic),
            r#"{"name":"t","description":"d","input_schema":{"type":"object"}}"#
        );
        assert_eq!(
            host_definition(&tool, Host::OpenAi),
            r#"{"type":"function","function":{"name":"t","description":"d","parameters":{"type":"object"}}}"#
        );
    }

    #[test]
    fn skill_header_is_the_frontmatter() {
        assert_eq!(skill_header("---\nname: x\n---\nbody"), "---\nname: x\n---");
        assert_eq!(skill_header("no frontmatter"), "");
        assert!(skill_header(FERRY_SKILL).starts_with("---\nname: ferry\n"));
    }

    #[test]
    fn ferry_header_costs_what_the_readme_says() {
        let meter = Meter {
            tokenizer: Tokenizer::get(Encoding::O200kBase).unwrap(),
            host: Host::Anthropic,
        };
        // The README states this figure; change both together.
        assert_eq!(meter.ferry_upfront(), 51);
    }

    #[test]
    fn session_model() {
        // No caching: the up-front text is paid on each of 3 turns.
        assert_eq!(
            session_cost(
                100.0,
                0.0,
                LOOKUPS_EAGER,
                Session {
                    tools_used: 0,
                    turns: 3,
                    prompt_cache: false
                }
            ),
            300.0
        );
        // One tool used in a 2-turn session: it joins at turn 1 (ceil) and is paid twice.
        assert_eq!(
            session_cost(
                0.0,
                50.0,
                LOOKUPS_EAGER,
                Session {
                    tools_used: 1,
                    turns: 2,
                    prompt_cache: false
                }
            ),
            100.0
        );
        // Cached: written once at 1.25x, read once at 0.1x.
        assert_eq!(
            session_cost(
                100.0,
                0.0,
                LOOKUPS_EAGER,
                Session {
                    tools_used: 0,
                    turns: 2,
                    prompt_cache: true
                }
            ),
            135.0
        );
        // A lookup turn before the tool's first use resends the context once more: 2 turns
        // of 100 up front become 3, and the tool's 50 joins after the lookup.
        let one_tool = Session {
            tools_used: 1,
            turns: 2,
            prompt_cache: false,
        };
        assert_eq!(
            session_by_turn(100.0, 50.0, LOOKUPS_ONE_STEP, one_tool),
            vec![100.0, 250.0, 400.0]
        );
        // Two lookups: four model turns in all.
        assert_eq!(
            session_by_turn(100.0, 50.0, LOOKUPS_TWO_STEP, one_tool),
            vec![100.0, 200.0, 350.0, 500.0]
        );
        // Cached: the lookup turn reads the up-front text at 0.1x; the tool's text is written
        // once at 1.25x.
        let cached = Session {
            prompt_cache: true,
            ..one_tool
        };
        assert_eq!(
            session_by_turn(100.0, 50.0, LOOKUPS_ONE_STEP, cached),
            vec![125.0, 125.0 + 10.0 + 62.5, 125.0 + 10.0 + 62.5 + 15.0]
        );
    }

    #[test]
    fn break_even_points() {
        assert_eq!(break_even(1000.0, 0.0, 50.0, 95.0), Some(10.0));
        assert_eq!(break_even(1000.0, 300.0, 50.0, 200.0), None);
    }
}
