//! Usage lines: the synopses a help text shows, and what they say about operands (`<path>...`,
//! `FILE`, `--`, find's expression after its paths).

use super::options::option_line;
use super::text::{is_capital_placeholder, Line};

/// The synopses of the usage lines (`git log [<options>] …`), continuation lines joined.
pub(super) fn synopses(lines: &[Line]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Inside a usage block: its indentation, and whether indented lines continue the last
    // synopsis (`usage: git [-v]` + `    [--bare]`) or each start one (`USAGE:` + lines).
    let mut block: Option<(usize, bool)> = None;
    for line in lines {
        if line.text.is_empty() {
            block = None;
            continue;
        }
        let lower = line.text.to_ascii_lowercase();
        if let Some(rest) = lower.strip_prefix("usage") {
            // "Usage of prog:" (Go) names no synopsis.
            let Some(rest) = rest.strip_prefix(':') else {
                continue;
            };
            let start = line.text.len() - rest.len();
            let synopsis = line.text[start..].trim();
            if !synopsis.is_empty() {
                out.push(synopsis.to_string());
            }
            block = Some((line.indent, !synopsis.is_empty()));
            continue;
        }
        let Some((indent, continues)) = block else {
            continue;
        };
        if let Some(rest) = lower.strip_prefix("or:") {
            let start = line.text.len() - rest.len();
            out.push(line.text[start..].trim().to_string());
        } else if line.indent > indent && option_line(line.text).is_none() {
            // (An option line right under the usage line, as curl's, ends the block.)
            match out.last_mut() {
                Some(last) if continues => {
                    last.push(' ');
                    last.push_str(line.text);
                }
                _ => out.push(line.text.to_string()),
            }
        } else {
            block = None;
        }
    }
    out
}

/// A synopsis split into words, bracketed groups kept whole: `[--count N]`, `<a b>`.
pub(super) fn synopsis_tokens(text: &str) -> Vec<&str> {
    let mut tokens = Vec::new();
    let mut depth = 0usize;
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        match c {
            '[' | '<' | '{' | '(' => depth += 1,
            ']' | '>' | '}' | ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if let Some(s) = start.take() {
                tokens.push(&text[s..i]);
            }
        } else if start.is_none() && !c.is_whitespace() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        tokens.push(&text[s..]);
    }
    tokens
}

/// What the usage lines say about operands.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Usage {
    /// Some synopsis takes operands (`<path>...`, `FILE`, `[port]`).
    pub(super) positional: bool,
    /// Some synopsis shows `--`.
    pub(super) dashdash: bool,
    /// find's `[path...] [expression]`: operands come before the options.
    pub(super) expression: bool,
    /// The operands as the synopses write them (`PATTERN`, `<path>`), for the description.
    pub(super) operands: Vec<String>,
    /// Operands the synopses show after a `--` (git's `[[--] <path>...]`).
    pub(super) after_dashdash: Vec<String>,
    /// Operands shown repeated (`FILE...`, `[PATH ...]`).
    pub(super) repeated: Vec<String>,
    /// Reading a synopsis past its `--`.
    past_dashdash: bool,
    /// Reading inside a group that repeats (`[FILE]...`).
    in_repeat: bool,
}

impl Usage {
    fn operand(&mut self, text: &str, repeated: bool) {
        self.positional = true;
        if self.past_dashdash && !self.after_dashdash.iter().any(|o| o == text) {
            self.after_dashdash.push(text.to_string());
        }
        if repeated && !self.repeated.iter().any(|o| o == text) {
            self.repeated.push(text.to_string());
        }
        if !self.operands.iter().any(|o| o == text) {
            self.operands.push(text.to_string());
        }
    }

    /// The operands the synopses show before any `--`, in order.
    pub(super) fn before_dashdash(&self) -> Vec<&str> {
        self.operands
            .iter()
            .filter(|o| !self.after_dashdash.contains(o))
            .map(String::as_str)
            .collect()
    }
}

pub(super) fn usage(lines: &[Line]) -> Usage {
    let mut usage = Usage::default();
    for synopsis in synopses(lines) {
        let tokens = synopsis_tokens(&synopsis);
        let mut seen_group = false;
        usage.past_dashdash = false;
        // The first word is the program.
        scan_synopsis(
            tokens.get(1..).unwrap_or(&[]),
            0,
            &mut seen_group,
            &mut usage,
        );
    }
    usage
}

/// `[OPTIONS]`, `<options>`, `[OPTION]...` and the like: options, not operands.
pub(super) fn is_options_placeholder(token: &str) -> bool {
    let word = token
        .trim_end_matches("...")
        .trim_matches(|c| c == '<' || c == '>')
        .to_ascii_lowercase();
    matches!(
        word.as_str(),
        "options"
            | "option"
            | "flags"
            | "flag"
            | "opts"
            | "global options"
            | "global flags"
            | "switches"
    )
}

/// A placeholder that names several values (`FILES`, `<paths>`; not grep's `PATTERNS`, one
/// word holding several): a list.
fn is_plural(token: &str) -> bool {
    let word = token.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    ["files", "paths", "args", "names", "targets", "dirs"]
        .contains(&word.to_ascii_lowercase().as_str())
}

/// Reads a synopsis's words for operands; `depth` counts the brackets around them.
pub(super) fn scan_synopsis(
    tokens: &[&str],
    depth: usize,
    seen_group: &mut bool,
    usage: &mut Usage,
) {
    let in_brackets = depth > 0;
    let mut i = 0;
    while i < tokens.len() {
        let token = tokens[i];
        i += 1;
        let bare = if token == "..." {
            token
        } else {
            token.trim_end_matches("...")
        };
        let enclosed = |open: char, close: char| {
            bare.len() >= 2 && bare.starts_with(open) && bare.ends_with(close)
        };
        // `FILE...`, `PATH ...`, or a group that repeats (`[PATH ...]`).
        let repeated = usage.in_repeat
            || token.ends_with("...")
            || tokens.get(i) == Some(&"...")
            || (in_brackets && tokens.contains(&"..."))
            || is_plural(bare);
        if bare == "--" {
            usage.dashdash = true;
            usage.past_dashdash = true;
        } else if bare == "..." || bare == "|" || bare.is_empty() {
            // Repetition and alternation marks.
        } else if enclosed('[', ']') || enclosed('(', ')') {
            *seen_group = true;
            let inner = bare[1..bare.len() - 1].trim();
            if inner == "--" {
                usage.dashdash = true;
                usage.past_dashdash = true;
            } else if inner.trim_start_matches('(').starts_with('-')
                || is_options_placeholder(inner)
            {
                // An option group: `[-h]`, `[--count N]`, `[(-c | -C) <commit>]`.
            } else if depth < 8 {
                // Nested brackets deeper than this are not worth reading (and could be endless).
                let outer = usage.in_repeat;
                usage.in_repeat = repeated;
                scan_synopsis(&synopsis_tokens(inner), depth + 1, seen_group, usage);
                usage.in_repeat = outer;
            }
        } else if bare.starts_with('-') {
            // An option not in a group of its own (`-e PATTERN`, `[NAME | -l label]`): its value
            // is not an operand.
            let next_is_value = tokens.get(i).is_some_and(|n| {
                n.starts_with('<')
                    || is_capital_placeholder(n)
                    || (in_brackets && n.starts_with(|c: char| c.is_ascii_alphanumeric()))
            });
            if !bare.contains('=') && next_is_value {
                i += 1;
            }
        } else if enclosed('<', '>') || is_capital_placeholder(bare) {
            if !is_options_placeholder(bare) {
                usage.operand(bare, repeated);
            }
        } else if enclosed('{', '}') {
            usage.operand(bare, repeated);
        } else if in_brackets || *seen_group {
            // A bare word after the program's own words is an operand (`prog [-h] filename`).
            usage.operand(bare, repeated);
            if bare.eq_ignore_ascii_case("expression") {
                usage.expression = true;
            }
        }
    }
}
