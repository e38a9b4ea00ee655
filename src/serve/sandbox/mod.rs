//! The kernel sandbox every command `ferry serve` runs is held in (docs/sandbox.md). Option
//! tables and path checks give clear errors; this is what holds when a table misses a case:
//! an option nobody listed, a CLI nobody thought of, a repository's own configuration that
//! names a program.
//!
//! A [`Policy`] says what one command may read, write, run and reach; it is resolved once,
//! when serving starts. For each call, [`Policy::prepare`] builds a Landlock ruleset (files,
//! programs, TCP, signals and abstract sockets, as far as the kernel's ABI goes) and picks the
//! seccomp filter (socket families, and the calls that would step around Landlock) in the
//! parent; [`Prepared::enter`] applies both in the child between fork and exec, with
//! no_new_privs and no capabilities, using only async-signal-safe calls.

mod explain;
mod namespace;
mod programs;
mod rules;
mod seccomp;

pub use explain::{explain_denial, render_kernel, render_policy};

use crate::manifest::Permissions;
use landlock::{Access, AccessFs, AccessNet, BitFlags, Ruleset, RulesetAttr, Scope, ABI};
use rules::{add, expand, expand_under, expanded_once, Hidden, Rules};
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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

/// How far a file system's clock may lag the system's (it ticks coarsely).
const CLOCK_SLACK: std::time::Duration = std::time::Duration::from_millis(100);

/// What a writing tool cannot do without a mount namespace.
pub const NO_TOP_LEVEL: &str = "new top-level files in a repository root";

/// What this kernel enforces, probed once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Kernel {
    /// The Landlock ABI (0: none).
    pub landlock: i32,
    /// Whether the seccomp filter can be loaded.
    pub seccomp: bool,
    /// The private mount and IPC namespace a call gets, if the kernel gives one.
    pub namespace: Option<namespace::Kind>,
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
                // `FERRY_SANDBOX_NAMESPACE=off`: Landlock and seccomp alone, as in a
                // container without namespaces (benches/ measure the namespace's share so).
                namespace: match std::env::var("FERRY_SANDBOX_NAMESPACE").as_deref() {
                    Ok("off") => None,
                    _ => namespace::probe(),
                },
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
            if self.namespace.is_none() {
                gaps.push("System V IPC");
            }
        }
        gaps.extend(self.without_namespace());
        gaps
    }

    /// The rules only a mount namespace gives, when this kernel gives none (Landlock alone
    /// then keeps a repository's `.git` read-only by leaving its top directory unwritable).
    pub fn without_namespace(&self) -> Vec<&'static str> {
        if self.namespace.is_some() {
            return Vec::new();
        }
        vec![
            NO_TOP_LEVEL,
            "mode and times outside the writable places (for tools that write)",
            "watches (inotify) on hidden places",
        ]
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
        let namespace = match self.namespace {
            Some(namespace::Kind::Root) => "a mount and IPC namespace per call",
            Some(namespace::Kind::User) => {
                "a mount and IPC namespace per call (in a user namespace)"
            }
            None => "no mount namespace",
        };
        format!("{landlock}, {seccomp}, {namespace}")
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
    /// The hidden places, ready to match.
    never: Hidden,
    /// The rules of everything outside the roots, opened when serving started.
    opened: Vec<Arc<Rules>>,
    /// The roots, opened when serving started: what is granted under them is reached from
    /// these descriptors without following links.
    roots: Vec<(PathBuf, Arc<OwnedFd>)>,
    /// Every `.git` under the writable places that stays read-only (found at start, and
    /// learnt after each call): mounted read-only on top of them in a call's namespace.
    known: Arc<std::sync::Mutex<namespace::Known>>,
}

/// What reading a place allows.
fn read() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::ReadDir
}

/// What running a program allows (it is read to be run).
fn run() -> BitFlags<AccessFs> {
    read() | AccessFs::Execute
}

/// What writing a place allows: everything but running programs and making devices.
fn write() -> BitFlags<AccessFs> {
    read()
        | AccessFs::WriteFile
        | AccessFs::RemoveDir
        | AccessFs::RemoveFile
        | AccessFs::MakeDir
        | AccessFs::MakeReg
        | AccessFs::MakeSym
        | AccessFs::MakeFifo
        | AccessFs::Refer
        | AccessFs::Truncate
}

/// Why a command's sandbox cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("exec names {0:?}, which is not found")]
    ExecNotFound(String),
    #[error("{} names the loader {} (PT_INTERP), which {why}", file.display(), loader.display())]
    Loader {
        file: PathBuf,
        loader: PathBuf,
        why: &'static str,
    },
    #[error("{}'s #! line ({line}) names {}, which {why}", file.display(), interpreter.display())]
    Interpreter {
        file: PathBuf,
        line: String,
        interpreter: PathBuf,
        why: &'static str,
    },
    #[error("{} is inside ferry's own files or the system's secrets, which no served command may see; serve another directory", .0.display())]
    Hidden(PathBuf),
    #[error("the sandbox could not be built: {0}")]
    Ruleset(#[from] landlock::RulesetError),
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
    ) -> Result<Policy, PolicyError> {
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
                None => return Err(PolicyError::ExecNotFound(name.clone())),
            }
        }
        for (i, program) in programs.iter().enumerate() {
            let why = if i == 0 { "program" } else { "declared" };
            // The program itself first, then what runs it (interpreters, the loader).
            for (j, found) in programs::runnable(program, path, cwd)?
                .into_iter()
                .enumerate()
            {
                let why = if j == 0 { why } else { "what runs it" };
                if !found.file.is_dir() {
                    for at in [&found.named, &found.file] {
                        if let Some(tree) = programs::install_tree(at, &home, j > 0) {
                            push(&mut reads, place(tree, "install tree"));
                        }
                    }
                }
                push(&mut exec, place(found.file, why));
            }
            for dir in programs::helper_dirs(program, path) {
                push(&mut exec, place(dir, "helpers"));
            }
        }
        // `ferry ask`: the serving binary, run by the command to talk back to the client.
        if let Ok(ferry) = std::env::current_exe().and_then(std::fs::canonicalize) {
            for found in programs::runnable(&ferry, None, cwd).unwrap_or_default() {
                push(&mut exec, place(found.file, "ferry"));
            }
        }
        for extra in &permissions.reads {
            push(&mut reads, place(extra, "declared"));
        }
        let writes: Vec<Place> = writes
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
        let mut hidden = hidden_places(&home);
        // A secret's directory that holds a root stays: only the secret in it is hidden.
        hidden.retain(|h| {
            h.why != "serve's secrets (directory)" || !roots.iter().any(|r| r.starts_with(&h.path))
        });
        let never = Hidden::new(hidden.iter().map(|h| h.path.clone()).collect());
        for p in reads.iter().chain(&writes) {
            if never.holds(&p.path, None) {
                return Err(PolicyError::Hidden(p.path.clone()));
            }
        }
        // Everything outside the roots is opened now, before any command runs, so nothing a
        // command does can change what these grants name.
        let mut opened = Vec::new();
        for p in reads.iter().filter(|p| p.why != "root") {
            opened.push(expanded_once(&p.path, read(), &never));
        }
        for p in &exec {
            opened.push(expanded_once(&p.path, run(), &never));
        }
        let device =
            AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
        for dev in DEVICES {
            opened.push(expanded_once(Path::new(dev), device, &never));
        }
        for dev in RANDOM {
            opened.push(expanded_once(
                Path::new(dev),
                AccessFs::ReadFile.into(),
                &never,
            ));
        }
        let roots = roots
            .iter()
            .filter_map(|r| rules::open_at(None, r, true).map(|fd| (r.clone(), Arc::new(fd))))
            .collect();
        let mut known = namespace::Known::default();
        for place in writes.iter().map(|w: &Place| &w.path) {
            let found = known.scan(place);
            known.git.extend(found);
        }
        Ok(Policy {
            reads,
            writes,
            exec,
            network: permissions.network,
            hidden,
            keeps_home,
            never,
            opened,
            roots,
            known: Arc::new(std::sync::Mutex::new(known)),
        })
    }

    /// The `.git` entries kept read-only: every one found under a writable place, unless the
    /// tool's `writes` names it or a place inside it.
    pub(super) fn kept_git(&self) -> Vec<PathBuf> {
        let known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        known
            .git
            .iter()
            .filter(|g| !self.writes.iter().any(|w| w.path.starts_with(g)))
            .cloned()
            .collect()
    }

    /// After a call that started at `started`: each `.git` it made under a writable place (a
    /// nested repository whose config git, run later outside the sandbox, would follow) is
    /// removed, and named in what is returned. A `.git` older than the call is learnt, and
    /// kept read-only from the next call on.
    pub fn after_call(&self, started: std::time::SystemTime) -> Vec<PathBuf> {
        let mut removed = Vec::new();
        if self.writes.is_empty() {
            return removed;
        }
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        // File times come from a coarse clock, a tick behind `started` at worst.
        let since = started - CLOCK_SLACK;
        for found in known.changed_since(since) {
            if self.writes.iter().any(|w| w.path.starts_with(&found)) {
                continue;
            }
            let made =
                std::fs::symlink_metadata(&found).is_ok_and(|m| namespace::ctime(&m) >= since);
            if !made {
                known.git.push(found);
                continue;
            }
            let gone = if found.is_dir() {
                std::fs::remove_dir_all(&found)
            } else {
                std::fs::remove_file(&found)
            };
            if gone.is_ok() {
                removed.push(found);
            }
        }
        removed
    }

    /// The ruleset, mounts and filter of one call whose private temporary directory is
    /// `tmp`, run in `cwd`.
    pub fn prepare(&self, tmp: &Path, cwd: &Path) -> std::io::Result<Prepared> {
        let kernel = Kernel::probe();
        static FILTERS: OnceLock<Vec<Option<seccomp::Filter>>> = OnceLock::new();
        let filters = FILTERS.get_or_init(|| {
            let root = serving_as_root();
            (0..8)
                .map(|bits| {
                    seccomp::Filter::new(seccomp::Rules {
                        network: bits & 1 != 0,
                        root,
                        namespace: bits & 2 != 0,
                        writes: bits & 4 != 0,
                    })
                })
                .collect()
        });
        let filter = if kernel.seccomp {
            let bits = self.network as usize
                | (kernel.namespace.is_some() as usize) << 1
                | (!self.writes.is_empty() as usize) << 2;
            filters[bits].as_ref()
        } else {
            None
        };
        let namespace = kernel.namespace.map(|kind| {
            let mut writable: Vec<PathBuf> = self.writes.iter().map(|w| w.path.clone()).collect();
            writable.push(tmp.to_path_buf());
            let hidden: Vec<PathBuf> = self.hidden.iter().map(|h| h.path.clone()).collect();
            namespace::Plan::new(kind, &writable, &self.kept_git(), &hidden, cwd)
        });
        let ruleset = if kernel.confines_files() {
            self.ruleset(tmp, namespace.is_some())
                .map_err(std::io::Error::other)?
        } else {
            None
        };
        Ok(Prepared {
            ruleset,
            filter,
            namespace,
        })
    }

    /// `mounted`: the call's namespace keeps every `.git` read-only, so Landlock need not.
    fn ruleset(&self, tmp: &Path, mounted: bool) -> Result<Option<OwnedFd>, PolicyError> {
        let text = PolicyError::Ruleset;
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
        for rules in &self.opened {
            add(&mut ruleset, rules).map_err(text)?;
        }
        // The roots and what is written under them are opened for each call (from the roots'
        // own descriptors), so an entry made since is covered and a link made since is not
        // followed.
        for (root, fd) in &self.roots {
            let rules = expand_under(root, fd, root, read(), &self.never);
            add(&mut ruleset, &rules).map_err(text)?;
        }
        for p in &self.writes {
            // A written place's version-control metadata stays read-only unless the tool
            // names it: hooks and config written there would run later, outside any sandbox.
            let git = p.path.join(".git");
            let named = self.writes.iter().any(|w| w.path == git);
            let kept = if !mounted && !named && std::fs::symlink_metadata(&git).is_ok() {
                self.never.with(git)
            } else {
                self.never.clone()
            };
            let Some((root, fd)) = self.roots.iter().find(|(r, _)| p.path.starts_with(r)) else {
                continue;
            };
            let rules = expand_under(root, fd, &p.path, write(), &kept);
            add(&mut ruleset, &rules).map_err(text)?;
        }
        add(&mut ruleset, &expand(tmp, write(), &self.never)).map_err(text)?;
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

/// Serve's own secrets (`--token-file`, `--state-key-file`), hidden from every command.
static SERVE_FILES: OnceLock<Vec<PathBuf>> = OnceLock::new();

/// Hides serve's own files (canonical paths) from every command made from now on: each file,
/// and its directory unless that is a system directory, the home directory or above it, or
/// holds a root.
pub fn hide_serve_files(files: Vec<PathBuf>) {
    let _ = SERVE_FILES.set(files);
}

/// The system place a command may read that holds `file` (canonical), if any: where serve's
/// secrets should not lie.
pub fn readable_by_commands(file: &Path) -> Option<PathBuf> {
    SYSTEM_READS
        .iter()
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .find(|p| file.starts_with(p))
}

/// Whether a directory holding a serve secret is one every command needs (it is then not
/// hidden whole, only the secret in it).
fn shared_directory(dir: &Path, home: &Path) -> bool {
    home.starts_with(dir)
        || SYSTEM_READS
            .iter()
            .filter_map(|p| std::fs::canonicalize(p).ok())
            .any(|p| p == dir)
}

/// How many entries of /etc are looked at for root's secrets (it holds a few thousand).
const ETC_SCAN_LIMIT: usize = 50_000;

/// ferry's own files (config, tokens, trust store, cache, logs, the daemon's socket), where
/// they are now and where they are by default; and, serving as root (who owns root's files
/// without any capability), everything in /etc that not every account may read
/// (`/etc/shadow`, `/etc/ssl/private`...).
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
    for file in SERVE_FILES.get().into_iter().flatten() {
        push(&mut hidden, place(file.clone(), "serve's secrets"));
        if let Some(dir) = file.parent().filter(|d| !shared_directory(d, home)) {
            push(&mut hidden, place(dir, "serve's secrets (directory)"));
        }
    }
    if serving_as_root() {
        for secret in root_secrets() {
            push(&mut hidden, place(secret.clone(), "root's secrets"));
        }
    }
    hidden
}

/// Everything in /etc that not every account may read, looked for once per process: every
/// tool's policy and serve's own reads ask, and /etc holds a few thousand entries.
fn root_secrets() -> &'static [PathBuf] {
    static SECRETS: std::sync::OnceLock<Vec<PathBuf>> = std::sync::OnceLock::new();
    SECRETS.get_or_init(|| {
        let mut secrets = Vec::new();
        let etc = std::fs::canonicalize("/etc").unwrap_or_else(|_| "/etc".into());
        let mut seen = 0;
        let mut next = vec![etc];
        while let Some(dir) = next.pop() {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                seen += 1;
                if seen > ETC_SCAN_LIMIT {
                    // Too much to look at: keep all of what is left out of reach.
                    secrets.push(dir.clone());
                    break;
                }
                let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                    continue;
                };
                use std::os::unix::fs::PermissionsExt;
                if meta.file_type().is_symlink() {
                    continue;
                }
                if meta.permissions().mode() & 0o004 == 0 {
                    secrets.push(entry.path());
                } else if meta.is_dir() {
                    next.push(entry.path());
                }
            }
        }
        secrets
    })
}

/// The places no served command may see (ferry's files; serving as root, root's secrets in
/// /etc), for what serve itself reads on a manifest's behalf.
pub fn never_readable() -> Vec<PathBuf> {
    let home = canonical_as_far_as_it_exists(&crate::paths::home_dir());
    hidden_places(&home).into_iter().map(|p| p.path).collect()
}

/// Whether ferry runs as root (whose commands, even without capabilities, own root's files).
pub fn serving_as_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// A call's sandbox, built in the parent and entered by the child.
pub struct Prepared {
    ruleset: Option<OwnedFd>,
    filter: Option<&'static seccomp::Filter>,
    namespace: Option<namespace::Plan>,
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
    /// system calls (no allocation, no locks). The namespace and its mounts go first (they
    /// need the capabilities, and Landlock refuses mounts), then capabilities are dropped
    /// (root keeps none, and none comes back on exec), then no_new_privs, Landlock, seccomp;
    /// descriptors beyond stdio are closed at exec.
    pub fn enter(&self) -> std::io::Result<()> {
        if let Some(namespace) = &self.namespace {
            namespace.enter()?;
        }
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
    /// Creates a new directory only this user can enter, in serve's scratch directory.
    pub fn new() -> std::io::Result<TempDir> {
        use std::os::unix::fs::DirBuilderExt;
        use std::sync::atomic::{AtomicU64, Ordering};
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let base = super::reaper::scratch();
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
