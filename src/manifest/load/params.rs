//! Parameters: each one's type, constraints, default and flag, checked against each other.

use super::Reader;
use crate::manifest::listing::input_schema;
use crate::manifest::model::*;
use crate::manifest::toml_tree::{Node, NodeValue};
use crate::schema::validate;
use crate::schema::ToolSchema;

impl Reader {
    pub(super) fn params(
        &self,
        node: Option<&Node>,
        what: &str,
        allow: &[&str],
    ) -> Result<Vec<Param>, ManifestError> {
        let Some(node) = node else {
            return Ok(Vec::new());
        };
        if !matches!(node.value, NodeValue::Table(_)) {
            return Err(self.fail(
                node.line,
                format!("{what}'s params must be a table of parameters"),
            ));
        }
        let params = node
            .entries()
            .iter()
            .map(|(name, param)| self.param(name, param, what, allow))
            .collect::<Result<Vec<Param>, ManifestError>>()?;
        if let Some(problem) = crate::protocol::tools::header_problem(&input_schema(&params)) {
            return Err(self.fail(node.line, format!("{what}'s params: header {problem}")));
        }
        Ok(params)
    }

    /// Refuses `header` on the parameters of what is not a tool: only a tool call carries
    /// `Mcp-Param` headers.
    pub(super) fn no_headers(
        &self,
        node: &Node,
        params: &[Param],
        what: &str,
    ) -> Result<(), ManifestError> {
        match params.iter().find(|p| p.header.is_some()) {
            Some(p) => Err(self.fail(
                node.line_of("params"),
                format!(
                    "{what}'s parameter {:?}: header applies to tool parameters only",
                    p.name
                ),
            )),
            None => Ok(()),
        }
    }

    pub(super) fn param(
        &self,
        name: &str,
        node: &Node,
        what: &str,
        allow: &[&str],
    ) -> Result<Param, ManifestError> {
        let here = format!("{what}'s parameter {name:?}");
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            || name.starts_with(|c: char| c.is_ascii_digit() || c == '-')
        {
            return Err(self.fail(
                node.line,
                format!("{here}: a parameter name is letters, digits, '_' and '-'"),
            ));
        }
        self.keys(node, &PARAM_KEYS, &here)?;
        let type_node = node.get("type").ok_or_else(|| {
            self.fail(
                node.line,
                format!("{here} needs a type ({})", allow.join(", ")),
            )
        })?;
        let type_name = self.string(type_node, "type")?;
        if !allow.contains(&type_name.as_str()) {
            return Err(self.fail(
                type_node.line,
                format!(
                    "{here}: type {type_name:?} is not one of {}",
                    allow.join(", ")
                ),
            ));
        }
        let kind = match type_name.as_str() {
            "string" => ParamKind::String,
            "integer" => ParamKind::Integer,
            "number" => ParamKind::Number,
            "boolean" => ParamKind::Boolean,
            "path" => ParamKind::Path,
            _ => {
                let items = node.get("items").ok_or_else(|| {
                    self.fail(node.line, format!("{here}: an array needs items (string, integer, number, path, or an array of allowed values)"))
                })?;
                ParamKind::Array(match &items.value {
                    NodeValue::Str(s) => match s.as_str() {
                        "string" => ItemKind::String,
                        "integer" => ItemKind::Integer,
                        "number" => ItemKind::Number,
                        "path" => ItemKind::Path,
                        other => return Err(self.fail(items.line, format!("{here}: items {other:?} is not string, integer, number, path or an array of values"))),
                    },
                    NodeValue::Array(values) if !values.is_empty() => ItemKind::Enum(values.iter().map(Node::to_json).collect()),
                    _ => return Err(self.fail(items.line, format!("{here}: items must be a type name or a non-empty array of allowed values"))),
                })
            }
        };
        if node.get("items").is_some() && !matches!(kind, ParamKind::Array(_)) {
            return Err(self.fail(node.line, format!("{here}: items applies to arrays only")));
        }
        let only = |key: &str, ok: bool, kinds: &str| -> Result<(), ManifestError> {
            match node.get(key) {
                Some(n) if !ok => {
                    Err(self.fail(n.line, format!("{here}: {key} applies to {kinds} only")))
                }
                _ => Ok(()),
            }
        };
        let stringy = matches!(kind, ParamKind::String | ParamKind::Path);
        let numeric = matches!(kind, ParamKind::Integer | ParamKind::Number);
        let array = matches!(kind, ParamKind::Array(_));
        only("pattern", stringy, "strings")?;
        only("min_length", stringy, "strings")?;
        only("max_length", stringy, "strings")?;
        only("enum", stringy || numeric, "strings and numbers")?;
        only("minimum", numeric, "numbers")?;
        only("maximum", numeric, "numbers")?;
        only("min_items", array, "arrays")?;
        only("max_items", array, "arrays")?;
        only("flag", kind == ParamKind::Boolean, "booleans")?;
        only(
            "exists",
            kind == ParamKind::Path || matches!(kind, ParamKind::Array(ItemKind::Path)),
            "paths",
        )?;
        let description = self.opt_string(node, "description", &here)?;
        let default = node.get("default").map(Node::to_json);
        let required = match node.get("required") {
            Some(n) => self.boolean(n, "required")?,
            None => default.is_none(),
        };
        let enum_values = match node.get("enum") {
            None => Vec::new(),
            Some(Node {
                value: NodeValue::Array(values),
                line,
            }) => {
                if values.is_empty() {
                    return Err(
                        self.fail(*line, format!("{here}: enum must list at least one value"))
                    );
                }
                values.iter().map(Node::to_json).collect()
            }
            Some(other) => {
                return Err(self.fail(
                    other.line,
                    format!("{here}: enum must be an array of values"),
                ))
            }
        };
        let pattern = self.opt_string(node, "pattern", &here)?;
        if let Some(p) = &pattern {
            if fancy_regex::Regex::new(p).is_err() {
                return Err(self.fail(
                    node.line_of("pattern"),
                    format!("{here}: pattern {p:?} is not a valid regular expression"),
                ));
            }
        }
        let flag = self.opt_string(node, "flag", &here)?;
        if let Some(f) = &flag {
            if !f.starts_with('-') || f.contains(char::is_whitespace) {
                return Err(self.fail(
                    node.line,
                    format!("{here}: flag {f:?} must be one option word such as --stat"),
                ));
            }
        }
        let header = self.opt_string(node, "header", &here)?;
        if let Some(h) = &header {
            let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
            if h.is_empty() || !h.chars().all(tchar) {
                return Err(self.fail(
                    node.line_of("header"),
                    format!(
                        "{here}: header {h:?} must be one HTTP header name word such as Region"
                    ),
                ));
            }
            if !matches!(
                kind,
                ParamKind::String | ParamKind::Path | ParamKind::Integer | ParamKind::Boolean
            ) {
                return Err(self.fail(
                    node.line_of("header"),
                    format!("{here}: header applies to strings, paths, integers and booleans only"),
                ));
            }
        }
        let param = Param {
            name: name.to_string(),
            kind,
            description,
            default,
            required,
            enum_values,
            pattern,
            min_length: node
                .get("min_length")
                .map(|n| self.count(n, "min_length"))
                .transpose()?,
            max_length: node
                .get("max_length")
                .map(|n| self.count(n, "max_length"))
                .transpose()?,
            minimum: node
                .get("minimum")
                .map(|n| self.number(n, "minimum"))
                .transpose()?,
            maximum: node
                .get("maximum")
                .map(|n| self.number(n, "maximum"))
                .transpose()?,
            min_items: node
                .get("min_items")
                .map(|n| self.count(n, "min_items"))
                .transpose()?,
            max_items: node
                .get("max_items")
                .map(|n| self.count(n, "max_items"))
                .transpose()?,
            flag,
            allow_dash: node
                .get("allow_dash")
                .map(|n| self.boolean(n, "allow_dash"))
                .transpose()?
                .unwrap_or(false),
            code: node
                .get("code")
                .map(|n| self.boolean(n, "code"))
                .transpose()?
                .unwrap_or(false),
            exists: node
                .get("exists")
                .map(|n| self.boolean(n, "exists"))
                .transpose()?
                .unwrap_or(true),
            header,
        };
        // The default must itself be a valid value.
        if let Some(default) = &param.default {
            let schema = ToolSchema::from_input_schema(&input_schema(std::slice::from_ref(&param)));
            if let Some(prop) = schema.prop(&param.name) {
                if let Err(v) = validate::check_value(&schema, &prop.shape, default, &param.name, 0)
                {
                    return Err(self.fail(
                        node.line_of("default"),
                        format!("{here}: the default does not fit: {}", v.message()),
                    ));
                }
            }
        }
        Ok(param)
    }
}
