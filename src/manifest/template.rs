//! A tool's command template: each element one argv element, never seen by a shell.
//!
//! `"{p}"` is exactly one element, the value as text; `"--x={p}"` substitutes inside one
//! element; `"{p*}"` is one element per array item, `"--x={p*}"` one `--x=ITEM` per item (a
//! repeated option); a nested array is an optional group, kept
//! only when every parameter it names has a value. An element naming a parameter with no value
//! is dropped. `{{` and `}}` are literal braces. A value that would start an element with `-`
//! is refused unless its parameter allows it: values never become options.

use serde_json::Value;

/// A piece of an element's text.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    Text(String),
    Param(String),
}

/// One element of a command template.
#[derive(Debug, Clone, PartialEq)]
pub enum Element {
    /// A fixed word.
    Word(String),
    /// `"{p}"`: exactly the value.
    Whole(String),
    /// `"{p*}"`: one element per item.
    Spread(String),
    /// `"--glob={p*}"`: one element per item, each the fixed text and the item (a repeated
    /// option).
    Repeat(String, String),
    /// Text with values inside: `"--author={a}"`.
    Mixed(Vec<Piece>),
    /// An optional group, kept only when every parameter it names has a value.
    Group(Vec<Element>),
}

/// How one parameter renders.
pub trait ParamView {
    /// Whether a value may start an element with `-`.
    fn allows_dash(&self, name: &str) -> bool;
    /// The flag a boolean renders as when true.
    fn flag(&self, name: &str) -> Option<&str>;
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Why a string is not a valid command element (each says the element, quoted).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ElementError {
    #[error("{0:?} has a '{{' with no '}}' (write {{{{ for a literal brace)")]
    Unclosed(String),
    #[error("{text:?} has a placeholder {{{inner}}} that is not a parameter name (write {{{{ for a literal brace)")]
    NotAName { text: String, inner: String },
    #[error("{0:?} has a '}}' with no '{{' (write }}}} for a literal brace)")]
    Unopened(String),
    #[error("{text:?}: {{{name}*}} must be a whole element, or end one after fixed text (\"--x={{{name}*}}\"), one per item")]
    SpreadInside { text: String, name: String },
}

/// Parses one string element; `Err` says why it is not a valid element.
pub fn parse_element(text: &str) -> Result<Element, ElementError> {
    let mut pieces: Vec<Piece> = Vec::new();
    let mut literal = String::new();
    let mut spread: Option<String> = None;
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '{' if text[i..].starts_with("{{") => {
                literal.push('{');
                chars.next();
            }
            '}' if text[i..].starts_with("}}") => {
                literal.push('}');
                chars.next();
            }
            '{' => {
                let rest = &text[i + 1..];
                let Some(end) = rest.find('}') else {
                    return Err(ElementError::Unclosed(text.to_string()));
                };
                let inner = &rest[..end];
                let (name, star) = match inner.strip_suffix('*') {
                    Some(name) => (name, true),
                    None => (inner, false),
                };
                if name.is_empty()
                    || !name.chars().all(is_name_char)
                    || name.starts_with(|c: char| c.is_ascii_digit())
                {
                    return Err(ElementError::NotAName {
                        text: text.to_string(),
                        inner: inner.to_string(),
                    });
                }
                if star {
                    spread = Some(name.to_string());
                }
                if !literal.is_empty() {
                    pieces.push(Piece::Text(std::mem::take(&mut literal)));
                }
                pieces.push(Piece::Param(name.to_string()));
                for _ in 0..inner.chars().count() + 1 {
                    chars.next();
                }
            }
            '}' => return Err(ElementError::Unopened(text.to_string())),
            c => literal.push(c),
        }
    }
    if !literal.is_empty() {
        pieces.push(Piece::Text(literal));
    }
    if let Some(name) = spread {
        return match pieces.as_slice() {
            [Piece::Param(only)] if *only == name => Ok(Element::Spread(name)),
            [Piece::Text(fixed), Piece::Param(only)] if *only == name => {
                Ok(Element::Repeat(fixed.clone(), name))
            }
            _ => Err(ElementError::SpreadInside {
                text: text.to_string(),
                name,
            }),
        };
    }
    Ok(match pieces.as_slice() {
        [] => Element::Word(String::new()),
        [Piece::Text(t)] => Element::Word(t.clone()),
        [Piece::Param(p)] => Element::Whole(p.clone()),
        _ => Element::Mixed(pieces),
    })
}

impl Element {
    /// The string a manifest writes for this element, which [`parse_element`] reads back as
    /// it (fixed braces doubled); `None` for a group, written as an array of its elements.
    pub fn template_text(&self) -> Option<String> {
        let fixed = |text: &str| text.replace('{', "{{").replace('}', "}}");
        Some(match self {
            Element::Word(word) => fixed(word),
            Element::Whole(name) => format!("{{{name}}}"),
            Element::Spread(name) => format!("{{{name}*}}"),
            Element::Repeat(text, name) => format!("{}{{{name}*}}", fixed(text)),
            Element::Mixed(pieces) => pieces
                .iter()
                .map(|piece| match piece {
                    Piece::Text(text) => fixed(text),
                    Piece::Param(name) => format!("{{{name}}}"),
                })
                .collect(),
            Element::Group(_) => return None,
        })
    }

    /// Every parameter this element names, with whether it spreads.
    pub fn params(&self, out: &mut Vec<(String, bool)>) {
        match self {
            Element::Word(_) => {}
            Element::Whole(p) => out.push((p.clone(), false)),
            Element::Spread(p) | Element::Repeat(_, p) => out.push((p.clone(), true)),
            Element::Mixed(pieces) => {
                for piece in pieces {
                    if let Piece::Param(p) = piece {
                        out.push((p.clone(), false));
                    }
                }
            }
            Element::Group(elements) => elements.iter().for_each(|e| e.params(out)),
        }
    }
}

/// A value as argv text. A whole number sent as `1.0` (JSON Schema counts it an integer, and
/// models send it so) is written `1`, which every command reads as a count.
pub fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_f64() => match n.as_f64() {
            // Up to 1e21, where JSON numbers switch to exponents anyway, in plain digits.
            // (-0 is 0: a leading dash would read as an option.)
            Some(f) if f.fract() == 0.0 && f.abs() < 1e21 => format!("{:.0}", f + 0.0),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

/// Why a call's values cannot become a command line.
#[derive(Debug, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct Refusal(pub String);

/// Renders the template with the call's values (defaults already filled in, paths already
/// resolved), or refuses.
pub fn render(
    elements: &[Element],
    values: &serde_json::Map<String, Value>,
    params: &dyn ParamView,
) -> Result<Vec<String>, Refusal> {
    let mut argv = Vec::new();
    render_into(elements, values, params, &mut argv)?;
    Ok(argv)
}

fn has_value(values: &serde_json::Map<String, Value>, name: &str) -> bool {
    values.get(name).is_some_and(|v| !v.is_null())
}

fn whole(
    name: &str,
    text: String,
    params: &dyn ParamView,
    argv: &mut Vec<String>,
) -> Result<(), Refusal> {
    if text.starts_with('-') && !params.allows_dash(name) {
        return Err(Refusal(format!(
            "{name} may not start with '-' (it would be read as an option)"
        )));
    }
    argv.push(text);
    Ok(())
}

fn render_into(
    elements: &[Element],
    values: &serde_json::Map<String, Value>,
    params: &dyn ParamView,
    argv: &mut Vec<String>,
) -> Result<(), Refusal> {
    for element in elements {
        match element {
            Element::Word(word) => argv.push(word.clone()),
            Element::Whole(name) => match values.get(name) {
                None | Some(Value::Null) => {}
                Some(Value::Bool(on)) => match params.flag(name) {
                    Some(flag) => {
                        if *on {
                            argv.push(flag.to_string());
                        }
                    }
                    None => argv.push(on.to_string()),
                },
                Some(value) => whole(name, value_text(value), params, argv)?,
            },
            Element::Spread(name) => {
                if let Some(Value::Array(items)) = values.get(name) {
                    for item in items {
                        whole(name, value_text(item), params, argv)?;
                    }
                }
            }
            // After fixed text a value cannot become an option of its own.
            Element::Repeat(text, name) => {
                if let Some(Value::Array(items)) = values.get(name) {
                    for item in items {
                        argv.push(format!("{text}{}", value_text(item)));
                    }
                }
            }
            Element::Mixed(pieces) => {
                let named: Vec<&String> = pieces
                    .iter()
                    .filter_map(|p| match p {
                        Piece::Param(n) => Some(n),
                        Piece::Text(_) => None,
                    })
                    .collect();
                if !named.iter().all(|n| has_value(values, n)) {
                    continue;
                }
                let mut text = String::new();
                for piece in pieces {
                    match piece {
                        Piece::Text(t) => text.push_str(t),
                        Piece::Param(n) => {
                            text.push_str(&values.get(n).map(value_text).unwrap_or_default())
                        }
                    }
                }
                if let Some(Piece::Param(first)) = pieces.first() {
                    if text.starts_with('-') && !params.allows_dash(first) {
                        return Err(Refusal(format!(
                            "{first} may not start with '-' (it would be read as an option)"
                        )));
                    }
                }
                argv.push(text);
            }
            Element::Group(inner) => {
                let mut named = Vec::new();
                element.params(&mut named);
                let complete = named.iter().all(|(n, _)| match values.get(n) {
                    Some(Value::Array(items)) => !items.is_empty(),
                    Some(Value::Null) | None => false,
                    Some(_) => true,
                });
                if complete {
                    render_into(inner, values, params, argv)?;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    struct View;
    impl ParamView for View {
        fn allows_dash(&self, name: &str) -> bool {
            name == "pattern"
        }
        fn flag(&self, name: &str) -> Option<&str> {
            (name == "stat").then_some("--stat")
        }
    }

    fn elements(list: &[&str]) -> Vec<Element> {
        list.iter().map(|t| parse_element(t).unwrap()).collect()
    }

    #[test]
    fn whole_numbers_sent_as_floats_are_written_as_integers() {
        assert_eq!(value_text(&json!(1.0)), "1");
        assert_eq!(value_text(&json!(-20.0)), "-20");
        assert_eq!(value_text(&json!(2.5)), "2.5");
        assert_eq!(value_text(&json!(7)), "7");
        assert_eq!(value_text(&json!(1e300)), "1e+300");
        assert_eq!(value_text(&json!(1e16)), "10000000000000000");
        assert_eq!(value_text(&json!(-0.0)), "0");
        assert_eq!(value_text(&json!("1.0")), "1.0");
    }

    #[test]
    fn elements_parse_into_kinds() {
        assert_eq!(parse_element("log").unwrap(), Element::Word("log".into()));
        assert_eq!(
            parse_element("{count}").unwrap(),
            Element::Whole("count".into())
        );
        assert_eq!(
            parse_element("{paths*}").unwrap(),
            Element::Spread("paths".into())
        );
        assert_eq!(
            parse_element("--author={a}").unwrap(),
            Element::Mixed(vec![
                Piece::Text("--author=".into()),
                Piece::Param("a".into())
            ])
        );
        assert_eq!(
            parse_element("{{literal}}").unwrap(),
            Element::Word("{literal}".into())
        );
        // A repeated option: fixed text, then the spread, one element per item.
        assert_eq!(
            parse_element("--x={p*}").unwrap(),
            Element::Repeat("--x=".into(), "p".into())
        );
        assert!(parse_element("{p*}=x").is_err());
        assert!(parse_element("a{p*}b").is_err());
        assert!(parse_element("{open").is_err());
        assert!(parse_element("{not a name}").is_err());
        assert!(parse_element("close}").is_err());
    }

    #[test]
    fn an_element_is_written_as_the_text_that_parses_back_to_it() {
        for text in [
            "log",
            "{count}",
            "{paths*}",
            "--author={a}",
            "-L{range}",
            "{{literal}}",
            "we\"ird{{x}}",
            "{a}{{b}}{c}",
        ] {
            let element = parse_element(text).unwrap();
            assert_eq!(element.template_text().as_deref(), Some(text));
        }
        assert_eq!(
            Element::Group(elements(&["-n", "{n}"])).template_text(),
            None
        );
    }

    #[test]
    fn values_fill_elements_and_never_become_options() {
        let mut template = elements(&["git", "log", "-n", "{count}", "{stat}", "--", "{paths*}"]);
        template.insert(4, Element::Group(elements(&["--author", "{author}"])));
        let values = json!({"count": 5, "stat": true, "paths": ["a b", "c;rm -rf /"]});
        assert_eq!(
            render(&template, values.as_object().unwrap(), &View).unwrap(),
            ["git", "log", "-n", "5", "--stat", "--", "a b", "c;rm -rf /"]
        );
        let values = json!({"count": 5, "stat": false, "author": "ada", "paths": []});
        assert_eq!(
            render(&template, values.as_object().unwrap(), &View).unwrap(),
            ["git", "log", "-n", "5", "--author", "ada", "--"]
        );
        let values = json!({"count": "--output=/tmp/x"});
        assert_eq!(
            render(&template, values.as_object().unwrap(), &View),
            Err(Refusal(
                "count may not start with '-' (it would be read as an option)".into()
            ))
        );
        let values = json!({"count": 1, "paths": ["ok", "-rf"]});
        assert!(render(&template, values.as_object().unwrap(), &View).is_err());
        // A value inside a group is refused the same way.
        let values = json!({"count": 1, "author": "--exec=x"});
        assert!(render(&template, values.as_object().unwrap(), &View).is_err());
        // A mixed element that a value begins is refused too; one a word begins is not.
        let mixed = elements(&["{name}.txt", "--out={name}"]);
        assert!(render(&mixed, json!({"name": "-x"}).as_object().unwrap(), &View).is_err());
        let safe = elements(&["--out={name}"]);
        assert_eq!(
            render(&safe, json!({"name": "-x"}).as_object().unwrap(), &View).unwrap(),
            ["--out=-x"]
        );
        // A parameter that allows a dash (rg's pattern) passes.
        let rg = elements(&["rg", "-e", "{pattern}"]);
        assert_eq!(
            render(&rg, json!({"pattern": "-foo"}).as_object().unwrap(), &View).unwrap(),
            ["rg", "-e", "-foo"]
        );
    }
}
