//! A tool for people and models: the listing line and the `--help` text, both from the
//! schema model, shared by the CLI, the token meter, the skill writer and serve.

use super::text::{collapse_whitespace, escape_line, escape_text, first_sentence};
use crate::protocol::tools::Tool;
use crate::schema::{render_type, render_value, Kind, Shape, ToolSchema};
use std::borrow::Borrow;
use std::fmt::Write;

/// Required argument names longer than this (joined) are left to `--help`, so that a listing
/// line stays near a dozen tokens.
pub const LISTED_ARGS_MAX: usize = 20;

/// `name(required args) - summary`: one short line per tool. `name()` takes no arguments;
/// `name([a, b])` takes only optional ones; `name - summary` has required arguments too many
/// to list (see its `--help`). For a server's whole listing use [`listing_lines`], which keeps
/// apart tools whose summaries would read alike.
pub fn listing_line(tool: &Tool) -> String {
    // Text hidden from a person never reaches a summary (pins flag the tool instead).
    let description = super::hidden::strip(&tool.description);
    line_with(tool, &description, summary_for(&tool.name, &description))
}

/// A server's listing, one line per tool in the server's order. When one tool's summary is
/// the start of another's ("Get detailed listing of files" beside "... in path, including
/// sizes"), both keep their whole first sentence, so the words that set them apart show.
pub fn listing_lines<T: Borrow<Tool>>(tools: &[T]) -> Vec<String> {
    let tools: Vec<&Tool> = tools.iter().map(Borrow::borrow).collect();
    let descriptions: Vec<_> = tools
        .iter()
        .map(|t| super::hidden::strip(&t.description))
        .collect();
    let summaries: Vec<String> = tools
        .iter()
        .zip(&descriptions)
        .map(|(t, d)| summary_for(&t.name, d))
        .collect();
    let words: Vec<Vec<&str>> = summaries
        .iter()
        .map(|s| s.split_whitespace().collect())
        .collect();
    let alike = |i: usize| {
        !words[i].is_empty()
            && !summaries[i].starts_with("Deprecated")
            && (0..tools.len()).any(|j| {
                j != i
                    && !words[j].is_empty()
                    && (words[j].starts_with(&words[i]) || words[i].starts_with(&words[j]))
            })
    };
    tools
        .iter()
        .enumerate()
        .map(|(i, tool)| {
            let summary = if alike(i) {
                let (lead, _) = what_it_does(&tool.name, &descriptions[i]);
                whole_sentence(lead)
            } else {
                summaries[i].clone()
            };
            line_with(tool, &descriptions[i], summary)
        })
        .collect()
}

fn line_with(tool: &Tool, description: &str, mut summary: String) -> String {
    let mut line = signature(tool);
    // A line with neither arguments nor summary would be a bare name: then the summary,
    // even one that only restates the name ("merge_pull_request - Merge pull request").
    if summary.is_empty() && !line.ends_with(')') {
        let (lead, _) = what_it_does(&tool.name, description);
        summary = first_clause(lead, SUMMARY_WORDS);
    }
    if !summary.is_empty() {
        let _ = write!(line, " - {summary}");
    }
    escape_line(&line).into_owned()
}

/// `name(required args)`, `name([optional args])` or `name()`: the listing line without its
/// summary, for a line that the tool's whole help follows. Not escaped.
fn signature(tool: &Tool) -> String {
    let schema = ToolSchema::from_input_schema(&tool.input_schema);
    // Arguments a caller must give: required and without a default.
    let required: Vec<&str> = schema.must_give().map(|p| p.name.as_str()).collect();
    let args = required.join(", ");
    let mut line = tool.name.clone();
    if schema.props.is_empty() {
        line.push_str("()");
    } else if required.is_empty() {
        let optional: Vec<&str> = schema.props.iter().map(|p| p.name.as_str()).collect();
        let optional = optional.join(", ");
        if optional.len() <= LISTED_ARGS_MAX {
            let _ = write!(line, "([{optional}])");
        } else {
            line.push_str("([...])");
        }
    } else if args.len() <= LISTED_ARGS_MAX {
        let _ = write!(line, "({args})");
    }
    line
}

/// The most characters of a server's instructions `ferry SERVER --help` shows.
pub const INSTRUCTIONS_MAX: usize = 2_000;

/// The first [`INSTRUCTIONS_MAX`] characters of a server's instructions, cut on a line end
/// (or, where the last line end is early, on a word's end, so one long paragraph is not cut
/// to its first line), and how many characters the whole has.
pub fn instructions_cut(text: &str) -> (String, usize) {
    let total = text.chars().count();
    let mut shown: String = text.chars().take(INSTRUCTIONS_MAX).collect();
    if total > INSTRUCTIONS_MAX {
        let half = shown.len() / 2;
        let end = shown
            .rfind('\n')
            .filter(|&end| end >= half)
            .or_else(|| shown.rfind(char::is_whitespace))
            .unwrap_or(shown.len());
        shown.truncate(end);
    }
    (shown.trim_end().to_string(), total)
}

/// A server's instructions under its listing: a header line, the text (escaped) cut by
/// [`instructions_cut`], and a note of what was cut.
pub fn instructions_block(server: &str, text: &str) -> String {
    let (shown, total) = instructions_cut(text);
    let mut out = format!("\nInstructions from {}:\n", escape_line(server));
    out.push_str(escape_text(&shown).as_ref());
    out.push('\n');
    if total > INSTRUCTIONS_MAX {
        let _ = writeln!(
            out,
            "(cut: {} of {total} characters shown)",
            shown.chars().count()
        );
    }
    out
}

/// One hit of `ferry find`: its server, the tool, and whether its whole help is shown.
pub struct FoundTool<'a> {
    pub server: &'a str,
    pub tool: &'a Tool,
    pub with_help: bool,
    /// The tool's pin mark, `(changed: ferry review SERVER)` or `(new)`, if it has one.
    pub mark: Option<String>,
}

/// ` (changed: ...)` after a line, or nothing.
fn mark_suffix(hit: &FoundTool) -> String {
    hit.mark
        .as_deref()
        .map(|m| format!(" {}", escape_line(m)))
        .unwrap_or_default()
}

/// What `ferry find` prints: a line per hit, `server name(args)` and the whole help indented
/// under it for a hit shown with its help (the help's description replaces the summary),
/// `server listing line` for the others.
pub fn find_answer(hits: &[FoundTool]) -> String {
    let mut out = String::new();
    for hit in hits {
        if hit.with_help {
            let _ = writeln!(
                out,
                "{}{}",
                escape_line(&format!("{} {}", hit.server, signature(hit.tool))),
                mark_suffix(hit)
            );
            out.push_str(&indented_help(hit.tool, "    "));
        } else {
            let _ = writeln!(
                out,
                "{} {}{}",
                escape_line(hit.server),
                listing_line(hit.tool),
                mark_suffix(hit)
            );
        }
    }
    out
}

/// What the proxy's `find` answers: as [`find_answer`], with `server/name` and the help for
/// JSON arguments indented by two spaces.
pub fn proxy_find_answer(hits: &[FoundTool]) -> String {
    let mut out = String::new();
    for hit in hits {
        if hit.with_help {
            let _ = writeln!(
                out,
                "{}{}",
                escape_line(&format!("{}/{}", hit.server, signature(hit.tool))),
                mark_suffix(hit)
            );
            for line in json_help(hit.tool).lines() {
                let _ = writeln!(out, "  {line}");
            }
        } else {
            let _ = writeln!(
                out,
                "{}/{}{}",
                escape_line(hit.server),
                listing_line(hit.tool),
                mark_suffix(hit)
            );
        }
    }
    out
}

/// The most words a summary keeps (articles and filler aside); a longer clause is cut before
/// a word that starts a new part of it ("using", "and", "for"...) or at this many.
const SUMMARY_WORDS: usize = 10;
/// Words that begin a subordinate part of a clause: a summary may end before them.
const CLAUSE_STARTS: [&str; 32] = [
    "using",
    "with",
    "via",
    "by",
    "for",
    "from",
    "and",
    "or",
    "that",
    "which",
    "who",
    "to",
    "in",
    "on",
    "as",
    "based",
    "including",
    "when",
    "if",
    "where",
    "while",
    "so",
    "against",
    "into",
    "within",
    "across",
    "without",
    "after",
    "before",
    "at",
    "through",
    "over",
];
/// Words that say nothing a listing needs ("Get all images" is "Get images").
const FILLER: [&str; 9] = [
    "a",
    "an",
    "the",
    "all",
    "specific",
    "specified",
    "given",
    "existing",
    "particular",
];

/// The gist of a description: its first clause, at most a few words, without articles, filler
/// or the final period.
pub fn summary(description: &str) -> String {
    summary_for("", description)
}

/// Labels that open a warning rather than say what a tool does.
const WARNINGS: [&str; 6] = [
    "important:",
    "warning:",
    "caution:",
    "critical:",
    "note:",
    "attention:",
];

/// The summary of tool `name`'s description. Descriptions written as markdown for a model
/// open with what a listing does not need: a heading that repeats the name, a warning ("IMPORTANT:
/// ... WILL FAIL for private URLs"), a rule for when to use the tool, list markup. The summary
/// starts where the description says what the tool does; a deprecated tool's says so first.
pub fn summary_for(name: &str, description: &str) -> String {
    let (lead, mut deprecated) = what_it_does(name, description);
    if matches!(deprecated, Deprecated::No) {
        deprecated = deprecated_later(lead);
    }
    match deprecated {
        Deprecated::No => {
            let clause = first_clause(lead, words_for(name));
            if !says_only(&clause, name) {
                return clause;
            }
            // What was cut may be all that the name does not say ("Update pull request
            // branch | with latest changes from base branch"): then the clause at full length.
            let whole = first_clause(lead, SUMMARY_WORDS);
            if says_only(&whole, name) {
                String::new()
            } else {
                whole
            }
        }
        Deprecated::UseInstead(other) => format!("Deprecated, use {other}"),
        Deprecated::Yes => {
            let rest = first_clause(lead, words_for(name));
            if rest.is_empty() {
                "Deprecated".to_string()
            } else {
                format!("Deprecated: {rest}")
            }
        }
    }
}

/// Whether a description opens by saying its tool is deprecated, and what to use instead.
enum Deprecated<'a> {
    No,
    Yes,
    UseInstead(&'a str),
}

/// Where a description starts saying what its tool does, and whether it opened by saying the
/// tool is deprecated.
fn what_it_does<'a>(name: &str, description: &'a str) -> (&'a str, Deprecated<'a>) {
    let mut text = description.trim_start();
    let mut deprecated = Deprecated::No;
    let squeeze = |s: &str| -> String {
        s.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect()
    };
    loop {
        let before = text.len();
        // A heading: skipped when it only repeats the tool's name, else read as text.
        if text.starts_with('#') {
            let line_end = text.find('\n').unwrap_or(text.len());
            let heading = text[..line_end].trim_start_matches('#').trim();
            if !name.is_empty() && squeeze(heading) == squeeze(name) || heading.is_empty() {
                text = text[line_end..].trim_start();
            } else {
                text = text.trim_start_matches('#').trim_start();
            }
        }
        // List and quote markup, emphasis and warning signs before the first word.
        text = text
            .trim_start_matches(['-', '*', '+', '>', '\u{26a0}', '\u{fe0f}', '!', '_'])
            .trim_start();
        if let Some(rest) = text.strip_prefix('[') {
            // "[Deprecated: use X instead] Research a company".
            if let Some((note, after)) = rest.split_once(']') {
                if note.to_ascii_lowercase().contains("deprecated") {
                    deprecated = deprecated_note(note);
                    text = after.trim_start();
                }
            }
        }
        let lower: String = text.chars().take(40).collect::<String>().to_lowercase();
        if lower.starts_with("deprecated") {
            // "DEPRECATED: This tool is deprecated. Please use 'x' instead. What it did."
            let paragraph_end = text.find("\n\n").unwrap_or(text.len());
            deprecated = match deprecated_note(&text[..paragraph_end.min(300)]) {
                Deprecated::No => Deprecated::Yes,
                named => named,
            };
            text = text["deprecated".len()..].trim_start_matches([':', '.', ' ']);
            // Sentences that only go on about the deprecation.
            while let Some(end) = sentence_end(text) {
                let sentence = text[..end].to_ascii_lowercase();
                if sentence.contains("deprecated") || sentence.contains(" instead") {
                    text = text[end..].trim_start();
                } else {
                    break;
                }
            }
        } else if WARNINGS.iter().any(|w| lower.starts_with(w)) {
            // A warning paragraph, when something follows it.
            match text.find("\n\n") {
                Some(end) => text = text[end..].trim_start(),
                None => match sentence_end(text) {
                    Some(end) if end < text.len() => text = text[end..].trim_start(),
                    _ => {}
                },
            }
        } else if [
            "use this tool only",
            "only use this",
            "do not use",
            "never use",
        ]
        .iter()
        .any(|rule| lower.starts_with(rule))
        {
            // A rule for when to use the tool, when a sentence follows it.
            if let Some(end) = sentence_end(text).filter(|end| *end < text.trim_end().len()) {
                text = text[end..].trim_start();
            }
        }
        if text.len() == before {
            return (text, deprecated);
        }
    }
}

/// A deprecation said after what the tool does ("Read a file. DEPRECATED: Use read_text_file
/// instead."): a sentence of the first paragraph that opens with "deprecated".
fn deprecated_later(text: &str) -> Deprecated<'_> {
    let paragraph = &text[..text.find("\n\n").unwrap_or(text.len())];
    let mut rest = paragraph;
    while let Some(end) = sentence_end(rest) {
        let sentence = rest[..end].trim();
        let lower = sentence.to_ascii_lowercase();
        let opening = lower.trim_start_matches(['[', '(', '*', '_', ' ']);
        if opening.starts_with("deprecated") || opening.starts_with("this tool is deprecated") {
            // The note may run into the next sentence ("DEPRECATED. Use x instead.").
            let note = rest.trim_start();
            let cut = (0..=note.len().min(200))
                .rev()
                .find(|i| note.is_char_boundary(*i))
                .unwrap_or(0);
            return match deprecated_note(&note[..cut]) {
                Deprecated::No => Deprecated::Yes,
                named => named,
            };
        }
        if end >= rest.len() {
            break;
        }
        rest = &rest[end..];
    }
    Deprecated::No
}

/// A description's whole first sentence without articles, filler or the final period: for
/// tools whose short summaries would read alike.
fn whole_sentence(description: &str) -> String {
    let sentence = first_sentence(description);
    let words: Vec<&str> = sentence
        .split_whitespace()
        .enumerate()
        .filter(|(i, w)| {
            let lower = w.to_ascii_lowercase();
            *i == 0 || !FILLER.contains(&lower.as_str())
        })
        .map(|(_, w)| w)
        .take(SUMMARY_WORDS * 2)
        .collect();
    words
        .join(" ")
        .trim_end_matches([',', '.', ';', ':'])
        .to_string()
}

/// The byte just past the first sentence of `text` (its mark), if it has one.
fn sentence_end(text: &str) -> Option<usize> {
    // The sentence has its whitespace collapsed: walk as many other characters of the text.
    let sentence = first_sentence(text);
    let mut left = sentence.chars().filter(|c| !c.is_whitespace()).count();
    if left == 0 {
        return None;
    }
    for (i, c) in text.char_indices() {
        if !c.is_whitespace() {
            left -= 1;
            if left == 0 {
                return Some(i + c.len_utf8());
            }
        }
    }
    None
}

/// What a deprecation note says to use instead: "use `x` instead", "Please use 'x' instead".
fn deprecated_note(note: &str) -> Deprecated<'_> {
    let lower = note.to_ascii_lowercase();
    let Some(at) = lower.find("use ") else {
        return Deprecated::Yes;
    };
    let name = note[at + 4..]
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'));
    if name.is_empty() || !lower[at..].contains("instead") {
        Deprecated::Yes
    } else {
        Deprecated::UseInstead(name)
    }
}

/// A word that joins what comes before it to what follows: a preposition, a conjunction.
fn is_link_word(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    CLAUSE_STARTS.contains(&w.as_str())
        || matches!(
            w.as_str(),
            "along" | "together" | "both" | "such" | "either" | "also"
        )
}

/// A word that a phrase cannot end on when what followed it was cut: a link word, an article,
/// a determiner or possessive ("its", "user's"), a participle waiting for its complement
/// ("created", "used").
fn leads_on(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    is_link_word(&w)
        || matches!(
            w.as_str(),
            "a" | "an"
                | "the"
                | "its"
                | "their"
                | "your"
                | "our"
                | "his"
                | "her"
                | "my"
                | "each"
                | "every"
                | "any"
                | "some"
                | "no"
                | "not"
                | "more"
                | "most"
                | "less"
                | "very"
                | "than"
        )
        || w.ends_with("'s")
        || w.len() > 4 && w.ends_with("ed") && !w.ends_with("eed")
}

/// The words a summary may take beside a name: a long name says much already, and a line
/// stays near a dozen tokens ("confluence_download_content_attachments" leaves seven).
fn words_for(name: &str) -> usize {
    let extra = name.chars().count().saturating_sub(20) / 5;
    SUMMARY_WORDS.saturating_sub(extra).max(SUMMARY_WORDS - 3)
}

/// The lower-case words of a name, split at `_`, `-`, `.` and camelCase humps, with a plural
/// `s` dropped.
fn name_words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if (!c.is_alphanumeric() || c.is_uppercase() && prev_lower) && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        if c.is_alphanumeric() {
            word.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
        .into_iter()
        .map(|w| match w.strip_suffix('s') {
            Some(stem) if stem.len() > 2 && !stem.ends_with('s') => stem.to_string(),
            _ => w,
        })
        .collect()
}

/// Whether a summary says nothing its tool's name does not ("r2_delete_bucket - Delete R2
/// bucket"): every word of it but articles and filler is a word of the name.
fn says_only(summary: &str, name: &str) -> bool {
    if summary.is_empty() || name.is_empty() {
        return false;
    }
    let name_words = name_words(name);
    let words = name_words_of_text(summary);
    !words.is_empty() && words.iter().all(|w| name_words.contains(w))
}

fn name_words_of_text(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter(|w| {
            let w = w.to_ascii_lowercase();
            !FILLER.contains(&w.as_str()) && !matches!(w.as_str(), "new" | "one" | "or")
        })
        .flat_map(name_words)
        .collect()
}

/// The first clause of a description's first sentence, as [`summary`] describes, in at most
/// `limit` words.
fn first_clause(description: &str, limit: usize) -> String {
    let sentence = first_sentence(description);
    let all: Vec<&str> = sentence.split_whitespace().collect();
    // "This tool searches..." and "Use this tool to search..." say "searches", "search".
    let start = match all
        .iter()
        .take(4)
        .map(|w| w.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .as_slice()
    {
        [this, tool, will, ..] if this == "this" && tool == "tool" && will == "will" => 3,
        [this, tool, ..] if this == "this" && tool == "tool" => 2,
        [use_, this, tool, to]
            if use_ == "use" && this == "this" && tool == "tool" && to == "to" =>
        {
            4
        }
        // "Allows Claude to search the web", "Lets you search": what is allowed is the gist.
        [allows, _, to, ..] if matches!(allows.as_str(), "allows" | "enables") && to == "to" => 3,
        [lets, you, ..] if lets == "lets" && you == "you" => 2,
        _ => 0,
    };
    let all = &all[start.min(all.len().saturating_sub(1))..];
    let mut words: Vec<&str> = Vec::new();
    let mut last_start: Option<usize> = None;
    let mut cut_short = false;
    for (i, word) in all.iter().enumerate() {
        let lower = word.to_ascii_lowercase();
        if FILLER.contains(&lower.as_str()) && i + 1 < all.len() && !words.is_empty() {
            continue;
        }
        if matches!(lower.as_str(), "a" | "an" | "the") && i + 1 < all.len() {
            continue;
        }
        // A clause ends at a colon, semicolon, dash or parenthesis once it has three words, and
        // at a comma once it has six (a shorter one is usually a list: "Celsius, Fahrenheit"),
        // unless the comma runs on a list of qualities ("handle complex, multi-step tasks").
        let qualities = all
            .get(i + 1)
            .is_some_and(|next| next.contains('-') && i + 2 < all.len());
        let ends = match word.chars().last() {
            Some(';' | ':') => words.len() >= 2,
            Some(',') => words.len() >= 5 && !qualities,
            _ => false,
        };
        if ends {
            words.push(&word[..word.len() - 1]);
            break;
        }
        // A long clause ends before the part that qualifies it, once it has said enough.
        let remaining = all[i..]
            .iter()
            .filter(|w| !FILLER.contains(&w.to_ascii_lowercase().as_str()))
            .count();
        // Not after a word that needs what follows ("a session created | by X"): the next
        // boundary, if there is room for it.
        let needs_more = words.last().is_some_and(|w| {
            leads_on(w) && !is_link_word(w)
                || matches!(w.to_ascii_lowercase().as_str(), "it" | "them")
        });
        if words.len() >= 4
            && words.len() + remaining > limit
            && CLAUSE_STARTS.contains(&lower.as_str())
            && (!needs_more || words.len() + 2 >= limit)
        {
            cut_short = true;
            break;
        }
        if CLAUSE_STARTS.contains(&lower.as_str()) && words.len() >= 4 {
            last_start = Some(words.len());
        }
        words.push(word);
        if words.len() >= limit {
            // Out of words mid-clause: end where its last part began, if that leaves enough.
            if i + 1 < all.len() {
                cut_short = true;
                if let Some(cut) = last_start {
                    words.truncate(cut);
                }
            }
            break;
        }
        if words.len() >= 3
            && matches!(all.get(i + 1), Some(next) if *next == "-" || *next == "\u{2013}" || next.starts_with('('))
        {
            break;
        }
    }
    // Cut mid-clause after a comma: end at the comma instead ("date and time, optionally").
    if cut_short {
        if let Some(comma) = words.iter().rposition(|w| w.ends_with(',')) {
            if comma >= 2 {
                words.truncate(comma + 1);
            }
        }
    }
    // Never end on a word that leads into what was cut ("Get values for", "content along",
    // "session created").
    while words.len() > 2 && cut_short && words.last().is_some_and(|w| leads_on(w))
        || words.len() > 2 && words.last().is_some_and(|w| is_link_word(w))
    {
        words.pop();
    }
    let mut text = words.join(" ");
    // A clause cut inside parentheses drops the unclosed part: "List issues (default" -> "List issues".
    if text.matches('(').count() > text.matches(')').count() {
        if let Some(open) = text.rfind('(') {
            text.truncate(open);
        }
    }
    if text.matches('[').count() > text.matches(']').count() {
        if let Some(open) = text.rfind('[') {
            text.truncate(open);
        }
    }
    text.trim_end()
        .trim_end_matches([',', '.', ';', ':'])
        .to_string()
}

/// The whole usage text for one tool: what it does, then every property, one line each:
/// `--name type required =default [constraints]: description`, nested fields indented.
pub fn tool_help(tool: &Tool) -> String {
    help_with_prefix(tool, "--")
}

/// The same help for a caller that sends JSON arguments (the proxy's `describe` and `find`):
/// `name type required =default [constraints]: description`.
pub fn json_help(tool: &Tool) -> String {
    help_with_prefix(tool, "")
}

/// A tool's whole help, each line indented: what `ferry find` prints under its top hit. The
/// description is kept whole (the listing line only sums it up), so nothing a definition says
/// is lost on the way from a search to a call.
pub fn indented_help(tool: &Tool, indent: &str) -> String {
    let mut out = String::new();
    for line in tool_help(tool).lines() {
        let _ = writeln!(out, "{indent}{line}");
    }
    out
}

fn help_with_prefix(tool: &Tool, prefix: &str) -> String {
    let schema = ToolSchema::from_input_schema(&tool.input_schema);
    let mut out = String::new();
    let description = tool.description.trim();
    if !description.is_empty() {
        out.push_str(description);
        out.push('\n');
    }
    if schema.props.is_empty() {
        out.push_str("(no arguments)\n");
    }
    for prop in &schema.props {
        let _ = write!(
            out,
            "{prefix}{} {}",
            escape_line(&prop.name),
            titled_type(&prop.shape).unwrap_or_else(|| line_type(&prop.shape))
        );
        write_facts(&mut out, &prop.shape, prop.required);
        out.push('\n');
        write_nested(&mut out, &prop.shape, 2);
    }
    // Shapes used more than once (or recursively) are spelled out once, by name.
    for (name, shape) in &schema.defs {
        let _ = write!(out, "{name}: {}", line_type(shape));
        write_facts(&mut out, shape, false);
        out.push('\n');
        write_nested(&mut out, shape, 2);
    }
    // Text hidden from a person is shown, visibly, for what a model would read.
    escape_text(&super::hidden::visible(&out)).into_owned()
}

/// An enum's choices each with its title (`hero-1 (Superman)|hero-2 (Green Lantern)`), where
/// the schema titles them: the help is where a person learns what to type.
pub fn titled_type(shape: &Shape) -> Option<String> {
    let Kind::Enum(values) = &shape.kind else {
        return None;
    };
    if shape.titles.is_empty() {
        return None;
    }
    let choices: Vec<String> = values
        .iter()
        .map(|value| {
            let shown = render_value(value);
            match shape.titles.iter().find(|(v, _)| v == value) {
                Some((_, title)) if *title != shown => format!("{shown} ({})", escape_line(title)),
                _ => shown,
            }
        })
        .collect();
    Some(choices.join("|"))
}

/// ` (required) = default [min 1]: description` after the type.
fn write_facts(out: &mut String, shape: &Shape, required: bool) {
    if required {
        out.push_str(" required");
    }
    if let Some(default) = &shape.default {
        let _ = write!(out, " ={}", render_value(default));
    }
    let facts: Vec<String> = shape
        .constraints
        .iter()
        .filter(|(_, v)| !is_number_type_limit(v))
        .map(|(k, v)| format!("{k} {}", render_value(v)))
        .collect();
    if !facts.is_empty() {
        let _ = write!(out, " [{}]", facts.join(", "));
    }
    if let Some(description) = &shape.description {
        let description = collapse_whitespace(description);
        if !description.is_empty() {
            let _ = write!(out, ": {description}");
        }
    }
}

/// JavaScript's safe-integer bounds, which zod writes on every integer: they say nothing.
fn is_number_type_limit(value: &serde_json::Value) -> bool {
    value
        .as_f64()
        .is_some_and(|v| v.abs() == 9_007_199_254_740_991.0)
}

/// True when a shape has named fields, which help lists on lines of their own.
fn has_fields(shape: &Shape) -> bool {
    match &shape.kind {
        Kind::Object { props, extra } => {
            !props.is_empty() || extra.as_deref().is_some_and(has_fields)
        }
        Kind::Array(items) => has_fields(items),
        Kind::Union(variants) => variants.iter().any(has_fields),
        _ => false,
    }
}

/// The type on a property's own line: the full inline type, except that objects whose fields
/// get lines of their own are written `obj`, so no field is spelled twice.
pub fn line_type(shape: &Shape) -> String {
    if !has_fields(shape) {
        return render_type(shape);
    }
    let mut text = match &shape.kind {
        Kind::Object {
            props,
            extra: Some(extra),
        } if props.is_empty() => format!("{{str:{}}}", line_type(extra)),
        Kind::Object { .. } => "obj".to_string(),
        Kind::Array(items) => {
            let inner = line_type(items);
            if inner.contains('|') {
                format!("({inner})[]")
            } else {
                format!("{inner}[]")
            }
        }
        Kind::Union(variants) => variants.iter().map(line_type).collect::<Vec<_>>().join("|"),
        _ => render_type(shape),
    };
    if shape.nullable && !text.ends_with("|null") {
        text.push_str("|null");
    }
    text
}

/// The fields of objects inside `shape`, one line each, indented under their property.
fn write_nested(out: &mut String, shape: &Shape, indent: usize) {
    match &shape.kind {
        Kind::Object { props, extra } => {
            for prop in props {
                let _ = write!(
                    out,
                    "{:indent$}{} {}",
                    "",
                    escape_line(&prop.name),
                    line_type(&prop.shape)
                );
                write_facts(out, &prop.shape, prop.required);
                out.push('\n');
                write_nested(out, &prop.shape, indent + 2);
            }
            // Keys beyond the named ones (`additionalProperties`), when that says anything.
            if let Some(extra) = extra {
                let says_more = !props.is_empty()
                    || has_fields(extra)
                    || extra.description.is_some()
                    || extra.default.is_some();
                if says_more {
                    let _ = write!(out, "{:indent$}* {}", "", line_type(extra));
                    write_facts(out, extra, false);
                    out.push('\n');
                    write_nested(out, extra, indent + 2);
                }
            }
        }
        Kind::Array(items) => {
            // What each item is, when the schema says more than its type.
            let has_facts = items.description.is_some()
                || items.default.is_some()
                || !items.constraints.is_empty();
            if has_facts {
                let _ = write!(out, "{:indent$}[]", "");
                write_facts(out, items, false);
                out.push('\n');
            }
            write_nested(out, items, indent);
        }
        Kind::Union(variants) => {
            // What each alternative means, when the schema says so (`str|str[]` with notes).
            for variant in variants
                .iter()
                .filter(|v| !has_fields(v) && v.description.is_some())
            {
                let _ = write!(out, "{:indent$}| {}", "", line_type(variant));
                write_facts(out, variant, false);
                out.push('\n');
            }
            let with_fields: Vec<&Shape> = variants.iter().filter(|v| has_fields(v)).collect();
            if let [only] = with_fields.as_slice() {
                return write_nested(out, only, indent);
            }
            for (i, variant) in with_fields.iter().enumerate() {
                let _ = writeln!(out, "{:indent$}variant {}:", "", i + 1);
                write_nested(out, variant, indent + 2);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn long_instructions_are_cut_near_the_limit_not_at_an_early_line_end() {
        // Two short lines, then one paragraph far past the limit: the cut falls on a word's
        // end near the limit, not after the second line.
        let text = format!("# Usage rules\nRead first.\n{}", "word ".repeat(1_200));
        let (shown, total) = instructions_cut(&text);
        assert_eq!(total, text.chars().count());
        assert!(shown.len() > INSTRUCTIONS_MAX - 10, "{}", shown.len());
        assert!(shown.len() <= INSTRUCTIONS_MAX);
        assert!(shown.ends_with("word"), "{shown:?}");
        // Lines past the half of the limit: the cut falls on the last line end.
        let lines = "a line of usage rules\n".repeat(200);
        let (shown, _) = instructions_cut(&lines);
        assert!(shown.ends_with("a line of usage rules"), "{shown:?}");
        assert_eq!(shown.len(), 21 + 22 * (INSTRUCTIONS_MAX / 22 - 1));
        // Short instructions are whole.
        assert_eq!(instructions_cut("Be kind.\n").0, "Be kind.");
    }

    fn tool(value: serde_json::Value) -> Tool {
        Tool::from_value(&value).unwrap()
    }

    #[test]
    fn listing_line_is_compact() {
        let t = tool(
            json!({"name": "read_file", "description": "Read a file as text. Handles utf-8.",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}, "head": {"type": "integer"}}, "required": ["path"]}}),
        );
        assert_eq!(listing_line(&t), "read_file(path) - Read file as text");
        let none = tool(
            json!({"name": "now", "description": "The time.", "inputSchema": {"type": "object"}}),
        );
        assert_eq!(listing_line(&none), "now() - time");
        let many = tool(
            json!({"name": "mr", "description": "Create a merge request in the given project, with options.",
            "inputSchema": {"type": "object", "properties": {"project_id": {"type": "string"}, "source_branch": {"type": "string"}},
            "required": ["project_id", "source_branch"]}}),
        );
        assert_eq!(
            listing_line(&many),
            "mr - Create merge request in project, with options"
        );
    }

    #[test]
    fn shared_definitions_are_shown_once() {
        let t = tool(
            json!({"name": "route", "description": "Plan a route.", "inputSchema": {"type": "object",
            "$defs": {"Point": {"type": "object", "properties": {"x": {"type": "number", "description": "East"}, "y": {"type": "number"}}, "required": ["x", "y"]}},
            "properties": {"from": {"$ref": "#/$defs/Point"}, "to": {"$ref": "#/$defs/Point"}}, "required": ["from", "to"]}}),
        );
        assert_eq!(
            tool_help(&t),
            "Plan a route.\n--from Point required\n--to Point required\nPoint: obj\n  x num required: East\n  y num required\n"
        );
    }

    #[test]
    fn maps_unions_and_extra_keys_keep_their_notes() {
        let t = tool(
            json!({"name": "t", "description": "", "inputSchema": {"type": "object", "properties": {
                "modes": {"type": "object", "additionalProperties": {"type": "object", "properties": {"mode": {"type": "string", "description": "How"}}}},
                "labels": {"type": "object", "properties": {"main": {"type": "string"}}, "additionalProperties": {"type": "string", "description": "Other labels"}},
                "paths": {"anyOf": [{"type": "string", "description": "One path"}, {"type": "array", "items": {"type": "string"}, "description": "Several paths"}]}
            }}}),
        );
        assert_eq!(
            tool_help(&t),
            "--modes {str:obj}\n  * obj\n    mode str: How\n\
             --labels obj\n  main str\n  * str: Other labels\n\
             --paths str|str[]\n  | str: One path\n  | str[]: Several paths\n"
        );
    }

    #[test]
    fn long_summaries_end_where_a_qualifying_part_begins() {
        assert_eq!(
            summary("Performs web searches using Brave Search API and returns comprehensive search results with rich metadata."),
            "Performs web searches using Brave Search API"
        );
        assert_eq!(
            summary("This tool will take in user question about integrating with Stripe in their application."),
            "take in user question about integrating"
        );
        assert_eq!(
            summary("Get all images attached to a Jira issue as inline image content."),
            "Get images attached to Jira issue as inline image content"
        );
        assert_eq!(
            summary(
                "Returns structured content along with output schema for client data validation"
            ),
            "Returns structured content"
        );
        assert_eq!(
            summary("Read the complete contents of a file from the file system as text. Handles encodings."),
            "Read complete contents of file from file system as text"
        );
    }

    #[test]
    fn summaries_keep_the_first_clause() {
        assert_eq!(
            summary("Searches the web for pages (via Bing)."),
            "Searches web for pages"
        );
        assert_eq!(
            summary("Search (via Bing) for pages."),
            "Search (via Bing) for pages"
        );
        assert_eq!(
            summary("Get the current time in a timezone"),
            "Get current time in timezone"
        );
        assert_eq!(summary("List open issues: all of them"), "List open issues");
        assert_eq!(
            summary("Convert between Celsius, Fahrenheit and Kelvin."),
            "Convert between Celsius, Fahrenheit and Kelvin"
        );
        assert_eq!(summary("A"), "A");
        assert_eq!(
            summary("List issues (default: created by me; any state)"),
            "List issues"
        );
        assert_eq!(summary(""), "");
    }

    #[test]
    fn summaries_start_where_a_description_says_what_the_tool_does() {
        // A heading that repeats the name, then the gist.
        assert_eq!(
            summary_for(
                "SendMessage",
                "# SendMessage\n\nSend a message to another agent.\n\n```json\n{}\n```"
            ),
            "Send message to another agent"
        );
        // Another heading is read as text, without its markup.
        assert_eq!(summary_for("x", "## Search the web\nMore."), "Search web");
        // A leading warning paragraph, then list markup.
        assert_eq!(
            summary_for("WebFetch", "IMPORTANT: WebFetch WILL FAIL for private URLs. Check first.\n\n- Fetches content from a URL"),
            "Fetches content from URL"
        );
        assert_eq!(
            summary_for("t", "\n- Stops a running task by its ID\n- Takes an ID"),
            "Stops running task by its ID"
        );
        // A rule for when to use the tool, then what it does.
        assert_eq!(
            summary_for(
                "EnterWorktree",
                "Use this tool ONLY when told to. This tool creates a git worktree."
            ),
            "creates git worktree"
        );
        assert_eq!(
            summary_for(
                "WebSearch",
                "- Allows Claude to search the web and use the results"
            ),
            "search web and use results"
        );
        // A deprecated tool says so first, with its replacement when the note names one.
        assert_eq!(
            summary_for(
                "old",
                "[Deprecated: Use web_search_advanced instead] Research a company."
            ),
            "Deprecated, use web_search_advanced"
        );
        assert_eq!(
            summary_for("old", "\u{26a0}\u{fe0f} DEPRECATED: This tool is deprecated. Please use 'people_search' instead. It will go."),
            "Deprecated, use people_search"
        );
        assert_eq!(
            summary_for("old", "[Deprecated] Start an AI research agent."),
            "Deprecated: Start AI research agent"
        );
    }

    #[test]
    fn summaries_cut_at_phrase_boundaries() {
        // A comma inside a phrase is not a boundary; one before a list's tail is.
        assert_eq!(
            summary_for(
                "Agent",
                "Launch a new agent to handle complex, multi-step tasks. Each agent."
            ),
            "Launch new agent to handle complex, multi-step tasks"
        );
        assert_eq!(
            summary("Get logs from Kubernetes resources like pods, deployments, or jobs"),
            "Get logs from Kubernetes resources like pods"
        );
        // Never ends on a participle waiting for what was cut.
        assert_eq!(
            summary_for("ExitWorktree", "Exit a worktree session created by EnterWorktree and return the session to the original working directory."),
            "Exit worktree session created by EnterWorktree"
        );
    }

    #[test]
    fn a_summary_that_only_repeats_the_name_is_left_out() {
        assert_eq!(summary_for("r2_delete_bucket", "Delete an R2 bucket"), "");
        assert_eq!(
            summary_for("merge_pull_request", "Merge a pull request"),
            ""
        );
        // Unless what a long name's shorter summary cut was all it added.
        assert_eq!(
            summary_for(
                "update_pull_request_branch",
                "Update a pull request branch with the latest changes from the base branch"
            ),
            "Update pull request branch with latest changes from base branch"
        );
        // A long name leaves fewer words to its summary.
        assert_eq!(
            summary_for(
                "confluence_download_content_attachments",
                "Download all attachments for a Confluence content item as embedded resources."
            ),
            "Download attachments for Confluence content item"
        );
        let t = tool(
            json!({"name": "queue_delete", "description": "Delete a queue", "inputSchema": {"type": "object", "properties": {"queueId": {"type": "string"}}, "required": ["queueId"]}}),
        );
        assert_eq!(listing_line(&t), "queue_delete(queueId)");
    }

    #[test]
    fn help_shows_every_fact() {
        let t = tool(json!({"name": "edit_file", "description": "Edit a file.",
            "inputSchema": {"type": "object", "properties": {
                "path": {"type": "string"},
                "edits": {"type": "array", "items": {"type": "object", "properties": {
                    "oldText": {"type": "string", "description": "Text to search for"},
                    "newText": {"type": "string", "description": "Text to replace with"}}, "required": ["oldText", "newText"]}},
                "dryRun": {"type": "boolean", "default": false, "description": "Preview changes"},
                "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                "count": {"type": "integer", "minimum": 1, "maximum": 9007199254740991_i64}},
            "required": ["path", "edits"]}}));
        assert_eq!(
            tool_help(&t),
            "Edit a file.\n\
             --path str required\n\
             --edits obj[] required\n  \
             oldText str required: Text to search for\n  \
             newText str required: Text to replace with\n\
             --dryRun bool =false: Preview changes\n\
             --mode a|b =a\n\
             --count int [minimum 1]\n"
        );
    }
}
