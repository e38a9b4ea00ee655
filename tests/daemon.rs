//! The warm path: calls go through a per-user daemon that keeps servers running. Real servers
//! (server-everything, server-memory, mcp-server-time), real processes, a real socket.

mod support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};
use support::*;

/// Adds `name` as a stdio server with `extra` config keys.
fn add(env: &Env, name: &str, command: &str, extra: &str) {
    let mut parts = shlex::split(command).unwrap().into_iter();
    let program = parts.next().unwrap();
    let args: Vec<String> = parts.map(|a| format!("{a:?}")).collect();
    let path = env.path("config/servers.json");
    let mut config: Value = std::fs::read_to_string(&path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_else(|| serde_json::json!({"mcpServers": {}}));
    let entry = format!(
        r#"{{"command": {program:?}, "args": [{}]{extra}}}"#,
        args.join(", ")
    );
    config["mcpServers"][name] = serde_json::from_str(&entry).unwrap();
    std::fs::write(&path, serde_json::to_string_pretty(&config).unwrap()).unwrap();
}

/// `ferry daemon status`'s servers, read from the daemon through the socket's status line.
fn warm_pids(env: &Env) -> Vec<u32> {
    let status = env.run(&["daemon", "status"]);
    assert_eq!(status.code, 0, "{}", status.stderr);
    status
        .stdout
        .lines()
        .skip(2)
        .filter_map(|l| l.split_whitespace().nth(1)?.parse().ok())
        .collect()
}

/// How many requests the daemon has begun with the warm server `name`, as `ferry daemon
/// status` counts them (a request counts when the daemon takes it on, before the server
/// answers): a test waits on it to know a call is under way.
fn begun(env: &Env, name: &str) -> u64 {
    let status = env.run(&["daemon", "status"]);
    status
        .stdout
        .lines()
        .skip(2)
        .find_map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            (columns.first() == Some(&name)).then(|| columns.get(4)?.parse().ok())?
        })
        .unwrap_or(0)
}

/// The daemon's pid, if one runs.
fn daemon_pid(env: &Env) -> Option<u32> {
    let status = env.run(&["daemon", "status"]);
    status
        .stdout
        .strip_prefix("daemon pid ")?
        .split(',')
        .next()?
        .parse()
        .ok()
}

/// The processes in a process group (a warm server, its guard and its children).
fn group_members(pgid: u32) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .ok()
                .and_then(|s| {
                    let (_, rest) = s.rsplit_once(')')?;
                    let state = rest.split_whitespace().next()?;
                    // A zombie has already ended; only its entry waits to be reaped.
                    (state != "Z").then(|| rest.split_whitespace().nth(2)?.parse::<u32>().ok())?
                })
                == Some(pgid)
        })
        .collect()
}

fn wait_until(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    done()
}

#[test]
fn a_warm_server_keeps_its_state_and_starts_once() {
    let env = Env::warm();
    let (command, counter) = env.counted(&everything());
    add(&env, "ev", &command, "");
    let first = env.run(&["ev", "toggle-simulated-logging"]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    assert!(
        first.stdout.starts_with("Started simulated"),
        "{}",
        first.stdout
    );
    // The same session answers the second call: the server remembers the first.
    let second = env.run(&["ev", "toggle-simulated-logging"]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(
        second.stdout.starts_with("Stopped simulated"),
        "{}",
        second.stdout
    );
    let echo = env.run(&["ev", "echo", "--message", "warm"]);
    assert_eq!(echo.stdout, "Echo: warm\n");
    assert_eq!(spawns(&counter), 1, "the server was started more than once");
    assert_eq!(warm_pids(&env).len(), 1);
    // The server list says which servers are warm.
    let list = env.run(&[]);
    assert!(
        list.stdout
            .lines()
            .any(|l| l.starts_with("ev") && l.contains("warm")),
        "{}",
        list.stdout
    );
    // Cold calls are unaffected by the warm session.
    let cold = env.run(&["--no-daemon", "ev", "toggle-simulated-logging"]);
    assert!(
        cold.stdout.starts_with("Started simulated"),
        "{}",
        cold.stdout
    );
}

#[test]
fn twenty_parallel_calls_share_one_server_and_get_their_own_answers() {
    let env = Env::warm();
    let (command, counter) = env.counted(&everything());
    add(&env, "ev", &command, "");
    assert_eq!(env.run(&["ev", "echo", "--message", "first"]).code, 0);
    let runs: Vec<(usize, Run)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..20)
            .map(|i| {
                let env = &env;
                scope.spawn(move || {
                    (
                        i,
                        env.run(&["ev", "get-sum", "--a", &i.to_string(), "--b", "1000"]),
                    )
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (i, run) in runs {
        assert_eq!(run.code, 0, "{}", run.stderr);
        assert!(
            run.stdout.contains(&format!("{}", i + 1000)),
            "call {i}: {}",
            run.stdout
        );
    }
    assert_eq!(spawns(&counter), 1);
}

#[test]
fn a_server_killed_between_calls_is_started_again() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    assert_eq!(env.run(&["ev", "echo", "--message", "a"]).code, 0);
    let pids = warm_pids(&env);
    assert_eq!(pids.len(), 1);
    // SAFETY (test): the group is the warm server this test started.
    unsafe {
        libc::killpg(pids[0] as i32, libc::SIGKILL);
    }
    assert!(wait_until(Duration::from_secs(5), || group_members(
        pids[0]
    )
    .is_empty()));
    let again = env.run(&["ev", "echo", "--message", "b"]);
    assert_eq!(again.code, 0, "{}", again.stderr);
    assert_eq!(again.stdout, "Echo: b\n");
    let now = warm_pids(&env);
    assert_eq!(now.len(), 1);
    assert_ne!(now[0], pids[0]);
}

#[test]
fn sigkill_of_the_daemon_leaves_no_server_running() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    add(&env, "time", &time_server(), "");
    assert_eq!(env.run(&["ev", "echo", "--message", "a"]).code, 0);
    let time = env.run(&["time", "get_current_time", "--timezone", "UTC"]);
    assert_eq!(time.code, 0, "{}", time.stderr);
    let pids = warm_pids(&env);
    assert_eq!(pids.len(), 2, "{pids:?}");
    for pid in &pids {
        assert!(!group_members(*pid).is_empty());
    }
    let daemon = daemon_pid(&env).expect("a daemon runs");
    // SAFETY (test): the daemon this test started.
    unsafe {
        libc::kill(daemon as i32, libc::SIGKILL);
    }
    for pid in pids {
        assert!(
            wait_until(Duration::from_secs(5), || group_members(pid).is_empty()),
            "server group {pid} outlived the daemon: {:?}",
            group_members(pid)
        );
    }
    // The next call starts a daemon again.
    let again = env.run(&["ev", "echo", "--message", "c"]);
    assert_eq!(again.stdout, "Echo: c\n", "{}", again.stderr);
}

#[test]
fn idle_servers_stop_and_the_daemon_then_exits() {
    let env = Env::warm();
    add(&env, "ev", &everything(), r#", "idleTimeout": 1"#);
    assert_eq!(env.run(&["ev", "echo", "--message", "a"]).code, 0);
    let pids = warm_pids(&env);
    assert_eq!(pids.len(), 1);
    assert!(
        wait_until(Duration::from_secs(10), || group_members(pids[0])
            .is_empty()),
        "the idle server was not stopped"
    );
    assert!(
        wait_until(Duration::from_secs(10), || daemon_pid(&env).is_none()),
        "the daemon did not exit with no servers"
    );
    assert!(!env.path("cache/run/daemon.sock").exists());
}

#[test]
fn a_changed_config_starts_a_new_session() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    assert_eq!(env.run(&["ev", "echo", "--message", "a"]).code, 0);
    let before = warm_pids(&env);
    add(
        &env,
        "ev",
        &everything(),
        r#", "env": {"FERRY_TEST_MARK": "2"}"#,
    );
    assert_eq!(env.run(&["ev", "echo", "--message", "b"]).code, 0);
    let after = warm_pids(&env);
    assert_eq!(after.len(), 2, "{after:?}");
    assert!(after.contains(&before[0]));
    let env_tool = env.run(&["ev", "get-env"]);
    assert!(
        env_tool.stdout.contains("FERRY_TEST_MARK"),
        "{}",
        env_tool.stdout
    );
}

#[test]
fn warm_and_cold_output_are_byte_identical() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    add(&env, "time", &time_server(), "");
    // Once the daemon runs, it answers every command, listings, help and usage errors too.
    let calls: [&[&str]; 20] = [
        &["ev", "echo", "--message", "same"],
        &["ev", "get-structured-content", "--location", "New York"],
        &["ev", "get-tiny-image"],
        &["ev", "get-sum", "--a", "1", "--b", "x"],
        &["ev", "no-such-tool"],
        &[
            "time",
            "convert_time",
            "--source_timezone",
            "UTC",
            "--time",
            "12:00",
            "--target_timezone",
            "Asia/Tokyo",
        ],
        &["ev"],
        &["ev", "--json"],
        &["ev", "echo", "--help"],
        &["ev", "echo"],
        &["ev", "echo", "--mesage", "x"],
        &["ev", "get-sum", "--a", "1"],
        &["ev", "get-annotated-message", "--messageType", "loud"],
        &["ev", "--bogus"],
        &["ev", "echo", "--message", "x", "--max-tokens", "many"],
        &["nosuch", "echo"],
        // A typo of one of the binary's commands (serve's, the daemon's) is named as such.
        &["serv", "x"],
        &["daemn", "status"],
        &["--json", "ev", "get-sum", "--a", "2", "--b", "3"],
        &["--cmd", "/no/such/server", "x"],
    ];
    for call in calls {
        let warm = env.run(call);
        let mut cold_args = vec!["--no-daemon"];
        cold_args.extend_from_slice(call);
        let cold = env.run(&cold_args);
        assert_eq!(warm.stdout, cold.stdout, "{call:?}");
        assert_eq!(
            warm.code, cold.code,
            "{call:?}: {} / {}",
            warm.stderr, cold.stderr
        );
        assert_eq!(warm.stderr, cold.stderr, "{call:?}");
    }
    // FERRY_NO_DAEMON=1 and keepAlive: false are cold too: no second server appears.
    let warm_before = warm_pids(&env);
    let mut command = env.command(&["ev", "echo", "--message", "x"]);
    command.env("FERRY_NO_DAEMON", "1");
    assert!(command.output().unwrap().status.success());
    add(&env, "cold", &everything(), r#", "keepAlive": false"#);
    assert_eq!(
        env.run(&["cold", "echo", "--message", "x"]).stdout,
        "Echo: x\n"
    );
    assert_eq!(warm_pids(&env), warm_before);
}

#[test]
fn a_daemon_of_another_ferry_is_replaced() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    // A copy of ferry is another build as far as the daemon handshake goes.
    let other = env.path("other-ferry");
    std::fs::copy(FERRY, &other).unwrap();
    let mut command = env.command(&["ev", "echo", "--message", "old"]);
    command.env_remove("FERRY_NO_DAEMON");
    let old_run = std::process::Command::new(&other)
        .args(["ev", "echo", "--message", "old"])
        .envs(command.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(env.path("work"))
        .output()
        .unwrap();
    assert!(old_run.status.success());
    let old = daemon_pid(&env).expect("the other ferry's daemon");
    let run = env.run(&["ev", "echo", "--message", "new"]);
    assert_eq!(run.stdout, "Echo: new\n", "{}", run.stderr);
    assert!(
        wait_until(Duration::from_secs(5), || !std::path::Path::new(&format!(
            "/proc/{old}"
        ))
        .exists()
            || std::fs::read_to_string(format!("/proc/{old}/stat"))
                .is_ok_and(|s| s.contains(") Z "))),
        "the old daemon still runs"
    );
    let new = daemon_pid(&env).expect("this ferry's daemon");
    assert_ne!(new, old);
}

#[test]
fn the_socket_is_private_and_a_shared_directory_is_refused() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    assert_eq!(env.run(&["ev", "echo", "--message", "a"]).code, 0);
    let dir = env.path("cache/run");
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&dir), 0o700);
    assert_eq!(mode(&dir.join("daemon.sock")), 0o600);
    assert_eq!(
        env.run(&["daemon", "stop"]).stdout,
        "daemon stopped (1 server)\n"
    );
    // A directory others can write: never used; the call goes cold with one warning.
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let run = env.run(&["ev", "echo", "--message", "b"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "Echo: b\n");
    assert_eq!(run.stderr.lines().count(), 1, "{}", run.stderr);
    assert!(run.stderr.contains("not private to you"), "{}", run.stderr);
    assert!(run.stderr.contains("calling cold"), "{}", run.stderr);
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
}

/// Ctrl-C in a warm call stops waiting (exit 130), tells the server the request is cancelled,
/// and leaves the warm server usable; a server that dies during a call gives exit 3 with the
/// end of its stderr, and the next call starts it again.
#[test]
fn interrupting_a_warm_call_keeps_the_server_and_a_crash_mid_call_is_exit_3() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    assert_eq!(env.run(&["ev", "echo", "--message", "a"]).code, 0);
    let before = warm_pids(&env);
    let calls = begun(&env, "ev");
    let child = env
        .command(&[
            "ev",
            "trigger-long-running-operation",
            "--duration",
            "20",
            "--steps",
            "2",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || begun(&env, "ev") == calls + 1),
        "the call never reached the daemon"
    );
    // SAFETY (test): the ferry this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let interrupted = child.wait_with_output().unwrap();
    assert_eq!(interrupted.status.code(), Some(130));
    // It says what happened: the request was cancelled, and the server was not stopped.
    assert_eq!(
        String::from_utf8_lossy(&interrupted.stderr),
        "error: interrupted; the request was cancelled and the warm server keeps running\n"
    );
    let after = env.run(&["ev", "echo", "--message", "still warm"]);
    assert_eq!(after.stdout, "Echo: still warm\n", "{}", after.stderr);
    assert_eq!(warm_pids(&env), before, "the same server answered");

    // A server that exits in the middle of a call: exit 3 with its last words, warm as cold.
    add(&env, "crash", &fault("crash"), "");
    assert_eq!(env.run(&["crash"]).code, 0);
    let crashed = env.run(&["crash", "echo", "--text", "x"]);
    assert_eq!(crashed.code, 3, "{}", crashed.stderr);
    assert!(
        crashed.stderr.contains("  fatal: simulated crash\n"),
        "{}",
        crashed.stderr
    );
}

/// A call whose caller hung up (Ctrl-C) ends as a call: the server is idle afterwards and
/// stops when its idle time runs out, instead of counting as busy for ever.
#[test]
fn a_server_whose_caller_hung_up_still_stops_when_idle() {
    let env = Env::warm();
    add(&env, "ev", &everything(), r#", "idleTimeout": 2"#);
    assert_eq!(env.run(&["ev", "echo", "--message", "a"]).code, 0);
    let pids = warm_pids(&env);
    let calls = begun(&env, "ev");
    let child = env
        .command(&[
            "ev",
            "trigger-long-running-operation",
            "--duration",
            "30",
            "--steps",
            "2",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(
        wait_until(Duration::from_secs(20), || begun(&env, "ev") == calls + 1),
        "the call never reached the daemon"
    );
    // SAFETY (test): the ferry this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    assert_eq!(child.wait_with_output().unwrap().status.code(), Some(130));
    assert!(
        wait_until(Duration::from_secs(15), || group_members(pids[0])
            .is_empty()),
        "the server whose caller hung up was never idle"
    );
}

/// A variable whose value is not UTF-8 (a shell can hold any bytes) is no reason to fail: the
/// call goes through, warm and cold.
#[test]
fn a_non_utf8_environment_variable_is_passed_over() {
    use std::os::unix::ffi::OsStrExt;
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    let bad = std::ffi::OsStr::from_bytes(b"\xff\xfe");
    for extra in [&[][..], &["--no-daemon"][..]] {
        let mut args = extra.to_vec();
        args.extend(["ev", "echo", "--message", "bytes"]);
        let run: Run = env
            .command(&args)
            .env("FERRY_TEST_BYTES", bad)
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into();
        assert_eq!(run.stdout, "Echo: bytes\n", "{args:?}: {}", run.stderr);
    }
}

/// The same command warm and cold (`--no-daemon`), with `input` on stdin: the same bytes out
/// and the same status.
fn assert_same_warm_and_cold(env: &Env, call: &[&str], input: &str) {
    let warm = env.run_with_stdin(call, input);
    let mut cold_args = vec!["--no-daemon"];
    cold_args.extend_from_slice(call);
    let cold = env.run_with_stdin(&cold_args, input);
    assert_eq!(warm.stdout, cold.stdout, "{call:?}");
    assert_eq!(warm.stderr, cold.stderr, "{call:?}");
    assert_eq!(warm.code, cold.code, "{call:?}");
}

/// Standard input and `@file`s are read by the calling ferry, which the daemon asks for
/// them: `-` and `@file` work warm as cold.
#[test]
fn standard_input_and_files_are_read_by_the_caller() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    env.write("work/args.json", r#"{"message": "from a file"}"#);
    assert_eq!(env.run(&["ev", "echo", "--message", "x"]).code, 0);
    let piped = env.run_with_stdin(&["ev", "echo", "--json", "-"], r#"{"message": "piped"}"#);
    assert_eq!(piped.stdout, "Echo: piped\n", "{}", piped.stderr);
    let file = env.run(&["ev", "echo", "--json", "@args.json"]);
    assert_eq!(file.stdout, "Echo: from a file\n", "{}", file.stderr);
    for call in [
        &["ev", "echo", "--json", "-"][..],
        &["ev", "echo", "--json", "@args.json"],
        &["ev", "echo", "--json", "@missing.json"],
        &["ev", "echo", "--json", "-"],
    ] {
        assert_same_warm_and_cold(&env, call, r#"{"message": "same"}"#);
    }
    assert_same_warm_and_cold(&env, &["ev", "echo", "--json", "-"], "not json");
}

/// A server whose handshake fails (it answers `initialize` with an error, or echoes every
/// request back as `/bin/cat` does) leaves no process behind in the daemon (issue 16, item 8).
#[test]
fn a_server_whose_handshake_fails_leaves_no_process() {
    let env = Env::warm();
    env.write(
        "badinit.py",
        r#"import json, sys
for line in sys.stdin:
    try:
        message = json.loads(line)
    except ValueError:
        continue
    if isinstance(message, dict) and "id" in message and "method" in message:
        error = {"code": -32603, "message": "this server never starts"}
        print(json.dumps({"jsonrpc": "2.0", "id": message["id"], "error": error}), flush=True)
"#,
    );
    let cat = env.path("cat-copy");
    std::fs::copy("/bin/cat", &cat).unwrap();
    let badinit = format!("python3 {}", env.path("badinit.py").display());
    let cat = cat.display().to_string();
    for server in [badinit.as_str(), cat.as_str()] {
        for _ in 0..3 {
            let run = env.run(&["--cmd", server, "foo"]);
            assert_eq!(run.code, 3, "{server}: {}", run.stderr);
            assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
        }
        let needle = server.rsplit(' ').next().unwrap();
        assert!(
            wait_until(Duration::from_secs(5), || processes_matching(needle)
                .is_empty()),
            "a server that failed to start still runs: {:?}",
            processes_matching(needle)
        );
    }
    let status = env.run(&["daemon", "status"]);
    assert!(
        status.stdout.ends_with("no warm servers\n"),
        "{}",
        status.stdout
    );
}

/// A server's question (roots/list here) is answered only for the caller it can belong to:
/// with two callers in flight it is refused, never answered with the other one's directory,
/// and once a server has asked, its calls take turns so each question has one caller
/// (issue 16, item 9).
#[test]
fn a_servers_question_is_answered_for_its_own_caller_only() {
    let env = Env::warm();
    for dir in ["work/a", "work/b"] {
        std::fs::create_dir_all(env.path(dir)).unwrap();
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/roots_server.py");
    // A configured directory: callers from any directory share the one server.
    add(
        &env,
        "roots",
        &format!("{} {}", venv_python(), script.display()),
        &format!(r#", "cwd": {:?}"#, env.path("work").display().to_string()),
    );
    // Roots are a handshake-era question (2026-07-28 servers cannot ask it).
    // A call makes NAME.started when it reaches the server and asks once NAME.go is made.
    let call = |dir: &str, name: &str| {
        let started = env.path(&format!("{name}.started")).display().to_string();
        let go = env.path(&format!("{name}.go")).display().to_string();
        env.command(&["roots", "where", "--started", &started, "--until", &go])
            .current_dir(env.path(dir))
            .env("FERRY_PROTOCOL_VERSION", "2025-11-25")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    let started = |name: &str| env.path(&format!("{name}.started")).exists();
    let go = |name: &str| env.write(&format!("{name}.go"), "");
    let uri = |dir: &str| format!("file://{}", env.path(dir).display());
    let listed = env
        .command(&["roots"])
        .env("FERRY_PROTOCOL_VERSION", "2025-11-25")
        .output()
        .unwrap();
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
    // A asks while B waits too.
    let a = call("work/a", "a");
    let b = call("work/b", "b");
    assert!(
        wait_until(Duration::from_secs(20), || started("a") && started("b")),
        "the two calls never were in flight together"
    );
    go("a");
    let a: Run = a.wait_with_output().unwrap().into();
    go("b");
    let b: Run = b.wait_with_output().unwrap().into();
    assert!(
        !a.stdout.contains(&uri("work/b")),
        "A was answered with B's directory"
    );
    // Two callers in flight when it asked: the question is refused, and the call fails.
    assert_eq!(
        (a.code, a.stdout.as_str(), a.stderr.as_str()),
        (
            3,
            "",
            "error: roots answered tools/call with an error: ferry cannot tell which of its \
             calls in flight this roots/list is for, so it answers for none (code -32603)\n"
        )
    );
    assert_eq!(b.stdout, format!("{}\n", uri("work/b")), "{}", b.stderr);
    // The server has asked: calls now take turns, and each is answered for itself.
    let c = call("work/a", "c");
    assert!(wait_until(Duration::from_secs(20), || started("c")));
    let d = call("work/b", "d");
    go("c");
    go("d");
    let (c, d): (Run, Run) = (
        c.wait_with_output().unwrap().into(),
        d.wait_with_output().unwrap().into(),
    );
    assert_eq!(c.stdout, format!("{}\n", uri("work/a")), "{}", c.stderr);
    assert_eq!(d.stdout, format!("{}\n", uri("work/b")), "{}", d.stderr);
    assert_eq!(warm_pids(&env).len(), 1);
}

/// A warm server is started with the environment of the call that needs it, and a call from
/// a shell with another environment gets a server of its own, as `--no-daemon` would;
/// variables that only describe the shell do not count (issue 16, item 10).
#[test]
fn a_warm_server_gets_the_environment_of_its_callers_shell() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    let get_env = |profile: &str, extra: &[(&str, &str)], args: &[&str]| -> Run {
        let mut words = args.to_vec();
        words.extend(["ev", "get-env", "--max-tokens", "100000"]);
        env.command(&words)
            .env("FERRY_TEST_PROFILE", profile)
            .envs(extra.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into()
    };
    let shows = |run: &Run, profile: &str| {
        run.stdout
            .contains(&format!("\"FERRY_TEST_PROFILE\":\"{profile}\""))
    };
    let one = get_env("one", &[], &[]);
    assert!(shows(&one, "one"), "{}", one.stderr);
    let two = get_env("two", &[], &[]);
    assert!(
        shows(&two, "two"),
        "the warm server kept the first shell's variables"
    );
    let cold = get_env("two", &[], &["--no-daemon"]);
    assert!(shows(&cold, "two"));
    assert_eq!(warm_pids(&env).len(), 2);
    let moved = get_env(
        "two",
        &[
            ("PWD", "/elsewhere"),
            ("OLDPWD", "/x"),
            ("SHLVL", "7"),
            ("_", "/bin/env"),
        ],
        &[],
    );
    assert!(shows(&moved, "two"), "{}", moved.stderr);
    assert_eq!(
        warm_pids(&env).len(),
        2,
        "the shell's own variables made a new server"
    );
}

/// `FERRY_LOG=debug` shows the JSON-RPC traffic of `ferry <server> ...` warm and cold, as
/// `--verbose` does (issue 16, item 12); without either, stderr stays quiet.
#[test]
fn ferry_log_shows_a_server_commands_traffic_warm_and_cold() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    assert_eq!(env.run(&["ev", "echo", "--message", "a"]).code, 0);
    let traced = |command: &mut std::process::Command| {
        let run: Run = command
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into();
        assert_eq!(run.stdout, "Echo: x\n", "{}", run.stderr);
        for line in [
            "-> {\"jsonrpc\":\"2.0\",\"id\":",
            "\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"message\":\"x\"}}",
            "<- {",
            "\"text\":\"Echo: x\"",
        ] {
            assert!(run.stderr.contains(line), "{line}\n{}", run.stderr);
        }
    };
    traced(
        env.command(&["ev", "echo", "--message", "x"])
            .env("FERRY_LOG", "debug"),
    );
    traced(
        env.command(&["ev", "echo", "--message", "x"])
            .env("FERRY_LOG", "debug")
            .env("FERRY_NO_DAEMON", "1"),
    );
    traced(&mut env.command(&["--verbose", "ev", "echo", "--message", "x"]));
    let quiet = env.run(&["ev", "echo", "--message", "x"]);
    assert_eq!(
        (quiet.stdout.as_str(), quiet.stderr.as_str()),
        ("Echo: x\n", "")
    );
}

/// The daemon reads the config as a cold call does: every field a cold call sees (variables,
/// directory, limits, tool filters, output budget, a project file's trust) shapes a warm call
/// the same way (issue 17).
#[test]
fn a_warm_call_sees_every_field_of_the_config_a_cold_call_sees() {
    let env = Env::warm();
    std::fs::create_dir_all(env.path("work/srv")).unwrap();
    add(
        &env,
        "full",
        &everything(),
        &format!(
            r#", "env": {{"FERRY_FIELD": "${{FERRY_TEST_FIELD}}"}}, "cwd": {:?}, "timeout": 30,
            "maxTokens": 64, "maxMessageMB": 1, "idleTimeout": 120, "keepAlive": true,
            "includeTools": ["echo", "get-sum", "get-env", "get-structured-content"],
            "excludeTools": ["get-sum"]"#,
            env.path("work/srv").display().to_string()
        ),
    );
    let (command, _) = env.counted(&everything());
    env.write(
        "work/.mcp.json",
        &serde_json::json!({"mcpServers": {"proj": {"command": "sh", "args": ["-c", command.trim_start_matches("sh -c ").trim_matches('\'')]}}})
            .to_string(),
    );
    let long = "word ".repeat(300);
    let calls: [&[&str]; 9] = [
        &["full"],
        &["full", "--json"],
        &["full", "echo", "--message", &long],
        &["full", "echo", "--message", "short"],
        &["full", "get-sum", "--a", "1", "--b", "2"],
        &["full", "get-structured-content", "--location", "New York"],
        &["full", "get-env", "--max-tokens", "100000"],
        &["full", "echo", "--help"],
        &["proj", "echo", "--message", "x"],
    ];
    let run = |args: &[&str]| -> Run {
        env.command(args)
            .env("FERRY_TEST_FIELD", "field-value")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into()
    };
    assert_eq!(run(&["full", "--refresh"]).code, 0);
    for call in calls {
        let warm = run(call);
        let mut cold_args = vec!["--no-daemon"];
        cold_args.extend_from_slice(call);
        let cold = run(&cold_args);
        assert_eq!(warm.stdout, cold.stdout, "{call:?}");
        assert_eq!(warm.stderr, cold.stderr, "{call:?}");
        assert_eq!(warm.code, cold.code, "{call:?}");
    }
    // Each field was in force, warm: the budget, the filters, the variable, the trust gate.
    assert!(run(calls[2]).stdout.contains("full output: "));
    assert_eq!(run(calls[4]).code, 2);
    assert!(run(calls[6])
        .stdout
        .contains("\"FERRY_FIELD\":\"field-value\""));
    let untrusted = run(calls[8]);
    assert_eq!(untrusted.code, 2, "{}", untrusted.stderr);
    assert!(
        untrusted.stderr.contains("which you have not trusted"),
        "{}",
        untrusted.stderr
    );
}

/// Progress reaches a terminal warm as cold, and an elicitation is answered by the caller
/// (here with `FERRY_ELICIT=defaults`) warm as cold.
#[test]
fn progress_and_elicitation_reach_the_caller() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    // Under a pseudo-terminal (script(1)) progress is shown on stderr.
    let on_terminal = |extra: &str| -> String {
        let line = format!(
            "{} {extra} ev trigger-long-running-operation --duration 1 --steps 2",
            FERRY
        );
        let out = env
            .command(&[])
            .get_envs()
            .fold(std::process::Command::new("script"), |mut c, (k, v)| {
                match v {
                    Some(v) => c.env(k, v),
                    None => c.env_remove(k),
                };
                c
            })
            .args(["-qec", &line, "/dev/null"])
            .current_dir(env.path("work"))
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        // A start slower than a second says so on the terminal first, as a status line of its
        // own (erased, drawn, erased); a cold start may, and so may a warm one (a terminal
        // declares elicitation, so it has a server apart from the piped call's).
        String::from_utf8_lossy(&out.stdout)
            .replace(
                "\r\x1b[Kstarting ev (a first start may download it)...\r\x1b[K",
                "",
            )
            .replace("starting ev (a first start may download it)...\r\x1b[K", "")
    };
    assert_eq!(env.run(&["ev", "echo", "--message", "a"]).code, 0);
    let warm = on_terminal("");
    assert!(warm.contains("\r\x1b[Kprogress 1/2"), "{warm:?}");
    assert!(warm.contains("\r\x1b[Kprogress 2/2"), "{warm:?}");
    assert_eq!(warm, on_terminal("--no-daemon"));
    // An elicitation: the tool is listed to clients that can answer one.
    let elicit = |args: &[&str]| -> Run {
        env.command(args)
            .env("FERRY_ELICIT", "defaults")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into()
    };
    assert_eq!(elicit(&["ev", "--refresh"]).code, 0);
    let warm = elicit(&["ev", "trigger-elicitation-request"]);
    assert!(warm.stdout.contains("\"action\": \"decline\""), "{warm:?}");
    let cold = elicit(&["--no-daemon", "ev", "trigger-elicitation-request"]);
    assert_eq!(
        (warm.stdout, warm.stderr, warm.code),
        (cold.stdout, cold.stderr, cold.code)
    );
}

/// A detached task lives in the warm server that ran the call: `--task ID` reaches that same
/// process later, says how the task runs (exit 75) until it has ended, then prints its result
/// as the call would have. Cold, a stdio server's task cannot be reached, and ferry says so.
#[test]
fn a_detached_task_is_fetched_warm_by_its_id() {
    let env = Env::warm();
    add(&env, "ev", &everything(), "");
    let detached = env.run(&[
        "ev",
        "simulate-research-query",
        "--topic",
        "tides",
        "--detach",
    ]);
    assert_eq!(detached.code, 0, "{}", detached.stderr);
    let id = detached.stdout.trim_end().to_string();
    assert!(
        !id.is_empty() && !id.contains(char::is_whitespace),
        "{id:?}"
    );
    assert_eq!(
        detached.stderr,
        format!("task {id} is working; fetch it with: ferry ev --task {id}\n")
    );

    let running = env.run(&["ev", "--task", &id]);
    assert_eq!(running.code, 75, "{}", running.stderr);
    assert!(
        running.stdout.starts_with("working: ") && running.stdout.lines().count() == 1,
        "{}",
        running.stdout
    );
    // From a shell whose environment differs (which keys a warm server of its own), the
    // task's session still answers, and no other server is started for it.
    let mut elsewhere = env.command(&["ev", "--task", &id]);
    elsewhere.env("FERRY_TEST_ANOTHER_SHELL", "1");
    let other: Run = elsewhere
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
        .into();
    assert_eq!(other.code, 75, "{}", other.stderr);
    assert_eq!(warm_pids(&env).len(), 1);
    let cold = env.run(&["--no-daemon", "ev", "--task", &id]);
    assert_eq!(cold.code, 2, "{}", cold.stderr);
    assert_eq!(
        cold.stderr,
        format!(
            "error: task {id} needs the warm daemon: ev's tasks live in its process, which a \
             cold call starts and stops\nhint: fetch it through the daemon (without --no-daemon \
             or FERRY_NO_DAEMON=1)\n"
        )
    );

    let mut done = None;
    assert!(wait_until(Duration::from_secs(30), || {
        let fetched = env.run(&["ev", "--task", &id]);
        let ended = fetched.code != 75;
        done = ended.then_some(fetched);
        ended
    }));
    let done = done.unwrap();
    assert_eq!(done.code, 0, "{}", done.stderr);
    assert!(
        done.stdout.starts_with("# Research Report: tides\n"),
        "{}",
        done.stdout
    );
    // Fetched again, the same result: a task is kept until its ttl.
    assert_eq!(env.run(&["ev", "--task", &id]).stdout, done.stdout);

    // A call waited for as a task (2025-11-25) prints the same bytes warm and cold.
    assert_same_warm_and_cold(
        &env,
        &["ev", "simulate-research-query", "--topic", "same"],
        "",
    );

    // An unknown task ID is the caller's mistake (issue 27, item 5): exit 2, with the hint.
    let unknown = env.run(&["ev", "--task", "no-such-task"]);
    assert_eq!(unknown.code, 2, "{}", unknown.stderr);
    assert!(
        unknown.stderr.ends_with(
            "hint: a stdio server's tasks live in its process: only the warm server that ran \
             the call has it, until it is stopped (idleTimeout, `ferry daemon stop`) or the \
             task expires\n"
        ),
        "{}",
        unknown.stderr
    );
}

/// Served tools that run as tasks (ferry serve's `task = true`, the 2026-07-28 extension)
/// give the same bytes and status warm and cold, whatever their end; and Ctrl-C on a warm
/// call that became a task cancels the task (`tasks/cancel`: its command stops) while the
/// server stays warm.
#[test]
fn served_tasks_are_the_same_warm_and_cold_and_ctrl_c_cancels_them() {
    let env = Env::warm();
    // What the server is sent is kept, so the test can see a task being polled.
    let sent = env.path("jobs.log");
    let logged = format!("sh -c 'tee -a {} | {}'", sent.display(), served_tasks());
    add(&env, "jobs", &logged, "");
    let polls = || {
        std::fs::read_to_string(&sent)
            .unwrap_or_default()
            .matches("\"tasks/get\"")
            .count()
    };
    for call in [
        &["jobs", "broken"][..],
        &["jobs", "crashed"],
        &["jobs", "soak", "--seconds", "0.75"],
        &["jobs", "--json", "soak", "--seconds", "0.75"],
        // The limit covers the call and the task's wait: cancelled at 1.5 s, warm as cold.
        &["jobs", "soak", "--seconds", "3", "--timeout", "1.5"],
    ] {
        assert_same_warm_and_cold(&env, call, "");
    }
    let before = warm_pids(&env);
    let polled = polls();
    let child = env
        .command(&["jobs", "soak", "--seconds", "41.5"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_until(Duration::from_secs(10), || {
        processes_matching("sleep 41.5").len() == 1
    }));
    // Past half a second the call is a task: wait until it is polled as one.
    assert!(
        wait_until(Duration::from_secs(20), || polls() > polled),
        "the call never became a task"
    );
    // SAFETY (test): the ferry this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let interrupted = child.wait_with_output().unwrap();
    assert_eq!(interrupted.status.code(), Some(130));
    assert_eq!(
        String::from_utf8_lossy(&interrupted.stderr),
        "error: interrupted; the request was cancelled and the warm server keeps running\n"
    );
    assert!(
        wait_until(Duration::from_secs(10), || processes_matching("sleep 41.5")
            .is_empty()),
        "the task's command still runs"
    );
    assert_eq!(warm_pids(&env), before, "the same server stays warm");
}

/// A warm server that holds a detached task is not stopped as idle while the task may still
/// be fetched (its ttl): the task outlives the server's idle time.
#[test]
fn a_detached_task_keeps_its_server_past_the_idle_time() {
    let env = Env::warm();
    add(&env, "jobs", &served_tasks(), r#", "idleTimeout": 1"#);
    let detached = env.run(&["jobs", "soak", "--seconds", "4", "--detach"]);
    assert_eq!(detached.code, 0, "{}", detached.stderr);
    let id = detached.stdout.trim_end().to_string();
    let holder = warm_pids(&env);
    // Wait until the daemon counts the server idle for 2 s, past its idle time of 1 s.
    let idle_seconds = || -> u64 {
        let status = env.run(&["daemon", "status"]).stdout;
        status
            .lines()
            .skip(2)
            .find_map(|line| {
                let columns: Vec<&str> = line.split_whitespace().collect();
                (columns.first() == Some(&"jobs"))
                    .then(|| columns.get(2)?.strip_suffix('s')?.parse().ok())?
            })
            .unwrap_or(0)
    };
    assert!(
        wait_until(Duration::from_secs(20), || idle_seconds() >= 2),
        "the server was stopped as idle"
    );
    assert_eq!(warm_pids(&env), holder, "the server was stopped as idle");
    let mut done = None;
    assert!(wait_until(Duration::from_secs(20), || {
        let fetched = env.run(&["jobs", "--task", &id]);
        let ended = fetched.code != 75;
        done = ended.then_some(fetched);
        ended
    }));
    let done = done.unwrap();
    assert_eq!(done.code, 0, "{}", done.stderr);
}

/// Issue 27, item 3: a warm server is keyed by the project root and the variables that can
/// change what it does, so a sub-directory of the same repository and another terminal pane
/// reuse it, while another `AWS_PROFILE` gets its own, and `ferry daemon status` says where
/// each started and what set it apart. A project server starts in the project root, so its
/// `${PWD}` means the same from every sub-directory.
#[test]
fn sub_directories_and_panes_share_a_warm_server_keyed_by_project_root() {
    let env = Env::warm();
    let repo = env.path("work/repo");
    for dir in [".git", "sub/deeper", "other"] {
        std::fs::create_dir_all(repo.join(dir)).unwrap();
    }
    let script = everything_script();
    let files = filesystem(std::path::Path::new("DIR"));
    let files_script = files.split(' ').nth(1).unwrap();
    env.write(
        "config/servers.json",
        &serde_json::json!({"mcpServers": {"ev": {"command": "node", "args": [script, "stdio"]}}})
            .to_string(),
    );
    env.write(
        "work/repo/.mcp.json",
        &serde_json::json!({"mcpServers": {"files": {"command": "node", "args": [files_script, "${PWD}"]}}})
            .to_string(),
    );
    let run_in = |dir: &str, vars: &[(&str, &str)], args: &[&str]| -> Run {
        env.command(args)
            .current_dir(repo.join(dir))
            .envs(vars.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into()
    };
    assert_eq!(run_in(".", &[], &["trust"]).code, 0);
    let root = std::fs::canonicalize(&repo).unwrap().display().to_string();

    let deep = run_in(
        "sub/deeper",
        &[("TMUX_PANE", "%1"), ("SHLVL", "2")],
        &["ev", "get-env"],
    );
    assert!(
        deep.stdout.contains(&format!("\"PWD\":\"{root}\"")),
        "{}",
        deep.stdout
    );
    let pane = run_in(
        "other",
        &[
            ("TMUX_PANE", "%7"),
            ("WINDOWID", "99"),
            ("TERM_SESSION_ID", "w1t2"),
            ("SHLVL", "5"),
        ],
        &["ev", "echo", "--message", "pane"],
    );
    assert_eq!(pane.stdout, "Echo: pane\n", "{}", pane.stderr);
    let rows = |status: &str, name: &str| -> Vec<String> {
        status
            .lines()
            .skip(2)
            .filter(|l| l.starts_with(&format!("{name} ")))
            .map(str::to_string)
            .collect()
    };
    let status = env.run(&["daemon", "status"]).stdout;
    let ev = rows(&status, "ev");
    assert_eq!(
        ev.len(),
        1,
        "one warm ev for the whole repository:\n{status}"
    );
    assert!(ev[0].ends_with(&format!("  {root}")), "{status}");

    let profiled = run_in(
        "sub",
        &[("AWS_PROFILE", "other")],
        &["ev", "echo", "--message", "b"],
    );
    assert_eq!(profiled.stdout, "Echo: b\n", "{}", profiled.stderr);
    let status = env.run(&["daemon", "status"]).stdout;
    let ev = rows(&status, "ev");
    assert_eq!(ev.len(), 2, "{status}");
    assert!(
        ev.iter()
            .all(|row| row.ends_with(&format!("  {root}  (apart by $AWS_PROFILE)"))),
        "{status}"
    );

    // The project's server serves the repository's root from any of its directories.
    let allowed = |dir: &str| run_in(dir, &[], &["files", "list_allowed_directories"]).stdout;
    let from_deep = allowed("sub/deeper");
    assert!(from_deep.contains(&root), "{from_deep}");
    assert_eq!(allowed("other"), from_deep);
    let status = env.run(&["daemon", "status"]).stdout;
    assert_eq!(rows(&status, "files").len(), 1, "{status}");
}

/// Issue 27, item 3: a variable set per call (`REQ_ID=$RANDOM`) or by the shell and terminal
/// reuses the warm server; a setting (`NODE_OPTIONS`, a token) gets a server of its own, as a
/// cold call would; and a variable the server's config names keys it, whatever its name.
/// `ferry daemon status` says which variable set the rows apart.
#[test]
fn a_per_call_variable_reuses_the_warm_server_and_a_setting_does_not() {
    let env = Env::warm();
    let (command, counter) = env.counted(&everything());
    add(&env, "ev", &command, "");
    let (named, named_counter) = {
        let (line, _) = env.counted(&everything());
        // A second counter file for the server whose config names SHARD_ID.
        let other = env.path("spawns-named");
        (
            line.replace(
                &env.path("spawns").display().to_string(),
                &other.display().to_string(),
            ),
            other,
        )
    };
    add(
        &env,
        "named",
        &named,
        r#", "env": {"SHARD": "${SHARD_ID}"}"#,
    );
    let call = |server: &str, vars: &[(&str, &str)], message: &str| -> Run {
        env.command(&[server, "echo", "--message", message])
            .envs(vars.iter().copied())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
            .into()
    };
    for (i, vars) in [
        vec![("REQ_ID", "1")],
        vec![("REQ_ID", "2"), ("SHLVL", "4")],
        vec![("REQ_ID", "3"), ("TMUX_PANE", "%9"), ("OLDPWD", "/tmp")],
        vec![
            ("WINDOWID", "7"),
            ("TERM_SESSION_ID", "w0t3"),
            ("_", "/bin/ferry"),
        ],
    ]
    .iter()
    .enumerate()
    {
        let run = call("ev", vars, &format!("m{i}"));
        assert_eq!(run.stdout, format!("Echo: m{i}\n"), "{}", run.stderr);
    }
    assert_eq!(
        spawns(&counter),
        1,
        "a per-call variable started a new server"
    );

    // A setting is another server, as a cold call would start it.
    let set = call("ev", &[("GITHUB_TOKEN", "t2")], "s");
    assert_eq!(set.stdout, "Echo: s\n", "{}", set.stderr);
    assert_eq!(
        spawns(&counter),
        2,
        "a setting must not reuse the warm server"
    );
    let again = call("ev", &[("GITHUB_TOKEN", "t2"), ("REQ_ID", "9")], "s2");
    assert_eq!(again.stdout, "Echo: s2\n", "{}", again.stderr);
    assert_eq!(spawns(&counter), 2);

    // A variable the config names keys its server, though its name reads as nothing.
    for (shard, message) in [("a", "n1"), ("a", "n2"), ("b", "n3")] {
        let run = call("named", &[("SHARD_ID", shard)], message);
        assert_eq!(run.stdout, format!("Echo: {message}\n"), "{}", run.stderr);
    }
    assert_eq!(spawns(&named_counter), 2);

    let status = env.run(&["daemon", "status"]).stdout;
    let ev: Vec<&str> = status.lines().filter(|l| l.starts_with("ev ")).collect();
    assert_eq!(ev.len(), 2, "{status}");
    assert!(
        ev.iter()
            .all(|row| row.ends_with("(apart by $GITHUB_TOKEN)")),
        "{status}"
    );
    assert!(!status.contains("REQ_ID"), "{status}");
    let named: Vec<&str> = status.lines().filter(|l| l.starts_with("named ")).collect();
    assert_eq!(named.len(), 2, "{status}");
}
