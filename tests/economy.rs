//! `ferry tokens` and `ferry skill` as a user runs them.

mod support;

use support::*;

fn corpus_files() -> Vec<String> {
    corpus_snapshots()
        .into_iter()
        .map(|(_, path)| path.display().to_string())
        .collect()
}

#[test]
fn tokens_measures_every_snapshot_on_three_paths() {
    let env = Env::new();
    let files = corpus_files();
    let mut args = vec!["tokens".to_string(), "--json".to_string()];
    for file in &files {
        args.push("--from".into());
        args.push(file.clone());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = env.run(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), files.len());
    assert_eq!(report["tokenizer"], "o200k_base");
    // ferry's always-loaded text, as the README states it.
    assert_eq!(report["ferry_upfront"].as_u64().unwrap(), 51);
    let mut eager = 0;
    for server in servers {
        let tools = server["tools"].as_u64().unwrap();
        assert!(tools > 0, "{server}");
        // Eager loading pays every definition; deferred pays names; both grow with the tools.
        assert_eq!(
            server["eager_upfront"].as_u64().unwrap(),
            server["definitions"].as_u64().unwrap() + server["instructions"].as_u64().unwrap()
        );
        assert!(
            server["deferred_upfront"].as_u64().unwrap()
                < server["eager_upfront"].as_u64().unwrap()
        );
        eager += server["eager_upfront"].as_u64().unwrap();
    }
    assert_eq!(report["total"]["eager_upfront"].as_u64().unwrap(), eager);
    assert!(report["note"].as_str().unwrap().contains("not public"));

    let text = env.run(&[
        "tokens",
        "--from",
        &files[0],
        "--tokenizer",
        "cl100k_base",
        "--host",
        "openai",
        "--session",
        "3",
        "--turns",
        "10",
    ]);
    assert_eq!(text.code, 0, "{}", text.stderr);
    assert!(
        text.stdout.starts_with(
            "cl100k_base tokens, openai tool format. Claude's tokenizer is not public"
        ),
        "{}",
        text.stdout
    );
    assert!(
        text.stdout
            .contains("\nsession: 3 distinct tools used over 10 turns, prompt caching on"),
        "{}",
        text.stdout
    );
    assert!(text.stdout.contains("break-even with eager loading"));

    let bad = env.run(&["tokens", "--tokenizer", "gpt2"]);
    assert_eq!(
        (bad.code, bad.stderr.as_str()),
        (
            2,
            "error: unknown tokenizer \"gpt2\"\nhint: use o200k_base or cl100k_base\n"
        )
    );
}

#[test]
fn tokens_and_skill_on_a_live_server_and_skill_staleness() {
    let env = Env::new();
    assert_eq!(
        env.run(&["add", "tour", "--", FERRY, "serve", "--demo"])
            .code,
        0
    );
    let tokens = env.run(&["tokens", "tour"]);
    assert_eq!(tokens.code, 0, "{}", tokens.stderr);
    assert!(tokens.stdout.contains("\ntour "), "{}", tokens.stdout);
    assert!(
        tokens.stdout.contains("list_files"),
        "a single server gets a line per tool: {}",
        tokens.stdout
    );

    let skills = env.path("work/skills");
    let wrote = env.run(&["skill", "tour"]);
    assert_eq!(wrote.code, 0, "{}", wrote.stderr);
    assert_eq!(wrote.stdout, "wrote skills/tour/SKILL.md (4 tools)\n");
    let skill = std::fs::read_to_string(skills.join("tour/SKILL.md")).unwrap();
    assert!(
        skill.starts_with("---\nname: tour\ndescription: "),
        "{skill}"
    );
    assert!(
        skill.contains(
            "\nword_count(path) - Count lines, words and bytes of file under current directory\n"
        ),
        "{skill}"
    );
    assert!(skill.contains("`ferry tour <tool> --help`"));

    let check = env.run(&["skill", "--check"]);
    assert_eq!(
        (check.code, check.stdout.as_str()),
        (0, "skills/tour/SKILL.md: up to date\n")
    );

    // The server's tools change (a filter in its config hides one): the skill is now stale.
    let config = env.path("config/servers.json");
    let mut doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    doc["mcpServers"]["tour"]["excludeTools"] = serde_json::json!(["pixel"]);
    std::fs::write(&config, doc.to_string()).unwrap();
    let stale = env.run(&["skill", "--check"]);
    assert_eq!(
        (stale.code, stale.stdout.as_str()),
        (
            1,
            "skills/tour/SKILL.md: stale: the tools changed (run `ferry skill tour`)\n"
        )
    );
}
