//! `ferry find` over the real snapshots: plain-language tasks should find the right tool.

#[path = "../benches/retrieval/score.rs"]
mod score;
mod support;

use ferry::protocol::tools::parse_tools;
use ferry::tokens::find::{Document, Index};
use ferry::tokens::meter::tools_from_json;
use std::os::unix::fs::MetadataExt;
use support::*;

fn corpus() -> Index {
    documents(corpus_snapshots())
}

/// The 26 servers of benches/heldout/, which the ranking was never tuned on.
fn heldout() -> Index {
    documents(heldout_snapshots())
}

/// Every snapshot server at once: what a person with all 39 configured searches.
fn everything() -> Index {
    let mut snapshots = corpus_snapshots();
    snapshots.extend(heldout_snapshots());
    documents(snapshots)
}

fn documents(snapshots: Vec<(String, std::path::PathBuf)>) -> Index {
    let mut docs = Vec::new();
    for (server, path) in snapshots {
        let doc: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let (tools, _) = parse_tools(tools_from_json(&doc).unwrap());
        docs.extend(tools.into_iter().map(|t| Document::new(&server, t)));
    }
    Index::new(docs)
}

/// Tasks as an agent would phrase them, and the tool that does them. Seen: the first 24 tuned
/// the earlier ranking, the rest were written after it; all were looked at while the ranking of
/// issue 19 was tuned.
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

/// The tuning set of issue 19: the misses the issue reports, and tasks written while the
/// ranking was tuned, over all 39 snapshot servers. The ranking was tuned on these (and on
/// the two sets above); the held-out set below was not.
const ISSUE_19_TUNING: &[(&str, &[&str])] = &[
    (
        "log the hours I spent on a Jira ticket",
        &["atlassian/jira_add_worklog"],
    ),
    (
        "move a Jira issue to Done",
        &["atlassian/jira_transition_issue"],
    ),
    (
        "download a web page and read it as markdown",
        &[
            "fetch/fetch",
            "exa/web_fetch_exa",
            "exa/crawling_exa",
            "firecrawl/firecrawl_scrape",
            "tavily/tavily_extract",
        ],
    ),
    (
        "make a new folder",
        &[
            "filesystem/create_directory",
            "desktop-commander/create_directory",
        ],
    ),
    (
        "read a file",
        &["filesystem/read_text_file", "desktop-commander/read_file"],
    ),
    (
        "write some text to a file",
        &["filesystem/write_file", "desktop-commander/write_file"],
    ),
    (
        "what branches are there",
        &[
            "git/git_branch",
            "gitlab/list_branches",
            "supabase/list_branches",
        ],
    ),
    (
        "show me what changed in the last commit",
        &["git/git_show", "gitlab/get_commit_diff"],
    ),
    (
        "open an issue about the crash",
        &[
            "github/create_issue",
            "gitlab/create_issue",
            "atlassian/jira_create_issue",
        ],
    ),
    ("list my open pull requests", &["github/list_pull_requests"]),
    (
        "leave a review on the pull request",
        &["github/create_pull_request_review"],
    ),
    (
        "send a message to the team on slack",
        &["slack/slack_post_message"],
    ),
    ("who are the users in our slack", &["slack/slack_get_users"]),
    ("create a new product in stripe", &["stripe/create_product"]),
    (
        "stop a customer's subscription",
        &["stripe/cancel_subscription"],
    ),
    ("list all my invoices", &["stripe/list_invoices"]),
    (
        "write a page in confluence",
        &["atlassian/confluence_create_page"],
    ),
    (
        "find jira issues assigned to me",
        &["atlassian/jira_search"],
    ),
    (
        "change the title of a confluence page",
        &["atlassian/confluence_update_page"],
    ),
    (
        "attach a file to a confluence page",
        &["atlassian/confluence_upload_attachment"],
    ),
    (
        "look at the pods in the cluster",
        &["kubernetes/kubectl_get"],
    ),
    (
        "see the logs of a crashed pod",
        &["kubernetes/kubectl_logs"],
    ),
    ("query the sqlite database", &["sqlite/read_query"]),
    ("add a row to a table", &["sqlite/write_query"]),
    (
        "speed up lookups on a collection with an index",
        &["mongodb/create-index"],
    ),
    (
        "take a picture of the web page",
        &[
            "playwright/browser_take_screenshot",
            "chrome-devtools/take_screenshot",
            "puppeteer/puppeteer_screenshot",
            "ea-playwright/playwright_screenshot",
        ],
    ),
    (
        "run some javascript in the browser",
        &[
            "playwright/browser_evaluate",
            "playwright/browser_run_code_unsafe",
            "chrome-devtools/evaluate_script",
            "puppeteer/puppeteer_evaluate",
            "ea-playwright/playwright_evaluate",
        ],
    ),
    (
        "close the browser",
        &["playwright/browser_close", "ea-playwright/playwright_close"],
    ),
    (
        "what's on the page right now",
        &[
            "playwright/browser_snapshot",
            "chrome-devtools/take_snapshot",
            "ea-playwright/playwright_get_visible_text",
        ],
    ),
    (
        "search the web for rust tutorials",
        &[
            "brave/brave_web_search",
            "brave-legacy/brave_web_search",
            "exa/web_search_exa",
            "tavily/tavily_search",
            "firecrawl/firecrawl_search",
        ],
    ),
    ("find images of mountains", &["brave/brave_image_search"]),
    (
        "where is the Eiffel tower on the map",
        &["google-maps/maps_geocode", "google-maps/maps_search_places"],
    ),
    (
        "what's the elevation of Denver",
        &["google-maps/maps_elevation"],
    ),
    ("list my heroku apps", &["heroku/list_apps"]),
    ("add more dynos to my app", &["heroku/ps_scale"]),
    ("back up the postgres database", &["heroku/pg_backups"]),
    ("list my cloudflare workers", &["cloudflare/worker_list"]),
    ("create a storage bucket", &["cloudflare/r2_create_bucket"]),
    (
        "set an environment variable for my worker",
        &["cloudflare/env_var_set"],
    ),
    (
        "what errors happened in sentry today",
        &["sentry/search_events", "sentry/search_issues"],
    ),
    ("create a new sentry project", &["sentry/create_project"]),
    ("run a database migration", &["supabase/apply_migration"]),
    (
        "find notes mentioning kubernetes in my vault",
        &["obsidian/obsidian_simple_search"],
    ),
    (
        "append a line to my obsidian note",
        &[
            "obsidian/obsidian_append_content",
            "obsidian/obsidian_patch_content",
        ],
    ),
    ("what time is it in Sydney", &["time/get_current_time"]),
    (
        "think through this problem carefully",
        &["sequential-thinking/sequentialthinking"],
    ),
    (
        "find the docs for the next.js router",
        &["context7/query-docs", "context7/resolve-library-id"],
    ),
    (
        "get the cloudwatch metrics for my lambda",
        &["aws-cloudwatch/get_metric_data"],
    ),
    (
        "search the aws documentation for S3 lifecycle rules",
        &["aws-docs/search_documentation"],
    ),
    (
        "research a company",
        &["exa/web_search_advanced_exa", "exa/company_research_exa"],
    ),
    (
        "crawl a whole website",
        &["firecrawl/firecrawl_crawl", "tavily/tavily_crawl"],
    ),
    ("get the design data from figma", &["figma/get_figma_data"]),
    (
        "execute a command in a terminal",
        &[
            "desktop-commander/start_process",
            "desktop-commander/interact_with_process",
        ],
    ),
    (
        "list running processes",
        &["desktop-commander/list_processes"],
    ),
    ("read a value from redis", &["redis/get"]),
    ("delete a d1 database", &["cloudflare/d1_delete_database"]),
    (
        "translate an address to latitude and longitude",
        &["google-maps/maps_geocode"],
    ),
    ("create an azure storage account", &["azure/storage"]),
    ("list azure resource groups", &["azure/group_list"]),
    (
        "push several files in one commit",
        &["github/push_files", "gitlab/push_files"],
    ),
    ("who am I on gitlab", &["gitlab/whoami"]),
    (
        "write a comment on a gitlab issue",
        &["gitlab/create_note", "gitlab/create_issue_note"],
    ),
    (
        "check the pipeline of a merge request",
        &["gitlab/list_merge_request_pipelines"],
    ),
    ("echo back a message", &["everything/echo"]),
    (
        "switch the page to dark mode",
        &[
            "playwright/browser_emulate_media",
            "chrome-devtools/emulate",
        ],
    ),
    (
        "drag an element onto another",
        &[
            "playwright/browser_drag",
            "chrome-devtools/drag",
            "ea-playwright/playwright_drag",
        ],
    ),
];

#[test]
fn issue_19_tuning_tasks_over_every_snapshot_server() {
    let docs = everything();
    let (first, top3, misses) = accepted_rates(ISSUE_19_TUNING, &docs);
    let n = ISSUE_19_TUNING.len();
    // The older sets, ranked over every server at once too.
    let as_accepted =
        |tasks: &[(&'static str, &'static str, &'static str)]| -> Vec<(&'static str, Vec<String>)> {
            tasks
                .iter()
                .map(|(t, s, n)| (*t, vec![format!("{s}/{n}")]))
                .collect()
        };
    let mut older_first = 0;
    let mut older_top3 = 0;
    let mut older_misses = Vec::new();
    let older: Vec<(&str, Vec<String>)> = [as_accepted(TASKS), as_accepted(HELDOUT_TASKS)].concat();
    for (task, accepted) in &older {
        let accepted: Vec<&str> = accepted.iter().map(String::as_str).collect();
        let (f, t, m) = accepted_rates(&[(task, &accepted)], &docs);
        if f == 0 && std::env::var_os("FIND_TUNING").is_some() {
            let shown: Vec<String> = docs
                .rank(task)
                .iter()
                .take(4)
                .map(|(d, s)| format!("{}/{} {s:.2}", d.server, d.tool.name))
                .collect();
            println!("older first miss {task:?} want {accepted:?}: {shown:?}");
        }
        older_first += f;
        older_top3 += t;
        older_misses.extend(m);
    }
    println!("issue 19 tuning set: first {first}/{n}, top 3 {top3}/{n}");
    println!("{}", misses.join("\n"));
    if std::env::var_os("FIND_TUNING").is_some() {
        for (task, accepted) in ISSUE_19_TUNING {
            let ranked = docs.rank(task);
            let top = ranked
                .first()
                .map(|(d, _)| format!("{}/{}", d.server, d.tool.name));
            if !top.as_deref().is_some_and(|t| accepted.contains(&t)) {
                let shown: Vec<String> = ranked
                    .iter()
                    .take(5)
                    .map(|(d, s)| format!("{}/{} {s:.2}", d.server, d.tool.name))
                    .collect();
                println!("first miss {task:?} want {accepted:?}: {shown:?}");
            }
        }
    }
    println!(
        "the first two sets over all servers: first {older_first}/{}, top 3 {older_top3}/{}",
        older.len(),
        older.len()
    );
    println!("{}", older_misses.join("\n"));
    assert!(
        first >= TUNING_FIRST && top3 >= TUNING_TOP3,
        "first {first}, top 3 {top3}"
    );
}

const TUNING_FIRST: usize = 54;
const TUNING_TOP3: usize = 61;

/// The held-out set of issue 19: 44 tasks phrased as a person asks, over all 39 snapshot
/// servers (tests/corpus/ and benches/heldout/, 871 tools ranked together), each with the
/// tools that would do it. Written and committed on 2026-12-02 before the ranking of issue 19
/// was changed, and never tuned on: its rates before and after are in the README.
const ISSUE_19_HELDOUT: &[(&str, &[&str])] = &[
    (
        "who is watching this jira ticket",
        &["atlassian/jira_get_issue_watchers"],
    ),
    (
        "put the ticket into the current sprint",
        &["atlassian/jira_add_issues_to_sprint"],
    ),
    (
        "leave a comment on the confluence page",
        &["atlassian/confluence_add_comment"],
    ),
    (
        "what changed between two versions of a confluence page",
        &["atlassian/confluence_get_page_diff"],
    ),
    ("assign the bug to Bob", &["atlassian/jira_assign_issue"]),
    (
        "rename a file",
        &["filesystem/move_file", "desktop-commander/move_file"],
    ),
    (
        "find all the files ending in .rs",
        &["filesystem/search_files", "desktop-commander/start_search"],
    ),
    (
        "what's in this folder",
        &[
            "filesystem/list_directory",
            "filesystem/list_directory_with_sizes",
            "desktop-commander/list_directory",
        ],
    ),
    (
        "how big is this file",
        &[
            "filesystem/get_file_info",
            "desktop-commander/get_file_info",
        ],
    ),
    ("unstage everything I added", &["git/git_reset"]),
    (
        "what have I changed that isn't staged yet",
        &["git/git_diff_unstaged"],
    ),
    (
        "start a new branch off main",
        &[
            "git/git_create_branch",
            "github/create_branch",
            "gitlab/create_branch",
        ],
    ),
    ("merge this pull request", &["github/merge_pull_request"]),
    (
        "see whether the checks passed on my pull request",
        &["github/get_pull_request_status"],
    ),
    (
        "react with a thumbs up to that slack message",
        &["slack/slack_add_reaction"],
    ),
    (
        "what did people say recently in the general channel",
        &["slack/slack_get_channel_history"],
    ),
    (
        "give the customer their money back",
        &["stripe/create_refund"],
    ),
    (
        "how much money is in my stripe account",
        &["stripe/retrieve_balance"],
    ),
    ("make a discount code", &["stripe/create_coupon"]),
    (
        "put the site into maintenance mode",
        &["heroku/maintenance_on"],
    ),
    (
        "roll the worker back to the previous version",
        &["cloudflare/version_rollback"],
    ),
    ("save a value under a key in redis", &["redis/set"]),
    (
        "show the columns of a table",
        &["sqlite/describe_table", "mongodb/collection-schema"],
    ),
    (
        "how many documents are in the collection",
        &["mongodb/count"],
    ),
    (
        "get rid of a mongo collection",
        &["mongodb/drop-collection"],
    ),
    (
        "check the page for memory leaks",
        &["chrome-devtools/take_heapsnapshot"],
    ),
    (
        "record a video of the page",
        &["chrome-devtools/screencast_start"],
    ),
    (
        "go back to the previous page",
        &[
            "playwright/browser_navigate_back",
            "ea-playwright/playwright_go_back",
            "chrome-devtools/navigate_page",
        ],
    ),
    (
        "save the page as a pdf",
        &["ea-playwright/playwright_save_as_pdf"],
    ),
    (
        "how far is it from Paris to Berlin by car",
        &[
            "google-maps/maps_distance_matrix",
            "google-maps/maps_directions",
        ],
    ),
    (
        "find coffee shops nearby",
        &[
            "google-maps/maps_search_places",
            "brave/brave_local_search",
            "brave/brave_place_search",
            "brave-legacy/brave_local_search",
        ],
    ),
    (
        "latest news about the election",
        &["brave/brave_news_search"],
    ),
    (
        "which cloudwatch alarms are going off right now",
        &["aws-cloudwatch/get_active_alarms"],
    ),
    (
        "run a shell command inside a pod",
        &["kubernetes/exec_in_pod"],
    ),
    ("make a new notion page", &["notion/API-post-page"]),
    (
        "find my notes tagged todo",
        &["obsidian/obsidian_search_by_tag"],
    ),
    (
        "mark the sentry issue as resolved",
        &["sentry/update_issue"],
    ),
    (
        "stop the process with pid 4242",
        &[
            "desktop-commander/kill_process",
            "desktop-commander/force_terminate",
        ],
    ),
    (
        "find research papers about protein folding",
        &["firecrawl/firecrawl_research_search_papers"],
    ),
    (
        "who last changed each line of this file",
        &["gitlab/get_file_blame"],
    ),
    (
        "what is 3pm in New York in Berlin time",
        &["time/convert_time"],
    ),
    (
        "remember that Alice works at Acme",
        &[
            "memory/create_entities",
            "memory/add_observations",
            "memory/create_relations",
        ],
    ),
    (
        "generate typescript types for my database",
        &["supabase/generate_typescript_types"],
    ),
    (
        "check that my gitlab ci config is valid",
        &["gitlab/validate_project_ci_lint", "gitlab/validate_ci_lint"],
    ),
];

/// The held-out set's rates with the ranking before issue 19 (measured when the set was
/// committed) and after it (the floor this test holds).
const FIRST_BEFORE: usize = 21;
const TOP3_BEFORE: usize = 28;
const FIRST_AFTER: usize = 34;
const TOP3_AFTER: usize = 40;

/// How many tasks have their tool first, and how many in the top three, with the misses.
fn hit_rates(tasks: &[(&str, &str, &str)], docs: &Index) -> (usize, usize, Vec<String>) {
    let (mut first, mut top3, mut misses) = (0, 0, Vec::new());
    for (task, server, tool) in tasks {
        let ranked = docs.rank(task);
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

/// As [`hit_rates`], for tasks that more than one tool does.
fn accepted_rates(tasks: &[(&str, &[&str])], docs: &Index) -> (usize, usize, Vec<String>) {
    let (mut first, mut top3, mut misses) = (0, 0, Vec::new());
    for (task, accepted) in tasks {
        let names: Vec<String> = docs
            .rank(task)
            .iter()
            .take(3)
            .map(|(d, _)| format!("{}/{}", d.server, d.tool.name))
            .collect();
        first += usize::from(
            names
                .first()
                .is_some_and(|n| accepted.contains(&n.as_str())),
        );
        if names.iter().any(|n| accepted.contains(&n.as_str())) {
            top3 += 1;
        } else {
            misses.push(format!("{task:?}: expected {accepted:?}, got {names:?}"));
        }
    }
    (first, top3, misses)
}

#[test]
fn issue_19_held_out_tasks_over_every_snapshot_server() {
    let docs = everything();
    let (first, top3, misses) = accepted_rates(ISSUE_19_HELDOUT, &docs);
    let n = ISSUE_19_HELDOUT.len();
    println!(
        "issue 19 held-out set: first {first}/{n}, top 3 {top3}/{n} \
         (before issue 19's ranking: {FIRST_BEFORE}/{n}, {TOP3_BEFORE}/{n})"
    );
    println!("{}", misses.join("\n"));
    assert!(
        first >= FIRST_AFTER && top3 >= TOP3_AFTER,
        "first {first}, top 3 {top3} of {n}:\n{}",
        misses.join("\n")
    );
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
    // The top hit's line and its whole help; no other tool scores near it, so none is shown.
    assert_eq!(
        found.stdout,
        "tour word_count(path)\n    \
         Count the lines, words and bytes of a file under the current directory.\n    \
         --path str required [format path]: The file, relative to the current directory\n"
    );
    assert_eq!(spawns(&counter), 1, "find never starts a server");
    // What the search made of the cache is kept beside it, and a damaged copy is made anew.
    let tools_dir = env.path("cache/tools");
    let saved: Vec<std::path::PathBuf> = std::fs::read_dir(&tools_dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "find"))
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let again = env.run(&["find", "count", "words", "of", "a", "file"]);
    assert_eq!(again.stdout, found.stdout);
    std::fs::write(&saved[0], b"ferry-find 1 garbage").unwrap();
    let damaged = env.run(&["find", "count", "words", "of", "a", "file"]);
    assert_eq!((damaged.code, damaged.stdout), (0, found.stdout.clone()));
    assert!(std::fs::read(&saved[0]).unwrap().len() > 100);
    let nothing = env.run(&["find", "zebra"]);
    assert_eq!((nothing.code, nothing.stdout.as_str()), (1, ""));
    assert_eq!(nothing.stderr, "no tool matches \"zebra\"\n");
    let usage = env.run(&["find"]);
    assert_eq!(usage.code, 2);
}

/// The proxy's index (with postings) ranks exactly as the CLI's one-off scan.
#[test]
fn postings_rank_as_the_scan_does() {
    let scan = everything();
    let listed = everything().with_postings();
    let tasks = TASKS
        .iter()
        .map(|(t, _, _)| *t)
        .chain(ISSUE_19_TUNING.iter().map(|(t, _)| *t));
    for task in tasks {
        let show = |index: &Index| -> Vec<String> {
            index
                .rank(task)
                .iter()
                .map(|(d, s)| format!("{}/{} {s:.9}", d.server, d.tool.name))
                .collect()
        };
        assert_eq!(show(&listed), show(&scan), "{task}");
    }
}

/// The retrieval sets of benches/retrieval/ (written for issue 28 before its ranking was tuned,
/// and a public benchmark's prompts), each part at least at the rates measured when the hybrid
/// ranking landed; the sealed parts were never looked at while tuning.
#[test]
fn retrieval_sets_keep_their_measured_rates() {
    // (part, at least first, at least in the top three), measured with this test's own output.
    const FLOORS: &[(&str, usize, usize)] = &[
        // Since the model distilled on sentences was fused in (issue 28): public tune @1 and
        // public sealed @3 went one down, every other figure stayed or rose.
        // Chinese read through CC-CEDICT: own tune one up in both, own sealed one down in both
        // (15 and 17 before).
        ("own tune", 17, 21),
        ("own sealed", 14, 16),
        ("public tune", 17, 23),
        ("public sealed", 17, 23),
        // benches/retrieval/fresh.json, written blind to the ranking; fresh sealed @1 went one
        // down with the fused model (27 before), @3 two up.
        ("fresh tune", 27, 39),
        ("fresh sealed", 26, 40),
        // benches/retrieval/cjk.json, Chinese and Japanese, tuned on: 13 and 16 without the
        // dictionary.
        ("cjk tune", 15, 19),
    ];
    let mut failed = Vec::new();
    for part in score::parts("tune")
        .into_iter()
        .chain(score::parts("sealed"))
    {
        let index = score::index(&part.exclude);
        let (rates, misses) = score::ferry_rates(&index, &part.tasks);
        let bm25 = score::bm25_rates(&part.exclude, &part.tasks);
        println!(
            "{:14} ferry {}\n{:14} bm25  {}",
            part.name,
            rates.line(),
            "",
            bm25.line()
        );
        // The sealed parts are scored, never read task by task.
        if part.name.ends_with("tune") {
            println!("{}", misses.join("\n"));
        }
        let (_, first, top3) = FLOORS
            .iter()
            .find(|(name, _, _)| *name == part.name)
            .unwrap_or_else(|| panic!("no floor for {}", part.name));
        if rates.at1 < *first || rates.at3 < *top3 {
            failed.push(format!("{}: {}", part.name, rates.line()));
        }
    }
    assert!(
        failed.is_empty(),
        "below the floors:\n{}",
        failed.join("\n")
    );
}

/// A task in another language shares no word with an English catalog: `find` offers the tools
/// nearest to it by meaning (the static model, its languages aligned with English), marked as
/// weak matches with the servers that fit, in the CLI and in the proxy; English nonsense still
/// finds nothing. The search file is written once per listing, not on every search.
#[test]
fn a_task_in_another_language_finds_its_nearest_tools_by_meaning() {
    let env = Env::new();
    let config = serde_json::json!({"mcpServers": {
        "ev": {"command": "sh", "args": ["-c", support::everything()]},
        "fs": {"command": "sh", "args": ["-c", filesystem(&env.path("work"))]},
        "time": {"command": "sh", "args": ["-c", time_server()]},
    }});
    env.write("config/servers.json", &config.to_string());
    for name in ["ev", "fs", "time"] {
        let listed = env.run(&[name]);
        assert_eq!(listed.code, 0, "{name}: {}", listed.stderr);
    }
    // Japanese and Russian: "read a file", "read a file".
    for task in ["ファイルを読む", "прочитать файл"] {
        let found = env.run(&["find", task]);
        assert_eq!(found.code, 0, "{task}: {}", found.stderr);
        let first = found.stdout.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("fs read_") && first.ends_with(" (weak: nearest by meaning)"),
            "{task}: {}",
            found.stdout
        );
        assert!(
            found.stdout.contains("\nweak matches: no tool shares a word with the task, these are the nearest by meaning; the servers that fit best: fs"),
            "{task}: {}",
            found.stdout
        );
    }
    // Chinese is also read through a dictionary (读取 "read", 文件 "file", 创建 "create",
    // 目录 "directory"): its tools are found as an English task's are, not as weak matches.
    for (task, tool) in [
        ("读取文件内容", "fs read_text_file(path)\n"),
        ("创建新目录", "fs create_directory(path)\n"),
        // Traditional characters, as written in Taiwan: "what time is it now".
        ("現在幾點", "time get_current_time("),
    ] {
        let found = env.run(&["find", task]);
        assert_eq!(found.code, 0, "{task}: {}", found.stderr);
        assert!(found.stdout.starts_with(tool), "{task}: {}", found.stdout);
        assert!(!found.stdout.contains("weak"), "{task}: {}", found.stdout);
    }
    let read = env.run(&["find", "读取文件内容", "--no-help"]);
    assert!(
        read.stdout.starts_with("fs read_text_file(path) - "),
        "{}",
        read.stdout
    );
    for nonsense in ["zebra", "blorp snazzle", "purple elephant dancing"] {
        let nothing = env.run(&["find", nonsense]);
        assert_eq!(
            (nothing.code, nothing.stdout.as_str()),
            (1, ""),
            "{nonsense}"
        );
        assert_eq!(nothing.stderr, format!("no tool matches {nonsense:?}\n"));
    }
    // The search files were made by the first search and are not written again while the
    // listings stay as they are.
    let saved: Vec<std::path::PathBuf> = std::fs::read_dir(env.path("cache/tools"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "find"))
        .collect();
    assert_eq!(saved.len(), 3, "{saved:?}");
    let stamps = |paths: &[std::path::PathBuf]| -> Vec<(std::time::SystemTime, u64)> {
        paths
            .iter()
            .map(|p| {
                let meta = std::fs::metadata(p).unwrap();
                (meta.modified().unwrap(), meta.ino())
            })
            .collect()
    };
    let before = stamps(&saved);
    assert_eq!(env.run(&["find", "read", "a", "file"]).code, 0);
    assert_eq!(env.run(&["find", "读取文件内容"]).code, 0);
    assert_eq!(stamps(&saved), before);

    // The proxy's find says the same.
    let mut served = Served::start(&env, &["--servers"]);
    let mut found = String::new();
    let mut id = 0;
    let listed = wait_until(30, || {
        id += 1;
        let result = served.call(
            id,
            "tools/call",
            serde_json::json!({"name": "find", "arguments": {"query": "ファイルを読む"}}),
            &mut Vec::new(),
        );
        found = Served::text(&result);
        !found.contains("Still listing")
    });
    assert!(listed, "{found}");
    let first = found.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("fs/read_") && first.ends_with(" (weak: nearest by meaning)"),
        "{found}"
    );
    assert!(found.contains("\nweak matches: "), "{found}");
    let result = served.call(
        id + 1,
        "tools/call",
        serde_json::json!({"name": "find", "arguments": {"query": "读取文件内容"}}),
        &mut Vec::new(),
    );
    let chinese = Served::text(&result);
    assert!(
        chinese.starts_with("fs/read_text_file(path)\n") && !chinese.contains("weak"),
        "{chinese}"
    );
    let result = served.call(
        id + 2,
        "tools/call",
        serde_json::json!({"name": "find", "arguments": {"query": "blorp snazzle"}}),
        &mut Vec::new(),
    );
    assert!(
        Served::text(&result).starts_with("No tool matches \"blorp snazzle\"."),
        "{}",
        Served::text(&result)
    );
}
