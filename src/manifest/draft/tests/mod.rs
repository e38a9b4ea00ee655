//! The drafts of real help texts (under `tests/fixtures/help/`), by layout, each loaded by
//! the manifest loader `ferry serve` runs and checked on what it loaded.

use super::text::{clean, MAX_DESCRIPTION};
use super::write::{comment, toml_key, toml_string};
use super::*;
use crate::manifest::template::Element;
use crate::manifest::{ItemKind, Param, ParamKind, ToolDef};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// One drafted tool as the manifest loader read it, its params by name.
#[derive(Debug)]
struct Tool {
    name: String,
    description: String,
    params: BTreeMap<String, Param>,
    def: ToolDef,
}

impl Tool {
    fn param(&self, name: &str) -> &Param {
        self.params.get(name).unwrap_or_else(|| {
            panic!(
                "tool {} has no param {name}: {:?}",
                self.name,
                self.params.keys()
            )
        })
    }
    /// The param's type as a manifest writes it.
    fn kind(&self, name: &str) -> &'static str {
        self.param(name).kind.name()
    }
    /// The loaded command written back as a TOML array, for exact and substring checks.
    fn command_text(&self) -> String {
        toml::Value::Array(self.def.command.iter().map(element_text).collect()).to_string()
    }
    /// The command's program, a fixed word.
    fn program(&self) -> &str {
        match &self.def.command[0] {
            Element::Word(word) => word,
            other => panic!("tool {}: the command starts with {other:?}", self.name),
        }
    }
}

/// An element as a manifest writes it: its template string, or an array for a group.
fn element_text(element: &Element) -> toml::Value {
    match element {
        Element::Group(items) => toml::Value::Array(items.iter().map(element_text).collect()),
        other => toml::Value::String(other.template_text().unwrap_or_default()),
    }
}

/// Loads a draft with the loader `ferry serve` runs, the judge of every rule of the format
/// (keys, names, placeholders, groups, exit codes), then checks on what it loaded what a
/// draft promises beyond that; its tools.
fn check(text: &str) -> Vec<Tool> {
    let manifest = crate::manifest::parse(text, Path::new("draft.toml"))
        .unwrap_or_else(|e| panic!("the draft does not load: {e:?}\n{text}"));
    let server = &manifest.server;
    assert!(!server.name.is_empty());
    assert!(server.instructions.is_some());
    assert_eq!(
        server.roots.all(),
        [std::fs::canonicalize(".").unwrap()],
        "roots = [\".\"]"
    );
    assert_eq!(server.timeout, Duration::from_secs(30));
    assert!(
        manifest.resources.is_empty()
            && manifest.templates.is_empty()
            && manifest.prompts.is_empty()
    );
    assert!(!manifest.tools.is_empty(), "no tools");
    let mut out = Vec::new();
    for def in manifest.tools {
        let name = &def.name;
        let description = &def.description;
        assert!(
            !description.trim().is_empty(),
            "tool {name}: empty description"
        );
        assert!(
            !description.contains('\n') && description.chars().count() <= MAX_DESCRIPTION + 3,
            "tool {name}: {description:?}"
        );
        assert!(
            def.params.len() <= MAX_PARAMS,
            "tool {name}: {} params",
            def.params.len()
        );
        for param in &def.params {
            let pname = &param.name;
            assert!(!param.required, "{name}.{pname} must say required = false");
            // Only find's expression, whose words are find's own syntax, allows a dash.
            assert!(param.default.is_none());
            assert!(!param.allow_dash || pname == "expression", "{name}.{pname}");
            if let ParamKind::Array(items) = &param.kind {
                assert!(
                    matches!(
                        items,
                        ItemKind::String | ItemKind::Path | ItemKind::Integer | ItemKind::Number
                    ),
                    "{name}.{pname}: items {items:?}"
                );
            }
            if let Some(flag) = &param.flag {
                assert!(
                    param.kind == ParamKind::Boolean
                        && flag.starts_with('-')
                        && !flag.contains(char::is_whitespace),
                    "{name}.{pname}: flag {flag:?}"
                );
            }
            assert!(param.exists || param.kind == ParamKind::Path);
            if !param.enum_values.is_empty() {
                match param.kind {
                    ParamKind::String => assert!(param.enum_values.iter().all(Value::is_string)),
                    ParamKind::Integer => assert!(param.enum_values.iter().all(Value::is_i64)),
                    ref other => panic!("{name}.{pname}: enum on a {}", other.name()),
                }
            }
            if let Some(d) = &param.description {
                assert!(!d.trim().is_empty() && !d.contains('\n'));
            }
        }
        out.push(Tool {
            name: def.name.clone(),
            description: def.description.clone(),
            params: def
                .params
                .iter()
                .map(|p| (p.name.clone(), p.clone()))
                .collect(),
            def,
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
mod corpus;
mod curl;
mod docker;
mod edges;
mod git;
mod gnu;
mod ripgrep;
