//! `ferry serve init CLI` drafts a manifest from the CLI's own `--help`, and the draft loads
//! and serves without edits: git (grouped commands, `-h` option lists), curl (one long option
//! list), tar and ls (GNU style), and an argparse CLI with subcommands and choices. (Help texts
//! of ripgrep, docker and clap-style CLIs are covered by the draft module's own tests.)

mod support;

use serde_json::json;
use support::*;

fn notes_cli() -> String {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/clis/notes-cli")
        .display()
        .to_string()
}

#[test]
fn drafts_load_and_serve_without_edits() {
    let env = Env::new();
    let notes = notes_cli();
    for (cli, tool) in [
        ("git", "log"),
        ("curl", "curl"),
        ("tar", "tar"),
        ("ls", "ls"),
        (notes.as_str(), "add"),
    ] {
        let draft = env.run(&["serve", "init", cli]);
        assert_eq!(draft.code, 0, "{cli}: {}", draft.stderr);
        assert!(
            draft.stdout.starts_with("# ferry serve manifest for `"),
            "{cli}: {}",
            &draft.stdout[..200.min(draft.stdout.len())]
        );
        let file = format!("{}.toml", tool);
        env.write(&format!("work/{file}"), &draft.stdout);
        let mut served = Served::start(&env, &["--manifest", &file]);
        let listed = served.call(1, "tools/list", json!({}), &mut Vec::new());
        let tools = listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{cli}: {listed}"));
        assert!(
            tools.iter().any(|t| t["name"] == tool),
            "{cli}: {:?}",
            tools.iter().map(|t| t["name"].clone()).collect::<Vec<_>>()
        );
    }
}

#[test]
fn an_argparse_draft_keeps_subcommands_choices_and_numbers() {
    let env = Env::new();
    let draft = env.run(&["serve", "init", &notes_cli()]);
    assert_eq!(draft.code, 0, "{}", draft.stderr);
    env.write("work/notes.toml", &draft.stdout);
    let manifest = ferry::manifest::load(&env.path("work/notes.toml")).unwrap();
    let names: Vec<&str> = manifest.tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["add", "list"]);
    let add = &manifest.tools[0];
    let tag = add.params.iter().find(|p| p.name == "tag").expect("--tag");
    assert_eq!(
        tag.enum_values,
        [json!("work"), json!("home"), json!("misc")]
    );
    let priority = add
        .params
        .iter()
        .find(|p| p.name == "priority")
        .expect("--priority");
    assert_eq!(priority.kind, ferry::manifest::ParamKind::Integer);
    let list = &manifest.tools[1];
    let reverse = list
        .params
        .iter()
        .find(|p| p.name == "reverse")
        .expect("--reverse");
    assert_eq!(
        (reverse.kind.clone(), reverse.flag.as_deref()),
        (ferry::manifest::ParamKind::Boolean, Some("--reverse"))
    );
}

#[test]
fn a_cli_without_help_is_a_clear_error() {
    let silent = notes_cli().replace("notes-cli", "silent");
    let env = Test::new()
        .args(&["serve", "init", &silent])
        .status(2)
        .stderr(&format!("error: {silent} --help printed nothing\nhint: write the manifest by hand; see the README's manifest example\n"))
        .run();
    Test::with(env)
        .args(&["serve", "init", "no-such-cli-anywhere"])
        .status(2)
        .stderr("error: command \"no-such-cli-anywhere\" not found\nhint: install it, or give its full path\n")
        .run();
}

#[test]
fn help_is_read_with_no_repositorys_config_in_effect() {
    // `ferry serve init git` run inside a hostile repository: git honours a repository's
    // man.viewer and man.<tool>.cmd when asked for help, so reading help there would run it.
    let env = Env::new();
    let marker = env.path("marker");
    let work = env.path("work");
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&work)
            .env("HOME", env.path("home"))
            .status()
            .unwrap();
        assert!(status.success());
    };
    git(&["init", "-q"]);
    git(&["config", "help.format", "man"]);
    git(&["config", "man.viewer", "evil"]);
    git(&[
        "config",
        "man.evil.cmd",
        &format!("touch {}", marker.display()),
    ]);
    let draft = env.run(&["serve", "init", "git"]);
    assert_eq!(draft.code, 0, "{}", draft.stderr);
    assert!(!marker.exists(), "the repository's man.evil.cmd ran");
}

fn bad_help(mode: &str) -> String {
    notes_cli().replace("notes-cli", &format!("{mode}-help"))
}

#[test]
fn a_binary_help_is_one_clear_line() {
    let cli = bad_help("binary");
    Test::new()
        .args(&["serve", "init", &cli])
        .status(2)
        .stderr(&format!("error: {cli} --help printed binary data, not a help text\nhint: write the manifest by hand; see the README's manifest example\n"))
        .run();
}

#[test]
fn huge_foreign_and_hanging_helps_still_draft_within_limits() {
    let env = Env::new();
    for mode in ["huge", "german", "hang"] {
        let cli = bad_help(mode);
        let run = env.run(&["serve", "init", &cli]);
        assert_eq!(run.code, 0, "{mode}: {}", run.stderr);
        env.write("work/bad.toml", &run.stdout);
        let manifest = ferry::manifest::load(&env.path("work/bad.toml")).unwrap();
        let tool = &manifest.tools[0];
        assert!(tool.params.len() <= 40, "{mode}: {}", tool.params.len());
        let names: Vec<&str> = tool.params.iter().map(|p| p.name.as_str()).collect();
        match mode {
            "german" => assert!(names.contains(&"zeilen"), "{names:?}"),
            "hang" => assert!(names.contains(&"quiet"), "{names:?}"),
            _ => assert!(run.stdout.contains("more options of"), "{mode}"),
        }
    }
    // Nothing the hanging help started is left running.
    assert!(processes_matching("hang-help").is_empty());
}

#[test]
fn a_cli_that_refuses_help_is_one_clear_line() {
    // dash's and mawk's answer to --help (and to -h): no help to draft from.
    let cli = bad_help("refuse");
    Test::new()
        .args(&["serve", "init", &cli])
        .status(2)
        .stderr(&format!("error: {cli} has no --help (it answered: refuse-help: 0: Illegal option -help)\nhint: write the manifest by hand; see the README's manifest example\n"))
        .run();
}
