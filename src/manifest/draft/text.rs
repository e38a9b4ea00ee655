//! Reading help text: terminal escapes and man-page overstrikes cleaned away, lines with their
//! indentation, the headings, usage and banner lines every layout has, and one-line summaries.

use crate::render::text::collapse_whitespace;

/// One help text: the CLI's own (`path` empty) or a subcommand's (`path = ["log"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpText {
    pub path: Vec<String>,
    pub text: String,
}

/// Descriptions are cut to about this many characters.
pub(super) const MAX_DESCRIPTION: usize = 200;

/// The help text as plain text: terminal escapes and man-page overstrikes removed, line ends
/// made `\n`, tabs expanded (to columns of 8) so indentation can be compared.
pub(super) fn clean(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut column = 0usize;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\x1b' => match chars.next() {
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some(']') => {
                    while let Some(c) = chars.next() {
                        if c == '\x07' {
                            break;
                        }
                        if c == '\x1b' {
                            chars.next_if_eq(&'\\');
                            break;
                        }
                    }
                }
                _ => {}
            },
            // `X\bX` is bold and `_\bX` underlined in man pages: keep the last character.
            '\x08' => {
                if !out.ends_with('\n') && out.pop().is_some() {
                    column = column.saturating_sub(1);
                }
            }
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                    column = 0;
                }
            }
            '\n' => {
                out.push('\n');
                column = 0;
            }
            '\t' => {
                let n = 8 - column % 8;
                out.extend(std::iter::repeat_n(' ', n));
                column += n;
            }
            c if c.is_control() => {}
            c => {
                out.push(c);
                column += 1;
            }
        }
    }
    out
}

/// One line: its indentation in columns and its text without surrounding blanks.
#[derive(Debug, Clone, Copy)]
pub(super) struct Line<'a> {
    pub(super) indent: usize,
    pub(super) text: &'a str,
}

pub(super) fn lines(text: &str) -> Vec<Line<'_>> {
    text.lines()
        .map(|raw| {
            let trimmed = raw.trim_start();
            Line {
                indent: raw.chars().count() - trimmed.chars().count(),
                text: trimmed.trim_end(),
            }
        })
        .collect()
}

/// The text up to its first sentence end (a period followed by a capitalised word).
pub(super) fn first_sentence(text: &str) -> &str {
    let mut from = 0;
    while let Some(i) = text[from..].find(". ") {
        let end = from + i + 1;
        if text[end..]
            .trim_start()
            .starts_with(|c: char| c.is_uppercase())
        {
            return &text[..end];
        }
        from = end;
    }
    text
}

/// At most `max` characters, cut at a word where possible.
pub(super) fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let cut: String = text.chars().take(max.saturating_sub(3)).collect();
    let cut = match cut.rfind(' ') {
        Some(i) if i > max / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!(
        "{}...",
        cut.trim_end_matches(|c: char| c == ',' || c == ';' || c == ':' || c.is_whitespace())
    )
}

/// A one-line description: the first sentence when asked or when the whole is too long.
pub(super) fn summary(text: &str, sentence: bool) -> String {
    let text = collapse_whitespace(text);
    let first = first_sentence(&text);
    if sentence || text.chars().count() > MAX_DESCRIPTION {
        shorten(first, MAX_DESCRIPTION)
    } else {
        text
    }
}

/// The first line of a usage block: `usage: git log …`, `Usage:`, `USAGE:`, `Usage of prog:`.
pub(super) fn is_usage(line: &Line) -> bool {
    let lower = line.text.to_ascii_lowercase();
    lower.starts_with("usage:") || (line.indent == 0 && lower.starts_with("usage "))
}

/// A line that is a section heading: `Options:`, `Common Commands:`, `CORE COMMANDS`.
pub(super) fn is_heading(text: &str) -> bool {
    let words = text.split_whitespace().count();
    if text.starts_with('-') || words == 0 {
        return false;
    }
    let capitals =
        text.chars().any(|c| c.is_alphabetic()) && !text.chars().any(|c| c.is_lowercase());
    (text.ends_with(':') && words <= 10) || (capitals && words <= 5)
}

/// A version banner or author line (`ripgrep 13.0.0`, `Andrew Gallant <a@b.c>`), not a description.
pub(super) fn is_banner(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let version = |w: &str| {
        let w = w.trim_start_matches('v');
        w.contains('.')
            && w.chars().all(|c| c.is_ascii_digit() || c == '.')
            && w.starts_with(|c: char| c.is_ascii_digit())
    };
    (text.contains('@') && text.contains('<'))
        || lower.starts_with("copyright")
        || text.split_whitespace().take(3).any(version)
}

/// A line about the help itself or an error, never a description: curl's "This is not the
/// full help...", sh's "sh: 0: Illegal option --", "Use -h for short descriptions".
pub(super) fn is_note(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    const NOTES: [&str; 12] = [
        "illegal option",
        "invalid option",
        "unrecognized option",
        "unknown option",
        "not an option",
        "not the full help",
        "for more information",
        "for more details",
        "for all options",
        "for short descriptions",
        "see more with",
        "use \"--help",
    ];
    NOTES.iter().any(|n| lower.contains(n))
        || lower.starts_with("use -")
        || lower.starts_with("try '")
}

/// The first line of a help text that describes the program, for a tool's description.
pub(super) fn help_summary(text: &str) -> Option<String> {
    let lines = lines(text);
    let mut in_usage = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        if line.text.is_empty() {
            in_usage = false;
            continue;
        }
        let lower = line.text.to_ascii_lowercase();
        if is_usage(&line) {
            in_usage = true;
            continue;
        }
        if in_usage && (line.indent > 0 || lower.starts_with("or:")) {
            continue;
        }
        in_usage = false;
        // Sections and options come after any description.
        if line.text.ends_with(':') || line.text.starts_with('-') {
            return None;
        }
        if is_banner(line.text) || is_note(line.text) {
            continue;
        }
        let mut parts = vec![line.text];
        while let Some(next) = lines.get(i) {
            if next.text.is_empty()
                || next.indent != line.indent
                || next.text.ends_with(':')
                || next.text.starts_with('-')
            {
                break;
            }
            parts.push(next.text);
            i += 1;
        }
        let text = summary(&parts.join(" "), true);
        if !text.is_empty() {
            return Some(text);
        }
    }
    None
}

/// An operand placeholder written in capitals: `FILE`, `ENV_DIR`, `ARG...`, `N[bcwkMG]`
/// (lower case only inside brackets).
pub(super) fn is_capital_placeholder(token: &str) -> bool {
    let word = token.trim_end_matches("...");
    let mut depth = 0usize;
    for c in word.chars() {
        match c {
            '[' => depth += 1,
            ']' => depth = depth.saturating_sub(1),
            c if depth == 0
                && !(c.is_ascii_uppercase() || c.is_ascii_digit() || "_-.:=/|+".contains(c)) =>
            {
                return false
            }
            _ => {}
        }
    }
    word.starts_with(|c: char| c.is_ascii_uppercase())
}
