//! The question a command run by `ferry serve` asks its client (`ferry ask`): a yes or no, a
//! form, a sample of the host's model, the client's roots; and the request that asks it.
//! `serve::ask` reads the answer; the meter (`ferry tokens --served`) prices a `confirm`'s
//! request. Both directions share it, so it lives with the other message shapes.

use serde_json::{json, Value};

/// What a command asks.
#[derive(Debug, Clone, PartialEq)]
pub enum Question {
    /// The person decides yes or no.
    Confirm { message: String },
    /// The person fills in a form of this JSON Schema.
    Elicit { message: String, schema: Value },
    /// The host's model answers `text`.
    Sample {
        text: String,
        system: Option<String>,
        max_tokens: u64,
    },
    /// The client's roots.
    Roots,
}

impl Question {
    /// The client capability an answer needs.
    pub fn capability(&self) -> &'static str {
        match self {
            Question::Confirm { .. } | Question::Elicit { .. } => "elicitation",
            Question::Sample { .. } => "sampling",
            Question::Roots => "roots",
        }
    }

    /// A key for the question when the command gave none.
    pub fn default_key(&self) -> &'static str {
        match self {
            Question::Confirm { .. } => "confirm",
            Question::Elicit { .. } => "form",
            Question::Sample { .. } => "sample",
            Question::Roots => "roots",
        }
    }

    /// The request that asks it: method and params.
    pub fn request(&self) -> (&'static str, Value) {
        match self {
            Question::Confirm { message } => (
                "elicitation/create",
                json!({
                    "mode": "form",
                    "message": message,
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"confirm": {"type": "boolean", "title": "Confirm", "description": message}},
                        "required": ["confirm"]
                    }
                }),
            ),
            Question::Elicit { message, schema } => (
                "elicitation/create",
                json!({"mode": "form", "message": message, "requestedSchema": schema}),
            ),
            Question::Sample {
                text,
                system,
                max_tokens,
            } => {
                let mut params = json!({
                    "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
                    "maxTokens": max_tokens
                });
                if let Some(system) = system {
                    params["systemPrompt"] = json!(system);
                }
                ("sampling/createMessage", params)
            }
            Question::Roots => ("roots/list", json!({})),
        }
    }
}
