//! The seccomp filter for what Landlock has no rule for: which socket families a command may
//! open (Unix sockets reach the user's daemons, ferry's own among them, and a Landlock before
//! ABI 9 cannot stop a connect to one; UDP has no Landlock rule before ABI 10), and the few
//! system calls that would step around Landlock or the socket rule (io_uring opens sockets
//! without `socket(2)`, new namespaces and mounts, other processes' memory, kernel keys).
//! Everything else is allowed: the allow-lists are Landlock's.
//!
//! A small BPF program written out by hand (see `seccomp(2)` and `linux/filter.h`), built once
//! per network setting and handed to the child ready to load.

/// `struct sock_filter` and `struct sock_fprog` from `linux/filter.h`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Instruction {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

#[repr(C)]
struct Program {
    len: u16,
    filter: *const Instruction,
}

// Opcodes: class | size | mode (BPF_LD = 0, BPF_W = 0, BPF_ABS = 0x20; BPF_JMP = 5,
// BPF_JEQ = 0x10, BPF_JGE = 0x30, BPF_JSET = 0x40, BPF_K = 0; BPF_RET = 6).
const BPF_LD_W_ABS: u16 = 0x20;
const BPF_JEQ_K: u16 = 0x15;
const BPF_JGE_K: u16 = 0x35;
const BPF_JSET_K: u16 = 0x45;
const BPF_RET_K: u16 = 0x06;
const BPF_ALU_AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K

const RET_KILL_PROCESS: u32 = 0x8000_0000;
const RET_ERRNO: u32 = 0x0005_0000;
const RET_ALLOW: u32 = 0x7fff_0000;

const SECCOMP_SET_MODE_FILTER: libc::c_ulong = 1;
const SECCOMP_GET_ACTION_AVAIL: libc::c_ulong = 2;

/// Offsets into `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low half of the first argument (little-endian), and of the second.
const ARG0: u32 = 16;
const ARG1: u32 = 24;
const ARG2: u32 = 32;

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: Option<u32> = Some(0xc000_003e);
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: Option<u32> = Some(0xc000_00b7);
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const AUDIT_ARCH: Option<u32> = None;

/// Calls added to Linux after the libc crate's tables: the same number on every architecture.
const SYS_FCHMODAT2: libc::c_long = 452;
const SYS_SETXATTRAT: libc::c_long = 463;
const SYS_REMOVEXATTRAT: libc::c_long = 466;

/// System calls refused with EPERM: each would step around Landlock or the socket rule, or
/// needs a capability a served command never has.
/// - Landlock has no rule for a file's owner or extended attributes, which by path would
///   reach files anywhere; nor for its mode, which is checked below instead.
/// - A new session or process group would leave the call's group, which is how everything
///   a call started is stopped with it.
/// - `execveat` runs a descriptor (`fexecve`), which no exec rule sees by name.
#[cfg(target_arch = "x86_64")]
const REFUSED_HERE: &[libc::c_long] = &[libc::SYS_chown, libc::SYS_lchown];
#[cfg(not(target_arch = "x86_64"))]
const REFUSED_HERE: &[libc::c_long] = &[];

/// The mode bits a command may not give any file: set-id, and write for anyone else. The
/// mode of a file is the one metadata change Landlock cannot confine to the writable places
/// and tools need (`chmod +x`, `tar -x`, `npm install`); these bits are what would hand a
/// file to other accounts (a setuid binary, a world-writable config).
const MODE_REFUSED: u32 = 0o6022;

/// `chmod`-like calls and the argument that holds the mode.
#[cfg(target_arch = "x86_64")]
const MODE_CALLS: &[(libc::c_long, u32)] = &[
    (libc::SYS_chmod, ARG1),
    (libc::SYS_fchmod, ARG1),
    (libc::SYS_fchmodat, ARG2),
    (SYS_FCHMODAT2, ARG2),
];
#[cfg(not(target_arch = "x86_64"))]
const MODE_CALLS: &[(libc::c_long, u32)] = &[
    (libc::SYS_fchmod, ARG1),
    (libc::SYS_fchmodat, ARG2),
    (SYS_FCHMODAT2, ARG2),
];

#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const REFUSED: &[libc::c_long] = &[
    libc::SYS_fchownat,
    libc::SYS_fchown,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    SYS_SETXATTRAT,
    SYS_REMOVEXATTRAT,
    libc::SYS_setsid,
    libc::SYS_setpgid,
    libc::SYS_execveat,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_setns,
    libc::SYS_unshare,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
    libc::SYS_quotactl,
];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const REFUSED: &[libc::c_long] = &[];

/// Namespace flags `clone(2)` may not be given (a new user namespace hands out capabilities).
const CLONE_NAMESPACES: u32 = (libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWCGROUP) as u32;

/// What a filter is made for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rules {
    /// The command may reach the network.
    pub network: bool,
    /// Serving as root: no mode change at all.
    pub root: bool,
    /// The call has its own mount and IPC namespace: read-only mounts confine modes and
    /// times to the writable places, and System V IPC is the call's own.
    pub namespace: bool,
    /// The command may write somewhere (its temporary directory aside).
    pub writes: bool,
}

/// System V IPC: without a namespace of the call's own, it reaches every other process's
/// segments, queues and semaphores, and what it makes outlives the call.
#[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
const SYSV_IPC: &[libc::c_long] = &[
    libc::SYS_shmget,
    libc::SYS_shmat,
    libc::SYS_shmctl,
    libc::SYS_msgget,
    libc::SYS_msgsnd,
    libc::SYS_msgrcv,
    libc::SYS_msgctl,
    libc::SYS_semget,
    libc::SYS_semop,
    libc::SYS_semtimedop,
    libc::SYS_semctl,
];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SYSV_IPC: &[libc::c_long] = &[];

/// Calls that change a file's times or mode by path or descriptor: without a namespace
/// (whose read-only mounts confine them), a tool that writes nothing may make none.
#[cfg(target_arch = "x86_64")]
const METADATA: &[libc::c_long] = &[
    libc::SYS_utimensat,
    libc::SYS_utimes,
    libc::SYS_utime,
    libc::SYS_futimesat,
    libc::SYS_chmod,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    SYS_FCHMODAT2,
];
#[cfg(not(target_arch = "x86_64"))]
const METADATA: &[libc::c_long] = &[
    libc::SYS_utimensat,
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    SYS_FCHMODAT2,
];

/// `MFD_NOEXEC_SEAL`: a memfd made with it can never be run.
const MFD_NOEXEC_SEAL: u32 = 0x8;

/// A filter ready to load.
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    instructions: Vec<Instruction>,
}

fn stmt(code: u16, k: u32) -> Instruction {
    Instruction {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> Instruction {
    Instruction { code, jt, jf, k }
}

impl Filter {
    /// The filter for a command that may (or may not) reach the network: `socket(2)` for
    /// IPv4, IPv6 and netlink only when it may, never for Unix or any other family
    /// (`socketpair(2)` for streams, which reach nothing, stays open). `root`: serving as
    /// root, no mode changes. Without a namespace, no System V IPC, and for a tool that
    /// writes nothing, no mode or time change. A memfd only when it can never be run (an
    /// exec of `/proc/self/fd/N` would run what the exec list refuses). `None` where this
    /// build has no filter for the architecture.
    pub fn new(rules: Rules) -> Option<Filter> {
        let Rules {
            network,
            root,
            namespace,
            writes,
        } = rules;
        let arch = AUDIT_ARCH?;
        let errno = |e: i32| stmt(BPF_RET_K, RET_ERRNO | (e as u32 & 0xffff));
        let mut f = vec![
            stmt(BPF_LD_W_ABS, ARCH),
            jump(BPF_JEQ_K, arch, 1, 0),
            stmt(BPF_RET_K, RET_KILL_PROCESS),
            stmt(BPF_LD_W_ABS, NR),
        ];
        // x32 system calls share the architecture number: refuse them all.
        if cfg!(target_arch = "x86_64") {
            f.push(jump(BPF_JGE_K, 0x4000_0000, 0, 1));
            f.push(errno(libc::EPERM));
        }
        let sysv = if namespace { &[][..] } else { SYSV_IPC };
        let metadata = if namespace || writes {
            &[][..]
        } else {
            METADATA
        };
        for nr in REFUSED
            .iter()
            .chain(REFUSED_HERE)
            .chain(sysv)
            .chain(metadata)
        {
            f.push(jump(BPF_JEQ_K, *nr as u32, 0, 1));
            f.push(errno(libc::EPERM));
        }
        // Modes: no set-id or write bits for anyone else; serving as root (who owns the
        // system's files), no mode change at all.
        for (nr, arg) in MODE_CALLS {
            let refused = if root { u32::MAX } else { MODE_REFUSED };
            f.push(jump(BPF_JEQ_K, *nr as u32, 0, 4));
            f.push(stmt(BPF_LD_W_ABS, *arg));
            f.push(jump(BPF_JSET_K, refused, 0, 1));
            f.push(errno(libc::EPERM));
            f.push(stmt(BPF_RET_K, RET_ALLOW));
        }
        // memfd_create: only sealed against exec.
        f.push(jump(BPF_JEQ_K, libc::SYS_memfd_create as u32, 0, 4));
        f.push(stmt(BPF_LD_W_ABS, ARG1));
        f.push(jump(BPF_JSET_K, MFD_NOEXEC_SEAL, 0, 1));
        f.push(stmt(BPF_RET_K, RET_ALLOW));
        f.push(errno(libc::EPERM));
        // socketpair: stream and seqpacket pairs only; a datagram one can send to any path.
        f.push(jump(BPF_JEQ_K, libc::SYS_socketpair as u32, 0, 6));
        f.push(stmt(BPF_LD_W_ABS, ARG1));
        f.push(stmt(BPF_ALU_AND_K, 0xf));
        f.push(jump(BPF_JEQ_K, libc::SOCK_STREAM as u32, 2, 0));
        f.push(jump(BPF_JEQ_K, libc::SOCK_SEQPACKET as u32, 1, 0));
        f.push(errno(libc::EACCES));
        f.push(stmt(BPF_RET_K, RET_ALLOW));
        // clone3 passes its flags in memory a filter cannot read: ENOSYS makes the C library
        // fall back to clone, whose flags it can.
        f.push(jump(BPF_JEQ_K, libc::SYS_clone3 as u32, 0, 1));
        f.push(errno(libc::ENOSYS));
        // clone: the flags are the first argument on both architectures.
        f.push(jump(BPF_JEQ_K, libc::SYS_clone as u32, 0, 4));
        f.push(stmt(BPF_LD_W_ABS, ARG0));
        f.push(jump(BPF_JSET_K, CLONE_NAMESPACES, 0, 1));
        f.push(errno(libc::EPERM));
        f.push(stmt(BPF_RET_K, RET_ALLOW));
        let families: &[i32] = if network {
            &[libc::AF_INET, libc::AF_INET6, libc::AF_NETLINK]
        } else {
            &[]
        };
        // socket: [jeq socket] [ld arg0] ([jeq family] [allow])* [EACCES]
        let block = 1 + 2 * families.len() + 1;
        f.push(jump(BPF_JEQ_K, libc::SYS_socket as u32, 0, block as u8));
        f.push(stmt(BPF_LD_W_ABS, ARG0));
        for family in families {
            f.push(jump(BPF_JEQ_K, *family as u32, 0, 1));
            f.push(stmt(BPF_RET_K, RET_ALLOW));
        }
        f.push(errno(libc::EACCES));
        f.push(stmt(BPF_RET_K, RET_ALLOW));
        Some(Filter { instructions: f })
    }

    /// Loads the filter into the calling thread (no_new_privs must be set). Async-signal-safe:
    /// it allocates nothing, so it runs between fork and exec.
    pub fn load(&self) -> std::io::Result<()> {
        let program = Program {
            len: self.instructions.len() as u16,
            filter: self.instructions.as_ptr(),
        };
        // SAFETY: the program points at instructions that live as long as `self`.
        let done = unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                SECCOMP_SET_MODE_FILTER,
                0,
                &program as *const Program,
            )
        };
        if done != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
}

/// Whether this kernel and build can filter system calls.
pub fn available() -> bool {
    if AUDIT_ARCH.is_none() {
        return false;
    }
    let action: u32 = RET_ERRNO;
    // SAFETY: asks whether an action exists; reads the u32 it is given.
    let answer = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            SECCOMP_GET_ACTION_AVAIL,
            0,
            &action as *const u32,
        )
    };
    answer == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a BPF program over one `seccomp_data` the way the kernel would (only the
    /// instructions the filter uses).
    fn run(filter: &Filter, nr: u32, arch: u32, arg0: u32) -> u32 {
        let word = |offset: u32| match offset {
            NR => nr,
            ARCH => arch,
            ARG0 | ARG1 | ARG2 => arg0,
            other => panic!("unexpected load at {other}"),
        };
        let (mut pc, mut a) = (0usize, 0u32);
        loop {
            let i = filter.instructions[pc];
            match i.code {
                BPF_LD_W_ABS => a = word(i.k),
                BPF_ALU_AND_K => a &= i.k,
                BPF_RET_K => return i.k,
                BPF_JEQ_K | BPF_JGE_K | BPF_JSET_K => {
                    let taken = match i.code {
                        BPF_JEQ_K => a == i.k,
                        BPF_JGE_K => a >= i.k,
                        _ => a & i.k != 0,
                    };
                    pc += if taken { i.jt as usize } else { i.jf as usize };
                }
                other => panic!("unexpected instruction {other:#x}"),
            }
            pc += 1;
        }
    }

    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn sockets_are_refused_by_family_and_the_rest_allowed() {
        let arch = AUDIT_ARCH.unwrap();
        let socket = libc::SYS_socket as u32;
        let eacces = RET_ERRNO | libc::EACCES as u32;
        let rules = |network, root, namespace, writes| {
            Filter::new(Rules {
                network,
                root,
                namespace,
                writes,
            })
            .unwrap()
        };
        let offline = rules(false, false, true, true);
        let online = rules(true, false, true, true);
        let as_root = rules(false, true, true, true);
        let alone = rules(false, false, false, false);
        let memfd = libc::SYS_memfd_create as u32;
        assert_eq!(
            run(&offline, memfd, arch, 0),
            RET_ERRNO | libc::EPERM as u32
        );
        assert_eq!(run(&offline, memfd, arch, MFD_NOEXEC_SEAL | 1), RET_ALLOW);
        // Without a namespace: no System V IPC, and a read-only tool changes no mode or time.
        for nr in [
            libc::SYS_shmget,
            libc::SYS_msgget,
            libc::SYS_semop,
            libc::SYS_utimensat,
        ] {
            assert_eq!(
                run(&alone, nr as u32, arch, 0),
                RET_ERRNO | libc::EPERM as u32
            );
            assert_eq!(run(&offline, nr as u32, arch, 0o644), RET_ALLOW);
        }
        for family in [
            libc::AF_UNIX,
            libc::AF_INET,
            libc::AF_INET6,
            libc::AF_PACKET,
        ] {
            assert_eq!(run(&offline, socket, arch, family as u32), eacces);
        }
        assert_eq!(run(&online, socket, arch, libc::AF_INET as u32), RET_ALLOW);
        assert_eq!(run(&online, socket, arch, libc::AF_INET6 as u32), RET_ALLOW);
        assert_eq!(run(&online, socket, arch, libc::AF_UNIX as u32), eacces);
        assert_eq!(run(&online, socket, arch, libc::AF_PACKET as u32), eacces);
        let eperm = RET_ERRNO | libc::EPERM as u32;
        assert_eq!(
            run(&online, libc::SYS_io_uring_setup as u32, arch, 0),
            eperm
        );
        assert_eq!(run(&online, libc::SYS_unshare as u32, arch, 0), eperm);
        let clone = libc::SYS_clone as u32;
        assert_eq!(
            run(&offline, clone, arch, libc::CLONE_NEWUSER as u32),
            eperm
        );
        assert_eq!(
            run(
                &offline,
                clone,
                arch,
                (libc::CLONE_VM | libc::SIGCHLD) as u32
            ),
            RET_ALLOW
        );
        assert_eq!(
            run(&offline, libc::SYS_clone3 as u32, arch, 0),
            RET_ERRNO | libc::ENOSYS as u32
        );
        for allowed in [libc::SYS_read, libc::SYS_openat] {
            assert_eq!(run(&offline, allowed as u32, arch, 0), RET_ALLOW);
        }
        // (The test machine feeds the same word as the first and the second argument.)
        let pair = libc::SYS_socketpair as u32;
        let stream = (libc::SOCK_STREAM | libc::SOCK_CLOEXEC) as u32;
        assert_eq!(run(&offline, pair, arch, stream), RET_ALLOW);
        assert_eq!(run(&offline, pair, arch, libc::SOCK_DGRAM as u32), eacces);
        let fchmod = libc::SYS_fchmod as u32;
        assert_eq!(run(&offline, fchmod, arch, 0o644), RET_ALLOW);
        assert_eq!(run(&offline, fchmod, arch, 0o4755), eperm);
        assert_eq!(run(&offline, fchmod, arch, 0o666), eperm);
        let fchmodat = libc::SYS_fchmodat as u32;
        assert_eq!(run(&offline, fchmodat, arch, 0o755), RET_ALLOW);
        assert_eq!(run(&offline, fchmodat, arch, 0o2755), eperm);
        assert_eq!(
            run(&as_root, fchmodat, arch, 0o644),
            eperm,
            "root changes no mode"
        );
        for refused in [
            libc::SYS_fchownat,
            libc::SYS_setsid,
            libc::SYS_setpgid,
            libc::SYS_fsetxattr,
        ] {
            assert_eq!(run(&offline, refused as u32, arch, 0), eperm);
        }
        assert_eq!(
            run(&offline, libc::SYS_read as u32, 0x4000_0003, 0),
            RET_KILL_PROCESS
        );
    }
}
