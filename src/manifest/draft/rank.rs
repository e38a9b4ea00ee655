//! Which options a draft keeps when a CLI has more than it has room for: the ones that signal
//! use. An option scores for being in the CLI's short help (`-h` where it differs from
//! `--help`), for a one-letter alias, for being named in the usage lines or examples, for
//! standing under a "common options" heading or in the help's first section, and for being a
//! shorthand (which exists because what it stands for is common); ties keep the help's order.
//! Never alphabetical.

use super::options::{option_line, OptionSpec};
use super::text::{clean, is_heading, lines};
use super::usage::synopses;

/// What a help text says about its options' use.
pub(super) struct Signals {
    /// Spellings in the short help.
    short: Vec<String>,
    /// Text of the usage lines and examples.
    mentions: String,
    /// Spellings and the (ordinal, heading) of the options section they stand in.
    sections: Vec<(String, usize, String)>,
}

/// The spellings of an option: `-w`, `--word-regexp`.
fn spellings(spec: &OptionSpec) -> Vec<String> {
    spec.short
        .map(|c| format!("-{c}"))
        .into_iter()
        .chain(spec.long.clone())
        .collect()
}

impl Signals {
    /// Reads the signals of a help text and its short help, if any.
    pub(super) fn read(help: &str, short: Option<&str>) -> Signals {
        let short: Vec<String> = short
            .filter(|s| s.trim() != help.trim())
            .map(|s| {
                super::options::options(s)
                    .iter()
                    .flat_map(spellings)
                    .collect()
            })
            .unwrap_or_default();
        let text = clean(help);
        let lines = lines(&text);
        let mut mentions = synopses(&lines).join("\n");
        let mut sections = Vec::new();
        let mut heading = String::new();
        let mut ordinal = 0usize;
        let mut in_examples = false;
        let mut seen_options = false;
        for line in &lines {
            if line.text.is_empty() {
                continue;
            }
            if line.indent <= 3 && is_heading(line.text) {
                if seen_options {
                    ordinal += 1;
                    seen_options = false;
                }
                heading = line.text.to_ascii_lowercase();
                in_examples = heading.contains("example");
                continue;
            }
            if in_examples || line.text.starts_with("$ ") || line.text.contains("e.g.") {
                mentions.push('\n');
                mentions.push_str(line.text);
            }
            if let Some(parsed) = option_line(line.text) {
                seen_options = true;
                for spec in &parsed.specs {
                    for spelled in spellings(spec) {
                        if !sections.iter().any(|(s, _, _)| *s == spelled) {
                            sections.push((spelled, ordinal, heading.clone()));
                        }
                    }
                }
            }
        }
        Signals {
            short,
            mentions,
            sections,
        }
    }

    /// How strongly the help signals that `spec` is used.
    pub(super) fn score(&self, spec: &OptionSpec) -> i32 {
        let spelled = spellings(spec);
        let mut score = 0;
        if spelled.iter().any(|s| self.short.contains(s)) {
            score += 6;
        }
        if spec.short.is_some() {
            score += 4;
        }
        if spelled.iter().any(|s| mentions(&self.mentions, s)) {
            score += 3;
        }
        if let Some((_, ordinal, heading)) =
            self.sections.iter().find(|(s, _, _)| spelled.contains(s))
        {
            const COMMON: [&str; 6] = ["common", "basic", "main", "frequent", "popular", "useful"];
            if COMMON.iter().any(|w| heading.contains(w)) {
                score += 3;
            }
            if *ordinal == 0 {
                score += 1;
            }
        }
        // A shorthand exists because the combination it stands for is common (`--oneline`).
        let description = spec.description.to_ascii_lowercase();
        if description.contains("shorthand for") || description.contains("short for") {
            score += 3;
        }
        if spec.long.as_deref().is_some_and(|l| l.starts_with("--no-")) {
            score -= 2;
        }
        score
    }
}

/// Whether `text` names the option `spelled` as a word of its own (`-w` in `rg -w foo`, not
/// in `--word`).
fn mentions(text: &str, spelled: &str) -> bool {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices(spelled).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + spelled.len()..].chars().next();
        !before.is_some_and(is_name) && !after.is_some_and(is_name)
    })
}

/// The indices of `specs` to keep, at most `room`, best signalled first among equals in the
/// help's order; returned in the help's order.
pub(super) fn keep(specs: &[&OptionSpec], signals: &Signals, room: usize) -> Vec<usize> {
    let mut order: Vec<(i32, usize)> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| (-signals.score(spec), i))
        .collect();
    order.sort();
    let mut kept: Vec<usize> = order.into_iter().take(room).map(|(_, i)| i).collect();
    kept.sort_unstable();
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_option_is_mentioned_as_a_word() {
        assert!(mentions("rg -w foo", "-w"));
        assert!(mentions("[-n <number>]", "-n"));
        assert!(!mentions("--word", "-w"));
        assert!(!mentions("--max-count", "--max"));
    }
}
