//! The kernel sandbox every command `ferry serve` runs is held in (DESIGN.md section 4,
//! "Confinement"). Option tables and path checks give clear errors; this is what holds when a
//! table misses a case: an option nobody listed, a CLI nobody thought of, a repository's own
//! configuration that names a program.
//!
//! A [`Policy`] says what one command may read, write, run and reach; it is resolved once,
//! when serving starts. For each call, [`Policy::prepare`] builds a Landlock ruleset (files,
//! programs, TCP, signals and abstract sockets, as far as the kernel's ABI goes) and picks the
//! seccomp filter (socket families, and the calls that would step around Landlock) in the
//! parent; [`Prepared::enter`] applies both in the child between fork and exec, with
//! no_new_privs and no capabilities, using only async-signal-safe calls.

mod explain;
mod programs;
mod seccomp;

pub use explain::{explain_denial, render_kernel, render_policy};

use crate::manifest::Permissions;
use landlock::{
    Access, AccessFs, AccessNet, BitFlags, PathBeneath, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, Scope, ABI,
};
use std::collections::HashMap;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// The newest Landlock ABI this build knows; an older kernel enforces what it can.
const TARGET: ABI = ABI::V10;

/// Directories every command may read: programs, libraries, system configuration, and the
/// kernel's views of processes and devices (other processes' private parts stay closed:
/// Landlock refuses to let a confined process inspect one outside its domain).
const SYSTEM_READS: [&str; 10] = [
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/sys",
];
/// Devices every command may read and write.
const DEVICES: [&str; 3] = ["/dev/null", "/dev/zero", "/dev/full"];
/// Devices every command may read.
const RANDOM: [&str; 2] = ["/dev/random", "/dev/urandom"];
/// How deep a grant is split to leave a hidden place out.
const SPLIT_DEPTH: usize = 16;

/// What this kernel enforces, probed once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kernel {
    /// The Landlock ABI (0: none).
    pub landlock: i32,
    /// Whether the seccomp filter can be loaded.
    pub seccomp: bool,
}

impl Kernel {
    /// This kernel's support (asked once per process).
    pub fn probe() -> Kernel {
        static KERNEL: OnceLock<Kernel> = OnceLock::new();
        *KERNEL.get_or_init(|| {
            // SAFETY: LANDLOCK_CREATE_RULESET_VERSION with no attributes only asks the ABI.
            let abi = unsafe {
                libc::syscall(
                    libc::SYS_landlock_create_ruleset,
                    std::ptr::null::<u8>(),
                    0usize,
                    1u32,
                )
            };
            Kernel {
                landlock: abi.max(0) as i32,
                seccomp: seccomp::available(),
            }
        })
    }

    /// What a confined command could still do here that the policy forbids; empty when the
    /// kernel enforces all of it.
    pub fn unenforced(&self) -> Vec<&'static str> {
        let mut gaps = Vec::new();
        if self.landlock < 1 {
            gaps.push("reads, writes and the programs a command runs (no Landlock)");
        } else {
            if self.landlock < 3 {
                gaps.push("truncating files it may only read");
            }
            if self.landlock < 6 {
                gaps.push("signals to processes outside the call");
            }
        }
        if !self.seccomp {
            gaps.push(if self.landlock < 4 {
                "network access"
            } else {
                "UDP and Unix sockets"
            });
        }
        gaps
    }

    /// Whether reads, writes and programs run are enforced (the rules quick mode needs).
    pub fn confines_files(&self) -> bool {
        self.landlock >= 1
    }

    /// One line: what enforces the policy here.
    pub fn describe(&self) -> String {
        let landlock = match self.landlock {
            0 => "no Landlock".to_string(),
            abi => format!("Landlock ABI {abi}"),
        };
        let seccomp = if self.seccomp {
            "seccomp"
        } else {
            "no seccomp"
        };
        format!("{landlock}, {seccomp}")
    }
}

/// A place a policy names, and why it is there (for `--check-sandbox`).
#[derive(Debug, Clone, PartialEq)]
pub struct Place {
    pub path: PathBuf,
    pub why: &'static str,
}

fn place(path: impl Into<PathBuf>, why: &'static str) -> Place {
    Place {
        path: path.into(),
        why,
    }
}

/// What one command may touch.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Read and list.
    pub reads: Vec<Place>,
    /// Read, write, create and remove (each place's `.git` left read-only unless named).
    pub writes: Vec<Place>,
    /// Programs it may run (files, or directories of programs).
    pub exec: Vec<Place>,
    pub network: bool,
    /// Never reachable, whatever grant holds them: ferry's own files, and (serving as root)
    /// what in /etc not every account may read.
    pub hidden: Vec<Place>,
    /// Whether the command may see anything of the home directory; if not, its `HOME` is its
    /// temporary directory (a program that reads `~/.config` finds nothing there, instead of
    /// failing on a denial).
    pub keeps_home: bool,
}

impl Policy {
    /// The policy of a command whose program is `program` (an absolute path), that may write
    /// `writes` (already decided: nothing, the roots, or what the tool declares) and what its
    /// `permissions` add. Programs named in `exec` are found now, on `path` from the first root.
    pub fn new(
        program: &Path,
        permissions: &Permissions,
        writes: &[PathBuf],
        roots: &[PathBuf],
        path: Option<&std::ffi::OsStr>,
    ) -> Result<Policy, String> {
        let home = canonical_as_far_as_it_exists(&crate::paths::home_dir());
        let cwd = &roots[0];
        let mut reads: Vec<Place> = Vec::new();
        for system in SYSTEM_READS
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
        {
            push(&mut reads, place(system, "system"));
        }
        for root in roots {
            push(&mut reads, place(root, "root"));
        }
        let mut exec = Vec::new();
        let mut programs = vec![program.to_path_buf()];
        for name in &permissions.exec {
            let found = if name.contains('/') {
                std::fs::canonicalize(cwd.join(name)).ok()
            } else {
                which::which_in(name, path, cwd).ok()
            };
            match found {
                Some(found) => programs.push(found),
                None => return Err(format!("exec names {name:?}, which is not found")),
            }
        }
        for (i, program) in programs.iter().enumerate() {
            let why = if i == 0 { "program" } else { "declared" };
            // The program itself first, then what runs it (interpreters, the loader).
            for (j, found) in programs::runnable(program, path, cwd)
                .into_iter()
                .enumerate()
            {
                let why = if j == 0 { why } else { "what runs it" };
                if !found.file.is_dir() {
                    for at in [&found.named, &found.file] {
                        if let Some(tree) = programs::install_tree(at, &home) {
                            push(&mut reads, place(tree, "install tree"));
                        }
                    }
                }
                push(&mut exec, place(found.file, why));
            }
            for dir in programs::helper_dirs(program) {
                push(&mut exec, place(dir, "helpers"));
            }
        }
        // `ferry ask`: the serving binary, run by the command to talk back to the client.
        if let Ok(ferry) = std::env::current_exe().and_then(std::fs::canonicalize) {
            for found in programs::runnable(&ferry, None, cwd) {
                push(&mut exec, place(found.file, "ferry"));
            }
        }
        for extra in &permissions.reads {
            push(&mut reads, place(extra, "declared"));
        }
        let writes = writes
            .iter()
            .map(|w| {
                let why = if roots.contains(w) {
                    "root"
                } else {
                    "declared"
                };
                place(w, why)
            })
            .collect();
        // The home directory is the command's when a root holds it, or the manifest names
        // something in it to read.
        let keeps_home = permissions.reads.iter().any(|r| r.starts_with(&home))
            || roots.iter().any(|r| home.starts_with(r));
        Ok(Policy {
            reads,
            writes,
            exec,
            network: permissions.network,
            hidden: hidden_places(&home),
            keeps_home,
        })
    }

    /// The ruleset and filter of one call whose private temporary directory is `tmp`.
    pub fn prepare(&self, tmp: &Path) -> std::io::Result<Prepared> {
        let kernel = Kernel::probe();
        static FILTERS: OnceLock<[Option<seccomp::Filter>; 2]> = OnceLock::new();
        let filters =
            FILTERS.get_or_init(|| [seccomp::Filter::new(false), seccomp::Filter::new(true)]);
        let filter = if kernel.seccomp {
            filters[self.network as usize].as_ref()
        } else {
            None
        };
        let ruleset = if kernel.confines_files() {
            self.ruleset(tmp).map_err(std::io::Error::other)?
        } else {
            None
        };
        Ok(Prepared { ruleset, filter })
    }

    fn ruleset(&self, tmp: &Path) -> Result<Option<OwnedFd>, String> {
        let text = |e: landlock::RulesetError| format!("the sandbox could not be built: {e}");
        let mut attr = Ruleset::default()
            .handle_access(AccessFs::from_all(TARGET))
            .map_err(text)?;
        if !self.network {
            attr = attr
                .handle_access(AccessNet::from_all(TARGET))
                .map_err(text)?;
        }
        let mut ruleset = attr
            .scope(Scope::from_all(TARGET))
            .map_err(text)?
            .create()
            .map_err(text)?;
        let read = AccessFs::ReadFile | AccessFs::ReadDir;
        let run = read | AccessFs::Execute;
        let write = read
            | AccessFs::WriteFile
            | AccessFs::RemoveDir
            | AccessFs::RemoveFile
            | AccessFs::MakeDir
            | AccessFs::MakeReg
            | AccessFs::MakeSym
            | AccessFs::MakeFifo
            | AccessFs::Refer
            | AccessFs::Truncate;
        let device =
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
        let hidden: Vec<PathBuf> = self.hidden.iter().map(|h| h.path.clone()).collect();
        // What lies outside the roots (the system, programs, devices, declared places) does not
        // change while serving: opened once. The roots, the written places and the temporary
        // directory are opened for each call, so an entry made since is covered.
        for p in &self.reads {
            if p.why == "root" {
                add(&mut ruleset, &expand(&p.path, read, &hidden)).map_err(text)?;
            } else {
                add(&mut ruleset, &expanded_once(&p.path, read, &hidden)).map_err(text)?;
            }
        }
        for p in &self.exec {
            add(&mut ruleset, &expanded_once(&p.path, run, &hidden)).map_err(text)?;
        }
        for dev in DEVICES {
            add(&mut ruleset, &expanded_once(Path::new(dev), device, &[])).map_err(text)?;
        }
        for dev in RANDOM {
            let rules = expanded_once(Path::new(dev), AccessFs::ReadFile.into(), &[]);
            add(&mut ruleset, &rules).map_err(text)?;
        }
        // A written place's version-control metadata stays read-only unless a declared place
        // lies in it: hooks and config written there would run later, outside any sandbox.
        let mut kept = hidden.clone();
        for p in &self.writes {
            let git = p.path.join(".git");
            let named = self.writes.iter().any(|w| w.path.starts_with(&git));
            if !named && std::fs::symlink_metadata(&git).is_ok() {
                kept.push(git);
            }
        }
        for p in &self.writes {
            add(&mut ruleset, &expand(&p.path, write, &kept)).map_err(text)?;
        }
        add(&mut ruleset, &expand(tmp, write, &hidden)).map_err(text)?;
        Ok(ruleset.into())
    }
}

/// Adds a place unless one already listed holds it.
fn push(list: &mut Vec<Place>, new: Place) {
    if !list.iter().any(|p| new.path.starts_with(&p.path)) {
        list.push(new);
    }
}

/// `path` with its longest existing prefix resolved, the rest as written: how a place that
/// does not exist yet will be reached.
fn canonical_as_far_as_it_exists(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path.to_path_buf();
    loop {
        if let Ok(real) = std::fs::canonicalize(&at) {
            return rest.iter().rev().fold(real, |p, name| p.join(name));
        }
        match (at.file_name().map(|n| n.to_os_string()), at.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                at = parent.to_path_buf();
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// ferry's own files (config, tokens, trust store, cache, logs, the daemon's socket), where
/// they are now and where they are by default; and, serving as root, the entries of /etc
/// that not every account may read (/etc/shadow and its kind).
fn hidden_places(home: &Path) -> Vec<Place> {
    let mut hidden = Vec::new();
    for dir in [
        crate::paths::config_dir(),
        crate::paths::cache_dir(),
        crate::transport::socket::run_dir(),
        home.join(".config/ferry"),
        home.join(".cache/ferry"),
    ] {
        push(
            &mut hidden,
            place(canonical_as_far_as_it_exists(&dir), "ferry's files"),
        );
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        use std::os::unix::fs::PermissionsExt;
        let etc = std::fs::canonicalize("/etc").unwrap_or_else(|_| "/etc".into());
        for entry in std::fs::read_dir(&etc).into_iter().flatten().flatten() {
            let private = entry
                .metadata()
                .map(|m| m.permissions().mode() & 0o004 == 0)
                .unwrap_or(true);
            if private {
                push(&mut hidden, place(entry.path(), "root's secrets"));
            }
        }
    }
    hidden
}

/// Opens a place for a rule, without following a final symbolic link when `follow` is false.
fn open_beneath(dir: Option<&OwnedFd>, name: &Path, follow: bool) -> Option<OwnedFd> {
    let name = std::ffi::CString::new(name.as_os_str().as_bytes()).ok()?;
    let mut flags = libc::O_PATH | libc::O_CLOEXEC;
    if !follow {
        flags |= libc::O_NOFOLLOW;
    }
    let at = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: name is NUL-terminated; the returned descriptor is new and owned here.
    let fd = unsafe { libc::openat(at, name.as_ptr(), flags) };
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// The file type bits of an open descriptor.
fn kind_of(fd: &OwnedFd) -> Option<libc::mode_t> {
    // SAFETY: fstat writes into a zeroed stat it is given.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    let done = unsafe { libc::fstat(fd.as_raw_fd(), &mut stat) };
    (done == 0).then_some(stat.st_mode & libc::S_IFMT)
}

/// The rules of one grant: each an opened place and what it may do there.
type Rules = Vec<(OwnedFd, BitFlags<AccessFs>)>;

/// Adds rules to a ruleset.
fn add(ruleset: &mut RulesetCreated, rules: &Rules) -> Result<(), landlock::RulesetError> {
    for (fd, access) in rules {
        ruleset.add_rule(PathBeneath::new(fd.as_fd(), *access))?;
    }
    Ok(())
}

/// `expand`, done once per place and access for the life of the process: for the places
/// that do not change while serving (the system, programs, devices).
fn expanded_once(path: &Path, access: BitFlags<AccessFs>, hidden: &[PathBuf]) -> Arc<Rules> {
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

/// The rules that grant `access` beneath `path`, leaving out every hidden place inside it:
/// a grant that holds one is split into grants of its entries (symbolic links among them are
/// not followed: they are reached through their targets' own grants). A place that does not
/// exist grants nothing.
fn expand(path: &Path, access: BitFlags<AccessFs>, hidden: &[PathBuf]) -> Rules {
    let mut rules = Vec::new();
    if let Some(fd) = open_beneath(None, path, true) {
        expand_open(fd, path, access, hidden, 0, &mut rules);
    }
    rules
}

fn expand_open(
    fd: OwnedFd,
    path: &Path,
    access: BitFlags<AccessFs>,
    hidden: &[PathBuf],
    depth: usize,
    rules: &mut Rules,
) {
    if hidden.iter().any(|h| h == path) {
        return;
    }
    let kind = kind_of(&fd);
    if kind == Some(libc::S_IFLNK) || kind.is_none() {
        return;
    }
    let is_dir = kind == Some(libc::S_IFDIR);
    if is_dir && hidden.iter().any(|h| h.starts_with(path)) {
        if depth >= SPLIT_DEPTH {
            return; // too deep to split: grant less, never more
        }
        for entry in std::fs::read_dir(path).into_iter().flatten().flatten() {
            let name = entry.file_name();
            if let Some(child) = open_beneath(Some(&fd), Path::new(&name), false) {
                expand_open(child, &path.join(&name), access, hidden, depth + 1, rules);
            }
        }
        return;
    }
    let access = if is_dir {
        access
    } else {
        access & AccessFs::from_file(TARGET)
    };
    if !access.is_empty() {
        rules.push((fd, access));
    }
}

/// A call's sandbox, built in the parent and entered by the child.
pub struct Prepared {
    ruleset: Option<OwnedFd>,
    filter: Option<&'static seccomp::Filter>,
}

/// `_LINUX_CAPABILITY_VERSION_3` and its two-word data.
const CAPABILITY_VERSION: u32 = 0x2008_0522;
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: i32,
}
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}
/// SECBIT_NOROOT, SECBIT_NO_SETUID_FIXUP and SECBIT_NO_CAP_AMBIENT_RAISE, each locked: root
/// gets no capabilities back by running a program.
const SECURE_BITS: libc::c_ulong = 0b1100_1111;

impl Prepared {
    /// Enters the sandbox: called in the child between fork and exec, so it only makes
    /// system calls (no allocation, no locks). Capabilities go first (root keeps none, and
    /// none comes back on exec), then no_new_privs, Landlock, seccomp; descriptors beyond
    /// stdio are closed at exec.
    pub fn enter(&self) -> std::io::Result<()> {
        // SAFETY: each call only changes this (child) process's own credentials and filters,
        // with arguments that live for the call.
        unsafe {
            // These need CAP_SETPCAP, which only root has: elsewhere they fail, harmlessly.
            libc::prctl(libc::PR_SET_SECUREBITS, SECURE_BITS, 0, 0, 0);
            for cap in 0..64 {
                libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0);
            }
            libc::prctl(
                libc::PR_CAP_AMBIENT,
                libc::PR_CAP_AMBIENT_CLEAR_ALL,
                0,
                0,
                0,
            );
            let header = CapHeader {
                version: CAPABILITY_VERSION,
                pid: 0,
            };
            let none = [CapData {
                effective: 0,
                permitted: 0,
                inheritable: 0,
            }; 2];
            if libc::syscall(libc::SYS_capset, &header, none.as_ptr()) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if let Some(ruleset) = &self.ruleset {
                if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            if let Some(filter) = self.filter {
                filter.load()?;
            }
            // CLOSE_RANGE_CLOEXEC: whatever ferry holds open stays out of the command.
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 4u32);
        }
        Ok(())
    }
}

/// A call's private temporary directory (`TMPDIR`), removed with everything in it when the
/// call ends.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    /// Creates a new directory only this user can enter, under the system's temporary one.
    pub fn new() -> std::io::Result<TempDir> {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        let mut nonce = [0u8; 6];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut nonce)
            .map_err(|_| std::io::Error::other("no randomness for a temporary directory"))?;
        let nonce: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
        let path = base.join(format!(
            "ferry-call-{}-{}-{nonce}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::DirBuilder::new().mode(0o700).create(&path)?;
        Ok(TempDir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        // remove_dir_all never follows a symbolic link the command left there.
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests;
