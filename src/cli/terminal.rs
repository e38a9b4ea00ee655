//! The person at the terminal: errors on stderr (control characters escaped), the
//! [`TerminalHandler`] that answers a server's questions with this terminal and this working
//! directory, and the [`Console`] a server command writes to: this process's ([`Local`]), or
//! in the daemon the caller's (`warm`). Plain output goes through `crate::console`.

use crate::client::config::Environment;
use crate::client::handler::{
    not_supported, roots_of, sampling_refused, ClientHandler, ClientRequestError,
};
pub use crate::console::{emit, warn, write_error};
use crate::protocol::json_schema::SchemaView;
use crate::protocol::messages::{Elicitation, Progress};
use crate::protocol::BoxFuture;
use crate::render::text::{escape_line, escape_text};
use crate::{Error, ErrorKind, Result};
use serde_json::{json, Map, Value};
use std::io::{BufRead, IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// Where a server command's output goes and who answers for its caller: this process's own
/// streams and terminal ([`Local`]), or, in the daemon, the ferry that handed it over.
pub trait Console: Send + Sync {
    /// Writes text to stdout (with a final newline if it lacks one).
    fn emit(&self, text: &str) -> Result<()>;
    /// One line on stderr, control characters escaped.
    fn warn(&self, line: &str);
    /// Text on stderr as it is (a status line that is cleared again).
    fn status(&self, text: &str);
    /// Whether stderr is a terminal (someone watches status lines and progress).
    fn stderr_is_terminal(&self) -> bool;
    /// Answers what a server asks during this command (roots, elicitation, sampling) and
    /// hears its progress.
    fn handler(&self) -> Arc<dyn ClientHandler>;
    /// Clears a progress line left on stderr.
    fn finish_progress(&self);
    /// Standard input (`None`) or an `@file`'s text, with the size limit, read where a
    /// signal still stops ferry.
    fn read_input(&self, path: Option<String>) -> BoxFuture<'_, Result<String>>;
    /// The caller's environment and working directory.
    fn environment(&self) -> &Environment;
    /// One variable of the caller's environment.
    fn var(&self, name: &str) -> Option<String>;
    /// Whether the caller can answer elicitation (a person at its terminal, or
    /// `FERRY_ELICIT=defaults`).
    fn elicits(&self) -> bool;
}

/// This process's streams, terminal and directory.
pub struct Local {
    handler: Arc<TerminalHandler>,
    environment: OnceLock<Environment>,
}

impl Local {
    /// This process's console.
    pub fn new() -> Local {
        Local {
            handler: Arc::new(TerminalHandler::new()),
            environment: OnceLock::new(),
        }
    }
}

impl Default for Local {
    fn default() -> Self {
        Local::new()
    }
}

impl Console for Local {
    fn emit(&self, text: &str) -> Result<()> {
        emit(text)
    }

    fn warn(&self, line: &str) {
        super::status_line::write(&format!("{}\n", escape_line(line)));
    }

    fn status(&self, text: &str) {
        super::status_line::write(text);
    }

    fn stderr_is_terminal(&self) -> bool {
        self.handler.shows_progress()
    }

    fn handler(&self) -> Arc<dyn ClientHandler> {
        self.handler.clone()
    }

    fn finish_progress(&self) {
        self.handler.finish_progress()
    }

    fn read_input(&self, path: Option<String>) -> BoxFuture<'_, Result<String>> {
        Box::pin(async move {
            let what = path
                .as_deref()
                .map_or("standard input".to_string(), |p| format!("@{p}"));
            tokio::task::spawn_blocking(move || super::flags::read_limited(path.as_deref()))
                .await
                .map_err(|e| Error::usage(format!("cannot read {what}: {e}")))?
        })
    }

    fn environment(&self) -> &Environment {
        self.environment.get_or_init(Environment::current)
    }

    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn elicits(&self) -> bool {
        self.handler.interactive || answers_with_defaults()
    }
}

/// Prints an error as `error: ...`, any server detail, and a `hint:` line. A closed pipe is
/// a quiet end and prints nothing.
pub fn report(error: &Error) {
    if error.kind == ErrorKind::ClosedPipe {
        return;
    }
    // A status or progress line still drawn would run into the error's first line.
    super::status_line::clear();
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {}", escape_line(&error.message));
    if let Some(detail) = &error.detail {
        let _ = writeln!(err, "server stderr (last lines):");
        for line in detail.lines() {
            let _ = writeln!(err, "  {}", escape_line(line));
        }
    }
    if let Some(hint) = &error.hint {
        let _ = writeln!(err, "hint: {}", escape_line(hint));
    }
}

/// Said once per command when a server asks for sampling.
pub const SAMPLING_NOTE: &str = "ferry: the server asked for sampling (an LLM completion), which ferry does not provide; refused";

/// Whether a question nobody can answer is answered with the defaults it offers
/// (`FERRY_ELICIT=defaults`, for automation that accepts them); otherwise it is declined.
pub fn answers_with_defaults() -> bool {
    std::env::var("FERRY_ELICIT").is_ok_and(|v| v == "defaults")
}

/// Accepts a form with its defaults, when every field it requires has one; else declines.
fn defaults_answer(params: &Value) -> Value {
    let elicitation = Elicitation::read(params);
    let schema = elicitation
        .requested_schema
        .as_ref()
        .and_then(SchemaView::new);
    let properties = schema.and_then(|s| s.properties());
    let required: Vec<&str> = schema.map(|s| s.required()).unwrap_or_default();
    let mut content = Map::new();
    for (name, prop) in properties.into_iter().flatten() {
        if let Some(default) = SchemaView::new(prop).and_then(|p| p.default()) {
            content.insert(name.clone(), default.clone());
        }
    }
    if elicitation.url.is_some() || required.iter().any(|r| !content.contains_key(*r)) {
        return json!({"action": "decline"});
    }
    json!({"action": "accept", "content": content})
}

/// Whether a person is at the terminal to answer questions.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Answers a server's requests for the person at this terminal: roots are the working
/// directory, elicitation is asked on the terminal (declined without one), sampling is refused
/// (said once), and progress is shown on stderr when it is a terminal.
pub struct TerminalHandler {
    cwd: Option<std::path::PathBuf>,
    interactive: bool,
    progress_shown: AtomicBool,
    sampling_noted: AtomicBool,
}

impl TerminalHandler {
    pub fn new() -> TerminalHandler {
        TerminalHandler {
            cwd: std::env::current_dir().ok(),
            interactive: interactive(),
            progress_shown: AtomicBool::new(false),
            sampling_noted: AtomicBool::new(false),
        }
    }

    /// Whether progress is worth asking for (someone watches stderr).
    pub fn shows_progress(&self) -> bool {
        std::io::stderr().is_terminal()
    }

    /// Clears a progress line left on the terminal.
    pub fn finish_progress(&self) {
        if self.progress_shown.swap(false, Ordering::SeqCst) {
            super::status_line::clear();
        }
    }
}

impl Default for TerminalHandler {
    fn default() -> Self {
        TerminalHandler::new()
    }
}

impl ClientHandler for TerminalHandler {
    fn capabilities(&self) -> Value {
        // A server that asks for roots anyway gets the working directory.
        crate::client::handler::declared_capabilities(
            self.interactive || answers_with_defaults(),
            false,
        )
    }

    fn answer<'a>(
        &'a self,
        method: &'a str,
        params: &'a Value,
    ) -> BoxFuture<'a, std::result::Result<Value, ClientRequestError>> {
        Box::pin(async move {
            match method {
                "roots/list" => Ok(roots_of(self.cwd.as_deref())),
                "elicitation/create" => {
                    if !self.interactive {
                        return Ok(answer_elicitation(params));
                    }
                    // The terminal is read off the runtime's thread, so Ctrl-C is still heard.
                    let params = params.clone();
                    Ok(tokio::task::spawn_blocking(move || elicit(&params))
                        .await
                        .unwrap_or_else(|_| json!({"action": "cancel"})))
                }
                "sampling/createMessage" => {
                    if !self.sampling_noted.swap(true, Ordering::SeqCst) {
                        warn(SAMPLING_NOTE);
                    }
                    Err(sampling_refused())
                }
                _ => Err(not_supported(method)),
            }
        })
    }

    fn progress(&self, params: &Value) {
        if !self.shows_progress() {
            return;
        }
        self.progress_shown.store(true, Ordering::SeqCst);
        super::status_line::show(&progress_line(params));
    }
}

/// A progress notification as the one line shown on a terminal (it replaces the last).
pub fn progress_line(params: &Value) -> String {
    let progress = Progress::read(params);
    let done = progress
        .progress
        .as_ref()
        .and_then(Value::as_f64)
        .unwrap_or(0.0);
    let total = progress.total.as_ref().and_then(Value::as_f64);
    let message = progress
        .message
        .as_deref()
        .map(|m| format!(" {}", escape_line(m)))
        .unwrap_or_default();
    let figure = match total {
        Some(total) if total > 0.0 => format!("{done}/{total}"),
        _ => format!("{done}"),
    };
    format!("progress {figure}{message}")
        .chars()
        .take(100)
        .collect()
}

/// The answer to an elicitation from this process: asked at the terminal when a person is
/// there, else the defaults (`FERRY_ELICIT=defaults`) or a decline. Blocks on the terminal.
pub fn answer_elicitation(params: &Value) -> Value {
    if !interactive() {
        return if answers_with_defaults() {
            defaults_answer(params)
        } else {
            json!({"action": "decline"})
        };
    }
    elicit(params)
}

/// Asks the person at the terminal for the fields a server requests.
fn elicit(params: &Value) -> Value {
    let elicitation = Elicitation::read(params);
    let message = elicitation
        .message
        .as_deref()
        .unwrap_or("The server asks for input.");
    // The status line stays away while the person answers, so the prompt stays on screen.
    let _question = super::status_line::question();
    let mut err = std::io::stderr();
    let _ = writeln!(err, "ferry: {}", escape_text(message));
    if let Some(url) = elicitation.url() {
        let _ = writeln!(err, "open: {}", escape_line(url));
        let _ = write!(err, "press Enter when done, or type 'no' to decline: ");
        let _ = err.flush();
        let answer = read_line();
        return if answer.as_deref().map(str::trim) == Some("no") {
            json!({"action": "decline"})
        } else {
            json!({"action": "accept"})
        };
    }
    let schema = crate::schema::ToolSchema::from_input_schema(
        elicitation
            .requested_schema
            .as_ref()
            .unwrap_or(&Value::Null),
    );
    let mut content = Map::new();
    for prop in &schema.props {
        // An answer that does not fit is asked again (a few times), never sent as text.
        let mut misfits = 0;
        loop {
            let _ = write!(
                err,
                "{}{} ({}): ",
                escape_line(&prop.name),
                if prop.required { "" } else { " [optional]" },
                escape_line(&answer_kind(&prop.shape))
            );
            let _ = err.flush();
            let Some(answer) = read_line() else {
                return json!({"action": "cancel"});
            };
            let answer = answer.trim();
            if answer.is_empty() {
                if prop.required {
                    return json!({"action": "decline"});
                }
                break;
            }
            match fitting_answer(&schema, prop, answer) {
                Ok(value) => {
                    content.insert(prop.name.clone(), value);
                    break;
                }
                Err(why) => {
                    // The field's name is the server's, the answer the person's: both escaped.
                    let why = escape_line(&why.to_string()).into_owned();
                    misfits += 1;
                    if misfits >= ANSWER_TRIES {
                        let _ = writeln!(
                            err,
                            "ferry: {why}; declined after {ANSWER_TRIES} answers that did not fit"
                        );
                        return json!({"action": "decline"});
                    }
                    let _ = writeln!(err, "ferry: {why}; answer again");
                }
            }
        }
    }
    json!({"action": "accept", "content": content})
}

/// How many answers that do not fit a field are asked again before the form is declined.
const ANSWER_TRIES: usize = 3;

/// Why a typed answer does not fit its field, as the person reads it.
#[derive(Debug, thiserror::Error)]
enum Misfit {
    #[error("{0}: answer y or n")]
    YesNo(String),
    #[error("{}", .0.message())]
    Schema(crate::schema::validate::Violation),
}

/// The answer as the value its field takes, checked against the field's schema.
fn fitting_answer(
    schema: &crate::schema::ToolSchema,
    prop: &crate::schema::Prop,
    answer: &str,
) -> Result<Value, Misfit> {
    let value = answer_value(&prop.shape, answer);
    if prop.shape.kind == crate::schema::Kind::Bool && !value.is_boolean() {
        return Err(Misfit::YesNo(prop.name.clone()));
    }
    crate::schema::validate::check_value(schema, &prop.shape, &value, &prop.name, 0)
        .map_err(Misfit::Schema)?;
    Ok(value)
}

/// The values of a field that is a choice (an enum, or a union of constants), in the order
/// the prompt lists them.
fn choices(shape: &crate::schema::Shape) -> Option<Vec<Value>> {
    use crate::schema::Kind;
    match &shape.kind {
        Kind::Enum(values) => Some(values.clone()),
        Kind::Union(variants) if variants.iter().all(|v| matches!(v.kind, Kind::Const(_))) => Some(
            variants
                .iter()
                .filter_map(|v| match &v.kind {
                    Kind::Const(value) => Some(value.clone()),
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

/// One choice as typed: its value, its title or its value in any case, or its place in the
/// listed choices (`2` for the second).
fn choice(shape: &crate::schema::Shape, values: &[Value], typed: &str) -> Option<Value> {
    let written = |v: &Value| match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    values
        .iter()
        .find(|v| written(v) == typed)
        .or_else(|| {
            shape
                .titles
                .iter()
                .find(|(_, title)| title.eq_ignore_ascii_case(typed))
                .map(|(v, _)| v)
        })
        .or_else(|| {
            values
                .iter()
                .find(|v| written(v).eq_ignore_ascii_case(typed))
        })
        .or_else(|| {
            typed
                .parse::<usize>()
                .ok()
                .filter(|n| (1..=values.len()).contains(n))
                .map(|n| &values[n - 1])
        })
        .cloned()
}

/// What an answer may be, as the prompt says it: `y/n` for a yes-or-no question, the choices
/// of an enum (each with its title, where it has one), else the type.
fn answer_kind(shape: &crate::schema::Shape) -> String {
    use crate::schema::Kind;
    if let Some(titled) = crate::render::tool::titled_type(shape) {
        return titled;
    }
    match &shape.kind {
        Kind::Bool => "y/n".to_string(),
        Kind::Array(item) if choices(item).is_some() => {
            format!("{}; several: a,b", answer_kind(item))
        }
        Kind::Enum(values) => values
            .iter()
            .map(crate::schema::render_value)
            .collect::<Vec<_>>()
            .join("|"),
        Kind::Union(variants) if variants.iter().all(|v| matches!(v.kind, Kind::Const(_))) => {
            variants
                .iter()
                .filter_map(|v| match &v.kind {
                    Kind::Const(value) => Some(crate::schema::render_value(value)),
                    _ => None,
                })
                .collect::<Vec<_>>()
                .join("|")
        }
        _ => crate::schema::render_type(shape),
    }
}

/// An answer typed at the terminal as the value the form wants: y/yes/true and n/no/false for
/// a yes-or-no question, text for text and choices, JSON where it parses, else text.
fn answer_value(shape: &crate::schema::Shape, answer: &str) -> Value {
    use crate::schema::Kind;
    match &shape.kind {
        Kind::Bool => match answer.to_ascii_lowercase().as_str() {
            "y" | "yes" | "true" => Value::Bool(true),
            "n" | "no" | "false" => Value::Bool(false),
            _ => Value::String(answer.to_string()),
        },
        // Several choices: separated by commas (or a JSON list).
        Kind::Array(item) if choices(item).is_some() => {
            if let Ok(list @ Value::Array(_)) = serde_json::from_str(answer) {
                return list;
            }
            let values = choices(item).unwrap_or_default();
            Value::Array(
                answer
                    .split(',')
                    .map(str::trim)
                    .filter(|w| !w.is_empty())
                    .map(|w| choice(item, &values, w).unwrap_or_else(|| Value::String(w.into())))
                    .collect(),
            )
        }
        // A choice by its value, its title (`Dogs` for `pet-2`) or its place in the list.
        _ if choices(shape).is_some() => choice(shape, &choices(shape).unwrap_or_default(), answer)
            .unwrap_or_else(|| Value::String(answer.to_string())),
        Kind::Str => Value::String(answer.to_string()),
        _ => serde_json::from_str(answer).unwrap_or_else(|_| Value::String(answer.to_string())),
    }
}

fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line),
    }
}

#[cfg(test)]
mod answer_tests {
    use super::*;
    use crate::schema::ToolSchema;

    fn shape(schema: Value) -> crate::schema::Shape {
        ToolSchema::from_input_schema(&json!({"properties": {"x": schema}})).props[0]
            .shape
            .clone()
    }

    #[test]
    fn yes_no_questions_take_y_yes_n_no() {
        let confirm = shape(json!({"type": "boolean"}));
        assert_eq!(answer_kind(&confirm), "y/n");
        for (typed, value) in [
            ("y", true),
            ("yes", true),
            ("YES", true),
            ("n", false),
            ("no", false),
            ("true", true),
        ] {
            assert_eq!(answer_value(&confirm, typed), Value::Bool(value), "{typed}");
        }
    }

    #[test]
    fn enums_list_their_choices_titled_or_not() {
        assert_eq!(
            answer_kind(&shape(json!({"type": "string", "enum": ["a", "b"]}))),
            "a|b"
        );
        let raw = json!({"type": "string", "oneOf": [
            {"const": "red", "title": "Red light"}, {"const": "green", "title": "green"}]});
        assert_eq!(answer_kind(&shape(raw)), "red (Red light)|green");
        let legacy =
            shape(json!({"type": "string", "enum": ["p1", "p2"], "enumNames": ["Cats", "Dogs"]}));
        assert_eq!(answer_kind(&legacy), "p1 (Cats)|p2 (Dogs)");
        assert_eq!(answer_value(&legacy, "dogs"), json!("p2"));
    }

    /// The value a typed answer gives its field, or why it does not fit, as one JSON value
    /// (`{"misfit": why}`) so each case reads as one comparison.
    fn fits(schema: Value, typed: &str) -> Value {
        let schema = ToolSchema::from_input_schema(&json!({"properties": {"x": schema}}));
        fitting_answer(&schema, &schema.props[0], typed)
            .unwrap_or_else(|why| json!({"misfit": why.to_string()}))
    }

    #[test]
    fn an_answer_that_does_not_fit_its_field_is_refused() {
        let misfit = |why: &str| json!({ "misfit": why });
        assert_eq!(
            fits(json!({"type": "boolean"}), "Ada"),
            misfit("x: answer y or n")
        );
        assert_eq!(fits(json!({"type": "boolean"}), "no"), json!(false));
        assert_eq!(
            fits(json!({"type": "integer"}), "abc"),
            misfit("x expects an integer, not \"abc\"")
        );
        assert_eq!(fits(json!({"type": "integer"}), "42"), json!(42));
        assert_eq!(
            fits(json!({"type": "integer", "maximum": 9}), "42"),
            misfit("x expects a value <= 9, not 42")
        );
        let pick = json!({"type": "string", "enum": ["Monica", "Joey"]});
        assert_eq!(
            fits(pick.clone(), "Bob"),
            misfit("x expects one of Monica, Joey, not \"Bob\"")
        );
        assert_eq!(fits(pick.clone(), "2"), json!("Joey"));
        assert_eq!(fits(pick, "joey"), json!("Joey"));
        let titled = json!({"type": "string", "oneOf": [
            {"const": "hero-1", "title": "Superman"}, {"const": "hero-2", "title": "Green Lantern"}]});
        assert_eq!(fits(titled.clone(), "green lantern"), json!("hero-2"));
        assert!(fits(titled, "hero-9").get("misfit").is_some());
        let several = json!({"type": "array", "items": {"type": "string", "enum": ["Guitar", "Sitar", "Drums"]}});
        assert_eq!(
            fits(several.clone(), "Guitar, Sitar"),
            json!(["Guitar", "Sitar"])
        );
        assert!(fits(several, "Guitar,Banjo").get("misfit").is_some());
    }
}
