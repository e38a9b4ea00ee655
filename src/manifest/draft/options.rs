//! Option lines: each option's spellings, its value (required, optional or none), its choices,
//! whether it repeats, and its description, in the layouts of git, ripgrep, curl, cobra,
//! argparse, clap, GNU getopt, Go's flag package, kubectl and find.

use super::text::{clean, is_capital_placeholder, lines, summary};
use crate::render::text::collapse_whitespace;

/// One option found in a help text.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct OptionSpec {
    /// The long spelling with its dashes and without `[no-]`: `--max-count`, or `-maxdepth`
    /// for programs whose long options take one dash (find, Go's flag package).
    pub long: Option<String>,
    pub short: Option<char>,
    /// The value's name as the help writes it (`NUM`, `file`, `{a,b}`); `None` for a flag.
    pub value: Option<String>,
    /// The value may be left out (`--color[=WHEN]`), so it must be attached (`--color=auto`):
    /// given as a separate word it would be read as an operand.
    pub optional_value: bool,
    /// It takes two values (jq's `--arg NAME VALUE`): `value` holds both names.
    pub pair: bool,
    pub description: String,
    /// Allowed values, from `[possible values: a, b]`, a clap `Possible values:` list, or `{a,b,c}`.
    pub choices: Vec<String>,
    pub repeatable: bool,
}

/// Options found in a help text, in the help's order (help and version options included).
///
/// An option line starts with `-` and lists the option's spellings and value
/// (`-m, --max-count=NUM`, `--count N, -c N`, `-o, --output <file>`, `--[no-]decorate[=...]`,
/// `-f, --filter filter`), then its description, inline or on the following, more indented
/// lines. A line indented to the description column is description even when it starts with
/// `-`.
pub fn options(help: &str) -> Vec<OptionSpec> {
    let text = split_columns(&clean(help));
    let mut out = Vec::new();
    let mut pending: Option<Pending> = None;
    for line in lines(&text) {
        if line.text.is_empty() {
            if let Some(p) = &mut pending {
                p.lines.push(String::new());
            }
            continue;
        }
        if let Some(p) = &mut pending {
            if p.desc_col.is_some_and(|col| line.indent >= col) {
                p.lines.push(line.text.to_string());
                continue;
            }
        }
        if let Some(parsed) = option_line(line.text) {
            if let Some(p) = pending.take() {
                p.finish(&mut out);
            }
            let mut lines = Vec::new();
            if !parsed.description.is_empty() {
                lines.push(parsed.description.to_string());
            }
            pending = Some(Pending {
                specs: parsed.specs,
                indent: line.indent,
                desc_col: (!parsed.description.is_empty())
                    .then_some(line.indent + parsed.desc_offset),
                lines,
            });
            continue;
        }
        match &mut pending {
            Some(p) if line.indent > p.indent => {
                p.desc_col.get_or_insert(line.indent);
                p.lines.push(line.text.to_string());
            }
            _ => {
                if let Some(p) = pending.take() {
                    p.finish(&mut out);
                }
            }
        }
    }
    if let Some(p) = pending {
        p.finish(&mut out);
    }
    out
}

/// Option lines laid out in two columns (unzip's `-p  extract files to pipe     -l  list
/// files`) as one option per line: a second option after three or more blanks, when the line
/// is itself an option line.
fn split_columns(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        let is_option = |t: &str| {
            t.starts_with('-')
                && t[1..].starts_with(|c: char| c.is_ascii_alphanumeric())
                && option_line(t).is_some_and(|o| !o.description.is_empty())
        };
        let second = is_option(trimmed)
            .then(|| {
                trimmed.match_indices("   ").find_map(|(at, _)| {
                    let rest = trimmed[at..].trim_start();
                    is_option(rest).then(|| (trimmed.len() - rest.len(), rest))
                })
            })
            .flatten();
        match second {
            Some((column, rest)) => {
                out.push_str(line[..indent + column].trim_end());
                out.push('\n');
                out.push_str(&" ".repeat(indent));
                out.push_str(rest);
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// An option line being read: its option(s), and the description lines so far.
pub(super) struct Pending {
    /// One option, or several for find's packed lists (`-amin N -anewer FILE`).
    pub(super) specs: Vec<OptionSpec>,
    pub(super) indent: usize,
    /// The column descriptions start at, once known.
    pub(super) desc_col: Option<usize>,
    /// Description lines; an empty one is a paragraph break.
    pub(super) lines: Vec<String>,
}

impl Pending {
    fn finish(self, out: &mut Vec<OptionSpec>) {
        let paragraph: Vec<&str> = self
            .lines
            .iter()
            .map(String::as_str)
            .skip_while(|l| l.is_empty())
            .take_while(|l| !l.is_empty())
            .collect();
        let description = summary(&paragraph.join(" "), false);
        let all = collapse_whitespace(&self.lines.join(" "));
        let lower = all.to_ascii_lowercase();
        let choices = description_choices(&self.lines);
        let repeatable = [
            "can be repeated",
            "may be repeated",
            "more than once",
            "multiple times",
        ]
        .iter()
        .any(|p| lower.contains(p));
        // Packed lists (find's `-amin N -anewer FILE`) describe none of their options.
        let description = if self.specs.len() > 1 {
            String::new()
        } else {
            description
        };
        for mut spec in self.specs {
            spec.description = description.clone();
            // cobra's value types for options given once per value.
            spec.repeatable |= matches!(
                spec.value.as_deref(),
                Some("list" | "stringArray" | "strings" | "stringSlice" | "stringToString")
            );
            if spec.choices.is_empty() && spec.value.is_some() {
                spec.choices = choices.clone();
            }
            spec.repeatable |= repeatable;
            out.push(spec);
        }
    }
}

/// Allowed values a description lists: clap's `[possible values: a, b]` or its long help's
/// `Possible values:` followed by `- a: …` lines.
pub(super) fn description_choices(lines: &[String]) -> Vec<String> {
    let all = collapse_whitespace(&lines.join(" "));
    let lower = all.to_ascii_lowercase();
    let mut values: Vec<String> = Vec::new();
    if let Some(i) = lower.find("[possible values:") {
        let rest = &all[i + "[possible values:".len()..];
        let list = rest.split(']').next().unwrap_or("");
        values = list.split(',').map(|v| v.trim().to_string()).collect();
    } else if let Some(at) = lines.iter().position(|l| {
        l.to_ascii_lowercase()
            .trim_end()
            .ends_with("possible values:")
    }) {
        for line in lines.iter().skip(at + 1) {
            let Some(item) = line
                .trim()
                .strip_prefix("- ")
                .or_else(|| line.trim().strip_prefix("* "))
            else {
                break;
            };
            let end = item
                .find(|c: char| c == ':' || c.is_whitespace())
                .unwrap_or(item.len());
            values.push(item[..end].to_string());
        }
    }
    let valid = |v: &String| {
        !v.is_empty() && v.len() <= 64 && !v.starts_with('-') && !v.contains(char::is_whitespace)
    };
    if values.iter().all(valid) {
        values
    } else {
        Vec::new()
    }
}

/// What an option line holds.
pub(super) struct OptionLine<'a> {
    pub(super) specs: Vec<OptionSpec>,
    /// The inline description (may be empty).
    pub(super) description: &'a str,
    /// Where it starts, in characters from the start of the line's text.
    pub(super) desc_offset: usize,
}

/// A cursor over one line.
pub(super) struct Scanner<'a> {
    pub(super) text: &'a str,
    pub(super) pos: usize,
}

impl<'a> Scanner<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }
    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }
    fn peek_second(&self) -> Option<char> {
        self.rest().chars().nth(1)
    }
    fn bump(&mut self) {
        if let Some(c) = self.peek() {
            self.pos += c.len_utf8();
        }
    }
    /// Consumes `s` when the rest starts with it.
    fn eat(&mut self, s: &str) -> bool {
        if self.rest().starts_with(s) {
            self.pos += s.len();
            true
        } else {
            false
        }
    }
    /// An option name: letters, digits, `-`, `_`, and `.` between them (`--http1.1`; a
    /// trailing `...` is clap's "repeatable").
    fn name(&mut self) -> &'a str {
        let start = self.pos;
        while let Some(c) = self.peek() {
            let inner_dot = c == '.'
                && self
                    .peek_second()
                    .is_some_and(|n| n.is_ascii_alphanumeric());
            if !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || inner_dot) {
                break;
            }
            self.bump();
        }
        &self.text[start..self.pos]
    }
    /// A word, bracketed parts kept whole (`<fractional seconds>`, `{a,b}`), ending at a blank
    /// or a comma outside brackets.
    fn token(&mut self) -> &'a str {
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(c) = self.peek() {
            match c {
                '<' | '[' | '{' | '(' => depth += 1,
                '>' | ']' | '}' | ')' => depth = depth.saturating_sub(1),
                c if depth == 0 && (c.is_whitespace() || c == ',') => break,
                _ => {}
            }
            self.bump();
        }
        &self.text[start..self.pos]
    }
}

/// Parses a line as an option line, or `None` when it is not one.
pub(super) fn option_line(text: &str) -> Option<OptionLine<'_>> {
    let mut s = Scanner { text, pos: 0 };
    // git's `-<number>, -n <number>, --max-count=<number>`: a placeholder spelling first.
    if text.starts_with("-<") {
        let at = text.find(", -")?;
        s.pos = at + 2;
    }
    let mut specs = Vec::new();
    let mut spec = OptionSpec::default();
    read_form(&mut s, &mut spec)?;
    loop {
        let save = s.pos;
        // Another spelling of the same option: `-a, --all`, `--count N, -c N`, `-v | --verbose`,
        // stat's `-c  --format=FORMAT`.
        let apart = spec.value.is_none()
            && spec.long.is_none()
            && s.rest().starts_with("  --")
            && s.rest()[4..].starts_with(|c: char| c.is_ascii_alphanumeric());
        if apart {
            s.eat("  ");
            let mut next = spec.clone();
            if read_form(&mut s, &mut next).is_some() {
                spec = next;
                continue;
            }
            s.pos = save;
            break;
        }
        if s.eat(", ") || s.eat(",") || s.eat(" | ") || s.eat("|") || s.eat("/") {
            let mut next = spec.clone();
            if s.peek() == Some('-') && read_form(&mut s, &mut next).is_some() {
                spec = next;
                continue;
            }
            s.pos = save;
            break;
        }
        // find's packed lists: `-amin N -anewer FILE -atime N`, one blank between options
        // (and a second value word skipped: `-fprintf FILE FORMAT -print`).
        if s.eat(" ") {
            let word = s.token();
            if !(is_capital_placeholder(word) && s.rest().starts_with(" -")) {
                s.pos = save;
            }
        }
        if s.rest().starts_with(" -")
            && s.rest()[2..].starts_with(|c: char| c.is_ascii_alphanumeric())
        {
            s.bump();
            let mut next = OptionSpec::default();
            if read_form(&mut s, &mut next).is_some() {
                specs.push(std::mem::replace(&mut spec, next));
                continue;
            }
            s.pos = save;
        }
        break;
    }
    specs.push(spec);
    let rest = s.rest();
    if !rest.is_empty() && !rest.starts_with(char::is_whitespace) {
        return None;
    }
    let description = rest.trim();
    let desc_offset = text.chars().count() - rest.trim_start().chars().count();
    Some(OptionLine {
        specs,
        description,
        desc_offset,
    })
}

/// Reads one spelling (`-n`, `--max-count=NUM`, `--[no-]quiet`, `-maxdepth LEVELS`) into `spec`.
pub(super) fn read_form(s: &mut Scanner, spec: &mut OptionSpec) -> Option<()> {
    if s.eat("--") {
        s.eat("[no-]");
        let name = s.name();
        if !name.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            return None;
        }
        spec.long.get_or_insert_with(|| format!("--{name}"));
    } else if s.eat("-") {
        let first = s.peek()?;
        if first.is_ascii_alphanumeric() {
            let name = s.name();
            let mut chars = name.chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => {
                    spec.short.get_or_insert(c);
                }
                _ => {
                    spec.long.get_or_insert_with(|| format!("-{name}"));
                }
            }
        } else if "#?@:!".contains(first) {
            s.bump();
            spec.short.get_or_insert(first);
        } else {
            return None;
        }
    } else {
        return None;
    }
    match s.peek() {
        None | Some(' ' | ',' | '=' | '[' | '<' | '|' | '/' | '.') => {}
        Some(c) if c.is_whitespace() => {}
        _ => return None,
    }
    read_value(s, spec);
    Some(())
}

/// Reads the value an option spelling shows, if any.
pub(super) fn read_value(s: &mut Scanner, spec: &mut OptionSpec) {
    if s.peek() == Some('.') {
        // clap's `-v, --verbose...`: a flag given more than once.
        if s.eat("...") {
            spec.repeatable = true;
        }
        return;
    }
    if s.eat("=") {
        let token = s.token();
        match token.strip_suffix(':') {
            // kubectl's `--chunk-size=500:` with the description on the next lines: a default.
            Some(default) if s.rest().trim().is_empty() => kubectl_default(spec, default),
            _ => set_value(spec, token, false),
        }
    } else if s.peek() == Some('[') {
        let token = s.token();
        set_value(spec, token, token.ends_with(']'));
    } else if s.peek() == Some('<') {
        let token = s.token();
        set_value(spec, token, false);
    } else if s.peek() == Some(' ') && s.peek_second().is_some_and(|c| !c.is_whitespace()) {
        let save = s.pos;
        s.bump();
        let token = s.token();
        if is_value_token(token, s.rest()) {
            let optional = token.starts_with('[') && token.ends_with(']');
            set_value(spec, token, optional);
        } else if let Some(second) = second_value(s, token) {
            // Two values (`--arg a v`, `--arg <name> <value>`).
            set_value(spec, &format!("{token} {second}"), false);
            spec.pair = true;
            return;
        } else {
            s.pos = save;
            return;
        }
    } else {
        return;
    }
    // argparse's `--foo FOO [FOO ...]`: more than one value.
    let save = s.pos;
    if s.eat(" ") {
        let token = s.token();
        if token.starts_with('[') && token.ends_with("...]") {
            spec.repeatable = true;
            return;
        }
        // A second value: `--arg NAME VALUE`, `--arg <name> <value>`.
        let after = s.rest();
        let placeholder = (token.starts_with('<') && token.ends_with('>'))
            || (is_capital_placeholder(token) && !token.ends_with("..."));
        if placeholder && !spec.optional_value && (after.is_empty() || after.starts_with("  ")) {
            if let Some(first) = spec.value.take() {
                spec.value = Some(format!("{first} {}", token.trim_matches(['<', '>'])));
                spec.pair = true;
                return;
            }
        }
    }
    s.pos = save;
}

/// Whether the word after an option spelling and one blank is its value (not the description).
pub(super) fn is_value_token(token: &str, after: &str) -> bool {
    let bare = token.trim_end_matches("...");
    match bare.chars().next() {
        Some('<' | '{') => true,
        // argparse's `[BAR]`, clap's `[<NAME>]`; git's `[(amend|reword):]commit` alone on its line.
        // A bracket with a word after it (`[-/]MODE`) is a value too.
        Some('[') => {
            !bare.ends_with(']')
                || !bare[1..].starts_with('-')
                || after.is_empty()
                || after.starts_with("  ")
        }
        Some(c) if c.is_ascii_uppercase() => is_capital_placeholder(bare),
        // docker's `--format string` and Go's `-name string`: a lower-case word, then the
        // description after two blanks (or python's ` : `).
        Some(c) if c.is_ascii_lowercase() => {
            bare.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                && (after.is_empty()
                    || after.starts_with("  ")
                    || after.starts_with(',')
                    || after.starts_with(" : "))
        }
        _ => false,
    }
}

/// The second of two value words after an option (`--arg a v  set $a`), when `first` and the
/// word after it both read as values and the description follows.
fn second_value<'a>(s: &mut Scanner<'a>, first: &str) -> Option<&'a str> {
    let save = s.pos;
    let plain = |w: &str| {
        (w.starts_with('<') && w.ends_with('>'))
            || (w.len() <= 12
                && w.starts_with(|c: char| c.is_ascii_alphabetic())
                && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'))
    };
    if plain(first) && s.eat(" ") {
        let second = s.token();
        if plain(second) && is_value_token(second, s.rest()) {
            return Some(second);
        }
    }
    s.pos = save;
    None
}

/// Reads kubectl's `--name=DEFAULT:`: `false`/`true` make a flag; otherwise the default says
/// what the value is.
pub(super) fn kubectl_default(spec: &mut OptionSpec, default: &str) {
    if spec.value.is_some() || default == "true" || default == "false" {
        return;
    }
    let value = if default.parse::<i64>().is_ok() {
        "int"
    } else if default.parse::<f64>().is_ok() {
        "float"
    } else if default == "[]" {
        spec.repeatable = true;
        "list"
    } else {
        "string"
    };
    spec.value = Some(value.to_string());
}

/// Records the value shown by `token` (`=NUM`, `<file>`, `[=WHEN]`, `{a,b}`, `<SPEC>...`).
pub(super) fn set_value(spec: &mut OptionSpec, token: &str, optional: bool) {
    let mut word = token;
    let mut repeat = |w: &mut &str| {
        if *w != "..." {
            if let Some(stripped) = w.strip_suffix("...") {
                *w = stripped;
                spec.repeatable = true;
            }
        }
    };
    repeat(&mut word);
    if optional {
        word = word
            .strip_prefix('[')
            .and_then(|w| w.strip_suffix(']'))
            .unwrap_or(word);
    }
    word = word.strip_prefix('=').unwrap_or(word);
    repeat(&mut word);
    if let Some(inner) = word.strip_prefix('<').and_then(|w| w.strip_suffix('>')) {
        word = inner;
    }
    if let Some(inner) = word.strip_prefix('{').and_then(|w| w.strip_suffix('}')) {
        if spec.choices.is_empty() {
            spec.choices = inner
                .split(',')
                .map(|c| c.trim().to_string())
                .filter(|c| !c.is_empty())
                .collect();
        }
    }
    if spec.value.is_none() {
        // `--decorate[=...]` names no value.
        let name = if word.is_empty() || word == "..." {
            "VALUE"
        } else {
            word
        };
        spec.value = Some(name.to_string());
        spec.optional_value = optional;
    } else if optional {
        // `-U NUM, --unified[=NUM]`: the long spelling's value must be attached.
        spec.optional_value = true;
    }
}
