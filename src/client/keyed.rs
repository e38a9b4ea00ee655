//! Which of a caller's variables give a warm server of its own.
//!
//! A warm server is shared by every call that would start the same server. A variable set per
//! call (`REQ_ID=$RANDOM`), by the shell (`SHLVL`, `OLDPWD`, `_`) or by the terminal
//! (`TMUX_PANE`, `WINDOWID`) cannot change what a server does, and keying on it starts a
//! server per call. A setting or a credential (`AWS_PROFILE`, `GITHUB_TOKEN`, `NODE_OPTIONS`,
//! `PATH`) can, so a caller with another one gets its own server, as a cold call would.
//!
//! The rule, as small pure functions over names: a variable keys the server when the server's
//! config names it (`${NAME}`), or when its name reads as a setting ([`reads_as_setting`]);
//! never when it only describes the shell or terminal ([`terminal_only`]). A server still gets
//! every variable of the caller that started it.

/// Variables that describe the calling shell or terminal, not what a server does: they never
/// key a warm server, even when their names read as settings (`TERM_SESSION_ID`).
const TERMINAL_ONLY: [&str; 22] = [
    "PWD",
    "OLDPWD",
    "SHLVL",
    "_",
    "TMUX",
    "TMUX_PANE",
    "STY",
    "WINDOW",
    "WINDOWID",
    "TERM_SESSION_ID",
    "TERM_PROGRAM",
    "TERM_PROGRAM_VERSION",
    "COLUMNS",
    "LINES",
    "COLORTERM",
    "SECURITYSESSIONID",
    "SSH_TTY",
    "GPG_TTY",
    "PS1",
    "PROMPT_COMMAND",
    "HISTFILE",
    "XDG_SESSION_ID",
];

/// Prefixes of variables a terminal emulator sets for its window, tab or pane.
const TERMINAL_PREFIXES: [&str; 10] = [
    "ITERM_",
    "KITTY_",
    "WEZTERM_",
    "ALACRITTY_",
    "KONSOLE_",
    "GNOME_TERMINAL_",
    "VTE_",
    "TILIX_",
    "TERMINATOR_",
    "WT_",
];

/// Variables that are settings by name: where programs are found and how they run.
const SETTINGS: [&str; 22] = [
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TZ",
    "TMPDIR",
    "TERM",
    "NO_COLOR",
    "FORCE_COLOR",
    "CI",
    "EDITOR",
    "VISUAL",
    "PAGER",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    "SSL_CERT_FILE",
    "REQUESTS_CA_BUNDLE",
    "CARGO_HOME",
];

/// Prefixes of settings: a language runtime's, a package manager's, a cloud's, a platform's.
const SETTING_PREFIXES: [&str; 32] = [
    "LC_",
    "NODE_",
    "NPM_",
    "NPM_CONFIG_",
    "YARN_",
    "PNPM_",
    "BUN_",
    "DENO_",
    "PYTHON",
    "PIP_",
    "VIRTUAL_ENV",
    "CONDA_",
    "UV_",
    "POETRY_",
    "JAVA_",
    "GO",
    "RUST",
    "CARGO_",
    "RUBY",
    "GEM_",
    "BUNDLE_",
    "AWS_",
    "AZURE_",
    "GOOGLE_",
    "GCLOUD_",
    "CLOUDSDK_",
    "GITHUB_",
    "GITLAB_",
    "GH_",
    "DOCKER_",
    "KUBE",
    "XDG_",
];

/// Words that make any name a setting or a credential (`OPENAI_API_KEY`, `DB_HOST`,
/// `HTTPS_PROXY`, `MCP_LOG_LEVEL`).
const SETTING_WORDS: [&str; 20] = [
    "TOKEN", "KEY", "SECRET", "PASSWORD", "PASS", "AUTH", "CRED", "PATH", "FILE", "DIR", "URL",
    "URI", "HOST", "PORT", "PROXY", "MODE", "LOG", "LEVEL", "DEBUG", "CONFIG",
];

/// More setting words that read as whole parts of a name (`AWS_PROFILE`, `APP_ENV`).
const SETTING_PARTS: [&str; 8] = [
    "PROFILE", "ENV", "REGION", "ACCOUNT", "PROJECT", "ENDPOINT", "LOCALE", "HOME",
];

/// Whether a variable only describes the calling shell or terminal.
pub fn terminal_only(name: &str) -> bool {
    TERMINAL_ONLY.contains(&name) || TERMINAL_PREFIXES.iter().any(|p| name.starts_with(p))
}

/// Whether a variable's name reads as a setting or a credential (case does not matter:
/// `http_proxy` is `HTTP_PROXY`).
pub fn reads_as_setting(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    SETTINGS.contains(&upper.as_str())
        || upper.starts_with("FERRY_")
        || SETTING_PREFIXES.iter().any(|p| upper.starts_with(p))
        || SETTING_WORDS.iter().any(|w| upper.contains(w))
        || upper
            .split(|c: char| !c.is_ascii_alphanumeric())
            .any(|part| SETTING_PARTS.contains(&part))
}

/// Whether `config` (a server's config as written) names the variable: `${NAME}`,
/// `${NAME:-default}` or `${env:NAME}`.
pub fn named_by(config: &str, name: &str) -> bool {
    ["${", "${env:"].iter().any(|open| {
        let needle = format!("{open}{name}");
        config.match_indices(&needle).any(|(at, _)| {
            let rest = &config[at + needle.len()..];
            rest.starts_with('}') || rest.starts_with(":-")
        })
    })
}

/// Whether a caller's variable keys the warm server whose config (as written) is `config`.
pub fn keys_server(name: &str, config: &str) -> bool {
    !terminal_only(name) && (reads_as_setting(name) || named_by(config, name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_call_and_terminal_variables_do_not_key_a_server() {
        for name in [
            "REQ_ID",
            "RANDOM_SEED_FOR_THIS_CALL",
            "TMUX_PANE",
            "WINDOWID",
            "SHLVL",
            "OLDPWD",
            "PWD",
            "_",
            "TERM_SESSION_ID",
            "KITTY_WINDOW_ID",
            "STARSHIP_SHELL",
        ] {
            assert!(!keys_server(name, "stdio\0node\0x.js"), "{name}");
        }
    }

    #[test]
    fn settings_and_credentials_key_a_server() {
        for name in [
            "PATH",
            "HOME",
            "LANG",
            "TZ",
            "LC_ALL",
            "NODE_OPTIONS",
            "npm_config_registry",
            "PYTHONPATH",
            "VIRTUAL_ENV",
            "UV_INDEX_URL",
            "AWS_PROFILE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "GITHUB_TOKEN",
            "XDG_CONFIG_HOME",
            "OPENAI_API_KEY",
            "DB_HOST",
            "https_proxy",
            "MCP_LOG_LEVEL",
            "APP_ENV",
            "FERRY_ELICIT",
        ] {
            assert!(keys_server(name, ""), "{name}");
        }
    }

    #[test]
    fn a_variable_the_config_names_keys_its_server() {
        let config = "stdio\0node\0x.js\0--id\0${REQ_ID}\0${env:TENANT}\0${SHARD:-1}";
        assert!(keys_server("REQ_ID", config));
        assert!(keys_server("TENANT", config));
        assert!(keys_server("SHARD", config));
        assert!(!keys_server("REQ", config));
        assert!(!keys_server("REQ_ID", "${REQ_IDS}"));
    }
}
