//! Signing in to a server behind OAuth (tests/fixtures/oauth_server.py: an MCP endpoint and its
//! authorization server): the token file, refresh, ten processes refreshing at once, a revoked
//! registration, a tampered answer, and no token in any output.

mod support;

use serde_json::Value;
use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::process::{Child, Command, Stdio};
use support::*;

struct AuthServer {
    child: Child,
    base: String,
}

impl AuthServer {
    fn start() -> AuthServer {
        let script =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/oauth_server.py");
        let mut child = Command::new(venv_python())
            .arg(script)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        AuthServer {
            child,
            base: line.trim().to_string(),
        }
    }

    fn control(&self, body: Option<&str>) -> Value {
        let mut command = Command::new("curl");
        command.args(["-s", &format!("{}/control", self.base)]);
        if let Some(body) = body {
            command.args(["-X", "POST", "-d", body]);
        }
        serde_json::from_slice(&command.output().unwrap().stdout).unwrap_or(Value::Null)
    }
}

impl Drop for AuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A ferry environment with the server configured as `secure` and a "browser" that follows
/// the authorization server's redirect back to ferry's listener.
fn setup(server: &AuthServer) -> Env {
    let env = Env::new();
    let url = format!("{}/mcp", server.base);
    assert_eq!(env.run(&["add", "secure", &url]).code, 0);
    env
}

/// A "browser" that follows the authorization server's redirect back to ferry's listener.
const BROWSER: &str = "curl -s -o /dev/null -L";

fn run(env: &Env, args: &[&str]) -> Run {
    env.command(args)
        .env("BROWSER", BROWSER)
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .into()
}

fn token_file(env: &Env) -> std::path::PathBuf {
    let dir = env.path("config/auth");
    std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "json"))
        .expect("a token file")
}

fn stored(env: &Env) -> Value {
    serde_json::from_str(&std::fs::read_to_string(token_file(env)).unwrap()).unwrap()
}

#[test]
fn sign_in_stores_a_private_token_that_no_output_shows() {
    let server = AuthServer::start();
    let env = setup(&server);
    // Before signing in: exit 5 and the one command that fixes it.
    let env = Test::with(env)
        .env("BROWSER", BROWSER)
        .args(&["secure", "whoami"])
        .status(5)
        .stderr_has("hint: run `ferry auth secure`")
        .run();
    let signed = run(&env, &["auth", "secure"]);
    assert_eq!(signed.code, 0, "{}", signed.stderr);
    assert_eq!(signed.stdout, "signed in to secure (scope: mcp:tools)\n");
    assert!(
        signed.stderr.contains("/authorize?response_type=code"),
        "{}",
        signed.stderr
    );
    let file = token_file(&env);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(&env.path("config/auth")), 0o700);
    let doc = stored(&env);
    let token = doc["accessToken"].as_str().unwrap().to_string();
    let refresh = doc["refreshToken"].as_str().unwrap().to_string();
    assert!(token.starts_with("tok-") && refresh.starts_with("ref-"));
    assert_eq!(doc["issuer"], server.base.as_str());
    // Calls now carry it, and nothing ferry prints ever shows it.
    let mut outputs = vec![signed];
    for args in [
        &["secure", "whoami"][..],
        &["--json", "secure", "whoami"],
        &["--verbose", "secure", "whoami"],
        &["auth", "--status"],
        &["secure"],
    ] {
        let run = run(&env, args);
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        outputs.push(run);
    }
    assert_eq!(outputs[1].stdout, "signed in\n");
    assert!(
        outputs[4].stdout.starts_with("secure  signed in at "),
        "{}",
        outputs[4].stdout
    );
    for output in &outputs {
        for secret in [&token, &refresh] {
            assert!(
                !output.stdout.contains(secret.as_str())
                    && !output.stderr.contains(secret.as_str())
            );
        }
    }
    let logs = std::fs::read_dir(env.path("cache/logs"))
        .into_iter()
        .flatten()
        .flatten();
    for log in logs {
        let text = std::fs::read_to_string(log.path()).unwrap_or_default();
        assert!(!text.contains(&token), "{}", log.path().display());
    }
    assert_eq!(
        run(&env, &["auth", "--logout", "secure"]).stdout,
        "signed out of secure\n"
    );
    assert_eq!(run(&env, &["secure", "whoami"]).code, 5);
}

#[test]
fn an_expiring_token_is_refreshed_once_however_many_processes_need_it() {
    let server = AuthServer::start();
    let env = setup(&server);
    server.control(Some(r#"{"expires_in": 2}"#));
    assert_eq!(run(&env, &["auth", "secure"]).code, 0);
    let first = stored(&env)["accessToken"].as_str().unwrap().to_string();
    // Within a minute of its end, a token is renewed before use: ten calls at once, one
    // refresh (the others wait for the lock, then read the new token).
    server.control(Some(r#"{"expires_in": 3600}"#));
    let runs: Vec<Run> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..10)
            .map(|_| scope.spawn(|| run(&env, &["secure", "whoami"])))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for run in &runs {
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, "signed in\n"),
            "{}",
            run.stderr
        );
    }
    assert_eq!(server.control(None)["refreshes"], 1);
    assert_ne!(stored(&env)["accessToken"].as_str().unwrap(), first);
    // A token the server refuses (it forgot it) is refreshed, and the call goes through.
    let mut doc = stored(&env);
    doc["accessToken"] = Value::String("tok-unknown".into());
    std::fs::write(token_file(&env), doc.to_string()).unwrap();
    let again = run(&env, &["secure", "whoami"]);
    assert_eq!(again.stdout, "signed in\n", "{}", again.stderr);
    assert_eq!(server.control(None)["refreshes"], 2);
}

#[test]
fn a_revoked_registration_or_a_tampered_answer_needs_a_new_sign_in() {
    let server = AuthServer::start();
    let env = setup(&server);
    assert_eq!(run(&env, &["auth", "secure"]).code, 0);
    // The server forgets every client: the refresh fails, and the call says how to fix it.
    server.control(Some(r#"{"revoke": true}"#));
    let mut doc = stored(&env);
    doc["expiresAt"] = Value::from(1);
    std::fs::write(token_file(&env), doc.to_string()).unwrap();
    let env = Test::with(env)
        .env("BROWSER", BROWSER)
        .args(&["secure", "whoami"])
        .status(5)
        .stderr_has("ferry auth secure")
        .run();
    // Signing in again registers anew.
    let registrations = server.control(None)["registrations"].as_u64().unwrap();
    assert_eq!(run(&env, &["auth", "secure"]).code, 0);
    assert_eq!(
        server.control(None)["registrations"].as_u64().unwrap(),
        registrations + 1
    );
    assert_eq!(run(&env, &["secure", "whoami"]).stdout, "signed in\n");
    // An answer whose state is not the request's is refused, and nothing is stored.
    server.control(Some(r#"{"tamper": "state"}"#));
    assert_eq!(run(&env, &["auth", "--logout", "secure"]).code, 0);
    let tampered = run(&env, &["auth", "secure"]);
    assert_eq!(tampered.code, 5, "{}", tampered.stderr);
    assert!(
        tampered.stderr.contains("(state); refused"),
        "{}",
        tampered.stderr
    );
    assert!(std::fs::read_dir(env.path("config/auth"))
        .unwrap()
        .flatten()
        .all(|e| e.path().extension().is_none_or(|x| x != "json")));
}

/// Issue 16, item 18: an authorization server, or resource metadata, at plain http on a host
/// that is not this machine's loopback is refused (exit 5) before anything is read from it,
/// and nothing is registered or stored. 0.0.0.0 reaches the fixture but is no loopback
/// address: it stands for any host reached over plain http, whose metadata here names
/// endpoints on loopback so that nothing else would stop the sign-in.
#[test]
fn an_issuer_or_resource_metadata_over_plain_http_is_refused() {
    let server = AuthServer::start();
    let env = setup(&server);
    let port = server.base.rsplit(':').next().unwrap();
    let elsewhere = format!("http://0.0.0.0:{port}");
    let hint = "hint: sign-in is read over https only (plain http only on this machine); tell the server's operator\n";
    let no_token = |env: &Env| {
        std::fs::read_dir(env.path("config/auth"))
            .into_iter()
            .flatten()
            .flatten()
            .all(|e| e.path().extension().is_none_or(|x| x != "json"))
    };
    server.control(Some(
        &serde_json::json!({ "issuer": elsewhere }).to_string(),
    ));
    let env = Test::with(env)
        .env("BROWSER", BROWSER)
        .args(&["auth", "secure"])
        .status(5)
        .stderr(&format!(
            "error: the authorization server {elsewhere} is not an https URL; refused\n{hint}"
        ))
        .run();
    assert!(no_token(&env));
    server.control(Some(
        &serde_json::json!({ "issuer": null, "metadata": elsewhere }).to_string(),
    ));
    let env = Test::with(env)
        .env("BROWSER", BROWSER)
        .args(&["auth", "secure"])
        .status(5)
        .stderr(&format!("error: the protected resource metadata {elsewhere}/.well-known/oauth-protected-resource/mcp is not an https URL; refused\n{hint}"))
        .run();
    assert!(no_token(&env));
    assert_eq!(server.control(None)["registrations"], 0);
    // The same server, its metadata and issuer on loopback, signs in.
    server.control(Some(r#"{"metadata": null}"#));
    let signed = run(&env, &["auth", "secure"]);
    assert_eq!(signed.code, 0, "{}", signed.stderr);
}

/// A sign-out or a new sign-in reaches a warm session at once: the daemon's connection reads
/// the token file again when it changed, as the next cold call would (issue 16, item 24).
#[test]
fn a_sign_out_or_a_new_sign_in_reaches_the_warm_session() {
    let server = AuthServer::start();
    let env = Env::warm();
    let url = format!("{}/mcp", server.base);
    assert_eq!(env.run(&["add", "secure", &url]).code, 0);
    assert_eq!(run(&env, &["auth", "secure"]).code, 0);
    let env = Test::with(env)
        .env("BROWSER", BROWSER)
        .args(&["secure", "whoami"])
        .stdout("signed in\n")
        .run();
    let env = Test::with(env)
        .env("BROWSER", BROWSER)
        .args(&["auth", "--logout", "secure"])
        .stdout("signed out of secure\n")
        .run();
    let signed_out = run(&env, &["secure", "whoami"]);
    assert_eq!(
        signed_out.code, 5,
        "the warm session kept the old token: {signed_out:?}"
    );
    let cold = run(&env, &["--no-daemon", "secure", "whoami"]);
    assert_eq!(
        (signed_out.stdout, signed_out.stderr),
        (cold.stdout, cold.stderr)
    );
    assert_eq!(run(&env, &["auth", "secure"]).code, 0);
    let again = run(&env, &["secure", "whoami"]);
    assert_eq!(again.stdout, "signed in\n", "{}", again.stderr);
}
