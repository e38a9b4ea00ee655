//! Typed views of list results: only the fields ferry reads, everything else kept raw.

use serde_json::Value;

/// One tool from `tools/list`, with its original JSON kept for `--json` and the cache.
#[derive(Debug, Clone)]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    pub raw: Value,
}

impl Tool {
    /// Reads one entry of `tools`; `Err` says why the entry is unusable.
    pub fn from_value(raw: &Value) -> Result<Tool, String> {
        Tool::from_owned(raw.clone())
    }

    /// As `from_value`, keeping `raw` without a copy.
    pub fn from_owned(raw: Value) -> Result<Tool, String> {
        let obj = raw.as_object().ok_or("tool entry is not an object")?;
        let name = match obj.get("name") {
            Some(Value::String(name)) if !name.is_empty() => name.clone(),
            _ => return Err("tool entry has no string \"name\"".into()),
        };
        let description = obj
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let input_schema = match obj.get("inputSchema") {
            Some(schema @ Value::Object(_)) => schema.clone(),
            None | Some(Value::Null) => serde_json::json!({"type": "object"}),
            Some(_) => {
                return Err(format!(
                    "tool {name:?} has an inputSchema that is not an object"
                ))
            }
        };
        Ok(Tool {
            name,
            description,
            input_schema,
            raw,
        })
    }
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
