//! `ferry serve --manifest F --server-json`: the MCP Registry entry for a served manifest,
//! validated against the Registry's own 2025-12-11 schema (tests/fixtures/registry, checked
//! with Python's jsonschema from the fixtures' venv).

mod support;

use serde_json::Value;
use std::io::Write;
use std::process::Stdio;
use support::*;

/// The schema's errors for `entry` (none: an empty string).
fn schema_errors(entry: &str) -> String {
    let schema = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/registry/server.schema.json");
    let script = r#"
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
for error in validator.iter_errors(json.load(sys.stdin)):
    print("/".join(map(str, error.absolute_path)), error.message)
"#;
    let mut child = std::process::Command::new(venv_python())
        .args(["-c", script])
        .arg(&schema)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(entry.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success());
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn server_json_validates_against_the_registry_schema() {
    let env = Env::new();
    let manifest = serve_manifest();
    let run = env.run(&[
        "serve",
        "--manifest",
        &manifest,
        "--server-json",
        "--registry-name",
        "io.github.ferry-mcp/serve-test",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(schema_errors(&run.stdout), "");
    let entry: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(entry["name"], "io.github.ferry-mcp/serve-test");
    assert_eq!(entry["description"], "Test tools for ferry serve.");
    assert_eq!(entry["version"], env!("CARGO_PKG_VERSION"));
    let kinds: Vec<&str> = entry["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["registryType"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["npm", "pypi", "oci"]);
    // The names scripts/dist.sh builds under (tests/dist.rs installs them).
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(entry["packages"][0]["identifier"], "ferry-mcp");
    assert_eq!(entry["packages"][1]["identifier"], "ferry-mcp");
    assert_eq!(
        entry["packages"][2]["identifier"],
        format!("ghcr.io/ferry-mcp/ferry:{version}")
    );
    let canonical = std::fs::canonicalize(&manifest).unwrap();
    for package in entry["packages"].as_array().unwrap() {
        assert_eq!(package["transport"]["type"], "stdio");
        assert_eq!(package["packageArguments"][0]["value"], "serve");
        assert_eq!(package["packageArguments"][1]["name"], "--manifest");
    }
    assert_eq!(
        entry["packages"][0]["packageArguments"][1]["value"],
        canonical.display().to_string()
    );
    assert_eq!(
        entry["packages"][2]["packageArguments"][1]["value"],
        "/srv/ferry/serve.toml"
    );
    // A schema that accepts everything would pass the above: it refuses a broken entry.
    let mut broken = entry.clone();
    broken["description"] = Value::String("x".repeat(101));
    broken["name"] = Value::String("no slash".into());
    let errors = schema_errors(&broken.to_string());
    assert!(
        errors.contains("description") && errors.contains("name"),
        "{errors}"
    );
}

#[test]
fn a_long_description_is_cut_to_the_registrys_limit() {
    let env = Env::new();
    let long = "Read-only tools for one repository: its log, its diffs, its blame and its grep, for a model that reviews changes before they land.";
    env.write(
        "work/long.toml",
        &format!(
            "[server]\nname = \"my tools\"\ninstructions = \"{long}\"\n\n[[tools]]\nname = \"now\"\ndescription = \"The date.\"\ncommand = [\"date\"]\n"
        ),
    );
    let run = env.run(&["serve", "--manifest", "long.toml", "--server-json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("--registry-name"), "{}", run.stderr);
    assert_eq!(schema_errors(&run.stdout), "");
    let entry: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(entry["name"], "local.ferry/my-tools");
    let description = entry["description"].as_str().unwrap();
    assert!(description.chars().count() <= 100, "{description}");
    assert!(description.starts_with("Read-only tools for one repository"));
    assert!(description.ends_with("..."), "{description}");
}

#[test]
fn a_bad_registry_name_is_a_usage_error() {
    let env = Test::new()
        .args(&[
            "serve",
            "--manifest",
            &serve_manifest(),
            "--server-json",
            "--registry-name",
            "serve-test",
        ])
        .status(2)
        .stderr("error: --registry-name expects a reverse-DNS name such as io.github.OWNER/NAME, not \"serve-test\"\nhint: a namespace you can prove: io.github.OWNER (GitHub) or a domain you own, reversed\n")
        .run();
    let without = env.run(&["serve", "--server-json"]);
    assert_eq!(without.code, 2, "{}", without.stderr);
    assert!(without.stderr.contains("--manifest"), "{}", without.stderr);
}
