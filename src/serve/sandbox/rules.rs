//! From places to Landlock rules: each place opened as a descriptor (`O_PATH`), split around
//! the places that must stay out of reach, never following a link a command could have made.
//!
//! A grant that holds a hidden place (ferry's files in a root, the `.git` of a written place)
//! is split into grants of its entries; the entries are opened beneath their directory's
//! descriptor without following links, and the hidden places are matched both by path
//! (the place and all beneath it) and by identity (device and inode), so a link or a second
//! name cannot lead into one. A place under a root is reached from the root's descriptor,
//! opened when serving started, one component at a time: a component a command turned into
//! a link ends the walk, and the grant is not made.

use landlock::{AccessFs, BitFlags, PathBeneath, RulesetCreated, RulesetCreatedAttr};
use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// How deep a grant is split to leave a hidden place out.
const SPLIT_DEPTH: usize = 16;

/// The rules of one grant: each an opened place and what may be done beneath it.
pub type Rules = Vec<(OwnedFd, BitFlags<AccessFs>)>;

/// Places never granted, by path and by identity.
#[derive(Debug, Clone, Default)]
pub struct Hidden {
    paths: Vec<PathBuf>,
    ids: Vec<(u64, u64)>,
}

impl Hidden {
    /// The places (canonical where they exist), with the identities of those that exist.
    pub fn new(paths: Vec<PathBuf>) -> Hidden {
        let ids = paths
            .iter()
            .filter_map(|p| std::fs::symlink_metadata(p).ok())
            .map(|m| {
                use std::os::unix::fs::MetadataExt;
                (m.dev(), m.ino())
            })
            .collect();
        Hidden { paths, ids }
    }

    /// These places and one more.
    pub fn with(&self, path: PathBuf) -> Hidden {
        let mut paths = self.paths.clone();
        paths.push(path);
        Hidden::new(paths)
    }

    /// Whether `path` (whose identity is `id`) is hidden or inside a hidden place.
    pub fn holds(&self, path: &Path, id: Option<(u64, u64)>) -> bool {
        self.paths.iter().any(|h| path.starts_with(h)) || id.is_some_and(|i| self.ids.contains(&i))
    }

    /// Whether a hidden place lies strictly inside `path` (so a grant of it must be split).
    fn inside(&self, path: &Path) -> bool {
        self.paths.iter().any(|h| h.starts_with(path) && h != path)
    }
}

/// Adds rules to a ruleset.
pub fn add(ruleset: &mut RulesetCreated, rules: &Rules) -> Result<(), landlock::RulesetError> {
    for (fd, access) in rules {
        ruleset.add_rule(PathBeneath::new(fd.as_fd(), *access))?;
    }
    Ok(())
}

/// [`expand`], done once per place and access for the life of the process: for the places
/// that do not change while serving (the system, programs, devices, declared places), opened
/// when serving starts so that nothing a command does later can change what they name.
pub fn expanded_once(path: &Path, access: BitFlags<AccessFs>, hidden: &Hidden) -> Arc<Rules> {
    type Cache = Mutex<HashMap<(PathBuf, u64), Arc<Rules>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = (path.to_path_buf(), access.bits());
    let mut cache = cache.lock().unwrap_or_else(|e| e.into_inner());
    cache
        .entry(key)
        .or_insert_with(|| Arc::new(expand(path, access, hidden)))
        .clone()
}

/// The rules that grant `access` beneath `path` (followed, as a canonical path from the
/// manifest is), leaving out every hidden place. A place that does not exist grants nothing.
pub fn expand(path: &Path, access: BitFlags<AccessFs>, hidden: &Hidden) -> Rules {
    let mut rules = Vec::new();
    if let Some(fd) = open_at(None, path, true) {
        expand_open(fd, path, access, hidden, 0, &mut rules);
    }
    rules
}

/// The rules for `place`, a place under the root `root` (opened as `root_fd`), reached from
/// the root one component at a time without following links.
pub fn expand_under(
    root: &Path,
    root_fd: &OwnedFd,
    place: &Path,
    access: BitFlags<AccessFs>,
    hidden: &Hidden,
) -> Rules {
    let mut rules = Vec::new();
    let Ok(relative) = place.strip_prefix(root) else {
        return rules;
    };
    let Ok(mut fd) = root_fd.try_clone() else {
        return rules;
    };
    for component in relative.components() {
        let Component::Normal(name) = component else {
            return rules;
        };
        match open_at(Some(&fd), Path::new(name), false) {
            Some(next) => fd = next,
            None => return rules,
        }
    }
    expand_open(fd, place, access, hidden, 0, &mut rules);
    rules
}

/// Opens a place for a rule (`O_PATH`), beneath `dir` when given, following a final link
/// only when `follow` says so.
pub fn open_at(dir: Option<&OwnedFd>, name: &Path, follow: bool) -> Option<OwnedFd> {
    let name = std::ffi::CString::new(name.as_os_str().as_bytes()).ok()?;
    let mut flags = libc::O_PATH | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: name is NUL-terminated; the returned descriptor is new and owned here.
    let fd = unsafe { libc::openat(at, name.as_ptr(), flags) };
    // SAFETY: a descriptor the call just returned.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The file type bits and the identity (device, inode) of an open descriptor.
fn stat_of(fd: &OwnedFd) -> Option<(libc::mode_t, (u64, u64))> {
    // SAFETY: fstat writes into a zeroed stat it is given.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    let done = unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) };
    (done == 0).then_some((
        stat.st_mode & libc::S_IFMT,
        (stat.st_dev as u64, stat.st_ino as u64),
    ))
}

fn expand_open(
    fd: OwnedFd,
    path: &Path,
    access: BitFlags<AccessFs>,
    hidden: &Hidden,
    depth: usize,
    rules: &mut Rules,
) {
    let Some((kind, id)) = stat_of(&fd) else {
        return;
    };
    // A link is reached through its target's own grant; a hidden place not at all.
    if kind == libc::S_IFLNK || hidden.holds(path, Some(id)) {
        return;
    }
    let is_dir = kind == libc::S_IFDIR;
    if is_dir && hidden.inside(path) {
        if depth >= SPLIT_DEPTH {
            return; // too deep to split: grant less, never more
        }
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if let Some(child) = open_at(Some(&fd), Path::new(&name), false) {
                expand_open(child, &path.join(&name), access, hidden, depth + 1, rules);
            }
        }
        return;
    }
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(super::TARGET)
    };
    if !access.is_empty() {
        rules.push((fd, access));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_leaves_hidden_places_and_links_out() {
        let dir = std::env::temp_dir().join(format!("ferry-rules-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for sub in ["root/a", "root/secret/deep", "root/b"] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        std::fs::write(dir.join("root/file"), "x").unwrap();
        std::os::unix::fs::symlink(dir.join("root/secret"), dir.join("root/link")).unwrap();
        let root = std::fs::canonicalize(dir.join("root")).unwrap();
        let hidden = Hidden::new(vec![root.join("secret")]);
        let read = AccessFs::ReadFile | AccessFs::ReadDir;
        let rules = expand(&root, read, &hidden);
        // a, b, file: the secret and the link to it are left out.
        assert_eq!(rules.len(), 3, "{rules:?}");
        // Under the root, a component that is a link ends the walk: nothing granted.
        let root_fd = open_at(None, &root, true).unwrap();
        assert!(expand_under(&root, &root_fd, &root.join("link/deep"), read, &hidden).is_empty());
        assert_eq!(
            expand_under(&root, &root_fd, &root.join("a"), read, &hidden).len(),
            1
        );
        // A hidden place, and anything inside it, is never granted.
        assert!(expand(&root.join("secret/deep"), read, &hidden).is_empty());
        assert!(hidden.holds(&root.join("secret/deep/x"), None));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
