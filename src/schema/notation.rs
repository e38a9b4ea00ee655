//! Compact type notation shared by the listing line, `--help` and error messages:
//! `str`, `int`, `num`, `bool`, `a|b` enums, `T[]`, `{key:T, opt?:T}`, `{str:T}` maps.

use super::{Kind, Prop, Shape, ToolSchema};
use serde_json::Value;

/// The full inline type of a shape (nested objects spelled out).
pub fn render_type(shape: &Shape) -> String {
    let mut out = String::new();
    write_type(shape, usize::MAX, &mut out);
    out
}

/// The listing signature `path:str, head?:int`: nested objects shown one level deep.
pub fn signature(schema: &ToolSchema) -> String {
    let mut out = String::new();
    for (i, prop) in schema.props.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_prop(prop, 1, &mut out);
    }
    out
}

fn write_prop(prop: &Prop, depth: usize, out: &mut String) {
    out.push_str(&prop.name);
    if !prop.required {
        out.push('?');
    }
    out.push(':');
    write_type(&prop.shape, depth, out);
}

fn write_type(shape: &Shape, depth: usize, out: &mut String) {
    match &shape.kind {
        Kind::Any => out.push_str("any"),
        Kind::Null => out.push_str("null"),
        Kind::Bool => out.push_str("bool"),
        Kind::Int => out.push_str("int"),
        Kind::Num => out.push_str("num"),
        Kind::Str => out.push_str("str"),
        Kind::Enum(values) => {
            for (i, value) in values.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                out.push_str(&render_value(value));
            }
            if values.is_empty() {
                out.push_str("never");
            }
        }
        Kind::Const(value) => out.push_str(&render_value(value)),
        Kind::Array(items) => {
            let wrap = matches!(items.kind, Kind::Union(_) | Kind::Enum(_)) || items.nullable;
            if wrap {
                out.push('(');
            }
            write_type(items, depth, out);
            if wrap {
                out.push(')');
            }
            out.push_str("[]");
        }
        Kind::Object { props, extra } => {
            if props.is_empty() {
                match extra {
                    Some(extra) => {
                        out.push_str("{str:");
                        write_type(extra, depth, out);
                        out.push('}');
                    }
                    None => out.push_str("obj"),
                }
            } else if depth == 0 {
                out.push_str("obj");
            } else {
                out.push('{');
                for (i, prop) in props.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    write_prop(prop, depth - 1, out);
                }
                if let Some(extra) = extra {
                    out.push_str(", ...:");
                    write_type(extra, depth - 1, out);
                }
                out.push('}');
            }
        }
        Kind::Union(variants) => {
            for (i, variant) in variants.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                write_type(variant, depth, out);
            }
        }
        Kind::Ref(name) => out.push_str(name),
    }
    if shape.nullable && shape.kind != Kind::Null {
        out.push_str("|null");
    }
}

/// A JSON value as a bare word when that is unambiguous, else as JSON.
pub fn render_value(value: &Value) -> String {
    match value {
        Value::String(text) if is_bare_word(text) => text.clone(),
        other => other.to_string(),
    }
}

fn is_bare_word(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_alphanumeric() || "_-./:+@".contains(c))
        && !matches!(
            text,
            "true" | "false" | "null" | "any" | "str" | "int" | "num" | "bool" | "obj"
        )
        && text.parse::<f64>().is_err()
}
