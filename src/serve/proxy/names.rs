//! `--expose all`: every tool listed as `server__tool`. The names are in MCP's tool-name
//! characters (letters, digits, `_`, `-`, `.`; at most 128) and one-to-one: a name two tools
//! would share (server `a` with tool `b__c` and server `a__b` with tool `c`, or `x/y` and
//! `x_y` once cleaned) goes to the first in the catalog's order and the next gets a `_2`,
//! so no tool shadows another and every listed name can be called.

use std::collections::HashMap;

/// The longest tool name MCP allows.
const MAX_NAME: usize = 128;

/// The exposed names, both ways.
#[derive(Debug, Default)]
pub struct Exposed {
    /// Exposed name to (server, tool).
    to_tool: HashMap<String, (String, String)>,
    /// (server, tool) to exposed name.
    to_name: HashMap<(String, String), String>,
}

impl Exposed {
    /// Names `tools` (server, tool) in the order given.
    pub fn new<'a>(tools: impl IntoIterator<Item = (&'a str, &'a str)>) -> Exposed {
        let mut exposed = Exposed::default();
        for (server, tool) in tools {
            let key = (server.to_string(), tool.to_string());
            if exposed.to_name.contains_key(&key) {
                continue;
            }
            let base = format!("{}__{}", clean(server), clean(tool));
            let mut name = truncated(&base, MAX_NAME);
            let mut n = 1;
            while exposed.to_tool.contains_key(&name) {
                n += 1;
                let suffix = format!("_{n}");
                name = truncated(&base, MAX_NAME - suffix.len()) + &suffix;
            }
            exposed.to_tool.insert(name.clone(), key.clone());
            exposed.to_name.insert(key, name);
        }
        exposed
    }

    /// The tool an exposed name stands for.
    pub fn tool(&self, name: &str) -> Option<(&str, &str)> {
        self.to_tool
            .get(name)
            .map(|(server, tool)| (server.as_str(), tool.as_str()))
    }

    /// The exposed name of a server's tool.
    pub fn name(&self, server: &str, tool: &str) -> Option<&str> {
        self.to_name
            .get(&(server.to_string(), tool.to_string()))
            .map(String::as_str)
    }

    /// Every exposed name.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.to_tool.keys().map(String::as_str)
    }
}

/// A name in MCP's tool-name characters: anything else becomes `_`.
fn clean(name: &str) -> String {
    let cleaned: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if cleaned.is_empty() {
        "_".to_string()
    } else {
        cleaned
    }
}

/// The first `max` characters (names are ASCII once cleaned).
fn truncated(name: &str, max: usize) -> String {
    name.chars().take(max).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_one_to_one_and_callable() {
        let exposed = Exposed::new([
            ("a", "b__c"),
            ("a__b", "c"),
            ("x", "y/z"),
            ("x", "y_z"),
            ("s", "bell\u{7}\u{202e}"),
        ]);
        assert_eq!(exposed.name("a", "b__c"), Some("a__b__c"));
        assert_eq!(exposed.name("a__b", "c"), Some("a__b__c_2"));
        assert_eq!(exposed.tool("a__b__c_2"), Some(("a__b", "c")));
        assert_eq!(exposed.name("x", "y/z"), Some("x__y_z"));
        assert_eq!(exposed.name("x", "y_z"), Some("x__y_z_2"));
        assert_eq!(exposed.name("s", "bell\u{7}\u{202e}"), Some("s__bell__"));
        let long = "t".repeat(300);
        let exposed = Exposed::new([("s", long.as_str()), ("s", &long[..299])]);
        let first = exposed.name("s", &long).unwrap();
        let second = exposed.name("s", &long[..299]).unwrap();
        assert_eq!(first.len(), 128);
        assert_eq!(second.len(), 128);
        assert!(second.ends_with("_2"));
    }
}
