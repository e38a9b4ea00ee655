//! The manifest format of docs/manifest.md: the example loads and compiles to the schema the
//! model reads, and every kind of mistake is refused with its line.

use super::*;
use serde_json::json;
use std::path::PathBuf;

fn dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ferry-manifest-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::write(dir.join("README.md"), "# readme\n").unwrap();
    std::fs::write(dir.join("docs/diagram.png"), b"\x89PNG\r\n\x1a\n").unwrap();
    dir
}

const EXAMPLE: &str = r#"
[server]
name = "repo"
instructions = "Read-only tools for this repository."
roots = ["."]
env = ["GIT_AUTHOR_*"]
timeout = 30
max_output = 1048576
concurrency = 8

[[tools]]
name = "log"
title = "Recent commits"
description = "Recent commits, one line each, newest first."
command = ["git", "log", "--oneline", "-n", "{count}", ["--author", "{author}"], "{stat}", "--", "{paths*}"]
annotations = { readOnlyHint = true, openWorldHint = false }
timeout = 10
ok_exit = [0]
output = "text"

[tools.params.count]
type = "integer"
description = "How many commits"
default = 20
minimum = 1
maximum = 500

[tools.params.author]
type = "string"
required = false
pattern = "^[^\\n]{1,80}$"

[tools.params.stat]
type = "boolean"
flag = "--stat"
default = false

[tools.params.paths]
type = "array"
items = "path"
required = false

[[resources]]
uri = "repo://readme"
name = "readme"
mime_type = "text/markdown"
file = "README.md"

[[resource_templates]]
uri_template = "repo://commit/{sha}"
name = "commit"
mime_type = "text/plain"
command = ["git", "show", "--stat", "{sha}"]
[resource_templates.params.sha]
type = "string"
pattern = "^[0-9a-f]{7,40}$"

[[prompts]]
name = "review"
description = "Review a file for bugs"
messages = [
  { role = "user", text = "Review {path} for bugs; say which lines." },
  { role = "user", resource = "repo://readme" },
  { role = "user", image = "docs/diagram.png" },
]
[prompts.params.path]
type = "string"
"#;

#[test]
fn the_design_example_loads_and_compiles() {
    let dir = dir();
    let manifest = parse(EXAMPLE, &dir.join("repo.toml")).unwrap();
    assert_eq!(manifest.server.name, "repo");
    assert_eq!(
        manifest.server.roots.all(),
        [std::fs::canonicalize(&dir).unwrap()]
    );
    let tools = manifest.tools();
    assert_eq!(tools.len(), 1);
    assert_eq!(
        tools[0].input_schema,
        json!({
            "type": "object",
            "properties": {
                "count": {"type": "integer", "description": "How many commits", "minimum": 1, "maximum": 500, "default": 20},
                "author": {"type": "string", "pattern": "^[^\\n]{1,80}$"},
                "stat": {"type": "boolean", "default": false},
                "paths": {"type": "array", "items": {"type": "string", "format": "path"}}
            },
            "additionalProperties": false
        })
    );
    assert_eq!(tools[0].raw["annotations"]["readOnlyHint"], true);
    assert_eq!(tools[0].raw["title"], "Recent commits");
    // The same schema model that the CLI's help reads.
    assert_eq!(
        crate::render::tool_help(&tools[0]),
        "Recent commits, one line each, newest first.\n\
         --count int =20 [minimum 1, maximum 500]: How many commits\n\
         --author str [pattern \"^[^\\\\n]{1,80}$\"]\n\
         --stat bool =false\n\
         --paths str[]\n  [] [format path]\n"
    );
    assert_eq!(manifest.templates[0].params[0].name, "sha");
    assert_eq!(manifest.prompts[0].messages.len(), 3);
    assert!(
        matches!(&manifest.resources[0].source, ResourceSource::File(p) if p.ends_with("README.md"))
    );
}

/// Each broken manifest, and the line and reason it is refused with.
#[test]
fn mistakes_are_refused_with_their_line() {
    let dir = dir();
    let cases: [(&str, usize, &str); 23] = [
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\", \"{nope}\"]\n", 4, "the command names {nope}, which is not one of its params"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\"]\n[tools.params.unused]\ntype = \"string\"\n", 4, "parameter \"unused\" is used neither in the command nor as stdin"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"{p}\"]\n[tools.params.p]\ntype = \"string\"\n", 4, "must start with a fixed program"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncomand = [\"echo\"]\n", 4, "a tool has no key \"comand\" (did you mean \"command\"?)"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\", \"{p}\"]\n[tools.params.p]\ntype = \"strng\"\n", 6, "type \"strng\" is not one of"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\", \"{p}\"]\n[tools.params.p]\ntype = \"array\"\nitems = \"string\"\n", 4, "p is an array; write \"{p*}\""),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\", \"{p}\"]\n[tools.params.p]\ntype = \"integer\"\ndefault = \"ten\"\n", 7, "the default does not fit: p expects an integer"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\", \"{p}\"]\n[tools.params.p]\ntype = \"string\"\npattern = \"(\"\n", 7, "is not a valid regular expression"),
        ("[[tools]]\nname = \"has space\"\ndescription = \"d\"\ncommand = [\"echo\"]\n", 2, "tool name \"has space\" must be"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\", \"{p}\"]\n[tools.params.p]\ntype = \"string\"\nflag = \"--p\"\n", 7, "flag applies to booleans only"),
        ("[server]\nroots = [\"missing-dir\"]\n[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\"]\n", 2, "root "),
        ("[[resources]]\nuri = \"repo://x\"\nfile = \"../../etc/passwd\"\n", 3, "it is outside the served roots"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\"]\n[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\"]\n", 5, "a second tool named \"x\""),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\",\n", 5, "not valid TOML"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\"]\nwrites = [\"/etc\"]\n", 5, "writes \"/etc\": it is outside the served roots; a tool writes only under the roots"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\"]\nannotations = { readOnlyHint = true }\nwrites = [\"docs\"]\n", 6, "is read-only (readOnlyHint = true), so it takes no writes"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\"]\nnetwork = \"yes\"\n", 5, "network must be true or false"),
        ("[[resources]]\nuri = \"repo://x\"\ncommand = [\"date\"]\nwrites = [\".\"]\n", 4, "a resource has no key \"writes\""),
        // A value inside (or in place of) the script a shell or interpreter runs.
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"sh\", \"-c\", \"echo {x}\"]\n[tools.params.x]\ntype = \"string\"\n", 4, "tool \"x\": {x} is in or before the script sh runs, so a model's value could become code; pass values after the script, as data: [\"sh\", \"-c\", \"echo \\\"$1\\\"\", \"sh\", \"{x}\"]"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"/bin/bash\", \"-ec\", \"{x}\"]\n[tools.params.x]\ntype = \"string\"\n", 4, "{x} is in or before the script bash runs"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"python3.11\", \"-c\", \"print('{x}')\"]\n[tools.params.x]\ntype = \"string\"\n", 4, "pass values after the script, as data: [\"python3.11\", \"-c\", \"import sys; print(sys.argv[1])\", \"{x}\"]"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"node\", \"{x}\"]\n[tools.params.x]\ntype = \"path\"\n", 4, "{x} is in or before the script node runs"),
        ("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"perl\", \"-ne\", \"print if /{x}/\", \"f\"]\n[tools.params.x]\ntype = \"string\"\n", 4, "{x} is in or before the script perl runs"),
    ];
    for (text, line, reason) in cases {
        let error = parse(text, &dir.join("m.toml")).expect_err(text);
        assert_eq!(error.line, line, "{text}\n{error:?}");
        assert!(error.reason.contains(reason), "{text}\n{}", error.reason);
        assert!(error.file.ends_with("m.toml"));
    }
}

#[test]
fn values_after_a_script_are_data_and_load() {
    let dir = dir();
    for command in [
        r#"["sh", "-c", "echo \"$1\"", "sh", "{x}"]"#,
        r#"["sh", "-e", "-c", "printf '%s' \"$1\"", "sh", "{x}"]"#,
        r#"["python3", "-c", "import sys; print(sys.argv[1])", "{x}"]"#,
        r#"["awk", "{{print $1}}", "{x}"]"#,
        r#"["git", "log", "--author={x}"]"#,
    ] {
        let text = format!("[[tools]]\nname = \"t\"\ndescription = \"d\"\ncommand = {command}\n[tools.params.x]\ntype = \"string\"\n");
        parse(&text, &dir.join("m.toml")).unwrap_or_else(|e| panic!("{command}: {e:?}"));
    }
}

#[test]
fn code_a_manifest_declares_loads_and_flags_before_a_script_hide_nothing() {
    let dir = dir();
    let tool = |command: &str, params: &str| {
        format!("[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = {command}\n{params}")
    };
    // The script declared as code, with a flag, a number and a choice before it.
    let text = tool(
        r#"["sed", "{n}", ["-l", "{width}"], "{mode}", "{script}", "{files*}"]"#,
        "[tools.params.n]\ntype = \"boolean\"\nflag = \"-n\"\n[tools.params.width]\ntype = \"integer\"\n[tools.params.mode]\ntype = \"string\"\nenum = [\"-E\", \"-z\"]\n[tools.params.script]\ntype = \"string\"\ncode = true\n[tools.params.files]\ntype = \"array\"\nitems = \"string\"\n",
    );
    let loaded = parse(&text, &dir.join("m.toml")).unwrap_or_else(|e| panic!("{e:?}"));
    assert!(loaded.tools[0]
        .params
        .iter()
        .any(|p| p.name == "script" && p.code));
    // Without `code = true`, the script behind a flag is still refused.
    let text = text.replace("code = true\n", "");
    let error = parse(&text, &dir.join("m.toml")).expect_err("undeclared script");
    assert!(
        error
            .reason
            .contains("{script} is in or before the script sed runs"),
        "{}",
        error.reason
    );
}

#[test]
fn what_a_command_may_touch_is_read_with_its_places_resolved() {
    let dir = dir();
    let text = "[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\"]\nreads = [\"~/.gitconfig\", \"/opt\", \"docs\"]\nwrites = [\"docs\"]\nexec = [\"cat\", \"./bin/tool\"]\nnetwork = true\n";
    let manifest = parse(text, &dir.join("m.toml")).unwrap();
    let permissions = &manifest.tools[0].permissions;
    let docs = std::fs::canonicalize(dir.join("docs")).unwrap();
    assert_eq!(
        permissions.reads,
        [
            crate::paths::home_dir().join(".gitconfig"),
            PathBuf::from("/opt"),
            docs.clone()
        ]
    );
    assert_eq!(permissions.writes, Some(vec![docs]));
    assert_eq!(permissions.exec, ["cat", "./bin/tool"]);
    assert!(permissions.network);
    // Unsaid: the roots for writes (decided when serving), nothing more to read or run.
    let plain = parse(
        "[[tools]]\nname = \"x\"\ndescription = \"d\"\ncommand = [\"echo\"]\n",
        &dir.join("m.toml"),
    )
    .unwrap();
    assert_eq!(plain.tools[0].permissions, Permissions::default());
}

#[test]
fn paths_are_confined_by_whole_components_and_symlinks_resolved() {
    let base = std::env::temp_dir().join(format!("ferry-confine-{}", std::process::id()));
    let root = base.join("work");
    let sibling = base.join("work2");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::create_dir_all(&sibling).unwrap();
    std::fs::write(sibling.join("secret"), "s").unwrap();
    let _ = std::os::unix::fs::symlink(&sibling, root.join("link"));
    let roots = [std::fs::canonicalize(&root).unwrap()];
    assert!(confine(&root.join("sub"), &roots, true).is_ok());
    assert_eq!(
        confine(&sibling.join("secret"), &roots, true)
            .unwrap_err()
            .to_string(),
        "it is outside the served roots"
    );
    assert_eq!(
        confine(&root.join("link/secret"), &roots, true)
            .unwrap_err()
            .to_string(),
        "it is outside the served roots"
    );
    assert_eq!(
        confine(&root.join("../work2/secret"), &roots, true)
            .unwrap_err()
            .to_string(),
        "it is outside the served roots"
    );
    assert_eq!(
        confine(&root.join("new.txt"), &roots, true)
            .unwrap_err()
            .to_string(),
        "it does not exist"
    );
    assert!(confine(&root.join("new.txt"), &roots, false).is_ok());
    // A new file under a symlinked parent that points outside.
    assert_eq!(
        confine(&root.join("link/new.txt"), &roots, false)
            .unwrap_err()
            .to_string(),
        "it is outside the served roots"
    );
    assert_eq!(
        confine(&root.join(".."), &roots, false)
            .unwrap_err()
            .to_string(),
        "it is outside the served roots"
    );
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn uri_templates_match_their_variables() {
    assert_eq!(uri_variables("repo://commit/{sha}").unwrap(), ["sha"]);
    let values = match_uri(
        "test://template/{id}/data",
        "test://template/123/data",
        |_| false,
    )
    .unwrap();
    assert_eq!(values["id"], "123");
    assert!(match_uri(
        "test://template/{id}/data",
        "test://template/1/2/data",
        |_| false
    )
    .is_none());
    assert!(match_uri("repo://commit/{sha}", "repo://other/x", |_| false).is_none());
    // An encoded slash is a slash: a value cannot climb out of its place.
    assert!(match_uri(
        "docs://{name}.md",
        "docs://..%2F..%2Fetc%2Fpasswd.md",
        |_| false
    )
    .is_none());
    assert!(match_uri("notes://{name}", "notes://..%2F..%2Fsecret.txt", |_| false).is_none());
    // A path variable may hold one (it is confined to the roots as a path).
    assert_eq!(
        match_uri("notes://{name}", "notes://sub%2Fa.txt", |n| n == "name").unwrap()["name"],
        "sub/a.txt"
    );
    assert!(match_uri("docs://{name}.md", "docs://a%0Ab.md", |_| false).is_none());
    assert_eq!(
        match_uri("repo://f/{name}", "repo://f/a%20b", |_| false).unwrap()["name"],
        "a b"
    );
}
