//! What running one program takes, read from the program itself when serving starts: the
//! interpreter a script names on its `#!` line (and the program `env` is asked to find), the
//! dynamic loader an ELF file names, the helper directory it runs its own parts from (git's
//! exec path, a `libexec/NAME`), and the install tree it reads its libraries from.

use std::io::Read;
use std::path::{Path, PathBuf};

/// How deep a chain of interpreters is followed (a script run by a script...).
const CHAIN_LIMIT: usize = 4;

/// A program needed to run a command: the path it is named by (a venv's `bin/python`, a
/// shim) and the file that path leads to.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub named: PathBuf,
    pub file: PathBuf,
}

/// What must be executable for `program` to run: itself, the interpreters of its `#!` line
/// (and the program `env` is asked to find, on `path`), and the dynamic loaders of every ELF
/// file among them; the program first. What runs a program must be a real one: a regular,
/// executable file reached without `/proc` (a `#!` line naming a key file, or
/// `/proc/self/cwd/...`, would otherwise make that file readable): else the error names the
/// file and its `#!` line.
pub fn runnable(
    program: &Path,
    path: Option<&std::ffi::OsStr>,
    cwd: &Path,
) -> Result<Vec<Found>, super::PolicyError> {
    let mut found: Vec<Found> = Vec::new();
    let mut next = vec![program.to_path_buf()];
    for _ in 0..CHAIN_LIMIT {
        let mut more = Vec::new();
        for named in next.drain(..) {
            let Ok(file) = std::fs::canonicalize(&named) else {
                continue;
            };
            if found.iter().any(|f| f.named == named) {
                continue;
            }
            if let Some(loader) = elf_interpreter(&file) {
                real_program(&loader).map_err(|why| super::PolicyError::Loader {
                    file: file.clone(),
                    loader: loader.clone(),
                    why,
                })?;
                more.push(loader);
            }
            if let Some((line, interpreter, argument)) = shebang(&file) {
                real_program(&interpreter).map_err(|why| super::PolicyError::Interpreter {
                    file: file.clone(),
                    line: line.clone(),
                    interpreter: interpreter.clone(),
                    why,
                })?;
                let via_env = interpreter.file_name().is_some_and(|n| n == "env");
                more.push(interpreter);
                if let Some(name) = argument.filter(|_| via_env) {
                    if let Ok(target) = which::which_in(name, path, cwd) {
                        more.push(target);
                    }
                }
            }
            found.push(Found { named, file });
        }
        if more.is_empty() {
            break;
        }
        next = more;
    }
    Ok(found)
}

/// Whether what a `#!` line or an ELF header names is a program: a regular, executable file,
/// named and found outside `/proc`.
fn real_program(named: &Path) -> Result<(), &'static str> {
    if named.starts_with("/proc") {
        return Err("is reached through /proc, not a program");
    }
    let file = std::fs::canonicalize(named).map_err(|_| "does not exist")?;
    if file.starts_with("/proc") {
        return Err("is reached through /proc, not a program");
    }
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(&file).map_err(|_| "cannot be read")?;
    if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
        return Err("is not an executable program");
    }
    Ok(())
}

/// The `#!` line, the program it runs, and for `env` the first word that is not an option.
fn shebang(file: &Path) -> Option<(String, PathBuf, Option<String>)> {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(file).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let line = std::str::from_utf8(line).ok()?;
    let mut words = line.split_whitespace();
    let interpreter = PathBuf::from(words.next()?);
    let argument = words
        .find(|w| !w.starts_with('-') && !w.contains('='))
        .map(str::to_string);
    interpreter
        .is_absolute()
        .then(|| (format!("#!{}", line.trim()), interpreter, argument))
}

/// The `PT_INTERP` of an ELF file: the dynamic loader the kernel opens to run it.
fn elf_interpreter(file: &Path) -> Option<PathBuf> {
    let mut f = std::fs::File::open(file).ok()?;
    let mut header = [0u8; 64];
    f.read_exact(&mut header).ok()?;
    if &header[..4] != b"\x7fELF" {
        return None;
    }
    let wide = header[4] == 2;
    let little = header[5] == 1;
    let int = |bytes: &[u8]| -> u64 {
        let mut value = 0u64;
        for (i, b) in bytes.iter().enumerate() {
            let shift = if little { i } else { bytes.len() - 1 - i };
            value |= (*b as u64) << (8 * shift);
        }
        value
    };
    let (phoff, phentsize, phnum) = if wide {
        (
            int(&header[32..40]),
            int(&header[54..56]),
            int(&header[56..58]),
        )
    } else {
        (
            int(&header[28..32]),
            int(&header[42..44]),
            int(&header[44..46]),
        )
    };
    if phentsize == 0 || phnum > 256 {
        return None;
    }
    let mut table = vec![0u8; (phentsize * phnum) as usize];
    use std::io::Seek;
    f.seek(std::io::SeekFrom::Start(phoff)).ok()?;
    f.read_exact(&mut table).ok()?;
    for entry in table.chunks(phentsize as usize) {
        if int(&entry[0..4]) != 3 {
            continue; // not PT_INTERP
        }
        let (offset, size) = if wide {
            (int(&entry[8..16]), int(&entry[32..40]))
        } else {
            (int(&entry[4..8]), int(&entry[16..20]))
        };
        if size == 0 || size > 4096 {
            return None;
        }
        let mut name = vec![0u8; size as usize];
        f.seek(std::io::SeekFrom::Start(offset)).ok()?;
        f.read_exact(&mut name).ok()?;
        let name = name.split(|&b| b == 0).next()?;
        let path = PathBuf::from(std::str::from_utf8(name).ok()?);
        return Some(path);
    }
    None
}

/// The directories of programs `program` runs as parts of itself: git's exec path, else
/// `PREFIX/libexec/NAME` (`libexec/git-core` for a git) where it exists. Only the git found on
/// `path` (absolute entries only) is asked for its exec path, in `/` with no configuration in
/// effect: a program of the served tree that calls itself git is never run to find out.
pub fn helper_dirs(program: &Path, path: Option<&std::ffi::OsStr>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let name = program.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let file = std::fs::canonicalize(program).ok();
    if name == "git" && file.is_some() && file == system_git(path) {
        let asked = std::process::Command::new(program)
            .arg("--exec-path")
            .env_clear()
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .current_dir("/")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output();
        if let Some(out) = asked.ok().filter(|o| o.status.success()) {
            let text = String::from_utf8_lossy(&out.stdout).trim().to_string();
            if let Ok(dir) = std::fs::canonicalize(text) {
                dirs.push(dir);
            }
        }
    }
    if let Some(prefix) = file.and_then(|p| p.parent()?.parent().map(Path::to_path_buf)) {
        let helpers = if name == "git" { "git-core" } else { name };
        if let Ok(dir) = std::fs::canonicalize(prefix.join("libexec").join(helpers)) {
            if dir.is_dir() && !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
    }
    dirs
}

/// The git a shell would run: the first on the absolute entries of `path`.
fn system_git(path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    let path = path?;
    let absolute: Vec<PathBuf> = std::env::split_paths(path)
        .filter(|p| p.is_absolute())
        .collect();
    let joined = std::env::join_paths(absolute).ok()?;
    let found = which::which_in("git", Some(joined), "/").ok()?;
    std::fs::canonicalize(found).ok()
}

/// Where a program reads its own files from: its directory, or the install prefix above a
/// `bin`, `sbin` or `libexec` directory (a prefix has a `lib` or `share` beside it), but
/// never the home directory, a directory above it or one just below it (`~/.cargo`,
/// `~/.local` hold more than one program's files).
/// `program` is taken where it is named: a link's own directory counts (a venv's
/// `bin/python` links elsewhere, and the venv is what it reads).
/// `derived`: the program is what runs another (an interpreter, a loader), and only a program
/// directory (`bin`, `sbin`, `libexec`) or the prefix above it is its tree.
pub fn install_tree(program: &Path, home: &Path, derived: bool) -> Option<PathBuf> {
    let dir = std::fs::canonicalize(program.parent()?).ok()?;
    let is_program_dir = dir
        .file_name()
        .is_some_and(|n| matches!(n.to_str(), Some("bin" | "sbin" | "libexec")));
    if derived && !is_program_dir {
        return None;
    }
    let prefix = dir
        .file_name()
        .filter(|n| matches!(n.to_str(), Some("bin" | "sbin" | "libexec")))
        .and(dir.parent())
        .filter(|p| ["lib", "lib64", "share"].iter().any(|l| p.join(l).is_dir()))
        .map(Path::to_path_buf);
    // `/`, the home directory and the directories above it.
    let everything = |p: &Path| p.parent().is_none() || home.starts_with(p);
    match prefix {
        Some(prefix) if !everything(&prefix) && prefix.parent() != Some(home) => Some(prefix),
        _ if !everything(&dir) => Some(dir),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_elf_program_needs_its_loader() {
        let ls = which::which("ls").unwrap();
        let found = runnable(&ls, None, Path::new("/")).unwrap();
        assert_eq!(found[0].file, std::fs::canonicalize(&ls).unwrap());
        assert!(
            found[1..]
                .iter()
                .any(|f| f.file.to_string_lossy().contains("ld-")),
            "{found:?}"
        );
    }

    #[test]
    fn a_script_needs_its_interpreter_and_what_env_finds() {
        let dir = std::env::temp_dir().join(format!("ferry-programs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("tool");
        std::fs::write(&script, "#!/usr/bin/env -S sh -e\necho hi\n").unwrap();
        let path = std::env::var_os("PATH");
        let files: Vec<PathBuf> = runnable(&script, path.as_deref(), &dir)
            .unwrap()
            .into_iter()
            .map(|f| f.file)
            .collect();
        let sh = std::fs::canonicalize(which::which("sh").unwrap()).unwrap();
        let env = std::fs::canonicalize("/usr/bin/env").unwrap();
        assert!(files.contains(&env), "{files:?}");
        assert!(files.contains(&sh), "{files:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_install_tree_stops_short_of_the_home_directory() {
        let dir = std::env::temp_dir().join(format!("ferry-tree-{}", std::process::id()));
        let home = dir.join("home");
        for sub in [
            "home/.cargo/bin",
            "home/.nvm/v20/bin",
            "home/.nvm/v20/lib",
            "opt/tool/bin",
            "opt/tool/share",
            "scratch/bin",
        ] {
            std::fs::create_dir_all(dir.join(sub)).unwrap();
        }
        let file = |p: &str| {
            let path = dir.join(p);
            std::fs::write(&path, "").unwrap();
            path
        };
        let home = std::fs::canonicalize(home).unwrap();
        let at = |p: &str| std::fs::canonicalize(dir.join(p)).unwrap();
        assert_eq!(
            install_tree(&file("home/.cargo/bin/rg"), &home, false),
            Some(at("home/.cargo/bin"))
        );
        assert_eq!(
            install_tree(&file("home/.nvm/v20/bin/node"), &home, false),
            Some(at("home/.nvm/v20"))
        );
        assert_eq!(
            install_tree(&file("opt/tool/bin/tool"), &home, false),
            Some(at("opt/tool"))
        );
        assert_eq!(install_tree(&file("home/script"), &home, false), None);
        // What runs another program grants a tree only from a program directory.
        std::fs::create_dir_all(dir.join("keys")).unwrap();
        assert_eq!(install_tree(&file("keys/key"), &home, true), None);
        assert_eq!(
            install_tree(&file("opt/tool/bin/tool"), &home, true),
            Some(at("opt/tool"))
        );
        // A `bin` with no install prefix around it: only itself.
        assert_eq!(
            install_tree(&file("scratch/bin/tool"), &home, false),
            Some(at("scratch/bin"))
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
