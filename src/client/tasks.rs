//! Tool calls that run as tasks, in the form each era's servers speak:
//!
//! - 2025-11-25 (in-core, experimental): a server that declares `tasks.requests.tools.call`
//!   runs a tool whose `execution.taskSupport` is `required` (or `optional`, when asked) as a
//!   task if the call carries a `task` param; it answers `{task}`, `tasks/get` polls, and
//!   `tasks/result` waits for the end and carries the task's questions (elicitation) meanwhile.
//! - 2026-07-28 (the tasks extension, SEP-2663): the client declares
//!   `io.modelcontextprotocol/tasks` on each request and the server decides, answering
//!   `resultType: "task"`; `tasks/get` carries the questions (`inputRequests`, answered with
//!   `tasks/update`) and, at the end, the result or the error.
//!
//! The CLI waits for a task ([`wait`]), leaves it running (`--detach`) or looks at it once
//! ([`fetch`]). A wait that is abandoned (Ctrl-C, a timeout) cancels the task.

use super::session::{answer_input_requests, Era, RequestContext, Session};
use crate::protocol::messages::{ResultKind, TaskView};
use crate::protocol::tools::Tool;
use crate::protocol::RpcError;
pub use crate::protocol::TaskStatus as Status;
use crate::render::text::escape_line;
use crate::{Error, Result};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;

pub use crate::protocol::task_status::EXTENSION;
/// The poll interval when a server suggests none.
const DEFAULT_POLL: Duration = Duration::from_millis(500);
/// Bounds on a server's suggested poll interval: no busy loop, and no long blind spot.
const POLL_BOUNDS: (Duration, Duration) = (Duration::from_millis(50), Duration::from_secs(5));

/// Where a task's status goes each time it is read (a terminal's status line).
pub type StatusSink<'a> = &'a (dyn Fn(&Task) + Send + Sync);

/// A task as the server last described it.
#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub status: Status,
    pub message: Option<String>,
    /// How long the server keeps the task from its creation (`None`: unlimited or unsaid).
    pub ttl: Option<Duration>,
    poll: Duration,
    /// What the description carries beyond the status (2026-07-28): `result`, `error`,
    /// `inputRequests`.
    body: Value,
}

impl Task {
    /// Reads a task description (a `Task` of either era), or says what is wrong with it.
    fn read(body: Value, server: &str) -> Result<Task> {
        let malformed = |what: &str| {
            Error::server(format!("{server} sent a task ferry cannot read: {what}"))
                .with_hint("run the same command with --verbose to see what it sent")
        };
        let view = TaskView::read(&body);
        let id = match view.task_id.clone() {
            Some(id) if !id.is_empty() => id,
            _ => return Err(malformed("it has no \"taskId\" string")),
        };
        let status = view
            .status
            .as_deref()
            .ok_or_else(|| malformed("it has no \"status\""))?;
        let status = Status::parse(status).ok_or_else(|| {
            malformed(&format!(
                "its status {:?} is none of the five",
                escape_line(status)
            ))
        })?;
        let poll = view
            .poll_ms()
            .map_or(DEFAULT_POLL, Duration::from_millis)
            .clamp(POLL_BOUNDS.0, POLL_BOUNDS.1);
        let ttl = view.ttl_ms().map(Duration::from_millis);
        Ok(Task {
            id,
            status,
            ttl,
            message: view.status_message.clone(),
            poll,
            body,
        })
    }

    /// The description as the server sent it.
    pub fn body(&self) -> &Value {
        &self.body
    }

    /// One line: the status, and the server's message when it has one.
    pub fn line(&self) -> String {
        match &self.message {
            Some(message) => format!("{}: {}", self.status.name(), escape_line(message)),
            None => self.status.name().to_string(),
        }
    }
}

/// What a `tools/call` came back with.
pub enum Called {
    /// The tool's result (or what the server sent), as for any call.
    Done(Value),
    /// A task that will have the result.
    Task(Task),
}

/// What looking at a task once found.
pub enum Fetched {
    /// It runs (or waits for input).
    Running(Task),
    /// It ended: the tool's result.
    Done(Value),
}

/// Whether a handshake-era call of `tool` must carry the `task` param: the server declared
/// task-augmented `tools/call` and the tool requires it, or allows it and the caller wants to
/// leave the task running (`detach`). The stateless era needs no such decision: the server
/// makes it.
pub fn augments(session: &Session, tool: &Tool, detach: bool) -> bool {
    if matches!(session.era(), Era::Stateless(_)) {
        return false;
    }
    let declared = session
        .description()
        .capabilities
        .pointer("/tasks/requests/tools/call")
        .is_some_and(|v| !v.is_null());
    let support = tool
        .raw
        .pointer("/execution/taskSupport")
        .and_then(Value::as_str);
    declared && (support == Some("required") || (detach && support == Some("optional")))
}

/// The context of a request that may meet a task (the extension declared).
fn with_tasks(context: &RequestContext) -> RequestContext {
    RequestContext {
        tasks: true,
        ..context.clone()
    }
}

/// Calls a tool (`params` as for `tools/call`), as a task where `augment` says so (handshake
/// era) or the server decides to (stateless era).
pub async fn call(
    session: &Session,
    mut params: Value,
    augment: bool,
    context: &RequestContext,
) -> Result<Called> {
    if augment {
        params["task"] = json!({});
    }
    let result = session
        .request_with("tools/call", params, &with_tasks(context))
        .await?;
    let kind = ResultKind::read(&result);
    let created = match kind.result_type.as_deref() {
        Some("task") => Some(result.clone()),
        // 2025-11-25: a CreateTaskResult holds the task under `task`.
        _ if augment && kind.content.is_none() => kind.task,
        _ => None,
    };
    match created {
        Some(task) => Ok(Called::Task(Task::read(task, session.name())?)),
        None => Ok(Called::Done(result)),
    }
}

/// Waits for a task's end, showing each status it reads to `status` and answering its
/// questions with the context's handler; the tool's result. The context's limit counts from
/// `started`, the call's start, as it would for a call that is not a task; a wait that ends
/// before the task does (the limit, Ctrl-C, a dropped caller) cancels the task.
pub async fn wait(
    session: &Session,
    task: Task,
    context: &RequestContext,
    status: StatusSink<'_>,
    started: tokio::time::Instant,
) -> Result<Value> {
    let context = with_tasks(context);
    let mut cancel = session.send_on_drop("tasks/cancel", json!({"taskId": task.id}), &context);
    let limit = context.timeout;
    let following = follow(session, task, &context, status);
    let outcome = tokio::time::timeout_at(started + limit, following).await;
    let timed_out = || {
        Error::timeout(format!(
            "{} did not finish the task within {}s; it was cancelled",
            session.name(),
            limit.as_secs_f64()
        ))
        .with_hint(
            "raise the limit with --timeout SECONDS, or leave the task running with --detach",
        )
    };
    match outcome {
        Err(_) => Err(timed_out()),
        // A request of the wait that ran out of time ran out of the wait's.
        Ok(Err(e)) if e.kind == crate::ErrorKind::Timeout => Err(timed_out()),
        Ok(Err(e)) => Err(e),
        Ok(Ok(result)) => {
            // The task has ended: nothing is left to cancel.
            cancel.disarm();
            Ok(result)
        }
    }
}

/// Looks at a task once: how it runs, or, when it has ended, its result. A 2026-07-28 task
/// waiting on questions has them answered (with the context's handler) and is looked at again.
pub async fn fetch(session: &Session, id: &str, context: &RequestContext) -> Result<Fetched> {
    let context = with_tasks(context);
    let mut task = get(session, id, &context).await?;
    if task.status == Status::InputRequired && matches!(session.era(), Era::Stateless(_)) {
        answer_questions(session, &task, &mut HashSet::new(), &context).await?;
        task = get(session, id, &context).await?;
    }
    if !task.status.is_terminal() {
        return Ok(Fetched::Running(task));
    }
    ended(session, task, &context).await.map(Fetched::Done)
}

/// `tasks/get`, read.
async fn get(session: &Session, id: &str, context: &RequestContext) -> Result<Task> {
    let body = session
        .request_with("tasks/get", json!({"taskId": id}), context)
        .await
        .map_err(|e| match e.hint {
            None if matches!(e.kind, crate::ErrorKind::Server | crate::ErrorKind::Usage) => {
                e.with_hint(unknown_task_hint(session))
            }
            _ => e,
        })?;
    let task = Task::read(body, session.name())?;
    if task.id != id {
        return Err(Error::server(format!(
            "{} answered tasks/get for task {} with task {}",
            session.name(),
            escape_line(id),
            escape_line(&task.id)
        )));
    }
    Ok(task)
}

/// What to do about a task the server does not know.
fn unknown_task_hint(session: &Session) -> String {
    if session.is_stdio() {
        "a stdio server's tasks live in its process: only the warm server that ran the call has \
         it, until it is stopped (idleTimeout, `ferry daemon stop`) or the task expires"
            .into()
    } else if let Era::Handshake(_) = session.era() {
        "this server keeps a task in the session that made it: only the warm session that ran \
         the call has it, until it is stopped (idleTimeout, `ferry daemon stop`) or the task \
         expires"
            .into()
    } else {
        "the server may have dropped the task (its ttl), or the id is another server's".into()
    }
}

/// Follows a task to its end: 2026-07-28 polls `tasks/get` at the server's interval,
/// answering its questions with `tasks/update`; 2025-11-25 waits on `tasks/result`.
async fn follow(
    session: &Session,
    mut task: Task,
    context: &RequestContext,
    status: StatusSink<'_>,
) -> Result<Value> {
    if let Era::Handshake(_) = session.era() {
        return follow_handshake(session, task, context, status).await;
    }
    let mut answered = HashSet::new();
    loop {
        status(&task);
        match task.status {
            s if s.is_terminal() => return ended(session, task, context).await,
            Status::InputRequired => {
                answer_questions(session, &task, &mut answered, context).await?
            }
            _ => {}
        }
        tokio::time::sleep(task.poll).await;
        task = get(session, &task.id, context).await?;
    }
}

/// 2025-11-25: `tasks/result` waits for the end and carries the task's questions; status is
/// polled beside it while someone watches.
async fn follow_handshake(
    session: &Session,
    task: Task,
    context: &RequestContext,
    status: StatusSink<'_>,
) -> Result<Value> {
    status(&task);
    if task.status.is_terminal() {
        return ended(session, task, context).await;
    }
    let result = session.request_with("tasks/result", json!({"taskId": task.id}), context);
    // Progress is asked for where someone watches: only then is the status worth polling.
    if !context.progress {
        return result.await;
    }
    let watch = async {
        let mut poll = task.poll;
        loop {
            tokio::time::sleep(poll).await;
            // A failed poll only means no news; the result says how the task ended.
            if let Ok(now) = get(session, &task.id, context).await {
                poll = now.poll;
                status(&now);
            }
        }
    };
    tokio::select! {
        result = result => result,
        never = watch => never,
    }
}

/// The result of a task that has ended, or the error it ended with.
async fn ended(session: &Session, task: Task, context: &RequestContext) -> Result<Value> {
    let name = session.name();
    match task.status {
        Status::Cancelled => Err(Error::server(format!(
            "{name}'s task was cancelled{}",
            task.message
                .as_deref()
                .map(|m| format!(": {}", escape_line(m)))
                .unwrap_or_default()
        ))),
        _ if matches!(session.era(), Era::Handshake(_)) => {
            session
                .request_with("tasks/result", json!({"taskId": task.id}), context)
                .await
        }
        Status::Completed => match TaskView::read(&task.body).result {
            Some(result @ Value::Object(_)) => Ok(result),
            _ => Err(Error::server(format!(
                "{name} says the task completed but sent no result object"
            ))),
        },
        _ => {
            let error = TaskView::read(&task.body)
                .error
                .filter(|e| e.is_object())
                .map(|e| RpcError::from_value(&e).to_string())
                .or(task.message.clone())
                .unwrap_or_else(|| "no reason given".into());
            Err(Error::server(format!(
                "{name}'s task failed: {}",
                escape_line(&error)
            )))
        }
    }
}

/// 2026-07-28: answers the questions a task waits on that were not answered yet, with
/// `tasks/update`.
async fn answer_questions(
    session: &Session,
    task: &Task,
    answered: &mut HashSet<String>,
    context: &RequestContext,
) -> Result<()> {
    let Some(requests) = TaskView::read(&task.body).input_requests else {
        return Ok(());
    };
    let responses =
        answer_input_requests(context, &requests, |key| answered.insert(key.to_string())).await;
    if responses.is_empty() {
        return Ok(());
    }
    session
        .request_with(
            "tasks/update",
            json!({"taskId": task.id, "inputResponses": responses}),
            context,
        )
        .await
        .map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tasks_of_both_eras_are_read() {
        let old = json!({"taskId": "t1", "status": "working", "statusMessage": "Gathering\nsources",
                         "ttl": 300000, "pollInterval": 1000});
        let task = Task::read(old, "s").unwrap();
        assert_eq!(task.poll, Duration::from_millis(1000));
        assert_eq!(task.line(), "working: Gathering\\nsources");
        let new = json!({"taskId": "t2", "status": "completed", "pollIntervalMs": 1, "result": {}});
        let task = Task::read(new, "s").unwrap();
        assert_eq!(task.poll, POLL_BOUNDS.0);
        assert!(task.status.is_terminal());
        assert_eq!(task.line(), "completed");
    }

    #[test]
    fn a_task_ferry_cannot_read_is_one_line_saying_why() {
        let error = Task::read(json!({"status": "working"}), "s").unwrap_err();
        assert_eq!(
            error.message,
            "s sent a task ferry cannot read: it has no \"taskId\" string"
        );
        let error = Task::read(json!({"taskId": "t", "status": "done"}), "s").unwrap_err();
        assert_eq!(
            error.message,
            "s sent a task ferry cannot read: its status \"done\" is none of the five"
        );
    }
}
