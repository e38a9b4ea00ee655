//! Talking back in the 2026-07-28 era (multi round-trip requests): a call whose command asks
//! (`ferry ask`, a tool's `confirm`) answers `input_required` with the questions and a signed
//! request state, while its command waits; the client's retry, carrying the answers and the
//! state, resumes it, and the call answers again: with its result, or with the next
//! questions. Calls waiting for answers are kept here, by id, for as long as their command
//! may run; the state names one round of one call and the request it belongs to, signed
//! (HMAC-SHA256) with this server's key, so a client can neither forge, swap nor replay it.
//!
//! Behind a load balancer the retry may reach another instance. Instances that share the key
//! (`--state-key-file`) accept each other's states: a command cannot move, so the request runs
//! again there with every answer the client gave so far (the state carries them). A state
//! replayed to another instance thus runs the request again, as a request carrying its answers
//! from the start would. Without a shared key the state fails its check, and the client is told
//! to send the request again.
//!
//! A state is good once. Each instance keeps the states it has taken (by their nonce) until
//! they expire, so a replay to it is refused. Without shared storage an instance cannot know
//! what another took: a state of a call that only asked what its command asks (`ferry ask`)
//! may thus run the request once more on each other instance, with the answers it carries, as
//! a request carrying those answers from the start would. A tool's `confirm` never travels:
//! its answer counts only in the round that asked it, on the instance whose call waits for it,
//! once; another instance refuses that state and an answer sent unasked is ignored.

use super::ask::{refusal, Asker, ClientRequest, Unanswered};
use super::provider::Notifier;
use crate::protocol::lenient;
use crate::protocol::messages::Progress as ProgressParams;
use crate::protocol::params::Params;
use crate::protocol::{self, BoxFuture, MessageView, RpcError};
use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot};

/// How long the call must ask nothing more before its questions go to the client, so that
/// questions a command asks together (`ferry ask ... &`) go in one round; and the longest a
/// round waits for them. A round goes sooner when no more can come at once: the questions are
/// ferry's own (`confirm`), or every process of the command sleeps, each look [`LOOK`] apart.
const QUIET: Duration = Duration::from_millis(150);
const GATHER_AT_MOST: Duration = Duration::from_millis(1500);
const LOOK: Duration = Duration::from_millis(4);
/// How long a round's state stays good, and its call waits for the retry.
const STATE_TTL: Duration = Duration::from_secs(15 * 60);
/// How many calls may wait for answers at once, and how many of one client.
const MAX_WAITING: usize = 1000;
const MAX_WAITING_PER_CLIENT: usize = 100;
/// How often calls whose state has expired are dropped (their commands stopped).
const SWEEP_EVERY: Duration = Duration::from_secs(10);
/// How many taken states are remembered at most (each until it expires).
const MAX_SPENT: usize = 100_000;
/// How many answers to questions not asked yet a call keeps.
const ASKS_KEPT: usize = super::ask::ASKS_PER_CALL;
/// The most answers (serialised) a state carries for another instance; past it they are left
/// out, and a call run again there asks them again.
const ANSWERS_CARRIED: usize = 64 * 1024;

/// What a client's answer comes back as to whoever asked.
type Reply = oneshot::Sender<Result<Value, Unanswered>>;

/// What a running call reports.
enum Event {
    Asked(ClientRequest, Reply),
    Done(Result<Value, RpcError>),
}

/// A request waiting for the client.
struct Pending {
    key: String,
    request: ClientRequest,
    reply: Reply,
}

/// A call between rounds.
struct Waiting {
    events: mpsc::UnboundedReceiver<Event>,
    pending: Vec<Pending>,
    round: u64,
    /// What the state is bound to: the request's method and salient parameters.
    bound: String,
    /// Every answer the client has given this call, carried in its state so another instance
    /// can run the request again without asking them anew.
    answered: Map<String, Value>,
    expires: Instant,
    /// Who asked, for the client's share of waiting calls.
    client: String,
    shared: Arc<Shared>,
    /// Stops the call's work when the call is dropped unanswered.
    task: AbortOnDrop,
    /// Where the call goes when it outlives a request, for a tool that may run as a task and
    /// a client that declared the extension.
    tasks: Option<Arc<super::tasks::Tasks>>,
}

/// What a running call's asker and notifier read, updated each round.
struct Shared {
    capabilities: Mutex<Value>,
    notify: Mutex<Notifier>,
    /// Answers the client gave before their questions were asked (a request may carry
    /// `inputResponses` from the start): a question with one of these keys is answered at once.
    given: Mutex<Map<String, Value>>,
    /// Who may ask next.
    asking: Mutex<Option<super::ask::Asking>>,
}

impl Shared {
    fn asking_is_ferry(&self) -> bool {
        *self.asking.lock().unwrap_or_else(|e| e.into_inner()) == Some(super::ask::Asking::Ferry)
    }

    /// Whether no more questions can come at once: ferry's own question is alone, and a
    /// command whose every process sleeps is waiting (for its answers, or for time).
    fn settled(&self) -> bool {
        match *self.asking.lock().unwrap_or_else(|e| e.into_inner()) {
            Some(super::ask::Asking::Ferry) => true,
            Some(super::ask::Asking::Group(group)) => crate::procfs::group_sleeps(group),
            None => false,
        }
    }
}

struct AbortOnDrop(Option<tokio::task::AbortHandle>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(handle) = self.0.take() {
            handle.abort();
        }
    }
}

type Table = Arc<Mutex<HashMap<u64, Waiting>>>;

/// The calls waiting for answers, and the key their states are signed with.
pub struct Rounds {
    /// `None` when no key could be made: no state is then signed or accepted.
    key: Option<ring::hmac::Key>,
    /// This instance's name in its states: a state of another instance's call is run again.
    instance: String,
    waiting: Table,
    /// The nonces of other instances' states taken here, with their expiry (ms).
    spent: Mutex<HashMap<String, u64>>,
    next: std::sync::atomic::AtomicU64,
    sweeping: std::sync::Once,
}

impl Default for Rounds {
    fn default() -> Rounds {
        let mut key = [0u8; 32];
        // A key of zeros would let anyone forge a state: without randomness there is none.
        match ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut key) {
            Ok(()) => Rounds::with_key(&key, ""),
            Err(_) => Rounds {
                key: None,
                ..Rounds::with_key(&[], "")
            },
        }
    }
}

/// A random nonce for a state; `None` when the random source fails.
fn nonce() -> Option<String> {
    let mut bytes = [0u8; 12];
    ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut bytes).ok()?;
    Some(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The asker a call of this era gets: its questions become the call's events.
struct RoundAsker {
    events: mpsc::UnboundedSender<Event>,
    shared: Arc<Shared>,
}

impl Asker for RoundAsker {
    fn request(&self, request: ClientRequest) -> BoxFuture<'_, Result<Value, Unanswered>> {
        Box::pin(async move {
            let capabilities = self
                .shared
                .capabilities
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if let Some(why) = refusal(&capabilities, &request.method) {
                return Err(why);
            }
            // ferry's own question (a tool's `confirm`) counts only an answer to it, given in
            // the round that asked it: never one sent before it was asked.
            let gate = self.shared.asking_is_ferry();
            if let Some(key) = request.key.as_ref().filter(|_| !gate) {
                let given = self
                    .shared
                    .given
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(key);
                if let Some(result @ Value::Object(_)) = given {
                    return Ok(result);
                }
            }
            let (reply, answer) = oneshot::channel();
            if self.events.send(Event::Asked(request, reply)).is_err() {
                return Err(Unanswered::CallOver);
            }
            answer.await.unwrap_or_else(|_| Err(Unanswered::CallEnded))
        })
    }

    fn watch(&self, asking: super::ask::Asking) {
        *self.shared.asking.lock().unwrap_or_else(|e| e.into_inner()) = Some(asking);
    }
}

fn invalid(message: impl Into<String>) -> RpcError {
    RpcError {
        code: protocol::INVALID_PARAMS,
        message: message.into(),
        data: None,
    }
}

/// What a request's state carries, signed: the call (`c`) and its round (`r`), when it
/// expires (`x`, ms), what request it belongs to (`b`), the instance that signed it (`i`), a
/// nonce (`n`), whether ferry's own question waits on it (`g`), and the answers so far (`a`).
/// Read leniently: a state is genuine before it is read, and what it lacks reads as absent.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Claims {
    #[serde(default, deserialize_with = "lenient::or_default")]
    c: u64,
    #[serde(default, deserialize_with = "lenient::or_default")]
    r: u64,
    #[serde(
        default,
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    x: Option<u64>,
    #[serde(
        default,
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    b: Option<String>,
    #[serde(default, deserialize_with = "lenient::or_default")]
    i: String,
    #[serde(default, deserialize_with = "lenient::or_default")]
    n: String,
    #[serde(
        default,
        deserialize_with = "lenient::or_default",
        skip_serializing_if = "std::ops::Not::not"
    )]
    g: bool,
    #[serde(
        default,
        deserialize_with = "lenient::opt",
        skip_serializing_if = "Option::is_none"
    )]
    a: Option<Map<String, Value>>,
}

/// What a request's state is bound to: its method and parameters, less what changes from
/// round to round (the answers, the state, `_meta`), with keys in a stable order.
fn binding(method: &str, params: &Value) -> String {
    let mut salient = params.as_object().cloned().unwrap_or_default();
    for key in ["inputResponses", "requestState", "_meta", "task"] {
        salient.remove(key);
    }
    let text = format!(
        "{method}\n{}",
        crate::protocol::sorted_keys(&Value::Object(salient))
    );
    let digest = ring::digest::digest(&ring::digest::SHA256, text.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest.as_ref()[..16])
}

impl Rounds {
    /// Rounds whose states are signed with `key` and name `instance` (instances that share a
    /// key accept each other's states).
    pub fn with_key(key: &[u8], instance: &str) -> Rounds {
        Rounds {
            key: Some(ring::hmac::Key::new(ring::hmac::HMAC_SHA256, key)),
            instance: instance.to_string(),
            waiting: Arc::default(),
            spent: Mutex::default(),
            next: std::sync::atomic::AtomicU64::new(1),
            sweeping: std::sync::Once::new(),
        }
    }

    /// These rounds, their states naming `instance`.
    pub fn named(self, instance: &str) -> Rounds {
        Rounds {
            instance: instance.to_string(),
            ..self
        }
    }

    /// Runs one supported request (`tools/call`, `prompts/get`, `resources/read`) of this
    /// era: a new call, or (with `requestState`) the next round of one waiting here.
    /// `start` starts the call's work with the asker and notifier it is given; `client`
    /// names who asks, for its share of waiting calls and tasks.
    #[allow(clippy::too_many_arguments)]
    pub async fn run(
        &self,
        client: &str,
        method: &str,
        params: &Value,
        capabilities: Value,
        notify: Notifier,
        tasks: Option<Arc<super::tasks::Tasks>>,
        start: impl FnOnce(Arc<dyn Asker>, Notifier) -> tokio::task::JoinHandle<Result<Value, RpcError>>,
    ) -> Result<Value, RpcError> {
        self.sweep_on_a_timer();
        let mut given = Map::new();
        let view = Params::new(params);
        if let Some(state) = view.request_state() {
            let claims = self.check(method, params, state)?;
            let instance = claims.i.as_str();
            if instance == self.instance {
                return self.resume(params, &claims, capabilities, notify).await;
            }
            if claims.g {
                let owner: String = instance.chars().take(64).collect();
                return Err(invalid(format!(
                    "requestState answers a confirmation that instance {owner:?} asked, and only that instance takes its answer: send the retry there, or send the request again without requestState to be asked anew"
                )));
            }
            self.spend(&claims)?;
            // Another instance's call: its command cannot move, so the request runs again
            // here, every answer given so far at hand.
            if let Some(answered) = &claims.a {
                given = answered.clone();
            }
        }
        if let Some(map) = view.input_responses() {
            given.extend(map.clone());
        }
        let answered = given.clone();
        let shared = Arc::new(Shared {
            capabilities: Mutex::new(capabilities),
            notify: Mutex::new(notify),
            given: Mutex::new(given),
            asking: Mutex::new(None),
        });
        let (events, events_in) = mpsc::unbounded_channel();
        let asker = Arc::new(RoundAsker {
            events: events.clone(),
            shared: shared.clone(),
        });
        let forwarding = shared.clone();
        let notifier: Notifier = Arc::new(move |message| {
            let current = forwarding
                .notify
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            current(message)
        });
        let task = start(asker, notifier);
        let abort = AbortOnDrop(Some(task.abort_handle()));
        tokio::spawn(async move {
            let outcome = task.await.unwrap_or_else(|_| {
                Err(RpcError {
                    code: protocol::INTERNAL_ERROR,
                    message: "the call was stopped".into(),
                    data: None,
                })
            });
            let _ = events.send(Event::Done(outcome));
        });
        let call = Waiting {
            events: events_in,
            pending: Vec::new(),
            round: 0,
            bound: binding(method, params),
            answered,
            expires: Instant::now() + STATE_TTL,
            client: client.to_string(),
            shared,
            task: abort,
            tasks,
        };
        self.next_round(call).await
    }

    /// Waits for the call's next event: its result, or questions (gathered briefly, then
    /// handed to the client as an input-required round while the call waits here).
    async fn next_round(&self, mut call: Waiting) -> Result<Value, RpcError> {
        if call.pending.is_empty() {
            // A call that may become a task does, once it has run a moment without finishing
            // or asking.
            let escalate = async {
                match &call.tasks {
                    Some(_) => tokio::time::sleep(super::tasks::TASK_AFTER).await,
                    None => std::future::pending().await,
                }
            };
            let first = tokio::select! {
                event = call.events.recv() => event,
                _ = escalate => return into_task(call),
            };
            match first {
                Some(Event::Done(outcome)) => return outcome,
                Some(Event::Asked(request, reply)) => add(&mut call.pending, request, reply),
                None => return Err(invalid("the call ended without a result")),
            }
            let until = tokio::time::Instant::now() + GATHER_AT_MOST;
            let mut last = tokio::time::Instant::now();
            // Two looks in a row that find the command settled close the round early.
            let mut settled = 0;
            while settled < 2 {
                let now = tokio::time::Instant::now();
                if now >= until || now.duration_since(last) >= QUIET {
                    break;
                }
                let settled_now = call.shared.settled();
                if settled_now && call.shared.asking_is_ferry() {
                    break;
                }
                settled = if settled_now { settled + 1 } else { 0 };
                tokio::select! {
                    event = call.events.recv() => match event {
                        Some(Event::Asked(request, reply)) => {
                            add(&mut call.pending, request, reply);
                            last = tokio::time::Instant::now();
                            settled = 0;
                        }
                        Some(Event::Done(outcome)) => return outcome,
                        None => break,
                    },
                    _ = tokio::time::sleep(LOOK) => {}
                }
            }
        }
        call.round += 1;
        let id = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut requests = Map::new();
        for pending in &call.pending {
            requests.insert(
                pending.key.clone(),
                json!({"method": pending.request.method, "params": pending.request.params}),
            );
        }
        let no_randomness = || RpcError {
            code: protocol::INTERNAL_ERROR,
            message: "no randomness for a request state: try again".into(),
            data: None,
        };
        let mut claims = Claims {
            c: id,
            r: call.round,
            x: Some(crate::clock::now_ms() + STATE_TTL.as_millis() as u64),
            b: Some(call.bound.clone()),
            i: self.instance.clone(),
            n: nonce().ok_or_else(no_randomness)?,
            // A round that asks ferry's own question (a `confirm`) is answered only here.
            g: call.shared.asking_is_ferry(),
            a: None,
        };
        let answered = Value::Object(call.answered.clone());
        if !call.answered.is_empty() && answered.to_string().len() <= ANSWERS_CARRIED {
            claims.a = Some(call.answered.clone());
        }
        let state = self.sign(&claims).ok_or_else(no_randomness)?;
        call.expires = Instant::now() + STATE_TTL;
        let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
        let now = Instant::now();
        waiting.retain(|_, w| w.expires > now);
        let full = |message: &str| RpcError {
            code: protocol::INTERNAL_ERROR,
            message: message.into(),
            data: None,
        };
        if waiting.len() >= MAX_WAITING {
            return Err(full(
                "too many calls are waiting for answers; try again later",
            ));
        }
        let mine = waiting.values().filter(|w| w.client == call.client).count();
        if mine >= MAX_WAITING_PER_CLIENT {
            return Err(full(
                "this client has too many calls waiting for answers: answer or drop some first",
            ));
        }
        waiting.insert(id, call);
        Ok(json!({
            "resultType": "input_required",
            "inputRequests": requests,
            "requestState": state,
        }))
    }

    /// The claims of a request's state, once it is found genuine, current and this request's.
    fn check(&self, method: &str, params: &Value, state: &Value) -> Result<Claims, RpcError> {
        let claims = state.as_str().and_then(|s| self.verify(s)).ok_or_else(|| {
            invalid("requestState failed its integrity check (altered, or signed by a server that does not share this one's --state-key-file): send the request again without it")
        })?;
        let expired = claims.x.is_none_or(|x| x < crate::clock::now_ms());
        if expired {
            return Err(invalid(
                "requestState has expired: send the request again without it",
            ));
        }
        if claims.b.as_deref() != Some(binding(method, params).as_str()) {
            return Err(invalid(
                "requestState belongs to another request: send each state back only with the request it came with",
            ));
        }
        Ok(claims)
    }

    /// The next round of a call waiting here: its answers delivered, then its next event.
    async fn resume(
        &self,
        params: &Value,
        claims: &Claims,
        capabilities: Value,
        notify: Notifier,
    ) -> Result<Value, RpcError> {
        let (id, round) = (claims.c, claims.r);
        let mut call = {
            let mut waiting = self.waiting.lock().unwrap_or_else(|e| e.into_inner());
            match waiting.remove(&id) {
                Some(call) if call.round == round => call,
                Some(call) => {
                    waiting.insert(id, call);
                    return Err(invalid("requestState is of an earlier round, already answered: send the latest one"));
                }
                None => {
                    return Err(invalid(
                        "requestState names no call waiting here (answered already, expired, or another server's): send the request again without it",
                    ))
                }
            }
        };
        *call
            .shared
            .capabilities
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = capabilities;
        *call.shared.notify.lock().unwrap_or_else(|e| e.into_inner()) = notify;
        let responses = match Params::new(params).input_responses_field() {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(map)) => map.clone(),
            Some(_) => {
                // The call keeps waiting, this round's state good, for a retry that says it
                // right.
                self.waiting
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(id, call);
                return Err(invalid(
                    "inputResponses must be an object of answers by key",
                ));
            }
        };
        // Each answer goes to its question; a question without one is asked again, and an
        // answer to no question yet is kept for one the call may ask later.
        let mut responses = responses;
        let mut unanswered = Vec::new();
        for pending in call.pending.drain(..) {
            match responses.remove(&pending.key) {
                Some(result @ Value::Object(_)) => {
                    call.answered.insert(pending.key.clone(), result.clone());
                    let _ = pending.reply.send(Ok(result));
                }
                _ => unanswered.push(pending),
            }
        }
        call.pending = unanswered;
        {
            let mut given = call.shared.given.lock().unwrap_or_else(|e| e.into_inner());
            for (key, value) in responses.into_iter().take(ASKS_KEPT) {
                call.answered.insert(key.clone(), value.clone());
                given.insert(key, value);
            }
        }
        self.next_round(call).await
    }

    /// Records another instance's state as taken here; `Err` when it was taken before.
    fn spend(&self, claims: &Claims) -> Result<(), RpcError> {
        let nonce = claims.n.as_str();
        let expires = claims.x.unwrap_or(0);
        let mut spent = self.spent.lock().unwrap_or_else(|e| e.into_inner());
        if nonce.is_empty() || spent.contains_key(nonce) {
            return Err(invalid(
                "requestState was answered already: a state is good once; send the request again without it",
            ));
        }
        if spent.len() >= MAX_SPENT {
            let now = crate::clock::now_ms();
            spent.retain(|_, x| *x >= now);
            if spent.len() >= MAX_SPENT {
                return Err(invalid(
                    "too many request states are in use; send the request again without requestState",
                ));
            }
        }
        spent.insert(nonce.to_string(), expires);
        Ok(())
    }

    /// Drops calls whose state expired, every [`SWEEP_EVERY`], whether or not new rounds
    /// are made (their commands are stopped with them).
    fn sweep_on_a_timer(&self) {
        self.sweeping.call_once(|| {
            let table = Arc::downgrade(&self.waiting);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(SWEEP_EVERY).await;
                    let Some(table) = table.upgrade() else { break };
                    let now = Instant::now();
                    // Dropped outside the lock: a call's end may take a moment.
                    let expired: Vec<Waiting> = {
                        let mut waiting = table.lock().unwrap_or_else(|e| e.into_inner());
                        let ids: Vec<u64> = waiting
                            .iter()
                            .filter(|(_, w)| w.expires <= now)
                            .map(|(id, _)| *id)
                            .collect();
                        ids.iter().filter_map(|id| waiting.remove(id)).collect()
                    };
                    drop(expired);
                }
            });
        });
    }

    fn sign(&self, claims: &impl Serialize) -> Option<String> {
        let payload = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .encode(serde_json::to_string(claims).ok()?);
        let tag = ring::hmac::sign(self.key.as_ref()?, payload.as_bytes());
        Some(format!(
            "{payload}.{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(tag.as_ref())
        ))
    }

    /// The claims of a state this server signed; `None` for anything else.
    fn verify(&self, state: &str) -> Option<Claims> {
        let (payload, tag) = state.split_once('.')?;
        let tag = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(tag)
            .ok()?;
        ring::hmac::verify(self.key.as_ref()?, payload.as_bytes(), &tag).ok()?;
        let claims = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(payload)
            .ok()?;
        let claims: Value = serde_json::from_slice(&claims).ok()?;
        claims.is_object().then(|| lenient::view(&claims))
    }
}

/// Hands a call that outlived its request to the tasks: its questions, progress and end go to
/// the task from now on.
fn into_task(mut call: Waiting) -> Result<Value, RpcError> {
    use super::tasks::{Progress, Question};
    let Some(tasks) = call.tasks.clone() else {
        return Err(invalid("this call cannot become a task"));
    };
    let (reports, reports_in) = mpsc::unbounded_channel();
    let messages = reports.clone();
    *call.shared.notify.lock().unwrap_or_else(|e| e.into_inner()) = Arc::new(move |note: Value| {
        let note = MessageView::new(&note);
        if note.method() != Some("notifications/progress") {
            return;
        }
        let params = ProgressParams::read(note.params().unwrap_or(&Value::Null));
        let done = params.progress.unwrap_or(Value::Null);
        let mut text = match params.total {
            Some(total) => format!("{done} of {total}"),
            None => format!("{done} done"),
        };
        if let Some(message) = params.message {
            text = format!("{text}: {message}");
        }
        let _ = messages.send(Progress::Message(text));
    });
    let Some(stop) = call.task.0.take() else {
        return Err(invalid("the call is over"));
    };
    let mut events = std::mem::replace(&mut call.events, mpsc::unbounded_channel().1);
    tokio::spawn(async move {
        let mut used: Vec<String> = Vec::new();
        while let Some(event) = events.recv().await {
            let report = match event {
                Event::Asked(request, reply) => {
                    let mut pending = Vec::new();
                    add(&mut pending, request, reply);
                    let Pending {
                        mut key,
                        request,
                        reply,
                    } = pending.remove(0);
                    let base = key.clone();
                    let mut n = 1;
                    while used.contains(&key) {
                        n += 1;
                        key = format!("{base}-{n}");
                    }
                    used.push(key.clone());
                    Progress::Asked(Question {
                        key,
                        request,
                        reply,
                    })
                }
                Event::Done(outcome) => Progress::Done(outcome),
            };
            if reports.send(report).is_err() {
                break;
            }
        }
    });
    tasks.create(&call.client, reports_in, stop)
}

/// Adds a request, its key unique among those pending (a key of its own, or its kind's).
fn add(pending: &mut Vec<Pending>, request: ClientRequest, reply: Reply) {
    let base = request.key.clone().unwrap_or_else(|| {
        match request.method.as_str() {
            "elicitation/create" => "form",
            "sampling/createMessage" => "sample",
            "roots/list" => "roots",
            _ => "request",
        }
        .to_string()
    });
    let mut key = base.clone();
    let mut n = 1;
    while pending.iter().any(|p| p.key == key) {
        n += 1;
        key = format!("{base}-{n}");
    }
    pending.push(Pending {
        key,
        request,
        reply,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_is_signed_and_bound() {
        let rounds = Rounds::with_key(b"a key for the test", "a");
        let state = rounds.sign(&json!({"c": 1, "r": 1})).unwrap();
        assert_eq!(rounds.verify(&state).unwrap().c, 1);
        let other = Rounds::with_key(b"another key", "a");
        assert!(other.verify(&state).is_none(), "another key's state");
        let mut tampered = state.clone();
        tampered.insert(0, 'x');
        assert!(rounds.verify(&tampered).is_none());
        let call = json!({"name": "t", "arguments": {"a": 1, "b": 2}, "requestState": "s", "inputResponses": {}});
        let again = json!({"arguments": {"b": 2, "a": 1}, "name": "t"});
        assert_eq!(binding("tools/call", &call), binding("tools/call", &again));
        assert_ne!(
            binding("tools/call", &call),
            binding(
                "tools/call",
                &json!({"name": "t", "arguments": {"a": 2, "b": 2}})
            )
        );
    }
}
