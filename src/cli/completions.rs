//! `ferry completions bash|zsh|fish`: a completion script generated from the one options
//! table (clap_complete), with configured server names, their cached tool names and a tool's
//! flags completed through `ferry __complete`, which reads only the config and the cache.
//! Hidden commands (`__complete` itself) are never offered.

use super::terminal::emit;
use crate::client::{catalog, CacheEntry, Registry};
use crate::{Error, Outcome, Result};
use clap::ArgMatches;
use clap_complete::Shell;

const BASH_DYNAMIC: &str = r#"
# Server names as the first word, their cached tool names as the second, a tool's flags after.
_ferry_dynamic() {
    local cur="${COMP_WORDS[COMP_CWORD]}"
    if [[ $COMP_CWORD -eq 1 && "$cur" != -* ]]; then
        _ferry "$@"
        COMPREPLY+=( $(compgen -W "$(ferry __complete servers 2>/dev/null)" -- "$cur") )
        return 0
    fi
    if [[ $COMP_CWORD -eq 2 && "$cur" != -* ]]; then
        local tools
        tools="$(ferry __complete tools "${COMP_WORDS[1]}" 2>/dev/null)"
        if [[ -n "$tools" ]]; then
            COMPREPLY=( $(compgen -W "$tools" -- "$cur") )
            return 0
        fi
    fi
    # A tool's flags after its name.
    if [[ $COMP_CWORD -ge 3 && "$cur" == -* ]]; then
        local flags
        flags="$(ferry __complete flags "${COMP_WORDS[1]}" "${COMP_WORDS[2]}" 2>/dev/null)"
        if [[ -n "$flags" ]]; then
            COMPREPLY=( $(compgen -W "$flags" -- "$cur") )
            return 0
        fi
    fi
    _ferry "$@"
}
complete -F _ferry_dynamic -o bashdefault -o default ferry
"#;

const ZSH_DYNAMIC: &str = r#"
# Server names as the first word, their cached tool names as the second, a tool's flags after.
_ferry_dynamic() {
    if (( CURRENT == 2 )) && [[ "$words[2]" != -* ]]; then
        local -a servers
        servers=(${(f)"$(ferry __complete servers 2>/dev/null)"})
        compadd -a servers
        _ferry "$@"
        return
    fi
    if (( CURRENT == 3 )) && [[ "$words[3]" != -* ]]; then
        local -a tools
        tools=(${(f)"$(ferry __complete tools "$words[2]" 2>/dev/null)"})
        if (( ${#tools} )); then
            compadd -a tools
            return
        fi
    fi
    if (( CURRENT >= 4 )) && [[ "$words[CURRENT]" == -* ]]; then
        local -a flags
        flags=(${(f)"$(ferry __complete flags "$words[2]" "$words[3]" 2>/dev/null)"})
        if (( ${#flags} )); then
            compadd -a flags
            return
        fi
    fi
    _ferry "$@"
}
compdef _ferry_dynamic ferry
"#;

const FISH_DYNAMIC: &str = r#"
# Server names as the first word, their cached tool names as the second, a tool's flags after.
complete -c ferry -n '__fish_use_subcommand' -f -a '(ferry __complete servers 2>/dev/null)'
complete -c ferry -n 'test (count (commandline -opc)) -eq 2' -f -a '(ferry __complete tools (commandline -opc)[2] 2>/dev/null)'
complete -c ferry -n 'test (count (commandline -opc)) -ge 3' -f -a '(ferry __complete flags (commandline -opc)[2] (commandline -opc)[3] 2>/dev/null)'
"#;

/// `ferry completions SHELL`.
pub fn completions(matches: &ArgMatches, table: clap::Command) -> Result<Outcome> {
    let Some(shell) = matches.get_one::<String>("shell").map(String::as_str) else {
        return Err(
            Error::usage("ferry completions needs a shell: bash, zsh or fish").with_hint(
                "for example: ferry completions bash > ~/.local/share/bash-completion/completions/ferry",
            ),
        );
    };
    let (kind, dynamic) = match shell {
        "zsh" => (Shell::Zsh, ZSH_DYNAMIC),
        "fish" => (Shell::Fish, FISH_DYNAMIC),
        _ => (Shell::Bash, BASH_DYNAMIC),
    };
    let mut script = Vec::new();
    clap_complete::generate(kind, &mut shown(table), "ferry", &mut script);
    let mut text = String::from_utf8_lossy(&script).into_owned();
    if kind == Shell::Zsh {
        // The generated script registers `_ferry` itself; ours wraps it.
        text = text.replace("compdef _ferry ferry", "");
    }
    text.push_str(dynamic);
    emit(&text)?;
    Ok(Outcome::Success)
}

/// The table as completion offers it: the same options, the commands a person types (the
/// hidden ones, which clap_complete would list, left out).
fn shown(table: clap::Command) -> clap::Command {
    let mut shown = clap::Command::new("ferry").version(env!("CARGO_PKG_VERSION"));
    for arg in table.get_arguments() {
        shown = shown.arg(arg.clone());
    }
    for sub in table.get_subcommands().filter(|s| !s.is_hide_set()) {
        shown = shown.subcommand(sub.clone());
    }
    shown
}

/// `ferry __complete servers`, `ferry __complete tools SERVER` and `ferry __complete flags
/// SERVER TOOL`: names, one per line, from the config and the cache only. Failures print
/// nothing: a completion never shows errors.
pub fn complete(matches: &ArgMatches) -> Result<Outcome> {
    let Ok(cwd) = std::env::current_dir() else {
        return Ok(Outcome::Success);
    };
    let Ok(registry) = Registry::load(&cwd) else {
        return Ok(Outcome::Success);
    };
    let what = matches.get_one::<String>("what").map(String::as_str);
    let mut out = String::new();
    match what {
        Some("servers") => {
            for spec in &registry.servers {
                out.push_str(&spec.name);
                out.push('\n');
            }
        }
        Some("flags") => {
            let server = matches.get_one::<String>("server").map(String::as_str);
            let tool = matches.get_one::<String>("tool");
            if let (Some(spec), Some(tool)) = (server.and_then(|s| registry.get(s)), tool) {
                if let Some(entry) = CacheEntry::load_stable(spec).filter(CacheEntry::has_tools) {
                    let tools = catalog::usable_tools(spec, entry).0;
                    if let Some(tool) = tools.iter().find(|t| &t.name == tool) {
                        let schema =
                            crate::schema::ToolSchema::from_input_schema(&tool.input_schema);
                        for prop in &schema.props {
                            if !prop
                                .name
                                .chars()
                                .any(|c| c.is_whitespace() || c.is_control())
                            {
                                out.push_str(&format!("--{}\n", prop.name));
                            }
                        }
                        out.push_str("--help\n");
                    }
                }
            }
        }
        Some("tools") => {
            let server = matches.get_one::<String>("server").map(String::as_str);
            if let Some(spec) = server.and_then(|s| registry.get(s)) {
                if let Some(entry) = CacheEntry::load_stable(spec).filter(CacheEntry::has_tools) {
                    for tool in catalog::usable_tools(spec, entry).0 {
                        if !tool
                            .name
                            .chars()
                            .any(|c| c.is_whitespace() || c.is_control())
                        {
                            out.push_str(&tool.name);
                            out.push('\n');
                        }
                    }
                }
            }
        }
        _ => {}
    }
    emit(&out)?;
    Ok(Outcome::Success)
}
