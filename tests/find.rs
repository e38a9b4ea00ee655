//! `ferry find` over the real snapshots: plain-language tasks should find the right tool.

mod support;

use ferry::protocol::tools::parse_tools;
use ferry::tokens::find::{rank, Document};
use ferry::tokens::meter::tools_from_json;
use support::*;

fn corpus() -> Vec<Document> {
    documents(corpus_snapshots())
}

/// The 26 servers of benches/heldout/, which the ranking was never tuned on.
fn heldout() -> Vec<Document> {
    documents(heldout_snapshots())
}

fn documents(snapshots: Vec<(String, std::path::PathBuf)>) -> Vec<Document> {
    let mut docs = Vec::new();
    for (server, path) in snapshots {
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

/// Tasks for the held-out servers, written from their tool names before any ranking was run
/// on them (2026-11-30). One rule came after their first run (the server's name is searched),
/// prompted by the "notion" miss here: they are no longer wholly unseen.
const HELDOUT_TASKS: &[(&str, &str, &str)] = &[
    (
        "post a message to a slack channel",
        "slack",
        "slack_post_message",
    ),
    ("reply in a slack thread", "slack", "slack_reply_to_thread"),
    ("refund a payment", "stripe", "create_refund"),
    ("cancel a subscription", "stripe", "cancel_subscription"),
    ("create a customer in stripe", "stripe", "create_customer"),
    (
        "add a comment to a notion page",
        "notion",
        "API-create-a-comment",
    ),
    (
        "get the logs of a kubernetes pod",
        "kubernetes",
        "kubectl_logs",
    ),
    (
        "scale a kubernetes deployment",
        "kubernetes",
        "kubectl_scale",
    ),
    (
        "list the tables of the sqlite database",
        "sqlite",
        "list_tables",
    ),
    (
        "get driving directions between two places",
        "google-maps",
        "maps_directions",
    ),
    (
        "turn an address into coordinates",
        "google-maps",
        "maps_geocode",
    ),
    ("restart the dynos of a heroku app", "heroku", "ps_restart"),
    ("rename a heroku app", "heroku", "rename_app"),
    (
        "create an index on a mongodb collection",
        "mongodb",
        "create-index",
    ),
    (
        "insert documents into a collection",
        "mongodb",
        "insert-many",
    ),
    ("search sentry issues", "sentry", "search_issues"),
];

/// How many tasks have their tool first, and how many in the top three, with the misses.
fn hit_rates(tasks: &[(&str, &str, &str)], docs: &[Document]) -> (usize, usize, Vec<String>) {
    let (mut first, mut top3, mut misses) = (0, 0, Vec::new());
    for (task, server, tool) in tasks {
        let ranked = rank(task, docs);
        let names: Vec<String> = ranked
            .iter()
            .take(3)
            .map(|(d, _)| format!("{}/{}", d.server, d.tool.name))
            .collect();
        let want = format!("{server}/{tool}");
        first += usize::from(names.first() == Some(&want));
        if names.contains(&want) {
            top3 += 1;
        } else {
            misses.push(format!("{task:?}: expected {want}, got {names:?}"));
        }
    }
    (first, top3, misses)
}

#[test]
fn held_out_tasks_find_the_right_tool_on_servers_the_ranking_was_not_tuned_on() {
    let docs = heldout();
    let (first, top3, misses) = hit_rates(HELDOUT_TASKS, &docs);
    let n = HELDOUT_TASKS.len();
    println!("held-out find: first hit right {first}/{n}, top 3 {top3}/{n}");
    println!("{}", misses.join("\n"));
    // Measured on first writing: see the closing note; a regression shows here.
    assert!(
        top3 * 10 >= n * 8,
        "{} of {n} missed:\n{}",
        misses.len(),
        misses.join("\n")
    );
}

#[test]
fn plain_language_tasks_find_the_right_tool_in_the_top_three() {
    let docs = corpus();
    // `ferry find` shows the first hit's help: how often that is the right tool, too.
    let (first, hits, misses) = hit_rates(TASKS, &docs);
    println!("ferry find hit rate (top 3): {hits}/{}", TASKS.len());
    println!("first hit right: {first}/{}", TASKS.len());
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
