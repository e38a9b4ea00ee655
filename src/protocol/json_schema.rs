//! A read-only view over a JSON schema (a tool's `inputSchema`, an elicitation's
//! `requestedSchema`): its keywords by name, each of the JSON type the keyword takes, `None`
//! when absent or of another type. The schema itself stays a `Value`, so no keyword ferry does
//! not read is lost.

use serde_json::{Map, Value};

/// A schema object's keywords.
#[derive(Debug, Clone, Copy)]
pub struct SchemaView<'a> {
    obj: &'a Map<String, Value>,
}

/// A schema's `type`: one name, or a list of them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SchemaType<'a> {
    One(&'a str),
    Many(&'a [Value]),
}

impl<'a> SchemaView<'a> {
    /// The view of a schema; `None` when it is not an object.
    pub fn new(schema: &'a Value) -> Option<SchemaView<'a>> {
        schema.as_object().map(SchemaView::of)
    }

    /// The view of a schema object.
    pub fn of(obj: &'a Map<String, Value>) -> SchemaView<'a> {
        SchemaView { obj }
    }

    /// The schema object itself.
    pub fn map(&self) -> &'a Map<String, Value> {
        self.obj
    }

    /// A keyword's value, whatever its type.
    pub fn keyword(&self, name: &str) -> Option<&'a Value> {
        self.obj.get(name)
    }

    /// Whether the keyword is there at all.
    pub fn has(&self, name: &str) -> bool {
        self.obj.contains_key(name)
    }

    fn str(&self, name: &str) -> Option<&'a str> {
        self.keyword(name).and_then(Value::as_str)
    }

    fn list(&self, name: &str) -> Option<&'a [Value]> {
        self.keyword(name)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
    }

    fn object(&self, name: &str) -> Option<&'a Map<String, Value>> {
        self.keyword(name).and_then(Value::as_object)
    }

    /// `type`, as one name or a list.
    pub fn schema_type(&self) -> Option<SchemaType<'a>> {
        match self.keyword("type") {
            Some(Value::String(name)) => Some(SchemaType::One(name)),
            Some(Value::Array(names)) => Some(SchemaType::Many(names)),
            _ => None,
        }
    }

    /// `type` when it is one name.
    pub fn type_name(&self) -> Option<&'a str> {
        self.str("type")
    }

    /// `$ref`.
    pub fn reference(&self) -> Option<&'a str> {
        self.str("$ref")
    }

    pub fn description(&self) -> Option<&'a str> {
        self.str("description")
    }

    pub fn title(&self) -> Option<&'a str> {
        self.str("title")
    }

    pub fn default(&self) -> Option<&'a Value> {
        self.keyword("default")
    }

    /// `const`.
    pub fn constant(&self) -> Option<&'a Value> {
        self.keyword("const")
    }

    /// `enum`.
    pub fn enum_values(&self) -> Option<&'a [Value]> {
        self.list("enum")
    }

    /// `enumNames` (the old way to title an enum's values).
    pub fn enum_names(&self) -> Option<&'a [Value]> {
        self.list("enumNames")
    }

    pub fn all_of(&self) -> Option<&'a [Value]> {
        self.list("allOf")
    }

    /// `anyOf`, else `oneOf`, when it is a list (as ferry reads either: one of several shapes).
    pub fn variants(&self) -> Option<&'a [Value]> {
        self.keyword("anyOf")
            .or_else(|| self.keyword("oneOf"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
    }

    /// `oneOf`, else `anyOf`, when it is a list.
    pub fn one_of(&self) -> Option<&'a [Value]> {
        self.keyword("oneOf")
            .or_else(|| self.keyword("anyOf"))
            .and_then(Value::as_array)
            .map(Vec::as_slice)
    }

    /// `items`, whatever its form (a schema, or the old tuple list).
    pub fn items(&self) -> Option<&'a Value> {
        self.keyword("items")
    }

    pub fn prefix_items(&self) -> Option<&'a [Value]> {
        self.list("prefixItems")
    }

    /// `properties`.
    pub fn properties(&self) -> Option<&'a Map<String, Value>> {
        self.object("properties")
    }

    /// The names in `required` (names that are not strings are skipped).
    pub fn required(&self) -> Vec<&'a str> {
        self.list("required")
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// `additionalProperties`, whatever its form.
    pub fn additional_properties(&self) -> Option<&'a Value> {
        self.keyword("additionalProperties")
    }

    /// `$defs`, whatever its form.
    pub fn defs(&self) -> Option<&'a Value> {
        self.keyword("$defs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keywords_read_by_their_type() {
        let schema =
            json!({"type": ["string", "null"], "required": ["a", 1], "oneOf": 3, "anyOf": [{}]});
        let view = SchemaView::new(&schema).unwrap();
        assert!(matches!(view.schema_type(), Some(SchemaType::Many(_))));
        assert_eq!(view.type_name(), None);
        assert_eq!(view.required(), vec!["a"]);
        assert_eq!(view.variants().map(<[Value]>::len), Some(1));
        assert!(SchemaView::new(&json!(true)).is_none());
    }
}
