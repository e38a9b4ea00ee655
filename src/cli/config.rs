//! The configured servers: `ferry` (the list), `add`, `remove`, `import`, and `trust` for a
//! repository's project files.

use super::terminal::{emit, warn};
use crate::client::catalog;
use crate::client::config::{self, check_server_name, project_files, Registry, ServerSpec};
use crate::client::import::record::{self, Change, ImportRecord, Imported};
use crate::client::import::repository::repository_file;
use crate::client::import::translate::translate_entry;
use crate::client::import::{read_servers, ImportSource};
use crate::client::trust::{unsafe_reason, TrustState, TrustStore};
use crate::client::CacheEntry;
use crate::words::closest;
use crate::{Error, Outcome, Result};
use clap::ArgMatches;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};

/// Loads the registry for the working directory, printing its warnings.
pub fn load_registry() -> Result<Registry> {
    let cwd = std::env::current_dir().map_err(|e| {
        Error::usage(format!("cannot read the current directory: {e}"))
            .with_hint("cd into a directory that exists")
    })?;
    let registry = Registry::load(&cwd)?;
    let notices = config::first_time(&registry.notices);
    for warning in registry.warnings.iter().chain(&notices) {
        warn(&format!("warning: {warning}"));
    }
    Ok(registry)
}

/// The error for a name that is not a configured server; `command` is the ferry command it
/// may be a typo of.
pub fn unknown_server(name: &str, registry: &Registry, command: Option<&str>) -> Error {
    let shown = crate::render::text::escape_line(name);
    if config::RESERVED_NAMES.contains(&name) {
        // Reserved for ferry, so never a server, but not a command either.
        return Error::usage(format!("`ferry {shown}` is not a command")).with_hint(
            "call a tool with `ferry SERVER TOOL [ARGS]`; `ferry --help` lists the commands",
        );
    }
    if let Some(why) = registry.set_aside(name) {
        return Error::usage(format!("server {shown:?} is {why}"))
            .with_hint("`ferry config` shows where it is configured");
    }
    let server = closest(name, registry.servers.iter().map(|s| s.name.as_str()));
    match (server, command) {
        (Some(best), Some(command)) => Error::usage(format!("unknown server or command {shown:?}"))
            .with_hint(format!("did you mean `ferry {best}` or `ferry {command}`? `ferry` lists the configured servers, `ferry --help` the commands")),
        (Some(best), None) => Error::usage(format!("unknown server {shown:?}"))
            .with_hint(format!("did you mean `ferry {best}`? `ferry` lists the configured servers")),
        (None, Some(command)) => Error::usage(format!("unknown server or command {shown:?}"))
            .with_hint(format!("did you mean `ferry {command}`? `ferry --help` lists the commands, `ferry` the configured servers")),
        (None, None) => Error::usage(format!("unknown server {shown:?}"))
            .with_hint("`ferry` lists the configured servers; add one with `ferry add NAME -- COMMAND` or `ferry add NAME URL`"),
    }
}

/// `ferry`: one line per server: name, transport, tool count, warm or cold, command.
pub fn list_servers() -> Result<Outcome> {
    let registry = load_registry()?;
    if registry.servers.is_empty() {
        warn("no servers configured");
        warn("hint: `ferry add NAME -- COMMAND`, `ferry add NAME URL`, `ferry import claude`, or try `ferry demo`");
        return Ok(Outcome::Success);
    }
    let width = registry
        .servers
        .iter()
        .map(|s| s.name.chars().count())
        .max()
        .unwrap_or(0);
    // Asked once, briefly; with no daemon every server is cold.
    let warm = crate::daemon::warm_identities().unwrap_or_default();
    let mut out = String::new();
    for spec in &registry.servers {
        let tools = match CacheEntry::load_stable(spec).filter(CacheEntry::has_tools) {
            Some(entry) => format!("{} tools", catalog::usable_tools(spec, entry).0.len()),
            None => "? tools".to_string(),
        };
        let mut line = format!(
            "{:width$}  {:5}  {:>9}  {}  {}",
            spec.name,
            spec.transport_name(),
            tools,
            if warm.contains(&spec.identity()) {
                "warm"
            } else {
                "cold"
            },
            spec.target_text()
        );
        if let Some((file, state)) = &spec.project {
            if *state != TrustState::Trusted {
                line.push_str(&format!("  ({}: {})", file.display(), state.label()));
            }
        }
        out.push_str(&crate::render::text::escape_line(&line));
        out.push('\n');
    }
    emit(&out)?;
    Ok(Outcome::Success)
}

/// `ferry config`: the files servers are read from here, one a line: the user's file and
/// the project files that apply, with their trust.
pub fn show_config() -> Result<Outcome> {
    let registry = load_registry()?;
    let user = config::user_config_path();
    let mine = registry.servers.iter().filter(|s| s.project.is_none());
    let names: Vec<&str> = mine.map(|s| s.name.as_str()).collect();
    let mut out = match std::fs::read(&user) {
        Ok(_) if names.is_empty() => format!("{}  no servers\n", user.display()),
        Ok(_) => format!("{}  servers: {}\n", user.display(), names.join(", ")),
        Err(_) => format!("{}  not written yet\n", user.display()),
    };
    for (file, state) in &registry.project_files {
        let servers = std::fs::read(file)
            .map(|bytes| describe_servers(file, &bytes))
            .unwrap_or_else(|e| format!("unreadable: {e}"));
        out.push_str(&format!(
            "{}  {} ({servers})\n",
            file.display(),
            state.label()
        ));
    }
    emit(&crate::render::text::escape_text(&out))?;
    Ok(Outcome::Success)
}

/// `ferry add NAME -- COMMAND [ARGS...]` or `ferry add NAME URL [--header K:V]`.
pub fn add(matches: &ArgMatches) -> Result<Outcome> {
    let usage = || {
        Error::usage("ferry add needs a command after -- or a URL")
            .with_hint("ferry add NAME -- COMMAND [ARGS...]  or  ferry add NAME URL [--header K:V]")
    };
    let name = matches
        .get_one::<String>("name")
        .cloned()
        .unwrap_or_default();
    check_server_name(&name)?;
    let strings = |id: &str| super::strings(matches, id);
    let command = strings("command");
    let url = matches.get_one::<String>("url");
    let mut entry = Map::new();
    match (url, command.split_first()) {
        (Some(_), Some(_)) => {
            return Err(
                Error::usage("give either a URL or a command after --, not both")
                    .with_hint("ferry add NAME URL  or  ferry add NAME -- COMMAND [ARGS...]"),
            )
        }
        (Some(url), None) => {
            if !(url.starts_with("http://") || url.starts_with("https://")) {
                return Err(Error::usage(format!("unexpected {url:?}")).with_hint(
                    "put the server's command after --: ferry add NAME -- COMMAND ARGS",
                ));
            }
            // Checked now, not at the first call; a ${VAR} in it is only known then.
            if !url.contains("${") {
                let host = reqwest::Url::parse(url)
                    .map_err(|e| e.to_string())
                    .and_then(|u| match u.host_str() {
                        Some(host) if !host.is_empty() => Ok(()),
                        _ => Err("it names no host".to_string()),
                    });
                if let Err(why) = host {
                    return Err(
                        Error::usage(format!("invalid URL {url:?}: {why}")).with_hint(
                            "give the server's whole URL: ferry add NAME https://host/mcp",
                        ),
                    );
                }
            }
            entry.insert("url".into(), json!(url));
            let mut headers = Map::new();
            for pair in strings("header") {
                let (k, v) = pair.split_once(':').ok_or_else(|| {
                    Error::usage(format!("--header expects NAME:VALUE, not {pair:?}"))
                        .with_hint("for example: --header 'Authorization: Bearer ${TOKEN}'")
                })?;
                headers.insert(k.trim().to_string(), json!(v.trim()));
            }
            if !headers.is_empty() {
                entry.insert("headers".into(), Value::Object(headers));
            }
            if let Some(id) = matches.get_one::<String>("client-id") {
                let mut oauth = Map::new();
                oauth.insert("clientId".into(), json!(id));
                if let Some(secret) = matches.get_one::<String>("client-secret") {
                    oauth.insert("clientSecret".into(), json!(secret));
                }
                if let Some(key) = matches.get_one::<String>("private-key") {
                    // A file is checked now; a ${VAR} is read when used.
                    if !key.contains("${") {
                        crate::auth::jwt::SigningKey::from_config(key)?;
                    }
                    oauth.insert("privateKey".into(), json!(key));
                }
                entry.insert("oauth".into(), Value::Object(oauth));
            }
            if !strings("env").is_empty() {
                return Err(
                    Error::usage("--env is for stdio servers (a command after --)")
                        .with_hint("use --header for a URL server"),
                );
            }
        }
        (None, Some((program, args))) => {
            if matches.get_one::<String>("client-id").is_some() {
                return Err(Error::usage("--client-id is for URL servers")
                    .with_hint("a command's credentials go in --env"));
            }
            entry.insert("command".into(), json!(program));
            entry.insert("args".into(), json!(args));
            let mut env = Map::new();
            for pair in strings("env") {
                let (k, v) = pair.split_once('=').ok_or_else(|| {
                    Error::usage(format!("--env expects KEY=VALUE, not {pair:?}"))
                        .with_hint("for example: --env API_KEY=${API_KEY}")
                })?;
                env.insert(k.to_string(), json!(v));
            }
            if !env.is_empty() {
                entry.insert("env".into(), Value::Object(env));
            }
            if !strings("header").is_empty() {
                return Err(Error::usage("--header is for URL servers")
                    .with_hint("use --env for a stdio server"));
            }
        }
        (None, None) => return Err(usage()),
    }
    // Validate before writing, so a broken entry never lands in the file.
    ServerSpec::from_entry(&name, &entry, "the command line")?;
    let skipped = config::write_user_servers(&[(name.clone(), entry)], matches.get_flag("force"))?;
    if !skipped.is_empty() {
        return Err(Error::usage(format!("server {name:?} already exists"))
            .with_hint("use --force to replace it, or `ferry remove` first"));
    }
    emit(&format!(
        "added {name} to {}\n",
        config::user_config_path().display()
    ))?;
    Ok(Outcome::Success)
}

/// `ferry remove NAME`.
pub fn remove(matches: &ArgMatches) -> Result<Outcome> {
    let names = super::strings(matches, "name");
    let mut missing = Vec::new();
    for name in &names {
        if config::remove_user_server(name)? {
            emit(&format!(
                "removed {name} from {}\n",
                config::user_config_path().display()
            ))?;
        } else {
            missing.push(format!("{:?}", crate::render::text::escape_line(name)));
        }
    }
    if missing.is_empty() {
        return Ok(Outcome::Success);
    }
    Err(Error::usage(format!(
        "no server {} in {}",
        missing.join(", "),
        config::user_config_path().display()
    ))
    .with_hint("servers from project files (.mcp.json...) are removed by editing those files"))
}

/// `ferry import HOST|PATH [--force]` (a host of [`HOSTS`](crate::client::import::HOSTS)): the
/// user's own configuration, each server with the file it came from and the hosts' variables
/// translated; the repository's files are named, not imported, and one named by path is
/// refused for `ferry trust`. `--force` re-syncs servers the host changed.
pub fn import(matches: &ArgMatches) -> Result<Outcome> {
    let word = matches
        .get_one::<String>("source")
        .cloned()
        .unwrap_or_default();
    let force = matches.get_flag("force");
    let cwd = std::env::current_dir().map_err(|e| {
        Error::usage(format!("cannot read the current directory: {e}"))
            .with_hint("cd into a directory that exists")
    })?;
    let home = crate::paths::home_dir();
    let source = ImportSource::parse(&word);
    // The record knows a path by where it points, wherever it was named from.
    let mut source_key = word.clone();
    if let ImportSource::File(_) = &source {
        if let Some(path) = source.paths(&home, &cwd).into_iter().next() {
            if let Some(file) = repository_file(&path, &home).filter(|_| path.is_file()) {
                return Err(Error::usage(format!(
                    "{} is a repository's file, not your own config: its servers are not copied into your config, where they would start without `ferry trust`",
                    crate::render::text::escape_line(&file.path.display().to_string())
                ))
                .with_hint(crate::render::text::escape_line(&file.hint()).into_owned()));
            }
            source_key = std::fs::canonicalize(&path)
                .unwrap_or(path)
                .display()
                .to_string();
        }
    }
    let found = read_servers(&source, &home, &cwd).map_err(|why| {
        Error::usage(why.to_string()).with_hint(format!(
            "name a host ({}) or a config file",
            crate::client::import::host_words()
        ))
    })?;
    for (file, names) in &found.left_out {
        if names.is_empty() {
            continue;
        }
        let read_here = config::PROJECT_FILES
            .iter()
            .any(|p| Path::new(file).ends_with(p));
        let after = if read_here {
            "ferry reads it in place, and starts its servers once you run `ferry trust` here"
        } else {
            "a repository's servers are not copied into your config"
        };
        warn(&crate::render::text::escape_line(&format!(
            "note: not imported: {file} is this repository's (servers: {}); {after}",
            names.join(", ")
        )));
    }
    let mut accepted = Vec::new();
    let mut origins = Vec::new();
    let mut host_values = Vec::new();
    for (name, mut entry, file) in found.servers {
        if let Err(e) = check_server_name(&name) {
            warn(&format!("skipped {name}: {}", e.message));
            continue;
        }
        if let Some(kind) = entry.get("transport").and_then(Value::as_str) {
            warn(&format!(
                "warning: {name} uses the {kind} transport; ferry speaks Streamable HTTP to it"
            ));
        }
        let values = translate_entry(&mut entry);
        if !values.is_empty() {
            host_values.push((name.clone(), values));
        }
        origins.push(file);
        accepted.push((name, entry));
    }

    let path = config::user_config_path();
    let current = config::read_json(&path)?;
    let configured = current
        .as_ref()
        .and_then(|doc| doc.get("mcpServers"))
        .and_then(Value::as_object);
    let changes: Vec<Change> = accepted
        .iter()
        .map(|(name, entry)| record::change(configured.and_then(|c| c.get(name)), entry, force))
        .collect();
    let writes: Vec<(String, Map<String, Value>)> = accepted
        .iter()
        .zip(&changes)
        .filter(|(_, c)| matches!(c, Change::Added | Change::Updated))
        .map(|(server, _)| server.clone())
        .collect();
    config::write_user_servers(&writes, true)?;

    let mut log = ImportRecord::load();
    let names: Vec<&str> = accepted.iter().map(|(n, _)| n.as_str()).collect();
    // A server removed since (`ferry remove`) is neither kept nor remembered.
    let (gone, removed): (Vec<_>, Vec<_>) = log
        .gone_from(&source_key, &names)
        .into_iter()
        .partition(|(name, _)| configured.is_some_and(|c| c.contains_key(name)));
    for (name, _) in &removed {
        log.servers.remove(name);
    }
    for (((name, entry), file), change) in accepted.iter().zip(&origins).zip(&changes) {
        if *change != Change::Kept {
            log.servers.insert(
                name.clone(),
                Imported {
                    source: source_key.clone(),
                    file: file.clone(),
                    entry: entry.clone(),
                },
            );
        }
    }
    if let Err(e) = log.save() {
        warn(&format!(
            "warning: cannot write {}: {e}; `ferry import --force` will not know what it imported",
            ImportRecord::path().display()
        ));
    }

    let width = accepted
        .iter()
        .map(|(n, _)| n.chars().count())
        .chain(gone.iter().map(|(n, _)| n.chars().count()))
        .max()
        .unwrap_or(0);
    let section = |wanted: Change| -> String {
        accepted
            .iter()
            .zip(&origins)
            .zip(&changes)
            .filter(|(_, c)| **c == wanted)
            .map(|(((name, _), file), _)| format!("  {name:width$}  from {file}\n"))
            .collect()
    };
    let count = writes.len();
    let mut out = format!(
        "imported {count} server(s) into {}{}\n{}",
        path.display(),
        if count > 0 { ":" } else { "" },
        section(Change::Added)
    );
    let updated = section(Change::Updated);
    if !updated.is_empty() {
        out.push_str(&format!("updated (the host's entry changed):\n{updated}"));
    }
    let unchanged = section(Change::Unchanged);
    if !unchanged.is_empty() {
        out.push_str(&format!("unchanged:\n{unchanged}"));
    }
    let kept = section(Change::Kept);
    if !kept.is_empty() {
        out.push_str(&format!(
            "kept existing (a server of that name is configured; `ferry import {word} --force` replaces it):\n{kept}"
        ));
    }
    if !gone.is_empty() {
        out.push_str("kept (imported before, no longer in the host's config; `ferry remove NAME` removes it):\n");
        for (name, file) in &gone {
            out.push_str(&format!("  {name:width$}  from {file}\n"));
        }
    }
    if !host_values.is_empty() {
        out.push_str("to set before calling them (only the host could supply these):\n");
        for (name, values) in &host_values {
            for value in values {
                out.push_str(&format!(
                    "  {name:width$}  export {}=...   # was {}, {}\n",
                    value.name, value.original, value.what
                ));
            }
        }
    }
    emit(&crate::render::text::escape_text(&out))?;
    Ok(Outcome::Success)
}

/// `ferry trust [FILE]`, `ferry trust --list`, `ferry trust --revoke [FILE]`. A bare `ferry
/// trust` trusts the nearest project file only, and lists the others that apply here.
pub fn trust(matches: &ArgMatches) -> Result<Outcome> {
    let mut store = TrustStore::load();
    if matches.get_flag("list") {
        if store.files.is_empty() {
            emit("no project files are trusted\n")?;
            return Ok(Outcome::Success);
        }
        let mut out = String::new();
        for file in &store.files {
            let state = match std::fs::read(&file.path) {
                Ok(_) if unsafe_reason(&file.path).is_some() => TrustState::Unsafe.label(),
                Ok(bytes) => store.state(&file.path, &bytes).label(),
                Err(_) => "missing",
            };
            out.push_str(&format!("{}  {state}\n", file.path.display()));
        }
        emit(&crate::render::text::escape_text(&out))?;
        return Ok(Outcome::Success);
    }
    let files: Vec<PathBuf> = match matches.get_one::<String>("file") {
        Some(file) => vec![PathBuf::from(file)],
        None => {
            let cwd = std::env::current_dir().map_err(|e| {
                Error::usage(format!("cannot read the current directory: {e}"))
                    .with_hint("cd into the repository first")
            })?;
            project_files(&cwd)
        }
    };
    let Some((nearest, others)) = files.split_first() else {
        return Err(Error::usage(
            "no project file (.mcp.json, .cursor/mcp.json, .vscode/mcp.json) here or up to the repository's root",
        )
        .with_hint("cd into the repository whose servers you want to allow"));
    };
    let mut out = String::new();
    if matches.get_flag("revoke") {
        for file in &files {
            let word = if store.revoke(file) {
                "revoked"
            } else {
                "was not trusted"
            };
            out.push_str(&format!("{}: {word}\n", file.display()));
        }
        store.save()?;
        emit(&crate::render::text::escape_text(&out))?;
        return Ok(Outcome::Success);
    }
    let bytes = std::fs::read(nearest).map_err(|e| {
        Error::usage(format!("cannot read {}: {e}", nearest.display()))
            .with_hint("give the path of a project file")
    })?;
    if let Some(reason) = unsafe_reason(nearest) {
        return Err(
            Error::usage(format!("cannot trust {}: {reason}", nearest.display())).with_hint(
                "trust covers only files you own, in directories only you can write (chmod go-w)",
            ),
        );
    }
    store.trust(nearest, &bytes);
    store.save()?;
    pin_trusted(nearest);
    out.push_str(&format!(
        "trusted {} ({})\n",
        nearest.display(),
        describe_servers(nearest, &bytes)
    ));
    if !others.is_empty() {
        out.push_str("other project files here, each trusted on its own (`ferry trust FILE`):\n");
        for file in others {
            let (state, servers) = match std::fs::read(file) {
                Ok(_) if unsafe_reason(file).is_some() => {
                    (TrustState::Unsafe.label(), String::new())
                }
                Ok(bytes) => (
                    store.state(file, &bytes).label(),
                    format!(" ({})", describe_servers(file, &bytes)),
                ),
                Err(_) => ("unreadable", String::new()),
            };
            out.push_str(&format!("  {}  {state}{servers}\n", file.display()));
        }
    }
    emit(&crate::render::text::escape_text(&out))?;
    Ok(Outcome::Success)
}

/// Pins the tools of a newly trusted file's servers as the cache holds them (a server never
/// listed is pinned at its first listing): what the user trusted is what later listings are
/// compared with.
fn pin_trusted(file: &Path) {
    let Ok(cwd) = std::env::current_dir() else {
        return;
    };
    let Ok(registry) = crate::client::Registry::load(&cwd) else {
        return;
    };
    for spec in &registry.servers {
        if spec.project.as_ref().is_some_and(|(path, _)| path == file) {
            if let Some(listing) = crate::client::catalog::Listing::load_stable(spec) {
                let (tools, _) = listing.usable(spec);
                let report =
                    crate::client::pins::observe(spec, &tools, &crate::client::pins::env_var);
                report.warnings().iter().for_each(|w| warn(w));
            }
        }
    }
}

/// "servers: a, b" for a project file, so the user sees what they allowed.
fn describe_servers(file: &Path, bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let Ok(doc) = crate::client::import::parse_jsonc(text) else {
        return "not valid JSON".into();
    };
    let cwd = file.parent().unwrap_or(Path::new("."));
    let names: Vec<String> = crate::client::import::servers_in_json(&doc, cwd)
        .into_iter()
        .map(|(name, _)| crate::render::text::escape_line(&name).into_owned())
        .collect();
    if names.is_empty() {
        "no servers".into()
    } else {
        format!("servers: {}", names.join(", "))
    }
}
