//! Tool arguments from command-line words, driven by the tool's schema.
//!
//! `--prop value`, `--prop=value`, a kebab-case alias, `--flag`/`--no-flag`/`--flag=false`,
//! repeated flags for arrays of scalars, JSON (or `@file`, or `-` for stdin) for objects,
//! arrays of objects and unions, one positional word for a tool with exactly one required
//! property, and `--json '{...}'` for the whole object. Everything is checked here, before any
//! server is contacted; errors name the flag and say what would be right.

use crate::schema::{render_type, render_value, Kind, Prop, Shape, ToolSchema};
use crate::{Error, Result};
use serde_json::{Map, Number, Value};

/// ferry's own options that may follow the tool name when no property has the same name.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CallOptions {
    pub help: bool,
    /// Print the exact result envelope.
    pub raw_json: bool,
    pub max_tokens: Option<usize>,
    pub timeout: Option<f64>,
}

/// Parsed arguments for one call.
#[derive(Debug, Default)]
pub struct ParsedCall {
    pub arguments: Map<String, Value>,
    pub options: CallOptions,
}

/// Reads standard input once, whoever asks for it.
pub trait StdinSource {
    fn read_all(&mut self) -> Result<String>;
}

/// Standard input read ahead of parsing: the parser asks for it, the caller reads it without
/// blocking its runtime (so Ctrl-C still works), then parses again with the text in hand.
#[derive(Default)]
pub struct DeferredStdin {
    text: Option<String>,
    used: bool,
    /// Set when parsing needed standard input that was not read yet.
    pub wanted: bool,
}

impl DeferredStdin {
    /// Standard input already read.
    pub fn with(text: String) -> Self {
        DeferredStdin {
            text: Some(text),
            used: false,
            wanted: false,
        }
    }
}

impl StdinSource for DeferredStdin {
    fn read_all(&mut self) -> Result<String> {
        if self.used {
            return Err(Error::usage(
                "standard input ('-') can be used for one value only",
            ));
        }
        match self.text.take() {
            Some(text) => {
                self.used = true;
                Ok(text)
            }
            None => {
                self.wanted = true;
                Err(Error::usage("standard input is needed"))
            }
        }
    }
}

/// Converts `camelCase`/`snake_case` to `kebab-case` for the alias.
pub fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' {
            out.push('-');
            prev_lower = false;
        } else if c.is_uppercase() {
            if prev_lower {
                out.push('-');
            }
            out.extend(c.to_lowercase());
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// Finds the property a flag name refers to: verbatim, else an unambiguous kebab-case alias.
fn find_prop<'a>(schema: &'a ToolSchema, flag: &str) -> Result<Option<&'a Prop>> {
    if let Some(prop) = schema.prop(flag) {
        return Ok(Some(prop));
    }
    let matches: Vec<&Prop> = schema
        .props
        .iter()
        .filter(|p| kebab(&p.name) == flag)
        .collect();
    match matches.len() {
        0 => Ok(None),
        1 => Ok(Some(matches[0])),
        _ => {
            let names: Vec<String> = matches.iter().map(|p| format!("--{}", p.name)).collect();
            Err(Error::usage(format!(
                "--{flag} is ambiguous: it could be {}",
                names.join(" or ")
            ))
            .with_hint("use the exact property name"))
        }
    }
}

/// Parses the words after the tool name.
pub fn parse_call(
    tool: &str,
    schema: &ToolSchema,
    words: &[String],
    stdin: &mut dyn StdinSource,
) -> Result<ParsedCall> {
    let mut call = ParsedCall::default();
    let mut base: Option<Map<String, Value>> = None;
    let mut positionals: Vec<&str> = Vec::new();
    let mut i = 0;
    let mut only_positionals = false;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        if only_positionals || !word.starts_with("--") || word == "-" {
            if word == "-h" && !only_positionals {
                call.options.help = true;
                continue;
            }
            positionals.push(word);
            continue;
        }
        if word == "--" {
            only_positionals = true;
            continue;
        }
        let body = &word[2..];
        let (name, inline) = match body.split_once('=') {
            Some((name, value)) => (name, Some(value.to_string())),
            None => (body, None),
        };
        let prop = find_prop(schema, name)?;
        let Some(prop) = prop else {
            // Not a property: one of ferry's own options, a negated boolean, or a mistake.
            if let Some(positive) = name.strip_prefix("no-") {
                if let Some(prop) = find_prop(schema, positive)? {
                    if prop.shape.kind == Kind::Bool {
                        if inline.is_some() {
                            return Err(Error::usage(format!("--{name} takes no value")));
                        }
                        call.arguments.insert(prop.name.clone(), Value::Bool(false));
                        continue;
                    }
                }
            }
            let mut take_value = |what: &str| -> Result<String> {
                if let Some(value) = &inline {
                    return Ok(value.clone());
                }
                let value = words
                    .get(i)
                    .cloned()
                    .ok_or_else(|| Error::usage(format!("--{name} needs {what}")))?;
                i += 1;
                Ok(value)
            };
            match name {
                "help" => call.options.help = true,
                "json" => {
                    // `--json '{...}'` (or @file, or -) is the arguments object; bare `--json` asks
                    // for the raw result envelope.
                    let next = inline.clone().or_else(|| words.get(i).cloned());
                    match next {
                        Some(value)
                            if value.trim_start().starts_with('{')
                                || value.starts_with('@')
                                || value == "-" =>
                        {
                            if inline.is_none() {
                                i += 1;
                            }
                            let text = load_text(&value, stdin)?;
                            match serde_json::from_str::<Value>(&text) {
                                Ok(Value::Object(map)) => base = Some(map),
                                Ok(_) => {
                                    return Err(Error::usage(
                                        "--json must be a JSON object of arguments",
                                    ))
                                }
                                Err(e) => {
                                    return Err(Error::usage(format!(
                                        "--json is not valid JSON: {e}"
                                    )))
                                }
                            }
                        }
                        _ => call.options.raw_json = true,
                    }
                }
                "max-tokens" => {
                    call.options.max_tokens =
                        Some(parse_max_tokens(&take_value("a number of tokens")?)?)
                }
                "timeout" => {
                    call.options.timeout = Some(parse_timeout(&take_value("a number of seconds")?)?)
                }
                _ => return Err(unknown_flag(tool, schema, name)),
            }
            continue;
        };
        let shape = &prop.shape;
        if shape.kind == Kind::Bool {
            let value = match inline.as_deref() {
                Some(text) => {
                    parse_bool(text).ok_or_else(|| invalid(prop, text, "true or false"))?
                }
                None => match words.get(i).map(String::as_str).and_then(parse_bool) {
                    Some(value) => {
                        i += 1;
                        value
                    }
                    None => true,
                },
            };
            call.arguments.insert(prop.name.clone(), Value::Bool(value));
            continue;
        }
        let text = match inline {
            Some(value) => value,
            None => {
                let value = words.get(i).cloned().ok_or_else(|| {
                    Error::usage(format!(
                        "--{} needs a value ({})",
                        prop.name,
                        render_type(shape)
                    ))
                })?;
                i += 1;
                value
            }
        };
        if let Kind::Array(items) = &shape.kind {
            if items.is_scalar() && !text.trim_start().starts_with('[') {
                let item = parse_scalar(prop, items, &text)?;
                match call
                    .arguments
                    .entry(prop.name.clone())
                    .or_insert_with(|| Value::Array(Vec::new()))
                {
                    Value::Array(list) => list.push(item),
                    other => *other = Value::Array(vec![item]),
                }
                continue;
            }
        }
        let value = parse_value(prop, shape, &text, stdin)?;
        if call.arguments.contains_key(&prop.name) {
            return Err(Error::usage(format!("--{} is given twice", prop.name)));
        }
        call.arguments.insert(prop.name.clone(), value);
    }
    if call.options.help {
        return Ok(call);
    }
    if !positionals.is_empty() {
        let required: Vec<&Prop> = schema.must_give().collect();
        match (required.as_slice(), positionals.as_slice()) {
            ([prop], [word]) if !call.arguments.contains_key(&prop.name) => {
                let value = match &prop.shape.kind {
                    Kind::Array(items) if items.is_scalar() && !word.starts_with('[') => {
                        Value::Array(vec![parse_scalar(prop, items, word)?])
                    }
                    _ => parse_value(prop, &prop.shape, word, stdin)?,
                };
                call.arguments.insert(prop.name.clone(), value);
            }
            ([prop], _) => {
                let extra = positionals.get(1).unwrap_or(&positionals[0]);
                return Err(
                    Error::usage(format!("unexpected argument {extra:?}")).with_hint(format!(
                        "{tool} takes one bare value (--{}); give the others as --flags",
                        prop.name
                    )),
                );
            }
            _ => {
                return Err(
                    Error::usage(format!("unexpected argument {:?}", positionals[0])).with_hint(
                        format!("give arguments as --flags; see: ferry ... {tool} --help"),
                    ),
                );
            }
        }
    }
    // Flags override keys of --json.
    if let Some(mut base) = base {
        for (k, v) in std::mem::take(&mut call.arguments) {
            base.insert(k, v);
        }
        call.arguments = base;
    }
    for prop in schema.must_give() {
        if !call.arguments.contains_key(&prop.name) {
            return Err(Error::usage(format!(
                "missing required --{} ({}) for {tool}",
                prop.name,
                render_type(&prop.shape)
            ))
            .with_hint(format!("see: {tool} --help")));
        }
    }
    Ok(call)
}

/// The value of `--max-tokens`.
pub fn parse_max_tokens(text: &str) -> Result<usize> {
    match text.parse::<usize>() {
        Ok(n) if n >= MIN_MAX_TOKENS => Ok(n),
        Ok(_) => Err(Error::usage(format!(
            "--max-tokens must be at least {MIN_MAX_TOKENS}: the line that reports a cut takes about 40"
        ))),
        Err(_) => Err(Error::usage(format!("--max-tokens must be a whole number, not {text:?}"))),
    }
}

/// Budgets below this cannot hold the cut marker and some output.
pub const MIN_MAX_TOKENS: usize = 64;

/// The value of `--timeout`, in seconds.
pub fn parse_timeout(text: &str) -> Result<f64> {
    let max = crate::client::config::MAX_TIMEOUT_SECS;
    text.parse::<f64>()
        .ok()
        .filter(|s| s.is_finite() && *s > 0.0 && *s <= max)
        .ok_or_else(|| {
            Error::usage(format!(
                "--timeout must be a number of seconds above 0 and at most {max}, not {text:?}"
            ))
        })
}

fn parse_bool(text: &str) -> Option<bool> {
    match text {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

fn invalid(prop: &Prop, text: &str, expected: &str) -> Error {
    Error::usage(format!("--{} expects {expected}, not {text:?}", prop.name))
}

/// Reads `@file`, `-` (stdin) or the word itself.
fn load_text(word: &str, stdin: &mut dyn StdinSource) -> Result<String> {
    if word == "-" {
        return stdin.read_all();
    }
    if let Some(path) = word.strip_prefix('@') {
        return std::fs::read_to_string(path)
            .map_err(|e| Error::usage(format!("cannot read {path}: {e}")));
    }
    Ok(word.to_string())
}

/// One word as a scalar of `shape` (string, number, boolean, enum).
fn parse_scalar(prop: &Prop, shape: &Shape, text: &str) -> Result<Value> {
    if shape.nullable && text == "null" && shape.kind != Kind::Str {
        return Ok(Value::Null);
    }
    let value = match &shape.kind {
        Kind::Str => Value::String(text.to_string()),
        Kind::Int => {
            let n = text
                .parse::<i64>()
                .map_err(|_| invalid(prop, text, "an integer"))?;
            Value::Number(n.into())
        }
        Kind::Num => parse_number(text).ok_or_else(|| invalid(prop, text, "a number"))?,
        Kind::Bool => {
            Value::Bool(parse_bool(text).ok_or_else(|| invalid(prop, text, "true or false"))?)
        }
        Kind::Enum(values) => {
            let found = values.iter().find(|v| match v {
                Value::String(s) => s == text,
                other => same_word(other, text),
            });
            match found {
                Some(value) => value.clone(),
                None => {
                    let choices: Vec<String> = values.iter().map(render_value).collect();
                    return Err(invalid(
                        prop,
                        text,
                        &format!("one of {}", choices.join(", ")),
                    ));
                }
            }
        }
        Kind::Const(value) => {
            let matches = match value {
                Value::String(s) => s == text,
                other => same_word(other, text),
            };
            if !matches {
                return Err(invalid(prop, text, &render_value(value)));
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
                .find_map(|variant| parse_scalar(prop, variant, text).ok())
                .ok_or_else(|| invalid(prop, text, &render_type(shape)));
        }
        _ => serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_string())),
    };
    check_range(prop, shape, &value, text)?;
    Ok(value)
}

/// Whether a non-string JSON value is written as `text` (`3`, `true`).
fn same_word(value: &Value, text: &str) -> bool {
    let written = value.to_string();
    written == text
}

fn parse_number(text: &str) -> Option<Value> {
    if let Ok(n) = text.parse::<i64>() {
        return Some(Value::Number(n.into()));
    }
    text.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map(Value::Number)
}

fn check_range(prop: &Prop, shape: &Shape, value: &Value, text: &str) -> Result<()> {
    let Some(n) = value.as_f64() else {
        return Ok(());
    };
    for (key, bound_value) in &shape.constraints {
        let Some(bound) = bound_value.as_f64() else {
            continue;
        };
        let ok = match key.as_str() {
            "minimum" => n >= bound,
            "maximum" => n <= bound,
            "exclusiveMinimum" => n > bound,
            "exclusiveMaximum" => n < bound,
            _ => true,
        };
        if !ok {
            let relation = match key.as_str() {
                "minimum" => ">=",
                "maximum" => "<=",
                "exclusiveMinimum" => ">",
                _ => "<",
            };
            return Err(invalid(
                prop,
                text,
                &format!("a value {relation} {}", render_value(bound_value)),
            ));
        }
    }
    Ok(())
}

/// A value of any shape: scalars as words, everything else as JSON (or `@file`, or `-`).
fn parse_value(
    prop: &Prop,
    shape: &Shape,
    text: &str,
    stdin: &mut dyn StdinSource,
) -> Result<Value> {
    if shape.is_scalar() {
        return parse_scalar(prop, shape, text);
    }
    let text = load_text(text, stdin)?;
    if shape.kind == Kind::Any {
        return Ok(serde_json::from_str(&text).unwrap_or(Value::String(text)));
    }
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        Error::usage(format!(
            "--{} expects JSON ({}): {e}",
            prop.name,
            render_type(shape)
        ))
    })?;
    let fits = match (&shape.kind, &value) {
        (_, Value::Null) => shape.nullable,
        (Kind::Array(_), Value::Array(_)) | (Kind::Object { .. }, Value::Object(_)) => true,
        (Kind::Array(_), _) | (Kind::Object { .. }, _) => false,
        _ => true,
    };
    if !fits {
        return Err(invalid(
            prop,
            &text,
            &format!("JSON of type {}", render_type(shape)),
        ));
    }
    // Items of a list of scalars are checked like repeated flags would be.
    if let (Kind::Array(items), Value::Array(list)) = (&shape.kind, &value) {
        if items.is_scalar() {
            if let Some((index, item)) = list
                .iter()
                .enumerate()
                .find(|(_, item)| !scalar_fits(items, item))
            {
                return Err(Error::usage(format!(
                    "--{} expects JSON of type {}: item {} is {item}",
                    prop.name,
                    render_type(shape),
                    index + 1
                )));
            }
        }
    }
    Ok(value)
}

/// Whether a JSON value is one the scalar shape accepts.
fn scalar_fits(shape: &Shape, value: &Value) -> bool {
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
        Kind::Enum(values) => values.contains(value),
        Kind::Const(expected) => expected == value,
        Kind::Union(variants) => variants.iter().any(|v| scalar_fits(v, value)),
        _ => true,
    }
}

fn unknown_flag(tool: &str, schema: &ToolSchema, name: &str) -> Error {
    let candidates = schema.props.iter().map(|p| p.name.as_str());
    let error = Error::usage(format!("unknown flag --{name} for {tool}"));
    match closest(name, candidates) {
        Some(best) => error.with_hint(format!("did you mean --{best}?")),
        None if schema.props.is_empty() => error.with_hint(format!("{tool} takes no arguments")),
        None => error.with_hint(format!("see: {tool} --help")),
    }
}

/// The candidate nearest to `word` by edit distance, if it is near enough to be a typo.
pub fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let word_lower = word.to_lowercase();
    candidates
        .map(|c| {
            (
                edit_distance(&word_lower, &kebab(c))
                    .min(edit_distance(&word_lower, &c.to_lowercase())),
                c,
            )
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = if ca == *cb { prev } else { prev + 1 };
            prev = row[j + 1];
            row[j + 1] = cost.min(row[j] + 1).min(prev + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests;
