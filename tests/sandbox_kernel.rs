//! The sandbox, second round: what Landlock has no rule for (modes, times, System V IPC,
//! memfds, watches), what looking at a repository may run, serve's own secrets, and a writing
//! tool in a git repository. Real processes and real git; each escape proven harmless by a
//! marker file that must not appear, a time or mode that must not change, or a secret that
//! must not be printed.
//!
//! Where the kernel lacks Landlock or a mount namespace, these tests say so loudly and stop;
//! under CI (`CI` set) that is a failure, so they never pass silently.

mod support;

use serde_json::json;
use std::path::{Path, PathBuf};
use support::*;

fn show(path: &Path) -> String {
    path.display().to_string()
}

/// What the sandbox tests need of the kernel besides Landlock, as `--check-sandbox` says it.
const SECCOMP: &str = ", seccomp";
const NAMESPACE: &str = "a mount and IPC namespace per call";

/// Whether calls get a namespace here (the rules only it gives are checked then).
fn has_namespace(env: &Env) -> bool {
    let check = env.run(&["serve", "--cli", "ls", "--check-sandbox"]);
    check
        .stdout
        .lines()
        .next()
        .unwrap_or("")
        .contains(NAMESPACE)
}

fn chmod(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

fn git(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args([
            "-c",
            "protocol.file.allow=always",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A file's mode and modification time.
fn stamp(path: &Path) -> (u32, std::time::SystemTime) {
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(path).unwrap();
    (meta.permissions().mode(), meta.modified().unwrap())
}

#[test]
fn inspecting_a_repository_runs_none_of_its_programs() {
    let env = Env::new();
    let marker = env.path("marker-ran");
    let script = format!(
        "#!/bin/sh\necho \"$0 $*\" >> {}\necho /usr/lib/git-core\necho 'usage: tool [--help]'\n",
        show(&marker)
    );
    env.write("work/vendor/bin/git", &script);
    env.write("work/scripts/check", &script);
    chmod(&env.path("work/vendor/bin/git"), 0o755);
    chmod(&env.path("work/scripts/check"), 0o755);
    env.write(
        "work/tools.toml",
        r#"
[server]
roots = ["."]

[[tools]]
name = "status"
description = "The repository's own git."
command = ["vendor/bin/git", "status"]
annotations = { readOnlyHint = true }

[[tools]]
name = "check"
description = "The repository's own check script."
command = ["scripts/check", "all"]
annotations = { readOnlyHint = true }
"#,
    );
    let check = env.run(&["serve", "--check-sandbox", "--manifest", "tools.toml"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(!marker.exists(), "--check-sandbox ran a repository program");
    let tokens = env.run(&["tokens", "--manifest", "tools.toml"]);
    assert_eq!(tokens.code, 0, "{}", tokens.stderr);
    assert!(
        !marker.exists(),
        "ferry tokens ran a repository program: {}",
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
    // Serving starts without running them either; they run only when called, confined.
    let mut served = Served::start(&env, &["--manifest", "tools.toml"]);
    let listed = served.call(1, "tools/list", json!({}), &mut Vec::new());
    assert!(listed.to_string().contains("\"check\""), "{listed}");
    assert!(!marker.exists(), "serve ran a repository program at start");
}

#[test]
fn a_hash_bang_line_grants_nothing_outside_the_roots() {
    let env = Env::new();
    env.write("secret/key", "the key\n");
    env.write("secret/run", "#!/bin/sh\necho run\n");
    chmod(&env.path("secret/run"), 0o755);
    let secret = std::fs::canonicalize(env.path("secret")).unwrap();
    // An interpreter that is no program: refused at start, naming the file and its line.
    for (i, line) in [
        format!("#!{}", show(&secret.join("key"))),
        "#!/proc/self/cwd/../secret/key".to_string(),
    ]
    .iter()
    .enumerate()
    {
        let name = format!("tool{i}");
        env.write(&format!("work/{name}"), &format!("{line}\nprint\n"));
        chmod(&env.path(&format!("work/{name}")), 0o755);
        env.write(
            "work/tools.toml",
            &format!(
                "[server]\nroots = [\".\"]\n\n[[tools]]\nname = \"t\"\ndescription = \"d\"\ncommand = [\"./{name}\"]\n"
            ),
        );
        let check = env.run(&["serve", "--check-sandbox", "--manifest", "tools.toml"]);
        assert_eq!(check.code, 2, "{line}: {}{}", check.stdout, check.stderr);
        assert!(
            check.stderr.contains(&format!("work/{name}")) && check.stderr.contains(line.as_str()),
            "{}",
            check.stderr
        );
        assert!(!check.stdout.contains(&show(&secret)), "{}", check.stdout);
    }
    // A real program outside any program directory runs, but makes its directory no
    // "install tree".
    env.write(
        "work/tool",
        &format!("#!{}\necho hi\n", show(&secret.join("run"))),
    );
    chmod(&env.path("work/tool"), 0o755);
    env.write(
        "work/tools.toml",
        "[server]\nroots = [\".\"]\n\n[[tools]]\nname = \"t\"\ndescription = \"d\"\ncommand = [\"./tool\"]\n",
    );
    let check = env.run(&["serve", "--check-sandbox", "--manifest", "tools.toml"]);
    assert_eq!(check.code, 0, "{}", check.stderr);
    let reads = check
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with("reads"))
        .unwrap()
        .to_string();
    assert!(!reads.contains(&show(&secret)), "{reads}");
}

/// A Python script as a tool of its own: `python SCRIPT {args*}`, read-only.
fn python_tool(env: &Env, name: &str, script: &str) -> String {
    env.write(&format!("work/{name}.py"), script);
    format!(
        "[[tools]]\nname = \"{name}\"\ndescription = \"d\"\ncommand = [\"{}\", \"{name}.py\", \"{{args*}}\"]\nannotations = {{ readOnlyHint = true }}\n[tools.params.args]\ntype = \"array\"\nitems = \"string\"\nrequired = false\nallow_dash = true\n\n",
        venv_python()
    )
}

const MEMFD: &str = r#"
import os, sys
data = open("/usr/bin/id", "rb").read()
fd = os.memfd_create("x", 0)
os.write(fd, data)
os.execv("/proc/self/fd/%d" % fd, ["id"])
"#;

const KERNEL_PROBE: &str = r#"
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.shmat.restype = ctypes.c_void_p
what = sys.argv[1]
if what == "shm-read":
    key = int(sys.argv[2])
    shm = libc.shmget(key, 0, 0)
    if shm < 0:
        print("shmget: errno", ctypes.get_errno()); sys.exit(1)
    at = libc.shmat(shm, None, 0)
    if at in (None, ctypes.c_void_p(-1).value):
        print("shmat: errno", ctypes.get_errno()); sys.exit(1)
    print("read:", ctypes.string_at(at, 16))
elif what == "shm-leave":
    key = int(sys.argv[2])
    shm = libc.shmget(key, 4096, 0o1666)
    q = libc.msgget(key, 0o1666)
    print("made", shm, q)
    sys.exit(0 if shm >= 0 else 1)
elif what == "watch":
    fd = libc.inotify_init()
    wd = libc.inotify_add_watch(fd, sys.argv[2].encode(), 0x100)
    print("watch:", wd, "errno", ctypes.get_errno())
    sys.exit(0 if wd >= 0 else 1)
elif what == "touch":
    os.utime(sys.argv[2], (0, 0))
    print("touched")
"#;

#[test]
fn what_landlock_has_no_rule_for_is_closed() {
    let env = Env::new();
    if !sandbox_ready(&env, &[SECCOMP]) {
        return;
    }
    let manifest = format!(
        "[server]\nroots = [\".\"]\n\n{}{}",
        python_tool(&env, "memfd", MEMFD),
        python_tool(&env, "probe", KERNEL_PROBE)
    );
    env.write("work/tools.toml", &manifest);
    // Another process's private segment, and keys for what a command might leave behind.
    let key = 0x4000_0000 + (std::process::id() as i32 & 0xffff);
    let left_key = key + 0x10000;
    // SAFETY: a segment this test makes, writes and removes.
    let segment = unsafe {
        let id = libc::shmget(key, 4096, libc::IPC_CREAT | libc::IPC_EXCL | 0o600);
        assert!(id >= 0, "shmget: {}", std::io::Error::last_os_error());
        let at = libc::shmat(id, std::ptr::null(), 0);
        std::ptr::copy_nonoverlapping(c"private segment".as_ptr(), at.cast(), 16);
        libc::shmdt(at);
        id
    };
    let mut served = Served::start(&env, &["--manifest", "tools.toml"]);

    // A memfd holding /usr/bin/id's bytes, run through /proc/self/fd: refused.
    let result = served.call_tool(1, "memfd", json!({}));
    let text = Served::text(&result);
    assert!(Served::is_error(&result), "{text}");
    assert!(!text.contains("uid="), "a memfd ran: {text}");

    // System V IPC: the other process's segment is out of reach, and nothing is left.
    let result = served.call_tool(2, "probe", json!({"args": ["shm-read", key.to_string()]}));
    let text = Served::text(&result);
    assert!(!text.contains("private segment"), "{text}");
    assert!(Served::is_error(&result), "{text}");
    let _ = served.call_tool(
        3,
        "probe",
        json!({"args": ["shm-leave", left_key.to_string()]}),
    );
    // SAFETY: asks whether a segment and a queue of this key exist.
    let (left_shm, left_queue) =
        unsafe { (libc::shmget(left_key, 0, 0), libc::msgget(left_key, 0)) };
    // SAFETY: removes what this test made (and, on a failure, what the command left).
    unsafe {
        libc::shmctl(segment, libc::IPC_RMID, std::ptr::null_mut());
        if left_shm >= 0 {
            libc::shmctl(left_shm, libc::IPC_RMID, std::ptr::null_mut());
        }
        if left_queue >= 0 {
            libc::msgctl(left_queue, libc::IPC_RMID, std::ptr::null_mut());
        }
    }
    assert!(left_shm < 0 && left_queue < 0, "a call left IPC objects");

    // A watch on ferry's own config directory fails (where the namespace covers it).
    let namespace = has_namespace(&env);
    let result = served.call_tool(
        4,
        "probe",
        json!({"args": ["watch", show(&env.path("config"))]}),
    );
    assert!(
        Served::is_error(&result) || !namespace,
        "{}",
        Served::text(&result)
    );

    // Times of a file outside the writable places stay (a read-only tool, here).
    env.write("victim.txt", "v\n");
    let before = stamp(&env.path("victim.txt"));
    let result = served.call_tool(
        5,
        "probe",
        json!({"args": ["touch", show(&env.path("victim.txt"))]}),
    );
    assert!(Served::is_error(&result), "{}", Served::text(&result));
    assert_eq!(stamp(&env.path("victim.txt")), before);
}

/// The ELF loader every dynamic program runs through.
fn loader() -> PathBuf {
    ["/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("no ELF loader found")
}

#[test]
fn a_hostile_repositorys_diff_external_through_the_loader_changes_nothing_outside() {
    let env = Env::new();
    if !sandbox_ready(&env, &[SECCOMP]) {
        return;
    }
    let repo = env.path("work");
    let home = env.path("home");
    env.write("victim.txt", "mine\n");
    let victim = env.path("victim.txt");
    chmod(&victim, 0o600);
    let before = stamp(&victim);
    git(&repo, &home, &["init", "-q", "."]);
    // The committed `d/x` is a Python script; in the working tree it becomes a link to Python.
    // `git diff` runs diff.external as `LOADER d/x OLD-FILE ...`: the loader runs the link
    // (Python), which runs the old blob.
    env.write(
        "work/d/x",
        &format!(
            "import os\nfor change in (lambda: os.chmod({v:?}, 0o644), lambda: os.utime({v:?}, (0, 0))):\n    try:\n        change()\n    except OSError as e:\n        print(e)\n",
            v = show(&victim)
        ),
    );
    git(&repo, &home, &["add", "d/x"]);
    git(&repo, &home, &["commit", "-qm", "one"]);
    std::fs::remove_file(env.path("work/d/x")).unwrap();
    // A Python the loader can reach: the system's.
    let Ok(python) = std::fs::canonicalize("/usr/bin/python3") else {
        skip("no /usr/bin/python3");
        return;
    };
    std::os::unix::fs::symlink(&python, env.path("work/d/x")).unwrap();
    git(&repo, &home, &["config", "diff.external", &show(&loader())]);
    let mut served = Served::start_with_env(
        &env,
        &["--cli", "git"],
        &[("PATH", "/usr/local/bin:/usr/bin:/bin")],
    );
    let result = served.call_tool(1, "git", json!({"args": ["diff"]}));
    assert_eq!(
        stamp(&victim),
        before,
        "a file outside the writable places changed mode or time: {result}"
    );
}

#[test]
fn a_writing_tool_works_at_a_repositorys_top_and_every_git_stays() {
    let env = Env::new();
    if !sandbox_ready(&env, &[SECCOMP, NAMESPACE]) {
        return;
    }
    let home = env.path("home");
    let sub = env.path("sub");
    std::fs::create_dir_all(&sub).unwrap();
    git(&sub, &home, &["init", "-q", "."]);
    env.write("sub/lib.txt", "lib\n");
    git(&sub, &home, &["add", "."]);
    git(&sub, &home, &["commit", "-qm", "lib"]);
    let repo = env.path("work");
    git(&repo, &home, &["init", "-q", "."]);
    env.write("work/a.txt", "a\n");
    git(&repo, &home, &["add", "."]);
    git(&repo, &home, &["commit", "-qm", "a"]);
    git(
        &repo,
        &home,
        &["submodule", "add", "-q", &show(&sub), "vendor/lib"],
    );
    let pointer = env.path("work/vendor/lib/.git");
    assert!(pointer.is_file());
    env.write("outside.txt", "outside\n");
    let outside = env.path("outside.txt");
    let outside_before = stamp(&outside);
    env.write(
        "work/tools.toml",
        r#"
[server]
roots = ["."]

[[tools]]
name = "save"
description = "Write a file."
command = ["sh", "-c", "printf '%s' \"$2\" > \"$1\"", "sh", "{name}", "{text}"]
[tools.params.name]
type = "string"
[tools.params.text]
type = "string"

[[tools]]
name = "run"
description = "One of the repository's own shell steps, as a formatter's would be."
command = ["sh", "ops.sh", "{step}"]
exec = ["mkdir", "rm", "mv", "touch"]
[tools.params.step]
type = "integer"
"#,
    );
    let steps = [
        "mkdir -p new/dir && printf x > new/dir/f.txt && touch -d 2001-01-01 new/dir/f.txt",
        "printf '[core]\\n\\tfsmonitor = touch pwned\\n' >> .git/config",
        "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/post-checkout",
        "rm -f vendor/lib/.git; mkdir vendor/lib/.git && printf '[filter \"x\"]\\n\\tclean = touch pwned\\n' > vendor/lib/.git/config",
        "mv vendor/lib/.git vendor/lib/old",
        "printf 'gitdir: /tmp\\n' > vendor/lib/.git",
        "touch -d 2001-01-01 ../outside.txt",
        "mkdir -p nested/.git && printf '[core]\\n\\tpager = touch pwned\\n' > nested/.git/config",
    ];
    let mut ops = String::from("case \"$1\" in\n");
    for (i, step) in steps.iter().enumerate() {
        ops.push_str(&format!("{i}) {step} ;;\n"));
    }
    ops.push_str("esac\n");
    env.write("work/ops.sh", &ops);
    git(&repo, &home, &["add", "ops.sh", "tools.toml"]);
    git(&repo, &home, &["commit", "-qm", "ops"]);
    let snapshot = || {
        let hooks: Vec<PathBuf> = files_below(&env.path("work/.git/hooks"));
        (
            std::fs::read(env.path("work/.git/config")).unwrap(),
            hooks,
            std::fs::read(&pointer).ok(),
            pointer.is_file(),
        )
    };
    let before = snapshot();
    let mut served = Served::start(&env, &["--manifest", "tools.toml"]);
    // Files at the top of the repository, and in a new sub-directory.
    let result = served.call_tool(1, "save", json!({"name": "inside.txt", "text": "hi"}));
    assert!(!Served::is_error(&result), "{result}");
    assert_eq!(
        std::fs::read_to_string(env.path("work/inside.txt")).unwrap(),
        "hi"
    );
    let result = served.call_tool(2, "run", json!({"step": 0}));
    assert!(!Served::is_error(&result), "{result}");
    assert!(env.path("work/new/dir/f.txt").exists());
    // Every .git as it was: the repository's own, and the submodule's pointer file; and
    // nothing outside the writable places changes time.
    for step in 1..=6 {
        let result = served.call_tool(10 + step, "run", json!({ "step": step }));
        assert!(
            Served::is_error(&result),
            "{}: {result}",
            steps[step as usize]
        );
        assert_eq!(snapshot(), before, "{}: {result}", steps[step as usize]);
    }
    assert_eq!(stamp(&outside), outside_before);
    // A repository the call makes is removed, and said.
    let result = served.call_tool(30, "run", json!({"step": 7}));
    assert!(Served::is_error(&result), "{result}");
    assert!(
        Served::text(&result).contains("removed: ")
            && Served::text(&result).contains("nested/.git"),
        "{result}"
    );
    assert!(!env.path("work/nested/.git").exists());
    assert!(env.path("work/nested").exists());
    let status = git(&repo, &home, &["status", "--porcelain"]);
    assert!(!status.contains("vendor"), "{status}");
}

/// A directory under /etc, as docs/deploy.md once advised, removed when the test ends.
struct EtcDir(PathBuf);

impl Drop for EtcDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
fn serve_own_secrets_are_hidden_from_commands() {
    let env = Env::new();
    if !sandbox_ready(&env, &[SECCOMP]) {
        return;
    }
    let dir = EtcDir(PathBuf::from(format!(
        "/etc/ferry-test-{}",
        std::process::id()
    )));
    if std::fs::create_dir_all(&dir.0).is_err() {
        skip("/etc is not writable");
        return;
    }
    let token = dir.0.join("token");
    let key = dir.0.join("state.key");
    std::fs::write(&token, "token-0123456789abcdef-secret\n").unwrap();
    std::fs::write(&key, "key-0123456789abcdef0123456789abcdef-secret\n").unwrap();
    // Readable by every account: hidden by serve all the same.
    chmod(&token, 0o644);
    chmod(&key, 0o644);
    let (token_s, key_s) = (show(&token), show(&key));
    let args = [
        "--token-file",
        &token_s,
        "--state-key-file",
        &key_s,
        "--cli",
        "git",
        "--http",
        "127.0.0.1:0",
    ];
    let served = HttpServed::start(&env, &args);
    let auth = format!("Bearer {}", served.token.clone().unwrap());
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "git",
        "arguments": {"args": ["diff", "--no-index", token_s, key_s]},
        "_meta": modern_meta(),
    }})
    .to_string();
    let (status, _, answer) = http_exchange(
        served.port,
        "POST",
        "/mcp",
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "git"),
            ("Authorization", &auth),
        ],
        "",
        &body,
    );
    assert_eq!(status, 200, "{answer}");
    assert!(answer.contains("\"result\""), "{answer}");
    assert!(!answer.contains("-secret"), "{answer}");
    drop(served);
    let mut check_args = vec!["serve", "--check-sandbox"];
    check_args.extend_from_slice(&args[..6]);
    let check = env.run(&check_args);
    assert_eq!(check.code, 0, "{}", check.stderr);
    assert!(check.stdout.contains(&token_s), "{}", check.stdout);
    assert!(
        check.stderr.contains("warning: --token-file") && check.stderr.contains("/etc"),
        "{}",
        check.stderr
    );
}
