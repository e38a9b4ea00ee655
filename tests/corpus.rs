//! Renders every tool of the real `tools/list` snapshots in `../shared/corpus/` (13 popular
//! MCP servers) and checks that the listing and `--help` lose nothing the schema says.
//!
//! Two independent views are checked: ferry's own schema model (type, required mark, default,
//! enum values, constraints and descriptions of every property) and the raw JSON (every
//! property name and every `required` entry), so a bug in the model cannot hide itself.
//! Every tool runs under `catch_unwind` and all problems are collected, so one run reports
//! every failing tool of every snapshot.

use ferry::protocol::tools::{parse_tools, Tool};
use ferry::render::{listing_line, tool_help};
use ferry::schema::{render_type, render_value, Kind, Shape, ToolSchema};
use serde_json::Value;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

const CORPUS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/corpus");

/// How many snapshots the corpus holds at least (see its README).
const MIN_SNAPSHOTS: usize = 13;

/// One `<server>.tools.json` file: the server name and its raw `tools` array.
struct Snapshot {
    server: String,
    entries: Vec<Value>,
}

fn corpus_dir() -> PathBuf {
    let dir = Path::new(CORPUS);
    assert!(
        dir.is_dir(),
        "the MCP tools corpus is missing: expected a directory at {} \
         (CI places `shared/` beside the checkout; check it out there to run these tests)",
        dir.display()
    );
    dir.to_path_buf()
}

fn snapshots() -> Vec<Snapshot> {
    let dir = corpus_dir();
    let mut snapshots = Vec::new();
    let listing = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot list the corpus at {}: {e}", dir.display()));
    for entry in listing {
        let path = entry
            .unwrap_or_else(|e| panic!("cannot list the corpus at {}: {e}", dir.display()))
            .path();
        let Some(server) = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".tools.json"))
        else {
            continue;
        };
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{} is not JSON: {e}", path.display()));
        let entries = value
            .get("tools")
            .and_then(Value::as_array)
            .unwrap_or_else(|| panic!("{} has no \"tools\" array", path.display()))
            .clone();
        snapshots.push(Snapshot {
            server: server.to_string(),
            entries,
        });
    }
    snapshots.sort_by(|a, b| a.server.cmp(&b.server));
    assert!(
        snapshots.len() >= MIN_SNAPSHOTS,
        "expected at least {MIN_SNAPSHOTS} *.tools.json snapshots in {}, found {}",
        dir.display(),
        snapshots.len()
    );
    snapshots
}

/// The snapshot of `server`, parsed.
fn tools_of(server: &str) -> Vec<Tool> {
    let snapshot = snapshots()
        .into_iter()
        .find(|s| s.server == server)
        .unwrap_or_else(|| panic!("no {server}.tools.json in the corpus"));
    parse_tools(&snapshot.entries).0
}

fn tool(server: &str, name: &str) -> Tool {
    tools_of(server)
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("{server} has no tool {name:?}"))
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(text) = payload.downcast_ref::<&str>() {
        text.to_string()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// Runs `check` on every tool of every snapshot, each under `catch_unwind`, and fails once
/// with every problem found.
fn check_every_tool(what: &str, check: impl Fn(&str, &Tool, &Value) -> Vec<String>) {
    let mut failures = Vec::new();
    let mut checked = 0;
    for snapshot in snapshots() {
        let (tools, _) = parse_tools(&snapshot.entries);
        for (tool, raw) in tools.iter().zip(&snapshot.entries) {
            checked += 1;
            let outcome = catch_unwind(AssertUnwindSafe(|| check(&snapshot.server, tool, raw)));
            let problems = match outcome {
                Ok(problems) => problems,
                Err(payload) => vec![format!("panicked: {}", panic_message(payload.as_ref()))],
            };
            for problem in problems {
                failures.push(format!("{}/{}: {problem}", snapshot.server, tool.name));
            }
        }
    }
    assert!(checked > 0, "no tools found in the corpus");
    assert!(
        failures.is_empty(),
        "{what}: {} problem(s) over {checked} tools:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The property block of a help text: the lines after the usage line and the description.
fn property_block<'a>(help: &'a str, tool: &Tool) -> Result<&'a str, String> {
    let (_, rest) = help
        .split_once('\n')
        .ok_or_else(|| format!("help has no line after the usage line: {help:?}"))?;
    let description = tool.description.trim();
    if description.is_empty() {
        return Ok(rest);
    }
    rest.strip_prefix(description)
        .and_then(|r| r.strip_prefix('\n'))
        .ok_or_else(|| "help does not show the tool description after the usage line".into())
}

fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every enum value anywhere in a shape (the full type spells them all out).
fn enum_values(shape: &Shape, out: &mut Vec<Value>) {
    match &shape.kind {
        Kind::Enum(values) => out.extend(values.iter().cloned()),
        Kind::Array(items) => enum_values(items, out),
        Kind::Union(variants) => variants.iter().for_each(|v| enum_values(v, out)),
        Kind::Object { props, extra } => {
            props.iter().for_each(|p| enum_values(&p.shape, out));
            if let Some(extra) = extra {
                enum_values(extra, out);
            }
        }
        _ => {}
    }
}

/// Every description of a property nested anywhere below `shape`.
fn nested_descriptions(shape: &Shape, out: &mut Vec<String>) {
    match &shape.kind {
        Kind::Array(items) => nested_descriptions(items, out),
        Kind::Union(variants) => variants.iter().for_each(|v| nested_descriptions(v, out)),
        Kind::Object { props, .. } => {
            for prop in props {
                if let Some(description) = &prop.shape.description {
                    out.push(collapse(description));
                }
                nested_descriptions(&prop.shape, out);
            }
        }
        _ => {}
    }
}

#[test]
fn corpus_holds_every_snapshot() {
    let snapshots = snapshots();
    for snapshot in &snapshots {
        assert!(
            !snapshot.entries.is_empty(),
            "{}.tools.json lists no tools",
            snapshot.server
        );
    }
}

#[test]
fn every_tool_of_every_snapshot_parses() {
    let mut failures = Vec::new();
    for snapshot in snapshots() {
        let outcome = catch_unwind(AssertUnwindSafe(|| parse_tools(&snapshot.entries)));
        let (tools, warnings) = match outcome {
            Ok(parsed) => parsed,
            Err(payload) => {
                failures.push(format!(
                    "{}: parse_tools panicked: {}",
                    snapshot.server,
                    panic_message(payload.as_ref())
                ));
                continue;
            }
        };
        if !warnings.is_empty() {
            failures.push(format!("{}: warnings {warnings:?}", snapshot.server));
        }
        if tools.len() != snapshot.entries.len() {
            failures.push(format!(
                "{}: {} tools parsed from {} entries",
                snapshot.server,
                tools.len(),
                snapshot.entries.len()
            ));
        }
        for (tool, raw) in tools.iter().zip(&snapshot.entries) {
            if Some(tool.name.as_str()) != raw.get("name").and_then(Value::as_str) {
                failures.push(format!(
                    "{}: tool {:?} parsed in place of {:?}",
                    snapshot.server, tool.name, raw["name"]
                ));
            }
            if &tool.raw != raw {
                failures.push(format!(
                    "{}/{}: raw JSON not kept as sent",
                    snapshot.server, tool.name
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn listing_has_one_line_per_tool_in_server_order() {
    let mut failures = Vec::new();
    for snapshot in snapshots() {
        let (tools, _) = parse_tools(&snapshot.entries);
        let mut lines = Vec::new();
        for tool in &tools {
            match catch_unwind(AssertUnwindSafe(|| listing_line(tool))) {
                Ok(line) => lines.push(line),
                Err(payload) => failures.push(format!(
                    "{}/{}: listing_line panicked: {}",
                    snapshot.server,
                    tool.name,
                    panic_message(payload.as_ref())
                )),
            }
        }
        if lines.len() != tools.len() {
            continue;
        }
        for (line, tool) in lines.iter().zip(&tools) {
            if line.contains('\n') || line.contains('\r') {
                failures.push(format!(
                    "{}/{}: listing line spans lines: {line:?}",
                    snapshot.server, tool.name
                ));
            }
        }
        let listing = lines.join("\n");
        let listed: Vec<&str> = listing.lines().collect();
        if listed.len() != snapshot.entries.len() {
            failures.push(format!(
                "{}: {} listing lines for {} tools",
                snapshot.server,
                listed.len(),
                snapshot.entries.len()
            ));
            continue;
        }
        for (line, raw) in listed.iter().zip(&snapshot.entries) {
            let name = raw["name"].as_str().unwrap_or_default();
            if !line.starts_with(&format!("{name}(")) {
                failures.push(format!(
                    "{}: listing line for {name:?} out of order or malformed: {line:?}",
                    snapshot.server
                ));
                continue;
            }
            // Every raw property is in the signature, with `?` exactly when it is optional.
            let schema = &raw["inputSchema"];
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let properties = schema.get("properties").and_then(Value::as_object);
            for prop in properties.into_iter().flat_map(|p| p.keys()) {
                let mark = if required.contains(&prop.as_str()) {
                    ""
                } else {
                    "?"
                };
                let first = format!("{name}({prop}{mark}:");
                let later = format!(", {prop}{mark}:");
                if !line.starts_with(&first) && !line.contains(&later) {
                    failures.push(format!(
                        "{}: listing of {name:?} lacks {prop}{mark}: {line:?}",
                        snapshot.server
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn help_shows_every_fact_of_the_schema_model() {
    check_every_tool("help vs schema model", |server, tool, _raw| {
        let mut problems = Vec::new();
        let help = tool_help(server, tool);
        let usage = format!("usage: ferry {server} {}", tool.name);
        if !help.starts_with(&usage) {
            problems.push(format!("help does not start with {usage:?}"));
        }
        if !help.ends_with('\n') {
            problems.push("help does not end with a newline".into());
        }
        let block = match property_block(&help, tool) {
            Ok(block) => block,
            Err(problem) => return vec![problem],
        };
        let lines: Vec<&str> = block.lines().collect();
        let schema = ToolSchema::from_input_schema(&tool.input_schema);
        let mut cursor = 0;
        for prop in &schema.props {
            let head = format!("  --{} {}", prop.name, render_type(&prop.shape));
            // The line of this property: after the previous one, the head followed by facts.
            let found = lines.iter().enumerate().skip(cursor).find_map(|(i, line)| {
                let facts = line.strip_prefix(&head)?;
                let ends_head = facts.is_empty()
                    || [" (required)", " = ", " [", ": "]
                        .iter()
                        .any(|p| facts.starts_with(p));
                ends_head.then_some((i, *line, facts))
            });
            let Some((index, line, facts)) = found else {
                problems.push(format!(
                    "no line {head:?}... (in schema order) in the help:\n{help}"
                ));
                continue;
            };
            cursor = index + 1;
            let rest = match facts.strip_prefix(" (required)") {
                Some(rest) if prop.required => rest,
                Some(_) => {
                    problems.push(format!("optional --{} marked required: {line}", prop.name));
                    continue;
                }
                None if prop.required => {
                    problems.push(format!("required --{} not marked: {line}", prop.name));
                    continue;
                }
                None => facts,
            };
            if let Some(default) = &prop.shape.default {
                let shown = format!(" = {}", render_value(default));
                if !rest.starts_with(&shown) {
                    problems.push(format!(
                        "--{}: default {default} not shown as {shown:?}: {line}",
                        prop.name
                    ));
                }
            } else if rest.starts_with(" = ") {
                problems.push(format!("--{}: a default without one: {line}", prop.name));
            }
            let mut values = Vec::new();
            enum_values(&prop.shape, &mut values);
            for value in values {
                if !line.contains(&render_value(&value)) {
                    problems.push(format!(
                        "--{}: enum value {value} missing: {line}",
                        prop.name
                    ));
                }
            }
            for (keyword, value) in &prop.shape.constraints {
                let shown = format!("{keyword} {}", render_value(value));
                if !line.contains(&shown) {
                    problems.push(format!(
                        "--{}: constraint {shown:?} missing: {line}",
                        prop.name
                    ));
                }
            }
            if let Some(description) = &prop.shape.description {
                let description = collapse(description);
                if !description.is_empty() && !line.ends_with(&format!(": {description}")) {
                    problems.push(format!(
                        "--{}: description {description:?} not at the end of its line: {line}",
                        prop.name
                    ));
                }
            }
            let mut nested = Vec::new();
            nested_descriptions(&prop.shape, &mut nested);
            for description in nested {
                if !description.is_empty() && !block.contains(&description) {
                    problems.push(format!(
                        "--{}: nested description {description:?} missing from the help",
                        prop.name
                    ));
                }
            }
        }
        problems
    });
}

#[test]
fn help_shows_every_raw_property_and_required_mark() {
    check_every_tool("help vs raw inputSchema", |server, tool, raw| {
        let mut problems = Vec::new();
        let help = tool_help(server, tool);
        let block = match property_block(&help, tool) {
            Ok(block) => block,
            Err(problem) => return vec![problem],
        };
        let schema = &raw["inputSchema"];
        let properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let required: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let top_lines: Vec<&str> = block.lines().filter(|l| l.starts_with("  --")).collect();
        if top_lines.len() != properties.len() {
            problems.push(format!(
                "{} property lines for {} properties:\n{help}",
                top_lines.len(),
                properties.len()
            ));
        }
        for (name, node) in &properties {
            let head = format!("  --{name} ");
            let Some(line) = top_lines.iter().find(|l| l.starts_with(&head)) else {
                problems.push(format!("property {name:?} has no --{name} line:\n{help}"));
                continue;
            };
            let description = node
                .get("description")
                .and_then(Value::as_str)
                .map(collapse)
                .unwrap_or_default();
            let marked = line.contains(" (required)");
            if required.contains(&name.as_str()) && !marked {
                problems.push(format!("required {name:?} not marked: {line}"));
            }
            if !required.contains(&name.as_str()) && marked && !description.contains("(required)") {
                problems.push(format!("optional {name:?} marked required: {line}"));
            }
            if !description.is_empty() && !line.contains(&description) {
                problems.push(format!("{name:?}: description missing: {line}"));
            }
            if let Some(default) = node.get("default") {
                let shown = format!(" = {}", render_value(default));
                if !line.contains(&shown) {
                    problems.push(format!("{name:?}: default {default} missing: {line}"));
                }
            }
            let enums = node
                .get("enum")
                .or_else(|| node.get("items").and_then(|i| i.get("enum")))
                .and_then(Value::as_array);
            for value in enums.into_iter().flatten().filter(|v| !v.is_null()) {
                if !line.contains(&render_value(value)) {
                    problems.push(format!("{name:?}: enum value {value} missing: {line}"));
                }
            }
        }
        for name in &required {
            if !properties.contains_key(*name) {
                problems.push(format!("required {name:?} is not a property"));
            }
        }
        problems
    });
}

#[test]
fn listing_and_help_never_panic() {
    check_every_tool("rendering panics", |server, tool, _raw| {
        let schema = ToolSchema::from_input_schema(&tool.input_schema);
        for prop in &schema.props {
            let _ = render_type(&prop.shape);
        }
        let _ = listing_line(tool);
        let _ = tool_help(server, tool);
        Vec::new()
    });
}

// Exact renderings of representative tools, reviewed by eye against the snapshot JSON.

#[test]
fn filesystem_read_text_file_listing() {
    assert_eq!(
        listing_line(&tool("filesystem", "read_text_file")),
        "read_text_file(path:str, tail?:num, head?:num) - \
         Read the complete contents of a file from the file system as text."
    );
}

#[test]
fn filesystem_edit_file_help() {
    assert_eq!(
        tool_help("filesystem", &tool("filesystem", "edit_file")),
        "usage: ferry filesystem edit_file --path <str> --edits <json> [--dryRun]\n\
         Make line-based edits to a text file. Each edit replaces exact line sequences with new \
         content. Returns a git-style diff showing the changes made. Only works within allowed \
         directories.\n  \
         --path str (required)\n  \
         --edits {oldText:str, newText:str}[] (required)\n    \
         oldText: Text to search for - must match exactly\n    \
         newText: Text to replace with\n  \
         --dryRun bool = false: Preview changes using git-style diff format\n"
    );
}

#[test]
fn time_get_current_time_listing() {
    assert_eq!(
        listing_line(&tool("time", "get_current_time")),
        "get_current_time(timezone:str) - Get current time in a specific timezone"
    );
}

#[test]
fn memory_create_entities_help() {
    assert_eq!(
        tool_help("memory", &tool("memory", "create_entities")),
        "usage: ferry memory create_entities <entities>\n\
         Create multiple new entities in the knowledge graph\n  \
         --entities {name:str, entityType:str, observations:str[]}[] (required)\n    \
         name: The name of the entity\n    \
         entityType: The type of the entity\n    \
         observations: An array of observation contents associated with the entity\n"
    );
}

#[test]
fn fetch_help_shows_defaults_and_constraints() {
    assert_eq!(
        tool_help("fetch", &tool("fetch", "fetch")),
        "usage: ferry fetch fetch <url> [--max_length <int>] [--start_index <int>] [--raw]\n\
         Fetches a URL from the internet and optionally extracts its contents as markdown.\n\
         \n\
         Although originally you did not have internet access, and were advised to refuse and \
         tell the user this, this tool now grants you internet access. Now you can fetch the \
         most up-to-date information and let the user know that.\n  \
         --url str (required) [minLength 1, format uri]: URL to fetch\n  \
         --max_length int = 5000 [minimum 1, maximum 999999]: Maximum number of characters to \
         return.\n  \
         --start_index int = 0 [minimum 0]: On return output starting at this character index, \
         useful if a previous fetch was truncated and more context is required.\n  \
         --raw bool = false: Get the actual HTML content of the requested page, without \
         simplification.\n"
    );
}

#[test]
fn git_log_help_shows_nullable_defaults() {
    let help = tool_help("git", &tool("git", "git_log"));
    let mut lines = help.lines();
    assert_eq!(
        lines.next(),
        Some(
            "usage: ferry git git_log <repo_path> [--max_count <int>] \
             [--start_timestamp <str>] [--end_timestamp <str>]"
        )
    );
    assert_eq!(lines.next(), Some("Shows the commit logs"));
    assert_eq!(
        lines.next(),
        Some("  --repo_path str (required): Repo Path")
    );
    assert_eq!(lines.next(), Some("  --max_count int = 10: Max Count"));
    assert_eq!(
        lines.next(),
        Some(
            "  --start_timestamp str|null = null: Start timestamp for filtering commits. \
             Accepts: ISO 8601 format (e.g., '2024-01-15T14:30:25'), relative dates \
             (e.g., '2 weeks ago', 'yesterday'), or absolute dates (e.g., '2024-01-15', \
             'Jan 15 2024')"
        )
    );
    assert!(lines
        .next()
        .is_some_and(|l| l.starts_with("  --end_timestamp str|null = null: End timestamp")));
    assert_eq!(lines.next(), None);
}

#[test]
fn github_union_items_listing() {
    assert_eq!(
        listing_line(&tool("github", "create_pull_request_review")),
        "create_pull_request_review(owner:str, repo:str, pull_number:num, commit_id?:str, \
         body:str, event:APPROVE|REQUEST_CHANGES|COMMENT, \
         comments?:({path:str, position:num, body:str}|{path:str, line:num, body:str})[]) - \
         Create a review on a pull request"
    );
}

#[test]
fn everything_enum_with_spaces_is_quoted() {
    let t = tool("everything", "get-structured-content");
    assert_eq!(
        listing_line(&t),
        "get-structured-content(location:\"New York\"|Chicago|\"Los Angeles\") - \
         Returns structured content along with an output schema for client data validation"
    );
    assert!(tool_help("everything", &t)
        .contains("\n  --location \"New York\"|Chicago|\"Los Angeles\" (required): Choose city\n"));
}

#[test]
fn playwright_browser_click_help() {
    assert_eq!(
        tool_help("playwright", &tool("playwright", "browser_click")),
        "usage: ferry playwright browser_click [--element <str>] <target> [--doubleClick] \
         [--button left|right|middle] [--modifiers Alt|Control|ControlOrMeta|Meta|Shift...]\n\
         Perform click on a web page\n  \
         --element str: Human-readable element description used to obtain permission to \
         interact with the element\n  \
         --target str (required): Exact target element reference from the page snapshot, or a \
         unique element selector\n  \
         --doubleClick bool: Whether to perform a double click instead of a single click\n  \
         --button left|right|middle: Button to click, defaults to left\n  \
         --modifiers (Alt|Control|ControlOrMeta|Meta|Shift)[]: Modifier keys to press\n"
    );
}

// Known renderer bugs, reported and kept here to be switched on once fixed
// (`cargo test --test corpus -- --ignored`).

/// `first_sentence` treats the `.` of "(e.g." as a sentence end, because the word before it is
/// "(e.g" and only "e.g" is on the abbreviation list: the listing reads
/// "... Add an emoji reaction to an issue (e.g." with an unbalanced parenthesis.
#[test]
fn listing_summary_survives_parenthesised_abbreviation() {
    assert_eq!(
        listing_line(&tool("gitlab", "create_issue_emoji_reaction")),
        "create_issue_emoji_reaction(project_id:str, issue_iid:str, name:str) - \
         Add an emoji reaction to an issue (e.g. thumbsup, rocket, eyes)."
    );
}

/// The description of an array's `items` schema is never shown: `--help` descends into the
/// items' properties but drops the items' own description (chrome-devtools `evaluate_script`
/// `args`, `fill_form` `elements`).
#[test]
fn help_shows_array_item_descriptions() {
    check_every_tool("array item descriptions", |server, tool, _raw| {
        fn items(shape: &Shape, out: &mut Vec<String>) {
            match &shape.kind {
                Kind::Array(item) => {
                    if let Some(description) = &item.description {
                        out.push(collapse(description));
                    }
                    items(item, out);
                }
                Kind::Union(variants) => variants.iter().for_each(|v| items(v, out)),
                Kind::Object { props, .. } => props.iter().for_each(|p| items(&p.shape, out)),
                _ => {}
            }
        }
        let help = tool_help(server, tool);
        let schema = ToolSchema::from_input_schema(&tool.input_schema);
        let mut problems = Vec::new();
        for prop in &schema.props {
            let mut descriptions = Vec::new();
            items(&prop.shape, &mut descriptions);
            for description in descriptions {
                if !description.is_empty() && !help.contains(&description) {
                    problems.push(format!(
                        "--{}: item description {description:?} missing",
                        prop.name
                    ));
                }
            }
        }
        problems
    });
}
