use super::*;

// Go's flag package, escaping, limits, and input nobody planned for.

#[test]
fn go_flag_style() {
    let help_text = "Usage of serve:\n  -addr string\n    \tlisten address (default \":8080\")\n  -v\tverbose logging\n  -workers int\n    \tnumber of workers (default 4)\n";
    let opts = options(help_text);
    assert_eq!(
        opts[0],
        valued(
            Some("-addr"),
            None,
            "string",
            "listen address (default \":8080\")"
        )
    );
    assert_eq!(opts[1], flag(None, Some('v'), "verbose logging"));
    assert_eq!(
        opts[2],
        valued(
            Some("-workers"),
            None,
            "int",
            "number of workers (default 4)"
        )
    );
    let tools = check(&draft("serve", &[help(&[], help_text)]));
    assert_eq!(
        tools[0].command_text(),
        r#"["serve", ["-addr", "{addr}"], "{v}", ["-workers", "{workers}"]]"#
    );
}

#[test]
fn strings_are_escaped() {
    let nasty = "Usage: we\"ird [OPTIONS]\n\nA \"quoted\" \\ tool {with} braces\u{7}.\n\nOptions:\n  -x, --ex\"tra <V>  say \"hi\" \\ {now}\u{1b}[1m bold\u{1b}[0m\n";
    let text = draft("we\"ird{x}", &[help(&[], nasty)]);
    let tools = check(&text);
    assert_eq!(tools[0].program(), "we\"ird{x}");
    assert_eq!(tools[0].description, "A \"quoted\" \\ tool {with} braces.");
    // Whatever a string holds, its quoted form reads back as it.
    for text in [
        "a\"b\\c\nd\u{7f}",
        "it's \"both\"",
        "'''\"\"\"\\",
        "tab\there\r\u{85}",
        "",
    ] {
        let quoted = toml_string(text);
        let table: toml::Table =
            toml::from_str(&format!("v = {quoted}\n")).unwrap_or_else(|e| panic!("{quoted}: {e}"));
        assert_eq!(table["v"].as_str(), Some(text), "{quoted}");
    }
    assert_eq!(toml_string("plain words"), "\"plain words\"");
    assert_eq!(toml_key("max-count"), "max-count");
    assert_eq!(toml_key("a.b"), "\"a.b\"");
    // Control characters and line breaks cannot escape a comment.
    let mut out = String::new();
    comment(&mut out, "one\ntwo\r\n[server]");
    assert_eq!(out, "# one two [server]\n");
}

#[test]
fn man_page_overstrikes_and_tabs_are_cleaned() {
    assert_eq!(clean("N\u{8}NA\u{8}AM\u{8}ME\r\n\tx"), "NAME\n        x");
    let opts = options("\u{1b}[1m  -a, --all\u{1b}[0m\tshow all\n");
    assert_eq!(opts, [flag(Some("--all"), Some('a'), "show all")]);
}

#[test]
fn params_are_capped() {
    let mut text = String::from("Usage: many [OPTIONS] FILE\n\nOptions:\n");
    for i in 0..60 {
        text.push_str(&format!("  --opt{i:02}   option number {i}\n"));
    }
    let out = draft("many", &[help(&[], &text)]);
    let tools = check(&out);
    assert_eq!(tools[0].params.len(), MAX_PARAMS);
    assert!(tools[0].params.contains_key("opt38") && !tools[0].params.contains_key("opt39"));
    assert!(out.contains("# 21 more options of `many` were left out"));
}

#[test]
fn tools_are_capped() {
    let mut text = String::from("Usage: huge <COMMAND>\n\nCommands:\n");
    for i in 0..150 {
        text.push_str(&format!("  cmd{i}   command number {i}\n"));
    }
    let out = draft("huge", &[help(&[], &text)]);
    assert_eq!(check(&out).len(), MAX_TOOLS);
    assert!(
        out.contains("# 50 more subcommands were not drafted (at most 100 tools): cmd100, cmd101,")
    );
}

#[test]
fn other_command_list_layouts() {
    // apt-get's `name - summary`, npm's bare lists, gh's `name:`.
    let apt = "Usage: apt-get [options] command\n\nMost used commands:\n  update - Retrieve new lists of packages\n  install - Install new packages (pkg is libc6 not libc6.deb)\n\nSee apt-get(8) for more information.\n";
    assert_eq!(
        subcommands(apt),
        [
            (
                "update".to_string(),
                "Retrieve new lists of packages".to_string()
            ),
            (
                "install".to_string(),
                "Install new packages (pkg is libc6 not libc6.deb)".to_string()
            )
        ]
    );
    let npm = "npm <command>\n\nAll commands:\n\n    access, adduser, audit,\n    ci, config\n\nSpecify configs in the ini-formatted file:\n    /root/.npmrc\n";
    let names: Vec<String> = subcommands(npm).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names, ["access", "adduser", "audit", "ci", "config"]);
    let gh = "Work seamlessly with GitHub from the command line.\n\nUSAGE\n  gh <command> <subcommand> [flags]\n\nCORE COMMANDS\n  auth:        Authenticate gh and git with GitHub\n  browse:      Open the repository in the browser\n\nFLAGS\n  --help      Show help for command\n";
    assert_eq!(
        subcommands(gh)[1],
        (
            "browse".to_string(),
            "Open the repository in the browser".to_string()
        )
    );
    assert_eq!(subcommands(gh).len(), 2);
    // kubectl's `--name=DEFAULT:` with the description below.
    let kubectl = "Options:\n    -A, --all-namespaces=false:\n\tIf present, list across all namespaces.\n\n    --chunk-size=500:\n\tReturn large lists in chunks.\n\n    -f, --filename=[]:\n\tFilename, directory, or URL to files.\n\n    -o, --output='':\n\tOutput format. One of: (json, yaml).\n\nUsage:\n  kubectl get [(-o|--output=)json|yaml] (TYPE[.VERSION][.GROUP] [NAME | -l label]) [flags] [options]\n";
    let opts = options(kubectl);
    assert_eq!(
        opts[0],
        flag(
            Some("--all-namespaces"),
            Some('A'),
            "If present, list across all namespaces."
        )
    );
    assert_eq!(opts[1].value.as_deref(), Some("int"));
    assert!(opts[2].repeatable);
    let tools = check(&draft("kubectl", &[help(&[], kubectl)]));
    assert_eq!(tools[0].kind("chunk-size"), "integer");
    // `--output` is kept where it is a format.
    assert_eq!(tools[0].kind("output"), "string");
    assert_eq!(
        tools[0].param("type-version-group").description.as_deref(),
        Some("The TYPE[.VERSION][.GROUP] operand")
    );
}

#[test]
fn numbers_written_otherwise_and_taken_operand_names_still_load() {
    let text = "usage: tool [options] FILE...\n\noptions:\n  --perm {0644,0755}  file mode\n  --level {1,2,3}  how much\n  --args A  x\n  --arguments A  x\n  --operands A  x\n  --rest A  x\n  --args_1 A  x\n";
    let draft = draft(
        "tool",
        &[HelpText {
            path: vec![],
            text: text.into(),
        }],
    );
    check(&draft);
    assert!(draft.contains("enum = [\"0644\", \"0755\"]"), "{draft}");
    assert!(draft.contains("enum = [1, 2, 3]"), "{draft}");
    assert!(draft.contains("[tools.params.args_2]"), "{draft}");
}

#[test]
fn no_help_at_all_still_loads() {
    let tools = check(&draft("tool", &[]));
    assert_eq!(
        (tools[0].name.as_str(), tools[0].description.as_str()),
        ("tool", "Run `tool`")
    );
    let tools = check(&draft("", &[help(&[], "")]));
    assert_eq!(tools[0].program(), "program");
    let tools = check(&draft("my tool!", &[help(&[], "nothing useful here\n")]));
    assert_eq!(tools[0].name, "my_tool_");
}

#[test]
fn arbitrary_input_never_panics() {
    // A small deterministic generator: help-like fragments and hostile characters.
    let pieces = [
        "-",
        "--",
        "-x",
        "--long",
        "=",
        "[",
        "]",
        "<",
        ">",
        "{",
        "}",
        "(",
        ")",
        ",",
        " ",
        "  ",
        "\t",
        "\n",
        "\r",
        "...",
        "Usage:",
        "usage: p [-h] {a,b} ...",
        "Commands:",
        "Options:",
        "NUM",
        "file",
        "é",
        "日本",
        "\u{1b}[",
        "\u{8}",
        "\0",
        "[no-]",
        "=<",
        "|",
        "[possible values:",
        "Possible values:\n - a: x",
        "\u{200b}",
        "🙂",
        "-\u{e9}",
        "--\u{e9}x",
    ];
    // Deep nesting and long lines.
    let deep = format!(
        "usage: p {}x{} y\n  -a {}\n",
        "[".repeat(100_000),
        "]".repeat(100_000),
        "<".repeat(100_000)
    );
    check(&draft("p", &[help(&[], &deep)]));
    let rounds = std::env::var("FERRY_DRAFT_FUZZ_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(400);
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    for round in 0..rounds {
        let mut text = String::new();
        for _ in 0..(round % 60 + 1) {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            text.push_str(pieces[(seed >> 33) as usize % pieces.len()]);
        }
        let _ = options(&text);
        let subs = subcommands(&text);
        let helps: Vec<HelpText> = std::iter::once(help(&[], &text))
            .chain(subs.iter().map(|(n, _)| help(&[n.as_str()], &text)))
            .collect();
        check(&draft("p", &helps));
    }
}

/// Drafts every `*.txt` in `$FERRY_DRAFT_HELPS` (a help text named after its program, e.g.
/// `git.txt`, with its subcommands' helps as `git-log.txt`) and checks it; a way to try
/// real help texts (`cmd --help > dir/cmd.txt`).
#[test]
fn real_help_texts_from_a_directory() {
    let Ok(dir) = std::env::var("FERRY_DRAFT_HELPS") else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().and_then(|e| e.to_str()) != Some("txt") {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let program = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("p")
            .to_string();
        let subs = subcommands(&text);
        let sub_helps: Vec<(String, String)> = subs
            .iter()
            .filter_map(|(n, _)| {
                std::fs::read_to_string(path.with_file_name(format!("{program}-{n}.txt")))
                    .ok()
                    .map(|t| (n.clone(), t))
            })
            .collect();
        let helps: Vec<HelpText> = std::iter::once(help(&[], &text))
            .chain(sub_helps.iter().map(|(n, t)| help(&[n.as_str()], t)))
            .collect();
        let out = draft(&program, &helps);
        let tools = check(&out);
        eprintln!(
            "{program}: {} subcommands, {} tools, {} options",
            subs.len(),
            tools.len(),
            options(&text).len()
        );
    }
}

#[test]
fn descriptions_are_never_help_notes_or_errors() {
    let tools = check(&draft(
        "sh",
        &[help(&[], "/usr/bin/sh: 0: Illegal option --\n")],
    ));
    assert_eq!(tools[0].description, "Run `sh`");
    let curl = "Usage: curl [options...] <url>\n -d, --data <data>   HTTP POST data\n\nThis is not the full help, this menu is stripped into categories.\nUse \"--help category\" to get an overview of all categories.\n";
    let tools = check(&draft("curl", &[help(&[], curl)]));
    assert_eq!(tools[0].description, "Run `curl`");
    // curl's job is the network.
    assert!(
        tools[0].def.permissions.network,
        "{:?}",
        tools[0].def.permissions
    );
}

#[test]
fn two_values_optional_values_stdin_and_code() {
    let jq = "Usage:\tjq [options] <jq filter> [file...]\n\nSome of the options include:\n  -n               use `null` as the single input value;\n  --arg a v        set variable $a to value <v>;\n  --tab            use tabs for indentation;\n\nExample:\n\t$ echo '{\"foo\": 0}' | jq .\n";
    let tools = check(&draft("jq", &[help(&[], jq)]));
    let jq = &tools[0];
    assert_eq!(jq.param("arg").kind, ParamKind::Array(ItemKind::String));
    assert_eq!(
        (jq.param("arg").min_items, jq.param("arg").max_items),
        (Some(2), Some(2))
    );
    assert!(jq.param("jq-filter").code);
    assert_eq!(jq.def.stdin.as_deref(), Some("stdin"));
    // The filter is an operand jq reads before its files, never after `--`.
    assert!(
        jq.command_text()
            .ends_with(r#"["--arg", "{arg*}"], "{tab}", "{jq-filter}", "{args*}"]"#),
        "{}",
        jq.command_text()
    );

    let diff = "Usage: diff [OPTION]... FILES\nCompare FILES line by line.\n\n  -u, -U NUM, --unified[=NUM]   output NUM (default 3) lines of unified context\n";
    let tools = check(&draft("diff", &[help(&[], diff)]));
    assert!(
        tools[0].command_text().contains(r#""--unified={unified}""#),
        "{}",
        tools[0].command_text()
    );

    // A code runner's script is declared as code, so the draft loads.
    let sed = "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n\n  -n, --quiet, --silent\n                 suppress automatic printing of pattern space\n  -e script, --expression=script\n                 add the script to the commands to be executed\n\nIf no -e, --expression, -f, or --file option is given, then the first\nnon-option argument is taken as the sed script to interpret. All\nremaining arguments are names of input files; if no input files are\nspecified, then the standard input is read.\n";
    let tools = check(&draft("sed", &[help(&[], sed)]));
    assert!(tools[0].param("script").code && tools[0].param("expression").code);
    assert_eq!(
        tools[0].def.annotations.get("readOnlyHint"),
        Some(&json!(true))
    );
}

#[test]
fn the_options_people_use_are_kept_not_the_first_alphabetically() {
    // 45 long-only options first, then the ones with one-letter aliases the short help lists.
    let mut long = String::from("Usage: tool [OPTIONS] PATTERN [PATH ...]\n\nOPTIONS:\n");
    for n in 0..45 {
        long.push_str(&format!(
            "        --aaa-option-{n:02}    An option nobody uses.\n"
        ));
    }
    for c in ['w', 'm', 't', 'e', 'S', 'o'] {
        long.push_str(&format!("    -{c}, --opt-{c}    An option people use.\n"));
    }
    let short =
        "Usage: tool [OPTIONS] PATTERN\n    -w, --opt-w    Short.\n    -m, --opt-m    Short.\n";
    let text = draft("tool", &[help(&[], &long), help(&["-h"], short)]);
    let tools = check(&text);
    for c in ['w', 'm', 't', 'e', 'S', 'o'] {
        assert!(
            tools[0].params.contains_key(&format!("opt-{c}")),
            "-{c} dropped"
        );
    }
    // What was dropped is still listed.
    assert!(text.contains("--aaa-option-44"));
}
