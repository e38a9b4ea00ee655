//! What a second new user hit (issue 27, items 6 to 15), each as the user met it: real
//! servers, the real binary, defaults on (calls go through the daemon), a fresh HOME.

mod support;

use serde_json::json;
use support::{Env, Test};

/// `{"command": ..., "args": [...]}` for a command line of the fixtures.
fn entry(command_line: &str) -> serde_json::Value {
    let mut words = command_line.split_whitespace();
    let command = words.next().unwrap();
    json!({"command": command, "args": words.collect::<Vec<_>>()})
}

// 7. Listings keep what tells tools apart.
#[test]
fn filesystem_listing_tells_its_tools_apart() {
    let env = Env::warm();
    let root = env.path("work");
    Test::with(env)
        .server("fs", entry(&support::filesystem(&root)))
        .args(&["fs"])
        .stdout(
            "read_file(path) - Deprecated, use read_text_file\n\
             read_text_file(path) - Read complete contents of file from file system as text\n\
             read_media_file(path) - Read file and return it as base64-encoded content block\n\
             read_multiple_files(paths) - Read contents of multiple files simultaneously\n\
             write_file(path, content) - Create new file or completely overwrite file with new content\n\
             edit_file(path, edits) - Make line-based edits to text file\n\
             create_directory(path) - Create new directory or ensure directory exists\n\
             list_directory(path) - Get detailed listing of files and directories in path\n\
             list_directory_with_sizes(path) - Get detailed listing of files and directories in path, including sizes\n\
             directory_tree(path) - Get recursive tree view of files\n\
             move_file(source, destination) - Move or rename files and directories\n\
             search_files(path, pattern) - Recursively search for files and directories matching pattern\n\
             get_file_info(path) - Retrieve detailed metadata about file or directory\n\
             list_allowed_directories() - Returns list of directories\n",
        )
        .run();
}

// 7. A tool whose arguments are all optional is not shown as one whose are too long to list.
#[test]
fn optional_arguments_are_marked_in_the_listing() {
    let env = Test::with(Env::warm())
        .server("everything", entry(&support::everything()))
        .scene();
    let listing = env.run(&["everything"]);
    assert_eq!(listing.code, 0, "{}", listing.stderr);
    let line = listing
        .stdout
        .lines()
        .find(|l| l.starts_with("get-resource-links"))
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        line,
        "get-resource-links([count]) - Returns up to ten resource links"
    );
}

// 8. A string argument reads `@file` when the file exists, and `-` reads standard input.
#[test]
fn string_arguments_read_files_and_standard_input() {
    let env = Env::warm();
    let root = env.path("work");
    let env = Test::with(env)
        .server("fs", entry(&support::filesystem(&root)))
        .file("work/in.txt", "from the file\n")
        .args(&[
            "fs",
            "write_file",
            "--path",
            "out.txt",
            "--content",
            "@in.txt",
        ])
        .stdout("Successfully wrote to out.txt\n")
        .run();
    assert_eq!(
        std::fs::read_to_string(root.join("out.txt")).unwrap(),
        "from the file\n"
    );
    let env = Test::with(env)
        .args(&["fs", "write_file", "--path", "piped.txt", "--content", "-"])
        .stdin("from stdin")
        .stdout("Successfully wrote to piped.txt\n")
        .run();
    assert_eq!(
        std::fs::read_to_string(root.join("piped.txt")).unwrap(),
        "from stdin"
    );
    // `@name` of no file is the text itself.
    let _env = Test::with(env)
        .args(&[
            "fs",
            "write_file",
            "--path",
            "at.txt",
            "--content",
            "@someone",
        ])
        .stdout("Successfully wrote to at.txt\n")
        .run();
    assert_eq!(
        std::fs::read_to_string(root.join("at.txt")).unwrap(),
        "@someone"
    );
}

// 8. Positional words for several required arguments get the call that was meant; `--json`
// after the tool name is the arguments object, never the envelope.
#[test]
fn argument_mistakes_get_the_right_call() {
    let env = Test::with(Env::warm())
        .server("ev", entry(&support::everything()))
        .args(&["ev", "get-sum", "1", "2"])
        .status(2)
        .stderr(
            "error: unexpected argument \"1\"\n\
             hint: give arguments as --flags: ferry ev get-sum --a 1 --b 2\n",
        )
        .run();
    let env = Test::with(env)
        .args(&["ev", "get-sum", "--a", "1", "--b", "2", "--json"])
        .status(2)
        .stderr(
            "error: --json after the tool name takes the arguments as a JSON object\n\
             hint: for the exact result envelope, put --json before the tool: ferry ev --json get-sum ...\n",
        )
        .run();
    Test::with(env)
        .args(&["ev", "get-sum", "--json", "{\"a\": 1, \"b\": 2}"])
        .stdout("The sum of 1 and 2 is 3.\n")
        .run();
}

/// A Python SDK server whose `more` takes a boolean or a string, as sequential-thinking's
/// `nextThoughtNeeded` does.
const BOOL_OR_STRING: &str = r#"
from mcp.server.mcpserver import MCPServer
mcp = MCPServer("flags")

@mcp.tool()
def think(thought: str, more: bool | str = False) -> str:
    """Record a thought."""
    return f"{thought} more={more!r}"

mcp.run()
"#;

// 8. A property typed boolean-or-string works as a bare `--flag`.
#[test]
fn a_boolean_or_string_property_is_a_bare_flag() {
    let env = Env::warm();
    let script = env.path("flags.py");
    std::fs::write(&script, BOOL_OR_STRING).unwrap();
    let env = Test::with(env)
        .server(
            "flags",
            json!({"command": support::venv_python(), "args": [script]}),
        )
        .args(&["flags", "think", "--thought", "hi", "--more"])
        .stdout("hi more=True\n")
        .run();
    // And `--no-flag` is its `false`, as for any boolean (SKILL.md says `--flag`/`--no-flag`).
    let env = Test::with(env)
        .args(&["flags", "think", "--thought", "hi", "--no-more"])
        .stdout("hi more=False\n")
        .run();
    // A value after the flag is still the string.
    Test::with(env)
        .args(&["flags", "think", "--thought", "hi", "--more", "later"])
        .stdout("hi more='later'\n")
        .run();
}

/// Tools served by `ferry serve` from the working directory: a count of a file's bytes, and
/// a command that prints nothing.
const COUNTS: &str = r#"
[server]
name = "counts"

[[tools]]
name = "bytes"
description = "Count the bytes of a file."
command = ["wc", "-c", "{path}"]

[tools.params.path]
type = "path"

[[tools]]
name = "quiet"
description = "Do nothing, quietly."
command = ["true"]
"#;

fn counts(env: Env) -> Env {
    let manifest = env.path("work/counts.toml");
    std::fs::write(&manifest, COUNTS).unwrap();
    Test::with(env)
        .server(
            "counts",
            json!({"command": support::FERRY, "args": ["serve", "--manifest", manifest]}),
        )
        .scene()
}

// 13. A served path parameter reaches the command as the model gave it; an empty answer
// says the call ran.
#[test]
fn served_paths_stay_relative_and_empty_output_is_said() {
    let env = counts(Env::warm());
    let env = Test::with(env)
        .file("work/notes.txt", "four")
        .args(&["counts", "bytes", "--path", "notes.txt"])
        .stdout("4 notes.txt\n")
        .run();
    let _env = Test::with(env)
        .args(&["counts", "quiet"])
        .stdout("(no output)\n")
        .run();
}

// 13. A text block that is indented JSON is printed compact.
#[test]
fn indented_json_text_is_printed_compact() {
    let env = Env::warm();
    let root = env.path("work");
    let _env = Test::with(env)
        .server("fs", entry(&support::filesystem(&root)))
        .file("work/a.txt", "a")
        .args(&["fs", "directory_tree", "--path", "."])
        .stdout("[{\"name\":\"a.txt\",\"type\":\"file\"}]\n")
        .run();
}

// 10. A tool hidden by the config, a disabled server and an invalid one are named as such,
// never "unknown" with a "did you mean".
#[test]
fn what_the_config_set_aside_is_named_as_such() {
    let env = Env::warm();
    let config = env.path("config/servers.json").display().to_string();
    let mut memory = entry(&support::memory());
    memory["excludeTools"] = json!(["delete_entities"]);
    let mut disabled = entry(&support::memory());
    disabled["disabled"] = json!(true);
    let mut invalid = entry(&support::memory());
    invalid["timeout"] = json!("soon");
    let env = Test::with(env)
        .server("mem", memory)
        .server("off", disabled)
        .server("bad", invalid)
        .args(&["mem", "delete_entities", "--entityNames", "x"])
        .status(2)
        .stderr(&format!(
            "warning: server \"bad\" in {config}: \"timeout\" must be a number of seconds between 0 and 604800\n\
             error: tool \"delete_entities\" of mem is excluded by excludeTools in servers.json\n\
             hint: edit {config} to call it; `ferry mem` lists the tools it allows\n"
        ))
        .run();
    let env = Test::with(env)
        .args(&["off"])
        .status(2)
        .stderr(&format!(
            "warning: server \"bad\" in {config}: \"timeout\" must be a number of seconds between 0 and 604800\n\
             error: server \"off\" is disabled in servers.json\n\
             hint: `ferry config` shows where it is configured\n"
        ))
        .run();
    let _env = Test::with(env)
        .args(&["bad"])
        .status(2)
        .stderr(&format!(
            "warning: server \"bad\" in {config}: \"timeout\" must be a number of seconds between 0 and 604800\n\
             error: server \"bad\" is configured in servers.json but invalid: \"timeout\" must be a number of seconds between 0 and 604800\n\
             hint: `ferry config` shows where it is configured\n"
        ))
        .run();
}

// 10. A repository's reserved server name warns once; find never suggests running a server
// that trust refuses.
#[test]
fn a_repositorys_servers_warn_once_and_are_not_suggested_untrusted() {
    let env = Env::warm();
    std::fs::create_dir_all(env.path("work/.git")).unwrap();
    let project = json!({"mcpServers": {"find": entry(&support::memory()), "proj": entry(&support::memory())}});
    env.write("work/.mcp.json", &project.to_string());
    let first = env.run(&["find", "graph"]);
    let second = env.run(&["find", "graph"]);
    assert_eq!(second.code, 2);
    assert!(
        first.stderr.contains("warning: skipped a server in ")
            && !second.stderr.contains("warning: skipped a server"),
        "{}\n--\n{}",
        first.stderr,
        second.stderr
    );
    assert!(
        second.stderr.ends_with(
            "hint: these are a repository's servers, not trusted here: read its .mcp.json, then run `ferry trust`\n"
        ),
        "{}",
        second.stderr
    );
}

// 12. Messages say what is wrong, where, and what to do.
#[test]
fn messages_name_the_mistake() {
    // A missing field of the first item: the flag first, the item counted in words, a hint.
    let env = Test::with(Env::warm())
        .server("mem", entry(&support::memory()))
        .args(&[
            "mem",
            "create_entities",
            "--entities",
            "[{\"name\": \"a\", \"observations\": []}]",
        ])
        .status(2)
        .stderr(
            "error: --entities item 1: missing required entityType (str)\n\
             hint: see: ferry mem create_entities --help\n",
        )
        .run();
    // A negative timeout is refused for what it is.
    let env = Test::with(env)
        .args(&["--timeout", "-1", "mem", "read_graph"])
        .status(2)
        .stderr(
            "error: --timeout must be a number of seconds above 0 and at most 604800, not \"-1\"\n\
             hint: for example: --timeout 120\n",
        )
        .run();
    // A URL without a host is refused when it is added, not at the first call.
    let _env = Test::with(env)
        .args(&["add", "x", "http://"])
        .status(2)
        .stderr(
            "error: invalid URL \"http://\": empty host\n\
             hint: give the server's whole URL: ferry add NAME https://host/mcp\n",
        )
        .run();
}

// 12. https:// to a plain-HTTP port says so; a wrong token is not "required"; a JSON tool
// that prints nothing has no rows.
#[test]
fn transport_and_served_messages_say_what_happened() {
    let env = counts(Env::warm());
    std::fs::write(
        env.path("work/rows.toml"),
        "[server]\nname = \"rows\"\n\n[[tools]]\nname = \"none\"\ndescription = \"Print no rows.\"\ncommand = [\"true\"]\noutput = \"json\"\n",
    )
    .unwrap();
    let served = support::HttpServed::start(
        &env,
        &[
            "--manifest",
            &env.path("work/rows.toml").display().to_string(),
        ],
    );
    let https = served.url.replacen("http://", "https://", 1);
    let run = env.run(&[&https, "none"]);
    assert_eq!(run.code, 3, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        format!(
            "error: could not reach {https}: the server answers plain HTTP, not TLS\n\
             hint: use http:// for this server: {}\n",
            served.url
        )
    );
    let (status, _, body) = support::http_exchange(
        served.port,
        "POST",
        "/mcp",
        &[
            ("Authorization", "Bearer wrong"),
            ("Content-Type", "application/json"),
        ],
        "",
        "{}",
    );
    assert_eq!(
        (status, body.trim()),
        (
            401,
            "the bearer token is not the one this server was started with"
        )
    );
    let token = served.token.clone().unwrap();
    let configured = json!({"mcpServers": {"rows": {"url": served.url, "headers": {"Authorization": format!("Bearer {token}")}}}});
    env.write("config/servers.json", &configured.to_string());
    let run = env.run(&["rows", "none"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "(no output)\n"),
        "{}",
        run.stderr
    );
}

// 11. `ferry SERVER --help` shows the server's instructions; a skill says when to use the
// server in plain words.
#[test]
fn instructions_are_shown_and_skills_say_when_in_plain_words() {
    let env = Test::with(Env::warm())
        .server("ev", entry(&support::everything()))
        .server("mem", entry(&support::memory()))
        .scene();
    let help = env.run(&["ev", "--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    assert!(
        help.stdout
            .contains("\nInstructions from ev:\n# Everything Server – Server Instructions\n"),
        "{}",
        help.stdout
    );
    let listing = env.run(&["ev"]);
    assert!(
        !listing.stdout.contains("Instructions from"),
        "{}",
        listing.stdout
    );
    for server in ["ev", "mem"] {
        let wrote = env.run(&["skill", server]);
        assert_eq!(wrote.code, 0, "{}", wrote.stderr);
    }
    let description = |server: &str| {
        let skill =
            std::fs::read_to_string(env.path(&format!("work/skills/{server}/SKILL.md"))).unwrap();
        skill.lines().nth(2).unwrap().to_string()
    };
    // The server's instructions sit under the skill's own heading, their headings below it,
    // and the skill states the string rule `--help` states.
    let ev = std::fs::read_to_string(env.path("work/skills/ev/SKILL.md")).unwrap();
    assert!(
        ev.contains("\n### Everything Server – Server Instructions\n")
            && !ev.contains("\n# Everything Server")
            && ev.contains("a string `@path` is that file's text when the file exists, and `-` is standard input."),
        "{ev}"
    );
    assert!(
        description("ev").ends_with("Use when a task needs ev (Everything Server)."),
        "{}",
        description("ev")
    );
    assert!(
        description("mem").ends_with(
            "Use when a task needs mem (entities, relations, observations, nodes, graph)."
        ),
        "{}",
        description("mem")
    );
}

// 15. Smaller edges: `ferry daemon` alone is its status, `remove` takes several names,
// `completions` names its shells, a gzip result is saved as .gz.
#[test]
fn smaller_edges_of_the_command_line() {
    let env = Test::new()
        .args(&["daemon"])
        .stdout("no ferry daemon is running\n")
        .run();
    let env = Test::with(env)
        .args(&["completions"])
        .status(2)
        .stderr(
            "error: ferry completions needs a shell: bash, zsh or fish\n\
             hint: for example: ferry completions bash > ~/.local/share/bash-completion/completions/ferry\n",
        )
        .run();
    let config = env.path("config/servers.json").display().to_string();
    let env = Test::with(env)
        .server("a", entry(&support::memory()))
        .server("b", entry(&support::memory()))
        .args(&["remove", "a", "b"])
        .stdout(&format!(
            "removed a from {config}\nremoved b from {config}\n"
        ))
        .run();
    let env = Test::with(env)
        .server("ev", entry(&support::everything()))
        .scene();
    let gz = env.run(&[
        "ev",
        "gzip-file-as-resource",
        "--data",
        "data:text/plain;base64,aGVsbG8K",
        "--outputType",
        "resource",
    ]);
    assert_eq!(gz.code, 0, "{}", gz.stderr);
    assert!(gz.stdout.contains(".gz\n"), "{}", gz.stdout);
}

// 14. The meter's words: no note about Claude's tokenizer for an OpenAI host in its own
// encoding, no break-even past the tools there are, `1 tool`.
#[test]
fn the_meter_says_what_its_figures_mean() {
    let env = Test::with(Env::warm())
        .server("mem", entry(&support::memory()))
        .scene();
    let run = env.run(&["tokens", "--host", "openai", "--tokenizer", "cl100k_base"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("cl100k_base tokens, openai tool format.\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("Claude"), "{}", run.stdout);
    assert!(
        run.stdout.contains(
            "against eager loading: ferry costs less whichever of the 9 tools are used (break-even past all of them, at "
        ),
        "{}",
        run.stdout
    );
    // The proxy's break-even against eager loading (a catalog line and find/describe per use)
    // is past the 9 tools too: said as such, never "up to N" for more tools than there are.
    let proxy = env.run(&["tokens", "--servers"]);
    assert_eq!(proxy.code, 0, "{}", proxy.stderr);
    assert!(
        proxy.stdout.contains(
            "against eager loading: the proxy costs less whichever of the 9 tools are used (break-even past all of them, at "
        ),
        "{}",
        proxy.stdout
    );
    std::fs::write(
        env.path("work/one.toml"),
        "[server]\nname = \"one\"\n\n[[tools]]\nname = \"now\"\ndescription = \"Print the date.\"\ncommand = [\"date\"]\n",
    )
    .unwrap();
    let served = env.run(&["tokens", "--manifest", "one.toml"]);
    assert_eq!(served.code, 0, "{}", served.stderr);
    assert!(
        served.stdout.contains(": 1 tool as MCP, beside"),
        "{}",
        served.stdout
    );
}

// 15. `ferry serve` alone names every mode it has, and `--demo` is in its help.
#[test]
fn serve_alone_names_its_modes() {
    let env = Test::new()
        .args(&["serve"])
        .status(2)
        .stderr(
            "error: ferry serve needs what to serve: --manifest FILE, --cli NAME, --servers or --demo\n\
             hint: ferry serve --manifest tools.toml  or  ferry serve --cli git  or  ferry serve --servers  or  ferry serve --demo; draft a manifest with ferry serve init git\n",
        )
        .run();
    let help = env.run(&["serve", "--help"]);
    assert_eq!(help.code, 0, "{}", help.stderr);
    assert!(
        help.stdout
            .contains("\n      --demo\n          Serve the demo tools"),
        "{}",
        help.stdout
    );
}

/// The Arguments section of a `--help`: each argument's line, by its name.
fn arguments_of(help: &str) -> Vec<String> {
    help.split("\nArguments:\n")
        .nth(1)
        .map(|rest| {
            rest.split("\n\n").next().unwrap_or("").lines().fold(
                Vec::<String>::new(),
                |mut args, line| {
                    // A long help puts the description on the lines below the name.
                    match args.last_mut() {
                        Some(last) if !line.trim_start().starts_with(['<', '[']) => {
                            last.push(' ');
                            last.push_str(line.trim());
                        }
                        _ => args.push(line.to_string()),
                    }
                    args
                },
            )
        })
        .unwrap_or_default()
}

/// The commands a `--help` lists (not `help` itself).
fn commands_of(help: &str) -> Vec<String> {
    help.split("\nCommands:\n")
        .nth(1)
        .map(|rest| {
            rest.split("\n\n")
                .next()
                .unwrap_or("")
                .lines()
                .filter_map(|l| l.split_whitespace().next())
                .filter(|c| *c != "help")
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

// 15. Every command's --help says what each of its arguments is.
#[test]
fn every_commands_help_describes_its_arguments() {
    let env = Env::new();
    let mut undescribed = Vec::new();
    let mut queue: Vec<Vec<String>> = vec![Vec::new()];
    let mut seen = 0;
    while let Some(path) = queue.pop() {
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        let help = env.run(&args);
        assert_eq!(help.code, 0, "ferry {}: {}", args.join(" "), help.stderr);
        seen += 1;
        for line in arguments_of(&help.stdout) {
            // `  <NAME>  what it is`: a name alone is a word the reader must guess at.
            let described = line
                .trim_start()
                .split_once(|c: char| c == '>' || c == ']')
                .is_some_and(|(_, rest)| {
                    !rest.trim_start_matches(['.', ']', '>']).trim().is_empty()
                });
            if !described {
                undescribed.push(format!("ferry {}: {}", path.join(" "), line.trim()));
            }
        }
        for command in commands_of(&help.stdout) {
            let mut deeper = path.clone();
            deeper.push(command);
            queue.push(deeper);
        }
    }
    assert!(seen > 15, "only {seen} commands were looked at");
    assert!(undescribed.is_empty(), "{}", undescribed.join("\n"));
}

// 15. Bash completion offers the commands a person types (never `__complete`) and a tool's
// flags after its name.
#[test]
fn bash_completes_a_tools_flags_and_no_hidden_command() {
    let env = Test::with(Env::warm())
        .server("mem", entry(&support::memory()))
        .scene();
    let script = env.run(&["completions", "bash"]);
    assert_eq!(script.code, 0, "{}", script.stderr);
    let offered: Vec<&str> = script
        .stdout
        .lines()
        .filter(|l| l.contains("opts=") && l.contains("__complete"))
        .collect();
    assert!(offered.is_empty(), "{}", offered.join("\n"));
    assert!(!script.stdout.contains("subcmd____complete"));
    // What a person types is all still offered.
    assert!(
        script.stdout.contains(" --version add remove "),
        "{}",
        script.stdout
    );
    env.write("work/ferry.bash", &script.stdout);
    // The listing fills the cache completion reads.
    let listed = env.run(&["mem"]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    let complete = |words: &str, current: usize| {
        let bin = std::path::Path::new(support::FERRY).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let output = std::process::Command::new("bash")
            .arg("-c")
            .arg(format!(
                "source ./ferry.bash; COMP_WORDS=({words}); COMP_CWORD={current}; _ferry_dynamic; printf '%s\\n' \"${{COMPREPLY[@]}}\""
            ))
            .current_dir(env.path("work"))
            .env("PATH", path)
            .env("HOME", env.path("home"))
            .env("FERRY_CONFIG_DIR", env.path("config"))
            .env("FERRY_CACHE_DIR", env.path("cache"))
            .env_remove("FERRY_NO_DAEMON")
            .output()
            .unwrap();
        let mut words: Vec<String> = String::from_utf8_lossy(&output.stdout)
            .lines()
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .collect();
        words.sort();
        words
    };
    assert_eq!(
        complete("ferry mem create_entities --", 3),
        ["--entities", "--help"]
    );
    assert_eq!(complete("ferry mem search_nodes --q", 3), ["--query"]);
    let first = complete("ferry __", 1);
    assert!(first.is_empty(), "{first:?}");
}

// 15. `ferry daemon status` tells a server reached by URL (its URL) and a `--cmd` server
// from the config's.
#[test]
fn daemon_status_says_how_each_server_is_reached() {
    let env = Env::warm();
    let served = support::HttpServed::start(&env, &["--demo"]);
    let token = served.token.clone().unwrap();
    let env = Test::with(env)
        .server(
            "web",
            json!({"url": served.url, "headers": {"Authorization": format!("Bearer {token}")}}),
        )
        .server("mem", entry(&support::memory()))
        .scene();
    for args in [
        vec!["web", "date"],
        vec!["mem", "read_graph"],
        vec![
            "--cmd",
            &support::time_server(),
            "get_current_time",
            "--timezone",
            "UTC",
        ],
    ] {
        let run = env.run(&args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
    }
    let status = env.run(&["daemon", "status"]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    let row = |name: &str| {
        status
            .stdout
            .lines()
            .filter(|l| l.starts_with(&format!("{name} ")))
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert!(
        status
            .stdout
            .lines()
            .nth(1)
            .unwrap()
            .ends_with("  directory or URL"),
        "{}",
        status.stdout
    );
    let web = row("web");
    assert!(
        web.len() == 1 && web[0].ends_with(&format!("  {}", served.url)),
        "{}",
        status.stdout
    );
    let work = env.path("work").display().to_string();
    let config = row("mem");
    let cmd = status
        .stdout
        .lines()
        .filter(|l| l.ends_with(&format!("  {work}  (--cmd)")))
        .count();
    assert!(
        config.len() == 1 && config[0].ends_with(&format!("  {work}")),
        "{}",
        status.stdout
    );
    assert_eq!(cmd, 1, "{}", status.stdout);
}

// 15. A server given its credentials as a configured header needs no sign-in, and says so.
#[test]
fn auth_status_names_a_configured_header() {
    Test::new()
        .server(
            "web",
            json!({"url": "http://127.0.0.1:9/mcp", "headers": {"Authorization": "Bearer abc"}}),
        )
        .server("open", json!({"url": "http://127.0.0.1:9/open"}))
        .args(&["auth", "--status"])
        .stdout("web  no sign-in; sends the configured header Authorization\nopen  not signed in\n")
        .run();
}

/// A ferry run at a terminal (a pseudo-terminal for its stdin, stdout and stderr), as a
/// person runs it: the bytes it wrote, and answers typed when a prompt shows.
struct AtTerminal {
    child: std::process::Child,
    master: std::fs::File,
    seen: std::sync::Arc<std::sync::Mutex<Vec<u8>>>,
    reader: Option<std::thread::JoinHandle<()>>,
}

impl AtTerminal {
    fn start(env: &Env, args: &[&str]) -> AtTerminal {
        use std::os::fd::FromRawFd;
        let (mut master, mut slave) = (0, 0);
        let mut size = libc::winsize {
            ws_row: 50,
            ws_col: 400,
            ws_xpixel: 0,
            ws_ypixel: 0,
        };
        let opened = unsafe {
            libc::openpty(
                &mut master,
                &mut slave,
                std::ptr::null_mut(),
                std::ptr::null(),
                &mut size,
            )
        };
        assert_eq!(opened, 0, "openpty: {}", std::io::Error::last_os_error());
        let slave = unsafe { std::fs::File::from_raw_fd(slave) };
        let master = unsafe { std::fs::File::from_raw_fd(master) };
        let child = env
            .command(args)
            .stdin(slave.try_clone().unwrap())
            .stdout(slave.try_clone().unwrap())
            .stderr(slave)
            .spawn()
            .unwrap();
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let mut from = master.try_clone().unwrap();
        let into = seen.clone();
        // Until every copy of the terminal's other end is closed (EIO).
        let reader = std::thread::spawn(move || {
            let mut buffer = [0u8; 4096];
            while let Ok(n @ 1..) = std::io::Read::read(&mut from, &mut buffer) {
                into.lock().unwrap().extend_from_slice(&buffer[..n]);
            }
        });
        AtTerminal {
            child,
            master,
            seen,
            reader: Some(reader),
        }
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen.lock().unwrap()).into_owned()
    }

    /// Types `answer` (and Enter) once `prompt` shows.
    fn answer(&mut self, prompt: &str, answer: &str) {
        assert!(
            support::wait_until(60, || self.text().contains(prompt)),
            "no prompt {prompt:?} in {:?}",
            self.text()
        );
        std::io::Write::write_all(&mut self.master, format!("{answer}\n").as_bytes()).unwrap();
    }

    /// Waits until `text` shows.
    fn wait_for(&self, text: &str) {
        assert!(
            support::wait_until(60, || self.text().contains(text)),
            "no {text:?} in {:?}",
            self.text()
        );
    }

    /// Ctrl-C, as the terminal sends it to the command.
    fn interrupt(&self) {
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
    }

    /// Waits for the end: the exit code and the screen as a terminal shows it.
    fn finish(mut self) -> (i32, Vec<String>) {
        let mut code = None;
        assert!(
            support::wait_until(120, || {
                code = self.child.try_wait().unwrap();
                code.is_some()
            }),
            "ferry did not end: {:?}",
            self.text()
        );
        self.reader.take().unwrap().join().unwrap();
        (code.unwrap().code().unwrap_or(-1), screen(&self.text()))
    }
}

/// What a terminal shows of `bytes`: each row after carriage returns, erases to the end of
/// the line (`ESC [ K`) and new lines are applied.
fn screen(bytes: &str) -> Vec<String> {
    let mut rows: Vec<Vec<char>> = vec![Vec::new()];
    let mut column = 0;
    let mut chars = bytes.chars().peekable();
    while let Some(c) = chars.next() {
        let row = rows.last_mut().unwrap();
        match c {
            '\r' => column = 0,
            '\n' => {
                rows.push(Vec::new());
            }
            '\x1b' => {
                let mut sequence = String::new();
                for next in chars.by_ref() {
                    sequence.push(next);
                    if next.is_ascii_alphabetic() {
                        break;
                    }
                }
                if sequence == "[K" {
                    row.truncate(column);
                }
            }
            c => {
                if column < row.len() {
                    row[column] = c;
                } else {
                    row.push(c);
                }
                column += 1;
            }
        }
    }
    rows.into_iter().map(|r| r.into_iter().collect()).collect()
}

// 9. A server's question during a task takes the status line away while it is open: the
// question starts its own line and the person's answer stays beside the prompt.
#[test]
fn a_question_during_a_task_stays_on_screen() {
    let env = Test::with(Env::warm())
        .server("ev", entry(&support::everything()))
        .scene();
    // The daemon runs before the terminal is opened, so that only this ferry holds it.
    assert_eq!(env.run(&["ev"]).code, 0);
    let mut run = AtTerminal::start(
        &env,
        &[
            "ev",
            "simulate-research-query",
            "--topic",
            "x",
            "--ambiguous",
        ],
    );
    let prompt = "interpretation (technical (Technical/scientific perspective)|historical (Historical perspective)|current (Current events/news perspective)): ";
    run.answer(prompt, "technical");
    let (code, screen) = run.finish();
    assert_eq!(code, 0, "{screen:#?}");
    let question = screen
        .iter()
        .position(|row| row.contains("could have multiple interpretations"))
        .unwrap_or_else(|| panic!("{screen:#?}"));
    assert_eq!(
        screen[question],
        "ferry: The research query \"x\" could have multiple interpretations. Please clarify what you're looking for:",
        "{screen:#?}"
    );
    assert_eq!(
        screen[question + 1],
        format!("{prompt}technical"),
        "{screen:#?}"
    );
    assert!(
        screen
            .iter()
            .any(|row| row == "- **Clarification**: technical"),
        "{screen:#?}"
    );
}

/// A server (the Python SDK) that lists `tools` as given.
fn snapshot_of(env: &Env, tools: serde_json::Value) -> serde_json::Value {
    let file = env.path("work/tools.json");
    std::fs::write(&file, tools.to_string()).unwrap();
    entry(&support::snapshot_server(&file))
}

// 9. A titled enum (oneOf of const and title, or the legacy enumNames) lists its choices,
// each with its title, in the tool's --help; a value that is not one of them is refused.
#[test]
fn titled_choices_are_listed_in_help() {
    let env = Env::warm();
    let snap = snapshot_of(
        &env,
        json!([{"name": "paint", "description": "Paint the wall.", "inputSchema": {
            "type": "object",
            "properties": {
                "color": {"type": "string", "oneOf": [
                    {"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}]},
                "pet": {"type": "string", "enum": ["c", "d"], "enumNames": ["Cats", "Dogs"]}
            },
            "required": ["color"]}}]),
    );
    let env = Test::with(env)
        .server("snap", snap)
        .args(&["snap", "paint", "--help"])
        .stdout("Paint the wall.\n--color r (Red)|g (Green) required\n--pet c (Cats)|d (Dogs)\n")
        .run();
    Test::with(env)
        .args(&["snap", "paint", "--color", "x"])
        .status(2)
        .stderr(
            "error: --color expects one of r, g, not \"x\"\nhint: see: ferry snap paint --help\n",
        )
        .run();
}

// 9. A form at the terminal: a yes-or-no field takes `yes`, a legacy titled enum lists its
// choices with their titles and takes a title.
#[test]
fn a_form_takes_yes_no_and_titled_choices() {
    let env = Test::with(Env::warm())
        .server("ev", entry(&support::everything()))
        .scene();
    assert_eq!(env.run(&["ev"]).code, 0);
    let mut run = AtTerminal::start(&env, &["ev", "trigger-elicitation-request"]);
    run.answer("name (str): ", "Ann");
    run.answer("check [optional] (y/n): ", "YES");
    for field in [
        "firstLine [optional] (str): ",
        "email [optional] (str): ",
        "homepage [optional] (str): ",
        "birthdate [optional] (str): ",
        "integer [optional] (int): ",
        "number [optional] (num): ",
        "untitledSingleSelectEnum [optional] (Monica|Rachel|Joey|Chandler|Ross|Phoebe): ",
        "untitledMultipleSelectEnum [optional] (",
    ] {
        run.answer(field, "");
    }
    run.answer(
        "titledSingleSelectEnum [optional] (hero-1 (Superman)|hero-2 (Green Lantern)|hero-3 (Wonder Woman)): ",
        "hero-2",
    );
    run.answer("titledMultipleSelectEnum [optional] (", "");
    run.answer(
        "legacyTitledEnum [optional] (pet-1 (Cats)|pet-2 (Dogs)|pet-3 (Birds)|pet-4 (Fish)|pet-5 (Reptiles)): ",
        "Dogs",
    );
    let (code, screen) = run.finish();
    assert_eq!(code, 0, "{screen:#?}");
    for line in ["- Name: Ann", "- Agreed to terms: true"] {
        assert!(screen.iter().any(|row| row == line), "{line}: {screen:#?}");
    }
}

// 9. An answer that does not fit its field (a yes/no, a number, a choice) is asked again,
// never sent as text; a choice may be given by its place in the list, several by commas.
#[test]
fn a_form_asks_again_for_an_answer_that_does_not_fit() {
    let env = Test::with(Env::warm())
        .server("ev", entry(&support::everything()))
        .scene();
    assert_eq!(env.run(&["ev"]).code, 0);
    let mut run = AtTerminal::start(&env, &["ev", "trigger-elicitation-request"]);
    run.answer("name (str): ", "Ann");
    run.answer("check [optional] (y/n): ", "Ada");
    run.wait_for("ferry: check: answer y or n; answer again");
    run.answer("check [optional] (y/n): ", "y");
    for field in [
        "firstLine [optional] (str): ",
        "email [optional] (str): ",
        "homepage [optional] (str): ",
        "birthdate [optional] (str): ",
    ] {
        run.answer(field, "");
    }
    run.answer("integer [optional] (int): ", "abc");
    run.wait_for("ferry: integer expects an integer, not \"abc\"; answer again");
    run.answer("integer [optional] (int): ", "7");
    run.answer("number [optional] (num): ", "");
    let friends = "untitledSingleSelectEnum [optional] (Monica|Rachel|Joey|Chandler|Ross|Phoebe): ";
    run.answer(friends, "Bob");
    run.wait_for("ferry: untitledSingleSelectEnum expects one of Monica, Rachel, Joey, Chandler, Ross, Phoebe, not \"Bob\"; answer again");
    run.answer(friends, "2");
    run.answer("untitledMultipleSelectEnum [optional] (", "Guitar, violin");
    run.answer("titledSingleSelectEnum [optional] (", "");
    run.answer("titledMultipleSelectEnum [optional] (", "");
    run.answer("legacyTitledEnum [optional] (", "");
    let (code, screen) = run.finish();
    assert_eq!(code, 0, "{screen:#?}");
    for line in [
        "- Name: Ann",
        "- Agreed to terms: true",
        "- Favorite Integer: 7",
    ] {
        assert!(screen.iter().any(|row| row == line), "{line}: {screen:#?}");
    }
    // The raw result the server prints back: the choice by its place, the list as a list.
    let raw = screen.join("\n");
    for part in [
        "\"untitledSingleSelectEnum\": \"Rachel\"",
        "\"untitledMultipleSelectEnum\": [\n      \"Guitar\",\n      \"Violin\"\n    ]",
    ] {
        assert!(raw.contains(part), "{part}: {screen:#?}");
    }
}

// 12. The proxy's catalog says why a server's tools could not be listed, instead of "not
// listed yet" for a listing that will never come.
#[test]
fn the_proxy_catalog_says_why_a_listing_failed() {
    let env = Test::with(Env::warm())
        .server("broken", json!({"command": "ferry-no-such-command"}))
        .server("mem", entry(&support::memory()))
        .scene();
    let mut served = support::Served::start(&env, &["--servers"]);
    let found = served.call(1, "server/discover", json!({}), &mut Vec::new());
    let instructions = found["result"]["instructions"].as_str().unwrap_or_default();
    assert!(
        instructions.contains(
            "\n- broken (tools could not be listed: could not start broken: command \"ferry-no-such-command\" not found)\n"
        ),
        "{found}"
    );
    assert!(!instructions.contains("not listed yet"), "{found}");
}

// 12. A count of the wrong type or out of range, given to one of ferry's own options, says
// which option, what it must be, and gives an example.
#[test]
fn type_and_range_mistakes_have_hints() {
    let env = Test::with(Env::warm())
        .args(&["find", "-n", "abc", "echo"])
        .status(2)
        .stderr(
            "error: --limit must be a whole number, not \"abc\"\nhint: for example: --limit 10\n",
        )
        .run();
    let env = Test::with(env)
        .args(&["tokens", "--session", "2.5"])
        .status(2)
        .stderr(
            "error: --session must be a whole number, not \"2.5\"\nhint: for example: --session 10\n",
        )
        .run();
    let env = Test::with(env)
        .args(&["find", "--limit", "-1", "echo"])
        .status(2)
        .stderr(
            "error: -1 is not a value ferry takes: counts and limits are whole numbers, 1 or more\n\
             hint: see: ferry find --help\n",
        )
        .run();
    // A wrong type inside an item of a tool's argument: the item counted from 1, in words.
    Test::with(env)
        .server("mem", entry(&support::memory()))
        .args(&[
            "mem",
            "create_entities",
            "--entities",
            "[{\"name\": 1, \"entityType\": \"a\", \"observations\": []}]",
        ])
        .status(2)
        .stderr(
            "error: --entities item 1: name expects a string, not 1\n\
             hint: see: ferry mem create_entities --help\n",
        )
        .run();
}

// 9. An error ends the progress line before it is written: it starts a line of its own.
#[test]
fn progress_is_cleared_before_an_error() {
    let env = Test::with(Env::warm())
        .server("ev", entry(&support::everything()))
        .scene();
    assert_eq!(env.run(&["ev"]).code, 0);
    let run = AtTerminal::start(
        &env,
        &[
            "ev",
            "trigger-long-running-operation",
            "--duration",
            "30",
            "--steps",
            "30",
        ],
    );
    run.wait_for("progress 1/30");
    run.interrupt();
    let (code, screen) = run.finish();
    assert_ne!(code, 0, "{screen:#?}");
    assert!(
        screen.iter().any(|row| row
            == "error: interrupted; the request was cancelled and the warm server keeps running"),
        "{screen:#?}"
    );
    assert!(
        !screen
            .iter()
            .any(|row| row.starts_with("progress") && row.contains("error")),
        "{screen:#?}"
    );
}
