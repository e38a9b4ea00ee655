//! Typed views of list results: only the fields ferry reads, everything else kept raw.

use super::json_schema::SchemaView;
use super::messages::ListView;
use serde::Deserialize;
use serde_json::Value;

/// One tool from `tools/list`, with its original JSON kept for `--json` and the cache.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub raw: Value,
}

/// Why an entry of `tools` is unusable (the entry is skipped with a warning).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BadTool {
    #[error("tool entry is not an object")]
    NotObject,
    #[error("tool entry has no string \"name\"")]
    NoName,
    #[error("tool {0:?} has an inputSchema that is not an object")]
    Schema(String),
    #[error("tool {name:?} declares an invalid x-mcp-header: {problem}")]
    Header { name: String, problem: String },
}

impl Tool {
    /// The `name` of a tool definition, when it is a string.
    pub fn name_of(raw: &Value) -> Option<&str> {
        ListView::new(raw).name()
    }

    /// Reads one entry of `tools`; `Err` says why the entry is unusable.
    pub fn from_value(raw: &Value) -> Result<Tool, BadTool> {
        Tool::from_owned(raw.clone())
    }

    /// As `from_value`, keeping `raw` without a copy.
    pub fn from_owned(raw: Value) -> Result<Tool, BadTool> {
        if !raw.is_object() {
            return Err(BadTool::NotObject);
        }
        let entry = ListView::new(&raw);
        let name = match entry.name() {
            Some(name) if !name.is_empty() => name.to_string(),
            _ => return Err(BadTool::NoName),
        };
        let description = entry.description().unwrap_or("").to_string();
        let input_schema = match entry.input_schema() {
            Some(schema @ Value::Object(_)) => schema.clone(),
            None | Some(Value::Null) => serde_json::json!({"type": "object"}),
            Some(_) => return Err(BadTool::Schema(name)),
        };
        if let Some(problem) = header_problem(&input_schema) {
            return Err(BadTool::Header { name, problem });
        }
        Ok(Tool {
            name,
            description,
            input_schema,
            raw,
        })
    }
}

/// A tool definition's `annotations` (hints: read-only, destructive...), whatever their type.
pub fn annotations(raw: &Value) -> Option<&Value> {
    ListView::new(raw).annotations()
}

/// A tool's `annotations` (hints about its behaviour), read leniently: a hint of the wrong
/// type reads as unsaid.
#[derive(Debug, Clone, Default, PartialEq, serde::Deserialize)]
pub struct Annotations {
    #[serde(
        rename = "readOnlyHint",
        default,
        deserialize_with = "super::lenient::opt"
    )]
    pub read_only_hint: Option<bool>,
    #[serde(
        rename = "destructiveHint",
        default,
        deserialize_with = "super::lenient::opt"
    )]
    pub destructive_hint: Option<bool>,
    #[serde(
        rename = "idempotentHint",
        default,
        deserialize_with = "super::lenient::opt"
    )]
    pub idempotent_hint: Option<bool>,
    #[serde(
        rename = "openWorldHint",
        default,
        deserialize_with = "super::lenient::opt"
    )]
    pub open_world_hint: Option<bool>,
}

impl Annotations {
    /// Reads a tool's annotations (an object, or the table a manifest gives).
    pub fn read(annotations: &serde_json::Map<String, Value>) -> Annotations {
        Annotations::deserialize(annotations).unwrap_or_default()
    }

    /// Whether the tool says it changes nothing.
    pub fn read_only(&self) -> bool {
        self.read_only_hint == Some(true)
    }
}

/// The keyword that declares a property's value is sent as a header (2026-07-28).
const HEADER_KEYWORD: &str = "x-mcp-header";

/// Keys whose values are data, not subschemas: never searched for declarations.
const DATA_KEYS: [&str; 4] = ["enum", "const", "default", "examples"];

/// One `x-mcp-header` declaration: the property's path when reached through `properties`
/// alone (`None` when anywhere else), the declaration, and the property's type.
type Declaration = (Option<Vec<String>>, Value, Option<String>);

/// Finds every `x-mcp-header` declaration.
fn declarations(
    node: &Value,
    path: Option<Vec<String>>,
    found: &mut Vec<Declaration>,
    depth: usize,
) {
    let Some(obj) = node.as_object() else {
        if let Value::Array(items) = node {
            items
                .iter()
                .for_each(|i| declarations(i, None, found, depth + 1));
        }
        return;
    };
    if depth > 64 {
        return;
    }
    let view = SchemaView::of(obj);
    if let Some(header) = view.keyword(HEADER_KEYWORD) {
        let kind = view.type_name().map(str::to_string);
        found.push((path.clone().filter(|p| !p.is_empty()), header.clone(), kind));
    }
    for (key, value) in obj {
        if DATA_KEYS.contains(&key.as_str()) || key == HEADER_KEYWORD {
            continue;
        }
        if key == "properties" {
            if let Some(props) = value.as_object() {
                for (name, prop) in props {
                    let inner = path.clone().map(|mut p| {
                        p.push(name.clone());
                        p
                    });
                    declarations(prop, inner, found, depth + 1);
                }
            }
        } else if value.is_object() || value.is_array() {
            declarations(value, None, found, depth + 1);
        }
    }
}

/// Why a tool's `x-mcp-header` declarations cannot be used (2026-07-28): each a non-empty
/// header token, unique ignoring case, on a string, integer or boolean property reached from
/// the root through `properties` only.
pub fn header_problem(schema: &Value) -> Option<String> {
    let mut found = Vec::new();
    declarations(schema, Some(Vec::new()), &mut found, 0);
    let mut seen: Vec<String> = Vec::new();
    for (path, header, kind) in found {
        let Some(header) = header.as_str() else {
            return Some("a declaration is not text".into());
        };
        if header.is_empty() {
            return Some("a declaration is empty".into());
        }
        let tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
        if !header.chars().all(tchar) {
            return Some(format!("{header:?} is not a header name"));
        }
        if path.is_none() {
            return Some(format!(
                "{header:?} is not on a property reached through properties"
            ));
        }
        if !matches!(kind.as_deref(), Some("string" | "integer" | "boolean")) {
            return Some(format!(
                "{header:?} is on a property that is not a string, integer or boolean"
            ));
        }
        let lower = header.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Some(format!("{header:?} is declared twice"));
        }
        seen.push(lower);
    }
    None
}

/// The names every usable `x-mcp-header` declaration gives (`Region` for `Mcp-Param-Region`).
pub fn header_names(schema: &Value) -> Vec<String> {
    let mut found = Vec::new();
    declarations(schema, Some(Vec::new()), &mut found, 0);
    found
        .into_iter()
        .filter(|(path, _, _)| path.is_some())
        .filter_map(|(_, header, _)| header.as_str().map(str::to_string))
        .collect()
}

/// The headers a call must carry for its arguments (`Mcp-Param-NAME`), read at each
/// declared property's path; absent and null values send none.
pub fn param_headers(schema: &Value, arguments: &Value) -> Vec<(String, String)> {
    let mut found = Vec::new();
    declarations(schema, Some(Vec::new()), &mut found, 0);
    let mut headers = Vec::new();
    for (path, header, _) in found {
        let (Some(path), Some(header)) = (path, header.as_str()) else {
            continue;
        };
        let mut value = arguments;
        for key in &path {
            match value.get(key) {
                Some(v) => value = v,
                None => {
                    value = &Value::Null;
                    break;
                }
            }
        }
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
            Value::Number(n) => n.to_string(),
            _ => continue,
        };
        headers.push((format!("Mcp-Param-{header}"), text));
    }
    headers
}

/// Splits raw tool entries into usable tools and one warning per skipped entry.
pub fn parse_tools(entries: &[Value]) -> (Vec<Tool>, Vec<String>) {
    parse_tools_owned(entries.to_vec())
}

/// As `parse_tools`, taking the entries: each becomes its tool's `raw` without a copy.
pub fn parse_tools_owned(entries: Vec<Value>) -> (Vec<Tool>, Vec<String>) {
    let mut tools = Vec::with_capacity(entries.len());
    let mut warnings = Vec::new();
    for (index, entry) in entries.into_iter().enumerate() {
        match Tool::from_owned(entry) {
            Ok(tool) => tools.push(tool),
            Err(why) => warnings.push(format!("skipped tool #{}: {why}", index + 1)),
        }
    }
    (tools, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_declarations_are_checked_and_mirrored() {
        let valid = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "n": {"type": "integer", "x-mcp-header": "N"},
            "query": {"type": "string"}}});
        assert_eq!(header_problem(&valid), None);
        assert_eq!(
            param_headers(&valid, &json!({"region": "us", "n": 3, "query": "q"})),
            vec![
                ("Mcp-Param-Region".to_string(), "us".to_string()),
                ("Mcp-Param-N".to_string(), "3".to_string())
            ]
        );
        assert!(param_headers(&valid, &json!({"region": null})).is_empty());
        for bad in [
            json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
            json!({"properties": {"a": {"type": "object", "x-mcp-header": "A"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"}, "b": {"type": "string", "x-mcp-header": "a"}}}),
            json!({"properties": {"a": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
        ] {
            assert!(header_problem(&bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn malformed_entries_are_skipped_with_a_warning() {
        let entries = vec![
            json!({"name": "echo", "inputSchema": {"type": "object"}}),
            json!(42),
            json!({"name": 7}),
            json!({"name": "x", "inputSchema": "nope"}),
            json!({"name": "no_schema"}),
        ];
        let (tools, warnings) = parse_tools(&entries);
        let names: Vec<_> = tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["echo", "no_schema"]);
        assert_eq!(warnings.len(), 3);
        assert_eq!(warnings[0], "skipped tool #2: tool entry is not an object");
    }
}
