//! The kernel sandbox of `ferry serve`, tried the way a hostile model would: through real
//! served commands, with escapes no option table knows (a CLI in no table, `anytool`, and a
//! repository's own git configuration), each proven harmless by a marker file that must not
//! appear, a secret that must not be read, or a listener that must not be reached; and the
//! same calls pointed at allowed places, which must work.
//!
//! On a kernel without Landlock these tests say so loudly (`SKIP: ...` on stderr) and stop,
//! the first after checking the other half of the contract: quick mode refuses to start
//! unconfined unless told to. Under CI (`CI` set) such a skip is a failure.

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use support::*;

/// `anytool` as a CLI of its own, its `#!` line naming the test venv's Python.
fn anytool(env: &Env) -> String {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/clis/anytool");
    let text = std::fs::read_to_string(source).unwrap();
    let body = text.split_once('\n').unwrap().1;
    let path = env.path("tools/anytool");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, format!("#!{}\n{body}", venv_python())).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path.display().to_string()
}

fn show(path: &Path) -> String {
    path.display().to_string()
}

/// A secret in the home directory, one in ferry's token store, and a marker path for
/// programs that must not run.
struct Secrets {
    home: PathBuf,
    token: PathBuf,
}

fn secrets(env: &Env) -> Secrets {
    env.write("home/secret.txt", "home secret\n");
    env.write(
        "config/auth/server-0123.json",
        "{\"access_token\": \"ferry secret\"}\n",
    );
    Secrets {
        home: env.path("home/secret.txt"),
        token: env.path("config/auth/server-0123.json"),
    }
}

#[test]
fn quick_mode_cannot_read_write_run_or_connect_beyond_its_place() {
    let env = Env::new();
    if !sandbox_ready(&env, &[]) {
        let refused = env.run(&["serve", "--cli", "ls"]);
        assert_eq!(refused.code, 2, "{}", refused.stderr);
        assert!(
            refused.stderr.contains("--unconfined"),
            "{}",
            refused.stderr
        );
        return;
    }
    let tool = anytool(&env);
    let secrets = secrets(&env);
    env.write("work/notes.txt", "inside\n");
    let marker = env.path("marker-run");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let unix = env.path("daemon.sock");
    let unix_listener = std::os::unix::net::UnixListener::bind(&unix).unwrap();
    unix_listener.set_nonblocking(true).unwrap();
    let dgram = env.path("dgram.sock");
    let dgram_listener = std::os::unix::net::UnixDatagram::bind(&dgram).unwrap();
    dgram_listener.set_nonblocking(true).unwrap();
    let victim = env.path("victim");
    env.write("victim", "a program\n");

    let mut served = Served::start(&env, &["--cli", &tool]);
    // Each escape, and the line anytool prints when the kernel refuses it: a denial of that
    // very action (not, say, of the interpreter's own start-up).
    let escapes: Vec<(Vec<String>, String)> = vec![
        (
            vec!["--read".into(), show(&secrets.home)],
            format!("read {}: [Errno 13] Permission denied", show(&secrets.home)),
        ),
        (
            vec!["--read".into(), show(&secrets.token)],
            format!(
                "read {}: [Errno 13] Permission denied",
                show(&secrets.token)
            ),
        ),
        (
            vec![
                "--write".into(),
                show(&env.path("home/.bashrc")),
                "pwned".into(),
            ],
            format!(
                "write {}: [Errno 13] Permission denied",
                show(&env.path("home/.bashrc"))
            ),
        ),
        (
            vec![
                "--write".into(),
                show(&env.path("work/notes.txt")),
                "pwned".into(),
            ],
            format!(
                "write {}: [Errno 13] Permission denied",
                show(&env.path("work/notes.txt"))
            ),
        ),
        (
            vec!["--run".into(), "/usr/bin/touch".into(), show(&marker)],
            "run /usr/bin/touch: [Errno 13] Permission denied".into(),
        ),
        (
            vec![
                "--run".into(),
                "/bin/sh".into(),
                format!("-ctouch {}", show(&marker)),
            ],
            "run /bin/sh: [Errno 13] Permission denied".into(),
        ),
        (
            vec!["--tcp".into(), "127.0.0.1".into(), port.clone()],
            format!("tcp 127.0.0.1:{port}: [Errno 13] Permission denied"),
        ),
        (
            vec!["--udp".into(), "127.0.0.1".into(), port.clone()],
            format!("udp 127.0.0.1:{port}: [Errno 13] Permission denied"),
        ),
        (
            vec!["--unix".into(), show(&unix)],
            format!("unix {}: [Errno 13] Permission denied", show(&unix)),
        ),
        (
            vec!["--signal-parent".into()],
            "signal parent: [Errno 1] Operation not permitted".into(),
        ),
        (
            vec!["--list".into(), show(&env.path("home"))],
            format!(
                "list {}: [Errno 13] Permission denied",
                show(&env.path("home"))
            ),
        ),
        // Landlock has no rule for a file's mode: the filter refuses set-id and write bits
        // for others, on any file.
        (
            vec!["--chmod".into(), show(&victim), "4755".into()],
            format!("chmod {}: [Errno 1] Operation not permitted", show(&victim)),
        ),
        (
            vec!["--chmod".into(), show(&secrets.token), "666".into()],
            format!(
                "chmod {}: [Errno 1] Operation not permitted",
                show(&secrets.token)
            ),
        ),
        (
            vec!["--dgram".into(), show(&dgram)],
            format!("dgram {}: [Errno 13] Permission denied", show(&dgram)),
        ),
        (
            vec!["--setsid".into()],
            "setsid: [Errno 1] Operation not permitted".into(),
        ),
    ];
    for (i, (args, denial)) in escapes.iter().enumerate() {
        let result = served.call_tool(i as u64 + 1, "anytool", json!({"args": args}));
        let text = Served::text(&result);
        assert!(Served::is_error(&result), "{args:?} was allowed: {text}");
        // A write outside the writable places meets the read-only mount of the call's
        // namespace (where the kernel gives one) before Landlock.
        let read_only = denial.replace(
            "[Errno 13] Permission denied",
            "[Errno 30] Read-only file system",
        );
        let writing = args[0] == "--write";
        assert!(
            text.contains(denial.as_str()) || (writing && text.contains(&read_only)),
            "{args:?}: {text}"
        );
    }
    assert!(!marker.exists(), "a program outside the policy ran");
    assert!(listener.accept().is_err(), "the TCP listener was reached");
    assert!(
        unix_listener.accept().is_err(),
        "the Unix socket was reached"
    );
    assert!(
        dgram_listener.recv(&mut [0u8; 8]).is_err(),
        "the datagram socket was reached"
    );
    use std::os::unix::fs::PermissionsExt;
    for file in [&victim, &secrets.token] {
        let mode = std::fs::metadata(file).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode & 0o6022, 0, "{}: {mode:o}", show(file));
    }
    assert_eq!(
        std::fs::read_to_string(env.path("work/notes.txt")).unwrap(),
        "inside\n",
        "quick mode is read-only"
    );
    assert!(!env.path("home/.bashrc").exists());

    // What the sandbox refused is named, in words a model can act on.
    let mut id = 100;
    let mut said = |args: Value| {
        id += 1;
        let result = served.call_tool(id, "anytool", json!({ "args": args }));
        let text = Served::text(&result);
        assert!(Served::is_error(&result), "{text}");
        text.lines().next().unwrap_or("").to_string()
    };
    assert_eq!(
        said(json!(["--read", show(&secrets.home)])),
        "refused by the sandbox: reads outside the roots are not allowed for this tool (a manifest adds places with reads = [...])"
    );
    assert_eq!(
        said(json!(["--read", show(&secrets.token)])),
        "refused by the sandbox: ferry's own files and the system's secrets are not readable by served commands"
    );
    assert_eq!(
        said(json!(["--write", show(&env.path("work/notes.txt")), "x"])),
        "refused by the sandbox: writes are not allowed for this tool: it is read-only"
    );

    // The same tool, pointed at what it may do, works.
    let result = served.call_tool(
        50,
        "anytool",
        json!({"args": ["--read", "notes.txt", "--list", ".", "--env", "HOME", "--env", "TMPDIR"]}),
    );
    let text = Served::text(&result);
    assert!(!Served::is_error(&result), "{text}");
    assert!(text.contains("read notes.txt: ok inside"), "{text}");
    assert!(text.contains("list .: ok notes.txt"), "{text}");
    // HOME is the call's own temporary directory: the real one is out of reach.
    let home = text.lines().find_map(|l| l.strip_prefix("HOME=")).unwrap();
    let tmp = text
        .lines()
        .find_map(|l| l.strip_prefix("TMPDIR="))
        .unwrap();
    assert_eq!(home, tmp, "{text}");
    assert!(tmp.contains("ferry-call-"), "{text}");
    assert!(
        !Path::new(tmp).exists(),
        "the call's temporary directory is removed"
    );
}

#[test]
fn a_repositorys_own_git_config_runs_nothing() {
    let env = Env::new();
    if !sandbox_ready(&env, &[]) {
        return;
    }
    let repo = env.path("work");
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .args(args)
            .current_dir(&repo)
            .env("HOME", env.path("home"))
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q", "."]);
    env.write("work/a.txt", "one\n");
    git(&["add", "a.txt"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "one",
    ]);
    env.write("work/a.txt", "two\n");
    env.write("work/.gitattributes", "*.txt diff=pwn\n");
    // Every way a repository's own config names a program, none of them an option.
    let marker = env.path("marker-git");
    let touch = format!("touch {}", show(&marker));
    let config = std::fs::read_to_string(env.path("work/.git/config")).unwrap();
    env.write(
        "work/.git/config",
        &format!(
            "{config}[core]\n\tfsmonitor = \"{touch}\"\n\tpager = \"{touch}\"\n[alias]\n\tpwn = \"!{touch}\"\n[diff]\n\texternal = \"{touch}\"\n[diff \"pwn\"]\n\ttextconv = \"{touch}\"\n"
        ),
    );
    let mut served = Served::start(&env, &["--cli", "git"]);
    for (i, args) in [
        json!(["pwn"]),
        json!(["status"]),
        json!(["diff"]),
        json!(["-p", "log", "-1"]),
        json!(["show"]),
    ]
    .iter()
    .enumerate()
    {
        let result = served.call_tool(i as u64 + 1, "git", json!({ "args": args }));
        assert!(!marker.exists(), "git {args} ran a program: {result}");
    }
    // And git itself, on the same repository, works.
    let result = served.call_tool(9, "git", json!({"args": ["log", "--format=%s"]}));
    assert_eq!(Served::text(&result), "one\n", "{result}");
}

/// The manifest the tests below serve: a root beside the home directory, tools that read,
/// write and run through `sh -c` (a model's value passed as data, as docs/manifest.md shows).
fn manifest(env: &Env) -> String {
    env.write("served/notes/hello.txt", "hello\n");
    env.write("served/static.txt", "static\n");
    env.write("served/out/.keep", "");
    let text = r#"
[server]
name = "sandboxed"
roots = ["served"]

[[tools]]
name = "show"
description = "Print a file."
command = ["sh", "-c", "cat -- \"$1\"", "sh", "{name}"]
exec = ["cat"]

[tools.params.name]
type = "string"

[[tools]]
name = "save"
description = "Write a file."
command = ["sh", "-c", "printf '%s' \"$2\" > \"$1\"", "sh", "{name}", "{text}"]

[tools.params.name]
type = "string"

[tools.params.text]
type = "string"

[[tools]]
name = "save_out"
description = "Write a file, only under out/."
command = ["sh", "-c", "printf '%s' \"$2\" > \"$1\"", "sh", "{name}", "{text}"]
writes = ["out"]

[tools.params.name]
type = "string"

[tools.params.text]
type = "string"

[[tools]]
name = "look"
description = "A read-only tool that tries to write."
command = ["sh", "-c", "printf x > \"$1\"", "sh", "{name}"]
annotations = { readOnlyHint = true }

[tools.params.name]
type = "string"

[[tools]]
name = "nap"
description = "Sleep: sleep is not in exec."
command = ["sh", "-c", "sleep 0 && echo slept"]

[[resources]]
uri = "notes://static"
name = "static"
file = "static.txt"

[[resource_templates]]
uri_template = "notes://{name}"
name = "note"
command = ["sh", "-c", "cat -- \"notes/$1\"", "sh", "{name}"]
exec = ["cat"]

[[prompts]]
name = "brief"
description = "A brief a command writes."
messages = [{ role = "user", command = ["sh", "-c", "cat -- notes/hello.txt"] }]
exec = ["cat"]
"#;
    env.write("tools.toml", text);
    show(&env.path("tools.toml"))
}

#[test]
fn a_manifest_tool_reads_and_writes_only_where_it_may() {
    let env = Env::new();
    if !sandbox_ready(&env, &[]) {
        return;
    }
    let secrets = secrets(&env);
    let mut served = Served::start(&env, &["--manifest", &manifest(&env)]);
    // A plain string parameter given a path outside the roots: the kernel, not a table, says no.
    for (i, path) in [&secrets.home, &secrets.token].iter().enumerate() {
        let result = served.call_tool(i as u64 + 1, "show", json!({"name": show(path)}));
        assert!(Served::is_error(&result), "{result}");
        let text = Served::text(&result);
        assert!(
            text.contains("Permission denied")
                && !text.contains("home secret")
                && !text.contains("ferry secret"),
            "{result}"
        );
    }
    let result = served.call_tool(3, "show", json!({"name": "notes/hello.txt"}));
    assert_eq!(Served::text(&result), "hello\n", "{result}");

    // Its writing twin writes inside the roots, and nowhere else.
    let outside = env.path("outside.txt");
    let result = served.call_tool(4, "save", json!({"name": show(&outside), "text": "x"}));
    assert!(Served::is_error(&result), "{result}");
    assert_eq!(
        Served::text(&result).lines().next().unwrap(),
        "refused by the sandbox: writes outside the roots are not allowed for this tool"
    );
    assert!(!outside.exists());
    let result = served.call_tool(5, "save", json!({"name": "new.txt", "text": "made"}));
    assert!(!Served::is_error(&result), "{result}");
    assert_eq!(
        std::fs::read_to_string(env.path("served/new.txt")).unwrap(),
        "made"
    );

    // writes = ["out"]: only there.
    let result = served.call_tool(6, "save_out", json!({"name": "top.txt", "text": "x"}));
    assert!(Served::is_error(&result), "{result}");
    assert!(!env.path("served/top.txt").exists());
    let result = served.call_tool(7, "save_out", json!({"name": "out/ok.txt", "text": "x"}));
    assert!(!Served::is_error(&result), "{result}");
    assert!(env.path("served/out/ok.txt").exists());

    // readOnlyHint = true: nothing at all.
    let result = served.call_tool(8, "look", json!({"name": "new.txt"}));
    assert!(Served::is_error(&result), "{result}");
    assert_eq!(
        std::fs::read_to_string(env.path("served/new.txt")).unwrap(),
        "made"
    );

    // A program the tool did not declare is not run, and the model is told which it may run.
    let result = served.call_tool(9, "nap", json!({}));
    assert!(Served::is_error(&result), "{result}");
    let first = Served::text(&result).lines().next().unwrap().to_string();
    assert!(
        first.starts_with("refused by the sandbox: running ")
            && first.contains("sleep is not allowed for this tool"),
        "{first}"
    );
}

#[test]
fn git_metadata_stays_read_only_unless_declared() {
    let env = Env::new();
    if !sandbox_ready(&env, &[]) {
        return;
    }
    env.write("repo/.git/hooks/.keep", "");
    env.write("repo/src/a.txt", "a\n");
    env.write(
        "tools.toml",
        r#"
[server]
roots = ["repo"]

[[tools]]
name = "save"
description = "Write a file."
command = ["sh", "-c", "printf '%s' \"$2\" > \"$1\"", "sh", "{name}", "{text}"]

[tools.params.name]
type = "string"

[tools.params.text]
type = "string"

[[tools]]
name = "commit_like"
description = "Writes git's metadata, as declared."
command = ["sh", "-c", "printf '%s' \"$2\" > \"$1\"", "sh", "{name}", "{text}"]
writes = [".", ".git"]

[tools.params.name]
type = "string"

[tools.params.text]
type = "string"
"#,
    );
    let mut served = Served::start(&env, &["--manifest", &show(&env.path("tools.toml"))]);
    let hook = env.path("repo/.git/hooks/post-checkout");
    let result = served.call_tool(
        1,
        "save",
        json!({"name": ".git/hooks/post-checkout", "text": "#!/bin/sh\ntouch pwned\n"}),
    );
    assert!(Served::is_error(&result), "{result}");
    assert_eq!(
        Served::text(&result).lines().next().unwrap(),
        "refused by the sandbox: .git stays read-only for this tool unless its writes name it"
    );
    assert!(!hook.exists());
    let result = served.call_tool(2, "save", json!({"name": "src/a.txt", "text": "b"}));
    assert!(!Served::is_error(&result), "{result}");
    assert_eq!(
        std::fs::read_to_string(env.path("repo/src/a.txt")).unwrap(),
        "b"
    );
    let result = served.call_tool(
        3,
        "commit_like",
        json!({"name": ".git/hooks/post-checkout", "text": "x"}),
    );
    assert!(!Served::is_error(&result), "{result}");
    assert!(hook.exists());
}

#[test]
fn resources_cannot_be_led_outside_the_roots() {
    let env = Env::new();
    let secrets = secrets(&env);
    let mut served = Served::start(&env, &["--manifest", &manifest(&env)]);
    let read = |served: &mut Served, id: u64, uri: &str| {
        served.call(id, "resources/read", json!({"uri": uri}), &mut Vec::new())
    };
    // A template value may not smuggle a slash as %2F.
    let result = read(&mut served, 1, "notes://..%2F..%2Fhome%2Fsecret.txt");
    assert!(result.get("error").is_some(), "{result}");
    assert!(!result.to_string().contains("home secret"), "{result}");
    let result = read(&mut served, 2, "notes://hello.txt");
    assert_eq!(
        result["result"]["contents"][0]["text"], "hello\n",
        "{result}"
    );
    // A static file swapped for a link to a secret after serving started is not followed.
    let result = read(&mut served, 3, "notes://static");
    assert_eq!(
        result["result"]["contents"][0]["text"], "static\n",
        "{result}"
    );
    std::fs::remove_file(env.path("served/static.txt")).unwrap();
    std::os::unix::fs::symlink(&secrets.home, env.path("served/static.txt")).unwrap();
    let result = read(&mut served, 4, "notes://static");
    assert!(!result.to_string().contains("home secret"), "{result}");
    assert!(
        result["error"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("leads outside the served roots"),
        "{result}"
    );
}

/// A root that holds ferry's own directories (the home directory as a root, say): everything
/// else in it is served, ferry's files are not.
#[test]
fn ferrys_files_stay_hidden_inside_a_root() {
    let env = Env::new();
    if !sandbox_ready(&env, &[]) {
        return;
    }
    let secrets = secrets(&env);
    env.write("notes.txt", "visible\n");
    env.write(
        "wide.toml",
        r#"
[server]
roots = ["."]

[[tools]]
name = "show"
description = "Print a file."
command = ["sh", "-c", "cat -- \"$1\"", "sh", "{name}"]
exec = ["cat"]
annotations = { readOnlyHint = true }

[tools.params.name]
type = "string"
"#,
    );
    let mut served = Served::start(&env, &["--manifest", &show(&env.path("wide.toml"))]);
    let result = served.call_tool(1, "show", json!({"name": "notes.txt"}));
    assert_eq!(Served::text(&result), "visible\n", "{result}");
    let result = served.call_tool(2, "show", json!({"name": show(&secrets.home)}));
    assert_eq!(
        Served::text(&result),
        "home secret\n",
        "inside the root: {result}"
    );
    let result = served.call_tool(3, "show", json!({"name": show(&secrets.token)}));
    assert!(Served::is_error(&result), "{result}");
    assert!(!Served::text(&result).contains("ferry secret"), "{result}");

    let check = env.run(&[
        "serve",
        "--manifest",
        &show(&env.path("wide.toml")),
        "--check-sandbox",
    ]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(
        check.stdout.contains("hidden  ferry's files: "),
        "{}",
        check.stdout
    );
    assert!(
        check.stdout.contains(&show(&env.path("config"))),
        "{}",
        check.stdout
    );
}

#[test]
fn check_sandbox_says_what_each_tool_may_do() {
    let env = Env::new();
    let out = env.run(&["serve", "--manifest", &manifest(&env), "--check-sandbox"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let root = std::fs::canonicalize(env.path("served")).unwrap();
    let first = out.stdout.lines().next().unwrap();
    assert!(first.starts_with("sandbox: "), "{first}");
    let section = |name: &str| -> String {
        let at = out.stdout.find(&format!("\n{name}\n")).expect(name) + 1;
        out.stdout[at..]
            .lines()
            .skip(1)
            .take_while(|l| l.starts_with("  "))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let look = section("tool look");
    assert!(look.contains("writes  nothing (read-only)"), "{look}");
    assert!(look.contains("network none"), "{look}");
    let save_out = section("tool save_out");
    assert!(
        save_out.contains(&format!("writes  declared: {}", show(&root.join("out")))),
        "{save_out}"
    );
    let show_tool = section("tool show");
    assert!(
        show_tool.contains(&format!("root: {}", show(&root))),
        "{show_tool}"
    );
    assert!(show_tool.contains("declared: "), "{show_tool}");
    assert!(show_tool.contains("/cat"), "{show_tool}");
    assert!(section("resource template notes://{name}").contains("writes  nothing"));
    let brief = section("prompt brief message 1");
    assert!(brief.contains("writes  nothing"), "{brief}");
    assert!(brief.contains("/cat"), "{brief}");
}

/// A place a tool may write or run, swapped for a link by another call, grants nothing more:
/// places outside the roots are opened when serving starts, and places under a root are
/// reached from the root's own descriptor, never through a link made since.
#[test]
fn a_place_swapped_for_a_link_grants_nothing_more() {
    let env = Env::new();
    if !sandbox_ready(&env, &[]) {
        return;
    }
    let secrets = secrets(&env);
    env.write("repo/dist/.keep", "");
    env.write("repo/tools/lint", "#!/bin/sh\necho linted\n");
    env.write(
        "swap.toml",
        r#"
[server]
roots = ["repo"]

[[tools]]
name = "swap"
description = "Replace a place with a link to a target."
command = ["sh", "-c", "rm -rf \"$1\" && ln -s \"$2\" \"$1\"", "sh", "{place}", "{target}"]
exec = ["rm", "ln"]

[tools.params.place]
type = "string"

[tools.params.target]
type = "string"

[[tools]]
name = "export"
description = "Write a file into dist/."
command = ["sh", "-c", "printf x > \"dist/$1\"", "sh", "{name}"]
writes = ["dist"]

[tools.params.name]
type = "string"

[[tools]]
name = "show"
description = "Print a file."
command = ["sh", "-c", "cat -- \"$1\"", "sh", "{name}"]
exec = ["cat", "./tools/lint"]

[tools.params.name]
type = "string"
"#,
    );
    let mut served = Served::start(&env, &["--manifest", &show(&env.path("swap.toml"))]);
    // dist/ becomes a link to the home directory: the export must not land there.
    let result = served.call_tool(
        1,
        "swap",
        json!({"place": "dist", "target": show(&env.path("home"))}),
    );
    assert!(!Served::is_error(&result), "{result}");
    let result = served.call_tool(2, "export", json!({"name": ".bashrc"}));
    assert!(Served::is_error(&result), "{result}");
    assert!(!env.path("home/.bashrc").exists(), "written through a link");
    // A declared program becomes a link to ferry's token: reading it is still refused.
    let result = served.call_tool(
        3,
        "swap",
        json!({"place": "tools/lint", "target": show(&secrets.token)}),
    );
    assert!(!Served::is_error(&result), "{result}");
    let result = served.call_tool(4, "show", json!({"name": "tools/lint"}));
    assert!(Served::is_error(&result), "{result}");
    assert!(!Served::text(&result).contains("ferry secret"), "{result}");
}

/// A root inside ferry's own files is refused when serving starts, rather than served empty.
#[test]
fn a_root_inside_ferrys_files_is_refused() {
    let env = Env::new();
    if !sandbox_ready(&env, &[]) {
        return;
    }
    secrets(&env);
    let run = env
        .command(&["serve", "--cli", "cat"])
        .current_dir(env.path("config/auth"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("is inside ferry's own files or the system's secrets, which no served command may see; serve another directory"),
        "{stderr}"
    );
}
