//! `ferry find` over the real snapshots: plain-language tasks should find the right tool.

mod support;

use ferry::protocol::tools::parse_tools;
use ferry::tokens::find::{rank, Document};
use ferry::tokens::meter::tools_from_json;
use support::*;

fn corpus() -> Vec<Document> {
    let mut docs = Vec::new();
    for (server, path) in corpus_snapshots() {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let (tools, _) = parse_tools(tools_from_json(&doc).unwrap());
        docs.extend(tools.into_iter().map(|t| Document::new(&server, t)));
    }
    docs
}

/// Tasks as an agent would phrase them, and the tool that does them.
const TASKS: &[(&str, &str, &str)] = &[
    ("create a merge request", "gitlab", "create_merge_request"),
    (
        "take a screenshot of the page",
        "playwright",
        "browser_take_screenshot",
    ),
    ("read a file", "filesystem", "read_text_file"),
    ("what time is it in Tokyo", "time", "get_current_time"),
    ("convert a time between timezones", "time", "convert_time"),
    ("fetch a web page as markdown", "fetch", "fetch"),
    ("show the git log of commits", "git", "git_log"),
    ("commit staged changes", "git", "git_commit"),
    ("create a github issue", "github", "create_issue"),
    (
        "open a pull request on github",
        "github",
        "create_pull_request",
    ),
    (
        "search repositories on github",
        "github",
        "search_repositories",
    ),
    ("look up library documentation", "context7", "query-docs"),
    (
        "click a button in the browser",
        "playwright",
        "browser_click",
    ),
    (
        "navigate the browser to a url",
        "playwright",
        "browser_navigate",
    ),
    (
        "add observations to entities in the knowledge graph",
        "memory",
        "add_observations",
    ),
    (
        "create relations between entities",
        "memory",
        "create_relations",
    ),
    ("list files in a directory", "filesystem", "list_directory"),
    ("move or rename a file", "filesystem", "move_file"),
    ("edit lines in a file", "filesystem", "edit_file"),
    (
        "list pipelines of a merge request",
        "gitlab",
        "list_merge_request_pipelines",
    ),
    (
        "think step by step about a problem",
        "sequential-thinking",
        "sequentialthinking",
    ),
    (
        "evaluate javascript in the page",
        "chrome-devtools",
        "evaluate_script",
    ),
    (
        "record a performance trace",
        "chrome-devtools",
        "performance_start_trace",
    ),
    ("list azure storage accounts", "azure", "storage"),
    // Added after the ranking was tuned, to keep the hit rate honest.
    (
        "approve the merge request",
        "gitlab",
        "approve_merge_request",
    ),
    ("delete a branch", "gitlab", "delete_branch"),
    ("fork a repository", "github", "fork_repository"),
    ("comment on an issue", "github", "add_issue_comment"),
    (
        "upload a file in the browser",
        "playwright",
        "browser_file_upload",
    ),
    ("press a key", "playwright", "browser_press_key"),
    (
        "run a lighthouse audit",
        "chrome-devtools",
        "lighthouse_audit",
    ),
    (
        "list network requests",
        "chrome-devtools",
        "list_network_requests",
    ),
    ("read the whole knowledge graph", "memory", "read_graph"),
    ("switch to another branch", "git", "git_checkout"),
    (
        "get file metadata like size and modification time",
        "filesystem",
        "get_file_info",
    ),
    ("show a directory tree", "filesystem", "directory_tree"),
    ("add two numbers", "everything", "get-sum"),
    ("query azure key vault secrets", "azure", "keyvault"),
    ("write a file", "filesystem", "write_file"),
    ("search code on github", "github", "search_code"),
];

#[test]
fn plain_language_tasks_find_the_right_tool_in_the_top_three() {
    let docs = corpus();
    let mut misses = Vec::new();
    for (task, server, tool) in TASKS {
        let ranked = rank(task, &docs);
        let top: Vec<String> = ranked
            .iter()
            .take(3)
            .map(|(d, _)| format!("{}/{}", d.server, d.tool.name))
            .collect();
        if !top.contains(&format!("{server}/{tool}")) {
            misses.push(format!("{task:?}: expected {server}/{tool}, got {top:?}"));
        }
    }
    let hits = TASKS.len() - misses.len();
    println!("ferry find hit rate (top 3): {hits}/{}", TASKS.len());
    println!("{}", misses.join("\n"));
    // Every task of the first set was met when the ranking was tuned; the later ones measure it.
    assert!(
        hits * 10 >= TASKS.len() * 9,
        "{} of {} tasks missed:\n{}",
        misses.len(),
        TASKS.len(),
        misses.join("\n")
    );
}

#[test]
fn find_searches_the_cache_of_every_configured_server_without_starting_any() {
    let env = Env::new();
    let (demo, counter) = env.counted(&format!("{FERRY} serve --demo"));
    env.write("config/servers.json", &serde_json::json!({"mcpServers": {"tour": {"command": "sh", "args": ["-c", demo.trim_start_matches("sh -c ").trim_matches('\'')]}}}).to_string());
    assert_eq!(env.run(&["tour"]).code, 0);
    let found = env.run(&["find", "count", "words", "of", "a", "file"]);
    assert_eq!(found.code, 0, "{}", found.stderr);
    assert_eq!(
        found.stdout.lines().next(),
        Some(
            "tour word_count(path) - Count lines, words and bytes of file under current directory"
        )
    );
    assert_eq!(spawns(&counter), 1, "find never starts a server");
    let nothing = env.run(&["find", "zebra"]);
    assert_eq!((nothing.code, nothing.stdout.as_str()), (0, ""));
    assert_eq!(nothing.stderr, "no tool matches \"zebra\"\n");
    let usage = env.run(&["find"]);
    assert_eq!(usage.code, 2);
}
