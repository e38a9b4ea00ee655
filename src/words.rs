//! Matching names, shared by both directions: `*` globs (tool filters, environment
//! allowlists), the nearest name for "did you mean", and the longest timeout anything takes.

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
            let kebab = crate::schema::kebab(c);
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
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = if ca == *cb { prev } else { prev + 1 };
            prev = row[j + 1];
            row[j + 1] = cost.min(row[j] + 1).min(prev + 1);
        }
    }
    row[b.len()]
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
