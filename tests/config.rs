//! The server registry: add, remove, import, project files, variables, reserved names.

mod support;

use support::*;

#[test]
fn add_list_call_and_remove_a_stdio_server() {
    let env = Env::new();
    let added = env.run(&["add", "tour", "--", support::FERRY, "serve", "--demo"]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    assert!(added.stdout.starts_with("added tour to "));
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("config/servers.json")).unwrap())
            .unwrap();
    assert_eq!(
        config["mcpServers"]["tour"]["args"],
        serde_json::json!(["serve", "--demo"])
    );

    let before = env.run(&[]);
    assert!(
        before.stdout.starts_with("tour  stdio    ? tools  cold  "),
        "{}",
        before.stdout
    );
    let listing = env.run(&["tour"]);
    assert_eq!(listing.stdout, DEMO_LISTING);
    let after = env.run(&[]);
    assert!(
        after.stdout.starts_with("tour  stdio    4 tools  cold  "),
        "{}",
        after.stdout
    );
    let expected = demo_file(&env, "notes.txt", "one two\nthree\n");
    let call = env.run(&["tour", "word_count", "--path", "notes.txt"]);
    assert_eq!(call.stdout, expected);

    let again = env.run(&["add", "tour", "--", "true"]);
    assert_eq!((again.code, again.stderr.as_str()), (2, "error: server \"tour\" already exists\nhint: use --force to replace it, or `ferry remove` first\n"));
    assert_eq!(env.run(&["remove", "tour"]).code, 0);
    let gone = env.run(&["tour"]);
    assert_eq!(gone.code, 2);
    assert!(
        gone.stderr.starts_with("error: unknown server \"tour\"\n"),
        "{}",
        gone.stderr
    );
}

#[test]
fn reserved_names_and_bad_input_are_refused() {
    let env = Env::new();
    let reserved = env.run(&["add", "tokens", "--", "x"]);
    assert_eq!((reserved.code, reserved.stderr.as_str()), (2, "error: \"tokens\" is a ferry command and cannot name a server\nhint: pick another name\n"));
    let url = env.run(&[
        "add",
        "remote",
        "https://example.invalid/mcp",
        "--header",
        "Authorization: Bearer ${TOKEN}",
    ]);
    assert_eq!(url.code, 0, "{}", url.stderr);
    let config = std::fs::read_to_string(env.path("config/servers.json")).unwrap();
    assert!(
        config.contains("\"Authorization\": \"Bearer ${TOKEN}\""),
        "variables are stored unexpanded: {config}"
    );
    let unset = env
        .command(&["remote", "anything"])
        .env_remove("TOKEN")
        .output()
        .unwrap();
    assert_eq!(unset.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&unset.stderr),
        "error: environment variable TOKEN is not set (server \"remote\" uses it)\nhint: export TOKEN=... before running ferry\n"
    );
    env.write("config/servers.json", "{ not json");
    let broken = env.run(&[]);
    assert_eq!(broken.code, 2);
    assert!(
        broken.stderr.contains("servers.json is not valid JSON"),
        "{}",
        broken.stderr
    );
    let typo = env.run(&["--nope"]);
    assert_eq!(
        (typo.code, typo.stderr.as_str()),
        (2, "error: unknown option --nope\nhint: see: ferry --help\n")
    );
}

#[test]
fn project_files_are_read_and_the_user_file_wins() {
    let env = Env::new();
    let demo = serde_json::json!({"command": support::FERRY, "args": ["serve", "--demo"]});
    env.write(
        "work/.mcp.json",
        &serde_json::json!({"mcpServers": {"proj": demo, "shared": {"command": "false"}}})
            .to_string(),
    );
    env.write("work/.vscode/mcp.json", &serde_json::json!({"servers": {"vs": {"type": "stdio", "command": support::FERRY, "args": ["serve", "--demo"]}}}).to_string());
    env.write(
        "config/servers.json",
        &serde_json::json!({"mcpServers": {"shared": demo}}).to_string(),
    );
    let list = env.run(&[]);
    let names: Vec<&str> = list
        .stdout
        .lines()
        .map(|l| l.split(' ').next().unwrap())
        .collect();
    assert_eq!(names, ["shared", "proj", "vs"], "{}", list.stdout);
    // A repository's servers start only once the user trusts its files.
    let expected = demo_file(&env, "a", "a b\n");
    let refused = env.run(&["proj", "word_count", "a"]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("which you have not trusted"),
        "{}",
        refused.stderr
    );
    // A bare `ferry trust` trusts the nearest file and lists the others; each is trusted on
    // its own.
    let trusted = env.run(&["trust"]);
    assert_eq!(trusted.code, 0, "{}", trusted.stderr);
    let work = env.path("work");
    assert_eq!(
        trusted.stdout,
        format!(
            "trusted {0}/.mcp.json (servers: proj, shared)\nother project files here, each trusted on its own (`ferry trust FILE`):\n  {0}/.vscode/mcp.json  not trusted (servers: vs)\n",
            work.display()
        )
    );
    assert_eq!(env.run(&["vs", "word_count", "a"]).code, 2);
    assert_eq!(env.run(&["trust", ".vscode/mcp.json"]).code, 0);
    for server in ["proj", "shared", "vs"] {
        assert_eq!(
            env.run(&[server, "word_count", "a"]).stdout,
            expected,
            "{server}"
        );
    }
}

#[test]
fn import_from_claude_desktop() {
    let env = Env::new();
    env.write(
        "home/.config/Claude/claude_desktop_config.json",
        &serde_json::json!({"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
            "add": {"command": "x"}
        }})
        .to_string(),
    );
    let run = env.run(&["import", "claude"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr,
        "skipped add: \"add\" is a ferry command and cannot name a server\n"
    );
    assert!(
        run.stdout.starts_with("imported 1 server(s) into "),
        "{}",
        run.stdout
    );
    let list = env.run(&[]);
    assert!(list.stdout.starts_with("fs  stdio"), "{}", list.stdout);
    let missing = env.run(&["import", "cursor"]);
    assert_eq!(missing.code, 2);
}

/// `ferry add NAME URL --client-id ID` writes the server's "oauth" block: a secret as given
/// (a ${VAR} stays unexpanded), a key file checked at once.
#[test]
fn add_writes_an_oauth_block_and_checks_a_key_file() {
    let env = Env::new();
    let added = env.run(&[
        "add",
        "linear",
        "https://mcp.example.com/mcp",
        "--client-id",
        "abc",
        "--client-secret",
        "${LINEAR_SECRET}",
    ]);
    assert_eq!(added.code, 0, "{}", added.stderr);
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("config/servers.json")).unwrap())
            .unwrap();
    assert_eq!(
        config["mcpServers"]["linear"]["oauth"],
        serde_json::json!({"clientId": "abc", "clientSecret": "${LINEAR_SECRET}"})
    );
    // A key that is not there is refused before anything is written.
    let missing = env.path("nope.pem");
    let refused = env.run(&[
        "add",
        "machine",
        "https://mcp.example.com/mcp",
        "--client-id",
        "abc",
        "--private-key",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .starts_with("error: cannot read the private key "),
        "{}",
        refused.stderr
    );
    let config = std::fs::read_to_string(env.path("config/servers.json")).unwrap();
    assert!(!config.contains("machine"), "{config}");
    // A ${VAR} is read when used.
    let deferred = env.run(&[
        "add",
        "machine",
        "https://mcp.example.com/mcp",
        "--client-id",
        "abc",
        "--private-key",
        "${MACHINE_KEY}",
    ]);
    assert_eq!(deferred.code, 0, "{}", deferred.stderr);
    // --private-key needs the client id it belongs to.
    let alone = env.run(&[
        "add",
        "x",
        "https://mcp.example.com/mcp",
        "--private-key",
        "${K}",
    ]);
    assert_eq!(alone.code, 2, "{}", alone.stderr);
}

/// Issue 16, item 17: servers.json holds bearer tokens and keys, so every command that writes
/// it (`add --header`, `add --env`, `import`, `remove`) leaves it 0600 in a 0700 directory,
/// atomically and under the lock, as the token files are.
#[test]
fn servers_json_is_private_whichever_command_writes_it() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let set = |p: &std::path::Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
    };
    let dir = env.path("config");
    let file = env.path("config/servers.json");
    // The directory exists already, as `mkdir -p ~/.config/ferry` or an older ferry left it.
    set(&dir, 0o755);
    let url = env.run(&[
        "add",
        "remote",
        "https://example.invalid/mcp",
        "--header",
        "Authorization: Bearer sk-live-1",
    ]);
    assert_eq!(url.code, 0, "{}", url.stderr);
    assert_eq!((mode(&file), mode(&dir)), (0o600, 0o700));
    // A file an older ferry left readable is narrowed by the next write.
    set(&file, 0o644);
    set(&dir, 0o755);
    let stdio = env.run(&[
        "add",
        "everything",
        "--env",
        "API_KEY=sk-live-2",
        "--",
        "sh",
        "-c",
        &everything(),
    ]);
    assert_eq!(stdio.code, 0, "{}", stdio.stderr);
    assert_eq!((mode(&file), mode(&dir)), (0o600, 0o700));
    set(&file, 0o644);
    env.write(
        "home/.claude.json",
        &serde_json::json!({"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"], "env": {"TOKEN": "sk-live-3"}}}}).to_string(),
    );
    set(&env.path("home/.claude.json"), 0o600);
    let import = env.run(&["import", "claude-code"]);
    assert_eq!(import.code, 0, "{}", import.stderr);
    assert_eq!(mode(&file), 0o600);
    set(&file, 0o644);
    assert_eq!(env.run(&["remove", "memory"]).code, 0);
    assert_eq!(mode(&file), 0o600);
    // Concurrent adds all land (read again under the lock, renamed into place), and nothing
    // readable by others is left beside the file.
    std::thread::scope(|scope| {
        for i in 0..6 {
            let env = &env;
            scope.spawn(move || {
                let name = format!("s{i}");
                let header = format!("Authorization: Bearer k{i}");
                let run = env.run(&["add", &name, "https://example.invalid/mcp", "-H", &header]);
                assert_eq!(run.code, 0, "{}", run.stderr);
            });
        }
    });
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let mut names: Vec<&String> = config["mcpServers"].as_object().unwrap().keys().collect();
    names.sort();
    assert_eq!(
        names,
        ["everything", "remote", "s0", "s1", "s2", "s3", "s4", "s5"]
    );
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        assert_eq!(mode(&entry.path()) & 0o077, 0, "{}", entry.path().display());
    }
}

/// Issue 16, item 15: `ferry import claude-code|cursor|vscode|codex` inside a repository
/// imports the user's own files only, saying which file each server came from; the
/// repository's files are named, not copied, so their servers still need `ferry trust` and
/// never get the user's `${SECRET}`.
#[test]
fn import_copies_the_users_configuration_never_the_repositorys() {
    let env = Env::new();
    let (planted, counter) = env.counted(&everything());
    let planted_entry = serde_json::json!({"command": "sh", "args": ["-c", planted.trim_start_matches("sh -c ").trim_matches('\'')], "env": {"LEAK": "${SECRET}"}});
    let memory = memory();
    let (program, args) = memory.split_once(' ').unwrap();
    let user_entry = serde_json::json!({"command": program, "args": [args], "env": {"MEMORY_FILE_PATH": env.path("memory.jsonl").display().to_string()}});
    std::fs::create_dir_all(env.path("work/.git")).unwrap();
    let work = env.path("work");
    // Each host: its user file holds `memory-HOST`, the repository's file `planted-HOST`.
    let hosts = [
        (
            "claude-code",
            "home/.claude.json",
            "work/.mcp.json",
            "mcpServers",
        ),
        (
            "cursor",
            "home/.cursor/mcp.json",
            "work/.cursor/mcp.json",
            "mcpServers",
        ),
        (
            "vscode",
            "home/.config/Code/User/mcp.json",
            "work/.vscode/mcp.json",
            "servers",
        ),
    ];
    for (host, user, project, key) in hosts {
        env.write(
            user,
            &serde_json::json!({key: {format!("memory-{host}"): user_entry}}).to_string(),
        );
        env.write(
            project,
            &serde_json::json!({key: {format!("planted-{host}"): planted_entry}}).to_string(),
        );
    }
    // Codex's TOML: JSON strings and arrays of strings read the same in TOML.
    let codex = |name: &str, entry: &serde_json::Value| {
        let vars: String = entry["env"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(k, v)| format!("{k} = {v}\n"))
            .collect();
        format!(
            "[mcp_servers.{name}]\ncommand = {}\nargs = {}\n[mcp_servers.{name}.env]\n{vars}",
            entry["command"], entry["args"]
        )
    };
    env.write(
        "home/.codex/config.toml",
        &codex("memory-codex", &user_entry),
    );
    env.write(
        "work/.codex/config.toml",
        &codex("planted-codex", &planted_entry),
    );

    let servers_json = env.path("config/servers.json");
    for (host, user) in [
        ("claude-code", "~/.claude.json"),
        ("cursor", "~/.cursor/mcp.json"),
        ("vscode", "~/.config/Code/User/mcp.json"),
        ("codex", "~/.codex/config.toml"),
    ] {
        let run: Run = env
            .command(&["import", host])
            .env("SECRET", "hunter2")
            .env_remove("CODEX_HOME")
            .output()
            .unwrap()
            .into();
        assert_eq!(run.code, 0, "{host}: {}", run.stderr);
        assert_eq!(
            run.stdout,
            format!(
                "imported 1 server(s) into {}:\n  memory-{host}  from {user}\n",
                servers_json.display()
            ),
            "{host}"
        );
        let project = match host {
            "claude-code" => ".mcp.json",
            "cursor" => ".cursor/mcp.json",
            "vscode" => ".vscode/mcp.json",
            _ => ".codex/config.toml",
        };
        let after = if host == "codex" {
            "a repository's servers are not copied into your config"
        } else {
            "ferry reads it in place, and starts its servers once you run `ferry trust` here"
        };
        assert_eq!(
            run.stderr,
            format!(
                "note: not imported: {}/{project} is this repository's (servers: planted-{host}); {after}\n",
                work.display()
            ),
            "{host}"
        );
    }
    let config = std::fs::read_to_string(&servers_json).unwrap();
    assert!(
        !config.contains("planted") && !config.contains("hunter2"),
        "{config}"
    );
    // The user's servers work; the repository's are listed as its, and do not start.
    let call = env.run(&["memory-codex", "read_graph"]);
    assert_eq!(call.code, 0, "{}", call.stderr);
    let refused: Run = env
        .command(&["planted-claude-code", "echo", "--message", "hi"])
        .env("SECRET", "hunter2")
        .output()
        .unwrap()
        .into();
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused.stderr.contains("which you have not trusted"),
        "{}",
        refused.stderr
    );
    assert_eq!(spawns(&counter), 0);
}

/// Issue 16, item 16: `ferry trust` trusts only files the user owns, in directories no one
/// else can write, found from here up to the repository's root; a bare `ferry trust` trusts
/// the nearest and lists the others. A `.mcp.json` another account planted in a shared
/// directory above the repository is never read, let alone started.
#[test]
fn trust_stops_at_the_repository_and_refuses_files_others_can_write() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let set = |p: &std::path::Path, mode: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
    };
    let servers = |name: &str, command: &str| {
        serde_json::json!({"mcpServers": {name: {"command": "sh", "args": ["-c", command]}}})
            .to_string()
    };
    // A shared, world-writable directory (as /tmp or /srv/shared) with a planted .mcp.json.
    let shared = env.path("work");
    set(&shared, 0o1777);
    let (planted, counter) = env.counted(&everything());
    let planted = planted
        .trim_start_matches("sh -c ")
        .trim_matches('\'')
        .to_string();
    env.write("work/.mcp.json", &servers("planted", &planted));
    let root = running_as_root();
    if root {
        // Another account's file, as it would be.
        std::os::unix::fs::chown(env.path("work/.mcp.json"), Some(65534), Some(65534)).unwrap();
    }
    // The user's repository inside it.
    std::fs::create_dir_all(env.path("work/repo/.git")).unwrap();
    std::fs::create_dir_all(env.path("work/repo/sub")).unwrap();
    let repo = env.path("work/repo");
    env.write("work/repo/.mcp.json", &servers("mine", &everything()));
    let in_dir = |dir: &std::path::Path, args: &[&str]| -> Run {
        env.command(args).current_dir(dir).output().unwrap().into()
    };
    let trusted = in_dir(&repo, &["trust"]);
    assert_eq!(
        (trusted.code, trusted.stdout, trusted.stderr),
        (
            0,
            format!("trusted {}/.mcp.json (servers: mine)\n", repo.display()),
            String::new()
        )
    );
    let call = in_dir(&repo, &["mine", "echo", "--message", "hi"]);
    assert_eq!(
        (call.code, call.stdout.as_str()),
        (0, "Echo: hi\n"),
        "{}",
        call.stderr
    );
    let planted_call = in_dir(&repo.join("sub"), &["planted", "echo", "--message", "hi"]);
    assert_eq!(planted_call.code, 2, "{}", planted_call.stderr);
    assert!(
        planted_call
            .stderr
            .starts_with("error: unknown server \"planted\"\n"),
        "{}",
        planted_call.stderr
    );
    assert_eq!(spawns(&counter), 0, "the planted server never starts");
    // In the shared directory itself, outside any repository, the planted file is refused.
    let reason = if root {
        format!(
            "{}/.mcp.json is owned by another user (uid 65534)",
            shared.display()
        )
    } else {
        format!(
            "other users can write its directory {} (mode 1777)",
            shared.display()
        )
    };
    let refused = in_dir(&shared, &["trust"]);
    assert_eq!(
        (refused.code, refused.stderr),
        (2, format!("error: cannot trust {}/.mcp.json: {reason}\nhint: trust covers only files you own, in directories only you can write (chmod go-w)\n", shared.display()))
    );

    // Nested project files: the nearest is trusted, the others are listed with their state.
    env.write("work/repo/sub/.mcp.json", &servers("sub", &everything()));
    env.write(
        "work/repo/.cursor/mcp.json",
        &servers("cursor", &everything()),
    );
    let nested = in_dir(&repo.join("sub"), &["trust"]);
    assert_eq!(
        nested.stdout,
        format!(
            "trusted {0}/sub/.mcp.json (servers: sub)\nother project files here, each trusted on its own (`ferry trust FILE`):\n  {0}/.mcp.json  trusted (servers: mine)\n  {0}/.cursor/mcp.json  not trusted (servers: cursor)\n",
            repo.display()
        )
    );

    // A file the user owns, in a directory others can write, inside the repository.
    std::fs::create_dir_all(env.path("work/repo/drop")).unwrap();
    env.write("work/repo/drop/.mcp.json", &servers("dropped", &planted));
    let drop = repo.join("drop");
    set(&drop, 0o777);
    let refused = in_dir(&drop, &["trust"]);
    assert_eq!(
        (refused.code, refused.stdout.as_str(), refused.stderr),
        (
            2,
            "",
            format!("error: cannot trust {0}/.mcp.json: other users can write its directory {0} (mode 777)\nhint: trust covers only files you own, in directories only you can write (chmod go-w)\n", drop.display())
        )
    );
    assert_eq!(in_dir(&repo, &["trust", "drop/.mcp.json"]).code, 2);
    // Trusted before the directory was opened up (or by an older ferry): still never started.
    set(&drop, 0o755);
    assert_eq!(in_dir(&drop, &["trust"]).code, 0);
    set(&drop, 0o777);
    let call = in_dir(&drop, &["dropped", "echo", "--message", "hi"]);
    assert_eq!(
        (call.code, call.stderr),
        (
            2,
            format!("error: dropped comes from {0}/.mcp.json, which ferry never trusts: other users can write its directory {0} (mode 777)\nhint: trust covers only files you own, in directories only you can write\n", drop.display())
        )
    );
    assert_eq!(spawns(&counter), 0);
    set(&shared, 0o755);
}

/// Whether the tests run as root, which can give a file to another account.
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .is_some_and(|l| l.split_whitespace().nth(1) == Some("0"))
    })
}

/// Issue 27, item 6: a host's own variables are translated into what a shell sets
/// (`${env:X}` is `${X}`, the workspace `${PWD}`, the user's home `${HOME}`), and a value only
/// the host could supply (`${input:...}`, `${config:...}`...) becomes a variable the import
/// names, per server, with the `export` line to set it; a call without it says the same.
#[test]
fn import_translates_host_variables_and_says_what_to_set() {
    let env = Env::warm();
    let script = everything_script();
    env.write(
        "home/.config/Code/User/mcp.json",
        &serde_json::json!({
            "inputs": [{"type": "promptString", "id": "api_token", "password": true}],
            "servers": {
                "ev": {"type": "stdio", "command": "node", "args": [script, "stdio"],
                       "env": {"API_TOKEN": "${input:api_token}", "ROOT": "${workspaceFolder}",
                               "HOMEDIR": "${userHome}", "LEVEL": "${env:EV_LEVEL}",
                               "REGION": "${config:cloud.region}"}},
                "plain": {"command": "node", "args": [script, "stdio"], "env": {"A": "${env:EV_LEVEL}"}}
            }
        })
        .to_string(),
    );
    let run = env.run(&["import", "vscode"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        format!(
            "imported 2 server(s) into {}:\n  ev     from ~/.config/Code/User/mcp.json\n  plain  from ~/.config/Code/User/mcp.json\n\
             to set before calling them (only the host could supply these):\n  \
             ev     export API_TOKEN=...   # was ${{input:api_token}}, a value the host prompts for\n  \
             ev     export CLOUD_REGION=...   # was ${{config:cloud.region}}, a setting of the host's\n",
            env.path("config/servers.json").display()
        )
    );
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("config/servers.json")).unwrap())
            .unwrap();
    assert_eq!(
        config["mcpServers"]["ev"]["env"],
        serde_json::json!({"API_TOKEN": "${API_TOKEN}", "ROOT": "${PWD}", "HOMEDIR": "${HOME}",
                           "LEVEL": "${EV_LEVEL}", "REGION": "${CLOUD_REGION}"})
    );

    // A call without the value says what to export: a name a shell can set.
    let call = |vars: &[(&str, &str)]| -> Run {
        env.command(&["ev", "get-env", "--max-tokens", "100000"])
            .env_remove("API_TOKEN")
            .envs(vars.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into()
    };
    let missing = call(&[("EV_LEVEL", "3"), ("CLOUD_REGION", "eu")]);
    assert_eq!(
        (missing.code, missing.stderr.as_str()),
        (
            2,
            "error: environment variable API_TOKEN is not set (server \"ev\" uses it)\nhint: export API_TOKEN=... before running ferry\n"
        )
    );
    let set = call(&[
        ("EV_LEVEL", "3"),
        ("CLOUD_REGION", "eu"),
        ("API_TOKEN", "tok-1"),
    ]);
    assert_eq!(set.code, 0, "{}", set.stderr);
    let home = env.path("home").display().to_string();
    for pair in [
        "\"API_TOKEN\":\"tok-1\"".to_string(),
        "\"LEVEL\":\"3\"".to_string(),
        "\"REGION\":\"eu\"".to_string(),
        format!("\"HOMEDIR\":\"{home}\""),
    ] {
        assert!(set.stdout.contains(&pair), "{pair} in {}", set.stdout);
    }

    // A config written before (or by hand) with a host's form reads the same variable.
    env.write(
        "config/servers.json",
        &serde_json::json!({"mcpServers": {"old": {"command": "node", "args": [script, "stdio"],
            "env": {"T": "${input:api_token}"}}}})
        .to_string(),
    );
    let old: Run = env
        .command(&["old", "echo", "--message", "x"])
        .env_remove("API_TOKEN")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
        .into();
    assert_eq!(old.code, 2, "{}", old.stderr);
    assert!(
        old.stderr
            .ends_with("hint: export API_TOKEN=... before running ferry\n"),
        "{}",
        old.stderr
    );
}

/// Issue 27, item 6: a repository's MCP file named by path is not copied into the user's
/// config, where its servers would start untrusted: the import is refused (exit 2) with the
/// `ferry trust` command that lets ferry read it in place. A file of the user's own is
/// imported.
#[test]
fn import_of_a_repository_file_goes_through_trust() {
    let env = Env::new();
    let repo = env.path("work/repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let memory_file = env.path("work/memory.jsonl").display().to_string();
    let entry = |name: &str| {
        let mut parts = memory().split(' ').map(str::to_string).collect::<Vec<_>>();
        let command = parts.remove(0);
        serde_json::json!({name: {"command": command, "args": parts,
            "env": {"MEMORY_FILE_PATH": memory_file}}})
    };
    env.write(
        "work/repo/.mcp.json",
        &serde_json::json!({"mcpServers": entry("mem")}).to_string(),
    );
    env.write(
        "work/repo/.vscode/mcp.json",
        &serde_json::json!({"servers": entry("vsmem")}).to_string(),
    );
    env.write(
        "work/repo/.codex/config.toml",
        "[mcp_servers.cx]\ncommand = \"node\"\n",
    );
    let root = std::fs::canonicalize(&repo).unwrap();
    let in_repo = |dir: &str, args: &[&str]| -> Run {
        env.command(args)
            .current_dir(repo.join(dir))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into()
    };
    for (dir, given, file) in [
        (".", ".mcp.json", ".mcp.json"),
        ("sub", "../.vscode/mcp.json", ".vscode/mcp.json"),
    ] {
        let run = in_repo(dir, &["import", given]);
        let abs = root.join(file).display().to_string();
        assert_eq!(
            (run.code, run.stdout.as_str(), run.stderr.as_str()),
            (
                2,
                "",
                format!(
                    "error: {abs} is a repository's file, not your own config: its servers are not copied into your config, where they would start without `ferry trust`\n\
                     hint: run `ferry trust {abs}`: ferry then reads its servers in place, in that repository\n"
                )
                .as_str()
            ),
            "{given}"
        );
    }
    let codex = in_repo(".", &["import", ".codex/config.toml"]);
    assert_eq!(codex.code, 2, "{}", codex.stderr);
    assert!(
        codex.stderr.contains(&format!(
            "hint: move the servers you want into {0}/.mcp.json and run `ferry trust {0}/.mcp.json`",
            root.display()
        )),
        "{}",
        codex.stderr
    );
    assert!(!env.path("config/servers.json").exists());

    // The hint's command is what makes the server run, in the repository only.
    let abs = root.join(".mcp.json").display().to_string();
    assert_eq!(in_repo(".", &["trust", &abs]).code, 0);
    let call = in_repo("sub", &["mem", "read_graph"]);
    assert_eq!(call.code, 0, "{}", call.stderr);
    assert_eq!(env.run(&["mem", "read_graph"]).code, 2);

    // A file of the user's own, by path, is imported as before.
    env.write(
        "work/mine.json",
        &serde_json::json!({"mcpServers": entry("own")}).to_string(),
    );
    let mine = env.run(&["import", "mine.json"]);
    assert_eq!(mine.code, 0, "{}", mine.stderr);
    assert!(mine.stdout.contains("  own  from "), "{}", mine.stdout);
}

/// Issue 27, item 6: `ferry import HOST --force` re-syncs a host config that changed since the
/// last import: what the host changed is updated, what it added is added, what it kept is
/// unchanged, and what it dropped is kept (never removed), each named.
#[test]
fn import_force_resyncs_a_changed_host_config() {
    let env = Env::new();
    let write = |servers: serde_json::Value| {
        env.write(
            "home/.cursor/mcp.json",
            &serde_json::json!({ "mcpServers": servers }).to_string(),
        );
    };
    write(serde_json::json!({
        "alpha": {"command": "alpha-mcp", "args": ["--v", "1"]},
        "beta": {"command": "beta-mcp"},
        "gamma": {"command": "gamma-mcp"}
    }));
    let servers_json = env.path("config/servers.json").display().to_string();
    let first = env.run(&["import", "cursor"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert_eq!(
        first.stdout,
        format!("imported 3 server(s) into {servers_json}:\n  alpha  from ~/.cursor/mcp.json\n  beta   from ~/.cursor/mcp.json\n  gamma  from ~/.cursor/mcp.json\n")
    );
    write(serde_json::json!({
        "alpha": {"command": "alpha-mcp", "args": ["--v", "2"]},
        "beta": {"command": "beta-mcp"},
        "delta": {"command": "delta-mcp"}
    }));
    // Without --force a configured name is kept, and the import says how to replace it.
    let plain = env.run(&["import", "cursor"]);
    assert_eq!(
        plain.stdout,
        format!(
            "imported 1 server(s) into {servers_json}:\n  delta  from ~/.cursor/mcp.json\n\
             unchanged:\n  beta   from ~/.cursor/mcp.json\n\
             kept existing (a server of that name is configured; `ferry import cursor --force` replaces it):\n  alpha  from ~/.cursor/mcp.json\n\
             kept (imported before, no longer in the host's config; `ferry remove NAME` removes it):\n  gamma  from ~/.cursor/mcp.json\n"
        )
    );
    let forced = env.run(&["import", "cursor", "--force"]);
    assert_eq!(forced.code, 0, "{}", forced.stderr);
    assert_eq!(
        forced.stdout,
        format!(
            "imported 1 server(s) into {servers_json}:\n\
             updated (the host's entry changed):\n  alpha  from ~/.cursor/mcp.json\n\
             unchanged:\n  beta   from ~/.cursor/mcp.json\n  delta  from ~/.cursor/mcp.json\n\
             kept (imported before, no longer in the host's config; `ferry remove NAME` removes it):\n  gamma  from ~/.cursor/mcp.json\n"
        )
    );
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(env.path("config/servers.json")).unwrap())
            .unwrap();
    assert_eq!(
        config["mcpServers"]["alpha"]["args"],
        serde_json::json!(["--v", "2"])
    );
    assert_eq!(config["mcpServers"]["gamma"]["command"], "gamma-mcp");
    // The record of what was imported holds entries, which may hold keys: private.
    use std::os::unix::fs::PermissionsExt;
    let record = env.path("config/imported.json");
    let mode = std::fs::metadata(&record).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    // Once in sync, a forced import changes nothing.
    let again = env.run(&["import", "cursor", "--force"]);
    assert_eq!(
        again.stdout,
        format!(
            "imported 0 server(s) into {servers_json}\nunchanged:\n  alpha  from ~/.cursor/mcp.json\n  beta   from ~/.cursor/mcp.json\n  delta  from ~/.cursor/mcp.json\n\
             kept (imported before, no longer in the host's config; `ferry remove NAME` removes it):\n  gamma  from ~/.cursor/mcp.json\n"
        )
    );
    // Once removed, a server the host dropped is no longer reported.
    assert_eq!(env.run(&["remove", "gamma"]).code, 0);
    let removed = env.run(&["import", "cursor", "--force"]);
    assert_eq!(
        removed.stdout,
        format!(
            "imported 0 server(s) into {servers_json}\nunchanged:\n  alpha  from ~/.cursor/mcp.json\n  beta   from ~/.cursor/mcp.json\n  delta  from ~/.cursor/mcp.json\n"
        )
    );
}

#[test]
fn every_command_of_the_options_table_is_a_reserved_name() {
    // A server named like one of ferry's commands could never be called: each command of the
    // whole table (the binary's, serve and daemon included) is refused as a server name.
    let reserved = ferry::client::config::RESERVED_NAMES;
    let table = ferry::cli::table();
    let commands: Vec<&str> = table.get_subcommands().map(|c| c.get_name()).collect();
    let unreserved: Vec<&&str> = commands.iter().filter(|c| !reserved.contains(c)).collect();
    assert!(unreserved.is_empty(), "not reserved: {unreserved:?}");
    // And nothing is reserved that is no command: `help` is clap's, `call` is kept back.
    let stale: Vec<&&str> = reserved
        .iter()
        .filter(|name| !commands.contains(name) && !["help", "call"].contains(name))
        .collect();
    assert!(stale.is_empty(), "reserved but no command: {stale:?}");
    for name in commands.iter().filter(|c| !c.starts_with('_')) {
        let added =
            support::Env::new().run(&["add", name, "--", support::FERRY, "serve", "--demo"]);
        assert_eq!(added.code, 2, "ferry add {name}: {}", added.stderr);
    }
}
