//! A tools list read only for its words: each tool's name, description and parameter names,
//! borrowed from the JSON text, everything else skipped without building a value. `ferry find`
//! reads thousands of cached tools this way in a few milliseconds, and parses in full only the
//! few it shows.
//!
//! Reading is as forgiving as [`super::tools::parse_tools`]: an entry that is not an object or
//! has no string name is left out, a description or schema of the wrong type is ignored.

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// The words of one tool.
#[derive(Debug, Default, PartialEq)]
pub struct ToolText<'a> {
    pub name: Cow<'a, str>,
    pub description: Cow<'a, str>,
    /// The top-level property names of its input schema.
    pub params: Vec<Cow<'a, str>>,
}

/// The tools of a document shaped `{"tools": [...], ...}` (a `tools/list` result, ferry's
/// cache file) and its `fetchedAtMs` (0 when absent), or `None` when the text is not such a
/// document.
pub fn tool_texts(json: &[u8]) -> Option<(Vec<ToolText<'_>>, u64)> {
    let list: ToolList = serde_json::from_slice(json).ok()?;
    Some((
        list.tools?.into_iter().flatten().collect(),
        list.fetched_at_ms,
    ))
}

struct ToolList<'a> {
    tools: Option<Vec<Option<ToolText<'a>>>>,
    fetched_at_ms: u64,
}

impl<'de> Deserialize<'de> for ToolList<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ListVisitor;
        impl<'de> Visitor<'de> for ListVisitor {
            type Value = ToolList<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object with a tools list")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut list = ToolList {
                    tools: None,
                    fetched_at_ms: 0,
                };
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "tools" => list.tools = Some(map.next_value::<Entries<'de>>()?.0),
                        "fetchedAtMs" => {
                            list.fetched_at_ms = map.next_value::<Number>()?.0;
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(list)
            }
        }
        deserializer.deserialize_map(ListVisitor)
    }
}

/// The tools array: each entry a tool, or `None` for an entry that cannot be one.
struct Entries<'a>(Vec<Option<ToolText<'a>>>);

impl<'de> Deserialize<'de> for Entries<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntriesVisitor;
        impl<'de> Visitor<'de> for EntriesVisitor {
            type Value = Entries<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of tools")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                let mut entries = Vec::with_capacity(seq.size_hint().unwrap_or(16));
                while let Some(entry) = seq.next_element::<Entry<'de>>()? {
                    entries.push(entry.0);
                }
                Ok(Entries(entries))
            }
        }
        deserializer.deserialize_seq(EntriesVisitor)
    }
}

struct Entry<'a>(Option<ToolText<'a>>);

impl<'de> Deserialize<'de> for Entry<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct EntryVisitor;
        impl<'de> Visitor<'de> for EntryVisitor {
            type Value = Entry<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a tool")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut tool = ToolText::default();
                let mut named = false;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "name" => {
                            if let Some(name) = map.next_value::<Text>()?.0 {
                                named = !name.is_empty();
                                tool.name = name;
                            }
                        }
                        "description" => {
                            if let Some(description) = map.next_value::<Text>()?.0 {
                                tool.description = description;
                            }
                        }
                        "inputSchema" => tool.params = map.next_value::<PropertyNames>()?.0,
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                Ok(Entry(named.then_some(tool)))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| Entry(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Entry(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Entry(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Entry(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Entry(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Entry(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Entry(None))
            }
        }
        deserializer.deserialize_any(EntryVisitor)
    }
}

/// A string, borrowed where the JSON has no escapes in it; `None` for any other value.
struct Text<'a>(Option<Cow<'a, str>>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, text: &'de str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Borrowed(text))))
            }
            fn visit_str<E>(self, text: &str) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(text.to_string()))))
            }
            fn visit_string<E>(self, text: String) -> Result<Self::Value, E> {
                Ok(Text(Some(Cow::Owned(text))))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                IgnoredAny.visit_map(map).map(|_| Text(None))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| Text(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Text(None))
            }
        }
        deserializer.deserialize_any(TextVisitor)
    }
}

/// A non-negative integer; 0 for anything else.
struct Number(u64);

impl<'de> Deserialize<'de> for Number {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = serde_json::Value::deserialize(deserializer)?;
        Ok(Number(value.as_u64().unwrap_or(0)))
    }
}

/// The keys of a schema's `properties`; empty for a schema without them or of another type.
struct PropertyNames<'a>(Vec<Cow<'a, str>>);

impl<'de> Deserialize<'de> for PropertyNames<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SchemaVisitor;
        impl<'de> Visitor<'de> for SchemaVisitor {
            type Value = PropertyNames<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a schema")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut names = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    if key == "properties" {
                        names = map.next_value::<Keys>()?.0;
                    } else {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                Ok(PropertyNames(names))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| PropertyNames(Vec::new()))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(PropertyNames(Vec::new()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(PropertyNames(Vec::new()))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(PropertyNames(Vec::new()))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(PropertyNames(Vec::new()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(PropertyNames(Vec::new()))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(PropertyNames(Vec::new()))
            }
        }
        deserializer.deserialize_any(SchemaVisitor)
    }
}

/// The keys of an object, its values skipped; empty for any other value.
struct Keys<'a>(Vec<Cow<'a, str>>);

impl<'de> Deserialize<'de> for Keys<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeysVisitor;
        impl<'de> Visitor<'de> for KeysVisitor {
            type Value = Keys<'de>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    map.next_value::<IgnoredAny>()?;
                    keys.push(key);
                }
                Ok(Keys(keys))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
                IgnoredAny.visit_seq(seq).map(|_| Keys(Vec::new()))
            }
            fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                Ok(Keys(Vec::new()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Keys(Vec::new()))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Keys(Vec::new()))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Keys(Vec::new()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Keys(Vec::new()))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Keys(Vec::new()))
            }
        }
        deserializer.deserialize_any(KeysVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_names_descriptions_and_parameters_and_skips_what_cannot_be_a_tool() {
        let json = br#"{"fetchedAtMs": 7, "tools": [
            {"name": "read", "description": "Read a \"file\"", "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "head": {}}}},
            {"name": 3}, "junk", {"description": "no name"}, {"name": ""},
            {"name": "odd", "description": ["not", "text"], "inputSchema": {"properties": [1]}, "x": {"y": [null]}}
        ], "protocol": {"era": "x"}}"#;
        let (tools, fetched) = tool_texts(json).unwrap();
        assert_eq!(fetched, 7);
        assert_eq!(
            tools,
            vec![
                ToolText {
                    name: "read".into(),
                    description: "Read a \"file\"".into(),
                    params: vec!["path".into(), "head".into()],
                },
                ToolText {
                    name: "odd".into(),
                    ..ToolText::default()
                },
            ]
        );
        assert!(matches!(tools[0].name, Cow::Borrowed(_)));
        assert!(tool_texts(b"[1, 2]").is_none());
        assert!(tool_texts(b"{\"other\": 1}").is_none());
        assert!(tool_texts(b"{\"tools\": 1}").is_none());
    }
}
