//! `ferry serve --manifest F --server-json`: the MCP Registry's `server.json` (schema
//! 2025-12-11) for a served manifest: ferry's npm, PyPI and OCI packages, each run with
//! `serve --manifest F` over stdio. scripts/dist.sh builds those packages under these names.

use crate::manifest::Manifest;
use crate::{Error, Result};
use serde_json::{json, Value};

/// The schema the output follows.
pub const SCHEMA: &str =
    "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";
/// ferry's package on npm (`npx -y ferry-mcp`) and on PyPI (`uvx ferry-mcp`).
pub const PACKAGE: &str = "ferry-mcp";
/// ferry's container image, without its tag.
pub const IMAGE: &str = "ghcr.io/ferry-mcp/ferry";
/// Where the container expects the manifest's directory.
const CONTAINER_DIR: &str = "/srv/ferry";
/// The Registry's longest description.
const MAX_DESCRIPTION: usize = 100;

/// The `server.json` for `manifest`, named `name` (reverse-DNS `NAMESPACE/NAME`) or a local
/// name when none is given.
pub fn server_json(manifest: &Manifest, name: Option<&str>) -> Result<Value> {
    let name = match name {
        Some(name) => {
            check_name(name)?;
            name.to_string()
        }
        None => format!("local.ferry/{}", slug(&manifest.server.name)),
    };
    let version = env!("CARGO_PKG_VERSION");
    let file = std::fs::canonicalize(&manifest.file).unwrap_or_else(|_| manifest.file.clone());
    let path = file.display().to_string();
    let dir = file
        .parent()
        .map(|d| d.display().to_string())
        .unwrap_or_default();
    let file_name = file
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let serve = |manifest: &str| {
        json!([
            {"type": "positional", "value": "serve"},
            {"type": "named", "name": "--manifest", "value": manifest},
        ])
    };
    // npm and PyPI carry the same binary, run the same way.
    let package = |registry: &str, base: &str, runtime: &str| {
        json!({
            "registryType": registry,
            "registryBaseUrl": base,
            "identifier": PACKAGE,
            "version": version,
            "runtimeHint": runtime,
            "transport": {"type": "stdio"},
            "packageArguments": serve(&path),
        })
    };
    let tools: Vec<&str> = manifest.tools.iter().map(|t| t.name.as_str()).collect();
    Ok(json!({
        "$schema": SCHEMA,
        "name": name,
        "title": clip(&manifest.server.name, MAX_DESCRIPTION),
        "description": description(manifest),
        "version": version,
        "packages": [
            package("npm", "https://registry.npmjs.org", "npx"),
            package("pypi", "https://pypi.org", "uvx"),
            {
                "registryType": "oci",
                "identifier": format!("{IMAGE}:{version}"),
                "runtimeHint": "docker",
                "transport": {"type": "stdio"},
                "runtimeArguments": [
                    {
                        "type": "named",
                        "name": "--volume",
                        "value": format!("{{manifest_dir}}:{CONTAINER_DIR}:ro"),
                        "variables": {
                            "manifest_dir": {
                                "description": "The directory holding the manifest and its roots",
                                "format": "filepath",
                                "isRequired": true,
                                "default": dir,
                            }
                        }
                    }
                ],
                "packageArguments": serve(&format!("{CONTAINER_DIR}/{file_name}")),
            }
        ],
        "_meta": {
            "io.modelcontextprotocol.registry/publisher-provided": {
                "tool": "ferry",
                "tools": tools,
            }
        }
    }))
}

/// A name the Registry accepts: `NAMESPACE/NAME`, the namespace in reverse-DNS form.
fn check_name(name: &str) -> Result<()> {
    let valid = name.split_once('/').is_some_and(|(namespace, server)| {
        namespace.contains('.')
            && namespace
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-')
            && !server.is_empty()
            && server
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    }) && (3..=200).contains(&name.len());
    if valid {
        return Ok(());
    }
    Err(Error::usage(format!(
        "--registry-name expects a reverse-DNS name such as io.github.OWNER/NAME, not {name:?}"
    ))
    .with_hint("a namespace you can prove: io.github.OWNER (GitHub) or a domain you own, reversed"))
}

/// The server's name as a Registry name's second half.
fn slug(name: &str) -> String {
    let slug: String = name
        .chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '-' => c,
            _ => '-',
        })
        .collect();
    match slug.trim_matches('-') {
        "" => "tools".to_string(),
        trimmed => trimmed.to_string(),
    }
}

/// At most 100 characters: the manifest's instructions (first line), or the tools it serves.
fn description(manifest: &Manifest) -> String {
    let given = manifest
        .server
        .instructions
        .as_deref()
        .and_then(|i| i.lines().map(str::trim).find(|l| !l.is_empty()));
    match given {
        Some(line) => clip(line, MAX_DESCRIPTION),
        None => {
            let names: Vec<&str> = manifest.tools.iter().map(|t| t.name.as_str()).collect();
            clip(
                &format!("Command-line tools over MCP: {}", names.join(", ")),
                MAX_DESCRIPTION,
            )
        }
    }
}

/// `text` cut to at most `max` characters, at a word when it is cut, with "...".
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let kept: String = text.chars().take(max - 3).collect();
    let cut = match kept.rfind(' ') {
        Some(at) if at > max / 2 => &kept[..at],
        _ => kept.as_str(),
    };
    format!("{}...", cut.trim_end_matches([' ', ',', ';', ':']))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_text_is_clipped_at_a_word() {
        let long = "word ".repeat(40);
        let clipped = clip(&long, 100);
        assert!(clipped.chars().count() <= 100, "{clipped}");
        assert!(clipped.ends_with("word..."), "{clipped}");
        assert_eq!(clip("short", 100), "short");
        let unbroken = "é".repeat(150);
        assert_eq!(clip(&unbroken, 100).chars().count(), 100);
    }

    #[test]
    fn registry_names_are_checked() {
        for good in ["io.github.owner/tools", "com.example/my_tools-2.0"] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in [
            "tools",
            "io.github.owner/",
            "owner/tools",
            "io.github.o/a/b",
            "io github/x",
        ] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
        assert_eq!(slug("my tools!"), "my-tools");
        assert_eq!(slug("***"), "tools");
    }
}
