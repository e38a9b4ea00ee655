//! What passes between the host and a backend during a call: the backend's questions go to
//! the host that made the call (elicitation, sampling, roots: the host's to answer), its
//! progress to the host's progress token, and its result comes back within the output budget
//! the CLI would apply, cut the same way.

use crate::client::handler::{ClientHandler, ClientRequestError, Unattended};
use crate::protocol::content::{is_text, text_of, Content};
use crate::protocol::messages::{Progress, ResultView};
use crate::protocol::BoxFuture;
use crate::render::output::{apply_budget, OutputContext};
use crate::serve::ask::{refusal, Asking, ClientRequest};
use crate::serve::provider::CallContext as ServeContext;
use serde_json::Value;

/// A host's result budget when the server's config sets none (`maxTokens`): what hosts that
/// cap tool output allow by default.
pub const DEFAULT_MAX_TOKENS: usize = 25_000;

/// Answers what a backend asks during one call on behalf of the host that made it.
pub struct Forwarder {
    pub context: ServeContext,
    /// Answers what the host cannot: roots are the proxy's directory, elicitation is
    /// declined, sampling refused.
    pub unattended: Unattended,
}

impl ClientHandler for Forwarder {
    fn answer<'a>(
        &'a self,
        method: &'a str,
        params: &'a Value,
    ) -> BoxFuture<'a, Result<Value, ClientRequestError>> {
        if refusal(&self.context.client_capabilities, method).is_some() {
            return self.unattended.answer(method, params);
        }
        Box::pin(async move {
            // The backend's question is the whole round: nothing else of this call asks.
            self.context.asker.watch(Asking::Ferry);
            let request = ClientRequest {
                key: None,
                method: method.to_string(),
                params: params.clone(),
            };
            self.context
                .asker
                .request(request)
                .await
                .map_err(|why| ClientRequestError {
                    code: crate::protocol::INTERNAL_ERROR,
                    message: format!("the host did not answer: {why}"),
                })
        })
    }

    fn progress(&self, params: &Value) {
        let progress = Progress::read(params);
        let done = progress
            .progress
            .as_ref()
            .and_then(Value::as_f64)
            .unwrap_or(0.0);
        let total = progress.total.as_ref().and_then(Value::as_f64);
        self.context
            .progress(done, total, progress.message.as_deref());
    }
}

/// Keeps a call's result within `max_tokens`: its text blocks, joined, are cut as the CLI
/// cuts its output (head and tail kept, one marker line saying what was cut and where the
/// whole is). Images and resources stay; `structuredContent` larger than the budget is left
/// out (and said so) unless `keep_structured`, for a host that checks it against the tool's
/// `outputSchema`.
pub fn within_budget(
    mut result: Value,
    max_tokens: usize,
    keep_structured: bool,
    output: &OutputContext,
) -> Value {
    let Some(blocks) = ResultView::new(&result).content().map(<[Value]>::to_vec) else {
        return result;
    };
    let texts: Vec<&str> = blocks.iter().filter_map(text_of).collect();
    let structured_bytes = ResultView::new(&result)
        .structured_content()
        .map_or(0, |s| serde_json::to_string(s).map_or(0, |t| t.len()));
    let drop_structured = !keep_structured && structured_bytes > max_tokens;
    let text_bytes: usize = texts.iter().map(|t| t.len() + 1).sum();
    if text_bytes <= max_tokens && !drop_structured {
        return result;
    }
    let mut joined = apply_budget(texts.join("\n"), max_tokens, output);
    if drop_structured {
        if !joined.is_empty() && !joined.ends_with('\n') {
            joined.push('\n');
        }
        joined.push_str(&format!(
            "[ferry: structuredContent ({}) left out to fit the budget; the text above carries it]",
            crate::render::output::human_size(structured_bytes)
        ));
        if let Value::Object(map) = &mut result {
            map.remove("structuredContent");
        }
    }
    let mut placed = false;
    let content: Vec<Value> = blocks
        .iter()
        .filter_map(|block| {
            if !is_text(block) {
                return Some(block.clone());
            }
            if placed {
                return None;
            }
            placed = true;
            Some(Content::text(joined.clone()).to_value())
        })
        .collect();
    let mut content = content;
    if !placed {
        content.insert(0, Content::text(joined).to_value());
    }
    result["content"] = Value::Array(content);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn output() -> OutputContext {
        OutputContext {
            dir: std::env::temp_dir().join(format!("ferry-budget-{}", std::process::id())),
            stem: "test".into(),
        }
    }

    #[test]
    fn a_large_result_keeps_head_tail_and_its_other_blocks() {
        let lines: Vec<String> = (0..20_000).map(|i| format!("line {i}")).collect();
        let result = json!({"content": [
            {"type": "text", "text": lines.join("\n")},
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "text", "text": "the end"},
        ]});
        let cut = within_budget(result, 2000, false, &output());
        let content = cut["content"].as_array().unwrap();
        assert_eq!(content.len(), 2);
        let text = content[0]["text"].as_str().unwrap();
        assert!(text.starts_with("line 0\n"), "{}", &text[..40]);
        assert!(text.ends_with("the end"), "{text}");
        assert!(text.contains("[ferry: cut "), "{text}");
        assert_eq!(content[1]["type"], "image");
    }

    #[test]
    fn a_small_result_is_untouched_and_large_structure_goes_unless_kept() {
        let small =
            json!({"content": [{"type": "text", "text": "hi"}], "structuredContent": {"a": 1}});
        assert_eq!(within_budget(small.clone(), 100, false, &output()), small);
        let big = json!({"content": [{"type": "text", "text": "sum"}],
            "structuredContent": {"rows": vec!["x".repeat(100); 100]}});
        let cut = within_budget(big.clone(), 1000, false, &output());
        assert!(cut.get("structuredContent").is_none());
        assert!(cut["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("structuredContent"));
        assert_eq!(within_budget(big.clone(), 1000, true, &output()), big);
    }
}
