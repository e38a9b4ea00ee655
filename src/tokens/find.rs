//! `ferry find`: rank the cached tools of every server against a few plain words (BM25 over
//! names, descriptions and property names), so an agent facing hundreds of tools reads five
//! lines instead of every listing.

use crate::protocol::tools::Tool;
use crate::schema::ToolSchema;
use rustc_hash::FxHashMap;

/// Words that say nothing about which tool is meant.
fn is_stopword(word: &str) -> bool {
    matches!(
        word,
        "a" | "an"
            | "the"
            | "to"
            | "of"
            | "for"
            | "in"
            | "on"
            | "with"
            | "and"
            | "or"
            | "by"
            | "from"
            | "my"
            | "me"
            | "i"
            | "it"
            | "this"
            | "that"
            | "is"
            | "be"
            | "please"
            | "into"
            | "at"
            | "as"
            | "can"
            | "you"
            | "your"
            | "use"
            | "using"
            | "some"
            | "all"
            | "any"
            | "do"
            | "how"
            | "what"
            | "which"
            | "who"
            | "where"
            | "when"
            | "why"
            | "are"
            | "there"
    )
}

/// Field weights: a word in the tool's name says most about it.
const NAME_WEIGHT: f64 = 3.0;
const DESCRIPTION_WEIGHT: f64 = 1.0;
const PROPERTY_WEIGHT: f64 = 0.5;
const SERVER_WEIGHT: f64 = 1.0;
/// How much more a tool scores when the query names every word of the tool's name: of two
/// tools that match as well, the one whose name says no more than was asked for
/// (`create_merge_request` for "create a merge request", not `create_merge_request_thread`).
const NAME_COVERED_BONUS: f64 = 0.25;
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Lower-case word stems of `text`, split at punctuation and camelCase humps.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut prev_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            flush(&mut word, &mut out);
            prev_lower = false;
        } else if c.is_uppercase() {
            if prev_lower {
                flush(&mut word, &mut out);
            }
            word.extend(c.to_lowercase());
            prev_lower = false;
        } else {
            word.push(c);
            prev_lower = true;
        }
    }
    flush(&mut word, &mut out);
    out
}

fn flush(word: &mut String, out: &mut Vec<String>) {
    if !word.is_empty() && !is_stopword(word) {
        out.push(stem(word));
    }
    word.clear();
}

/// A light suffix stemmer: enough to meet "files" with "file" and "listing" with "list".
fn stem(word: &str) -> String {
    let n = word.chars().count();
    if word.ends_with("ss") {
        return word.to_string();
    }
    for (suffix, min, replacement) in [
        ("ies", 5, "y"),
        ("ing", 6, ""),
        ("ed", 5, ""),
        ("es", 5, "e"),
        ("s", 4, ""),
    ] {
        if n >= min && word.ends_with(suffix) {
            let mut stem = String::with_capacity(word.len());
            stem.push_str(&word[..word.len() - suffix.len()]);
            stem.push_str(replacement);
            // "creates" -> "create", not "creat".
            if suffix == "es" && !stem.ends_with('e') {
                stem.push('e');
            }
            return stem;
        }
    }
    word.to_string()
}

/// One searchable tool.
pub struct Document {
    pub server: String,
    pub tool: Tool,
    weights: FxHashMap<String, f64>,
    length: f64,
    /// The distinct terms of the tool's name.
    name_terms: Vec<String>,
}

impl Document {
    pub fn new(server: &str, tool: Tool) -> Document {
        let mut weights: FxHashMap<String, f64> = FxHashMap::default();
        let mut add = |text: &str, weight: f64| {
            for term in terms(text) {
                *weights.entry(term).or_default() += weight;
            }
        };
        add(&tool.name, NAME_WEIGHT);
        add(&tool.description, DESCRIPTION_WEIGHT);
        // People name the product ("a notion page", "slack channel"), which is the server.
        add(server, SERVER_WEIGHT);
        // Top-level property names; only an unusual root (allOf, $ref) needs the full model.
        match tool
            .input_schema
            .get("properties")
            .and_then(serde_json::Value::as_object)
        {
            Some(props) => props.keys().for_each(|name| add(name, PROPERTY_WEIGHT)),
            None => {
                for prop in ToolSchema::from_input_schema(&tool.input_schema).props {
                    add(&prop.name, PROPERTY_WEIGHT);
                }
            }
        }
        let length = weights.values().sum();
        let mut name_terms = terms(&tool.name);
        name_terms.sort();
        name_terms.dedup();
        Document {
            server: server.to_string(),
            tool,
            weights,
            length,
            name_terms,
        }
    }
}

/// The most distinct words of a query that are ranked.
const MAX_QUERY_TERMS: usize = 32;

/// Verbs people use for an action, and the verbs tool names use for it.
const VERB_SYNONYMS: [(&str, &[&str]); 12] = [
    ("open", &["create"]),
    ("make", &["create"]),
    ("add", &["create"]),
    ("new", &["create"]),
    ("show", &["get", "list"]),
    ("view", &["get"]),
    ("remove", &["delete"]),
    ("erase", &["delete"]),
    ("find", &["search"]),
    ("look", &["search", "get"]),
    ("run", &["execute"]),
    ("change", &["update", "edit"]),
];

/// The query's terms with their weights: the first word is usually the action and counts
/// double; common action verbs also match the verbs tool names use, at a lower weight.
fn weighted_query(query: &str) -> Vec<(String, f64)> {
    let mut weighted: Vec<(String, f64)> = Vec::new();
    // A task is a few words: a query of thousands (from a hostile caller) is cut, not ranked
    // word by word against every tool.
    let mut seen = std::collections::HashSet::new();
    let distinct = terms(query)
        .into_iter()
        .filter(|t| seen.insert(t.clone()))
        .take(MAX_QUERY_TERMS);
    for (i, term) in distinct.enumerate() {
        let weight = if i == 0 { 2.0 } else { 1.0 };
        if let Some((_, synonyms)) = VERB_SYNONYMS.iter().find(|(verb, _)| *verb == term) {
            for synonym in synonyms.iter() {
                weighted.push((synonym.to_string(), weight * 0.8));
            }
        }
        weighted.push((term, weight));
    }
    weighted
}

/// The documents ranked for `query`, best first, with their scores (zero scores left out).
pub fn rank<'a>(query: &str, documents: &'a [Document]) -> Vec<(&'a Document, f64)> {
    let weighted = weighted_query(query);
    if documents.is_empty() || weighted.is_empty() {
        return Vec::new();
    }
    let query_terms: Vec<&String> = weighted.iter().map(|(t, _)| t).collect();
    let n = documents.len() as f64;
    let average = documents.iter().map(|d| d.length).sum::<f64>() / n;
    let idf: Vec<f64> = query_terms
        .iter()
        .map(|term| {
            let df = documents
                .iter()
                .filter(|d| d.weights.contains_key(*term))
                .count() as f64;
            ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
        })
        .collect();
    let mut scored: Vec<(&Document, f64)> = documents
        .iter()
        .map(|doc| {
            let score = query_terms
                .iter()
                .zip(&idf)
                .zip(&weighted)
                .map(|((term, idf), (_, weight))| {
                    let tf = doc.weights.get(*term).copied().unwrap_or(0.0);
                    weight * idf * tf * (K1 + 1.0)
                        / (tf + K1 * (1.0 - B + B * doc.length / average.max(1.0)))
                })
                .sum::<f64>();
            let covered = doc
                .name_terms
                .iter()
                .filter(|t| query_terms.contains(t))
                .count();
            let coverage = if doc.name_terms.is_empty() {
                0.0
            } else {
                covered as f64 / doc.name_terms.len() as f64
            };
            (
                doc,
                score * (1.0 + NAME_COVERED_BONUS * coverage * coverage),
            )
        })
        .filter(|(_, score)| *score > 0.0)
        .collect();
    // Stable: equal scores keep server and tool order.
    scored.sort_by(|a, b| b.1.total_cmp(&a.1));
    scored
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_query_is_cut_to_its_first_distinct_words() {
        let long: String = (0..10_000).map(|i| format!("word{i} ")).collect();
        let weighted = weighted_query(&long);
        assert_eq!(weighted.len(), MAX_QUERY_TERMS);
        assert_eq!(weighted[0].0, "word0");
        // Repeats count once.
        assert_eq!(weighted_query("file file file list").len(), 2);
    }

    #[test]
    fn terms_split_and_stem() {
        assert_eq!(terms("createMergeRequest"), ["create", "merge", "request"]);
        assert_eq!(terms("read_multiple_files"), ["read", "multiple", "file"]);
        assert_eq!(
            terms("Take a screenshot of the page"),
            ["take", "screenshot", "page"]
        );
        assert_eq!(terms("listing issues"), ["list", "issue"]);
        assert_eq!(terms("creates"), ["create"]);
        assert_eq!(terms("access"), ["access"]);
    }
}
