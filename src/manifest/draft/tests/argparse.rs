use super::*;

// Python argparse, with subparsers.

const ARGPARSE_TOP: &str = include_str!("../../../../tests/fixtures/help/todo.txt");

const ARGPARSE_ADD: &str = include_str!("../../../../tests/fixtures/help/todo-add.txt");

const ARGPARSE_LIST: &str = include_str!("../../../../tests/fixtures/help/todo-list.txt");

const ARGPARSE_PLAIN: &str = include_str!("../../../../tests/fixtures/help/http-server.txt");

#[test]
fn argparse_subparsers_and_options() {
    assert_eq!(
        subcommands(ARGPARSE_TOP),
        [
            ("add".to_string(), "add a thing".to_string()),
            ("remove".to_string(), "remove a thing".to_string()),
            ("list".to_string(), String::new())
        ]
    );
    let opts = options(ARGPARSE_TOP);
    assert_eq!(
        opts[0],
        flag(Some("--help"), Some('h'), "show this help message and exit")
    );
    assert_eq!(
        opts[1],
        valued(Some("--count"), Some('c'), "N", "how many (default: 5)")
    );
    assert_eq!(opts[3].choices, ["text", "json"]);
    assert_eq!(opts[3].value.as_deref(), Some("{text,json}"));
    assert!(opts[4].repeatable && opts[4].value.is_none());
    assert_eq!(
        opts[5],
        OptionSpec {
            repeatable: true,
            ..valued(Some("--tag"), None, "TAG", "tags to filter by")
        }
    );
    assert_eq!(
        (opts[6].value.as_deref(), opts[6].optional_value),
        (Some("SINCE"), true)
    );
    assert_eq!(
        opts[7],
        valued(
            Some("--a-really-long-option-name-here"),
            None,
            "SOMETHING_LONG",
            "an option whose name is too long for the column so the help goes on the next line"
        )
    );
    assert_eq!(
        options(ARGPARSE_PLAIN)[2],
        valued(
            Some("--bind"),
            Some('b'),
            "ADDRESS",
            "bind to this address (default: all interfaces)"
        )
    );
}

#[test]
fn argparse_draft() {
    let text = draft(
        "todo",
        &[
            help(&[], ARGPARSE_TOP),
            help(&["add"], ARGPARSE_ADD),
            help(&["list"], ARGPARSE_LIST),
        ],
    );
    let tools = check(&text);
    let add = tool(&tools, "add");
    assert_eq!(add.description, "add a thing");
    assert_eq!(add.kind("priority"), "integer");
    assert_eq!(
        add.param("priority").enum_values,
        [json!(1), json!(2), json!(3)]
    );
    assert_eq!(
        add.param("text").description.as_deref(),
        Some("The text operand")
    );
    let list = tool(&tools, "list");
    assert_eq!(list.description, "Run `todo list`");
    assert_eq!(list.command_text(), r#"["todo", "list"]"#);
    assert!(text.contains("# No help text for `todo remove` was read"));

    let tools = check(&draft("server.py", &[help(&[], ARGPARSE_PLAIN)]));
    let server = &tools[0];
    assert_eq!(server.name, "server.py");
    assert_eq!(server.description, "Run `server.py`");
    assert_eq!(server.kind("directory"), "path");
    assert_eq!(
        server.param("port").description.as_deref(),
        Some("The port operand")
    );
}
