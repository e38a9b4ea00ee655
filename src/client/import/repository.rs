//! A repository's own MCP files, named by path to `ferry import`: they go through `ferry trust`,
//! never into the user's config, where their servers would start untrusted and with the user's
//! `${VAR}`s expanded into them.

use std::path::{Path, PathBuf};

/// The files hosts read from a project directory, relative to it; the first three ferry reads
/// in place once trusted ([`crate::client::config::PROJECT_FILES`]).
const REPOSITORY_FILES: [&str; 5] = [
    ".mcp.json",
    ".cursor/mcp.json",
    ".vscode/mcp.json",
    ".vscode/settings.json",
    ".codex/config.toml",
];

/// A repository's file, as `ferry import PATH` found it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepositoryFile {
    /// The file, absolute.
    pub path: PathBuf,
    /// The project directory it belongs to.
    pub project: PathBuf,
    /// Whether ferry reads it in place once trusted (otherwise its servers must move to the
    /// project's `.mcp.json` first).
    pub read_in_place: bool,
}

/// Whether `path` (absolute) is one of a project's MCP files outside the home directory
/// (`~/.cursor/mcp.json` and `~/.codex/config.toml` are the user's own).
pub fn repository_file(path: &Path, home: &Path) -> Option<RepositoryFile> {
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let home = std::fs::canonicalize(home).unwrap_or_else(|_| home.to_path_buf());
    REPOSITORY_FILES.iter().find_map(|relative| {
        let mut project = path.as_path();
        for _ in Path::new(relative).components() {
            project = project.parent()?;
        }
        if project.join(relative) != path || project == home {
            return None;
        }
        Some(RepositoryFile {
            path: path.clone(),
            project: project.to_path_buf(),
            read_in_place: crate::client::config::PROJECT_FILES.contains(relative),
        })
    })
}

impl RepositoryFile {
    /// What to run instead of importing it.
    pub fn hint(&self) -> String {
        if self.read_in_place {
            format!(
                "run `ferry trust {}`: ferry then reads its servers in place, in that repository",
                self.path.display()
            )
        } else {
            let mcp = self.project.join(".mcp.json");
            format!(
                "move the servers you want into {} and run `ferry trust {}`",
                mcp.display(),
                mcp.display()
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_projects_files_are_repository_files_and_the_home_directorys_are_not() {
        let home = Path::new("/nonexistent-home/u");
        let repo = Path::new("/nonexistent-src/repo");
        for relative in REPOSITORY_FILES {
            let found = repository_file(&repo.join(relative), home).unwrap();
            assert_eq!(found.project, repo);
            assert!(found.hint().contains("ferry trust /nonexistent-src/repo/"));
            assert!(
                repository_file(&home.join(relative), home).is_none(),
                "{relative}"
            );
        }
        assert!(repository_file(&repo.join("mcp.json"), home).is_none());
        assert!(repository_file(&repo.join("servers/claude.json"), home).is_none());
        assert!(repository_file(&repo.join("vscode/mcp.json"), home).is_none());
    }
}
