//! Tools as `tools/list` shows them: each parameter's JSON Schema, the closed `inputSchema`,
//! and the tool's JSON.

use super::model::{ItemKind, Manifest, Param, ParamKind, ToolDef};
use super::template::{Element, ParamView};
use crate::protocol::tools::Tool;
use serde_json::{json, Map, Value};

/// One parameter's JSON Schema.
fn param_schema(param: &Param) -> Value {
    let mut schema = match &param.kind {
        ParamKind::String => json!({"type": "string"}),
        ParamKind::Integer => json!({"type": "integer"}),
        ParamKind::Number => json!({"type": "number"}),
        ParamKind::Boolean => json!({"type": "boolean"}),
        ParamKind::Path => json!({"type": "string", "format": "path"}),
        ParamKind::Array(items) => {
            let items = match items {
                ItemKind::String => json!({"type": "string"}),
                ItemKind::Integer => json!({"type": "integer"}),
                ItemKind::Number => json!({"type": "number"}),
                ItemKind::Path => json!({"type": "string", "format": "path"}),
                ItemKind::Enum(values) => json!({"enum": values}),
            };
            json!({"type": "array", "items": items})
        }
    };
    let obj = schema.as_object_mut().expect("a schema object");
    if let Some(d) = &param.description {
        obj.insert("description".into(), json!(d));
    }
    if !param.enum_values.is_empty() {
        obj.insert("enum".into(), json!(param.enum_values));
    }
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(v) = value {
            obj.insert(key.into(), v);
        }
    };
    put("pattern", param.pattern.as_ref().map(|p| json!(p)));
    put("minLength", param.min_length.map(|n| json!(n)));
    put("maxLength", param.max_length.map(|n| json!(n)));
    put("minimum", param.minimum.map(number));
    put("maximum", param.maximum.map(number));
    put("minItems", param.min_items.map(|n| json!(n)));
    put("maxItems", param.max_items.map(|n| json!(n)));
    put("default", param.default.clone());
    put("x-mcp-header", param.header.as_ref().map(|h| json!(h)));
    schema
}

/// A whole number as an integer in JSON, so `minimum = 1` reads `1`, not `1.0`.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        json!(n as i64)
    } else {
        json!(n)
    }
}

/// The `inputSchema` of a parameter list (draft 2020-12, closed).
pub fn input_schema(params: &[Param]) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for param in params {
        properties.insert(param.name.clone(), param_schema(param));
        if param.required && param.default.is_none() {
            required.push(json!(param.name));
        }
    }
    let mut schema = json!({
        "type": "object",
        "properties": properties,
        "additionalProperties": false,
    });
    if !required.is_empty() {
        schema["required"] = Value::Array(required);
    }
    schema
}

impl ParamView for Vec<Param> {
    fn allows_dash(&self, name: &str) -> bool {
        self.iter().any(|p| p.name == name && p.allow_dash)
    }
    fn flag(&self, name: &str) -> Option<&str> {
        self.iter()
            .find(|p| p.name == name)
            .and_then(|p| p.flag.as_deref())
    }
}

impl ToolDef {
    /// The tool as `tools/list` shows it.
    pub fn to_tool(&self) -> Tool {
        let mut raw = json!({
            "name": self.name,
            "description": self.description,
            "inputSchema": input_schema(&self.params),
        });
        if let Some(title) = &self.title {
            raw["title"] = json!(title);
        }
        if !self.annotations.is_empty() {
            raw["annotations"] = Value::Object(self.annotations.clone());
        }
        if let Some(schema) = &self.output_schema {
            raw["outputSchema"] = schema.clone();
        }
        if let Some(support) = self.task.name() {
            raw["execution"] = json!({"taskSupport": support});
        }
        Tool::from_owned(raw).expect("a compiled tool is valid")
    }

    /// The command's program and the fixed words that follow it, up to the first value or
    /// option (`["git", "log", "--oneline", "{n}"]` gives `git` and `[log]`).
    pub fn program_and_words(&self) -> Option<(&str, Vec<String>)> {
        let mut elements = self.command.iter();
        let Some(Element::Word(program)) = elements.next() else {
            return None;
        };
        let words = elements
            .map_while(|e| match e {
                Element::Word(word) if !word.starts_with('-') => Some(word.clone()),
                _ => None,
            })
            .collect();
        Some((program, words))
    }
}

impl Manifest {
    /// Every tool as `tools/list` shows it, in manifest order.
    pub fn tools(&self) -> Vec<Tool> {
        self.tools.iter().map(ToolDef::to_tool).collect()
    }
}
