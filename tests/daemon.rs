//! The warm path: calls go through a per-user daemon that keeps servers running. Real servers
//! (server-everything, server-memory, mcp-server-time), real processes, a real socket.

mod support;

use serde_json::Value;
use std::os::unix::fs::PermissionsExt;
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
    let calls: [&[&str]; 6] = [
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
    std::thread::sleep(Duration::from_millis(800));
    // SAFETY (test): the ferry this test started.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let interrupted = child.wait_with_output().unwrap();
    assert_eq!(interrupted.status.code(), Some(130));
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
    std::thread::sleep(Duration::from_millis(800));
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
