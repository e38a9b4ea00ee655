use super::*;

// GNU getopt (ls), and find's packed lists.

const LS: &str = include_str!("../../../../tests/fixtures/help/ls.txt");

const FIND: &str = include_str!("../../../../tests/fixtures/help/find.txt");

#[test]
fn gnu_options() {
    let opts = options(LS);
    assert_eq!(
        opts[0],
        flag(
            Some("--all"),
            Some('a'),
            "do not ignore entries starting with ."
        )
    );
    assert_eq!(
        opts[1],
        valued(Some("--block-size"), None, "SIZE", "with -l, scale sizes by SIZE when printing them; e.g., '--block-size=M'; see SIZE format below")
    );
    assert_eq!(
        opts[2],
        flag(
            None,
            Some('c'),
            "with -lt: sort by, and show, ctime (time of last modification of file status information); with -l: show ctime and sort by name; otherwise: sort by ctime, newest first"
        )
    );
    assert_eq!(
        opts[4],
        OptionSpec {
            optional_value: true,
            ..valued(
                Some("--color"),
                None,
                "WHEN",
                "color the output WHEN; more info below"
            )
        }
    );
    assert_eq!(
        opts[6],
        valued(
            Some("--ignore"),
            Some('I'),
            "PATTERN",
            "do not list implied entries matching shell PATTERN"
        )
    );
    assert_eq!(opts[8], flag(None, Some('1'), "list one file per line"));
    assert_eq!(opts.len(), 11);
    assert!(subcommands(LS).is_empty());
}

#[test]
fn gnu_draft() {
    let tools = check(&draft("/bin/ls", &[help(&[], LS)]));
    let ls = &tools[0];
    assert_eq!(ls.name, "ls");
    assert_eq!(
        ls.description,
        "List information about the FILEs (the current directory by default)."
    );
    assert_eq!(
        ls.command_text(),
        r#"["/bin/ls", "{all}", ["--block-size", "{block-size}"], "{c}", "{C}", "--color={color}", "{human-readable}", ["--ignore", "{ignore}"], ["--tabsize", "{tabsize}"], "{opt_1}", "{args*}"]"#
    );
    assert_eq!(ls.param("c").flag.as_deref(), Some("-c"));
    assert_eq!(ls.param("opt_1").flag.as_deref(), Some("-1"));
    assert_eq!(ls.kind("tabsize"), "integer");
    assert_eq!(
        ls.def
            .annotations
            .get("readOnlyHint")
            .and_then(Value::as_bool),
        Some(true)
    );
}

#[test]
fn find_packed_lists() {
    let opts = options(FIND);
    let names: Vec<&str> = opts.iter().filter_map(|o| o.long.as_deref()).collect();
    assert_eq!(
        names,
        [
            "-depth",
            "-files0-from",
            "-maxdepth",
            "-mindepth",
            "-name",
            "-perm",
            "-size",
            "-type",
            "-delete",
            "-print0",
            "-printf",
            "-fprintf",
            "-print",
            "-fprint0",
            "-fprint",
            "-ls",
            "-fls",
            "-prune",
            "-quit",
            "-exec",
            "--help"
        ]
    );
    assert_eq!(
        find(&opts, "-maxdepth"),
        &valued(Some("-maxdepth"), None, "LEVELS", "")
    );
    assert_eq!(find(&opts, "-size").value.as_deref(), Some("N[bcwkMG]"));

    let text = draft("find", &[help(&[], FIND)]);
    let tools = check(&text);
    let find_tool = &tools[0];
    for gone in ["delete", "exec", "fprint", "fprint0", "fprintf", "fls"] {
        assert!(!find_tool.params.contains_key(gone), "{gone} drafted");
    }
    // Paths come before find's expression, and find takes no `--`.
    assert!(find_tool
        .command_text()
        .starts_with(r#"["find", "{args*}", "{depth}", ["-files0-from", "{files0-from}"]"#));
    assert!(!find_tool.command_text().contains("\"--\""));
    assert_eq!(
        find_tool.param("maxdepth").description.as_deref(),
        Some("-maxdepth LEVELS")
    );
}
