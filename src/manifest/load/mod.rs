//! Loading a manifest: the TOML read line by line, every key checked against what its table
//! takes, and every rule of the format enforced, so a bad manifest is refused with its file,
//! line and reason and a loaded one needs no further checks.
//!
//! This file reads the manifest's nodes and its `[server]` table; `tools` reads `[[tools]]`,
//! `command` their command templates, `params` the parameters of tools, templates and
//! prompts, `resources` the resources and resource templates, and `prompts` the prompts.

use super::model::*;
use super::toml_tree::{self, Node, NodeValue};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod command;
mod params;
mod prompts;
mod resources;
mod tools;

/// Reads a manifest file.
pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ManifestError {
        file: shown.clone(),
        line: 1,
        reason: format!("cannot read it: {e}"),
    })?;
    parse(&text, path)
}

/// Parses a manifest's text; relative roots and files are relative to `path`'s directory.
pub fn parse(text: &str, path: &Path) -> Result<Manifest, ManifestError> {
    let file = path.display().to_string();
    let fail = |line: usize, reason: String| ManifestError {
        file: file.clone(),
        line,
        reason,
    };
    let tree = toml_tree::parse(text)
        .map_err(|(line, why)| fail(line, format!("not valid TOML: {why}")))?;
    let reader = Reader { file: file.clone() };
    reader.keys(
        &tree,
        &[
            "server",
            "tools",
            "resources",
            "resource_templates",
            "prompts",
        ],
        "the manifest",
    )?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."));
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("ferry")
        .to_string();
    let server = reader.server(tree.get("server"), &dir, &stem)?;
    let mut manifest = Manifest {
        file: path.to_path_buf(),
        server,
        tools: Vec::new(),
        resources: Vec::new(),
        templates: Vec::new(),
        prompts: Vec::new(),
    };
    for node in reader.tables(tree.get("tools"), "tools")? {
        let tool = reader.tool(node, &manifest.server)?;
        if manifest.tools.iter().any(|t| t.name == tool.name) {
            return Err(fail(
                node.line,
                format!("a second tool named {:?}", tool.name),
            ));
        }
        manifest.tools.push(tool);
    }
    for node in reader.tables(tree.get("resources"), "resources")? {
        let resource = reader.resource(node, &manifest.server)?;
        if manifest.resources.iter().any(|r| r.uri == resource.uri) {
            return Err(fail(
                node.line,
                format!("a second resource {:?}", resource.uri),
            ));
        }
        manifest.resources.push(resource);
    }
    for node in reader.tables(tree.get("resource_templates"), "resource_templates")? {
        manifest
            .templates
            .push(reader.template(node, &manifest.server)?);
    }
    for node in reader.tables(tree.get("prompts"), "prompts")? {
        let prompt = reader.prompt(node, &manifest)?;
        if manifest.prompts.iter().any(|p| p.name == prompt.name) {
            return Err(fail(
                node.line,
                format!("a second prompt named {:?}", prompt.name),
            ));
        }
        manifest.prompts.push(prompt);
    }
    if manifest.tools.is_empty()
        && manifest.resources.is_empty()
        && manifest.templates.is_empty()
        && manifest.prompts.is_empty()
    {
        return Err(fail(
            1,
            "it declares no [[tools]], [[resources]], [[resource_templates]] or [[prompts]]".into(),
        ));
    }
    Ok(manifest)
}

/// Reads nodes, naming the file and line of anything wrong.
struct Reader {
    file: String,
}

impl Reader {
    fn fail(&self, line: usize, reason: impl std::fmt::Display) -> ManifestError {
        ManifestError {
            file: self.file.clone(),
            line,
            reason: reason.to_string(),
        }
    }

    /// Refuses keys a table does not take (with the nearest known one).
    fn keys(&self, node: &Node, known: &[&str], what: &str) -> Result<(), ManifestError> {
        if !matches!(node.value, NodeValue::Table(_)) {
            return Err(self.fail(
                node.line,
                format!("{what} must be a table, not {}", node.kind()),
            ));
        }
        for (key, value) in node.entries() {
            if !known.contains(&key.as_str()) {
                let near = crate::words::closest(key, known.iter().copied())
                    .map(|k| format!(" (did you mean {k:?}?)"))
                    .unwrap_or_default();
                return Err(self.fail(
                    value.line,
                    format!(
                        "{what} has no key {key:?}{near}; it takes {}",
                        known.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    fn tables<'a>(
        &self,
        node: Option<&'a Node>,
        what: &str,
    ) -> Result<Vec<&'a Node>, ManifestError> {
        match node {
            None => Ok(Vec::new()),
            Some(Node {
                value: NodeValue::Array(items),
                ..
            }) => {
                for item in items {
                    if !matches!(item.value, NodeValue::Table(_)) {
                        return Err(self.fail(
                            item.line,
                            format!("each of {what} must be a table ([[{what}]])"),
                        ));
                    }
                }
                Ok(items.iter().collect())
            }
            Some(other) => Err(self.fail(
                other.line,
                format!("{what} must be written [[{what}]], an array of tables"),
            )),
        }
    }

    fn string(&self, node: &Node, what: &str) -> Result<String, ManifestError> {
        match &node.value {
            NodeValue::Str(s) if s.contains('\0') => {
                Err(self.fail(node.line, format!("{what} contains a NUL byte")))
            }
            NodeValue::Str(s) => Ok(s.clone()),
            _ => Err(self.fail(
                node.line,
                format!("{what} must be a string, not {}", node.kind()),
            )),
        }
    }

    fn opt_string(
        &self,
        table: &Node,
        key: &str,
        what: &str,
    ) -> Result<Option<String>, ManifestError> {
        table
            .get(key)
            .map(|n| self.string(n, &format!("{what}'s {key}")))
            .transpose()
    }

    fn required_string(
        &self,
        table: &Node,
        key: &str,
        what: &str,
    ) -> Result<String, ManifestError> {
        match table.get(key) {
            Some(node) => self.string(node, &format!("{what}'s {key}")),
            None => Err(self.fail(table.line, format!("{what} needs a {key}"))),
        }
    }

    fn number(&self, node: &Node, what: &str) -> Result<f64, ManifestError> {
        match node.value {
            NodeValue::Int(i) => Ok(i as f64),
            NodeValue::Float(f) if f.is_finite() => Ok(f),
            _ => Err(self.fail(
                node.line,
                format!("{what} must be a number, not {}", node.kind()),
            )),
        }
    }

    fn count(&self, node: &Node, what: &str) -> Result<u64, ManifestError> {
        match node.value {
            NodeValue::Int(i) if i >= 0 => Ok(i as u64),
            _ => Err(self.fail(
                node.line,
                format!("{what} must be a whole number of 0 or more"),
            )),
        }
    }

    fn boolean(&self, node: &Node, what: &str) -> Result<bool, ManifestError> {
        match node.value {
            NodeValue::Bool(b) => Ok(b),
            _ => Err(self.fail(
                node.line,
                format!("{what} must be true or false, not {}", node.kind()),
            )),
        }
    }

    fn seconds(&self, node: &Node, what: &str) -> Result<Duration, ManifestError> {
        let secs = self.number(node, what)?;
        if secs <= 0.0 || secs > crate::words::MAX_TIMEOUT_SECS {
            return Err(self.fail(
                node.line,
                format!("{what} must be a number of seconds above 0 and at most a week"),
            ));
        }
        Ok(Duration::from_secs_f64(secs))
    }

    fn server(
        &self,
        node: Option<&Node>,
        dir: &Path,
        stem: &str,
    ) -> Result<ServerDef, ManifestError> {
        let empty = Node {
            line: 1,
            value: NodeValue::Table(Vec::new()),
        };
        let node = node.unwrap_or(&empty);
        self.keys(node, &SERVER_KEYS, "[server]")?;
        let name = self
            .opt_string(node, "name", "[server]")?
            .unwrap_or_else(|| stem.to_string());
        let mut roots = Vec::new();
        match node.get("roots") {
            None => roots.push(canonical_root(dir).map_err(|why| self.fail(node.line, why))?),
            Some(Node {
                value: NodeValue::Array(items),
                line,
            }) => {
                if items.is_empty() {
                    return Err(self.fail(*line, "roots must name at least one directory"));
                }
                for item in items {
                    let text = self.string(item, "a root")?;
                    roots.push(
                        canonical_root(&dir.join(&text))
                            .map_err(|why| self.fail(item.line, why))?,
                    );
                }
            }
            Some(other) => {
                return Err(self.fail(other.line, "roots must be an array of directories"))
            }
        }
        // Never empty: no `roots` is the manifest's directory, and `[]` is refused above.
        let mut roots = roots.into_iter();
        let Some(first) = roots.next() else {
            return Err(self.fail(node.line, "roots must name at least one directory"));
        };
        let roots = Roots::new(first, roots);
        let env = match node.get("env") {
            None => Vec::new(),
            Some(Node {
                value: NodeValue::Array(items),
                ..
            }) => items
                .iter()
                .map(|i| self.string(i, "an env glob"))
                .collect::<Result<_, _>>()?,
            Some(other) => {
                return Err(self.fail(other.line, "env must be an array of variable names (globs)"))
            }
        };
        let timeout = match node.get("timeout") {
            Some(n) => self.seconds(n, "timeout")?,
            None => DEFAULT_TIMEOUT,
        };
        let max_output = match node.get("max_output") {
            Some(n) => match self.count(n, "max_output")? {
                0 => return Err(self.fail(n.line, "max_output must be at least 1 byte")),
                bytes => bytes as usize,
            },
            None => DEFAULT_MAX_OUTPUT,
        };
        let concurrency = match node.get("concurrency") {
            Some(n) => match self.count(n, "concurrency")? {
                0 => return Err(self.fail(n.line, "concurrency must be at least 1")),
                c => c as usize,
            },
            None => DEFAULT_CONCURRENCY,
        };
        Ok(ServerDef {
            name,
            instructions: self.opt_string(node, "instructions", "[server]")?,
            roots,
            env,
            timeout,
            max_output,
            concurrency,
        })
    }
}

/// A place a manifest names: `~` and `~/...` under the home directory, an absolute path as it
/// is, anything else relative to `root`.
fn place(text: &str, root: &Path) -> PathBuf {
    let home = crate::paths::home_dir();
    match text {
        "~" => home,
        _ => match text.strip_prefix("~/") {
            Some(rest) => home.join(rest),
            None => root.join(text),
        },
    }
}

/// Why a directory cannot be a root.
#[derive(Debug, thiserror::Error)]
enum RootError {
    #[error("root {} cannot be used: {source}", dir.display())]
    Unusable {
        dir: PathBuf,
        source: std::io::Error,
    },
    #[error("root {} is not a directory", dir.display())]
    NotDirectory { dir: PathBuf },
}

fn canonical_root(dir: &Path) -> Result<PathBuf, RootError> {
    let path = std::fs::canonicalize(dir).map_err(|source| RootError::Unusable {
        dir: dir.to_path_buf(),
        source,
    })?;
    if !path.is_dir() {
        return Err(RootError::NotDirectory {
            dir: dir.to_path_buf(),
        });
    }
    Ok(path)
}
