//! The tool schema model: a tool's `inputSchema` with `$ref`/`$defs`, `allOf`, `anyOf`/`oneOf`
//! and type arrays resolved into one tree that every rendering (flags, help, listing, meter)
//! reads, and that validates arguments (`validate`) for the CLI and for serve alike.
//!
//! Building never fails: what the model cannot express becomes `Kind::Any`, so one odd schema
//! can never take a listing down. Nothing here depends on the rest of ferry.

mod notation;
pub mod validate;

pub use notation::{render_type, render_value, signature};

pub use crate::words::kebab;

use crate::protocol::json_schema::{SchemaType, SchemaView};
use serde_json::{json, Map, Value};
use std::collections::HashMap;

/// A tool's parameters: the properties of its root object, in schema order.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ToolSchema {
    pub props: Vec<Prop>,
    /// Whether properties beyond `props` are accepted (`additionalProperties` not false).
    pub open: bool,
    /// Definitions shown once by name (`Kind::Ref`): those a tool uses more than once, and
    /// recursive ones.
    pub defs: Vec<(String, Shape)>,
}

/// One named property.
#[derive(Debug, Clone, PartialEq)]
pub struct Prop {
    pub name: String,
    pub required: bool,
    pub shape: Shape,
}

/// A resolved schema node.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Shape {
    pub kind: Kind,
    pub description: Option<String>,
    pub default: Option<Value>,
    /// `null` is also accepted (`type: [T, "null"]`, `anyOf: [T, {type: null}]`).
    pub nullable: bool,
    /// Constraints worth telling a caller, as `(keyword, value)`: minimum, maxLength, pattern, format...
    pub constraints: Vec<(String, Value)>,
    /// The titles a person reads for an enum's values, `(value, title)`: a `oneOf`/`anyOf` of
    /// `const` and `title`, or the legacy `enumNames` beside `enum`.
    pub titles: Vec<(Value, String)>,
}

/// What kind of value a node accepts.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Kind {
    #[default]
    Any,
    Null,
    Bool,
    Int,
    Num,
    Str,
    /// One of these values.
    Enum(Vec<Value>),
    /// Exactly this value.
    Const(Value),
    Array(Box<Shape>),
    Object {
        props: Vec<Prop>,
        /// The shape of extra keys (`additionalProperties` as a schema), if any.
        extra: Option<Box<Shape>>,
    },
    Union(Vec<Shape>),
    /// A recursive reference, shown by its definition name.
    Ref(String),
}

const CONSTRAINT_KEYS: [&str; 16] = [
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minItems",
    "maxItems",
    "uniqueItems",
    "minProperties",
    "maxProperties",
    "minContains",
    "maxContains",
];

/// How deep nesting is followed before the rest is shown as `any` (guards hostile schemas).
const MAX_DEPTH: usize = 24;

impl ToolSchema {
    /// Builds the model from a tool's `inputSchema`.
    ///
    /// ```
    /// use ferry::schema::{signature, ToolSchema};
    /// let schema = ToolSchema::from_input_schema(&serde_json::json!({
    ///     "type": "object",
    ///     "properties": {"path": {"type": "string"}, "head": {"type": "integer"}},
    ///     "required": ["path"]
    /// }));
    /// assert_eq!(signature(&schema), "path:str, head?:int");
    /// ```
    pub fn from_input_schema(schema: &Value) -> ToolSchema {
        let hoisted = hoist_body_targets(schema);
        let schema = hoisted.as_ref().unwrap_or(schema);
        let mut uses = HashMap::new();
        count_refs(schema, &mut uses, 0);
        let mut resolver = Resolver {
            root: schema,
            stack: Vec::new(),
            uses,
            names: HashMap::new(),
            recursive: Vec::new(),
            defs: Vec::new(),
        };
        let shape = resolver.shape(schema, 0);
        let defs = resolver.defs;
        let (props, open) = match shape.kind {
            Kind::Object { props, extra } => {
                let open = extra.is_some()
                    || SchemaView::new(schema).and_then(|s| s.additional_properties())
                        != Some(&Value::Bool(false));
                (props, open)
            }
            // A root union of objects: offer every variant's properties, required only when
            // all variants require them.
            Kind::Union(variants) => {
                let mut props: Vec<Prop> = Vec::new();
                let objects: Vec<&Vec<Prop>> = variants
                    .iter()
                    .filter_map(|v| match &v.kind {
                        Kind::Object { props, .. } => Some(props),
                        _ => None,
                    })
                    .collect();
                for variant in &objects {
                    for prop in variant.iter() {
                        if props.iter().any(|p| p.name == prop.name) {
                            continue;
                        }
                        let required = objects
                            .iter()
                            .all(|o| o.iter().any(|p| p.name == prop.name && p.required));
                        props.push(Prop {
                            required,
                            ..prop.clone()
                        });
                    }
                }
                (props, true)
            }
            _ => (Vec::new(), true),
        };
        ToolSchema { props, open, defs }
    }

    /// The definition a `Kind::Ref` names.
    pub fn def(&self, name: &str) -> Option<&Shape> {
        self.defs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, shape)| shape)
    }

    /// The property called exactly `name`.
    pub fn prop(&self, name: &str) -> Option<&Prop> {
        self.props.iter().find(|p| p.name == name)
    }

    /// The required properties.
    pub fn required(&self) -> impl Iterator<Item = &Prop> {
        self.props.iter().filter(|p| p.required)
    }

    /// The properties a caller must give: required and without a default. Schema generators
    /// (zod) mark defaulted properties required; the server fills those in itself.
    pub fn must_give(&self) -> impl Iterator<Item = &Prop> {
        self.props
            .iter()
            .filter(|p| p.required && p.shape.default.is_none())
    }
}

impl Shape {
    fn of(kind: Kind) -> Shape {
        Shape {
            kind,
            ..Shape::default()
        }
    }

    /// True for kinds given as one plain command-line word (string, number, boolean, enum).
    pub fn is_scalar(&self) -> bool {
        match &self.kind {
            Kind::Str | Kind::Int | Kind::Num | Kind::Bool | Kind::Enum(_) | Kind::Const(_) => true,
            Kind::Union(variants) => variants.iter().all(Shape::is_scalar),
            _ => false,
        }
    }
}

struct Resolver<'a> {
    root: &'a Value,
    /// `$ref`s being expanded, to stop at recursion.
    stack: Vec<String>,
    /// How often each `$ref` appears in the schema.
    uses: HashMap<String, usize>,
    /// The short name given to each named `$ref`.
    names: HashMap<String, String>,
    /// `$ref`s found to refer to themselves.
    recursive: Vec<String>,
    defs: Vec<(String, Shape)>,
}

/// Counts every `$ref` in the document (guarded against absurd depth).
fn count_refs(node: &Value, uses: &mut HashMap<String, usize>, depth: usize) {
    if depth > MAX_DEPTH * 4 {
        return;
    }
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(reference)) => {
                        *uses.entry(reference.clone()).or_default() += 1
                    }
                    _ => count_refs(value, uses, depth + 1),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|v| count_refs(v, uses, depth + 1)),
        _ => {}
    }
}

impl Resolver<'_> {
    fn shape(&mut self, node: &Value, depth: usize) -> Shape {
        let obj = match node {
            Value::Object(obj) if depth <= MAX_DEPTH => obj,
            _ => return Shape::default(),
        };
        let view = SchemaView::of(obj);
        let mut shape = if let Some(reference) = view.reference() {
            self.reference(reference, depth)
        } else {
            Shape::default()
        };
        // Keywords beside `$ref` refine it (2020-12), so the node's own parts merge in.
        let own = self.own_kind(obj, depth);
        if view.has("$ref") {
            if own.kind != Kind::Any {
                shape = merge(shape, own);
            }
        } else {
            shape = own;
        }
        if let Some(all) = view.all_of() {
            for part in all {
                let part = self.shape(part, depth + 1);
                shape = merge(shape, part);
            }
        }
        if let Some(description) = view.description() {
            // A description beside `anyOf`/`$ref` adds to the one it wraps; neither is lost.
            shape.description = Some(join_descriptions(
                Some(description),
                shape.description.as_deref(),
            ));
        } else if shape.description.is_none() {
            shape.description = view.title().map(str::to_string);
        }
        if let Some(default) = view.default() {
            shape.default = Some(default.clone());
        }
        for key in CONSTRAINT_KEYS {
            if let Some(value) = view.keyword(key) {
                if !shape.constraints.iter().any(|(k, _)| k == key) {
                    shape.constraints.push((key.to_string(), value.clone()));
                }
            }
        }
        shape
    }

    fn reference(&mut self, reference: &str, depth: usize) -> Shape {
        let name = self.name_for(reference);
        if self.stack.iter().any(|r| r == reference) {
            if !self.recursive.iter().any(|r| r == reference) {
                self.recursive.push(reference.to_string());
            }
            return Shape::of(Kind::Ref(name));
        }
        if self.defs.iter().any(|(n, _)| *n == name) {
            return Shape::of(Kind::Ref(name));
        }
        let target = reference.strip_prefix('#').and_then(|pointer| {
            let pointer = percent_decode(pointer);
            self.root.pointer(&pointer)
        });
        let Some(target) = target else {
            return Shape::of(Kind::Ref(name));
        };
        self.stack.push(reference.to_string());
        let shape = self.shape(target, depth + 1);
        self.stack.pop();
        // Shared or recursive compound shapes are defined once and named where used.
        let shared = self.uses.get(reference).copied().unwrap_or(0) > 1;
        let recursive = self.recursive.iter().any(|r| r == reference);
        let compound = matches!(
            shape.kind,
            Kind::Object { .. } | Kind::Union(_) | Kind::Array(_)
        );
        if compound && (shared || recursive) {
            self.defs.push((name.clone(), shape));
            return Shape::of(Kind::Ref(name));
        }
        shape
    }

    /// A short unique name for a `$ref`: its last path segment, numbered on a clash.
    fn name_for(&mut self, reference: &str) -> String {
        if let Some(name) = self.names.get(reference) {
            return name.clone();
        }
        let base = reference
            .rsplit('/')
            .next()
            .filter(|s| !s.is_empty())
            .unwrap_or("Def")
            .to_string();
        let mut name = base.clone();
        let mut n = 2;
        while self.names.values().any(|taken| *taken == name) {
            name = format!("{base}{n}");
            n += 1;
        }
        self.names.insert(reference.to_string(), name.clone());
        name
    }

    /// The node's own kind from `type`, `enum`, `const`, `properties`, `items`, `anyOf`/`oneOf`.
    fn own_kind(&mut self, obj: &Map<String, Value>, depth: usize) -> Shape {
        let view = SchemaView::of(obj);
        if let Some(value) = view.constant() {
            return Shape::of(Kind::Const(value.clone()));
        }
        if let Some(values) = view.enum_values() {
            let nullable = values.iter().any(Value::is_null);
            let names = view.enum_names();
            let titles = match names {
                Some(names) if names.len() == values.len() => values
                    .iter()
                    .zip(names)
                    .filter_map(|(v, n)| Some((v.clone(), n.as_str()?.to_string())))
                    .filter(|(v, _)| !v.is_null())
                    .collect(),
                _ => Vec::new(),
            };
            let values: Vec<Value> = values.iter().filter(|v| !v.is_null()).cloned().collect();
            return Shape {
                nullable,
                titles,
                ..Shape::of(Kind::Enum(values))
            };
        }
        if let Some(variants) = view.variants() {
            let mut base = self.typed_kind(obj, depth);
            let mut union = self.union(variants, depth);
            if let Kind::Enum(_) = union.kind {
                // Constants to choose from (`{type: string, oneOf: [{const, title}...]}`): the
                // choices are the shape, each with the title a person reads.
                union.titles = variants
                    .iter()
                    .filter_map(|v| {
                        let v = SchemaView::new(v)?;
                        Some((v.constant()?.clone(), v.title()?.to_string()))
                    })
                    .collect();
                union.nullable |= base.nullable;
                return union;
            }
            if base.kind == Kind::Any {
                return union;
            }
            // `{type: object, properties..., anyOf: [{required: [a]}, {required: [b]}]}`:
            // the variants only constrain; the typed part carries the shape.
            base.nullable |= union.nullable;
            return base;
        }
        self.typed_kind(obj, depth)
    }

    fn typed_kind(&mut self, obj: &Map<String, Value>, depth: usize) -> Shape {
        let view = SchemaView::of(obj);
        match view.schema_type() {
            Some(SchemaType::One(name)) => self.kind_named(name, obj, depth),
            Some(SchemaType::Many(names)) => {
                let names: Vec<&str> = names.iter().filter_map(Value::as_str).collect();
                let nullable = names.contains(&"null");
                let kinds: Vec<Shape> = names
                    .iter()
                    .filter(|n| **n != "null")
                    .map(|n| self.kind_named(n, obj, depth))
                    .collect();
                let mut shape = match kinds.len() {
                    0 if nullable => Shape::of(Kind::Null),
                    0 => Shape::default(),
                    1 => kinds.into_iter().next().unwrap_or_default(),
                    _ => Shape::of(Kind::Union(kinds)),
                };
                shape.nullable |= nullable && shape.kind != Kind::Null;
                shape
            }
            _ if view.has("properties") => self.kind_named("object", obj, depth),
            _ if view.has("items") || view.has("prefixItems") => {
                self.kind_named("array", obj, depth)
            }
            _ => Shape::default(),
        }
    }

    fn kind_named(&mut self, name: &str, obj: &Map<String, Value>, depth: usize) -> Shape {
        let view = SchemaView::of(obj);
        let kind = match name {
            "string" => Kind::Str,
            "integer" => Kind::Int,
            "number" => Kind::Num,
            "boolean" => Kind::Bool,
            "null" => Kind::Null,
            "array" => {
                let items = match view.items() {
                    Some(items @ Value::Object(_)) => self.shape(items, depth + 1),
                    // Old-draft tuple form: show the first item type.
                    Some(Value::Array(items)) => items
                        .first()
                        .map(|i| self.shape(i, depth + 1))
                        .unwrap_or_default(),
                    _ => match view.prefix_items().and_then(|p| p.first()) {
                        Some(first) => self.shape(first, depth + 1),
                        None => Shape::default(),
                    },
                };
                Kind::Array(Box::new(items))
            }
            "object" => {
                let required: Vec<&str> = view.required();
                let props = view
                    .properties()
                    .map(|props| {
                        props
                            .iter()
                            .map(|(name, node)| Prop {
                                name: name.clone(),
                                required: required.contains(&name.as_str()),
                                shape: self.shape(node, depth + 1),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                let extra = match view.additional_properties() {
                    Some(node @ Value::Object(_)) => Some(Box::new(self.shape(node, depth + 1))),
                    _ => None,
                };
                Kind::Object { props, extra }
            }
            _ => Kind::Any,
        };
        Shape::of(kind)
    }

    fn union(&mut self, variants: &[Value], depth: usize) -> Shape {
        let mut nullable = false;
        let mut shapes = Vec::new();
        for variant in variants {
            let shape = self.shape(variant, depth + 1);
            if shape.kind == Kind::Null {
                nullable = true;
            } else {
                nullable |= shape.nullable;
                shapes.push(shape);
            }
        }
        // A union of constants is an enum.
        if !shapes.is_empty()
            && shapes
                .iter()
                .all(|s| matches!(s.kind, Kind::Const(_) | Kind::Enum(_)))
        {
            let mut values = Vec::new();
            for shape in &shapes {
                match &shape.kind {
                    Kind::Const(v) => values.push(v.clone()),
                    Kind::Enum(vs) => values.extend(vs.iter().cloned()),
                    _ => {}
                }
            }
            return Shape {
                nullable,
                ..Shape::of(Kind::Enum(values))
            };
        }
        let mut shape = match shapes.len() {
            0 if nullable => return Shape::of(Kind::Null),
            0 => Shape::default(),
            1 => shapes.pop().unwrap_or_default(),
            _ => Shape::of(Kind::Union(shapes)),
        };
        shape.nullable |= nullable;
        shape
    }
}

/// Two descriptions of one value, outer first; one when they are the same.
fn join_descriptions(outer: Option<&str>, inner: Option<&str>) -> String {
    match (outer, inner) {
        (Some(outer), Some(inner)) if outer.trim() == inner.trim() || inner.trim().is_empty() => {
            outer.to_string()
        }
        (Some(outer), Some(inner)) if outer.trim().is_empty() => inner.to_string(),
        (Some(outer), Some(inner)) => format!("{} {}", outer.trim_end(), inner.trim_start()),
        (Some(one), None) | (None, Some(one)) => one.to_string(),
        (None, None) => String::new(),
    }
}

/// Merges two shapes that both constrain one value (`allOf`, `$ref` siblings).
fn merge(a: Shape, b: Shape) -> Shape {
    // An unconstrained side accepts null too, so only the other side decides.
    let nullable = match (&a.kind, &b.kind) {
        (Kind::Any, Kind::Any) => a.nullable || b.nullable,
        (Kind::Any, _) => b.nullable,
        (_, Kind::Any) => a.nullable,
        _ => a.nullable && b.nullable,
    };
    let kind = match (a.kind, b.kind) {
        (Kind::Any, kind) | (kind, Kind::Any) => kind,
        (
            Kind::Object {
                props: mut left,
                extra: le,
            },
            Kind::Object {
                props: right,
                extra: re,
            },
        ) => {
            for prop in right {
                match left.iter_mut().find(|p| p.name == prop.name) {
                    Some(existing) => {
                        existing.required |= prop.required;
                        let shape = std::mem::take(&mut existing.shape);
                        existing.shape = merge(shape, prop.shape);
                    }
                    None => left.push(prop),
                }
            }
            Kind::Object {
                props: left,
                extra: le.or(re),
            }
        }
        (left, _) => left,
    };
    let mut constraints = a.constraints;
    for c in b.constraints {
        if !constraints.iter().any(|(k, _)| *k == c.0) {
            constraints.push(c);
        }
    }
    Shape {
        kind,
        description: match (&a.description, &b.description) {
            (Some(a), Some(b)) => Some(join_descriptions(Some(a), Some(b))),
            _ => b.description.or(a.description),
        },
        default: b.default.or(a.default),
        nullable,
        constraints,
        titles: if a.titles.is_empty() {
            b.titles
        } else {
            a.titles
        },
    }
}

/// Schema keywords that hold subschemas: not names of shapes.
const SUBSCHEMA_KEYWORDS: [&str; 14] = [
    "properties",
    "items",
    "prefixItems",
    "additionalProperties",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "patternProperties",
    "dependentSchemas",
];

/// Some generators (zod-to-json-schema's default, among others) point a `$ref` at a shape's
/// first occurrence in the schema's body (`#/properties/a/properties/color`) rather than at
/// `$defs`, so the shape is both inline and referenced. This moves every such target into
/// `$defs` (deepest first, so outer pointers stay valid) and leaves a `$ref` in its place:
/// then every use is a `$ref`, and shared shapes are named and spelled out once. `None` when
/// the schema has no such reference (the common case: nothing is copied).
fn hoist_body_targets(schema: &Value) -> Option<Value> {
    let mut uses = HashMap::new();
    count_refs(schema, &mut uses, 0);
    let mut targets: Vec<(String, String)> = uses
        .into_keys()
        .filter_map(|reference| {
            let pointer = percent_decode(reference.strip_prefix('#')?);
            let in_body = !pointer.is_empty()
                && !pointer.starts_with("/$defs/")
                && !pointer.starts_with("/definitions/");
            (in_body && schema.pointer(&pointer).is_some_and(Value::is_object))
                .then_some((reference, pointer))
        })
        .collect();
    if targets.is_empty() || !schema.is_object() {
        return None;
    }
    if SchemaView::new(schema)
        .and_then(|s| s.defs())
        .is_some_and(|d| !d.is_object())
    {
        return None;
    }
    // Deepest first; ties in a stable order so names do not depend on hashing.
    targets.sort_by(|a, b| {
        let depth = |p: &str| p.matches('/').count();
        depth(&b.1).cmp(&depth(&a.1)).then_with(|| a.1.cmp(&b.1))
    });
    let mut root = schema.clone();
    let mut renamed: HashMap<String, String> = HashMap::new();
    for (reference, pointer) in targets {
        let taken: Vec<String> = SchemaView::new(&root)
            .and_then(|s| s.defs())
            .and_then(Value::as_object)
            .map(|defs| defs.keys().cloned().collect())
            .unwrap_or_default();
        let name = unique_name(&shape_name(&pointer), &taken);
        let new_reference = format!("#/$defs/{name}");
        let Some(slot) = root.pointer_mut(&pointer) else {
            continue;
        };
        let subtree = std::mem::replace(slot, json!({ "$ref": new_reference }));
        if let Some(root) = root.as_object_mut() {
            let defs = root.entry("$defs").or_insert_with(|| json!({}));
            if let Some(defs) = defs.as_object_mut() {
                defs.insert(name, subtree);
            }
        }
        renamed.insert(reference, new_reference);
    }
    rename_refs(&mut root, &renamed, 0);
    Some(root)
}

/// A readable name for the shape at a JSON pointer: its last segment that is not a keyword or
/// an index (`/properties/header/anyOf/0/properties/color` gives `color`).
fn shape_name(pointer: &str) -> String {
    let segments: Vec<String> = pointer
        .split('/')
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect();
    let named = segments
        .iter()
        .rev()
        .find(|s| {
            !s.is_empty()
                && !SUBSCHEMA_KEYWORDS.contains(&s.as_str())
                && !s.chars().all(|c| c.is_ascii_digit())
        })
        .map(String::as_str)
        .unwrap_or("Def");
    let mut name: String = named
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    if name.is_empty() {
        name = "Def".into();
    }
    if segments.last().is_some_and(|s| s == "items") {
        name.push_str("Item");
    }
    name
}

fn unique_name(base: &str, taken: &[String]) -> String {
    let mut name = base.to_string();
    let mut n = 2;
    while taken.contains(&name) {
        name = format!("{base}{n}");
        n += 1;
    }
    name
}

/// Points every `$ref` in `renamed` at its new place.
fn rename_refs(node: &mut Value, renamed: &HashMap<String, String>, depth: usize) {
    if depth > MAX_DEPTH * 4 {
        return;
    }
    match node {
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                match value {
                    Value::String(reference) if key == "$ref" => {
                        if let Some(new) = renamed.get(reference.as_str()) {
                            *reference = new.clone();
                        }
                    }
                    _ => rename_refs(value, renamed, depth + 1),
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|v| rename_refs(v, renamed, depth + 1)),
        _ => {}
    }
}

/// Decodes the `%xx` escapes a `$ref` URI fragment may hold (JSON-pointer `~` escapes are
/// left to `Value::pointer`); a malformed fragment is looked up as written.
fn percent_decode(text: &str) -> String {
    crate::words::percent_decode(text).unwrap_or_else(|| text.to_string())
}

#[cfg(test)]
mod tests;
