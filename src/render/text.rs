//! Plain-text helpers every rendering shares: the first sentence of a description, collapsed
//! whitespace, and the escaping of control characters.
//!
//! Everything a server sends is untrusted: a tool's text, names, descriptions, error messages
//! and stderr may carry terminal escape sequences (clipboard writes, title changes, screen
//! clears), NULs or bidirectional overrides. Text renderings never print them raw, whether or
//! not the output is a terminal: they are never useful to an agent either. `--json` stays exact.

use std::borrow::Cow;
use std::fmt::Write;

/// Escapes control characters in multi-line text: newlines and tabs stay, `\r\n` becomes a
/// newline, everything else that could drive a terminal is written as `\x1b`, `\u{202e}`...
pub fn escape_text(text: &str) -> Cow<'_, str> {
    escape(text, true)
}

/// Escapes control characters in a one-line field (a name, a summary, a message): line breaks
/// and tabs too.
pub fn escape_line(text: &str) -> Cow<'_, str> {
    escape(text, false)
}

fn needs_escape(c: char, multiline: bool) -> bool {
    match c {
        '\n' | '\t' => !multiline,
        c if (c as u32) < 0x20 || c == '\u{7f}' => true,
        '\u{80}'..='\u{9f}' => true,
        // Bidirectional overrides and isolates reorder what a reader sees.
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}' => {
            true
        }
        _ => false,
    }
}

fn escape(text: &str, multiline: bool) -> Cow<'_, str> {
    // Fast path: most text has nothing to escape, and outputs can be megabytes.
    let suspicious = text
        .bytes()
        .any(|b| b < 0x20 && !(multiline && (b == b'\n' || b == b'\t')) || b == 0x7f || b >= 0xc2);
    if !suspicious || !text.chars().any(|c| needs_escape(c, multiline)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if multiline && c == '\r' && chars.peek() == Some(&'\n') {
            continue;
        }
        if !needs_escape(c, multiline) {
            out.push(c);
            continue;
        }
        match c {
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(out)
}

/// Serialised JSON with the characters that could drive a terminal or reorder what a reader
/// sees (DEL, C1 controls, bidirectional overrides) written as `\uXXXX` escapes. The value is
/// unchanged: outside strings JSON is ASCII, and inside them an escape means the same
/// character. serde_json already escapes the C0 controls.
pub fn json_for_terminal(json: String) -> String {
    let risky = |c: char| c != '\n' && c != '\t' && needs_escape(c, true);
    if !json.bytes().any(|b| b == 0x7f || b >= 0xc2) || !json.chars().any(risky) {
        return json;
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if risky(c) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// The first sentence of a description, on one line: what a listing shows.
///
/// A sentence ends at `.`, `!` or `?` before a space (not in "e.g." or "v1.2"), at a blank
/// line, a list, a heading, or a line break whose next line does not continue the sentence
/// (a hard-wrapped sentence continues in lower case; "Notion | Retrieve user\nError
/// Responses" is two things, not one).
pub fn first_sentence(text: &str) -> String {
    let text = text.trim();
    let mut end = text.len();
    for (i, c) in text.char_indices() {
        if c == '\n' {
            let line = text[..i].trim_end();
            let rest = &text[i + 1..];
            let next = rest.trim_start_matches([' ', '\t', '\r']);
            let continues = next
                .chars()
                .next()
                .is_some_and(|n| n.is_lowercase() || n.is_ascii_digit() || n == '(')
                && !line.ends_with([':', ';', '|'])
                && !next.starts_with(['-', '*', '#']);
            if !continues {
                end = i;
                break;
            }
        }
        if c == '.' || c == '!' || c == '?' {
            let after = &text[i + c.len_utf8()..];
            if after.is_empty() || after.starts_with(char::is_whitespace) {
                // "e.g. x" and "v1.2" are not sentence ends.
                let word_start = text[..i]
                    .char_indices()
                    .rev()
                    .find(|(_, c)| c.is_whitespace())
                    .map_or(0, |(p, c)| p + c.len_utf8());
                let word = text[word_start..i].trim_start_matches(['(', '"', '[', '\'']);
                if !matches!(word, "e.g" | "i.e" | "etc" | "vs" | "Dr" | "Mr" | "Ms") {
                    end = i + c.len_utf8();
                    break;
                }
            }
        }
    }
    collapse_whitespace(&text[..end])
}

/// Joins all whitespace runs into single spaces.
pub fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_keeps_its_value_but_not_terminal_controls() {
        let value = serde_json::json!({"name": "a\u{9b}2J\u{202e}b\u{7f}", "plain": "ünï"});
        let text = json_for_terminal(serde_json::to_string_pretty(&value).unwrap());
        assert!(!text.contains('\u{9b}') && !text.contains('\u{202e}') && !text.contains('\u{7f}'));
        assert!(text.contains("\\u009b") && text.contains("ünï"));
        let back: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn first_sentence_stops_at_the_first_period() {
        assert_eq!(first_sentence("Read a file. Then more."), "Read a file.");
        assert_eq!(
            first_sentence("Use e.g. this one. More"),
            "Use e.g. this one."
        );
        assert_eq!(first_sentence("Version 1.2 is here"), "Version 1.2 is here");
        assert_eq!(
            first_sentence("Line one\nline two.\n\nParagraph"),
            "Line one line two."
        );
        assert_eq!(first_sentence("Summary\n\n- item"), "Summary");
        assert_eq!(first_sentence(""), "");
        // Multi-byte whitespace before the mark (French "fichier\u{a0}!").
        assert_eq!(
            first_sentence("Supprime le fichier\u{a0}! Attention."),
            "Supprime le fichier !"
        );
        assert_eq!(first_sentence("全角\u{3000}です! 次"), "全角 です!");
    }

    #[test]
    fn a_line_break_ends_the_summary_unless_the_sentence_goes_on() {
        assert_eq!(
            first_sentence("Notion | Retrieve user\nError Responses:\n400: bad"),
            "Notion | Retrieve user"
        );
        assert_eq!(
            first_sentence(
                "Search for files matching a pattern in the given\n    directory tree. More."
            ),
            "Search for files matching a pattern in the given directory tree."
        );
        assert_eq!(
            first_sentence("Get weather alerts\nArgs:\n state: two letters"),
            "Get weather alerts"
        );
        assert_eq!(first_sentence("Usage:\n  run it"), "Usage:");
    }

    #[test]
    fn control_characters_are_escaped() {
        assert_eq!(escape_text("plain\ttext\nlines"), "plain\ttext\nlines");
        assert!(matches!(escape_text("plain"), Cow::Borrowed(_)));
        assert_eq!(
            escape_text("clip\x1b]52;c;aGk=\x07 done"),
            "clip\\x1b]52;c;aGk=\\x07 done"
        );
        assert_eq!(escape_text("dos\r\nline\rover"), "dos\nline\\rover");
        assert_eq!(escape_line("tool\u{202e}exe\0"), "tool\\u{202e}exe\\x00");
        assert_eq!(escape_line("two\nlines"), "two\\nlines");
        assert_eq!(escape_text("c1 \u{9b}2J é ü 漢"), "c1 \\x9b2J é ü 漢");
    }
}
