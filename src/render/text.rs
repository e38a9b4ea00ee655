//! Plain-text helpers every rendering shares: the first sentence of a description, collapsed
//! whitespace, and the escaping of control characters (`crate::escape`, re-exported here).

pub use crate::escape::{escape_line, escape_text, json_for_terminal};

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
}
