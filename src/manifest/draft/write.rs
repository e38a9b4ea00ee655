//! Writing the draft: the `[server]` table, one `[[tools]]` table for the program or each
//! subcommand, their parameters, and comments that tell a reviewer what was left out and why.

use super::options::options;
use super::options::OptionSpec;
use super::params::{option_param, param_name, Drafted};
use super::rank::{keep, Signals};
use super::risks::{
    is_denied, is_help_or_version, needs_confirming, runs_or_writes, NETWORK_PROGRAMS,
    NETWORK_SUBCOMMANDS, READ_ONLY_PROGRAMS, READ_ONLY_SUBCOMMANDS, WRITING_CODE_RUNNERS,
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
    /// Its short help (`-h`) where the caller read one that differs.
    pub(super) short: Option<&'a str>,
}

/// The short help given for `path` (a help whose path is `path` and then `-h`).
fn short_help<'a>(helps: &'a [HelpText], path: &[String]) -> Option<&'a str> {
    helps
        .iter()
        .find(|h| {
            h.path.len() == path.len() + 1
                && h.path.ends_with(&["-h".to_string()])
                && h.path[..path.len()] == *path
        })
        .map(|h| h.text.as_str())
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
            short: short_help(helps, &[]),
        });
    }
    for (name, summary) in subs {
        let help = helps
            .iter()
            .find(|h| h.path.len() == 1 && h.path[0] == name)
            .map(|h| h.text.as_str());
        let path = vec![name];
        plans.push(Plan {
            short: short_help(helps, &path),
            path,
            summary,
            help,
        });
    }
    // Deeper helps the caller read too (`docker container ls`).
    for help in helps
        .iter()
        .filter(|h| !h.path.is_empty() && !h.path.iter().any(|w| w == "-h"))
    {
        if !plans.iter().any(|p| p.path == help.path) {
            plans.push(Plan {
                path: help.path.clone(),
                summary: String::new(),
                help: Some(&help.text),
                short: short_help(helps, &help.path),
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
        let short = plan.short.map(clean);
        write_tool(
            &mut out,
            &Tool {
                name: &name,
                description: &description,
                words: &words,
                base,
                help: help.as_deref(),
                short: short.as_deref(),
            },
        );
    }
    if drafted == 0 {
        // Every subcommand had subcommands of its own: still draft something that loads.
        let description = top
            .and_then(|h| help_summary(&clean(&h.text)))
            .unwrap_or_else(|| format!("Run `{program}`"));
        write_tool(
            &mut out,
            &Tool {
                name: &tool_name(base),
                description: &description,
                words: &[program],
                base,
                help: None,
                short: None,
            },
        );
    }
    out
}

/// One tool to write: its name and description, the words of its command, the program's file
/// name, and its help and short help.
pub(super) struct Tool<'a> {
    pub(super) name: &'a str,
    pub(super) description: &'a str,
    pub(super) words: &'a [&'a str],
    pub(super) base: &'a str,
    pub(super) help: Option<&'a str>,
    pub(super) short: Option<&'a str>,
}

/// Programs whose first operand is code they run (a jq filter), besides those that run code
/// in [`policy`].
const CODE_OPERAND_PROGRAMS: &[&str] = &["jq", "gojq", "jaq", "yq"];

/// A parameter name for an operand as a usage line writes it: `<jq filter>` is `jq-filter`,
/// `{script-only-if-no-other-script}` is `script`, `FILE1` is `file1`.
fn operand_name(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    for special in ["script", "expression"] {
        if words.contains(&special) {
            return special.to_string();
        }
    }
    let joined = words.join("-");
    if joined.len() > 24 {
        words.last().map(|w| w.to_string()).unwrap_or_default()
    } else {
        joined
    }
}

/// A name not yet taken: `wanted`, else the first free fallback.
fn free_name(wanted: &str, taken: &HashSet<String>) -> String {
    std::iter::once(wanted.to_string())
        .filter(|w| !w.is_empty() && w.starts_with(|c: char| c.is_ascii_alphabetic()))
        .chain(
            ["args", "arguments", "operands", "rest"]
                .iter()
                .map(|n| n.to_string()),
        )
        .chain((1..).map(|n| format!("args_{n}")))
        .find(|n| !taken.contains(n))
        .unwrap_or_default()
}

/// Whether a help text writes some long option's value after `=` (`--max-count=NUM`), so the
/// program takes `--opt=value`.
fn writes_equals(help: &str) -> bool {
    help.match_indices("--").any(|(at, _)| {
        let rest = &help[at + 2..];
        let name = rest
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .unwrap_or(rest.len());
        name > 0
            && rest[name..].starts_with('=')
            && rest[..name].starts_with(|c: char| c.is_ascii_alphabetic())
    })
}

/// A list parameter of strings (operands), its description shortened.
fn list(name: &str, description: &str, element: Element) -> Drafted {
    Drafted::new(
        name,
        ParamKind::Array(ItemKind::String),
        shorten(description, MAX_DESCRIPTION),
        Vec::new(),
        element,
    )
}

/// Whether a help text says the program reads its standard input.
fn reads_stdin(help: &str, base: &str) -> bool {
    let lower = help.to_ascii_lowercase();
    lower.contains("standard input")
        || lower.contains("stdin")
        || lower.contains(&format!("| {}", base.to_ascii_lowercase()))
}

/// The option's spelling as a comment lists it: `-w/--word-regexp`.
fn spelled(spec: &OptionSpec) -> Option<String> {
    match (spec.short, &spec.long) {
        (Some(c), Some(long)) => Some(format!("-{c}/{long}")),
        (Some(c), None) => Some(format!("-{c}")),
        (None, Some(long)) => Some(long.clone()),
        (None, None) => None,
    }
}

/// Writes one `[[tools]]` table and its parameters.
pub(super) fn write_tool(out: &mut String, tool: &Tool) {
    let Tool {
        name,
        description,
        words,
        base,
        help,
        short,
    } = *tool;
    let shown = words.join(" ");
    let lines = help.map(lines).unwrap_or_default();
    let mut usage = usage(&lines);
    if !usage.positional {
        // A manual's synopsis is no usage line; the short help has one (git's `log -h`).
        if let Some(short) = short {
            usage = super::usage::usage(&super::text::lines(short));
        }
    }
    let mut found = help.map(options).unwrap_or_default();
    // Options only the short help lists (git's `log -h` beside its manual).
    for spec in short.map(options).unwrap_or_default() {
        if !found.iter().any(|o| param_name(o) == param_name(&spec)) {
            found.push(spec);
        }
    }
    let code_runner = policy::runs_arguments(base);
    let code_operand = code_runner || CODE_OPERAND_PROGRAMS.contains(&policy::program_name(base));

    // The options a draft may have, each under one name.
    let mut left_out: Vec<String> = Vec::new();
    let mut candidates: Vec<(&OptionSpec, String, String)> = Vec::new();
    let mut names: HashSet<String> = HashSet::new();
    for spec in &found {
        if is_help_or_version(spec) {
            continue;
        }
        let Some(shown_spec) = spelled(spec) else {
            continue;
        };
        // A code runner's script option (`python3 -c CODE`) is its job: declared as code.
        let script_option = code_runner
            && spec.value.is_some()
            && (spec
                .short
                .is_some_and(|c| policy::is_script_flag(&format!("-{c}")))
                || spec.long.as_deref().is_some_and(policy::is_script_flag));
        if is_denied(spec, base, words.len() > 1) || (runs_or_writes(spec) && !script_option) {
            if !left_out.contains(&shown_spec) {
                left_out.push(shown_spec);
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
        if names.insert(param_name.clone()) {
            candidates.push((spec, param_name, shown_spec));
        }
    }

    // Operands: leading single ones by name, the rest as a list, those after `--` after it,
    // and find's expression (whose words start with `-`) as a list that allows that.
    let before = usage.before_dashdash();
    let expression = usage
        .expression
        .then(|| {
            before
                .iter()
                .find(|o| operand_name(o) == "expression")
                .copied()
        })
        .flatten();
    let before: Vec<&str> = before
        .into_iter()
        .filter(|o| Some(*o) != expression)
        .collect();
    let singles: Vec<&str> = if usage.expression {
        Vec::new()
    } else {
        before
            .iter()
            .take_while(|o| !usage.repeated.iter().any(|r| r == *o))
            .take(3)
            .copied()
            .collect()
    };
    let rest: Vec<&str> = before[singles.len()..].to_vec();
    let after = &usage.after_dashdash;
    // A program with a `--stdin` option reads its standard input only when given it.
    let stdin = help.is_some_and(|h| reads_stdin(h, base))
        && !found.iter().any(|o| o.long.as_deref() == Some("--stdin"));
    let positionals = singles.len()
        + usize::from(!rest.is_empty())
        + usize::from(!after.is_empty())
        + usize::from(expression.is_some())
        + usize::from(stdin);
    let room = MAX_PARAMS.saturating_sub(positionals);

    let signals = Signals::read(help.unwrap_or_default(), short);
    let equals = help.is_some_and(writes_equals);
    let specs: Vec<&OptionSpec> = candidates.iter().map(|c| c.0).collect();
    let kept = keep(&specs, &signals, room);
    let mut params: Vec<Drafted> = Vec::new();
    let mut cut: Vec<String> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    for (i, (spec, param_name, shown_spec)) in candidates.iter().enumerate() {
        if !kept.contains(&i) {
            cut.push(shown_spec.clone());
            continue;
        }
        if let Some(mut param) = option_param(spec, param_name.clone()) {
            if spec.pair {
                // Two values: a list of exactly two, each its own word after the option.
                param.param.kind = ParamKind::Array(ItemKind::String);
                param.param.min_items = Some(2);
                param.param.max_items = Some(2);
                if let Element::Group(items) = &mut param.element {
                    if let Some(last) = items.last_mut() {
                        *last = Element::Spread(param_name.clone());
                    }
                }
            }
            if spec.repeatable && spec.value.is_some() && !spec.pair && !spec.optional_value {
                // Given once per value: `--glob=A --glob=B`, or `-gA -gB` where the help never
                // writes a long option's value after `=` (curl reads no `--header=X`).
                // Only for getopt-style parsers (a `--long` spelling): sqlite3's `-A ARGS...`
                // takes the rest of the line, not one attached value.
                let prefix = match (&spec.long, spec.short) {
                    (Some(long), _) if long.starts_with("--") && equals => Some(format!("{long}=")),
                    (Some(long), Some(c)) if long.starts_with("--") => Some(format!("-{c}")),
                    _ => None,
                };
                if let Some(prefix) = prefix {
                    let items = match param.param.kind {
                        ParamKind::Path => ItemKind::Path,
                        ParamKind::Integer => ItemKind::Integer,
                        ParamKind::Number => ItemKind::Number,
                        _ => ItemKind::String,
                    };
                    param.param.kind = ParamKind::Array(items);
                    param.param.enum_values.clear();
                    param.element = Element::Repeat(prefix, param_name.clone());
                }
            }
            taken.insert(param_name.clone());
            params.push(param);
        }
    }

    let mut front: Vec<Drafted> = Vec::new();
    let mut back: Vec<Drafted> = Vec::new();
    for (n, single) in singles.iter().enumerate() {
        let pname = free_name(&operand_name(single), &taken);
        taken.insert(pname.clone());
        let mut drafted = Drafted::new(
            &pname,
            ParamKind::String,
            shorten(&format!("The {single} operand"), MAX_DESCRIPTION),
            Vec::new(),
            Element::Whole(pname.clone()),
        );
        // The operand that is code: a jq filter (the first), or one named as code (SQL).
        const CODE_WORDS: [&str; 7] = [
            "sql", "script", "program", "filter", "code", "cmd", "command",
        ];
        let named_code = operand_name(single)
            .split('-')
            .any(|w| CODE_WORDS.contains(&w));
        if (n == 0 && code_operand && !code_runner) || (code_runner && named_code) {
            drafted.param.code = true;
            drafted.param.description = Some(shorten(
                &format!("Code `{base}` runs ({single}); the kernel sandbox confines it"),
                MAX_DESCRIPTION,
            ));
        }
        back.push(drafted);
    }
    if !rest.is_empty() {
        let pname = free_name("args", &taken);
        taken.insert(pname.clone());
        let list_of: Vec<&str> = rest.iter().copied().take(6).collect();
        let drafted = list(
            &pname,
            &format!("Further arguments: {}", list_of.join(", ")),
            Element::Spread(pname.clone()),
        );
        if usage.expression {
            front.push(drafted);
        } else {
            back.push(drafted);
        }
    }
    if let Some(expression) = expression {
        let pname = free_name("expression", &taken);
        taken.insert(pname.clone());
        let mut drafted = list(
            &pname,
            &format!("The {expression}, one word per item; its words start with - (-name X -type f); what runs programs or writes is stopped by the sandbox"),
            Element::Spread(pname.clone()),
        );
        drafted.param.allow_dash = true;
        back.push(drafted);
    }
    if !after.is_empty() {
        let pname = free_name(&operand_name(&after[0]), &taken);
        taken.insert(pname.clone());
        let list_of: Vec<&str> = after.iter().map(String::as_str).take(6).collect();
        back.push(list(
            &pname,
            &format!("Arguments after --: {}", list_of.join(", ")),
            Element::Group(vec![
                Element::Word("--".to_string()),
                Element::Spread(pname.clone()),
            ]),
        ));
    }
    let stdin_param = stdin.then(|| {
        let pname = free_name("stdin", &taken);
        taken.insert(pname.clone());
        pname
    });

    let last_word = words.last().copied().unwrap_or_default();
    let network = if words.len() > 1 {
        NETWORK_SUBCOMMANDS
            .iter()
            .any(|(program, subs)| *program == base && subs.contains(&last_word))
    } else {
        NETWORK_PROGRAMS.contains(&policy::program_name(base))
    };
    // What the model gives a code runner may be run: declare it so, and confine the tool.
    let mut ordered: Vec<Drafted> = front;
    ordered.extend(params);
    ordered.extend(back);
    if code_runner {
        for drafted in &mut ordered {
            if matches!(
                drafted.param.kind,
                ParamKind::String | ParamKind::Path | ParamKind::Array(_)
            ) && drafted.param.enum_values.is_empty()
            {
                drafted.param.code = true;
            }
        }
    }

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
                "{} more options of `{shown}` were left out to keep this tool reviewable (at most {MAX_PARAMS} parameters; kept: those its short help, one-letter aliases, usage and examples point to): {}",
                cut.len(),
                cut.join(", ")
            ),
        );
    }
    if code_runner {
        comment(
            out,
            &format!("`{base}` runs code it is given: the parameters that say `code = true` are code it runs. The kernel sandbox confines it: {}no programs but its own (no `exec`), {}.",
                if WRITING_CODE_RUNNERS.contains(&policy::program_name(base)) { "" } else { "read-only, " },
                if network { "and the network because that is its job" } else { "no network" }),
        );
    }
    out.push_str("[[tools]]\n");
    let _ = writeln!(out, "name = {}", toml_string(name));
    let _ = writeln!(out, "description = {}", toml_string(description));
    out.push_str("command = [\n");
    for word in words {
        let _ = writeln!(out, "  {},", element_toml(&Element::Word(word.to_string())));
    }
    for drafted in &ordered {
        let _ = writeln!(out, "  {},", element_toml(&drafted.element));
    }
    out.push_str("]\n");
    if let Some(pname) = &stdin_param {
        let _ = writeln!(out, "stdin = {}", toml_string(pname));
    }
    let read_only = if words.len() > 1 {
        READ_ONLY_SUBCOMMANDS
            .iter()
            .any(|(program, subs)| *program == base && subs.contains(&last_word))
    } else {
        READ_ONLY_PROGRAMS.contains(&base)
            || (code_runner && !WRITING_CODE_RUNNERS.contains(&policy::program_name(base)))
    };
    if read_only {
        // The sandbox lets a read-only tool write nothing: no `writes` needed.
        out.push_str("annotations = { readOnlyHint = true }\n");
    } else {
        out.push_str("writes = [\".\"]                   # the roots; narrow to what it writes\n");
    }
    if network {
        let _ = writeln!(
            out,
            "network = true                   # `{shown}`'s job is the network"
        );
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
        write_param(out, param);
    }
    if let Some(pname) = &stdin_param {
        let mut param = crate::manifest::model::Param::new(pname, ParamKind::String);
        param.description = Some(if code_operand && code_runner {
            format!("Code or text written to `{base}`'s standard input")
        } else {
            "Text written to the command's standard input (what it reads when no file is given)"
                .to_string()
        });
        param.code = code_runner;
        write_param(out, &param);
    }
}

/// Writes one `[tools.params.NAME]` table (every drafted parameter is optional).
fn write_param(out: &mut String, param: &crate::manifest::model::Param) {
    out.push('\n');
    let _ = writeln!(out, "[tools.params.{}]", toml_key(&param.name));
    let _ = writeln!(out, "type = {}", toml_string(param.kind.name()));
    match &param.kind {
        ParamKind::Array(ItemKind::Path) => out.push_str("items = \"path\"\n"),
        ParamKind::Array(ItemKind::Integer) => out.push_str("items = \"integer\"\n"),
        ParamKind::Array(ItemKind::Number) => out.push_str("items = \"number\"\n"),
        ParamKind::Array(_) => out.push_str("items = \"string\"\n"),
        _ => {}
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
    if let (Some(min), Some(max)) = (param.min_items, param.max_items) {
        let _ = writeln!(out, "min_items = {min}\nmax_items = {max}");
    }
    if param.allow_dash {
        out.push_str("allow_dash = true                # its words are the program's own syntax\n");
    }
    if param.code {
        out.push_str(
            "code = true                      # code the command runs, confined by the sandbox\n",
        );
    }
    out.push_str("required = false\n");
}
