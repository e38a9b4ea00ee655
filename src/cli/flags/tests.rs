use super::*;
use serde_json::json;

const TOOL: ToolRef = ToolRef {
    tool: "tool",
    command: "ferry srv",
};

fn schema() -> ToolSchema {
    ToolSchema::from_input_schema(&json!({
        "type": "object",
        "properties": {
            "message": {"type": "string"},
            "count": {"type": "integer", "minimum": 1},
            "ratio": {"type": "number"},
            "dryRun": {"type": "boolean"},
            "mode": {"enum": ["fast", "slow"]},
            "tags": {"type": "array", "items": {"type": "string"}},
            "meta": {"type": "object", "properties": {"k": {"type": "string"}}},
            "max_results": {"type": "integer"}
        },
        "required": ["message"]
    }))
}

fn parse(words: &[&str]) -> Result<ParsedCall> {
    let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
    let mut input = DeferredInput::default();
    input.set_stdin("{\"k\":\"from stdin\"}".into());
    parse_call(TOOL, &schema(), &words, &mut input)
}

fn args(words: &[&str]) -> Value {
    Value::Object(parse(words).unwrap().arguments)
}

fn error(words: &[&str]) -> String {
    let e = parse(words).unwrap_err();
    match e.hint {
        Some(hint) => format!("{} | {hint}", e.message),
        None => e.message,
    }
}

#[test]
fn every_argument_kind() {
    assert_eq!(
        args(&[
            "--message",
            "hi",
            "--count=3",
            "--ratio",
            "0.5",
            "--dry-run",
            "--mode",
            "fast",
            "--tags",
            "a",
            "--tags",
            "b",
            "--meta",
            "{\"k\":\"v\"}",
            "--max-results",
            "7"
        ]),
        json!({"message": "hi", "count": 3, "ratio": 0.5, "dryRun": true, "mode": "fast", "tags": ["a", "b"], "meta": {"k": "v"}, "max_results": 7})
    );
    assert_eq!(
        args(&["hi", "--no-dryRun"]),
        json!({"message": "hi", "dryRun": false})
    );
    assert_eq!(
        args(&["hi", "--dryRun=false"]),
        json!({"message": "hi", "dryRun": false})
    );
    assert_eq!(
        args(&["hi", "--dryRun", "false"]),
        json!({"message": "hi", "dryRun": false})
    );
    assert_eq!(
        args(&["hi", "--tags", "[\"x\",\"y\"]"]),
        json!({"message": "hi", "tags": ["x", "y"]})
    );
    assert_eq!(
        args(&["hi", "--meta", "-"]),
        json!({"message": "hi", "meta": {"k": "from stdin"}})
    );
    assert_eq!(
        args(&["--", "--not-a-flag"]),
        json!({"message": "--not-a-flag"})
    );
    assert_eq!(args(&["--message", "a,b"]), json!({"message": "a,b"}));
}

#[test]
fn json_object_with_flags_overriding() {
    assert_eq!(
        args(&["--json", "{\"message\":\"a\",\"count\":2}", "--count", "5"]),
        json!({"message": "a", "count": 5})
    );
    // After the tool name --json is the arguments object, never the envelope.
    assert_eq!(
        error(&["hi", "--json"]),
        "--json after the tool name takes the arguments as a JSON object | \
         for the exact result envelope, put --json before the tool: ferry srv --json tool ..."
    );
    let call = parse(&["hi", "--max-tokens", "100", "--timeout", "2.5"]).unwrap();
    assert_eq!(call.options.max_tokens, Some(100));
    assert_eq!(call.options.timeout, Some(2.5));
}

#[test]
fn errors_are_one_clear_line() {
    assert_eq!(
        error(&["hi", "--mesage", "x"]),
        "unknown flag --mesage for tool | did you mean --message?"
    );
    assert_eq!(
        error(&["--count", "2"]),
        "missing required --message (str) for tool | see: ferry srv tool --help"
    );
    assert_eq!(
        error(&["hi", "--count", "two"]),
        "--count expects an integer, not \"two\" | see: ferry srv tool --help"
    );
    assert_eq!(
        error(&["hi", "--count", "0"]),
        "--count expects a value >= 1, not \"0\" | see: ferry srv tool --help"
    );
    assert_eq!(
        error(&["hi", "--mode", "medium"]),
        "--mode expects one of fast, slow, not \"medium\" | see: ferry srv tool --help"
    );
    assert_eq!(
        error(&["hi", "--meta", "[1]"]),
        "--meta expects JSON of type {k?:str}, not \"[1]\" | see: ferry srv tool --help"
    );
    assert_eq!(
        error(&["hi", "--ratio"]),
        "--ratio needs a value (num) | see: ferry srv tool --help"
    );
    assert!(error(&["hi", "there"]).starts_with("unexpected argument \"there\""));
    assert!(error(&["hi", "--meta", "{bad"]).starts_with("--meta expects JSON ({k?:str}):"));
    assert!(error(&["hi", "--meta", "{bad"]).ends_with(" | see: ferry srv tool --help"));
    assert_eq!(
        error(&["hi", "--tags", "[\"a\", 1]"]),
        "--tags expects JSON of type str[]: item 2 is 1 | see: ferry srv tool --help"
    );
}

#[test]
fn nullable_scalars_take_null() {
    let schema = ToolSchema::from_input_schema(&json!({"properties": {
        "n": {"type": ["integer", "null"]}, "e": {"enum": ["a", null]}, "s": {"type": ["string", "null"]}}}));
    let words: Vec<String> = ["--n", "null", "--e", "null", "--s", "null"]
        .iter()
        .map(|w| w.to_string())
        .collect();
    let call = parse_call(TOOL, &schema, &words, &mut DeferredInput::default()).unwrap();
    // A nullable string keeps the word: "null" is a string too.
    assert_eq!(
        Value::Object(call.arguments),
        json!({"n": null, "e": null, "s": "null"})
    );
}

#[test]
fn json_arguments_are_checked_like_flags() {
    assert_eq!(
        error(&["--json", "{\"message\": \"hi\", \"count\": \"x\"}"]),
        "--json: count expects an integer, not \"x\" | see: ferry srv tool --help"
    );
    assert_eq!(
        error(&["hi", "--meta", "{\"k\": 5}"]),
        "--meta.k expects a string, not 5 | see: ferry srv tool --help"
    );
}

#[test]
fn files_and_stdin_are_asked_for_not_read() {
    let words: Vec<String> = ["hi", "--meta", "@/some/file"]
        .iter()
        .map(|w| w.to_string())
        .collect();
    let mut input = DeferredInput::default();
    assert!(parse_call(TOOL, &schema(), &words, &mut input).is_err());
    assert_eq!(input.wants_files, ["/some/file"]);
    input.set_file("/some/file".into(), "{\"k\": \"v\"}".into());
    input.rewind();
    let call = parse_call(TOOL, &schema(), &words, &mut input).unwrap();
    assert_eq!(
        Value::Object(call.arguments),
        json!({"message": "hi", "meta": {"k": "v"}})
    );
}

#[test]
fn kebab_aliases() {
    assert_eq!(kebab("dryRun"), "dry-run");
    assert_eq!(kebab("max_results"), "max-results");
    assert_eq!(kebab("URL"), "url");
    assert_eq!(kebab("pageSize2"), "page-size2");
}

#[test]
fn a_boolean_or_string_property_is_a_bare_flag_too() {
    let schema = ToolSchema::from_input_schema(&json!({"properties": {
        "more": {"type": ["boolean", "string"]}, "n": {"type": "integer"}}}));
    let parsed = |words: &[&str]| {
        let words: Vec<String> = words.iter().map(|w| w.to_string()).collect();
        Value::Object(
            parse_call(TOOL, &schema, &words, &mut DeferredInput::default())
                .unwrap()
                .arguments,
        )
    };
    assert_eq!(parsed(&["--more"]), json!({"more": true}));
    assert_eq!(
        parsed(&["--more", "--n", "1"]),
        json!({"more": true, "n": 1})
    );
    assert_eq!(parsed(&["--more", "false"]), json!({"more": false}));
    assert_eq!(parsed(&["--more", "later"]), json!({"more": "later"}));
}

#[test]
fn positional_words_for_several_required_get_the_right_call() {
    let schema = ToolSchema::from_input_schema(&json!({"properties": {
        "a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]}));
    let words: Vec<String> = ["1", "2"].iter().map(|w| w.to_string()).collect();
    let e = parse_call(TOOL, &schema, &words, &mut DeferredInput::default()).unwrap_err();
    assert_eq!(
        e.hint.as_deref(),
        Some("give arguments as --flags: ferry srv tool --a 1 --b 2")
    );
}

#[test]
fn every_after_tool_option_of_the_table_is_read_after_a_tool() {
    use crate::cli::options::{Takes, OPTIONS};
    for option in OPTIONS.iter().filter(|o| o.after_tool) {
        let value = match (option.long, option.takes) {
            ("json", _) => "{\"message\": \"hi\"}",
            (_, Takes::Value(_)) => "100",
            _ => "",
        };
        let flag = format!("--{}", option.long);
        let mut words = vec!["--message", "hi", flag.as_str()];
        if !value.is_empty() {
            words.push(value);
        }
        let call = parse(&words);
        assert!(call.is_ok(), "{flag} after a tool: {:?}", call.err());
    }
    // And an option of ferry's that the table does not allow after a tool is not read there.
    assert!(error(&["--message", "hi", "--no-daemon"]).starts_with("unknown flag --no-daemon"));
}
