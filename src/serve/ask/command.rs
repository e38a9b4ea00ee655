//! `ferry ask`, the command: its options, and what it prints and exits with.

use super::channel::{ask_serve, check_form_schema, decode, encode};
use super::{Ask, Question};
use clap::{Arg, ArgAction, ArgGroup, ArgMatches, Command};
use serde_json::Value;

/// `ferry ask`'s options, for the binary's one options table.
pub fn command() -> Command {
    Command::new("ask")
        .about("Ask the client from inside a command ferry serve runs (exit 0 yes, 1 no, 3 cannot)")
        .long_about("Ask the MCP client from inside a command that ferry serve runs for a call: the person confirms or fills in a form (elicitation), the host's model answers (sampling), or the client says its roots. Exit 0: answered (the answer on stdout); 1: declined or cancelled; 2: usage; 3: the client cannot answer, or this is not a served call.")
        .arg(Arg::new("confirm").long("confirm").value_name("MESSAGE").help("Ask the person to confirm: exit 0 yes, 1 no"))
        .arg(Arg::new("elicit").long("elicit").value_name("MESSAGE").requires("schema").help("Ask the person to fill in a form; the content as JSON on stdout"))
        .arg(Arg::new("schema").long("schema").value_name("JSON").requires("elicit").help("The form's JSON Schema (an object of flat properties)"))
        .arg(Arg::new("sample").long("sample").value_name("TEXT").help("Ask the host's model; its text on stdout"))
        .arg(Arg::new("system").long("system").value_name("TEXT").requires("sample").help("The system prompt for --sample"))
        .arg(Arg::new("max-tokens").long("max-tokens").value_name("N").requires("sample").value_parser(clap::value_parser!(u64).range(1..=1_000_000)).help("The most tokens the model may answer with (default 1000)"))
        .arg(Arg::new("roots").long("roots").action(ArgAction::SetTrue).help("Print the client's roots, one path a line"))
        .arg(Arg::new("key").long("key").value_name("NAME").help("The question's name in the client's input requests (letters, digits, _ - .)"))
        .group(ArgGroup::new("question").args(["confirm", "elicit", "sample", "roots"]).required(true))
}

/// Runs `ferry ask`.
pub fn main(matches: &ArgMatches) -> crate::Result<crate::Outcome> {
    let text = |id: &str| matches.get_one::<String>(id).cloned();
    let question = if let Some(message) = text("confirm") {
        Question::Confirm { message }
    } else if let Some(message) = text("elicit") {
        let schema: Value = serde_json::from_str(&text("schema").unwrap_or_default())
            .map_err(|e| {
                crate::Error::usage(format!("--schema is not JSON: {e}"))
                    .with_hint("give an object schema: '{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\"}}}'")
            })?;
        check_form_schema(&schema).map_err(|why| {
            crate::Error::usage(why.to_string())
                .with_hint("a form is an object of strings, numbers, booleans and choices")
                .with_source(why)
        })?;
        Question::Elicit { message, schema }
    } else if let Some(text_) = text("sample") {
        Question::Sample {
            text: text_,
            system: text("system"),
            max_tokens: matches
                .get_one::<u64>("max-tokens")
                .copied()
                .unwrap_or(1000),
        }
    } else {
        Question::Roots
    };
    let ask = Ask {
        key: text("key"),
        question,
    };
    if let Some(key) = &ask.key {
        decode(&encode(&ask)).map_err(|why| {
            crate::Error::usage(format!("--key {key:?}: {why}"))
                .with_hint("for example --key user_name")
                .with_source(why)
        })?;
    }
    let answer = ask_serve(&ask);
    crate::console::emit(&answer.out)?;
    match answer.exit {
        0 => Ok(crate::Outcome::Success),
        1 => {
            if let Some(why) = answer.error {
                crate::console::warn(&format!("ferry ask: {why}"));
            }
            Ok(crate::Outcome::Declined)
        }
        _ => Err(crate::Error::server(
            answer
                .error
                .unwrap_or_else(|| "the client cannot answer".into()),
        )
        .with_hint("ask only what the client can answer; ferry ask works inside a command ferry serve runs")),
    }
}
