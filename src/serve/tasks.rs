//! Long calls as MCP tasks (the tasks extension, SEP-2663, in the 2026-07-28 era): a call of a
//! tool that says `task = true | "optional"` whose command runs on past a moment answers with
//! a task instead of holding its request; the client polls `tasks/get` (status, progress, the
//! questions its command asks, the result once done), answers with `tasks/update` and may
//! `tasks/cancel` (the command's whole process group is stopped). A task is kept for its
//! `ttlMs` from its creation, then dropped (a command still running then is stopped); its
//! entry goes a moment after its result has been fetched or it was cancelled (a client may
//! look once more), and when the table is full the task that ended longest ago makes room.
//! One client holds at most a share of the table.
//!
//! The call itself is the one `serve::rounds` runs: a task takes over its events (questions,
//! progress, the end) when it outlives [`TASK_AFTER`].
//!
//! A task lives in the instance that runs its command. Behind a load balancer its id starts
//! with the instance's name (`--instance`), and requests about it carry the id in `Mcp-Name`,
//! so the balancer can route them there; another instance says whose task it is.

use super::ask::ClientRequest;
use crate::protocol::params::Params;
use crate::protocol::{self, RpcError, TaskStatus as Status};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};
use tokio::sync::oneshot;

pub use crate::protocol::task_status::EXTENSION;
/// How long a task tool's call may run (without finishing or asking) before it becomes a task.
pub const TASK_AFTER: Duration = Duration::from_millis(500);
/// How long a task is kept from its creation.
pub const TTL: Duration = Duration::from_secs(60 * 60);
/// How often a client is asked to poll.
const POLL: Duration = Duration::from_millis(500);
/// How long a task is kept once its result was fetched or it was cancelled.
const FETCHED_KEPT: Duration = Duration::from_secs(30);
/// How many tasks are kept at once, and how many of one client.
const MAX_TASKS: usize = 1000;
const MAX_TASKS_PER_CLIENT: usize = 100;

/// Whether a client's capabilities declare the tasks extension.
pub fn client_has_tasks(capabilities: &Value) -> bool {
    capabilities
        .pointer(&format!("/extensions/{}", EXTENSION.replace('/', "~1")))
        .is_some_and(|v| !v.is_null())
}

/// The error for a client that did not declare the extension a request needs.
pub fn missing_extension(what: &str) -> RpcError {
    RpcError {
        code: protocol::MISSING_CAPABILITY,
        message: format!("{what} needs the client to declare the {EXTENSION} extension"),
        data: Some(json!({"requiredCapabilities": {"extensions": {EXTENSION: {}}}})),
    }
}

/// A question a task's command waits on.
pub struct Question {
    pub key: String,
    pub request: ClientRequest,
    pub reply: oneshot::Sender<Result<Value, super::ask::Unanswered>>,
}

/// What a task reports as it runs.
pub enum Progress {
    Asked(Question),
    Message(String),
    Done(Result<Value, RpcError>),
}

struct Task {
    created: SystemTime,
    updated: SystemTime,
    status: Status,
    message: Option<String>,
    pending: Vec<Question>,
    result: Option<Value>,
    error: Option<RpcError>,
    /// Stops the call's work (its command's process group with it).
    stop: Option<tokio::task::AbortHandle>,
    /// Who made it, for the client's share of the table.
    client: String,
    /// When it is dropped: its `ttlMs` after creation, sooner once its result is fetched.
    expires: SystemTime,
}

/// The tasks of this server.
#[derive(Default)]
pub struct Tasks {
    table: Mutex<HashMap<String, Arc<Mutex<Task>>>>,
    /// The prefix of this instance's task ids (`NAME.`), empty when it has no name.
    prefix: String,
}

fn iso(time: SystemTime) -> String {
    let ms = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let (secs, millis) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, rest) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

fn unknown(id: &str) -> RpcError {
    let shown: String = id.chars().take(80).collect();
    RpcError {
        code: protocol::INVALID_PARAMS,
        message: format!("no task {shown:?} here (it may have expired, or be another server's)"),
        data: None,
    }
}

impl Tasks {
    /// The tasks of the instance called `instance` (their ids start with it).
    pub fn named(instance: &str) -> Tasks {
        Tasks {
            table: Mutex::default(),
            prefix: format!("{instance}."),
        }
    }

    /// A new task id; `None` when the random source fails (an id must not be guessable).
    fn new_id(&self) -> Option<String> {
        let mut bytes = [0u8; 16];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).ok()?;
        let random: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        Some(format!("{}{random}", self.prefix))
    }

    /// The error for an id this instance does not know: another instance's task is named so.
    fn not_here(&self, id: &str) -> RpcError {
        let owner = id.split_once('.').map(|(owner, _)| owner);
        match owner {
            Some(owner) if !self.prefix.is_empty() && !id.starts_with(&self.prefix) => {
                let owner: String = owner.chars().take(64).collect();
                RpcError {
                    code: protocol::INVALID_PARAMS,
                    message: format!("task {:?} runs on instance {owner:?}, not on this one ({:?}): send requests about it there (a balancer routes them by the Mcp-Name header's prefix)", id.chars().take(80).collect::<String>(), self.instance_name()),
                    data: Some(json!({"instance": owner})),
                }
            }
            _ => unknown(id),
        }
    }

    fn instance_name(&self) -> &str {
        self.prefix.trim_end_matches('.')
    }

    /// How many tasks are still running (a draining server waits for them).
    pub fn running(&self) -> usize {
        let table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        table
            .values()
            .filter(|t| {
                !t.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .status
                    .is_terminal()
            })
            .count()
    }

    /// Takes over a call as a new task: `reports` brings what it does from now on; `stop`
    /// ends its work. Returns the `CreateTaskResult`.
    pub fn create(
        self: &Arc<Self>,
        client: &str,
        mut reports: tokio::sync::mpsc::UnboundedReceiver<Progress>,
        stop: tokio::task::AbortHandle,
    ) -> Result<Value, RpcError> {
        let now = SystemTime::now();
        let refused = |message: &str| RpcError {
            code: protocol::INTERNAL_ERROR,
            message: message.into(),
            data: None,
        };
        let id = self
            .new_id()
            .ok_or_else(|| refused("no randomness for a task id: try again"))?;
        let task = Arc::new(Mutex::new(Task {
            created: now,
            updated: now,
            status: Status::Working,
            message: None,
            pending: Vec::new(),
            result: None,
            error: None,
            stop: Some(stop),
            client: client.to_string(),
            expires: now + TTL,
        }));
        {
            let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
            sweep(&mut table);
            let mine = table
                .values()
                .filter(|t| t.lock().unwrap_or_else(|e| e.into_inner()).client == client)
                .count();
            if mine >= MAX_TASKS_PER_CLIENT && !make_room(&mut table, Some(client)) {
                return Err(refused(
                    "this client has too many tasks running: fetch or cancel some first",
                ));
            }
            if table.len() >= MAX_TASKS && !make_room(&mut table, None) {
                return Err(refused("too many tasks are running; try again later"));
            }
            table.insert(id.clone(), task.clone());
        }
        let follow = task.clone();
        tokio::spawn(async move {
            while let Some(report) = reports.recv().await {
                let mut task = follow.lock().unwrap_or_else(|e| e.into_inner());
                if task.status.is_terminal() {
                    break;
                }
                task.updated = SystemTime::now();
                match report {
                    Progress::Asked(question) => {
                        task.pending.push(question);
                        task.status = Status::InputRequired;
                    }
                    Progress::Message(message) => task.message = Some(message),
                    Progress::Done(Ok(result)) => {
                        task.status = Status::Completed;
                        task.result = Some(result);
                        task.pending.clear();
                        task.stop = None;
                        break;
                    }
                    Progress::Done(Err(error)) => {
                        task.status = Status::Failed;
                        task.error = Some(error);
                        task.pending.clear();
                        task.stop = None;
                        break;
                    }
                }
            }
        });
        let task = task.lock().unwrap_or_else(|e| e.into_inner());
        let mut result = envelope(&id, &task);
        result["resultType"] = json!("task");
        Ok(result)
    }

    fn find(&self, params: &Value) -> Result<(String, Arc<Mutex<Task>>), RpcError> {
        let id = Params::new(params).task_id().ok_or_else(|| RpcError {
            code: protocol::INVALID_PARAMS,
            message: "this needs a \"taskId\"".into(),
            data: None,
        })?;
        let mut table = self.table.lock().unwrap_or_else(|e| e.into_inner());
        sweep(&mut table);
        table
            .get(id)
            .map(|t| (id.to_string(), t.clone()))
            .ok_or_else(|| self.not_here(id))
    }

    /// `tasks/get`: the task as it is now, its result or error once it has ended.
    pub fn get(&self, params: &Value) -> Result<Value, RpcError> {
        let (id, task) = self.find(params)?;
        let mut task = task.lock().unwrap_or_else(|e| e.into_inner());
        // Its result is the client's now: the entry soon makes room for other tasks.
        if task.status.is_terminal() {
            task.expires = task.expires.min(SystemTime::now() + FETCHED_KEPT);
        }
        let mut result = envelope(&id, &task);
        match task.status {
            Status::InputRequired => {
                let requests: Map<String, Value> = task
                    .pending
                    .iter()
                    .map(|q| {
                        (
                            q.key.clone(),
                            json!({"method": q.request.method, "params": q.request.params}),
                        )
                    })
                    .collect();
                result["inputRequests"] = Value::Object(requests);
            }
            Status::Completed => result["result"] = task.result.clone().unwrap_or(json!({})),
            Status::Failed => {
                let error = task.error.clone().unwrap_or(RpcError {
                    code: protocol::INTERNAL_ERROR,
                    message: "the task failed".into(),
                    data: None,
                });
                let mut shape = json!({"code": error.code, "message": error.message});
                if let Some(data) = error.data {
                    shape["data"] = data;
                }
                result["error"] = shape;
            }
            _ => {}
        }
        Ok(result)
    }

    /// `tasks/update`: answers to the task's questions, by key (a part of them is fine);
    /// answers to no question are ignored.
    pub fn update(&self, params: &Value) -> Result<Value, RpcError> {
        let (_, task) = self.find(params)?;
        let responses = match Params::new(params).input_responses_field() {
            Some(Value::Object(map)) => map.clone(),
            None | Some(Value::Null) => Map::new(),
            Some(_) => {
                return Err(RpcError {
                    code: protocol::INVALID_PARAMS,
                    message: "inputResponses must be an object of answers by key".into(),
                    data: None,
                })
            }
        };
        let mut task = task.lock().unwrap_or_else(|e| e.into_inner());
        let pending = std::mem::take(&mut task.pending);
        for question in pending {
            match responses.get(&question.key) {
                Some(answer @ Value::Object(_)) => {
                    let _ = question.reply.send(Ok(answer.clone()));
                }
                _ => task.pending.push(question),
            }
        }
        if task.status == Status::InputRequired && task.pending.is_empty() {
            task.status = Status::Working;
        }
        task.updated = SystemTime::now();
        Ok(json!({}))
    }

    /// `tasks/cancel`: stops a running task (its command's whole process group); a task that
    /// has ended stays as it was.
    pub fn cancel(&self, params: &Value) -> Result<Value, RpcError> {
        let (_, task) = self.find(params)?;
        let mut task = task.lock().unwrap_or_else(|e| e.into_inner());
        task.expires = task.expires.min(SystemTime::now() + FETCHED_KEPT);
        if !task.status.is_terminal() {
            if let Some(stop) = task.stop.take() {
                stop.abort();
            }
            task.status = Status::Cancelled;
            task.pending.clear();
            task.updated = SystemTime::now();
        }
        Ok(json!({}))
    }
}

/// Drops the tasks whose time is up, stopping any still running.
fn sweep(table: &mut HashMap<String, Arc<Mutex<Task>>>) {
    let now = SystemTime::now();
    table.retain(|_, task| {
        let mut task = task.lock().unwrap_or_else(|e| e.into_inner());
        let alive = task.expires > now;
        if !alive {
            if let Some(stop) = task.stop.take() {
                stop.abort();
            }
        }
        alive
    });
}

/// Drops the task (of `client`, or anyone's) that ended longest ago; false when none has
/// ended (every one still runs or waits for its client).
fn make_room(table: &mut HashMap<String, Arc<Mutex<Task>>>, client: Option<&str>) -> bool {
    let oldest = table
        .iter()
        .filter_map(|(id, task)| {
            let task = task.lock().unwrap_or_else(|e| e.into_inner());
            let theirs = client.is_none_or(|c| task.client == c);
            (theirs && task.status.is_terminal()).then(|| (task.updated, id.clone()))
        })
        .min();
    match oldest {
        Some((_, id)) => table.remove(&id).is_some(),
        None => false,
    }
}

/// What every view of a task carries.
fn envelope(id: &str, task: &Task) -> Value {
    let mut shape = json!({
        "taskId": id,
        "status": task.status.name(),
        "createdAt": iso(task.created),
        "lastUpdatedAt": iso(task.updated),
        "ttlMs": TTL.as_millis() as u64,
        "pollIntervalMs": POLL.as_millis() as u64,
    });
    if let Some(message) = &task.message {
        shape["statusMessage"] = json!(message);
    }
    shape
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_iso_8601_in_utc() {
        let time = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_633_600_123);
        assert_eq!(iso(time), "2025-12-02T00:00:00.123Z");
        assert_eq!(iso(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
    }

    #[test]
    fn the_extension_is_read_from_the_capabilities() {
        assert!(client_has_tasks(&json!({"extensions": {EXTENSION: {}}})));
        assert!(!client_has_tasks(&json!({"extensions": {}})));
        assert!(!client_has_tasks(&json!({})));
    }
}
