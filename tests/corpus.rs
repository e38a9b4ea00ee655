//! Renders every tool of the real `tools/list` snapshots in `tests/corpus/` (13 popular
//! MCP servers, 316 tools) and checks that the listing and `--help` lose nothing the schema says.
//!
//! Two independent views are checked: ferry's own schema model (type, required mark, default,
//! enum values, constraints and description of every property and nested field, line by line)
//! and the raw JSON (every property and nested property name, `required` entry, description,
//! enum value and default), so a bug in the model cannot hide itself. Every tool runs under
//! `catch_unwind` and all problems are collected, so one run reports every failing tool of every
//! snapshot. Token counts are not tested here: `cargo bench --bench corpus` prints them.

mod support;

use ferry::protocol::tools::{parse_tools, Tool};
use ferry::render::tool::LISTED_ARGS_MAX;
use ferry::render::{line_type, listing_line, listing_lines, tool_help};
use ferry::schema::{render_type, render_value, Kind, Shape, ToolSchema};
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// How many tools the corpus holds at least (see its README).
const MIN_TOOLS: usize = 316;

/// One `<server>.tools.json` file: the server name and its raw `tools` array.
struct Snapshot {
    server: String,
    entries: Vec<Value>,
}

fn snapshots() -> Vec<Snapshot> {
    support::corpus_snapshots()
        .into_iter()
        .map(|(server, path)| {
            let text = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            let value: Value = serde_json::from_str(&text)
                .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
            let entries = value
                .get("tools")
                .and_then(Value::as_array)
                .unwrap_or_else(|| panic!("{} has no \"tools\" array", path.display()))
                .clone();
            Snapshot { server, entries }
        })
        .collect()
}

/// The snapshot of `server`, parsed.
fn tools_of(server: &str) -> Vec<Tool> {
    let snapshot = snapshots()
        .into_iter()
        .find(|s| s.server == server)
        .unwrap_or_else(|| panic!("no {server}.tools.json in the corpus"));
    parse_tools(&snapshot.entries).0
}

fn tool(server: &str, name: &str) -> Tool {
    tools_of(server)
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{server} has no tool {name:?}"))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Runs `check` on every tool of every snapshot, each under `catch_unwind`, and fails once
/// with every problem found.
fn check_every_tool(what: &str, check: impl Fn(&str, &Tool, &Value) -> Vec<String>) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for snapshot in snapshots() {
        let (tools, _) = parse_tools(&snapshot.entries);
        for (tool, raw) in tools.iter().zip(&snapshot.entries) {
            checked += 1;
            let outcome = catch_unwind(AssertUnwindSafe(|| check(&snapshot.server, tool, raw)));
            let problems = match outcome {
                Ok(problems) => problems,
                Err(payload) => vec![format!("panicked: {}", panic_message(payload.as_ref()))],
            };
            for problem in problems {
                failures.push(format!("{}/{}: {problem}", snapshot.server, tool.name));
            }
        }
    }
    assert!(
        checked >= MIN_TOOLS,
        "only {checked} tools checked, expected at least {MIN_TOOLS}"
    );
    assert!(
        failures.is_empty(),
        "{what}: {} problem(s) over {checked} tools:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The property block of a help text: what follows the tool description.
fn property_block<'a>(help: &'a str, tool: &Tool) -> Result<&'a str, String> {
    let description = tool.description.trim();
    if description.is_empty() {
        return Ok(help);
    }
    help.strip_prefix(description)
        .and_then(|rest| rest.strip_prefix('\n'))
        .ok_or_else(|| format!("help does not start with the tool description:\n{help}"))
}

/// JavaScript's safe-integer bounds, which zod writes on every integer and help leaves out.
fn is_safe_integer_bound(value: &Value) -> bool {
    value
        .as_f64()
        .is_some_and(|v| v.abs() == 9_007_199_254_740_991.0)
}

// ---------------------------------------------------------------------------------------------
// The listing

/// Whether a description's first sentence says nothing but its tool's name ("Merge a pull
/// request" for `merge_pull_request`): such a summary is left out of the listing.
fn restates_name(name: &str, description: &str) -> bool {
    let words = |text: &str| -> Vec<String> {
        let mut spaced = String::new();
        let mut prev_lower = false;
        for c in text.chars() {
            if c.is_uppercase() && prev_lower {
                spaced.push(' ');
            }
            spaced.push(if c.is_alphanumeric() { c } else { ' ' });
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        }
        spaced
            .split_whitespace()
            .map(|w| w.to_lowercase())
            .map(|w| match w.strip_suffix('s') {
                Some(stem) if stem.len() > 2 && !stem.ends_with('s') => stem.to_string(),
                _ => w,
            })
            .collect()
    };
    // The first clause: up to a sentence end, a line break, a parenthesis or a colon.
    let first = description
        .split(". ")
        .next()
        .and_then(|s| s.lines().next())
        .and_then(|s| s.split(['(', ':', ';']).next())
        .unwrap_or("");
    let name_words = words(name);
    let said: Vec<String> = words(first)
        .into_iter()
        .filter(|w| {
            !matches!(
                w.as_str(),
                "a" | "an"
                    | "the"
                    | "new"
                    | "all"
                    | "or"
                    | "existing"
                    | "specific"
                    | "specified"
                    | "given"
                    | "particular"
            )
        })
        .collect();
    !said.is_empty() && said.iter().all(|w| name_words.contains(w))
}

/// Problems of one listing line against the raw JSON of its tool.
fn listing_problems(line: &str, raw: &Value) -> Vec<String> {
    let name = raw["name"].as_str().unwrap_or_default();
    let Some(after) = line.strip_prefix(name) else {
        return vec![format!(
            "listing line does not start with the name: {line:?}"
        )];
    };
    let schema = &raw["inputSchema"];
    let properties: Vec<&str> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // A required property with a default need not be given (zod marks such ones required).
    let has_default = |name: &str| schema["properties"][name].get("default").is_some();
    let listed = properties
        .iter()
        .filter(|p| required.contains(p) && !has_default(p))
        .copied()
        .collect::<Vec<_>>()
        .join(", ");
    // Only optional arguments: their names in brackets, or `[...]` when too long.
    let optional = format!("[{}]", properties.join(", "));
    let expected = if properties.is_empty() {
        Some(String::new())
    } else if listed.is_empty() {
        Some(if optional.len() - 2 <= LISTED_ARGS_MAX {
            optional
        } else {
            "[...]".to_string()
        })
    } else if !listed.is_empty() && listed.len() <= LISTED_ARGS_MAX {
        Some(listed.clone())
    } else {
        None
    };

    let mut problems = Vec::new();
    let (shown, rest) = match after.strip_prefix('(') {
        Some(inner) => match inner.split_once(')') {
            Some((args, rest)) => (Some(args), rest),
            None => return vec![format!("unclosed argument list: {line:?}")],
        },
        None => (None, after),
    };
    if !rest.is_empty() && !rest.starts_with(" - ") {
        problems.push(format!(
            "the name is not followed by `(`, ` - ` or the end: {line:?}"
        ));
    }
    let wrong_args = shown.filter(|args| {
        *args != listed && !properties.is_empty() && !(listed.is_empty() && args.starts_with('['))
    });
    if let Some(args) = wrong_args {
        problems.push(format!(
            "shows ({args}) but the required properties in schema order are ({listed}): \
             {line:?}"
        ));
    } else if shown.map(str::to_string) != expected {
        let want = match &expected {
            Some(args) => format!("({args})"),
            None => "no argument list".to_string(),
        };
        problems.push(format!(
            "expected {want} for properties {properties:?} (required {required:?}): {line:?}"
        ));
    }

    // The summary: words of the description's first clause, without articles or final period.
    let description = raw
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    match rest.strip_prefix(" - ") {
        // A bare name says nothing: a summary that restates the name is kept then.
        None if description.chars().any(char::is_alphanumeric)
            && (!restates_name(name, description) || shown.is_none()) =>
        {
            problems.push(format!("no summary of {description:?}: {line:?}"));
        }
        None => {}
        Some(summary) => {
            let words: Vec<&str> = summary.split(' ').collect();
            if summary.is_empty() || words.iter().any(|w| w.is_empty()) {
                problems.push(format!("empty summary or word: {line:?}"));
            }
            if summary.ends_with('.') {
                problems.push(format!("summary ends with a period: {line:?}"));
            }
            // A deprecation is said in ferry's words: "Deprecated, use x".
            let deprecated = description.to_lowercase().contains("deprecated");
            for word in &words {
                let ours = deprecated
                    && matches!(
                        word.to_lowercase().as_str(),
                        "deprecated," | "deprecated:" | "deprecated" | "use"
                    );
                if !description.contains(word) && !ours {
                    problems.push(format!(
                        "summary word {word:?} is not in the description: {line:?}"
                    ));
                }
            }
            let articles = words[..words.len() - 1]
                .iter()
                .filter(|w| matches!(w.to_ascii_lowercase().as_str(), "a" | "an" | "the"));
            for article in articles {
                problems.push(format!("summary keeps the article {article:?}: {line:?}"));
            }
        }
    }
    problems
}

// ---------------------------------------------------------------------------------------------
// Help against the schema model

/// True when a shape has named fields, which help lists on lines of their own.
fn has_fields(shape: &Shape) -> bool {
    match &shape.kind {
        Kind::Object { props, .. } => !props.is_empty(),
        Kind::Array(items) => has_fields(items),
        Kind::Union(variants) => variants.iter().any(has_fields),
        _ => false,
    }
}

/// `shape` with the fields of every object removed, so its inline type says `obj` for them.
fn without_fields(shape: &Shape) -> Shape {
    let kind = match &shape.kind {
        Kind::Object { props, .. } if !props.is_empty() => Kind::Object {
            props: Vec::new(),
            extra: None,
        },
        Kind::Array(items) => Kind::Array(Box::new(without_fields(items))),
        Kind::Union(variants) => Kind::Union(variants.iter().map(without_fields).collect()),
        other => other.clone(),
    };
    Shape {
        kind,
        ..shape.clone()
    }
}

/// A line the help owes to the schema model, in order.
enum Owed<'a> {
    /// `--NAME TYPE facts` at indent 0, `NAME TYPE facts` for nested fields.
    Field {
        indent: usize,
        name: &'a str,
        shape: &'a Shape,
        required: bool,
    },
    /// `[]facts`: what each item of an array is, when the items say more than their type.
    Items { indent: usize, shape: &'a Shape },
    /// `variant N:` above the fields of one of several object variants of a union.
    Variant { indent: usize, number: usize },
    /// `NAME: TYPE facts`, after the properties: a shared or recursive `$ref` target, which
    /// the properties name as their type.
    Def { name: &'a str, shape: &'a Shape },
}

impl Owed<'_> {
    /// The start of the line, up to its facts.
    fn head(&self) -> String {
        match self {
            Owed::Field {
                indent: 0,
                name,
                shape,
                ..
            } => format!("--{name} {}", line_type(shape)),
            Owed::Field {
                indent,
                name,
                shape,
                ..
            } => format!("{:indent$}{name} {}", "", line_type(shape)),
            Owed::Items { indent, .. } => format!("{:indent$}[]", ""),
            Owed::Variant { indent, number } => format!("{:indent$}variant {number}:", ""),
            Owed::Def { name, shape } => format!("{name}: {}", line_type(shape)),
        }
    }

    /// Checks what follows the head.
    fn check_rest(&self, rest: &str) -> Result<(), String> {
        match self {
            Owed::Field {
                shape, required, ..
            } => check_facts(rest, shape, *required),
            Owed::Items { shape, .. } | Owed::Def { shape, .. } => check_facts(rest, shape, false),
            Owed::Variant { .. } if rest.is_empty() => Ok(()),
            Owed::Variant { .. } => Err(format!("unexpected {rest:?} after the variant")),
        }
    }
}

/// The lines owed for the fields nested in `shape`, indented by `indent`.
fn owe_nested<'a>(shape: &'a Shape, indent: usize, owed: &mut Vec<Owed<'a>>) {
    match &shape.kind {
        Kind::Object { props, .. } => {
            for prop in props {
                owed.push(Owed::Field {
                    indent,
                    name: &prop.name,
                    shape: &prop.shape,
                    required: prop.required,
                });
                owe_nested(&prop.shape, indent + 2, owed);
            }
        }
        Kind::Array(items) => {
            if items.description.is_some()
                || items.default.is_some()
                || !items.constraints.is_empty()
            {
                owed.push(Owed::Items {
                    indent,
                    shape: items,
                });
            }
            owe_nested(items, indent, owed);
        }
        Kind::Union(variants) => {
            let objects: Vec<&Shape> = variants.iter().filter(|v| has_fields(v)).collect();
            if let [only] = objects.as_slice() {
                owe_nested(only, indent, owed);
            } else {
                for (i, variant) in objects.into_iter().enumerate() {
                    owed.push(Owed::Variant {
                        indent,
                        number: i + 1,
                    });
                    owe_nested(variant, indent + 2, owed);
                }
            }
        }
        _ => {}
    }
}

/// `[ required][ =DEFAULT][ [constraint value, ...]][: description]`, exactly.
fn check_facts(rest: &str, shape: &Shape, required: bool) -> Result<(), String> {
    let rest = match (rest.strip_prefix(" required"), required) {
        (Some(rest), true) => rest,
        (None, false) => rest,
        (Some(_), false) => return Err("optional, but marked required".into()),
        (None, true) => return Err("required, but not marked".into()),
    };
    let rest = match &shape.default {
        Some(default) => {
            let shown = format!(" ={}", render_value(default));
            rest.strip_prefix(shown.as_str())
                .ok_or_else(|| format!("default {default} not shown as {shown:?}"))?
        }
        None if rest.starts_with(" =") => return Err("shows a default the schema lacks".into()),
        None => rest,
    };
    let constraints: Vec<String> = shape
        .constraints
        .iter()
        .filter(|(_, value)| !is_safe_integer_bound(value))
        .map(|(keyword, value)| format!("{keyword} {}", render_value(value)))
        .collect();
    let rest = if constraints.is_empty() {
        if rest.starts_with(" [") {
            return Err("shows constraints the schema lacks (or only safe-integer bounds)".into());
        }
        rest
    } else {
        let shown = format!(" [{}]", constraints.join(", "));
        rest.strip_prefix(shown.as_str())
            .ok_or_else(|| format!("constraints not shown as {shown:?}"))?
    };
    let description = shape.description.as_deref().map(collapse);
    let expected = match description {
        Some(description) if !description.is_empty() => format!(": {description}"),
        _ => String::new(),
    };
    if rest == expected {
        Ok(())
    } else if expected.is_empty() {
        Err(format!("{rest:?} after the facts, where nothing belongs"))
    } else {
        Err(format!(
            "line does not end with the description {expected:?}, but with {rest:?}"
        ))
    }
}

/// Every enum or constant value anywhere in a shape.
fn enum_values(shape: &Shape, out: &mut Vec<Value>) {
    match &shape.kind {
        Kind::Enum(values) => out.extend(values.iter().cloned()),
        Kind::Const(value) => out.push(value.clone()),
        Kind::Array(items) => enum_values(items, out),
        Kind::Union(variants) => variants.iter().for_each(|v| enum_values(v, out)),
        Kind::Object { props, extra } => {
            props.iter().for_each(|p| enum_values(&p.shape, out));
            if let Some(extra) = extra {
                enum_values(extra, out);
            }
        }
        _ => {}
    }
}

/// Every shape inside `shape` (itself included), for the `line_type` cross-check.
fn each_shape<'a>(shape: &'a Shape, out: &mut Vec<&'a Shape>) {
    out.push(shape);
    match &shape.kind {
        Kind::Array(items) => each_shape(items, out),
        Kind::Union(variants) => variants.iter().for_each(|v| each_shape(v, out)),
        Kind::Object { props, extra } => {
            props.iter().for_each(|p| each_shape(&p.shape, out));
            if let Some(extra) = extra {
                each_shape(extra, out);
            }
        }
        _ => {}
    }
}

/// Problems of one tool's help against the schema model: the property block must hold exactly
/// the owed lines, in order.
fn model_help_problems(help: &str, tool: &Tool) -> Vec<String> {
    let mut problems = Vec::new();
    if !help.ends_with('\n') {
        problems.push("help does not end with a newline".into());
    }
    let block = match property_block(help, tool) {
        Ok(block) => block,
        Err(problem) => return vec![problem],
    };
    let schema = ToolSchema::from_input_schema(&tool.input_schema);
    if schema.props.is_empty() {
        if block != "(no arguments)\n" {
            problems.push(format!(
                "no properties, but the help does not say `(no arguments)`:\n{help}"
            ));
        }
        return problems;
    }

    let mut owed = Vec::new();
    for prop in &schema.props {
        owed.push(Owed::Field {
            indent: 0,
            name: &prop.name,
            shape: &prop.shape,
            required: prop.required,
        });
        owe_nested(&prop.shape, 2, &mut owed);
    }
    for (name, shape) in &schema.defs {
        owed.push(Owed::Def { name, shape });
        owe_nested(shape, 2, &mut owed);
    }
    let lines: Vec<&str> = block.lines().collect();
    let mut cursor = 0;
    for item in &owed {
        let head = item.head();
        let found = lines.iter().enumerate().skip(cursor).find_map(|(i, line)| {
            let rest = line.strip_prefix(head.as_str())?;
            let ends_head = rest.is_empty() || rest.starts_with(' ') || rest.starts_with(':');
            ends_head.then_some((i, *line, rest))
        });
        let Some((index, line, rest)) = found else {
            problems.push(format!("no line {head:?}... (in schema order)"));
            continue;
        };
        for stray in &lines[cursor..index] {
            problems.push(format!("unexpected line before {head:?}: {stray:?}"));
        }
        cursor = index + 1;
        if let Err(problem) = item.check_rest(rest) {
            problems.push(format!("{problem}: {line:?}"));
        }
    }
    for stray in &lines[cursor..] {
        problems.push(format!("unexpected line: {stray:?}"));
    }

    let props = schema
        .props
        .iter()
        .map(|p| (format!("--{}", p.name), &p.shape));
    let defs = schema
        .defs
        .iter()
        .map(|(name, shape)| (name.clone(), shape));
    for (what, shape) in props.chain(defs) {
        let mut values = Vec::new();
        enum_values(shape, &mut values);
        for value in values {
            if !block.contains(&render_value(&value)) {
                problems.push(format!("{what}: enum value {value} missing"));
            }
        }
        let mut shapes = Vec::new();
        each_shape(shape, &mut shapes);
        for shape in shapes {
            let expected = render_type(&without_fields(shape));
            let shown = line_type(shape);
            if shown != expected {
                problems.push(format!(
                    "{what}: line type {shown:?} is not the inline type with field objects as \
                     `obj`, {expected:?}"
                ));
            }
        }
    }
    if !problems.is_empty() {
        problems.push(format!("the help was:\n{help}"));
    }
    problems
}

// ---------------------------------------------------------------------------------------------
// Help against the raw JSON, without ferry's model

/// A property nested below a top-level one, as the raw JSON has it.
struct RawField {
    name: String,
    required: bool,
    /// What ends its line: the description, or else the title.
    label: Option<String>,
}

/// Validation keywords whose values help shows as `keyword value` (safe-integer bounds aside).
const RAW_CONSTRAINTS: [&str; 16] = [
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
    "minContains",
    "maxContains",
    "minProperties",
    "maxProperties",
];

/// What the raw JSON says inside one top-level property (its own node included).
#[derive(Default)]
struct RawFacts {
    fields: Vec<RawField>,
    descriptions: Vec<String>,
    enums: Vec<Value>,
    defaults: Vec<Value>,
    /// `keyword value`, as help writes it.
    constraints: Vec<String>,
}

impl RawFacts {
    fn absorb(&mut self, other: RawFacts) {
        self.fields.extend(other.fields);
        self.descriptions.extend(other.descriptions);
        self.enums.extend(other.enums);
        self.defaults.extend(other.defaults);
        self.constraints.extend(other.constraints);
    }
}

/// Raw descriptions that help is known to drop, as (server, tool, description start). None is
/// today; an entry would be a reported renderer bug, and the raw check fails once it is shown
/// again, so the entry cannot outlive its fix.
const KNOWN_LOSSES: [(&str, &str, &str); 0] = [];

fn is_known_loss(server: &str, tool: &str, description: &str) -> bool {
    KNOWN_LOSSES
        .iter()
        .any(|(s, t, start)| *s == server && *t == tool && description.starts_with(start))
}

/// How deep the raw walk follows nesting (the corpus goes five levels deep).
const RAW_MAX_DEPTH: usize = 20;

/// Gathers the facts of `node` and everything under `properties`, `items`, `anyOf`, `oneOf`
/// and `allOf` into `facts`, following local `$ref`s (to `#/$defs/...` or `#/definitions/...`)
/// once; what lies behind a `$ref` goes to `referenced`, as help may define it apart, by name.
fn gather(
    root: &Value,
    node: &Value,
    stack: &mut Vec<String>,
    depth: usize,
    facts: &mut RawFacts,
    referenced: &mut RawFacts,
) {
    let Some(obj) = node.as_object() else {
        return;
    };
    if depth > RAW_MAX_DEPTH {
        return;
    }
    if let Some(reference) = obj.get("$ref").and_then(Value::as_str) {
        let target = reference.strip_prefix('#').and_then(|p| root.pointer(p));
        if let Some(target) = target {
            if !stack.iter().any(|r| r == reference) {
                stack.push(reference.to_string());
                let mut behind = RawFacts::default();
                gather(root, target, stack, depth + 1, &mut behind, referenced);
                referenced.absorb(behind);
                stack.pop();
            }
        }
    }
    if let Some(description) = obj.get("description").and_then(Value::as_str) {
        let description = collapse(description);
        if !description.is_empty() {
            facts.descriptions.push(description);
        }
    }
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        facts.enums.extend(values.iter().cloned());
    }
    if let Some(value) = obj.get("const") {
        facts.enums.push(value.clone());
    }
    if let Some(default) = obj.get("default") {
        facts.defaults.push(default.clone());
    }
    for keyword in RAW_CONSTRAINTS {
        match obj.get(keyword) {
            Some(value) if !is_safe_integer_bound(value) => facts
                .constraints
                .push(format!("{keyword} {}", render_value(value))),
            _ => {}
        }
    }
    if let Some(properties) = obj.get("properties").and_then(Value::as_object) {
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, child) in properties {
            facts.fields.push(RawField {
                name: name.clone(),
                required: required.contains(&name.as_str()),
                label: label(child),
            });
            gather(root, child, stack, depth + 1, facts, referenced);
        }
    }
    if let Some(items) = obj.get("items").filter(|i| i.is_object()) {
        gather(root, items, stack, depth + 1, facts, referenced);
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for variant in obj.get(key).and_then(Value::as_array).into_iter().flatten() {
            gather(root, variant, stack, depth + 1, facts, referenced);
        }
    }
}

/// What help writes at the end of a property's line: its description, else its title.
fn label(node: &Value) -> Option<String> {
    node.get("description")
        .or_else(|| node.get("title"))
        .and_then(Value::as_str)
        .map(collapse)
}

/// Whether the facts of a line, after `NAME ` and before its label, hold the word `required`.
fn marked_required(after_name: &str, label: Option<&str>) -> bool {
    let facts = label
        .filter(|l| !l.is_empty())
        .and_then(|l| after_name.strip_suffix(&format!(": {l}")))
        .unwrap_or(after_name);
    facts.split(' ').any(|word| word == "required")
}

/// Problems of `facts` against the help `lines` that should show them: every description,
/// enum value, default and constraint appears, every nested property starts an indented line, marked
/// `required` as in its object. `known` tells descriptions known to be lost (`KNOWN_LOSSES`).
fn raw_facts_problems(
    facts: &RawFacts,
    lines: &[&str],
    known: &dyn Fn(&str) -> bool,
) -> Vec<String> {
    let text = lines.join("\n");
    let mut problems = Vec::new();
    for description in &facts.descriptions {
        match (text.contains(description.as_str()), known(description)) {
            (true, true) => problems.push(format!(
                "description {description:?} is shown now: remove it from KNOWN_LOSSES and \
                 switch its test on"
            )),
            (false, false) => problems.push(format!("description {description:?} missing")),
            _ => {}
        }
    }
    for value in &facts.enums {
        if !text.contains(&render_value(value)) {
            problems.push(format!("enum value {value} missing"));
        }
    }
    for default in &facts.defaults {
        let shown = format!(" ={}", render_value(default));
        if !text.contains(&shown) {
            problems.push(format!("default {shown:?} missing"));
        }
    }
    for constraint in &facts.constraints {
        if !text.contains(constraint.as_str()) {
            problems.push(format!("constraint {constraint:?} missing"));
        }
    }
    for field in &facts.fields {
        let head = format!("{} ", field.name);
        let marks: Vec<bool> = lines
            .iter()
            .filter(|l| l.starts_with(' '))
            .filter_map(|l| l.trim_start().strip_prefix(&head))
            .map(|after| marked_required(after, field.label.as_deref()))
            .collect();
        if marks.is_empty() {
            problems.push(format!(
                "nested property {:?} starts no indented line",
                field.name
            ));
        } else if !marks.contains(&field.required) {
            let what = if field.required {
                "required, but not marked"
            } else {
                "optional, but marked required"
            };
            problems.push(format!("nested property {:?} {what}", field.name));
        }
    }
    problems
}

/// Problems of one tool's help against its raw `inputSchema`.
fn raw_help_problems(help: &str, server: &str, tool: &Tool, raw: &Value) -> Vec<String> {
    let block = match property_block(help, tool) {
        Ok(block) => block,
        Err(problem) => return vec![problem],
    };
    let schema = &raw["inputSchema"];
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut problems = Vec::new();
    for name in &required {
        if !properties.contains_key(*name) {
            problems.push(format!("required {name:?} is not a property"));
        }
    }
    if properties.is_empty() {
        if block != "(no arguments)\n" {
            problems.push(format!("no properties, yet not `(no arguments)`:\n{help}"));
        }
        return problems;
    }

    // Each top-level line with the indented lines below it.
    let lines: Vec<&str> = block.lines().collect();
    let starts: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("--"))
        .collect();
    if starts.first() != Some(&0) {
        problems.push(format!(
            "the property block does not start with a --property line:\n{help}"
        ));
    }
    let sections: Vec<&[&str]> = starts
        .iter()
        .map(|&start| {
            let nested = lines[start + 1..]
                .iter()
                .take_while(|l| l.starts_with(' '))
                .count();
            &lines[start..=start + nested]
        })
        .collect();
    if sections.len() != properties.len() {
        problems.push(format!(
            "{} --property lines for {} properties",
            sections.len(),
            properties.len()
        ));
    }

    for (index, (name, node)) in properties.iter().enumerate() {
        let head = format!("--{name} ");
        let Some(position) = sections.iter().position(|s| s[0].starts_with(&head)) else {
            problems.push(format!("property {name:?} has no line starting {head:?}"));
            continue;
        };
        if position != index {
            problems.push(format!(
                "--{name} is property {} of the help, but {} of the schema",
                position + 1,
                index + 1
            ));
        }
        let section = sections[position];
        let line = section[0];
        let description = node
            .get("description")
            .and_then(Value::as_str)
            .map(collapse);
        let after_name = &line[head.len()..];
        let is_required = required.contains(&name.as_str());
        if marked_required(after_name, label(node).as_deref()) != is_required {
            let what = if is_required {
                "required, but not marked"
            } else {
                "optional, but marked required"
            };
            problems.push(format!("--{name}: {what}: {line:?}"));
        }
        if let Some(description) = description.filter(|d| !d.is_empty()) {
            if !line.ends_with(&format!(": {description}")) {
                problems.push(format!(
                    "--{name}: the line does not end with the description {description:?}: \
                     {line:?}"
                ));
            }
        }
        if let Some(default) = node.get("default") {
            let shown = format!(" ={}", render_value(default));
            if !line.contains(&shown) {
                problems.push(format!("--{name}: default {shown:?} missing: {line:?}"));
            }
        }

        let mut facts = RawFacts::default();
        let mut referenced = RawFacts::default();
        gather(
            schema,
            node,
            &mut Vec::new(),
            0,
            &mut facts,
            &mut referenced,
        );
        let known = |description: &str| is_known_loss(server, &tool.name, description);
        problems.extend(
            raw_facts_problems(&facts, section, &known)
                .into_iter()
                .map(|p| format!("--{name}: {p}")),
        );
        // Behind a `$ref`: anywhere in the help (a shared definition has lines of its own).
        problems.extend(
            raw_facts_problems(&referenced, &lines, &known)
                .into_iter()
                .map(|p| format!("--{name} (via $ref): {p}")),
        );
    }
    if !problems.is_empty() {
        problems.push(format!("the help was:\n{help}"));
    }
    problems
}

// ---------------------------------------------------------------------------------------------
// Over the whole corpus

#[test]
fn corpus_holds_every_snapshot() {
    let snapshots = snapshots();
    for snapshot in &snapshots {
        assert!(
            !snapshot.entries.is_empty(),
            "{}.tools.json lists no tools",
            snapshot.server
        );
    }
    let tools: usize = snapshots.iter().map(|s| s.entries.len()).sum();
    assert!(
        tools >= MIN_TOOLS,
        "expected at least {MIN_TOOLS} tools in the corpus, found {tools}"
    );
}

#[test]
fn every_tool_of_every_snapshot_parses() {
    let mut failures = Vec::new();
    for snapshot in snapshots() {
        let outcome = catch_unwind(AssertUnwindSafe(|| parse_tools(&snapshot.entries)));
        let (tools, warnings) = match outcome {
            Ok(parsed) => parsed,
            Err(payload) => {
                failures.push(format!(
                    "{}: parse_tools panicked: {}",
                    snapshot.server,
                    panic_message(payload.as_ref())
                ));
                continue;
            }
        };
        if !warnings.is_empty() {
            failures.push(format!("{}: warnings {warnings:?}", snapshot.server));
        }
        if tools.len() != snapshot.entries.len() {
            failures.push(format!(
                "{}: {} tools parsed from {} entries",
                snapshot.server,
                tools.len(),
                snapshot.entries.len()
            ));
        }
        for (tool, raw) in tools.iter().zip(&snapshot.entries) {
            if Some(tool.name.as_str()) != raw.get("name").and_then(Value::as_str) {
                failures.push(format!(
                    "{}: tool {:?} parsed in place of {:?}",
                    snapshot.server, tool.name, raw["name"]
                ));
            }
            if &tool.raw != raw {
                failures.push(format!(
                    "{}/{}: raw JSON not kept as sent",
                    snapshot.server, tool.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn listing_has_one_line_per_tool_in_server_order() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for snapshot in snapshots() {
        let (tools, _) = parse_tools(&snapshot.entries);
        let mut lines = Vec::new();
        for tool in &tools {
            match catch_unwind(AssertUnwindSafe(|| listing_line(tool))) {
                Ok(line) => lines.push(line),
                Err(payload) => failures.push(format!(
                    "{}/{}: listing_line panicked: {}",
                    snapshot.server,
                    tool.name,
                    panic_message(payload.as_ref())
                )),
            }
        }
        // The server's listing as printed, which may lengthen summaries that read alike:
        // the same checks hold for each of its lines.
        match catch_unwind(AssertUnwindSafe(|| listing_lines(&tools))) {
            Ok(listing) => {
                for (line, raw) in listing.iter().zip(&snapshot.entries) {
                    for problem in listing_problems(line, raw) {
                        failures.push(format!("{} (listing): {problem}", snapshot.server));
                    }
                }
            }
            Err(payload) => failures.push(format!(
                "{}: listing_lines panicked: {}",
                snapshot.server,
                panic_message(payload.as_ref())
            )),
        }
        if lines.len() != tools.len() {
            continue;
        }
        for (line, tool) in lines.iter().zip(&tools) {
            if line.contains('\n') || line.contains('\r') {
                failures.push(format!(
                    "{}/{}: listing line spans lines: {line:?}",
                    snapshot.server, tool.name
                ));
            }
        }
        let listing = lines.join("\n");
        let listed: Vec<&str> = listing.lines().collect();
        if listed.len() != snapshot.entries.len() {
            failures.push(format!(
                "{}: {} listing lines for {} tools",
                snapshot.server,
                listed.len(),
                snapshot.entries.len()
            ));
            continue;
        }
        for (line, raw) in listed.iter().zip(&snapshot.entries) {
            checked += 1;
            let name = raw["name"].as_str().unwrap_or_default();
            let outcome = catch_unwind(AssertUnwindSafe(|| listing_problems(line, raw)));
            let problems = match outcome {
                Ok(problems) => problems,
                Err(payload) => vec![format!("panicked: {}", panic_message(payload.as_ref()))],
            };
            for problem in problems {
                failures.push(format!("{}/{name}: {problem}", snapshot.server));
            }
        }
    }
    assert!(
        checked >= MIN_TOOLS,
        "only {checked} listing lines checked, expected at least {MIN_TOOLS}"
    );
    assert!(
        failures.is_empty(),
        "{} problem(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn help_shows_every_fact_of_the_schema_model() {
    check_every_tool("help vs schema model", |_server, tool, _raw| {
        model_help_problems(&tool_help(tool), tool)
    });
}

#[test]
fn help_shows_every_fact_of_the_raw_schema() {
    check_every_tool("help vs raw inputSchema", |server, tool, raw| {
        raw_help_problems(&tool_help(tool), server, tool, raw)
    });
}

// ---------------------------------------------------------------------------------------------
// Exact renderings of representative tools, reviewed by eye against the snapshot JSON.

/// What tells filesystem's tools apart survives: the deprecation said after what the tool
/// does, "including sizes" beside list_directory, a summary not cut mid-phrase.
#[test]
fn filesystem_listing_keeps_what_tells_tools_apart() {
    let tools = tools_of("filesystem");
    let listing = listing_lines(&tools);
    let line = |name: &str| {
        let i = tools.iter().position(|t| t.name == name).unwrap();
        listing[i].clone()
    };
    assert_eq!(
        line("read_file"),
        "read_file(path) - Deprecated, use read_text_file"
    );
    assert_eq!(
        line("list_directory"),
        "list_directory(path) - Get detailed listing of files and directories in path"
    );
    assert_eq!(
        line("list_directory_with_sizes"),
        "list_directory_with_sizes(path) - Get detailed listing of files and directories in path, including sizes"
    );
    assert_eq!(
        line("read_media_file"),
        "read_media_file(path) - Read file and return it as base64-encoded content block"
    );
}

/// A line is never a bare name, and a tool whose arguments are all optional says so.
#[test]
fn bare_names_and_optional_arguments_are_told_apart() {
    assert_eq!(
        listing_line(&tool("github", "merge_pull_request")),
        "merge_pull_request - Merge pull request"
    );
    assert_eq!(
        listing_line(&tool("everything", "get-resource-links")),
        "get-resource-links([count]) - Returns up to ten resource links"
    );
    assert_eq!(
        listing_line(&tool("playwright", "browser_take_screenshot")),
        "browser_take_screenshot([...]) - Take screenshot of current page"
    );
}

#[test]
fn filesystem_read_text_file_listing() {
    assert_eq!(
        listing_line(&tool("filesystem", "read_text_file")),
        "read_text_file(path) - Read complete contents of file from file system as text"
    );
}

#[test]
fn filesystem_edit_file_help() {
    assert_eq!(
        tool_help(&tool("filesystem", "edit_file")),
        "Make line-based edits to a text file. Each edit replaces exact line sequences with new \
         content. Returns a git-style diff showing the changes made. Only works within allowed \
         directories.\n\
         --path str required\n\
         --edits obj[] required\n  \
         oldText str required: Text to search for - must match exactly\n  \
         newText str required: Text to replace with\n\
         --dryRun bool =false: Preview changes using git-style diff format\n"
    );
}

#[test]
fn time_get_current_time_listing() {
    assert_eq!(
        listing_line(&tool("time", "get_current_time")),
        "get_current_time(timezone) - Get current time in timezone"
    );
}

#[test]
fn memory_create_entities_help() {
    assert_eq!(
        tool_help(&tool("memory", "create_entities")),
        "Create multiple new entities in the knowledge graph\n\
         --entities obj[] required\n  \
         name str required: The name of the entity\n  \
         entityType str required: The type of the entity\n  \
         observations str[] required: An array of observation contents associated with the \
         entity\n"
    );
}

#[test]
fn fetch_help_shows_defaults_and_constraints() {
    assert_eq!(
        tool_help(&tool("fetch", "fetch")),
        "Fetches a URL from the internet and optionally extracts its contents as markdown.\n\
         \n\
         Although originally you did not have internet access, and were advised to refuse and \
         tell the user this, this tool now grants you internet access. Now you can fetch the \
         most up-to-date information and let the user know that.\n\
         --url str required [minLength 1, format uri]: URL to fetch\n\
         --max_length int =5000 [minimum 1, maximum 999999]: Maximum number of characters to \
         return.\n\
         --start_index int =0 [minimum 0]: On return output starting at this character index, \
         useful if a previous fetch was truncated and more context is required.\n\
         --raw bool =false: Get the actual HTML content of the requested page, without \
         simplification.\n"
    );
}

#[test]
fn git_log_help_shows_nullable_defaults() {
    assert_eq!(
        tool_help(&tool("git", "git_log")),
        "Shows the commit logs\n\
         --repo_path str required: Repo Path\n\
         --max_count int =10: Max Count\n\
         --start_timestamp str|null =null: Start timestamp for filtering commits. Accepts: ISO \
         8601 format (e.g., '2024-01-15T14:30:25'), relative dates (e.g., '2 weeks ago', \
         'yesterday'), or absolute dates (e.g., '2024-01-15', 'Jan 15 2024')\n\
         --end_timestamp str|null =null: End timestamp for filtering commits. Accepts: ISO 8601 \
         format (e.g., '2024-01-15T14:30:25'), relative dates (e.g., '2 weeks ago', \
         'yesterday'), or absolute dates (e.g., '2024-01-15', 'Jan 15 2024')\n"
    );
}

/// Five required arguments, too long to list; the help shows the union's object variants.
#[test]
fn github_union_items_listing_and_help() {
    let t = tool("github", "create_pull_request_review");
    assert_eq!(
        listing_line(&t),
        "create_pull_request_review - Create review on pull request"
    );
    assert_eq!(
        tool_help(&t),
        "Create a review on a pull request\n\
         --owner str required: Repository owner (username or organization)\n\
         --repo str required: Repository name\n\
         --pull_number num required: Pull request number\n\
         --commit_id str: The SHA of the commit that needs a review\n\
         --body str required: The body text of the review\n\
         --event APPROVE|REQUEST_CHANGES|COMMENT required: The review action to perform\n\
         --comments (obj|obj)[]: Comments to post as part of the review (specify either \
         position or line, not both)\n  \
         variant 1:\n    \
         path str required: The relative path to the file being commented on\n    \
         position num required: The position in the diff where you want to add a review \
         comment\n    \
         body str required: Text of the review comment\n  \
         variant 2:\n    \
         path str required: The relative path to the file being commented on\n    \
         line num required: The line number in the file where you want to add a review \
         comment\n    \
         body str required: Text of the review comment\n"
    );
}

#[test]
fn everything_enum_with_spaces_is_quoted() {
    let t = tool("everything", "get-structured-content");
    assert_eq!(
        listing_line(&t),
        "get-structured-content(location) - Returns structured content"
    );
    assert_eq!(
        tool_help(&t),
        "Returns structured content along with an output schema for client data validation\n\
         --location \"New York\"|Chicago|\"Los Angeles\" required: Choose city\n"
    );
}

#[test]
fn playwright_browser_click_help() {
    assert_eq!(
        tool_help(&tool("playwright", "browser_click")),
        "Perform click on a web page\n\
         --element str: Human-readable element description used to obtain permission to \
         interact with the element\n\
         --target str required: Exact target element reference from the page snapshot, or a \
         unique element selector\n\
         --doubleClick bool: Whether to perform a double click instead of a single click\n\
         --button left|right|middle: Button to click, defaults to left\n\
         --modifiers (Alt|Control|ControlOrMeta|Meta|Shift)[]: Modifier keys to press\n"
    );
}

/// "(e.g." no longer ends the first sentence, and the clause stops before the parenthesis;
/// the three required names (27 bytes) are left to `--help`.
#[test]
fn gitlab_create_issue_emoji_reaction_listing() {
    assert_eq!(
        listing_line(&tool("gitlab", "create_issue_emoji_reaction")),
        "create_issue_emoji_reaction - Add emoji reaction to issue"
    );
}

// Renderer bugs found on the corpus, fixed, and kept as regression tests.

/// `anyOf: [{type: object, description: D, properties...}, {type: null}]` with a description of
/// its own: help shows the outer description and the object's fields, but never D.
#[test]
fn help_keeps_the_description_of_a_nullable_object_variant() {
    for name in [
        "create_merge_request_thread",
        "create_draft_note",
        "update_draft_note",
    ] {
        let help = tool_help(&tool("gitlab", name));
        assert!(
            help.contains(
                "Line range for multiline comments on GitLab merge request diffs. VALIDATION \
                 RULES: 1) line_code is critical for GitLab API success"
            ),
            "{name}:\n{help}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// The checks themselves: each must object to a help text with one fact lost or wrong.

fn raw_entry(server: &str, name: &str) -> Value {
    snapshots()
        .into_iter()
        .find(|s| s.server == server)
        .and_then(|s| s.entries.into_iter().find(|e| e["name"] == name))
        .unwrap_or_else(|| panic!("{server} has no tool {name:?}"))
}

/// Replaces the first `from` of `text` (which must hold it) by `to`.
fn mutated(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} is not in:\n{text}");
    text.replacen(from, to, 1)
}

#[test]
fn the_help_checks_catch_a_lost_or_wrong_fact() {
    // (server, tool, what goes wrong, from, to, whether the raw view sees it too)
    let cases = [
        (
            "fetch",
            "fetch",
            "required mark lost",
            "--url str required",
            "--url str",
            true,
        ),
        (
            "fetch",
            "fetch",
            "optional marked required",
            "--raw bool",
            "--raw bool required",
            true,
        ),
        ("fetch", "fetch", "default lost", " =5000", "", true),
        (
            "fetch",
            "fetch",
            "constraint lost",
            ", format uri",
            "",
            true,
        ),
        (
            "fetch",
            "fetch",
            "description cut",
            "characters to return.",
            "characters",
            true,
        ),
        (
            "fetch",
            "fetch",
            "wrong type",
            "--max_length int",
            "--max_length num",
            false,
        ),
        (
            "fetch",
            "fetch",
            "safe-integer bound shown",
            "[minimum 0]",
            "[minimum 0, maximum 9007199254740991]",
            false,
        ),
        (
            "fetch",
            "fetch",
            "property lost",
            "\n--url str required [minLength 1, format uri]: URL to fetch",
            "",
            true,
        ),
        (
            "filesystem",
            "edit_file",
            "nested required mark lost",
            "  oldText str required",
            "  oldText str",
            true,
        ),
        (
            "filesystem",
            "edit_file",
            "nested description lost",
            ": Text to replace with",
            "",
            true,
        ),
        (
            "filesystem",
            "edit_file",
            "nested field lost",
            "\n  newText str required: Text to replace with",
            "",
            true,
        ),
        (
            "filesystem",
            "edit_file",
            "nested field mis-indented",
            "  newText",
            "    newText",
            false,
        ),
        (
            "filesystem",
            "edit_file",
            "properties swapped",
            "--path str required\n--edits",
            "--edits",
            true,
        ),
        (
            "chrome-devtools",
            "fill_form",
            "item description lost",
            "\n  []: An element to fill out",
            "",
            true,
        ),
        (
            "github",
            "create_pull_request_review",
            "variant line lost",
            "\n  variant 2:",
            "",
            false,
        ),
        (
            "everything",
            "get-structured-content",
            "enum value lost",
            "|\"Los Angeles\"",
            "",
            true,
        ),
    ];
    let mut missed = Vec::new();
    for (server, name, what, from, to, raw_too) in cases {
        let t = tool(server, name);
        let raw = raw_entry(server, name);
        let help = tool_help(&t);
        assert!(model_help_problems(&help, &t).is_empty(), "{server}/{name}");
        assert!(
            raw_help_problems(&help, server, &t, &raw).is_empty(),
            "{server}/{name}"
        );
        let broken = mutated(&help, from, to);
        if model_help_problems(&broken, &t).is_empty() {
            missed.push(format!("model view missed {what} in {server}/{name}"));
        }
        if raw_too && raw_help_problems(&broken, server, &t, &raw).is_empty() {
            missed.push(format!("raw view missed {what} in {server}/{name}"));
        }
    }
    assert!(missed.is_empty(), "{}", missed.join("\n"));
}

#[test]
fn the_listing_check_catches_a_wrong_line() {
    let raw = raw_entry("filesystem", "read_text_file");
    let line = listing_line(&tool("filesystem", "read_text_file"));
    assert!(listing_problems(&line, &raw).is_empty(), "{line}");
    for (what, from, to) in [
        ("optional argument listed", "(path)", "(path, head)"),
        ("required argument lost", "(path)", ""),
        ("empty argument list", "(path)", "()"),
        ("article kept", "contents of file", "contents of a file"),
        ("word made up", "Read", "Load"),
        ("period kept", "as text", "as text."),
        (
            "summary lost",
            " - Read complete contents of file from file system as text",
            "",
        ),
    ] {
        let broken = mutated(&line, from, to);
        assert!(
            !listing_problems(&broken, &raw).is_empty(),
            "the listing check missed: {what}: {broken}"
        );
    }
}

/// The corpus has no `$ref`: a synthetic tool with shared, recursive and `definitions` targets
/// keeps both views honest about them.
#[test]
fn the_help_checks_follow_refs() {
    let raw = serde_json::json!({"name": "route", "description": "Plan a route.", "inputSchema": {
        "type": "object",
        "$defs": {
            "Point": {"type": "object", "description": "A point",
                "properties": {"x": {"type": "number", "description": "East"},
                    "y": {"type": "number", "default": 0}},
                "required": ["x", "y"]},
            "Node": {"type": "object", "properties": {
                "value": {"type": "string", "enum": ["leaf", "branch"]},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}}}}
        },
        "definitions": {"Stop": {"type": "object",
            "properties": {"name": {"type": "string", "description": "Stop name", "minLength": 1}},
            "required": ["name"]}},
        "properties": {
            "from": {"$ref": "#/$defs/Point", "description": "Start"},
            "to": {"$ref": "#/$defs/Point"},
            "via": {"type": "array", "items": {"$ref": "#/definitions/Stop"}},
            "tree": {"$ref": "#/$defs/Node"}
        },
        "required": ["from", "to"]}});
    let t = Tool::from_value(&raw).unwrap();
    let help = tool_help(&t);
    assert!(model_help_problems(&help, &t).is_empty(), "{help}");
    assert!(
        raw_help_problems(&help, "maps", &t, &raw).is_empty(),
        "{help}"
    );
    for (from, to) in [(": East", ""), ("leaf", "leaves"), (" [minLength 1]", "")] {
        let broken = mutated(&help, from, to);
        assert!(
            !model_help_problems(&broken, &t).is_empty(),
            "model view missed {from:?}"
        );
        assert!(
            !raw_help_problems(&broken, "maps", &t, &raw).is_empty(),
            "raw view missed {from:?}"
        );
    }
}

/// Claude Code's own server (`claude mcp serve`) writes its descriptions as markdown for a
/// model: the listing says what each tool does, never list or heading markup, a heading that
/// repeats the name or a leading warning, and never ends on a word that needs what follows.
#[test]
fn markdown_descriptions_list_as_what_each_tool_does() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/prose/claude-code.tools.json");
    let value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let (tools, _) = parse_tools(value["tools"].as_array().unwrap());
    let lines: Vec<String> = tools.iter().map(listing_line).collect();
    assert_eq!(
        lines,
        [
            "Agent(description, prompt) - Launch new agent to handle complex, multi-step tasks",
            "TaskOutput(task_id) - Deprecated: Background tasks return their output file path",
            "Bash(command) - Executes bash command and returns its output",
            "Read(file_path) - Reads file from local filesystem",
            "Edit - Performs exact string replacements in files",
            "Write(file_path, content) - Writes file to local filesystem",
            "NotebookEdit - Replaces, inserts, or deletes single cell",
            "WebFetch(url, prompt) - Fetches content from URL and processes it using AI model",
            "ReportFindings(findings) - Report code-review findings as typed list",
            "WebSearch(query) - search web and use results to inform responses",
            "TaskStop([task_id, shell_id]) - Stops running background task by its ID",
            "Skill(skill) - Execute skill within main conversation",
            "DesignSync(method) - Read and update user's claude.ai/design design-system projects",
            "TaskCreate(subject, description) - create structured task list for your current coding session",
            "TaskGet(taskId) - retrieve task by its ID from task list",
            "TaskUpdate(taskId) - update task in task list",
            "TaskList() - list tasks in task list",
            "EnterWorktree([name, path]) - creates isolated git worktree and switches current session into it",
            "ExitWorktree(action) - Exit worktree session created by EnterWorktree",
            "SendMessage(to, message) - Send message to another agent",
            "Workflow([...]) - Execute workflow script that orchestrates multiple subagents deterministically",
            "CronCreate(cron, prompt) - Schedule prompt to be enqueued at future time",
            "CronDelete(id) - Cancel cron job previously scheduled with CronCreate",
            "CronList() - List cron jobs scheduled via CronCreate",
            "ScheduleWakeup - Schedule when to resume work",
            "ToolSearch(query) - Fetches full schema definitions",
        ]
    );
}
