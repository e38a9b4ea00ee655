//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! tests/fixtures/package.json, run on the Node 22 that the `node` package brings) against
//! `ferry serve --http`: with tests/fixtures/conformance.toml, every scenario of both
//! requirement sets passes except those listed, with reasons, in
//! tests/fixtures/conformance-expected-*.yaml (the suite itself fails the run on any other
//! failure, and on a listed one that starts to pass); in quick mode (`--cli echo`), the
//! protocol scenarios pass.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::*;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn node22() -> PathBuf {
    let node = fixtures().join("node_modules/node/bin/node");
    assert!(
        node.exists(),
        "{} is missing: run tests/fixtures/setup.sh",
        node.display()
    );
    node
}

fn suite() -> PathBuf {
    fixtures().join("node_modules/@modelcontextprotocol/conformance/dist/index.js")
}

/// Runs the suite with `args`; panics with its summary unless it exits 0.
fn run_suite(env: &Env, url: &str, args: &[&str]) {
    let out = env.path(&format!("conformance-{}", args.join("-").replace('/', "_")));
    let output = Command::new(node22())
        .arg(suite())
        .args(["server", "--url", url])
        .args(args)
        .arg("-o")
        .arg(&out)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let summary = stdout
        .find("=== SUMMARY ===")
        .map_or(&stdout[..], |i| &stdout[i..]);
    assert!(
        output.status.success(),
        "conformance {args:?} failed:\n{summary}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn expected(name: &str) -> String {
    fixtures().join(name).display().to_string()
}

#[test]
fn the_manifest_passes_both_requirement_sets_but_for_what_no_command_can_express() {
    let env = Env::new();
    // The suite sends no bearer token: the loopback-only opt-out, as a person would use it.
    let server = HttpServed::start(
        &env,
        &[
            "--manifest",
            &fixtures().join("conformance.toml").display().to_string(),
            "--no-token",
        ],
    );
    for version in ["2025-11-25", "2026-07-28"] {
        let baseline = expected(&format!("conformance-expected-{version}.yaml"));
        run_suite(
            &env,
            &server.url,
            &["--requirements", version, "--expected-failures", &baseline],
        );
    }
}

/// The protocol scenarios: what any provider of serve must pass.
fn protocol_scenarios(env: &Env, url: &str) {
    let baseline = expected("conformance-quick-expected.yaml");
    let scenarios = [
        ("2025-11-25", "server-initialize"),
        ("2025-11-25", "ping"),
        ("2025-11-25", "logging-set-level"),
        ("2025-11-25", "tools-list"),
        ("2025-11-25", "server-sse-multiple-streams"),
        ("2025-11-25", "dns-rebinding-protection"),
        ("2026-07-28", "server-stateless"),
        ("2026-07-28", "tools-list"),
        ("2026-07-28", "server-sse-multiple-streams"),
        ("2026-07-28", "dns-rebinding-protection"),
    ];
    for (version, scenario) in scenarios {
        let mut args = vec!["--scenario", scenario, "--spec-version", version];
        if scenario == "server-stateless" {
            args.extend_from_slice(&["--expected-failures", &baseline]);
        }
        run_suite(env, url, &args);
    }
}

#[test]
fn quick_mode_passes_the_protocol_scenarios() {
    let env = Env::new();
    let server = HttpServed::start(&env, &["--cli", "echo", "--no-token"]);
    protocol_scenarios(&env, &server.url);
}

#[test]
fn the_proxy_passes_the_protocol_scenarios() {
    let env = Env::new();
    env.write(
        "config/servers.json",
        &serde_json::json!({"mcpServers": {"ev": {"command": "sh", "args": ["-c", everything()]}}})
            .to_string(),
    );
    assert_eq!(env.run(&["ev"]).code, 0);
    let server = HttpServed::start(&env, &["--servers", "--no-token"]);
    protocol_scenarios(&env, &server.url);
}

/// The suite's client scenarios, ferry as the client: tests/fixtures/conformance_client.sh
/// maps each scenario to the ferry commands a person would type (`ferry auth` when a server
/// asks for sign-in, through a "browser" that follows the redirect to ferry's listener), run
/// as a person runs them: through the daemon, the protocol version found out, not pinned;
/// then once more with the daemon off. Every scored scenario of both revisions passes, both
/// ways, the sign-in ones included.
#[test]
fn the_official_suite_drives_ferry_as_a_client() {
    let env = Env::new();
    let runs = [
        ("2025-11-25", "warm"),
        ("2026-07-28", "warm"),
        ("2025-11-25", "cold"),
        ("2026-07-28", "cold"),
    ];
    for (version, path) in runs {
        let out = env.path(&format!("client-{version}-{path}"));
        let mut command = Command::new(node22());
        command
            .arg(suite())
            .arg("client")
            .arg("--command")
            .arg(fixtures().join("conformance_client.sh"))
            .args(["--requirements", version, "-o"])
            .arg(&out)
            .env("FERRY", FERRY)
            .env_remove("FERRY_PROTOCOL_VERSION")
            .env_remove("FERRY_RUNTIME_DIR")
            .current_dir(env.path("work"))
            .stdin(Stdio::null());
        if path == "cold" {
            command.env("FERRY_NO_DAEMON", "1");
        } else {
            command.env_remove("FERRY_NO_DAEMON");
        }
        let output = command.output().unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(
            output.status.success(),
            "client scenarios at {version} ({path}) failed:\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
        // Every failing scenario is one the revision does not score (the extensions).
        let (summary, unscored) = stdout.split_once("Not scored").unwrap_or((&stdout, ""));
        // Of those, the ones ferry implements pass too: private_key_jwt, DPoP, and schemas
        // kept exactly as the server gave them.
        for extension in [
            "auth/client-credentials-jwt",
            "auth/dpop",
            "auth/dpop-nonce",
            "json-schema-2020-12-preservation",
        ] {
            assert!(
                !stdout.contains(&format!("✗ {extension}")),
                "{extension} failed at {version} ({path}):\n{stdout}"
            );
        }
        for line in summary.lines().filter(|l| l.starts_with('✗')) {
            let name = line[3..].split(':').next().unwrap_or("").trim();
            assert!(
                unscored.contains(&format!("✗ {name} (")),
                "{name} failed at {version} ({path}):\n{stdout}"
            );
        }
    }
}
