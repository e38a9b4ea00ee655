//! Validation against the schema model: one word as a scalar (the CLI's flags), and a whole
//! JSON arguments object (serve's incoming calls, `--json`): types, ranges, enums, lengths,
//! patterns, nullables and items. Errors are [`Violation`]s, which each caller words in its own
//! terms (`--count expects ...` on the command line, `count expects ...` for JSON).

use super::{render_type, render_value, Kind, Shape, ToolSchema};
use serde_json::{Map, Number, Value};
use std::collections::HashMap;
use std::sync::Mutex;

/// How deep a value is checked (guards hostile input; deeper parts pass unchecked).
const MAX_CHECK_DEPTH: usize = 64;

/// Arguments that do not fit: where, and how.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// The property path: `count`, `edits[2].oldText`.
    pub at: String,
    pub problem: Problem,
}

/// How arguments do not fit.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// A required value is missing; its type in notation.
    Missing(String),
    /// The schema has no such property and takes no others.
    Unknown,
    /// The value is not what was expected; `found` is already quoted.
    Wrong { expected: String, found: String },
}

impl Violation {
    /// `count expects an integer, not "x"`, `missing required count (int)`,
    /// `unknown argument PATH`.
    pub fn message(&self) -> String {
        match &self.problem {
            Problem::Missing(kind) => format!("missing required {} ({kind})", self.at),
            Problem::Unknown => format!("unknown argument {}", self.at),
            Problem::Wrong { expected, found } => {
                format!("{} expects {expected}, not {found}", self.at)
            }
        }
    }
}

/// What a word or value should have been, as a message says it after "expects": `an
/// integer`, `one of a, b`, `at most 3 characters`.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Expected {
    #[error("an integer")]
    Integer,
    #[error("a number")]
    Number,
    #[error("true or false")]
    Boolean,
    /// An enum's values, rendered.
    #[error("one of {}", .0.join(", "))]
    OneOf(Vec<String>),
    /// A const, or a union's type, rendered.
    #[error("{0}")]
    Exactly(String),
    #[error("a value {relation} {bound}")]
    Bound {
        relation: &'static str,
        bound: String,
    },
    #[error("a multiple of {0}")]
    MultipleOf(String),
    #[error("at least {0} characters")]
    MinLength(u64),
    #[error("at most {0} characters")]
    MaxLength(u64),
    #[error("text matching /{0}/")]
    Pattern(String),
    #[error("at least {0} items")]
    MinItems(u64),
    #[error("at most {0} items")]
    MaxItems(u64),
    #[error("items that are all different")]
    UniqueItems,
}

/// Whether a non-string JSON value is written as `text` (`3`, `true`).
pub fn same_word(value: &Value, text: &str) -> bool {
    let written = value.to_string();
    written == text
}

/// A number word as JSON: an integer when it is one.
pub fn parse_number(text: &str) -> Option<Value> {
    if let Ok(n) = text.parse::<i64>() {
        return Some(Value::Number(n.into()));
    }
    text.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map(Value::Number)
}

/// `true` or `false`.
pub fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// One command-line word as a scalar of `shape` (string, number, boolean, enum, const, a
/// union of scalars); `Err` holds what was expected.
pub fn parse_word(shape: &Shape, text: &str) -> Result<Value, Expected> {
    if shape.nullable && text == "null" && shape.kind != Kind::Str {
        return Ok(Value::Null);
    }
    let value = match &shape.kind {
        Kind::Str => Value::String(text.to_string()),
        Kind::Int => Value::Number(text.parse::<i64>().map_err(|_| Expected::Integer)?.into()),
        Kind::Num => parse_number(text).ok_or(Expected::Number)?,
        Kind::Bool => Value::Bool(parse_bool(text).ok_or(Expected::Boolean)?),
        Kind::Enum(values) => {
            let found = values.iter().find(|v| match v {
                Value::String(s) => s == text,
                other => same_word(other, text),
            });
            match found {
                Some(value) => value.clone(),
                None => {
                    return Err(Expected::OneOf(values.iter().map(render_value).collect()));
                }
            }
        }
        Kind::Const(value) => {
            let matches = match value {
                Value::String(s) => s == text,
                other => same_word(other, text),
            };
            if !matches {
                return Err(Expected::Exactly(render_value(value)));
            }
            value.clone()
        }
        // A union of scalars: the first variant the word fits, strings last.
        Kind::Union(variants) => {
            let mut ordered: Vec<&Shape> =
                variants.iter().filter(|v| v.kind != Kind::Str).collect();
            ordered.extend(variants.iter().filter(|v| v.kind == Kind::Str));
            return ordered
                .into_iter()
                .find_map(|variant| parse_word(variant, text).ok())
                .ok_or_else(|| Expected::Exactly(render_type(shape)));
        }
        _ => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string())),
    };
    check_constraints(shape, &value)?;
    Ok(value)
}

/// Checks a value's constraints (ranges, lengths, pattern, item counts); `Err` holds what
/// was expected.
pub fn check_constraints(shape: &Shape, value: &Value) -> Result<(), Expected> {
    for (key, bound_value) in &shape.constraints {
        let expected = match (key.as_str(), value) {
            ("minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum", Value::Number(n)) => {
                let (Some(n), Some(bound)) = (n.as_f64(), bound_value.as_f64()) else {
                    continue;
                };
                let (ok, relation) = match key.as_str() {
                    "minimum" => (n >= bound, ">="),
                    "maximum" => (n <= bound, "<="),
                    "exclusiveMinimum" => (n > bound, ">"),
                    _ => (n < bound, "<"),
                };
                if ok {
                    continue;
                }
                Expected::Bound {
                    relation,
                    bound: render_value(bound_value),
                }
            }
            ("multipleOf", Value::Number(n)) => {
                let (Some(n), Some(step)) = (n.as_f64(), bound_value.as_f64()) else {
                    continue;
                };
                if step <= 0.0 || ((n / step) - (n / step).round()).abs() < 1e-9 {
                    continue;
                }
                Expected::MultipleOf(render_value(bound_value))
            }
            ("minLength" | "maxLength", Value::String(s)) => {
                let Some(bound) = bound_value.as_u64() else {
                    continue;
                };
                let len = s.chars().count() as u64;
                if key == "minLength" && len < bound {
                    Expected::MinLength(bound)
                } else if key == "maxLength" && len > bound {
                    Expected::MaxLength(bound)
                } else {
                    continue;
                }
            }
            ("pattern", Value::String(s)) => {
                let Some(pattern) = bound_value.as_str() else {
                    continue;
                };
                match pattern_matches(pattern, s) {
                    Some(false) => Expected::Pattern(pattern.to_string()),
                    _ => continue,
                }
            }
            ("minItems" | "maxItems", Value::Array(items)) => {
                let Some(bound) = bound_value.as_u64() else {
                    continue;
                };
                let len = items.len() as u64;
                if key == "minItems" && len < bound {
                    Expected::MinItems(bound)
                } else if key == "maxItems" && len > bound {
                    Expected::MaxItems(bound)
                } else {
                    continue;
                }
            }
            ("uniqueItems", Value::Array(items)) if bound_value == &Value::Bool(true) => {
                let mut seen = std::collections::HashSet::new();
                if items.iter().all(|i| seen.insert(i.to_string())) {
                    continue;
                }
                Expected::UniqueItems
            }
            _ => continue,
        };
        return Err(expected);
    }
    Ok(())
}

/// Whether `text` matches a JSON Schema pattern (unanchored, as ECMA-262 `test`); `None` when
/// the pattern cannot be compiled (a server's bad pattern never refuses input).
pub fn pattern_matches(pattern: &str, text: &str) -> Option<bool> {
    static CACHE: Mutex<Option<HashMap<String, Option<fancy_regex::Regex>>>> = Mutex::new(None);
    let mut cache = CACHE.lock().ok()?;
    let cache = cache.get_or_insert_with(HashMap::new);
    if cache.len() > 512 {
        cache.clear();
    }
    let regex = cache
        .entry(pattern.to_string())
        .or_insert_with(|| fancy_regex::Regex::new(pattern).ok());
    regex.as_ref().and_then(|r| r.is_match(text).ok())
}

/// What kind of JSON a value is, for messages.
fn found(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 60 {
        let cut: String = text.chars().take(57).collect();
        format!("{cut}...")
    } else {
        text
    }
}

/// Reads numbers sent as text: models often send `"3"` for an integer, and common MCP servers
/// accept it. A string that is exactly a JSON number becomes that number where the property
/// (or an array property's items) is an integer or a number; strings stay strings everywhere
/// else, and anything else is left for [`check_arguments`] to refuse.
pub fn numbers_from_text(schema: &ToolSchema, arguments: &mut Map<String, Value>) {
    let numeric = |shape: &Shape| matches!(shape.kind, Kind::Int | Kind::Num);
    let read = |shape: &Shape, value: &mut Value| {
        let Value::String(text) = value else { return };
        let exact = !text.is_empty()
            && !text.contains(|c: char| c.is_whitespace())
            && serde_json::from_str::<Value>(text).is_ok_and(|v| v.is_number());
        if !exact {
            return;
        }
        if let Some(number) = parse_number(text) {
            let whole = number.as_f64().is_some_and(|n| n.fract() == 0.0);
            if shape.kind == Kind::Num || whole {
                *value = number;
            }
        }
    };
    for (name, value) in arguments.iter_mut() {
        let Some(prop) = schema.prop(name) else {
            continue;
        };
        match &prop.shape.kind {
            _ if numeric(&prop.shape) => read(&prop.shape, value),
            Kind::Array(items) if numeric(items) => {
                if let Value::Array(values) = value {
                    values.iter_mut().for_each(|v| read(items, v));
                }
            }
            _ => {}
        }
    }
}

/// Checks a whole arguments object: required properties, unknown ones where the schema is
/// closed, and every value against its property's shape.
pub fn check_arguments(
    schema: &ToolSchema,
    arguments: &Map<String, Value>,
) -> Result<(), Violation> {
    for prop in schema.must_give() {
        if !arguments.contains_key(&prop.name) {
            return Err(Violation {
                at: prop.name.clone(),
                problem: Problem::Missing(render_type(&prop.shape)),
            });
        }
    }
    for (name, value) in arguments {
        match schema.prop(name) {
            Some(prop) => check_value(schema, &prop.shape, value, name, 0)?,
            None if !schema.open => {
                return Err(Violation {
                    at: name.clone(),
                    problem: Problem::Unknown,
                })
            }
            None => {}
        }
    }
    Ok(())
}

/// Checks one value against a shape, naming the path of the first part that does not fit.
pub fn check_value(
    schema: &ToolSchema,
    shape: &Shape,
    value: &Value,
    at: &str,
    depth: usize,
) -> Result<(), Violation> {
    if depth > MAX_CHECK_DEPTH {
        return Ok(());
    }
    let fail = |expected: String| Violation {
        at: at.to_string(),
        problem: Problem::Wrong {
            expected,
            found: found(value),
        },
    };
    if value.is_null() {
        return if shape.nullable || matches!(shape.kind, Kind::Any | Kind::Null) {
            Ok(())
        } else {
            Err(fail(type_word(schema, shape)))
        };
    }
    match &shape.kind {
        Kind::Any => Ok(()),
        Kind::Null => Err(fail("null".into())),
        Kind::Ref(name) => match schema.def(name) {
            Some(def) => check_value(schema, def, value, at, depth + 1),
            None => Ok(()),
        },
        Kind::Union(variants) => {
            if variants
                .iter()
                .any(|v| check_value(schema, v, value, at, depth + 1).is_ok())
            {
                check_constraints(shape, value).map_err(|e| fail(e.to_string()))
            } else {
                Err(fail(type_word(schema, shape)))
            }
        }
        Kind::Array(items) => {
            let Value::Array(list) = value else {
                return Err(fail(type_word(schema, shape)));
            };
            for (i, item) in list.iter().enumerate() {
                check_value(schema, items, item, &format!("{at}[{}]", i + 1), depth + 1)?;
            }
            check_constraints(shape, value).map_err(|e| fail(e.to_string()))
        }
        Kind::Object { props, extra } => {
            let Value::Object(map) = value else {
                return Err(fail(type_word(schema, shape)));
            };
            for prop in props {
                match map.get(&prop.name) {
                    Some(v) => check_value(
                        schema,
                        &prop.shape,
                        v,
                        &format!("{at}.{}", prop.name),
                        depth + 1,
                    )?,
                    None if prop.required && prop.shape.default.is_none() => {
                        return Err(Violation {
                            at: format!("{at}.{}", prop.name),
                            problem: Problem::Missing(render_type(&prop.shape)),
                        })
                    }
                    None => {}
                }
            }
            if let Some(extra) = extra {
                for (key, v) in map {
                    if !props.iter().any(|p| &p.name == key) {
                        check_value(schema, extra, v, &format!("{at}.{key}"), depth + 1)?;
                    }
                }
            }
            check_constraints(shape, value).map_err(|e| fail(e.to_string()))
        }
        _ => {
            if !scalar_fits(shape, value) {
                return Err(fail(type_word(schema, shape)));
            }
            check_constraints(shape, value).map_err(|e| fail(e.to_string()))
        }
    }
}

/// The expected type in words a person reads: `an integer`, `a string`, else the notation.
fn type_word(_schema: &ToolSchema, shape: &Shape) -> String {
    let word = match &shape.kind {
        Kind::Str => "a string",
        Kind::Int => "an integer",
        Kind::Num => "a number",
        Kind::Bool => "true or false",
        Kind::Array(_) => return format!("a list ({})", render_type(shape)),
        Kind::Object { .. } => return format!("an object ({})", render_type(shape)),
        Kind::Enum(values) => {
            let choices: Vec<String> = values.iter().map(render_value).collect();
            return format!("one of {}", choices.join(", "));
        }
        _ => return render_type(shape),
    };
    if shape.nullable {
        format!("{word} or null")
    } else {
        word.to_string()
    }
}

/// Whether a JSON value is one the scalar shape accepts.
pub fn scalar_fits(shape: &Shape, value: &Value) -> bool {
    if value.is_null() && shape.nullable {
        return true;
    }
    match &shape.kind {
        Kind::Str => value.is_string(),
        Kind::Int => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        Kind::Num => value.is_number(),
        Kind::Bool => value.is_boolean(),
        Kind::Null => value.is_null(),
        Kind::Enum(values) => values.iter().any(|v| same_json(v, value)),
        Kind::Const(expected) => same_json(expected, value),
        Kind::Union(variants) => variants.iter().any(|v| scalar_fits(v, value)),
        _ => true,
    }
}

/// JSON equality where `3` and `3.0` are the same number.
fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(value: Value) -> ToolSchema {
        ToolSchema::from_input_schema(&value)
    }

    #[test]
    fn numbers_sent_as_text_are_read_as_numbers_only_where_numbers_go() {
        let s = schema(json!({"properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 9},
            "ratio": {"type": "number"},
            "ids": {"type": "array", "items": {"type": "integer"}},
            "name": {"type": "string"}
        }}));
        let mut args = json!({"n": "3", "ratio": "0.5", "ids": ["1", 2, "x"], "name": "7"});
        numbers_from_text(&s, args.as_object_mut().unwrap());
        assert_eq!(
            args,
            json!({"n": 3, "ratio": 0.5, "ids": [1, 2, "x"], "name": "7"})
        );
        // Only exact numbers; a fraction is no integer; the range is still checked.
        for (text, kept) in [
            (" 3", true),
            ("3 ", true),
            ("0x10", true),
            ("3.5", true),
            ("", true),
            ("1e2", false),
        ] {
            let mut args = json!({"n": text});
            numbers_from_text(&s, args.as_object_mut().unwrap());
            assert_eq!(args["n"] == json!(text), kept, "{text:?}");
        }
        let mut args = json!({"n": "12"});
        numbers_from_text(&s, args.as_object_mut().unwrap());
        assert_eq!(
            check_arguments(&s, args.as_object().unwrap())
                .unwrap_err()
                .message(),
            "n expects a value <= 9, not 12"
        );
    }

    #[test]
    fn words_are_parsed_and_checked() {
        let s = schema(json!({"properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 5},
            "mode": {"enum": ["a", "b", 3]},
            "sha": {"type": "string", "pattern": "^[0-9a-f]{7,40}$"},
            "name": {"type": "string", "maxLength": 3},
            "either": {"anyOf": [{"type": "integer"}, {"type": "boolean"}]}
        }}));
        let shape = |name: &str| &s.prop(name).unwrap().shape;
        assert_eq!(parse_word(shape("n"), "3"), Ok(json!(3)));
        assert_eq!(
            parse_word(shape("n"), "x").map_err(|e| e.to_string()),
            Err("an integer".into())
        );
        assert_eq!(
            parse_word(shape("n"), "9").map_err(|e| e.to_string()),
            Err("a value <= 5".into())
        );
        assert_eq!(parse_word(shape("mode"), "3"), Ok(json!(3)));
        assert_eq!(
            parse_word(shape("mode"), "c").map_err(|e| e.to_string()),
            Err("one of a, b, 3".into())
        );
        assert_eq!(parse_word(shape("sha"), "abc1234"), Ok(json!("abc1234")));
        assert_eq!(
            parse_word(shape("sha"), "HEAD; rm -rf /").map_err(|e| e.to_string()),
            Err("text matching /^[0-9a-f]{7,40}$/".into())
        );
        assert_eq!(
            parse_word(shape("name"), "abcd").map_err(|e| e.to_string()),
            Err("at most 3 characters".into())
        );
        assert_eq!(parse_word(shape("either"), "true"), Ok(json!(true)));
    }

    #[test]
    fn whole_objects_are_checked_deeply() {
        let s = schema(json!({"type": "object", "additionalProperties": false,
            "properties": {
                "count": {"type": "integer"},
                "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2},
                "edits": {"type": "array", "items": {"type": "object", "properties": {"old": {"type": "string"}}, "required": ["old"]}},
                "maybe": {"type": ["string", "null"]}
            }, "required": ["count"]}));
        let check = |v: Value| check_arguments(&s, v.as_object().unwrap()).map_err(|e| e.message());
        assert_eq!(check(json!({"count": 1, "maybe": null})), Ok(()));
        assert_eq!(
            check(json!({"count": "x"})),
            Err("count expects an integer, not \"x\"".into())
        );
        assert_eq!(check(json!({})), Err("missing required count (int)".into()));
        assert_eq!(
            check(json!({"count": 1, "PATH": "/tmp"})),
            Err("unknown argument PATH".into())
        );
        assert_eq!(
            check(json!({"count": 1, "tags": ["a", 2]})),
            Err("tags[2] expects a string, not 2".into())
        );
        assert_eq!(
            check(json!({"count": 1, "tags": ["a", "b", "c"]})),
            Err("tags expects at most 2 items, not [\"a\",\"b\",\"c\"]".into())
        );
        assert_eq!(
            check(json!({"count": 1, "edits": [{"old": "x"}, {}]})),
            Err("missing required edits[2].old (str)".into())
        );
        assert_eq!(check(json!({"count": 1.0})), Ok(()));
    }

    #[test]
    fn a_bad_pattern_refuses_nothing() {
        assert_eq!(pattern_matches("(unclosed", "x"), None);
        assert_eq!(pattern_matches("^a", "abc"), Some(true));
        assert_eq!(
            pattern_matches("b", "abc"),
            Some(true),
            "patterns are not anchored"
        );
    }
}
