use super::*;

// git: `git --help` lists commands in groups; the caller passes `git <sub> -h`.

const GIT_TOP: &str = include_str!("../../../../tests/fixtures/help/git.txt");

const GIT_LOG: &str = include_str!("../../../../tests/fixtures/help/git-log.txt");

const GIT_COMMIT: &str = include_str!("../../../../tests/fixtures/help/git-commit.txt");

#[test]
fn git_commands_are_read_across_groups() {
    let subs = subcommands(GIT_TOP);
    let names: Vec<&str> = subs.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        ["clone", "init", "add", "mv", "diff", "grep", "log", "status", "commit"]
    );
    assert_eq!(subs[6], ("log".to_string(), "Show commit logs".to_string()));
    assert_eq!(
        subs[3].1,
        "Move or rename a file, a directory, or a symlink"
    );
    // The usage has options but no option lines.
    assert!(options(GIT_TOP).is_empty());
}

#[test]
fn git_parse_options_lines() {
    let opts = options(GIT_LOG);
    assert_eq!(
        opts[0],
        flag(Some("--quiet"), Some('q'), "suppress diff output")
    );
    assert_eq!(opts[1], flag(Some("--source"), None, "show source"));
    assert_eq!(
        find(&opts, "--decorate-refs"),
        &valued(
            Some("--decorate-refs"),
            None,
            "pattern",
            "only decorate refs that match <pattern>"
        )
    );
    assert_eq!(
        find(&opts, "--decorate"),
        &OptionSpec {
            optional_value: true,
            ..valued(Some("--decorate"), None, "VALUE", "decorate options")
        }
    );
    assert_eq!(
        opts.iter().find(|o| o.short == Some('L')),
        Some(&valued(
            None,
            Some('L'),
            "range:file",
            "trace the evolution of line range <start>,<end> or function :<funcname> in <file>"
        ))
    );
    assert_eq!(opts.len(), 8);

    let opts = options(GIT_COMMIT);
    assert_eq!(
        find(&opts, "--file"),
        &valued(Some("--file"), Some('F'), "file", "read message from file")
    );
    assert_eq!(
        find(&opts, "--fixup").value.as_deref(),
        Some("[(amend|reword):]commit")
    );
    assert_eq!(
        find(&opts, "--cleanup").description,
        "how to strip spaces and #comments from message"
    );
    let sign = find(&opts, "--gpg-sign");
    assert_eq!(
        (sign.short, sign.value.as_deref(), sign.optional_value),
        (Some('S'), Some("key-id"), true)
    );
    assert_eq!(find(&opts, "--no-verify").short, Some('n'));
    assert_eq!(
        find(&opts, "--untracked-files").description,
        "show untracked files, optional modes: all, normal, no. (Default: all)"
    );
}

#[test]
fn git_draft() {
    let text = draft(
        "git",
        &[
            help(&[], GIT_TOP),
            help(&["log"], GIT_LOG),
            help(&["commit"], GIT_COMMIT),
        ],
    );
    let tools = check(&text);
    assert_eq!(tools.len(), 9);
    assert!(text.starts_with("# "));
    assert!(text.contains(
        "instructions = \"Drafted by ferry serve init from `git --help`; review before serving.\""
    ));
    let log = tool(&tools, "log");
    assert_eq!(log.description, "Show commit logs");
    assert_eq!(
        log.command_text(),
        r#"["git", "log", "{quiet}", "{source}", "{use-mailmap}", ["--decorate-refs", "{decorate-refs}"], "--decorate={decorate}", ["-L", "{L}"], "{revision-range}", "{args*}", ["--", "{path*}"]]"#
    );
    assert_eq!(log.param("quiet").flag.as_deref(), Some("--quiet"));
    assert_eq!(
        log.param("args").description.as_deref(),
        Some("Further arguments: <object>")
    );
    assert_eq!(
        log.def
            .annotations
            .get("readOnlyHint")
            .and_then(Value::as_bool),
        Some(true)
    );
    // git's own dangerous options are never drafted.
    assert!(!log.params.contains_key("output") && !log.params.contains_key("ext-diff"));
    let commit = tool(&tools, "commit");
    for gone in ["reedit-message", "template", "c", "t"] {
        assert!(!commit.params.contains_key(gone), "{gone} drafted");
    }
    // `-C` is denied as git's own option (`git -C dir`), not as `git commit -C <commit>`.
    assert_eq!(commit.kind("reuse-message"), "string");
    assert!(text.contains(
        "# Left out on purpose (they run programs or write files): --output, --ext-diff"
    ));
    assert_eq!(commit.kind("file"), "path");
    assert!(commit.param("file").exists);
    assert!(commit.command_text().contains(r#""--gpg-sign={gpg-sign}""#));
    assert!(commit.command_text().contains(r#"["--fixup", "{fixup}"]"#));
    assert!(commit.def.annotations.is_empty());
    // Commands whose help was not read are still drafted, and say so.
    assert_eq!(tool(&tools, "clone").command_text(), r#"["git", "clone"]"#);
    assert!(text.contains("# No help text for `git clone` was read"));
    assert_eq!(tool(&tools, "grep").def.ok_exit.len(), 2);
}

#[test]
fn subcommands_that_delete_overwrite_or_publish_are_drafted_with_confirm() {
    let top = "These are common Git commands used in various situations:\n\n   rm        Remove files from the working tree and from the index\n   push      Update remote refs along with associated objects\n   restore   Restore working tree files\n   zap       Deletes every stash\n   branch    List, create, or delete branches\n   log       Show commit logs\n   tag       Create, list, delete or verify a tag object\n";
    let text = draft("git", &[help(&[], top)]);
    let tools = check(&text);
    let confirm = |name: &str| tool(&tools, name).def.confirm.clone();
    assert_eq!(confirm("rm").as_deref(), Some("Run `git rm`? It deletes."));
    assert_eq!(
        confirm("push").as_deref(),
        Some("Run `git push`? It publishes.")
    );
    assert_eq!(
        confirm("restore").as_deref(),
        Some("Run `git restore`? It overwrites.")
    );
    assert_eq!(
        confirm("zap").as_deref(),
        Some("Run `git zap`? It deletes.")
    );
    // Listing comes first: no question for what mostly reads.
    for quiet in ["branch", "log", "tag"] {
        assert_eq!(confirm(quiet), None, "{quiet}");
    }
}

#[test]
fn git_own_options_are_denied_only_before_a_subcommand() {
    let own = "usage: git [-C <path>] [-c <name>=<value>] [--bare]\n\n    -C <path>             run as if git was started in <path>\n    -c <name>=<value>     pass a configuration parameter\n    --bare                treat the repository as a bare repository\n";
    let tools = check(&draft("git", &[help(&[], own)]));
    assert_eq!(tools[0].params.keys().collect::<Vec<_>>(), ["bare"]);
    // A subcommand's `-c` and `-C` are other options (`git switch -c <branch>`).
    let top = "These are common Git commands used in various situations:\n\n   switch    Switch branches\n";
    let switch = "usage: git switch [<options>] [<branch>]\n\n    -c, --[no-]create <branch>\n                          create and switch to a new branch\n    -C, --[no-]force-create <branch>\n                          create/reset and switch to a branch\n";
    let tools = check(&draft("git", &[help(&[], top), help(&["switch"], switch)]));
    assert_eq!(
        tools[0].params.keys().collect::<Vec<_>>(),
        ["branch", "create", "force-create"]
    );
}

#[test]
fn network_subcommands_say_so_and_the_rest_do_not() {
    let clone = "usage: git clone [<options>] [--] <repo> [<dir>]\n\n    -v, --[no-]verbose    be more verbose\n    --depth <depth>       create a shallow clone of that depth\n";
    let text = draft(
        "git",
        &[
            help(&[], GIT_TOP),
            help(&["clone"], clone),
            help(&["log"], GIT_LOG),
        ],
    );
    let tools = check(&text);
    assert!(tool(&tools, "clone").def.permissions.network);
    assert!(text.contains("network = true                   # `git clone`'s job is the network"));
    assert!(!tool(&tools, "log").def.permissions.network);
}

#[test]
fn a_manual_beside_a_short_help_keeps_the_options_people_use() {
    // git's `log --help` is its manual, `log -h` the short list: -n and --oneline survive.
    let manual = "GIT-LOG(1)\n\nNAME\n       git-log - Show commit logs\n\nOPTIONS\n       --follow\n           Continue listing the history of a file beyond renames.\n\n       -<number>, -n <number>, --max-count=<number>\n           Limit the number of commits to output.\n\n       --oneline\n           This is a shorthand for \"--pretty=oneline --abbrev-commit\" used together.\n";
    let mut manual = manual.to_string();
    for n in 0..60 {
        manual.push_str(&format!(
            "\n       --rarely-used-{n:02}\n           An option.\n"
        ));
    }
    let text = draft(
        "git",
        &[
            help(&[], GIT_TOP),
            help(&["log"], &manual),
            help(&["log", "-h"], GIT_LOG),
        ],
    );
    let log = tool(&check(&text), "log").params.clone();
    for name in ["max-count", "oneline", "quiet", "source"] {
        assert!(log.contains_key(name), "{name}: {:?}", log.keys());
    }
    assert!(
        text.contains("--rarely-used-59"),
        "dropped options are listed"
    );
}
