//! A TOML document as a plain tree whose every node knows its line, so a manifest error can
//! name the line it is about (toml_edit keeps the spans; this flattens its item kinds).

use toml_edit::{Item, Value};

/// One node of the document.
#[derive(Debug, Clone)]
pub struct Node {
    pub line: usize,
    pub value: NodeValue,
}

/// What a node holds.
#[derive(Debug, Clone)]
pub enum NodeValue {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A date or time: kept as text, refused where it is not expected.
    Other(String),
    Array(Vec<Node>),
    Table(Vec<(String, Node)>),
}

impl Node {
    /// The value of `key` in a table node.
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            NodeValue::Table(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, n)| n),
            _ => None,
        }
    }

    /// The line `key` is on in a table node, else the node's own: where an error about that
    /// key points.
    pub fn line_of(&self, key: &str) -> usize {
        self.get(key).map_or(self.line, |n| n.line)
    }

    /// The entries of a table node (none for other kinds).
    pub fn entries(&self) -> &[(String, Node)] {
        match &self.value {
            NodeValue::Table(entries) => entries,
            _ => &[],
        }
    }

    /// What kind of TOML value this is, for messages.
    pub fn kind(&self) -> &'static str {
        match self.value {
            NodeValue::Str(_) => "a string",
            NodeValue::Int(_) => "an integer",
            NodeValue::Float(_) => "a number",
            NodeValue::Bool(_) => "a boolean",
            NodeValue::Other(_) => "a date",
            NodeValue::Array(_) => "an array",
            NodeValue::Table(_) => "a table",
        }
    }

    /// The node as JSON (tables as objects, dates as strings).
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            NodeValue::Str(s) | NodeValue::Other(s) => J::String(s.clone()),
            NodeValue::Int(i) => J::from(*i),
            NodeValue::Float(f) => serde_json::Number::from_f64(*f).map_or(J::Null, J::Number),
            NodeValue::Bool(b) => J::Bool(*b),
            NodeValue::Array(items) => J::Array(items.iter().map(Node::to_json).collect()),
            NodeValue::Table(entries) => J::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_json()))
                    .collect(),
            ),
        }
    }
}

/// Line numbers from byte offsets.
struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { starts }
    }

    fn line(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i + 1,
            Err(i) => i,
        }
    }
}

/// Parses a TOML text; `Err` is (line, message) of the syntax error.
pub fn parse(text: &str) -> Result<Node, (usize, String)> {
    let lines = Lines::new(text);
    let document = toml_edit::ImDocument::parse(text).map_err(|e| {
        let line = e.span().map_or(1, |s| lines.line(s.start));
        let message = e
            .message()
            .lines()
            .next()
            .unwrap_or("invalid TOML")
            .trim()
            .to_string();
        (line, message)
    })?;
    Ok(from_item(document.as_item(), &lines, 1))
}

fn from_item(item: &Item, lines: &Lines, parent: usize) -> Node {
    let line = item.span().map_or(parent, |s| lines.line(s.start));
    match item {
        Item::Value(value) => from_value(value, lines, line),
        Item::Table(table) => {
            let line = table.span().map_or(line, |s| lines.line(s.start));
            let entries = table
                .iter()
                .map(|(key, item)| {
                    let key_line = table
                        .key(key)
                        .and_then(|k| k.span())
                        .map_or(line, |s| lines.line(s.start));
                    (key.to_string(), from_item(item, lines, key_line))
                })
                .collect();
            Node {
                line,
                value: NodeValue::Table(entries),
            }
        }
        Item::ArrayOfTables(array) => {
            let line = array.span().map_or(line, |s| lines.line(s.start));
            let items = array
                .iter()
                .map(|table| from_item(&Item::Table(table.clone()), lines, line))
                .collect();
            Node {
                line,
                value: NodeValue::Array(items),
            }
        }
        Item::None => Node {
            line,
            value: NodeValue::Table(Vec::new()),
        },
    }
}

fn from_value(value: &Value, lines: &Lines, parent: usize) -> Node {
    let line = value.span().map_or(parent, |s| lines.line(s.start));
    let value = match value {
        Value::String(s) => NodeValue::Str(s.value().clone()),
        Value::Integer(i) => NodeValue::Int(*i.value()),
        Value::Float(f) => NodeValue::Float(*f.value()),
        Value::Boolean(b) => NodeValue::Bool(*b.value()),
        Value::Datetime(d) => NodeValue::Other(d.value().to_string()),
        Value::Array(array) => {
            NodeValue::Array(array.iter().map(|v| from_value(v, lines, line)).collect())
        }
        Value::InlineTable(table) => NodeValue::Table(
            table
                .iter()
                .map(|(k, v)| (k.to_string(), from_value(v, lines, line)))
                .collect(),
        ),
    };
    Node { line, value }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_node_knows_its_line() {
        let tree = parse("[server]\nname = \"x\"\n\n[[tools]]\nname = \"a\"\ncommand = [\"echo\", [\"-n\", \"{n}\"]]\n[tools.params.n]\ntype = \"string\"\n").unwrap();
        assert_eq!(tree.get("server").unwrap().get("name").unwrap().line, 2);
        let tool = &match &tree.get("tools").unwrap().value {
            NodeValue::Array(items) => items.clone(),
            _ => panic!(),
        }[0];
        assert_eq!(tool.get("command").unwrap().line, 6);
        assert_eq!(
            tool.get("params")
                .unwrap()
                .get("n")
                .unwrap()
                .get("type")
                .unwrap()
                .line,
            8
        );
        assert_eq!(parse("a = [1,\n").unwrap_err().0, 2);
    }
}
