use super::*;

// ripgrep: `rg -h` (one line each) and `rg --help` (descriptions on following lines).

const RG_SHORT: &str = include_str!("../../../../tests/fixtures/help/rg-h.txt");

const RG_LONG: &str = include_str!("../../../../tests/fixtures/help/rg-help.txt");

#[test]
fn ripgrep_short_and_long_help() {
    let opts = options(RG_SHORT);
    assert_eq!(
        opts[0],
        valued(
            Some("--after-context"),
            Some('A'),
            "NUM",
            "Show NUM lines after each match."
        )
    );
    assert_eq!(
        opts[1],
        flag(
            Some("--byte-offset"),
            Some('b'),
            "Print the 0-based byte offset for each matching line."
        )
    );
    assert_eq!(
        opts[2],
        OptionSpec {
            repeatable: true,
            ..valued(
                Some("--colors"),
                None,
                "COLOR_SPEC",
                "Configure color settings and styles."
            )
        }
    );
    assert_eq!(find(&opts, "--null").short, Some('0'));
    assert_eq!(opts.len(), 10);
    assert!(subcommands(RG_SHORT).is_empty());

    let long = options(RG_LONG);
    let names: Vec<&str> = long.iter().filter_map(|o| o.long.as_deref()).collect();
    // Description lines that start with `--` or `-e/` are not options.
    assert_eq!(
        names,
        ["--after-context", "--json", "--no-config", "--regexp"]
    );
    assert_eq!(long[0].description, "Show NUM lines after each match.");
    assert_eq!(
        long[1].description,
        "Enable printing results in a JSON Lines format."
    );
    assert!(long[3].repeatable);
}

#[test]
fn ripgrep_draft() {
    let tools = check(&draft("rg", &[help(&[], RG_SHORT)]));
    assert_eq!(tools.len(), 1);
    let rg = &tools[0];
    assert_eq!(rg.name, "rg");
    assert_eq!(
        rg.description,
        "ripgrep (rg) recursively searches the current directory for a regex pattern."
    );
    assert!(
        !rg.params.contains_key("pre")
            && !rg.params.contains_key("help")
            && !rg.params.contains_key("version")
    );
    assert_eq!(rg.kind("after-context"), "integer");
    assert_eq!(rg.kind("dfa-size-limit"), "string");
    // `-f PATTERNFILE...` is given once per file.
    assert_eq!(rg.param("file").kind, ParamKind::Array(ItemKind::Path));
    assert_eq!(rg.param("null").flag.as_deref(), Some("--null"));
    assert_eq!(
        rg.param("args").description.as_deref(),
        Some("Further arguments: PATH")
    );
    // Operands where rg takes them: no `--` (rg's usage shows none), the pattern first.
    assert!(rg.command_text().ends_with(r#""{pattern}", "{args*}"]"#));
    assert_eq!(rg.def.ok_exit, [0, 1]);
    assert_eq!(
        rg.def
            .annotations
            .get("readOnlyHint")
            .and_then(Value::as_bool),
        Some(true)
    );
    check(&draft("rg", &[help(&[], RG_LONG)]));
}
