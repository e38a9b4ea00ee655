//! Options and operands become parameters: a name, a kind, choices, and the command element
//! each renders as (`["--max-count", "{max-count}"]`, `"--color={color}"`, `"{quiet}"`).

use super::options::OptionSpec;
use crate::manifest::model::{Param, ParamKind};
use crate::manifest::template::{Element, Piece};
use serde_json::Value;
use std::collections::HashSet;

/// One drafted parameter, as the manifest's own [`Param`], and the command element it
/// renders as.
#[derive(Debug, Clone)]
pub(super) struct Drafted {
    pub(super) param: Param,
    pub(super) element: Element,
}

impl Drafted {
    /// An optional parameter (a draft requires nothing) of a kind, its description and
    /// allowed values, and its element.
    pub(super) fn new(
        name: &str,
        kind: ParamKind,
        description: String,
        enum_values: Vec<Value>,
        element: Element,
    ) -> Drafted {
        Drafted {
            param: Param {
                required: false,
                description: Some(description).filter(|d| !d.is_empty()),
                enum_values,
                ..Param::new(name, kind)
            },
            element,
        }
    }
}

/// The parameter kind a value name suggests.
pub(super) fn value_kind(value: &str) -> ParamKind {
    if value.contains(|c: char| "|:,=[]{}+?()".contains(c)) {
        return ParamKind::String;
    }
    let word: String = value
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    let integers = [
        "n", "num", "number", "int", "integer", "count", "lines", "level", "levels", "depth",
        "port", "jobs", "limit", "max", "min", "width", "cols", "columns", "int8", "int16",
        "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64",
    ];
    let numbers = [
        "seconds",
        "secs",
        "sec",
        "float",
        "float32",
        "float64",
        "fractionalseconds",
        "decimal",
    ];
    if integers.contains(&word.as_str()) {
        ParamKind::Integer
    } else if numbers.contains(&word.as_str()) {
        ParamKind::Number
    } else if (word.ends_with("file") && word != "profile")
        || word.ends_with("filename")
        || word.ends_with("path")
        || word.ends_with("dir")
        || word.ends_with("directory")
        || word == "folder"
        || word == "archive"
    {
        ParamKind::Path
    } else {
        ParamKind::String
    }
}

/// A parameter name for an option: `--max-count` → `max-count`, `-n` → `n`.
pub(super) fn param_name(spec: &OptionSpec) -> Option<String> {
    let raw = match (&spec.long, spec.short) {
        (Some(long), _) => long.trim_start_matches('-').to_string(),
        (None, Some(c)) if c.is_ascii_alphanumeric() => c.to_string(),
        _ => return None,
    };
    let name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.is_empty() || name.chars().all(|c| c == '_' || c == '-') {
        None
    } else if name.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        Some(format!("opt_{name}"))
    } else {
        Some(name)
    }
}

/// The parameter for an option, or `None` when it cannot be drafted.
pub(super) fn option_param(spec: &OptionSpec, name: String) -> Option<Drafted> {
    let spelled = match (&spec.long, spec.short) {
        (Some(long), _) => long.clone(),
        (None, Some(c)) => format!("-{c}"),
        (None, None) => return None,
    };
    if spelled.contains(['{', '}']) || spelled.contains(char::is_whitespace) {
        return None;
    }
    let shown = match &spec.value {
        Some(v) if spec.optional_value => format!("{spelled}[={v}]"),
        Some(v) => format!("{spelled} {v}"),
        None => spelled.clone(),
    };
    let description = if spec.description.is_empty() {
        shown
    } else {
        spec.description.clone()
    };
    let Some(value) = &spec.value else {
        let mut flag = Drafted::new(
            &name,
            ParamKind::Boolean,
            description,
            Vec::new(),
            Element::Whole(name.clone()),
        );
        flag.param.flag = Some(spelled);
        return Some(flag);
    };
    let choices: Vec<String> = dedup(
        spec.choices
            .iter()
            .filter(|c| !c.is_empty() && !c.starts_with('-'))
            .cloned(),
    );
    let kind = if choices.is_empty() {
        value_kind(value)
    } else if choices
        .iter()
        .all(|c| c.parse::<i64>().is_ok_and(|n| n.to_string() == *c))
    {
        // Only choices written as TOML writes them (`0644` or `+1` stay text: the program
        // is given what it listed, and the draft still loads).
        ParamKind::Integer
    } else {
        ParamKind::String
    };
    let element = if !spec.optional_value {
        Element::Group(vec![Element::Word(spelled), Element::Whole(name.clone())])
    } else if spelled.starts_with("--") {
        // An optional value must be attached: given apart it would be an operand.
        Element::Mixed(vec![
            Piece::Text(format!("{spelled}=")),
            Piece::Param(name.clone()),
        ])
    } else if spelled.chars().count() == 2 {
        Element::Mixed(vec![Piece::Text(spelled), Piece::Param(name.clone())])
    } else {
        Element::Group(vec![Element::Word(spelled), Element::Whole(name.clone())])
    };
    let enum_values = choices
        .into_iter()
        .map(|c| match kind {
            ParamKind::Integer => Value::from(c.parse::<i64>().unwrap_or_default()),
            _ => Value::String(c),
        })
        .collect();
    Some(Drafted::new(&name, kind, description, enum_values, element))
}

pub(super) fn dedup(items: impl Iterator<Item = String>) -> Vec<String> {
    let mut seen = HashSet::new();
    items.filter(|i| seen.insert(i.clone())).collect()
}
