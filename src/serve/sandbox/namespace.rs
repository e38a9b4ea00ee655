//! A private mount and IPC namespace per call, where the kernel gives one (serving as root, or
//! through an unprivileged user namespace): everything is mounted read-only but the places the
//! command may write, and every `.git` under those stays read-only on top of them. Landlock
//! decides what may be read, written and run; the mounts decide what no Landlock rule covers:
//! modes and times change only in writable places, a tool may create files at the top of a
//! repository while its `.git` (and each submodule's pointer file) stays as it was, and System
//! V IPC objects are the call's own and gone with it.
//!
//! Every path and string is made in the parent ([`Plan::new`]); the child ([`Plan::enter`])
//! only makes system calls, resolving each path again in its new namespace without following
//! links (`openat2`), and mounting through descriptors (`open_tree`, `move_mount`).

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const OPEN_TREE_CLONE: libc::c_uint = 1;
const AT_RECURSIVE: libc::c_uint = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;
const MOVE_MOUNT_T_EMPTY_PATH: libc::c_uint = 0x40;
const MOUNT_ATTR_RDONLY: u64 = 0x1;
const RESOLVE_NO_MAGICLINKS: u64 = 0x2;
const RESOLVE_NO_SYMLINKS: u64 = 0x4;

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `struct open_how` of `openat2(2)`.
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// How this process gets a namespace of its own.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    /// Serving as root: the mount and IPC namespaces alone.
    Root,
    /// Through a user namespace that maps the serving user to itself.
    User,
}

/// The strings a user namespace's maps are written with (made once, in the parent).
struct Maps {
    uid: CString,
    gid: CString,
}

fn maps() -> &'static Maps {
    static MAPS: OnceLock<Maps> = OnceLock::new();
    MAPS.get_or_init(|| {
        // SAFETY: getuid and getgid have no preconditions.
        let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
        Maps {
            uid: CString::new(format!("{uid} {uid} 1")).unwrap_or_default(),
            gid: CString::new(format!("{gid} {gid} 1")).unwrap_or_default(),
        }
    })
}

/// Which namespace this kernel gives (tried once, in a child that exits at once), or `None`.
pub fn probe() -> Option<Kind> {
    static KIND: OnceLock<Option<Kind>> = OnceLock::new();
    *KIND.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        let kind = if unsafe { libc::geteuid() } == 0 {
            Kind::Root
        } else {
            Kind::User
        };
        let plan = Plan {
            kind,
            writable: Vec::new(),
            kept: Vec::new(),
            hidden: Vec::new(),
            cwd: CString::new("/").unwrap_or_default(),
        };
        let _ = maps();
        // SAFETY: the child only makes system calls (Plan::enter) and leaves with _exit.
        unsafe {
            let pid = libc::fork();
            if pid == 0 {
                let code = if plan.enter().is_ok() { 0 } else { 1 };
                libc::_exit(code);
            }
            if pid < 0 {
                return None;
            }
            let mut status = 0;
            while libc::waitpid(pid, &mut status, 0) < 0 {
                if std::io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
                    return None;
                }
            }
            (libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0).then_some(kind)
        }
    })
}

/// One call's mounts, worked out in the parent.
pub struct Plan {
    kind: Kind,
    /// Places mounted read-write, shortest first (a place inside another goes on top of it).
    writable: Vec<CString>,
    /// `.git` directories and pointer files kept read-only on top of the writable places.
    kept: Vec<CString>,
    /// Places no command may see, covered: a directory by an empty read-only tmpfs, a file
    /// by `/dev/null` (so a watch on one reports nothing of what happens beneath).
    hidden: Vec<CString>,
    /// The command's working directory, entered again once the mounts are in place.
    cwd: CString,
}

fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

impl Plan {
    /// The plan for a command that may write `writable` (its temporary directory among them)
    /// and must leave `kept` as it is, and may not see `hidden`, run in `cwd`.
    pub fn new(
        kind: Kind,
        writable: &[PathBuf],
        kept: &[PathBuf],
        hidden: &[PathBuf],
        cwd: &Path,
    ) -> Plan {
        let mut writable: Vec<&PathBuf> = writable.iter().collect();
        writable.sort_by_key(|p| p.as_os_str().len());
        Plan {
            kind,
            writable: writable.into_iter().filter_map(|p| c_path(p)).collect(),
            kept: kept.iter().filter_map(|p| c_path(p)).collect(),
            hidden: hidden.iter().filter_map(|p| c_path(p)).collect(),
            cwd: c_path(cwd).unwrap_or_default(),
        }
    }

    /// Enters the namespaces and makes the mounts: in the child, before Landlock (which
    /// refuses mounts), with system calls only.
    pub fn enter(&self) -> std::io::Result<()> {
        let fail = || Err(std::io::Error::last_os_error());
        let mut flags = libc::CLONE_NEWNS | libc::CLONE_NEWIPC;
        if self.kind == Kind::User {
            flags |= libc::CLONE_NEWUSER;
        }
        // SAFETY: each call below changes only this (child) process's namespaces and mounts,
        // with NUL-terminated strings and structures that live for the call.
        unsafe {
            if libc::unshare(flags) != 0 {
                return fail();
            }
            if self.kind == Kind::User {
                let maps = maps();
                for (file, text) in [
                    (c"/proc/self/setgroups", c"deny"),
                    (c"/proc/self/uid_map", maps.uid.as_c_str()),
                    (c"/proc/self/gid_map", maps.gid.as_c_str()),
                ] {
                    let fd = libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if fd < 0 {
                        return fail();
                    }
                    let bytes = text.to_bytes();
                    let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
                    libc::close(fd);
                    if written != bytes.len() as isize {
                        return fail();
                    }
                }
            }
            // Nothing mounted here reaches the namespace ferry runs in.
            let none = std::ptr::null::<libc::c_char>();
            if libc::mount(
                none,
                c"/".as_ptr(),
                none,
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ) != 0
            {
                return fail();
            }
            set_read_only(libc::AT_FDCWD, c"/", 0, true)?;
            for place in &self.writable {
                attach(place, false)?;
            }
            for git in &self.kept {
                match attach(git, true) {
                    Ok(()) => {}
                    // Gone, or a link now: nothing to keep (a link is no repository's own).
                    Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ELOOP)) => {}
                    Err(e) => return Err(e),
                }
            }
            if !self.hidden.is_empty() {
                let covering = make_cover()?;
                for place in &self.hidden {
                    match cover(covering, place) {
                        Ok(()) => {}
                        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ELOOP)) => {}
                        Err(e) => {
                            libc::close(covering);
                            return Err(e);
                        }
                    }
                }
                libc::close(covering);
            }
            // The working directory was entered before the mounts: enter it again, so that
            // it is the writable mount, not the read-only one beneath.
            if libc::chdir(self.cwd.as_ptr()) != 0 {
                return fail();
            }
        }
        Ok(())
    }
}

/// Opens `path` in this namespace without following any link.
fn open_path(path: &CString) -> std::io::Result<libc::c_int> {
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: openat2 reads the path and the structure it is given.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            libc::AT_FDCWD,
            path.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(fd as libc::c_int)
}

/// Sets or clears read-only on the mount at `dir`/`path` and every mount beneath it.
fn set_read_only(
    dir: libc::c_int,
    path: &std::ffi::CStr,
    flags: libc::c_uint,
    read_only: bool,
) -> std::io::Result<()> {
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    // SAFETY: mount_setattr reads the path and the structure it is given.
    let done = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            dir,
            path.as_ptr(),
            flags | AT_RECURSIVE,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if done != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Mounts a copy of `path` on itself, read-write or read-only.
fn attach(path: &CString, read_only: bool) -> std::io::Result<()> {
    let target = open_path(path)?;
    let result = (|| {
        // SAFETY: open_tree and move_mount work on descriptors this function owns.
        unsafe {
            let tree = libc::syscall(
                libc::SYS_open_tree,
                target,
                c"".as_ptr(),
                OPEN_TREE_CLONE
                    | AT_RECURSIVE
                    | libc::AT_EMPTY_PATH as libc::c_uint
                    | libc::O_CLOEXEC as libc::c_uint,
            );
            if tree < 0 {
                return Err(std::io::Error::last_os_error());
            }
            let tree = tree as libc::c_int;
            let moved = set_read_only(tree, c"", libc::AT_EMPTY_PATH as libc::c_uint, read_only)
                .and_then(|()| {
                    let done = libc::syscall(
                        libc::SYS_move_mount,
                        tree,
                        c"".as_ptr(),
                        target,
                        c"".as_ptr(),
                        MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
                    );
                    if done != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            libc::close(tree);
            moved
        }
    })();
    // SAFETY: a descriptor opened above.
    unsafe { libc::close(target) };
    result
}

const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;

/// A detached, read-only tmpfs whose top directory and one file `f` have mode 0: what covers
/// the hidden places (a directory by the tmpfs, a file by `f`), so that reading, listing or
/// watching one is refused as a denial.
fn make_cover() -> std::io::Result<libc::c_int> {
    let fail = || Err(std::io::Error::last_os_error());
    // SAFETY: fsopen, fsconfig, fsmount and openat work on descriptors made here, with
    // NUL-terminated strings.
    unsafe {
        let fs = libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), 1 as libc::c_uint);
        if fs < 0 {
            return fail();
        }
        let fs = fs as libc::c_int;
        let configured = libc::syscall(
            libc::SYS_fsconfig,
            fs,
            FSCONFIG_SET_STRING,
            c"mode".as_ptr(),
            c"0".as_ptr(),
            0,
        ) == 0
            && libc::syscall(
                libc::SYS_fsconfig,
                fs,
                FSCONFIG_CMD_CREATE,
                std::ptr::null::<libc::c_char>(),
                std::ptr::null::<libc::c_void>(),
                0,
            ) == 0;
        let mount = if configured {
            libc::syscall(libc::SYS_fsmount, fs, 1 as libc::c_uint, 0x2 | 0x4 | 0x8)
        } else {
            -1
        };
        libc::close(fs);
        if mount < 0 {
            return fail();
        }
        let mount = mount as libc::c_int;
        let file = libc::openat(
            mount,
            c"f".as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
            0,
        );
        if file < 0 {
            libc::close(mount);
            return fail();
        }
        libc::close(file);
        if let Err(e) = set_read_only(mount, c"", libc::AT_EMPTY_PATH as libc::c_uint, true) {
            libc::close(mount);
            return Err(e);
        }
        Ok(mount)
    }
}

/// Covers a hidden place with a copy of the cover: its directory, or its file `f`.
fn cover(cover: libc::c_int, path: &CString) -> std::io::Result<()> {
    let target = open_path(path)?;
    let fail = || Err(std::io::Error::last_os_error());
    // SAFETY: fstat, open_tree and move_mount work on descriptors this function owns and
    // structures that live for the call.
    let result = unsafe {
        (|| {
            let mut stat: libc::stat = std::mem::zeroed();
            if libc::fstat(target, &mut stat) != 0 {
                return fail();
            }
            let (name, empty) = if stat.st_mode & libc::S_IFMT == libc::S_IFDIR {
                (c"", libc::AT_EMPTY_PATH as libc::c_uint)
            } else {
                (c"f", 0)
            };
            let mount = libc::syscall(
                libc::SYS_open_tree,
                cover,
                name.as_ptr(),
                OPEN_TREE_CLONE | empty | libc::O_CLOEXEC as libc::c_uint,
            );
            if mount < 0 {
                return fail();
            }
            let mount = mount as libc::c_int;
            let done = libc::syscall(
                libc::SYS_move_mount,
                mount,
                c"".as_ptr(),
                target,
                c"".as_ptr(),
                MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH,
            );
            libc::close(mount);
            if done != 0 {
                return fail();
            }
            Ok(())
        })()
    };
    // SAFETY: a descriptor opened above.
    unsafe { libc::close(target) };
    result
}

/// How many entries a look for `.git` reads before it stops (a place that large keeps what
/// was found so far).
const SCAN_LIMIT: usize = 200_000;

/// What is known of the writable places: each `.git` in them, and each directory (a new entry
/// changes its directory's ctime, which no command can set back: the next look reads only the
/// directories that changed).
#[derive(Debug, Default)]
pub struct Known {
    pub git: Vec<PathBuf>,
    dirs: std::collections::HashSet<PathBuf>,
}

impl Known {
    /// Looks through `place` whole: every directory and `.git` in it, not following links
    /// and not looking inside a `.git`. Returns the `.git` entries found that were not known.
    pub fn scan(&mut self, place: &Path) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut seen = 0;
        let mut next = vec![place.to_path_buf()];
        while let Some(dir) = next.pop() {
            self.dirs.insert(dir.clone());
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                seen += 1;
                if seen > SCAN_LIMIT {
                    return found;
                }
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let path = entry.path();
                if entry.file_name() == ".git" {
                    if !kind.is_symlink() && !self.git.contains(&path) {
                        found.push(path);
                    }
                } else if kind.is_dir() && !self.dirs.contains(&path) {
                    next.push(path);
                }
            }
        }
        found
    }

    /// The `.git` entries not known before, in the directories changed since `since` (and
    /// in the directories made since, whole).
    pub fn changed_since(&mut self, since: std::time::SystemTime) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut changed = Vec::new();
        self.dirs
            .retain(|dir| match std::fs::symlink_metadata(dir) {
                Ok(meta) if meta.is_dir() => {
                    if ctime(&meta) >= since {
                        changed.push(dir.clone());
                    }
                    true
                }
                _ => false,
            });
        for dir in changed {
            for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
                let Ok(kind) = entry.file_type() else {
                    continue;
                };
                let path = entry.path();
                if entry.file_name() == ".git" {
                    if !kind.is_symlink() && !self.git.contains(&path) && !found.contains(&path) {
                        found.push(path);
                    }
                } else if kind.is_dir() && !self.dirs.contains(&path) {
                    found.extend(self.scan(&path));
                }
            }
        }
        found
    }
}

/// When a file's inode last changed (a rename sets it too).
pub fn ctime(meta: &std::fs::Metadata) -> std::time::SystemTime {
    use std::os::unix::fs::MetadataExt;
    std::time::UNIX_EPOCH
        + std::time::Duration::new(meta.ctime().max(0) as u64, meta.ctime_nsec().max(0) as u32)
}
