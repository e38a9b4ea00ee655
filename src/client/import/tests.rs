use super::*;
use serde_json::json;
use std::sync::atomic::{AtomicUsize, Ordering};

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn norm(v: Value) -> Result<Value, String> {
    normalize_entry(&obj(v))
        .map(Value::Object)
        .map_err(|e| e.to_string())
}

fn names(list: &[(String, Map<String, Value>)]) -> Vec<&str> {
    list.iter().map(|(n, _)| n.as_str()).collect()
}

fn no_env(_: &str) -> Option<PathBuf> {
    None
}

/// A scratch directory that is removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(tag: &str) -> Scratch {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "ferry-import-{}-{}-{tag}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("home")).expect("mkdir home");
        std::fs::create_dir_all(dir.join("proj")).expect("mkdir proj");
        Scratch(dir)
    }
    fn home(&self) -> PathBuf {
        self.0.join("home")
    }
    fn cwd(&self) -> PathBuf {
        self.0.join("proj")
    }
    fn write(&self, path: &Path, text: &str) {
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, text).expect("write");
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn read(s: &Scratch, source: &ImportSource, os: Os) -> Result<Entries, String> {
    read_found(s, source, os).map(|found| {
        found
            .servers
            .into_iter()
            .map(|(name, entry, _)| (name, entry))
            .collect()
    })
}

fn read_found(s: &Scratch, source: &ImportSource, os: Os) -> Result<Found, String> {
    read_servers_with(source, &s.home(), &s.cwd(), os, &no_env).map_err(|e| e.to_string())
}

// ---- parse / paths ----

#[test]
fn parse_words_and_paths() {
    assert_eq!(ImportSource::parse("claude"), ImportSource::Claude);
    assert_eq!(ImportSource::parse("claude-code"), ImportSource::ClaudeCode);
    assert_eq!(ImportSource::parse("cursor"), ImportSource::Cursor);
    assert_eq!(ImportSource::parse("vscode"), ImportSource::Vscode);
    assert_eq!(ImportSource::parse("windsurf"), ImportSource::Windsurf);
    assert_eq!(ImportSource::parse("codex"), ImportSource::Codex);
    assert_eq!(
        ImportSource::parse("./x/mcp.json"),
        ImportSource::File(PathBuf::from("./x/mcp.json"))
    );
    assert_eq!(
        ImportSource::parse("Cursor"),
        ImportSource::File(PathBuf::from("Cursor"))
    );
}

#[test]
fn candidate_paths_linux() {
    let home = Path::new("/h");
    let cwd = Path::new("/p");
    let c = |s: ImportSource| s.candidates(home, cwd, Os::Linux, &no_env);
    assert_eq!(
        c(ImportSource::Claude),
        vec![PathBuf::from(
            "/h/.config/Claude/claude_desktop_config.json"
        )]
    );
    // The user's files only: the repository's are never imported.
    assert_eq!(
        c(ImportSource::ClaudeCode),
        vec![PathBuf::from("/h/.claude.json")]
    );
    assert_eq!(
        c(ImportSource::Cursor),
        vec![PathBuf::from("/h/.cursor/mcp.json")]
    );
    assert_eq!(
        c(ImportSource::Vscode),
        vec![
            PathBuf::from("/h/.config/Code/User/settings.json"),
            PathBuf::from("/h/.config/Code/User/mcp.json"),
        ]
    );
    assert_eq!(
        c(ImportSource::Windsurf),
        vec![PathBuf::from("/h/.codeium/windsurf/mcp_config.json")]
    );
    assert_eq!(
        c(ImportSource::Codex),
        vec![PathBuf::from("/h/.codex/config.toml")]
    );
}

#[test]
fn candidate_paths_macos_and_env() {
    let home = Path::new("/Users/u");
    let cwd = Path::new("/p");
    assert_eq!(
        ImportSource::Claude.candidates(home, cwd, Os::Mac, &no_env),
        vec![PathBuf::from(
            "/Users/u/Library/Application Support/Claude/claude_desktop_config.json"
        )]
    );
    let vs = ImportSource::Vscode.candidates(home, cwd, Os::Mac, &no_env);
    assert!(vs.contains(&PathBuf::from(
        "/Users/u/Library/Application Support/Code/User/mcp.json"
    )));

    let env = |name: &str| match name {
        "CODEX_HOME" => Some(PathBuf::from("/opt/codex")),
        "XDG_CONFIG_HOME" => Some(PathBuf::from("/xdg")),
        _ => None,
    };
    assert_eq!(
        ImportSource::Codex.candidates(home, cwd, Os::Linux, &env)[0],
        PathBuf::from("/opt/codex/config.toml")
    );
    assert_eq!(
        ImportSource::Claude.candidates(home, cwd, Os::Linux, &env),
        vec![
            PathBuf::from("/xdg/Claude/claude_desktop_config.json"),
            PathBuf::from("/Users/u/.config/Claude/claude_desktop_config.json"),
        ]
    );
}

#[test]
fn candidate_paths_dedupe_and_file_resolution() {
    let home = Path::new("/h");
    // cwd == home: the Cursor file there is the user's, not a repository's.
    assert_eq!(
        ImportSource::Cursor.candidates(home, home, Os::Linux, &no_env),
        vec![PathBuf::from("/h/.cursor/mcp.json")]
    );
    assert!(ImportSource::Cursor
        .project_candidates(home, home)
        .is_empty());
    let cwd = Path::new("/p");
    let f = |s: &str| ImportSource::parse(s).candidates(home, cwd, Os::Linux, &no_env);
    assert_eq!(f("cfg.json"), vec![PathBuf::from("/p/cfg.json")]);
    assert_eq!(f("/abs/cfg.json"), vec![PathBuf::from("/abs/cfg.json")]);
    assert_eq!(f("~/x/cfg.json"), vec![PathBuf::from("/h/x/cfg.json")]);
}

#[test]
fn show_abbreviates_home() {
    let home = Path::new("/h");
    assert_eq!(
        show(Path::new("/h/.cursor/mcp.json"), home),
        "~/.cursor/mcp.json"
    );
    assert_eq!(show(Path::new("/p/x.json"), home), "/p/x.json");
    assert_eq!(show(Path::new("/x.json"), Path::new("/")), "/x.json");
}

// ---- normalize_entry ----

#[test]
fn normalize_claude_desktop_stdio() {
    let out = norm(json!({
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
        "env": {"TOKEN": "${GITHUB_TOKEN}"}
    }))
    .expect("ok");
    assert_eq!(
        out,
        json!({
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"],
            "env": {"TOKEN": "${GITHUB_TOKEN}"}
        })
    );
}

#[test]
fn normalize_fills_defaults_and_converts_scalars() {
    let out = norm(json!({
        "type": "stdio",
        "command": "server",
        "args": ["--port", 8080, true, 1.5],
        "env": {"N": 3, "B": false},
        "cwd": "/srv"
    }))
    .expect("ok");
    assert_eq!(
        out,
        json!({
            "command": "server",
            "args": ["--port", "8080", "true", "1.5"],
            "env": {"N": "3", "B": "false"},
            "cwd": "/srv"
        })
    );
    let out = norm(json!({"command": "x", "args": null, "env": null})).expect("ok");
    assert_eq!(out, json!({"command": "x", "args": [], "env": {}}));
}

#[test]
fn normalize_command_list() {
    let out = norm(json!({"command": ["npx", "-y", "pkg"], "args": ["--flag"]})).expect("ok");
    assert_eq!(
        out,
        json!({"command": "npx", "args": ["-y", "pkg", "--flag"], "env": {}})
    );
}

#[test]
fn normalize_http_variants() {
    // Claude Code / VS Code.
    let out = norm(json!({
        "type": "http",
        "url": "https://api.example.com/mcp",
        "headers": {"Authorization": "Bearer ${input:token}"}
    }))
    .expect("ok");
    assert_eq!(
        out,
        json!({
            "url": "https://api.example.com/mcp",
            "headers": {"Authorization": "Bearer ${input:token}"}
        })
    );
    // Cursor.
    let out = norm(json!({"type": "streamableHttp", "url": "https://c/mcp"})).expect("ok");
    assert_eq!(out, json!({"url": "https://c/mcp", "headers": {}}));
    // Windsurf.
    let out = norm(json!({"serverUrl": "https://w/mcp"})).expect("ok");
    assert_eq!(out, json!({"url": "https://w/mcp", "headers": {}}));
    // url wins over serverUrl.
    let out = norm(json!({"serverUrl": "https://old", "url": "https://new"})).expect("ok");
    assert_eq!(out, json!({"url": "https://new", "headers": {}}));
}

#[test]
fn normalize_sse_keeps_transport() {
    let out = norm(json!({"type": "sse", "url": "https://s/sse"})).expect("ok");
    assert_eq!(
        out,
        json!({"url": "https://s/sse", "headers": {}, "transport": "sse"})
    );
    let out = norm(json!({"type": "SSE", "url": "https://s/sse", "transport": "x"})).expect("ok");
    assert_eq!(
        out,
        json!({"url": "https://s/sse", "headers": {}, "transport": "sse"})
    );
    // No type: an existing transport key is just an extra key.
    let out = norm(json!({"url": "https://s", "transport": "sse"})).expect("ok");
    assert_eq!(
        out,
        json!({"url": "https://s", "headers": {}, "transport": "sse"})
    );
}

#[test]
fn normalize_codex_headers() {
    let out = norm(json!({
        "url": "https://x/mcp",
        "bearer_token_env_var": "X_TOKEN",
        "http_headers": {"X-Client": "ferry"},
        "env_http_headers": {"X-Key": "X_KEY"},
        "startup_timeout_sec": 20
    }))
    .expect("ok");
    assert_eq!(
        out,
        json!({
            "url": "https://x/mcp",
            "headers": {
                "X-Client": "ferry",
                "X-Key": "${X_KEY}",
                "Authorization": "Bearer ${X_TOKEN}"
            },
            "startup_timeout_sec": 20
        })
    );
    // An explicit Authorization header wins over bearer_token_env_var.
    let out = norm(json!({
        "url": "https://x",
        "headers": {"authorization": "Basic abc"},
        "bearer_token_env_var": "T"
    }))
    .expect("ok");
    assert_eq!(
        out,
        json!({"url": "https://x", "headers": {"authorization": "Basic abc"}})
    );
}

#[test]
fn normalize_keeps_extras_and_placeholders() {
    let out = norm(json!({
        "disabled": true,
        "command": "${workspaceFolder}/bin/srv",
        "envFile": "${workspaceFolder}/.env",
        "args": ["${input:db}"],
        "alwaysAllow": ["read"]
    }))
    .expect("ok");
    assert_eq!(
        serde_json::to_string(&out).expect("json"),
        r#"{"command":"${workspaceFolder}/bin/srv","args":["${input:db}"],"env":{},"disabled":true,"envFile":"${workspaceFolder}/.env","alwaysAllow":["read"]}"#
    );
    // stdio keys on a url entry are kept verbatim, not interpreted.
    let out = norm(json!({"url": "https://x", "env": {"A": 1}})).expect("ok");
    assert_eq!(
        out,
        json!({"url": "https://x", "headers": {}, "env": {"A": 1}})
    );
}

#[test]
fn normalize_errors() {
    assert_eq!(norm(json!({})), Err(NEITHER.to_string()));
    assert_eq!(
        norm(json!({"args": ["x"], "type": "stdio"})),
        Err(NEITHER.to_string())
    );
    assert_eq!(
        norm(json!({"command": "", "url": null})),
        Err(NEITHER.to_string())
    );
    assert_eq!(norm(json!({"command": []})), Err(NEITHER.to_string()));
    assert!(norm(json!({"command": 5}))
        .unwrap_err()
        .contains("\"command\" must be a string"));
    assert!(norm(json!({"url": 5}))
        .unwrap_err()
        .contains("\"url\" must be a string"));
    assert!(norm(json!({"command": "x", "args": "a b"}))
        .unwrap_err()
        .contains("\"args\" must be a list"));
    assert_eq!(
        norm(json!({"command": "x", "args": ["a", {"b": 1}]})),
        Err("\"args\" must be a list of strings (item 2 is an object)".to_string())
    );
    assert!(norm(json!({"command": "x", "env": {"A": null}}))
        .unwrap_err()
        .contains("\"env\" value of \"A\""));
    assert!(norm(json!({"command": "x", "env": ["A=1"]}))
        .unwrap_err()
        .contains("\"env\" must be an object"));
    assert!(norm(json!({"command": "x", "cwd": 1}))
        .unwrap_err()
        .contains("\"cwd\""));
    assert!(norm(json!({"url": "https://x", "headers": {"A": [1]}}))
        .unwrap_err()
        .contains("\"headers\""));
    assert!(norm(json!({"url": "https://x", "bearer_token_env_var": 1}))
        .unwrap_err()
        .contains("bearer_token_env_var"));
}

// ---- servers_in_json ----

#[test]
fn json_mcp_servers_shape() {
    let doc = json!({"mcpServers": {
        "b": {"command": "b"},
        "a": {"url": "https://a"},
        "junk": "not an object"
    }});
    let list = servers_in_json(&doc, Path::new("/p"));
    assert_eq!(names(&list), vec!["b", "a"]);
}

#[test]
fn json_vscode_shapes() {
    let doc = json!({
        "inputs": [{"type": "promptString", "id": "token", "password": true}],
        "servers": {"gh": {"type": "http", "url": "https://gh/mcp"}}
    });
    let list = servers_in_json(&doc, Path::new("/p"));
    assert_eq!(names(&list), vec!["gh"]);

    let settings = json!({
        "editor.fontSize": 12,
        "mcp": {"servers": {"n": {"type": "stdio", "command": "node"}}}
    });
    assert_eq!(
        names(&servers_in_json(&settings, Path::new("/p"))),
        vec!["n"]
    );
    let dotted = json!({"mcp.servers": {"d": {"command": "d"}}});
    assert_eq!(names(&servers_in_json(&dotted, Path::new("/p"))), vec!["d"]);
}

#[test]
fn json_claude_code_projects() {
    let doc = json!({
        "numStartups": 3,
        "mcpServers": {"user": {"command": "u"}, "shared": {"command": "global"}},
        "projects": {
            "/work/app": {"mcpServers": {"shared": {"command": "local"}, "local": {"command": "l"}}},
            "/work/other": {"mcpServers": {"other": {"command": "o"}}}
        }
    });
    let list = servers_in_json(&doc, Path::new("/work/app"));
    assert_eq!(names(&list), vec!["user", "shared", "local"]);
    assert_eq!(list[1].1.get("command"), Some(&json!("local")));
    // Trailing slash in cwd still matches.
    let list = servers_in_json(&doc, Path::new("/work/app/"));
    assert_eq!(names(&list), vec!["user", "shared", "local"]);
    // Other cwd: only user scope.
    let list = servers_in_json(&doc, Path::new("/elsewhere"));
    assert_eq!(names(&list), vec!["user", "shared"]);
}

#[test]
fn json_codex_shape_and_garbage() {
    let doc = json!({"mcp_servers": {"c": {"command": "c"}}});
    assert_eq!(names(&servers_in_json(&doc, Path::new("/p"))), vec!["c"]);
    for doc in [
        json!(null),
        json!([1, 2]),
        json!("x"),
        json!({"mcpServers": [1]}),
        json!({"mcp": 1}),
        json!({"projects": []}),
        json!({"projects": {"/p": 1}}),
        json!({"projects": {"/p": {"mcpServers": 1}}}),
    ] {
        assert!(servers_in_json(&doc, Path::new("/p")).is_empty(), "{doc}");
    }
}

#[test]
fn no_panics_on_odd_entries() {
    let odd = [
        json!({"command": null, "url": null}),
        json!({"command": [null]}),
        json!({"command": [1, 2]}),
        json!({"url": "", "command": "  "}),
        json!({"type": 1, "command": "x"}),
        json!({"url": "u", "env_http_headers": {"A": 1}}),
        json!({"url": "u", "env_http_headers": "x"}),
        json!({"url": "u", "type": "websocket"}),
    ];
    for v in odd {
        let _ = norm(v);
    }
    assert_eq!(
        norm(json!({"command": [1, 2]})).expect("ok"),
        json!({"command": "1", "args": ["2"], "env": {}})
    );
    assert_eq!(
        norm(json!({"url": "u", "type": "websocket"})).expect("ok"),
        json!({"url": "u", "headers": {}, "transport": "websocket"})
    );
}

// ---- JSONC ----

#[test]
fn jsonc_comments_and_trailing_commas() {
    let text = r#"{
  // user servers
  "servers": {
"a": { "command": "x", "args": ["http://keep//this", "/* and this */", "q\"//"], }, /* block
comment */
  },
}"#;
    let v = parse_jsonc(text).expect("parses");
    assert_eq!(
        v,
        json!({"servers": {"a": {"command": "x", "args": ["http://keep//this", "/* and this */", "q\"//"]}}})
    );
    let err = parse_jsonc("{\n// c\n\"a\": }").expect_err("invalid");
    assert_eq!(err.line(), 3);
    // Unterminated constructs must not panic.
    assert!(parse_jsonc("{\"a\": \"x\\").is_err());
    assert!(parse_jsonc("{ /* open").is_err());
    assert!(parse_jsonc("/").is_err());
}

// ---- read_servers ----

#[test]
fn read_claude_desktop() {
    let s = Scratch::new("claude");
    s.write(
        &s.home().join(".config/Claude/claude_desktop_config.json"),
        r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"]}}, "globalShortcut": ""}"#,
    );
    let list = read(&s, &ImportSource::Claude, Os::Linux).expect("ok");
    assert_eq!(names(&list), vec!["fs"]);
    assert_eq!(
        Value::Object(list[0].1.clone()),
        json!({"command": "npx", "args": ["-y", "fs"], "env": {}})
    );
    let err = read(&s, &ImportSource::Claude, Os::Mac).expect_err("missing");
    assert_eq!(
        err,
        "no Claude Desktop config found at ~/Library/Application Support/Claude/claude_desktop_config.json; pass a path to the config file instead"
    );
}

#[test]
fn read_claude_code_user_and_local_scope_never_the_project_file() {
    let s = Scratch::new("claude-code");
    let cwd = s.cwd();
    let claude = json!({
        "mcpServers": {"a": {"command": "user-a"}, "b": {"command": "user-b"}, "c": {"command": "user-c"}},
        "projects": {
            cwd.to_string_lossy(): {"mcpServers": {"c": {"command": "local-c"}, "d": {"type": "sse", "url": "https://d"}}}
        }
    });
    s.write(&s.home().join(".claude.json"), &claude.to_string());
    s.write(
        &cwd.join(".mcp.json"),
        r#"{"mcpServers": {"b": {"type": "stdio", "command": "proj-b"}, "c": {"command": "proj-c"}, "e": {"type": "http", "url": "https://e"}}}"#,
    );
    let found = read_found(&s, &ImportSource::ClaudeCode, Os::Linux).expect("ok");
    let names: Vec<&str> = found.servers.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(names, vec!["a", "b", "c", "d"]);
    let command = |i: usize| found.servers[i].1.get("command").cloned();
    assert_eq!(command(0), Some(json!("user-a")));
    assert_eq!(command(1), Some(json!("user-b")));
    assert_eq!(command(2), Some(json!("local-c")));
    assert_eq!(found.servers[3].1.get("transport"), Some(&json!("sse")));
    let local = format!("~/.claude.json (local scope of {})", cwd.display());
    let files: Vec<&str> = found.servers.iter().map(|(_, _, f)| f.as_str()).collect();
    assert_eq!(
        files,
        vec!["~/.claude.json", "~/.claude.json", &local, &local]
    );
    assert_eq!(
        found.left_out,
        vec![(
            cwd.join(".mcp.json").display().to_string(),
            vec!["b".to_string(), "c".to_string(), "e".to_string()]
        )]
    );
    // Without a user file, the repository's file is named and not read.
    std::fs::remove_file(s.home().join(".claude.json")).unwrap();
    let err = read(&s, &ImportSource::ClaudeCode, Os::Linux).expect_err("no user file");
    assert_eq!(
        err,
        format!("no Claude Code user config found at ~/.claude.json; {}/.mcp.json is this repository's, not yours, so it is not imported (ferry reads project files in place once you run `ferry trust`)", cwd.display())
    );
}

#[test]
fn read_cursor_user_file_and_report_missing() {
    let s = Scratch::new("cursor");
    let err = read(&s, &ImportSource::Cursor, Os::Linux).expect_err("missing");
    assert_eq!(
        err,
        "no Cursor config found at ~/.cursor/mcp.json; pass a path to the config file instead"
    );

    s.write(
        &s.home().join(".cursor/mcp.json"),
        r#"{"mcpServers": {"g": {"command": "global"}, "x": {"command": "global-x"}}}"#,
    );
    s.write(
        &s.cwd().join(".cursor/mcp.json"),
        r#"{"mcpServers": {"x": {"url": "https://proj-x"}}}"#,
    );
    let found = read_found(&s, &ImportSource::Cursor, Os::Linux).expect("ok");
    let list: Vec<(&str, &str)> = found
        .servers
        .iter()
        .map(|(n, _, f)| (n.as_str(), f.as_str()))
        .collect();
    assert_eq!(
        list,
        vec![("g", "~/.cursor/mcp.json"), ("x", "~/.cursor/mcp.json")]
    );
    assert_eq!(found.servers[1].1.get("command"), Some(&json!("global-x")));
    let project = s.cwd().join(".cursor/mcp.json").display().to_string();
    assert_eq!(found.left_out, vec![(project, vec!["x".to_string()])]);
}

#[test]
fn read_vscode_user_files() {
    let s = Scratch::new("vscode");
    let user = s.home().join(".config/Code/User");
    s.write(
        &user.join("settings.json"),
        "{\n  // settings\n  \"mcp\": {\"servers\": {\"old\": {\"command\": \"old\"}}},\n}",
    );
    s.write(
        &user.join("mcp.json"),
        r#"{"inputs": [{"id": "k", "type": "promptString"}], "servers": {"u": {"type": "http", "url": "https://u", "headers": {"K": "${input:k}"}}}}"#,
    );
    s.write(
        &s.cwd().join(".vscode/mcp.json"),
        r#"{"servers": {"p": {"type": "stdio", "command": "node", "args": ["${workspaceFolder}/s.js"]}}}"#,
    );
    let found = read_found(&s, &ImportSource::Vscode, Os::Linux).expect("ok");
    let list: Vec<(&str, &str)> = found
        .servers
        .iter()
        .map(|(n, _, f)| (n.as_str(), f.as_str()))
        .collect();
    assert_eq!(
        list,
        vec![
            ("old", "~/.config/Code/User/settings.json"),
            ("u", "~/.config/Code/User/mcp.json")
        ]
    );
    assert_eq!(
        Value::Object(found.servers[1].1.clone()),
        json!({"url": "https://u", "headers": {"K": "${input:k}"}})
    );
    let project = s.cwd().join(".vscode/mcp.json").display().to_string();
    assert_eq!(found.left_out, vec![(project, vec!["p".to_string()])]);
}

#[test]
fn read_windsurf() {
    let s = Scratch::new("windsurf");
    s.write(
        &s.home().join(".codeium/windsurf/mcp_config.json"),
        r#"{"mcpServers": {"r": {"serverUrl": "https://r/mcp", "headers": {"A": "${env:TOKEN}"}}}}"#,
    );
    let list = read(&s, &ImportSource::Windsurf, Os::Linux).expect("ok");
    assert_eq!(
        Value::Object(list[0].1.clone()),
        json!({"url": "https://r/mcp", "headers": {"A": "${env:TOKEN}"}})
    );
}

#[test]
fn read_codex_toml() {
    let s = Scratch::new("codex");
    s.write(
        &s.home().join(".codex/config.toml"),
        r#"
model = "o3"

[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp", 3]
cwd = "/srv/docs"
startup_timeout_sec = 20.5
when = 1979-05-27T07:32:00Z

[mcp_servers.docs.env]
API_KEY = "${DOCS_KEY}"

[mcp_servers.remote]
url = "https://remote/mcp"
bearer_token_env_var = "REMOTE_TOKEN"
enabled = false
"#,
    );
    let list = read(&s, &ImportSource::Codex, Os::Linux).expect("ok");
    assert_eq!(names(&list), vec!["docs", "remote"]);
    assert_eq!(
        Value::Object(list[0].1.clone()),
        json!({
            "command": "npx",
            "args": ["-y", "docs-mcp", "3"],
            "env": {"API_KEY": "${DOCS_KEY}"},
            "cwd": "/srv/docs",
            "startup_timeout_sec": 20.5,
            "when": "1979-05-27T07:32:00Z"
        })
    );
    assert_eq!(
        Value::Object(list[1].1.clone()),
        json!({
            "url": "https://remote/mcp",
            "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
            "enabled": false
        })
    );

    // CODEX_HOME redirects the user file.
    let alt = s.0.join("codex-home");
    s.write(
        &alt.join("config.toml"),
        "[mcp_servers.alt]\ncommand = \"alt\"\n",
    );
    let env = |name: &str| (name == "CODEX_HOME").then(|| alt.clone());
    let found =
        read_servers_with(&ImportSource::Codex, &s.home(), &s.cwd(), Os::Linux, &env).expect("ok");
    assert_eq!(found.servers.len(), 1);
    assert_eq!(found.servers[0].0, "alt");
}

#[test]
fn read_explicit_files() {
    let s = Scratch::new("file");
    s.write(
        &s.cwd().join("servers.toml"),
        "[mcp_servers.t]\nurl = \"https://t\"\n",
    );
    s.write(
        &s.cwd().join("any.json"),
        r#"{"servers": {"j": {"command": "j"}}}"#,
    );
    let list = read(&s, &ImportSource::parse("servers.toml"), Os::Linux).expect("ok");
    assert_eq!(names(&list), vec!["t"]);
    let list = read(&s, &ImportSource::parse("any.json"), Os::Linux).expect("ok");
    assert_eq!(names(&list), vec!["j"]);

    let err = read(&s, &ImportSource::parse("cursr"), Os::Linux).expect_err("missing");
    assert!(err.contains("cursr: no such file"), "{err}");
    assert!(err.contains("expected claude, claude-code"), "{err}");

    s.write(&s.cwd().join("other.json"), r#"{"name": "not mcp"}"#);
    let err = read(&s, &ImportSource::parse("other.json"), Os::Linux).expect_err("no map");
    assert!(err.contains("other.json has no \"mcpServers\""), "{err}");

    // A host file without servers is fine (empty result).
    s.write(&s.home().join(".claude.json"), r#"{"numStartups": 1}"#);
    let list = read(&s, &ImportSource::ClaudeCode, Os::Linux).expect("ok");
    assert!(list.is_empty());
}

#[test]
fn read_reports_bad_files_and_entries() {
    let s = Scratch::new("bad");
    s.write(&s.home().join(".cursor/mcp.json"), "{\"mcpServers\": {");
    let err = read(&s, &ImportSource::Cursor, Os::Linux).expect_err("bad json");
    assert!(
        err.starts_with("~/.cursor/mcp.json is not valid JSON (")
            && err.ends_with("; fix it or pass another file"),
        "{err}"
    );
    assert!(!err.contains('\n'));

    s.write(
        &s.home().join(".codex/config.toml"),
        "a = 1\n[mcp_servers\n",
    );
    let err = read(&s, &ImportSource::Codex, Os::Linux).expect_err("bad toml");
    assert!(
        err.starts_with("~/.codex/config.toml is not valid TOML (line 2: "),
        "{err}"
    );
    assert!(!err.contains('\n'));

    s.write(
        &s.home().join(".codeium/windsurf/mcp_config.json"),
        r#"{"mcpServers": {"ok": {"command": "x"}, "broken": {"args": []}}}"#,
    );
    let err = read(&s, &ImportSource::Windsurf, Os::Linux).expect_err("bad entry");
    assert_eq!(
        err,
        "~/.codeium/windsurf/mcp_config.json: server \"broken\": server entry has neither \"command\" nor \"url\"; fix or remove that entry"
    );

    // A directory in place of a file is a read error, not a panic.
    std::fs::create_dir_all(s.cwd().join("dir.json")).expect("mkdir");
    let err = read(&s, &ImportSource::parse("dir.json"), Os::Linux).expect_err("dir");
    assert!(err.starts_with("cannot read "), "{err}");
}

#[test]
fn every_host_is_one_row_of_the_table() {
    for (word, label, host) in HOSTS {
        assert_eq!(ImportSource::parse(word), host);
        assert_eq!(host.label(), label);
        assert!(host_words().contains(word));
    }
    assert_eq!(
        ImportSource::parse("./claude"),
        ImportSource::File(PathBuf::from("./claude"))
    );
}
