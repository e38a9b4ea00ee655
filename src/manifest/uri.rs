//! URI templates of resource templates (`repo://commit/{sha}`): their variables, and the
//! values a URI gives them, decoded and kept in their place.

use serde_json::{Map, Value};

/// Why a URI template cannot be served.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum UriTemplateError {
    #[error("a '{{' with no '}}'")]
    Unclosed,
    #[error("{{{0}}} is not a simple variable (letters, digits, '_')")]
    NotSimple(String),
}

/// The variables of a URI template (`repo://commit/{sha}` → `sha`): simple `{name}` forms.
pub fn uri_variables(template: &str) -> Result<Vec<String>, UriTemplateError> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        let end = after.find('}').ok_or(UriTemplateError::Unclosed)?;
        let name = &after[..end];
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(UriTemplateError::NotSimple(name.to_string()));
        }
        names.push(name.to_string());
        rest = &after[end + 1..];
    }
    Ok(names)
}

/// Matches a URI against a template; the values of its variables when it matches, decoded.
/// A value never holds a control character, nor a `/` (percent-encoded or not) unless
/// `path_like(name)` says the variable is a path (which is then confined to the roots like
/// any path): `..%2F..` cannot climb out of a plain value's place.
pub fn match_uri(
    template: &str,
    uri: &str,
    path_like: impl Fn(&str) -> bool,
) -> Option<Map<String, Value>> {
    let mut values = Map::new();
    let mut rest_t = template;
    let mut rest_u = uri;
    loop {
        match rest_t.find('{') {
            None => return (rest_t == rest_u).then_some(values),
            Some(start) => {
                let literal = &rest_t[..start];
                rest_u = rest_u.strip_prefix(literal)?;
                let after = &rest_t[start + 1..];
                let end = after.find('}')?;
                let name = &after[..end];
                rest_t = &after[end + 1..];
                // The value runs to the next literal character of the template (or the end).
                let stop = rest_t.chars().next();
                let len = match stop {
                    Some(c) => rest_u.find(c)?,
                    None => rest_u.len(),
                };
                // Checked once decoded: `%2F` is a slash too, and `..%2F..` would climb.
                let value = crate::words::percent_decode(&rest_u[..len])?;
                let slash = value.contains('/') && !path_like(name);
                if value.is_empty() || slash || value.contains(char::is_control) {
                    return None;
                }
                values.insert(name.to_string(), Value::String(value));
                rest_u = &rest_u[len..];
            }
        }
    }
}
