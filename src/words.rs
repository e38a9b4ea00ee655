//! Matching names and reading text, shared by both directions: `*` globs (tool filters,
//! environment allowlists), the nearest name for "did you mean", kebab-case aliases, `%xx`
//! decoding, this process's UTF-8 environment (`utf8_env`), and the longest timeout anything
//! takes. It uses nothing of ferry's.

/// The longest timeout ferry accepts anywhere: a week.
pub const MAX_TIMEOUT_SECS: f64 = 7.0 * 24.0 * 3600.0;

/// `*` matches any run of characters; everything else matches itself.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == text,
        Some((prefix, rest)) => {
            let Some(mut remaining) = text.strip_prefix(prefix) else {
                return false;
            };
            if rest.is_empty() {
                return true;
            }
            loop {
                if glob_match(rest, remaining) {
                    return true;
                }
                let mut chars = remaining.chars();
                if chars.next().is_none() {
                    return false;
                }
                remaining = chars.as_str();
            }
        }
    }
}

/// The candidate nearest to `word` by edit distance, if it is near enough to be a typo.
pub fn closest<'a>(word: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let word_lower = word.to_lowercase();
    let word_len = word_lower.chars().count();
    candidates
        .filter_map(|c| {
            // The distance is at least the difference in length: a word far longer or shorter
            // (a megabyte of it, from a hostile caller) is not compared at all.
            let limit = 2.max(c.len() / 3);
            let kebab = kebab(c);
            let lower = c.to_lowercase();
            let far = |other: &str| word_len.abs_diff(other.chars().count()) > limit;
            if far(&kebab) && far(&lower) {
                return None;
            }
            Some((
                edit_distance(&word_lower, &kebab).min(edit_distance(&word_lower, &lower)),
                c,
            ))
        })
        .filter(|(d, c)| *d <= 2.max(c.len() / 3))
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    strsim::levenshtein(a, b)
}

/// Decodes `%xx` escapes; `None` for a malformed escape or bytes that are not UTF-8, which a
/// check must refuse rather than guess at.
pub fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A property name as a kebab-case word (`dryRun`, `max_results` → `dry-run`, `max-results`):
/// the alias the command line accepts.
pub fn kebab(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut prev_lower = false;
    for c in name.chars() {
        if c == '_' {
            out.push('-');
            prev_lower = false;
        } else if c.is_uppercase() {
            if prev_lower {
                out.push('-');
            }
            out.extend(c.to_lowercase());
            prev_lower = false;
        } else {
            out.push(c);
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
        }
    }
    out
}

/// This process's environment, the variables whose name and value are UTF-8 (the others are
/// left out: `std::env::vars` panics on them, and a shell can hold any bytes).
pub fn utf8_env() -> impl Iterator<Item = (String, String)> {
    std::env::vars_os()
        .filter_map(|(name, value)| Some((name.into_string().ok()?, value.into_string().ok()?)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes_decode_strictly() {
        assert_eq!(percent_decode("a%2Fb%20c").as_deref(), Some("a/b c"));
        assert_eq!(percent_decode("%zz"), None);
        assert_eq!(percent_decode("%+1"), None);
        assert_eq!(percent_decode("50%"), None);
        assert_eq!(percent_decode("%ff"), None);
    }

    #[test]
    fn globs() {
        assert!(glob_match("read_*", "read_file"));
        assert!(glob_match("*_file", "read_file"));
        assert!(glob_match("*", "x"));
        assert!(!glob_match("read_*", "write_file"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
    }

    #[test]
    fn closest_names_typos_only() {
        let names = ["get_current_time", "convert_time", "echo"];
        assert_eq!(
            closest("get_curent_time", names.into_iter()),
            Some("get_current_time")
        );
        assert_eq!(closest("ecoh", names.into_iter()), Some("echo"));
        assert_eq!(closest("completely-else", names.into_iter()), None);
    }
}
