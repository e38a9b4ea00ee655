//! Command templates: strings and optional groups, a fixed program first, every placeholder
//! a parameter, and no value where a program that runs code would take it as code.

use super::Reader;
use crate::manifest::model::*;
use crate::manifest::policy;
use crate::manifest::template::{self, Element};
use crate::manifest::toml_tree::{Node, NodeValue};

impl Reader {
    /// A command template: strings and nested arrays (optional groups).
    pub(super) fn command(&self, node: &Node, what: &str) -> Result<Vec<Element>, ManifestError> {
        let NodeValue::Array(items) = &node.value else {
            return Err(self.fail(
                node.line,
                format!("{what}'s command must be an array: [\"program\", \"arg\", \"{{param}}\"]"),
            ));
        };
        let mut elements = Vec::new();
        for item in items {
            match &item.value {
                NodeValue::Str(_) => {
                    let text = self.string(item, "a command element")?;
                    elements.push(
                        template::parse_element(&text).map_err(|why| self.fail(item.line, why))?,
                    );
                }
                NodeValue::Array(_) => {
                    let inner = self.command(item, what)?;
                    if inner.is_empty() {
                        return Err(self.fail(
                            item.line,
                            "an optional group must hold at least one element",
                        ));
                    }
                    elements.push(Element::Group(inner));
                }
                _ => {
                    return Err(self.fail(
                        item.line,
                        format!(
                            "command elements are strings or arrays (optional groups), not {}",
                            item.kind()
                        ),
                    ))
                }
            }
        }
        Ok(elements)
    }

    /// Checks that a command starts with a fixed program.
    pub(super) fn program_first(
        &self,
        elements: &[Element],
        line: usize,
        what: &str,
    ) -> Result<(), ManifestError> {
        match elements.first() {
            Some(Element::Word(word)) if !word.is_empty() => Ok(()),
            Some(_) => Err(self.fail(
                line,
                format!(
                    "{what}'s command must start with a fixed program, not a parameter or group"
                ),
            )),
            None => Err(self.fail(line, format!("{what}'s command is empty"))),
        }
    }

    /// In a command whose program runs its arguments as code (`sh -c`, `python -c`, `node -e`,
    /// `awk`, `env`, `xargs`...), a value may only come after the script, where the program
    /// reads it as data (`$1`, `sys.argv`): a placeholder in the script, or before it (where it
    /// could become the script), is refused, unless its parameter says `code = true` (the
    /// author declares it as code, which the kernel sandbox confines) or its values cannot be
    /// code (a boolean flag, a number, a choice among the author's values).
    pub(super) fn check_code_arguments(
        &self,
        command: &[Element],
        params: &[Param],
        line: usize,
        what: &str,
    ) -> Result<(), ManifestError> {
        let Some(Element::Word(program)) = command.first() else {
            return Ok(());
        };
        if !policy::runs_arguments(program) {
            return Ok(());
        }
        let mut flat = Vec::new();
        flatten(&command[1..], &mut flat);
        // Values that cannot be code: a boolean's flag, a number, one of the author's choices.
        let inert = |name: &String| {
            params.iter().any(|p| {
                &p.name == name
                    && (p.flag.is_some()
                        || !p.enum_values.is_empty()
                        || matches!(p.kind, ParamKind::Integer | ParamKind::Number))
            })
        };
        let declared =
            |name: &String| inert(name) || params.iter().any(|p| &p.name == name && p.code);
        let skipped = |e: &Element| match e {
            Element::Word(w) => w.starts_with('-') && w.len() > 1,
            other => named_param(other).is_some_and(|n| inert(&n)),
        };
        // The script: what follows the first script flag, else the first operand.
        let flagged = flat
            .iter()
            .position(|e| matches!(e, Element::Word(w) if policy::is_script_flag(w)));
        let script = match flagged {
            Some(at) => flat[at + 1..]
                .iter()
                .position(|e| !skipped(e))
                .map(|i| at + 1 + i),
            None => flat.iter().position(|e| !skipped(e)),
        };
        let Some(script) = script else {
            return Ok(());
        };
        if let Some(param) = flat[..=script]
            .iter()
            .filter_map(|e| named_param(e))
            .find(|p| !declared(p))
        {
            return Err(self.fail(
                line,
                format!(
                    "{what}: {{{param}}} is in or before the script {} runs, so a model's value could become code; pass values after the script, as data: {}",
                    policy::program_name(program),
                    policy::safe_form(program)
                ),
            ));
        }
        Ok(())
    }

    /// Every placeholder names a parameter, and every parameter is used.
    pub(super) fn check_placeholders(
        &self,
        command: &[Element],
        params: &[Param],
        stdin: Option<&str>,
        line: usize,
        what: &str,
    ) -> Result<(), ManifestError> {
        let mut named = Vec::new();
        for element in command {
            element.params(&mut named);
        }
        for (name, spread) in &named {
            let Some(param) = params.iter().find(|p| &p.name == name) else {
                return Err(self.fail(
                    line,
                    format!("{what}: the command names {{{name}}}, which is not one of its params"),
                ));
            };
            let is_array = matches!(param.kind, ParamKind::Array(_));
            if *spread && !is_array {
                return Err(self.fail(
                    line,
                    format!(
                        "{what}: {{{name}*}} spreads an array, but {name} is a {}",
                        param.kind.name()
                    ),
                ));
            }
            if !*spread && is_array {
                return Err(self.fail(line, format!("{what}: {name} is an array; write \"{{{name}*}}\" for one element per item")));
            }
        }
        for param in params {
            let used =
                named.iter().any(|(n, _)| *n == param.name) || stdin == Some(param.name.as_str());
            if !used {
                return Err(self.fail(
                    line,
                    format!(
                        "{what}: parameter {:?} is used neither in the command nor as stdin",
                        param.name
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// A command's elements with its optional groups opened, in order.
fn flatten<'a>(elements: &'a [Element], out: &mut Vec<&'a Element>) {
    for element in elements {
        match element {
            Element::Group(items) => flatten(items, out),
            other => out.push(other),
        }
    }
}

/// The first parameter an element names, if any.
fn named_param(element: &Element) -> Option<String> {
    let mut named = Vec::new();
    element.params(&mut named);
    named.into_iter().next().map(|(n, _)| n)
}
