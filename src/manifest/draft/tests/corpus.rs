use super::*;

// The `--help` texts of common CLIs as installed by tests/fixtures/setup.sh (captured by
// scripts/capture-help.sh, versions in tests/fixtures/help/corpus/VERSIONS): every draft loads.

fn corpus() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/help/corpus");
    let mut texts: Vec<(String, String)> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e
                .file_name()
                .to_string_lossy()
                .strip_suffix(".txt")?
                .to_string();
            Some((name, std::fs::read_to_string(e.path()).ok()?))
        })
        .collect();
    texts.sort();
    texts
}

fn corpus_tool(cli: &str) -> Tool {
    let (_, text) = corpus().into_iter().find(|(n, _)| n == cli).unwrap();
    check(&draft(cli, &[help(&[], &text)])).remove(0)
}

#[test]
fn every_corpus_draft_loads() {
    let texts = corpus();
    assert!(texts.len() >= 40, "{} help texts", texts.len());
    for (cli, text) in &texts {
        let drafted = draft(cli, &[help(&[], text)]);
        assert!(!drafted.contains("ferry bug"), "{cli}");
        check(&drafted);
    }
}

#[test]
fn corpus_drafts_keep_what_people_use() {
    let rg = corpus_tool("rg");
    for name in [
        "word-regexp",
        "max-count",
        "type",
        "regexp",
        "smart-case",
        "only-matching",
    ] {
        assert!(rg.params.contains_key(name), "rg dropped --{name}");
    }
    assert!(!rg.params.contains_key("auto-hybrid-regex"));
    // Repeated options, once per value.
    assert!(
        rg.command_text().contains(r#""-g{glob*}""#),
        "{}",
        rg.command_text()
    );
    let jq = corpus_tool("jq");
    assert!(jq.param("jq-filter").code && jq.def.stdin.is_some());
    assert!(
        !jq.command_text().contains("\"--\""),
        "{}",
        jq.command_text()
    );
    let diff = corpus_tool("diff");
    assert!(diff.command_text().contains("--unified={unified}"));
    for cli in ["sort", "wc", "sed"] {
        assert!(corpus_tool(cli).def.stdin.is_some(), "{cli} reads stdin");
    }
    let curl = corpus_tool("curl");
    assert!(curl.def.permissions.network);
    assert!(
        !curl.description.contains("not the full help"),
        "{}",
        curl.description
    );
    assert!(!corpus_tool("ls").def.permissions.network);
    let sh = corpus_tool("sh");
    assert!(
        !sh.description.contains("Illegal option"),
        "{}",
        sh.description
    );
    for cli in [
        "sqlite3", "sed", "make", "node", "python3", "xargs", "zip", "ssh",
    ] {
        let tool = corpus_tool(cli);
        assert!(
            tool.params.values().any(|p| p.code),
            "{cli}: nothing declared as code"
        );
    }
    let find = corpus_tool("find");
    assert!(find.param("expression").allow_dash);
    for gone in ["exec", "delete", "fprint"] {
        assert!(!find.params.contains_key(gone), "{gone}");
    }
}
