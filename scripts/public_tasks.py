#!/usr/bin/env python3
"""Extracts the public tool-selection tasks ferry's find is scored on beside its own
(benches/retrieval/public.json) from a git checkout of github.com/dpadron10/tool-search-mcp
(MIT): the prompts of its benchmark (src/benchmark/tests/) for the two servers ferry's corpus
holds, Playwright and Context7, with the tools they expect, mapped to ferry's server/tool
names. Every other task (by the benchmark's own order) goes to the part tuned on, the rest to
the sealed part, which is scored only.

    scripts/public_tasks.py GIT_DIR [COMMIT] > benches/retrieval/public.json
"""
import json
import re
import subprocess
import sys

SERVERS = {"playwright": "playwright_", "context7": "context7_"}


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], check=True, capture_output=True,
                          text=True).stdout


def field(source: str, name: str) -> str:
    m = re.search(name + r':\s*\n?\s*"((?:[^"\\]|\\.)*)"', source)
    return json.loads('"' + m.group(1) + '"') if m else ""


def main(repo: str, commit: str = "HEAD") -> None:
    commit = git(repo, "rev-parse", commit).strip()
    tune, sealed = [], []
    for server, prefix in SERVERS.items():
        files = sorted(f for f in git(repo, "ls-tree", "-r", "--name-only", commit,
                                      f"src/benchmark/tests/{server}/").split()
                       if re.search(r"-\d+\.ts$", f))
        for n, path in enumerate(files):
            source = git(repo, "show", f"{commit}:{path}")
            expected = re.search(r"expectedTools:\s*\[([^\]]*)\]", source).group(1)
            tools = [t.strip().strip('"')[len(prefix):] for t in expected.split(",") if t.strip()]
            task = {"task": field(source, "userPrompt"),
                    "accepted": [f"{server}/{t}" for t in tools],
                    "id": field(source, "id")}
            (tune if n % 2 == 0 else sealed).append(task)
    json.dump({
        "about": "Public tool-selection prompts of github.com/dpadron10/tool-search-mcp "
                 f"(MIT, commit {commit}), src/benchmark/tests/ for playwright and context7, "
                 "made by scripts/public_tasks.py. Ranked over every snapshot server but the "
                 "other browser servers (the benchmark's catalog holds one). 'tune' may be looked "
                 "at while tuning; 'sealed' is scored only.",
        "license": "MIT (c) the tool-search-mcp authors",
        "exclude_servers": ["chrome-devtools", "puppeteer", "ea-playwright"],
        "tune": tune,
        "sealed": sealed,
    }, sys.stdout, ensure_ascii=False, indent=1)
    print()


if __name__ == "__main__":
    main(*sys.argv[1:])
