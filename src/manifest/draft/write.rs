//! Writing the draft: the `[server]` table, one `[[tools]]` table for the program or each
//! subcommand, their parameters, and comments that tell a reviewer what was left out and why.

use super::options::options;
use super::params::{option_param, param_name, Drafted};
use super::risks::{
    is_denied, is_help_or_version, needs_confirming, runs_or_writes, READ_ONLY_PROGRAMS,
    READ_ONLY_SUBCOMMANDS,
};
use super::subcommands::subcommands;
use super::text::HelpText;
use super::text::{clean, help_summary, lines, shorten, MAX_DESCRIPTION};
use super::usage::usage;
use crate::manifest::model::{ItemKind, ParamKind};
use crate::manifest::policy::{self, file_name};
use crate::manifest::template::Element;
use serde_json::Value;
use std::collections::HashSet;
use std::fmt::Write as _;

/// Parameters per tool at most, so a draft stays reviewable (the first ones are kept).
pub const MAX_PARAMS: usize = 40;

/// Tools per draft at most (a CLI with hundreds of subcommands gets the first ones).
pub const MAX_TOOLS: usize = 100;

/// A tool name: 1-128 of `[A-Za-z0-9_.-]`.
pub(super) fn tool_name(text: &str) -> String {
    let name: String = text
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "_.-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(128)
        .collect();
    if name.is_empty() {
        "tool".to_string()
    } else {
        name
    }
}

/// A TOML string, quoted as the `toml` crate quotes it (a basic string where one reads
/// plainly, a literal one where the text holds quotes or backslashes).
pub(super) fn toml_string(text: &str) -> String {
    toml::Value::String(text.to_string()).to_string()
}

/// A TOML key, quoted unless bare.
pub(super) fn toml_key(key: &str) -> String {
    if !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        key.to_string()
    } else {
        toml_string(key)
    }
}

/// A command element as TOML: its template string, or an array for an optional group.
fn element_toml(element: &Element) -> String {
    match element {
        Element::Group(items) => {
            let items: Vec<String> = items.iter().map(element_toml).collect();
            format!("[{}]", items.join(", "))
        }
        other => toml_string(&other.template_text().unwrap_or_default()),
    }
}

/// A TOML comment, wrapped at about 100 columns; no line breaks or control characters get in.
pub(super) fn comment(out: &mut String, text: &str) {
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + word.chars().count() > 96 {
            let _ = writeln!(out, "# {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(out, "# {line}");
}

/// One tool to draft.
pub(super) struct Plan<'a> {
    /// The subcommand words after the program.
    pub(super) path: Vec<String>,
    /// The summary the parent's command list gives.
    pub(super) summary: String,
    pub(super) help: Option<&'a str>,
}

/// The manifest text. `program` is the CLI as given (e.g. "git"); `helps[0]` is its own
/// help; further entries are subcommands' helps (the caller ran `<cli> <sub> --help` for each
/// name `subcommands()` returned).
pub fn draft(program: &str, helps: &[HelpText]) -> String {
    let program = match program.trim() {
        "" => "program",
        p => p,
    };
    let base = file_name(program);
    let top = helps.iter().find(|h| h.path.is_empty());
    let subs = top.map(|h| subcommands(&h.text)).unwrap_or_default();
    let mut plans: Vec<Plan> = Vec::new();
    if subs.is_empty() {
        plans.push(Plan {
            path: Vec::new(),
            summary: String::new(),
            help: top.map(|h| h.text.as_str()),
        });
    }
    for (name, summary) in subs {
        let help = helps
            .iter()
            .find(|h| h.path.len() == 1 && h.path[0] == name)
            .map(|h| h.text.as_str());
        plans.push(Plan {
            path: vec![name],
            summary,
            help,
        });
    }
    // Deeper helps the caller read too (`docker container ls`).
    for help in helps.iter().filter(|h| !h.path.is_empty()) {
        if !plans.iter().any(|p| p.path == help.path) {
            plans.push(Plan {
                path: help.path.clone(),
                summary: String::new(),
                help: Some(&help.text),
            });
        }
    }

    let mut out = String::new();
    comment(&mut out, &format!("ferry serve manifest for `{program}`, drafted by `ferry serve init` from `{program} --help`."));
    comment(
        &mut out,
        "This is a draft. Review it before serving: check each description, drop the tools and",
    );
    comment(&mut out, "parameters a model should not have, and tighten types (enum, pattern, minimum) where you can.");
    comment(
        &mut out,
        "Options that run other programs or write files were left out on purpose.",
    );
    comment(
        &mut out,
        "Each command runs in a kernel sandbox: it reads the system and the roots, writes only",
    );
    comment(
        &mut out,
        "what `writes` says (nothing when read-only), runs only its own program unless `exec`",
    );
    comment(
        &mut out,
        "names more, and reaches the network only with `network = true`.",
    );
    if policy::runs_code(base).is_some() {
        comment(
            &mut out,
            &format!("Careful: `{base}` can run code or commands it is given (scripts, arguments); serve it only if a model may do that."),
        );
    }
    out.push('\n');
    out.push_str("[server]\n");
    let _ = writeln!(out, "name = {}", toml_string(base));
    let instructions =
        format!("Drafted by ferry serve init from `{program} --help`; review before serving.");
    let _ = writeln!(out, "instructions = {}", toml_string(&instructions));
    out.push_str("roots = [\".\"]\ntimeout = 30\n");

    if plans.len() > MAX_TOOLS {
        let rest: Vec<String> = plans[MAX_TOOLS..]
            .iter()
            .map(|p| p.path.join(" "))
            .collect();
        let shown: Vec<&str> = rest.iter().map(String::as_str).take(50).collect();
        let more = if rest.len() > shown.len() {
            ", ..."
        } else {
            ""
        };
        out.push('\n');
        comment(
            &mut out,
            &format!(
                "{} more subcommands were not drafted (at most {MAX_TOOLS} tools): {}{more}",
                rest.len(),
                shown.join(", ")
            ),
        );
        plans.truncate(MAX_TOOLS);
    }
    let mut names: HashSet<String> = HashSet::new();
    let mut drafted = 0;
    for plan in &plans {
        let words: Vec<&str> = std::iter::once(program)
            .chain(plan.path.iter().map(String::as_str))
            .collect();
        let shown = words.join(" ");
        let help = plan.help.map(clean);
        if !plan.path.is_empty() {
            if let Some(text) = &help {
                let nested = subcommands(text);
                if !nested.is_empty() {
                    let list: Vec<&str> = nested.iter().map(|(n, _)| n.as_str()).take(12).collect();
                    let more = if nested.len() > list.len() {
                        ", ..."
                    } else {
                        ""
                    };
                    out.push('\n');
                    comment(&mut out, &format!("`{shown}` has subcommands of its own ({}{more}); add tools for the ones you need.", list.join(", ")));
                    continue;
                }
            }
        }
        let mut name = tool_name(&if plan.path.is_empty() {
            base.to_string()
        } else {
            plan.path.join("_")
        });
        if names.contains(&name) {
            let mut n = 2;
            while names.contains(&format!("{name}_{n}")) {
                n += 1;
            }
            name = format!("{name}_{n}");
        }
        names.insert(name.clone());
        drafted += 1;
        let description = Some(plan.summary.clone())
            .filter(|s| !s.is_empty())
            .or_else(|| help.as_deref().and_then(help_summary))
            .unwrap_or_else(|| format!("Run `{shown}`"));
        write_tool(&mut out, &name, &description, &words, base, help.as_deref());
    }
    if drafted == 0 {
        // Every subcommand had subcommands of its own: still draft something that loads.
        let description = top
            .and_then(|h| help_summary(&clean(&h.text)))
            .unwrap_or_else(|| format!("Run `{program}`"));
        write_tool(
            &mut out,
            &tool_name(base),
            &description,
            &[program],
            base,
            None,
        );
    }
    out
}

/// Writes one `[[tools]]` table and its parameters.
pub(super) fn write_tool(
    out: &mut String,
    name: &str,
    description: &str,
    words: &[&str],
    base: &str,
    help: Option<&str>,
) {
    let shown = words.join(" ");
    let lines = help.map(lines).unwrap_or_default();
    let usage = usage(&lines);
    let options = help.map(options).unwrap_or_default();

    let mut params: Vec<Drafted> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    let mut left_out: Vec<String> = Vec::new();
    let mut cut: Vec<String> = Vec::new();
    let room = MAX_PARAMS - usize::from(usage.positional);
    for spec in &options {
        if is_help_or_version(spec) {
            continue;
        }
        let spelled = match (spec.short, &spec.long) {
            (Some(c), Some(long)) => format!("-{c}/{long}"),
            (Some(c), None) => format!("-{c}"),
            (None, Some(long)) => long.clone(),
            (None, None) => continue,
        };
        if is_denied(spec, base, words.len() > 1) || runs_or_writes(spec) {
            if !left_out.contains(&spelled) {
                left_out.push(spelled);
            }
            continue;
        }
        // A capitalised single-dash name is a placeholder (grep's `-NUM`), not an option.
        if spec
            .long
            .as_deref()
            .is_some_and(|l| !l.starts_with("--") && !l.chars().any(|c| c.is_lowercase()))
        {
            continue;
        }
        let Some(param_name) = param_name(spec) else {
            continue;
        };
        if taken.contains(&param_name) {
            continue;
        }
        if params.len() >= room {
            cut.push(spelled);
            continue;
        }
        if let Some(param) = option_param(spec, param_name.clone()) {
            taken.insert(param_name);
            params.push(param);
        }
    }
    let dashdash = usage.dashdash
        || options
            .iter()
            .any(|o| o.long.as_deref().is_some_and(|l| l.starts_with("--")));
    let operands = usage.positional.then(|| {
        let name = ["args", "arguments", "operands", "rest"]
            .iter()
            .map(|n| n.to_string())
            .chain((1..).map(|n| format!("args_{n}")))
            .find(|n| !taken.contains(n))
            .unwrap_or_default();
        let after = if dashdash && !usage.expression {
            " (after --)"
        } else {
            ""
        };
        let shown: Vec<&str> = usage.operands.iter().map(String::as_str).take(6).collect();
        let element = if dashdash && !usage.expression {
            Element::Group(vec![
                Element::Word("--".to_string()),
                Element::Spread(name.clone()),
            ])
        } else {
            Element::Spread(name.clone())
        };
        Drafted::new(
            &name,
            ParamKind::Array(ItemKind::String),
            shorten(
                &format!("Further arguments{after}: {}", shown.join(", ")),
                MAX_DESCRIPTION,
            ),
            Vec::new(),
            element,
        )
    });

    out.push('\n');
    if help.is_none() {
        comment(
            out,
            &format!("No help text for `{shown}` was read: add its parameters by hand."),
        );
    }
    if !left_out.is_empty() {
        comment(
            out,
            &format!(
                "Left out on purpose (they run programs or write files): {}",
                left_out.join(", ")
            ),
        );
    }
    if !cut.is_empty() {
        comment(
            out,
            &format!(
                "{} more options of `{shown}` were left out to keep this tool reviewable (at most {MAX_PARAMS} parameters): {}",
                cut.len(),
                cut.join(", ")
            ),
        );
    }
    out.push_str("[[tools]]\n");
    let _ = writeln!(out, "name = {}", toml_string(name));
    let _ = writeln!(out, "description = {}", toml_string(description));

    // Find takes its operands (paths) before its expression.
    let mut ordered: Vec<&Drafted> = Vec::new();
    if usage.expression {
        ordered.extend(operands.iter());
    }
    ordered.extend(params.iter());
    if !usage.expression {
        ordered.extend(operands.iter());
    }
    out.push_str("command = [\n");
    for word in words {
        let _ = writeln!(out, "  {},", element_toml(&Element::Word(word.to_string())));
    }
    for drafted in &ordered {
        let _ = writeln!(out, "  {},", element_toml(&drafted.element));
    }
    out.push_str("]\n");
    let last_word = words.last().copied().unwrap_or_default();
    let read_only = if words.len() > 1 {
        READ_ONLY_SUBCOMMANDS
            .iter()
            .any(|(program, subs)| *program == base && subs.contains(&last_word))
    } else {
        READ_ONLY_PROGRAMS.contains(&base)
    };
    if read_only {
        // The sandbox lets a read-only tool write nothing: no `writes` needed.
        out.push_str("annotations = { readOnlyHint = true }\n");
    } else {
        out.push_str("writes = [\".\"]                   # the roots; narrow to what it writes\n");
    }
    if words.len() > 1 && !read_only {
        if let Some(what) = needs_confirming(last_word, description) {
            let _ = writeln!(
                out,
                "confirm = {}   # a person says yes first",
                toml_string(&format!("Run `{shown}`? It {what}."))
            );
        }
    }
    let exit_one = policy::ok_exit(last_word).len() > 1
        || (words.len() == 1 && policy::ok_exit(base).len() > 1);
    out.push_str(if exit_one {
        "ok_exit = [0, 1]\n"
    } else {
        "ok_exit = [0]\n"
    });

    for param in ordered.iter().map(|d| &d.param) {
        out.push('\n');
        let _ = writeln!(out, "[tools.params.{}]", toml_key(&param.name));
        let _ = writeln!(out, "type = {}", toml_string(param.kind.name()));
        if param.kind == ParamKind::Array(ItemKind::String) {
            out.push_str("items = \"string\"\n");
        }
        if let Some(description) = &param.description {
            let _ = writeln!(out, "description = {}", toml_string(description));
        }
        if let Some(flag) = &param.flag {
            let _ = writeln!(out, "flag = {}", toml_string(flag));
        }
        if !param.enum_values.is_empty() {
            let values: Vec<String> = param
                .enum_values
                .iter()
                .map(|value| match value {
                    Value::String(text) => toml_string(text),
                    // Integer choices, checked to be written as TOML writes them: bare.
                    other => other.to_string(),
                })
                .collect();
            let _ = writeln!(out, "enum = [{}]", values.join(", "));
        }
        out.push_str("required = false\n");
    }
}
