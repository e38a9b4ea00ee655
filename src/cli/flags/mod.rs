//! Tool arguments from command-line words, driven by the tool's schema.
//!
//! `--prop value`, `--prop=value`, a kebab-case alias, `--flag`/`--no-flag`/`--flag=false`,
//! repeated flags for arrays of scalars, JSON (or `@file`, or `-` for stdin) for objects,
//! arrays of objects and unions, one positional word for a tool with exactly one required
//! property, and `--json '{...}'` for the whole object. Every value is checked by the schema
//! model's validation (`schema::validate`) before any server is contacted; errors name the
//! flag and say what would be right, and hints are commands that run as printed.

use crate::schema::validate::{self, check_value, parse_bool, parse_word, Problem};
use crate::schema::{kebab, render_type, Kind, Prop, Shape, ToolSchema};
use crate::{Error, Result};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// The most an `@file` or standard input may hold for one argument.
pub const MAX_INPUT_BYTES: usize = 32 * 1024 * 1024;

/// ferry's own options that may follow the tool name when no property has the same name.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct CallOptions {
    pub help: bool,
    /// Print the exact result envelope.
    pub raw_json: bool,
    pub max_tokens: Option<usize>,
    pub timeout: Option<f64>,
    /// Leave a call that becomes a task running, and print its id.
    pub detach: bool,
}

/// Parsed arguments for one call.
#[derive(Debug, Default)]
pub struct ParsedCall {
    pub arguments: Map<String, Value>,
    pub options: CallOptions,
}

/// Which tool is parsed, and the command that names it (`ferry github`), for hints.
#[derive(Debug, Clone, Copy)]
pub struct ToolRef<'a> {
    pub tool: &'a str,
    pub command: &'a str,
}

impl ToolRef<'_> {
    fn help_hint(&self) -> String {
        format!("see: {} {} --help", self.command, shell_word(self.tool))
    }
}

/// A word as a shell would need it written.
pub fn shell_word(word: &str) -> String {
    shlex::try_quote(word)
        .map(|q| q.into_owned())
        .unwrap_or_else(|_| word.replace('\0', ""))
}

/// Input the parser needs from outside: standard input and `@file`s. Both can block (a FIFO,
/// a terminal, `/dev/zero`), so the parser only asks; the caller reads them where a signal can
/// still stop ferry, with a size limit, and parses again with the text in hand.
#[derive(Default)]
pub struct DeferredInput {
    stdin: Option<String>,
    stdin_used: bool,
    files: HashMap<String, String>,
    /// Set when parsing needed standard input that was not read yet.
    pub wants_stdin: bool,
    /// Files parsing needed that were not read yet.
    pub wants_files: Vec<String>,
    /// The caller's working directory, where a relative `@file` is looked for.
    pub cwd: Option<std::path::PathBuf>,
}

impl DeferredInput {
    /// Provides standard input's text.
    pub fn set_stdin(&mut self, text: String) {
        self.stdin = Some(text);
        self.wants_stdin = false;
    }

    /// Provides a file's text.
    pub fn set_file(&mut self, path: String, text: String) {
        self.wants_files.retain(|p| *p != path);
        self.files.insert(path, text);
    }

    /// Whether parsing stopped for input not read yet.
    pub fn wants_more(&self) -> bool {
        self.wants_stdin || !self.wants_files.is_empty()
    }

    /// Prepares for another parse.
    pub fn rewind(&mut self) {
        self.stdin_used = false;
    }

    fn stdin(&mut self) -> Result<String> {
        if self.stdin_used {
            return Err(Error::usage(
                "standard input ('-') can be used for one value only",
            ));
        }
        match &self.stdin {
            Some(text) => {
                self.stdin_used = true;
                Ok(text.clone())
            }
            None => {
                self.wants_stdin = true;
                Err(Error::usage("standard input is needed"))
            }
        }
    }

    fn file(&mut self, path: &str) -> Result<String> {
        match self.files.get(path) {
            Some(text) => Ok(text.clone()),
            None => {
                if !self.wants_files.iter().any(|p| p == path) {
                    self.wants_files.push(path.to_string());
                }
                Err(Error::usage(format!("{path} is needed")))
            }
        }
    }
}

/// Reads up to `MAX_INPUT_BYTES` of a file or standard input (blocking: call it off the
/// runtime's thread).
pub fn read_limited(path: Option<&str>) -> Result<String> {
    use std::io::Read;
    let what = path.map_or("standard input".to_string(), |p| format!("@{p}"));
    let mut bytes = Vec::new();
    let outcome = match path {
        Some(p) => std::fs::File::open(p)
            .and_then(|f| f.take(MAX_INPUT_BYTES as u64 + 1).read_to_end(&mut bytes)),
        None => std::io::stdin()
            .lock()
            .take(MAX_INPUT_BYTES as u64 + 1)
            .read_to_end(&mut bytes),
    };
    outcome.map_err(|e| {
        Error::usage(format!("cannot read {what}: {e}"))
            .with_hint("check the file's path and permissions")
    })?;
    if bytes.len() > MAX_INPUT_BYTES {
        return Err(Error::usage(format!(
            "{what} is over {} MB; ferry reads at most that for one argument",
            MAX_INPUT_BYTES / (1024 * 1024)
        ))
        .with_hint("pass a smaller file, or a path the tool reads itself"));
    }
    String::from_utf8(bytes).map_err(|_| {
        Error::usage(format!("{what} is not UTF-8 text")).with_hint(
            "arguments are JSON text; pass binary data as a path the tool reads, or as base64",
        )
    })
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

/// Parses the words after the tool name. Every mistake without a hint of its own (a wrong
/// type, a value out of range) points to the tool's help.
pub fn parse_call(
    tool: ToolRef,
    schema: &ToolSchema,
    words: &[String],
    input: &mut DeferredInput,
) -> Result<ParsedCall> {
    parse_words(tool, schema, words, input).map_err(|error| {
        if error.hint.is_none() && !input.wants_more() {
            error.with_hint(tool.help_hint())
        } else {
            error
        }
    })
}

fn parse_words(
    tool: ToolRef,
    schema: &ToolSchema,
    words: &[String],
    input: &mut DeferredInput,
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
                    if takes_bool(&prop.shape) {
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
            // ferry's own options after a tool are those of its table (`options::OPTIONS`).
            if name != "help" && !super::options::after_tool(name) {
                return Err(unknown_flag(tool, schema, name));
            }
            match name {
                "help" => call.options.help = true,
                "detach" if inline.is_none() => call.options.detach = true,
                "json" => {
                    // After the tool name `--json` is the arguments object, always ('{...}',
                    // @file or -); the result envelope is asked for before the tool.
                    let Some(value) = inline.clone().or_else(|| words.get(i).cloned()) else {
                        return Err(Error::usage(
                            "--json after the tool name takes the arguments as a JSON object",
                        )
                        .with_hint(format!(
                            "for the exact result envelope, put --json before the tool: {} --json {} ...",
                            tool.command,
                            shell_word(tool.tool)
                        )));
                    };
                    if inline.is_none() {
                        i += 1;
                    }
                    let text = load_text(&value, input)?;
                    match serde_json::from_str::<Value>(&text) {
                        Ok(Value::Object(map)) => base = Some(map),
                        Ok(_) => {
                            return Err(Error::usage("--json must be a JSON object of arguments")
                                .with_hint(tool.help_hint()))
                        }
                        Err(e) => {
                            return Err(Error::usage(format!("--json is not valid JSON: {e}"))
                                .with_hint(
                                    "give an object such as --json '{\"name\": \"value\"}'",
                                ))
                        }
                    }
                }
                "max-tokens" => {
                    call.options.max_tokens = Some(super::options::parse_max_tokens(&take_value(
                        "a number of tokens",
                    )?)?)
                }
                "timeout" => {
                    call.options.timeout = Some(super::options::parse_timeout(&take_value(
                        "a number of seconds",
                    )?)?)
                }
                _ => return Err(unknown_flag(tool, schema, name)),
            }
            continue;
        };
        let shape = &prop.shape;
        // `["boolean", "string"]` is a flag too when no value follows it.
        let bare_flag = inline.is_none()
            && takes_bool(shape)
            && words.get(i).is_none_or(|next| next.starts_with("--"));
        if bare_flag && shape.kind != Kind::Bool {
            call.arguments.insert(prop.name.clone(), Value::Bool(true));
            continue;
        }
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
        let value = parse_value(schema, prop, shape, &text, input)?;
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
                    _ => parse_value(schema, prop, &prop.shape, word, input)?,
                };
                call.arguments.insert(prop.name.clone(), value);
            }
            ([prop], _) => {
                let extra = positionals.get(1).unwrap_or(&positionals[0]);
                return Err(
                    Error::usage(format!("unexpected argument {extra:?}")).with_hint(format!(
                        "{} takes one bare value (--{}); give the others as --flags; {}",
                        tool.tool,
                        prop.name,
                        tool.help_hint()
                    )),
                );
            }
            (required, _) if required.len() == positionals.len() => {
                // `get-sum 1 2`: the same values as the flags they were meant for.
                let flags: Vec<String> = required
                    .iter()
                    .zip(&positionals)
                    .map(|(prop, word)| format!("--{} {}", prop.name, shell_word(word)))
                    .collect();
                return Err(
                    Error::usage(format!("unexpected argument {:?}", positionals[0])).with_hint(
                        format!(
                            "give arguments as --flags: {} {} {}",
                            tool.command,
                            shell_word(tool.tool),
                            flags.join(" ")
                        ),
                    ),
                );
            }
            _ => {
                return Err(
                    Error::usage(format!("unexpected argument {:?}", positionals[0]))
                        .with_hint(format!("give arguments as --flags; {}", tool.help_hint())),
                );
            }
        }
    }
    // Flags override keys of --json; what --json gave is checked like flags are.
    if let Some(mut base) = base {
        // `null` for an optional property that takes no null means "not given".
        base.retain(|key, value| {
            !(value.is_null()
                && schema
                    .prop(key)
                    .is_some_and(|p| !p.required && !p.shape.nullable))
        });
        for (key, value) in &base {
            if call.arguments.contains_key(key) {
                continue;
            }
            match schema.prop(key) {
                Some(prop) => check_value(schema, &prop.shape, value, key, 0).map_err(|v| {
                    Error::usage(format!("--json: {}", v.message())).with_hint(tool.help_hint())
                })?,
                None if !schema.open => {
                    return Err(Error::usage(format!(
                        "--json: unknown argument {key:?} for {}",
                        tool.tool
                    ))
                    .with_hint(tool.help_hint()))
                }
                None => {}
            }
        }
        for (k, v) in std::mem::take(&mut call.arguments) {
            base.insert(k, v);
        }
        call.arguments = base;
    }
    for prop in schema.must_give() {
        if !call.arguments.contains_key(&prop.name) {
            return Err(Error::usage(format!(
                "missing required --{} ({}) for {}",
                prop.name,
                render_type(&prop.shape),
                tool.tool
            ))
            .with_hint(tool.help_hint()));
        }
    }
    Ok(call)
}

fn invalid(prop: &Prop, text: &str, expected: &str) -> Error {
    Error::usage(format!("--{} expects {expected}, not {text:?}", prop.name))
}

/// Reads `@file`, `-` (stdin) or the word itself.
fn load_text(word: &str, input: &mut DeferredInput) -> Result<String> {
    if word == "-" {
        return input.stdin();
    }
    if let Some(path) = word.strip_prefix('@') {
        return input.file(path);
    }
    Ok(word.to_string())
}

/// A string argument's text: `-` reads standard input and `@path` the file when one exists
/// there (curl's rule); any other word, `@name` of no file among them, is the text itself.
fn string_text(word: &str, input: &mut DeferredInput) -> Result<String> {
    let is_file = |path: &str| match &input.cwd {
        Some(dir) => dir.join(path).is_file(),
        None => std::path::Path::new(path).is_file(),
    };
    match word.strip_prefix('@') {
        _ if word == "-" => input.stdin(),
        Some(path) if !path.is_empty() && is_file(path) => input.file(path),
        _ => Ok(word.to_string()),
    }
}

/// Whether a shape takes `true` (a boolean, or a union with one), so a bare `--flag` fits.
fn takes_bool(shape: &Shape) -> bool {
    match &shape.kind {
        Kind::Bool => true,
        Kind::Union(variants) => variants.iter().any(|v| v.kind == Kind::Bool),
        _ => false,
    }
}

/// One word as a scalar of `shape` (string, number, boolean, enum).
fn parse_scalar(prop: &Prop, shape: &Shape, text: &str) -> Result<Value> {
    parse_word(shape, text).map_err(|expected| invalid(prop, text, &expected.to_string()))
}

/// A value of any shape: scalars as words, everything else as JSON (or `@file`, or `-`).
fn parse_value(
    schema: &ToolSchema,
    prop: &Prop,
    shape: &Shape,
    text: &str,
    input: &mut DeferredInput,
) -> Result<Value> {
    if shape.kind == Kind::Str {
        return Ok(Value::String(string_text(text, input)?));
    }
    if shape.is_scalar() {
        return parse_scalar(prop, shape, text);
    }
    let text = load_text(text, input)?;
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
                .find(|(_, item)| !validate::scalar_fits(items, item))
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
    check_value(schema, shape, &value, &prop.name, 0).map_err(|violation| {
        match &violation.problem {
            // `entities[1].entityType` is missing: "--entities item 1: missing required
            // entityType (str)", the flag first and items counted from 1 in words.
            Problem::Missing(kind) => {
                let (within, field) = violation
                    .at
                    .rsplit_once('.')
                    .unwrap_or((prop.name.as_str(), violation.at.as_str()));
                let within = within.replace('[', " item ").replace(']', "");
                Error::usage(format!("--{within}: missing required {field} ({kind})"))
            }
            // In an item, the same words: "--entities item 1: name expects a string, not 1".
            Problem::Wrong { .. } | Problem::Unknown => {
                let message = violation.message();
                match (
                    message.strip_prefix(violation.at.as_str()),
                    violation.at.contains('['),
                ) {
                    (Some(rest), true) => {
                        let at = violation.at.replace('[', " item ").replace(']', "");
                        let at = match at.rsplit_once('.') {
                            Some((within, field)) => format!("{within}: {field}"),
                            None => at,
                        };
                        Error::usage(format!("--{at}{rest}"))
                    }
                    _ => Error::usage(format!("--{message}")),
                }
            }
        }
    })?;
    Ok(value)
}

fn unknown_flag(tool: ToolRef, schema: &ToolSchema, name: &str) -> Error {
    let candidates = schema.props.iter().map(|p| p.name.as_str());
    let error = Error::usage(format!("unknown flag --{name} for {}", tool.tool));
    match crate::words::closest(name, candidates) {
        Some(best) => error.with_hint(format!("did you mean --{best}?")),
        None if schema.props.is_empty() => {
            error.with_hint(format!("{} takes no arguments", tool.tool))
        }
        None => error.with_hint(tool.help_hint()),
    }
}

#[cfg(test)]
mod tests;
