//! Commands that talk back (README, "Commands that ask, and long commands as tasks"):
//! `ferry ask`, run by a command that `ferry serve` runs, asks the client what only the client
//! knows (the person's yes or no, a form, the host's model, the client's roots), and prints
//! the answer.
//!
//! The question travels over a channel private to the call (`channel`); serve hands it to the
//! call's [`Asker`]: a request to the client on the call's own stream in the handshake era
//! ([`SessionAsker`]), an input-required round in the 2026-07-28 era (`serve::rounds`), or a
//! refusal where the client cannot answer. `command` is `ferry ask` itself.

mod channel;
mod command;

pub use channel::{ask_serve, check_form_schema, Channel, ASKS_PER_CALL, ASK_FD_VAR};
pub use command::{command, main};

pub use crate::protocol::question::Question;
use crate::protocol::{BoxFuture, RpcError};
use crate::schema::{validate, ToolSchema};
use serde_json::{json, Value};
use std::sync::Arc;

/// A question and the name the command gives it (an input request's key, when it has one).
#[derive(Debug, Clone, PartialEq)]
pub struct Ask {
    pub key: Option<String>,
    pub question: Question,
}

/// What `ferry ask` prints and exits with.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// 0 answered (yes), 1 declined or cancelled (no), 3 the client cannot answer.
    pub exit: i32,
    /// Printed on stdout.
    pub out: String,
    /// Printed on stderr, one line.
    pub error: Option<String>,
}

impl Answer {
    pub fn yes(out: impl Into<String>) -> Answer {
        Answer {
            exit: 0,
            out: out.into(),
            error: None,
        }
    }

    pub fn no(why: impl Into<String>) -> Answer {
        Answer {
            exit: 1,
            out: String::new(),
            error: Some(why.into()),
        }
    }

    /// The client cannot answer (no such capability, no client to ask).
    pub fn cannot(why: impl Into<String>) -> Answer {
        Answer {
            exit: 3,
            out: String::new(),
            error: Some(why.into()),
        }
    }
}

/// A request to the client on a call's behalf (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`): a command's question, or one a proxied server sent.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientRequest {
    /// Its name among the questions of a round (an input request's key), when it has one.
    pub key: Option<String>,
    pub method: String,
    pub params: Value,
}

/// Who may ask a call's next question: ferry itself (a tool's `confirm`, before anything
/// runs), or the command's process group (`ferry ask`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Asking {
    Ferry,
    Group(i32),
}

/// Why a call's client gives no answer to a request.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Unanswered {
    #[error("the client did not declare the {0} capability, so it cannot answer")]
    Undeclared(&'static str),
    #[error("{0} is not a request a server may send its client")]
    NotAClientRequest(String),
    /// The client's JSON-RPC error message.
    #[error("the client answered with an error: {0}")]
    ClientError(String),
    #[error("there is no client to ask")]
    Nobody,
    #[error("the call is over")]
    CallOver,
    #[error("the call ended before the client answered")]
    CallEnded,
}

/// Puts a call's requests to its client; `Err` says why the client cannot answer.
pub trait Asker: Send + Sync {
    fn request(&self, request: ClientRequest) -> BoxFuture<'_, Result<Value, Unanswered>>;

    /// Says who may ask next, so an asker that gathers questions knows when no more can
    /// come at once.
    fn watch(&self, _asking: Asking) {}
}

/// The client capability a request needs, by its method.
pub fn capability_of(method: &str) -> Option<&'static str> {
    match method {
        "elicitation/create" => Some("elicitation"),
        "sampling/createMessage" => Some("sampling"),
        "roots/list" => Some("roots"),
        _ => None,
    }
}

/// Why a client that declared `capabilities` cannot take `method`, if it cannot.
pub fn refusal(capabilities: &Value, method: &str) -> Option<Unanswered> {
    match capability_of(method) {
        Some(capability) if client_can(capabilities, capability) => None,
        Some(capability) => Some(Unanswered::Undeclared(capability)),
        None => Some(Unanswered::NotAClientRequest(method.to_string())),
    }
}

/// Asks a command's question through `asker`, and reads the answer as the command needs it.
pub async fn ask(asker: &dyn Asker, ask: Ask) -> Answer {
    let (method, params) = ask.question.request();
    let request = ClientRequest {
        key: Some(
            ask.key
                .clone()
                .unwrap_or_else(|| ask.question.default_key().to_string()),
        ),
        method: method.to_string(),
        params,
    };
    match asker.request(request).await {
        Ok(result) => answer(&ask.question, &result),
        Err(why) => Answer::cannot(why.to_string()),
    }
}

/// The asker of a call nobody can be asked for (internal calls, tests).
pub struct Nobody;

impl Asker for Nobody {
    fn request(&self, _request: ClientRequest) -> BoxFuture<'_, Result<Value, Unanswered>> {
        Box::pin(async { Err(Unanswered::Nobody) })
    }
}

/// Whether the client's declared `capabilities` include `name` (`elicitation`, `sampling`,
/// `roots`).
pub fn client_can(capabilities: &Value, name: &str) -> bool {
    capabilities.get(name).is_some_and(|c| !c.is_null())
}

/// The command's answer to `question` from the client's result. A form's content that does not match
/// the schema asked for never reaches the command.
pub fn answer(question: &Question, result: &Value) -> Answer {
    let action = result.get("action").and_then(Value::as_str);
    match question {
        Question::Confirm { .. } => match action {
            Some("accept") if result.pointer("/content/confirm") == Some(&json!(true)) => {
                Answer::yes("")
            }
            Some("accept") => Answer::no("not confirmed"),
            Some("decline") => Answer::no("declined"),
            _ => Answer::no("cancelled"),
        },
        Question::Elicit { schema, .. } => match action {
            Some("accept") => {
                let content = result.get("content").cloned().unwrap_or(json!({}));
                let Value::Object(fields) = &content else {
                    return Answer::no("the client's answer is not an object");
                };
                let shape = ToolSchema::from_input_schema(schema);
                if let Err(violation) = validate::check_arguments(&shape, fields) {
                    return Answer::no(format!(
                        "the client's answer does not match the schema: {}",
                        violation.message()
                    ));
                }
                Answer::yes(format!("{content}\n"))
            }
            Some("decline") => Answer::no("declined"),
            _ => Answer::no("cancelled"),
        },
        Question::Sample { .. } => {
            let content = result.get("content").unwrap_or(&Value::Null);
            let blocks = match content {
                Value::Array(blocks) => blocks.clone(),
                other => vec![other.clone()],
            };
            let texts: Vec<&str> = blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect();
            if texts.is_empty() {
                return Answer::yes(format!("{content}\n"));
            }
            let mut text = texts.join("\n");
            if !text.ends_with('\n') {
                text.push('\n');
            }
            Answer::yes(text)
        }
        Question::Roots => {
            let mut out = String::new();
            for root in result
                .get("roots")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(uri) = root.get("uri").and_then(Value::as_str) {
                    out.push_str(&root_path(uri));
                    out.push('\n');
                }
            }
            Answer::yes(out)
        }
    }
}

/// A root's URI as a path when it is a `file:` URI (percent-decoded), else as it is; control
/// characters never reach the command's output as they came.
fn root_path(uri: &str) -> String {
    let text = match uri.strip_prefix("file://") {
        Some(rest) => {
            let path = rest.strip_prefix("localhost").unwrap_or(rest);
            crate::words::percent_decode(path).unwrap_or_else(|| path.to_string())
        }
        None => uri.to_string(),
    };
    text.chars()
        .map(|c| if c.is_control() { '?' } else { c })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// The handshake era: a question is a request to the client on the call's own stream.

/// The requests a handshake session sent its client and still waits on, by id.
#[derive(Default)]
pub struct Outgoing {
    next: std::sync::atomic::AtomicU64,
    waiting: std::sync::Mutex<
        std::collections::HashMap<String, tokio::sync::oneshot::Sender<Result<Value, RpcError>>>,
    >,
}

impl Outgoing {
    /// Hands the client's answer to the request it answers; false when none waits for it.
    pub fn resolve(&self, id: &Value, outcome: Result<Value, RpcError>) -> bool {
        let key = id.to_string();
        let waiting = self
            .waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&key);
        match waiting {
            Some(sender) => sender.send(outcome).is_ok(),
            None => false,
        }
    }

    /// Sends a request through `send` and waits for its answer (for as long as the caller
    /// waits: a dropped wait forgets the request).
    pub async fn request(
        &self,
        send: &crate::protocol::Notifier,
        method: &str,
        params: Value,
    ) -> Result<Value, RpcError> {
        let n = self.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let id = json!(format!("ferry-{n}"));
        let (sender, answer) = tokio::sync::oneshot::channel();
        let key = id.to_string();
        self.waiting
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key.clone(), sender);
        struct Forget<'a>(&'a Outgoing, String);
        impl Drop for Forget<'_> {
            fn drop(&mut self) {
                self.0
                    .waiting
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&self.1);
            }
        }
        let _forget = Forget(self, key);
        send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        answer.await.unwrap_or_else(|_| {
            Err(RpcError {
                code: crate::protocol::INTERNAL_ERROR,
                message: "the session ended".into(),
                data: None,
            })
        })
    }
}

/// A handshake session's client, asked on the call's stream.
pub struct SessionAsker {
    pub outgoing: Arc<Outgoing>,
    /// Where the call's messages go (its response stream, or stdout).
    pub send: crate::protocol::Notifier,
    /// What the client declared at `initialize`.
    pub capabilities: Value,
}

impl Asker for SessionAsker {
    fn request(&self, request: ClientRequest) -> BoxFuture<'_, Result<Value, Unanswered>> {
        Box::pin(async move {
            if let Some(why) = refusal(&self.capabilities, &request.method) {
                return Err(why);
            }
            self.outgoing
                .request(&self.send, &request.method, request.params)
                .await
                .map_err(|e| Unanswered::ClientError(e.message))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_read_as_the_command_needs_them() {
        let confirm = Question::Confirm {
            message: "Delete x?".into(),
        };
        assert_eq!(
            answer(
                &confirm,
                &json!({"action": "accept", "content": {"confirm": true}})
            )
            .exit,
            0
        );
        assert_eq!(
            answer(
                &confirm,
                &json!({"action": "accept", "content": {"confirm": false}})
            )
            .exit,
            1
        );
        assert_eq!(answer(&confirm, &json!({"action": "decline"})).exit, 1);
        let form = Question::Elicit {
            message: "Who?".into(),
            schema: json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
        };
        assert_eq!(
            answer(
                &form,
                &json!({"action": "accept", "content": {"name": "Ada"}})
            ),
            Answer::yes("{\"name\":\"Ada\"}\n")
        );
        let wrong = answer(&form, &json!({"action": "accept", "content": {"name": 7}}));
        assert_eq!(wrong.exit, 1);
        assert!(wrong.error.unwrap().contains("does not match the schema"));
        let sample = Question::Sample {
            text: "hi".into(),
            system: None,
            max_tokens: 10,
        };
        assert_eq!(
            answer(
                &sample,
                &json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}})
            ),
            Answer::yes("Paris\n")
        );
        assert_eq!(
            answer(
                &Question::Roots,
                &json!({"roots": [{"uri": "file:///home/a%20b"}, {"uri": "https://x"}]})
            ),
            Answer::yes("/home/a b\nhttps://x\n")
        );
    }
}
