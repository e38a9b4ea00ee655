//! The drafts of real help texts (under `tests/fixtures/help/`), by layout, each loaded by
//! the manifest loader `ferry serve` runs.

use super::text::{clean, MAX_DESCRIPTION};
use super::write::{comment, toml_key, toml_string};
use super::*;
use std::collections::{BTreeMap, HashSet};
use toml::Value;

// -----------------------------------------------------------------------------------------
// A checker for drafts: the rules ferry's manifest loader enforces, restated.

use crate::manifest::{PARAM_KEYS, SERVER_KEYS, TOOL_KEYS};

/// One checked tool: its command as JSON-ish text and its params by name.
#[derive(Debug)]
struct Tool {
    name: String,
    description: String,
    command: Vec<Value>,
    params: BTreeMap<String, toml::Table>,
    table: toml::Table,
}

impl Tool {
    fn param(&self, name: &str) -> &toml::Table {
        self.params.get(name).unwrap_or_else(|| {
            panic!(
                "tool {} has no param {name}: {:?}",
                self.name,
                self.params.keys()
            )
        })
    }
    fn kind(&self, name: &str) -> &str {
        self.param(name)["type"].as_str().unwrap_or_default()
    }
    /// The command as TOML text, for substring checks.
    fn command_text(&self) -> String {
        Value::Array(self.command.clone()).to_string()
    }
}

fn only_keys(table: &toml::Table, allowed: &[&str], what: &str) {
    for key in table.keys() {
        assert!(
            allowed.contains(&key.as_str()),
            "{what} has key {key:?}, not one of {allowed:?}"
        );
    }
}

fn valid_param_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        && !name.starts_with(|c: char| c.is_ascii_digit() || c == '-')
}

/// The placeholders of one command element as ferry's template parser reads them:
/// (name, spread); panics where the parser would refuse the element.
fn placeholders(text: &str) -> Vec<(String, bool)> {
    let chars: Vec<char> = text.chars().collect();
    let mut found = Vec::new();
    let mut literal = false;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '{' if chars.get(i + 1) == Some(&'{') => {
                literal = true;
                i += 2;
            }
            '}' if chars.get(i + 1) == Some(&'}') => {
                literal = true;
                i += 2;
            }
            '{' => {
                let end = chars[i + 1..]
                    .iter()
                    .position(|&c| c == '}')
                    .unwrap_or_else(|| panic!("{text:?}: '{{' with no '}}'"));
                let inner: String = chars[i + 1..i + 1 + end].iter().collect();
                let (name, star) = match inner.strip_suffix('*') {
                    Some(n) => (n.to_string(), true),
                    None => (inner.clone(), false),
                };
                assert!(
                    !name.is_empty()
                        && name
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                        && !name.starts_with(|c: char| c.is_ascii_digit()),
                    "{text:?}: placeholder {{{inner}}} is not a parameter name"
                );
                found.push((name, star));
                i += end + 2;
            }
            '}' => panic!("{text:?}: '}}' with no '{{'"),
            _ => {
                literal = true;
                i += 1;
            }
        }
    }
    if found.iter().any(|(_, star)| *star) {
        assert!(
            found.len() == 1 && !literal,
            "{text:?}: a spread must be a whole element"
        );
    }
    found
}

fn walk_command(items: &[Value], top: bool, out: &mut Vec<(String, bool)>) {
    for (i, item) in items.iter().enumerate() {
        match item {
            Value::String(s) => {
                let named = placeholders(s);
                if top && i == 0 {
                    assert!(
                        !s.is_empty() && named.is_empty(),
                        "the command must start with a fixed program, not {s:?}"
                    );
                }
                out.extend(named);
            }
            Value::Array(inner) => {
                assert!(
                    !(top && i == 0),
                    "the command must start with a fixed program, not a group"
                );
                assert!(
                    !inner.is_empty(),
                    "an optional group must hold at least one element"
                );
                walk_command(inner, false, out);
            }
            other => panic!("command elements are strings or arrays, not {other:?}"),
        }
    }
}

/// Checks a draft against the loader's rules (and this module's promises); its tools.
fn check(text: &str) -> Vec<Tool> {
    // The loader `ferry serve` runs is the judge; the checks below are this module's own.
    if let Err(e) = crate::manifest::parse(text, std::path::Path::new("draft.toml")) {
        panic!("the draft does not load: {e:?}\n{text}");
    }
    let doc: toml::Table =
        toml::from_str(text).unwrap_or_else(|e| panic!("not valid TOML: {e}\n{text}"));
    only_keys(&doc, &["server", "tools"], "the manifest");
    let server = doc
        .get("server")
        .and_then(Value::as_table)
        .expect("a [server] table");
    only_keys(server, &SERVER_KEYS, "[server]");
    assert!(server
        .get("name")
        .and_then(Value::as_str)
        .is_some_and(|n| !n.is_empty()));
    assert!(server.get("instructions").and_then(Value::as_str).is_some());
    assert_eq!(
        server.get("roots"),
        Some(&Value::Array(vec![Value::String(".".into())]))
    );
    assert_eq!(server.get("timeout").and_then(Value::as_integer), Some(30));
    let tools = doc
        .get("tools")
        .and_then(Value::as_array)
        .expect("[[tools]]");
    assert!(!tools.is_empty(), "no tools");
    let mut names = HashSet::new();
    let mut out = Vec::new();
    for tool in tools {
        let table = tool.as_table().expect("each tool is a table");
        only_keys(table, &TOOL_KEYS, "a tool");
        let name = table
            .get("name")
            .and_then(Value::as_str)
            .expect("a tool name")
            .to_string();
        assert!(
            !name.is_empty()
                && name.len() <= 128
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c)),
            "bad tool name {name:?}"
        );
        assert!(names.insert(name.clone()), "a second tool named {name:?}");
        let description = table
            .get("description")
            .and_then(Value::as_str)
            .expect("a description")
            .to_string();
        assert!(
            !description.trim().is_empty(),
            "tool {name}: empty description"
        );
        assert!(
            !description.contains('\n') && description.chars().count() <= MAX_DESCRIPTION + 3,
            "tool {name}: {description:?}"
        );
        let command = table
            .get("command")
            .and_then(Value::as_array)
            .expect("a command array")
            .clone();
        assert!(!command.is_empty());
        let mut named = Vec::new();
        walk_command(&command, true, &mut named);
        let empty = toml::Table::new();
        let params = table
            .get("params")
            .map(|p| p.as_table().expect("params is a table"))
            .unwrap_or(&empty);
        assert!(
            params.len() <= MAX_PARAMS,
            "tool {name}: {} params",
            params.len()
        );
        let mut checked = BTreeMap::new();
        for (pname, param) in params {
            assert!(
                valid_param_name(pname),
                "tool {name}: bad param name {pname:?}"
            );
            let param = param.as_table().expect("a param table");
            only_keys(param, &PARAM_KEYS, "a param");
            let kind = param
                .get("type")
                .and_then(Value::as_str)
                .expect("a param type");
            assert!(
                ["string", "integer", "number", "boolean", "path", "array"].contains(&kind),
                "type {kind}"
            );
            assert_eq!(
                param.get("required"),
                Some(&Value::Boolean(false)),
                "{name}.{pname} must say required = false"
            );
            assert!(!param.contains_key("allow_dash") && !param.contains_key("default"));
            assert_eq!(
                param.contains_key("items"),
                kind == "array",
                "{name}.{pname}: items goes with arrays"
            );
            if kind == "array" {
                assert_eq!(param.get("items").and_then(Value::as_str), Some("string"));
            }
            if let Some(flag) = param.get("flag") {
                let flag = flag.as_str().expect("flag is a string");
                assert!(
                    kind == "boolean"
                        && flag.starts_with('-')
                        && !flag.contains(char::is_whitespace),
                    "{name}.{pname}: flag {flag:?}"
                );
            }
            assert!(!param.contains_key("exists") || kind == "path");
            if let Some(values) = param.get("enum") {
                let values = values.as_array().expect("enum is an array");
                assert!(!values.is_empty());
                match kind {
                    "string" => assert!(values.iter().all(Value::is_str)),
                    "integer" => assert!(values.iter().all(Value::is_integer)),
                    other => panic!("{name}.{pname}: enum on a {other}"),
                }
            }
            if let Some(d) = param.get("description") {
                let d = d.as_str().expect("description is a string");
                assert!(!d.trim().is_empty() && !d.contains('\n'));
            }
            checked.insert(pname.clone(), param.clone());
        }
        for (placeholder, spread) in &named {
            let param = checked
                .get(placeholder)
                .unwrap_or_else(|| panic!("tool {name}: {{{placeholder}}} is not a param"));
            let is_array = param["type"].as_str() == Some("array");
            assert_eq!(
                *spread, is_array,
                "tool {name}: {placeholder} spread/array mismatch"
            );
        }
        for pname in checked.keys() {
            assert!(
                named.iter().any(|(n, _)| n == pname),
                "tool {name}: param {pname} is not in the command"
            );
        }
        if let Some(a) = table.get("annotations") {
            assert!(a.is_table());
        }
        let ok_exit = table
            .get("ok_exit")
            .and_then(Value::as_array)
            .expect("ok_exit");
        assert!(
            !ok_exit.is_empty()
                && ok_exit
                    .iter()
                    .all(|c| c.as_integer().is_some_and(|c| (0..=255).contains(&c)))
        );
        out.push(Tool {
            name,
            description,
            command,
            params: checked,
            table: table.clone(),
        });
    }
    out
}

fn help(path: &[&str], text: &str) -> HelpText {
    HelpText {
        path: path.iter().map(|s| s.to_string()).collect(),
        text: text.to_string(),
    }
}

fn tool<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
    tools
        .iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no tool {name}"))
}

fn find<'a>(options: &'a [OptionSpec], long: &str) -> &'a OptionSpec {
    options
        .iter()
        .find(|o| o.long.as_deref() == Some(long))
        .unwrap_or_else(|| panic!("no option {long}"))
}

fn flag(long: Option<&str>, short: Option<char>, description: &str) -> OptionSpec {
    OptionSpec {
        long: long.map(str::to_string),
        short,
        description: description.to_string(),
        ..OptionSpec::default()
    }
}

fn valued(long: Option<&str>, short: Option<char>, value: &str, description: &str) -> OptionSpec {
    OptionSpec {
        value: Some(value.to_string()),
        ..flag(long, short, description)
    }
}

mod argparse;
mod clap;
mod curl;
mod docker;
mod edges;
mod git;
mod gnu;
mod ripgrep;
