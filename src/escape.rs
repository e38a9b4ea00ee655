//! The escaping of control characters, for every text ferry prints (renderings and its own
//! warnings alike).
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
