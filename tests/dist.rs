//! scripts/dist.sh, run once for every test here: the static binary's archive, the wheel, the
//! npm tarballs and the OCI image archive in target/dist/, each installed or unpacked offline
//! from there alone, as a user's package manager would, and its ferry run.

mod support;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use support::*;

const VERSION: &str = env!("CARGO_PKG_VERSION");

/// target/dist/, built by scripts/dist.sh on first use.
fn dist() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let output = Command::new(root.join("scripts/dist.sh"))
            .current_dir(root)
            .output()
            .unwrap();
        let said = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.status.success(), "scripts/dist.sh failed:\n{said}");
        eprintln!("{said}");
        root.join("target/dist")
    })
}

/// Runs a command to success and returns its stdout.
fn run(command: &mut Command) -> String {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{command:?}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The one file in `dir` whose name ends with `suffix`.
fn only(dir: &Path, suffix: &str) -> PathBuf {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    assert_eq!(found.len(), 1, "{suffix} in {}: {found:?}", dir.display());
    found[0].clone()
}

/// Checks a ferry binary from a package: it says its version and runs the demo (it serves
/// itself and calls its tools), with a home of its own.
fn runs(ferry: &Path, env: &Env) {
    let version = run(Command::new(ferry).arg("--version"));
    assert_eq!(version.trim(), format!("ferry {VERSION}"));
    let demo = run(Command::new(ferry)
        .arg("demo")
        .current_dir(env.path("work"))
        .env("HOME", env.path("home"))
        .env("FERRY_CONFIG_DIR", env.path("config"))
        .env("FERRY_CACHE_DIR", env.path("cache"))
        .env("FERRY_NO_DAEMON", "1"));
    assert!(demo.contains("$ ferry demo --tools"), "{demo}");
    assert!(demo.contains("word_count(path)"), "{demo}");
}

#[test]
fn the_archive_holds_a_static_binary_with_the_readme_and_licenses() {
    let env = Env::new();
    let archive = dist().join(format!("ferry-{VERSION}-x86_64-linux.tar.gz"));
    let listed = run(Command::new("tar").arg("-tzf").arg(&archive));
    let stem = format!("ferry-{VERSION}-x86_64-linux");
    let mut names: Vec<&str> = listed.lines().collect();
    names.sort();
    let expected: Vec<String> = ["", "LICENSE-APACHE", "LICENSE-MIT", "README.md", "ferry"]
        .iter()
        .map(|f| format!("{stem}/{f}"))
        .collect();
    assert_eq!(names, expected);
    run(Command::new("tar")
        .arg("-xzf")
        .arg(&archive)
        .arg("-C")
        .arg(env.path("work")));
    let ferry = env.path(&format!("work/{stem}/ferry"));
    let described = run(Command::new("file").arg("-b").arg(&ferry));
    assert!(
        described.contains("statically linked") || described.contains("static-pie linked"),
        "{described}"
    );
    assert!(!described.contains("interpreter"), "{described}");
    let ldd = Command::new("ldd").arg(&ferry).output().unwrap();
    let ldd = String::from_utf8_lossy(&ldd.stdout) + String::from_utf8_lossy(&ldd.stderr);
    assert!(
        ldd.contains("not a dynamic executable") || ldd.contains("statically linked"),
        "{ldd}"
    );
    runs(&ferry, &env);
}

#[test]
fn the_wheel_installs_offline_into_a_fresh_venv_and_runs() {
    let env = Env::new();
    let wheels = dist().join("wheel");
    let wheel = only(&wheels, ".whl");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!(
            "ferry_mcp-{VERSION}-py3-none-manylinux_2_17_x86_64."
        )),
        "{name}"
    );
    let venv = env.path("venv");
    run(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    run(Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg("--find-links")
        .arg(&wheels)
        .arg("ferry-mcp"));
    runs(&venv.join("bin/ferry"), &env);
    // What `uvx ferry-mcp` runs: the command named after the package starts ferry.
    let version = run(Command::new(venv.join("bin/ferry-mcp")).arg("--version"));
    assert_eq!(version.trim(), format!("ferry {VERSION}"));
    let shown = run(Command::new(venv.join("bin/pip")).args(["show", "ferry-mcp"]));
    assert!(shown.contains("License: MIT OR Apache-2.0"), "{shown}");
}

#[test]
fn the_npm_tarballs_install_offline_into_a_fresh_prefix_and_run() {
    let env = Env::new();
    let npm = dist().join("npm");
    let main = npm.join(format!("ferry-mcp-{VERSION}.tgz"));
    let platform = npm.join(format!("ferry-mcp-linux-x64-{VERSION}.tgz"));
    let prefix = env.path("npm");
    std::fs::create_dir_all(&prefix).unwrap();
    run(Command::new("npm")
        .args([
            "install",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--loglevel=error",
        ])
        .arg("--cache")
        .arg(env.path("npm-cache"))
        .arg("--prefix")
        .arg(&prefix)
        .arg(&main)
        .arg(&platform));
    let installed: Value = serde_json::from_str(
        &std::fs::read_to_string(prefix.join("node_modules/ferry-mcp/package.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        installed["optionalDependencies"]["ferry-mcp-linux-x64"],
        VERSION
    );
    assert_eq!(installed["mcpName"], "io.github.ferry-mcp/ferry");
    let described: Value = serde_json::from_str(
        &std::fs::read_to_string(prefix.join("node_modules/ferry-mcp-linux-x64/package.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(described["os"], serde_json::json!(["linux"]));
    assert_eq!(described["cpu"], serde_json::json!(["x64"]));
    // The bin links npx runs: node starts the platform package's binary.
    runs(&prefix.join("node_modules/.bin/ferry"), &env);
    let version = run(Command::new(prefix.join("node_modules/.bin/ferry-mcp")).arg("--version"));
    assert_eq!(version.trim(), format!("ferry {VERSION}"));
    // Its exit status passes through.
    let status = Command::new(prefix.join("node_modules/.bin/ferry"))
        .arg("--no-such-option")
        .output()
        .unwrap()
        .status;
    assert_eq!(status.code(), Some(2));
}

#[test]
fn the_oci_archive_names_ferry_and_its_label_and_its_binary_runs() {
    let env = Env::new();
    let archive = dist().join(format!("ferry-{VERSION}-oci.tar"));
    let reference = format!("oci-archive:{}", archive.display());
    let config: Value = serde_json::from_str(&run(Command::new("skopeo")
        .args(["inspect", "--config"])
        .arg(&reference)))
    .unwrap();
    assert_eq!(
        config["config"]["Entrypoint"],
        serde_json::json!(["/usr/local/bin/ferry"])
    );
    assert_eq!(
        config["config"]["Labels"]["io.modelcontextprotocol.server.name"],
        "io.github.ferry-mcp/ferry"
    );
    assert_eq!(config["config"]["User"], "65534:65534");
    // The image's layers, unpacked as a runtime would, hold a ferry that runs here.
    let copied = env.path("work/image");
    run(Command::new("skopeo")
        .arg("copy")
        .arg("--quiet")
        .arg(&reference)
        .arg(format!("dir:{}", copied.display())));
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(copied.join("manifest.json")).unwrap())
            .unwrap();
    let rootfs = env.path("work/rootfs");
    std::fs::create_dir_all(&rootfs).unwrap();
    for layer in manifest["layers"].as_array().unwrap() {
        let digest = layer["digest"].as_str().unwrap();
        let blob = copied.join(digest.trim_start_matches("sha256:"));
        run(Command::new("tar")
            .arg("-xf")
            .arg(&blob)
            .arg("-C")
            .arg(&rootfs)
            .arg("--no-same-owner"));
    }
    let tmp = std::fs::metadata(rootfs.join("tmp")).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&tmp.permissions()) & 0o7777,
        0o1777
    );
    runs(&rootfs.join("usr/local/bin/ferry"), &env);
}
