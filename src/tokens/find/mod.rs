//! `ferry find`: rank the cached tools of every server against a task in plain words, so an
//! agent facing hundreds of tools reads a few lines instead of every listing. The proxy's
//! `find` tool ranks with the same [`Index`].
//!
//! The ranking is BM25F: a tool is a document of five fields (its name's words, the first
//! sentence of its description, the rest of the description, its parameter names, and its
//! server), each with its own weight and length normalisation. Words are stemmed (Snowball's
//! English stemmer), so "folders" meets "folder". On top of that:
//! - a query word also matches its everyday synonyms and near-words ([`NEAR_WORDS`]: folder and
//!   directory, download and fetch), at a lower weight, and a few idioms are read as the word
//!   they mean ("get rid of" is delete);
//! - the task's verb is weighed against the tool's verb (the first word its description or name
//!   acts with): "log the hours" asks to add, so `add_worklog` beats `git_log`;
//! - the inverse document frequency is taken over the catalog searched (the user's own
//!   servers), and a name part that all of one server's tools share (`jira_`, `browser_`) counts
//!   as the server's word, not as the tool's;
//! - a tool whose description says it is deprecated ranks below the tool it names instead.
//! - Chinese is also read through a dictionary ([`chinese`], CC-CEDICT): a Chinese task gets
//!   the English words of its Chinese ones, and so does a Chinese description's first sentence.

use crate::protocol::tools::Tool;
use crate::render::text::first_sentence;
use crate::schema::ToolSchema;
use rustc_hash::{FxHashMap, FxHashSet, FxHasher};
use std::cell::RefCell;
use std::hash::{Hash, Hasher};

mod chinese;
pub mod dense;
mod language;
use language::{is_stopword, ACTIONS, IDIOMS, NEAR_WORDS};

/// The fields of a tool, in the order of [`WEIGHTS`].
const NAME: usize = 0;
const SUMMARY: usize = 1;
const BODY: usize = 2;
const PARAMS: usize = 3;
const SERVER: usize = 4;
const FIELDS: usize = 5;

/// How much a word says about a tool, by where it stands: in the name most, in the first
/// sentence of the description (what the tool does) more than in the rest (how to use it).
const WEIGHTS: [f64; FIELDS] = [3.0, 1.5, 0.5, 0.6, 1.5];
/// Length normalisation per field: a long description dilutes its words; names and servers
/// are all short.
const B: [f64; FIELDS] = [0.3, 0.5, 0.75, 0.5, 0.0];
const K1: f64 = 1.2;
/// The description words after its first sentence that are indexed: usage notes go on for
/// pages, and what a tool is for is said early.
const BODY_WORDS: usize = 80;
/// A synonym or near-word counts this much of the word the person wrote.
const NEAR_WEIGHT: f64 = 0.7;
/// The tool's verb agrees with the task's: "log the hours" and "Add a worklog entry".
const VERB_AGREES: f64 = 1.3;
/// Both have a verb and they disagree: "log the hours" and "Shows the commit logs".
const VERB_DISAGREES: f64 = 0.8;
/// The task's verb, when it is one, also counts as a plain word, but less: verbs are few and
/// shared ("move" the issue to Done is a transition, not `move_issue`); the agreement above
/// weighs it.
const QUERY_VERB_LITERAL: f64 = 0.4;
/// Of two tools that match as well, the one whose name says no more than was asked for
/// (`create_merge_request` for "create a merge request", not `create_merge_request_thread`).
const NAME_COVERED_BONUS: f64 = 0.25;
/// The query is the tool's name, word for word (a model that saw it in a listing asks so).
const EXACT_NAME: f64 = 1.5;
/// A deprecated tool keeps this share of its score.
const DEPRECATED: f64 = 0.5;
/// A name part that at least this share of a server's tools carry (and at least three) is
/// the server's word: `jira` in `jira_get_issue`.
const SHARED_PART: f64 = 0.5;
/// `find` shows a hit after the first only when it scores at least this share of the first's:
/// a far weaker match is noise that every lookup would pay for.
const SHOWN_SHARE: f64 = 0.5;
/// The second hit's help is shown too when it scores at least this share of the first's: the
/// two are about as likely, and one lookup is cheaper than a second round trip.
const CLOSE_SHARE: f64 = 0.9;
/// A word one edit away from the word written counts this much of it.
const TYPO_WEIGHT: f64 = 0.8;
/// A tool that only writes keeps this share of its score for a question.
const QUESTION_WRITES: f64 = 0.75;
/// The dense model's share of a fused score (the lexical ranking has the rest) when the query's
/// words are the catalog's; [`DENSE_GAIN`] more as fewer of them are. The model distilled on
/// sentences (scripts/distill_static_model.py) first paid here: over the tune parts and the
/// older sets (334 tasks: the sums of the fresh, own and public tune parts and the issue 19,
/// corpus and first held-out sets that `cargo test --release --test find -- --nocapture`
/// prints) first/top three went from
/// 246/289 with the lexical ranking alone to 253/298 at 0.1 and 0.4; 0.2 and 0.2 gave 252/296,
/// 0.3 alone 247/296. The model made from single pieces never paid (one up, one down).
const DENSE_WEIGHT: f64 = 0.1;
/// The dense share added when the best lexical match holds none of the query's words by
/// rarity (scaled down as it holds more): a task in another language, or in words no tool
/// uses, that shares only "file" with a catalog is ranked mostly by meaning.
const DENSE_GAIN: f64 = 0.4;
/// The cosine at which the dense model alone puts a tool in the ranking, with no query word in
/// it: English nonsense comes no nearer than 0.37 to any of the 39 snapshot servers' tools.
const DENSE_ALONE: f64 = 0.5;
/// When no tool shares a word with the query, the cosine a tool needs to be offered as a weak
/// match, nearest by meaning (a task in another language over an English catalog). Over the
/// 39 snapshot servers, "read a file" in Chinese, Japanese and Russian found `read_file` at
/// 0.65 to 0.77 and "create a directory" in Chinese `create_directory` at 0.60; English
/// nonsense ("blorp snazzle", "zebra", "asdf qwer zxcv") came nearest at 0.22 to 0.37.
const NEAREST_FLOOR: f64 = 0.45;
/// ... and how far above the catalog's mean cosine (-0.06 to 0.24 for those tasks and the
/// nonsense): a query of words the model barely knows lies near everything a little.
const NEAREST_MARGIN: f64 = 0.3;
/// A cosine close enough whatever the catalog's mean: in a catalog of one kind of tool (a
/// file server's) every tool is near a task of that kind.
const NEAREST_CLOSE: f64 = 0.6;
/// What `find` writes after a weak match ([`Index::nearest`]).
pub const WEAK_MARK: &str = "(weak: nearest by meaning)";
/// The most documents a ranking returns.
pub const RANKED_MAX: usize = 200;
/// The most distinct words of a query that are ranked.
const MAX_QUERY_TERMS: usize = 32;

/// A hash of a word's stem: documents keep hashes, not strings (a catalog of ten thousand
/// tools holds a million words).
type Term = u64;

fn hash_of(stem: &str) -> Term {
    let mut hasher = FxHasher::default();
    stem.hash(&mut hasher);
    hasher.finish()
}

thread_local! {
    /// Lower-case words already stemmed (`None` for a stopword): the same few thousand words
    /// recur in every catalog.
    static STEMS: RefCell<FxHashMap<String, Option<Term>>> = RefCell::new(FxHashMap::default());
    static STEMMER: rust_stemmers::Stemmer = rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English);
}

/// The stem hash of one lower-case word, `None` for a stopword.
fn term_or_stop(word: &str) -> Option<Term> {
    STEMS.with(|stems| {
        if let Some(term) = stems.borrow().get(word) {
            return *term;
        }
        let term = (!is_stopword(word)).then(|| hash_of(&stem(word)));
        let mut stems = stems.borrow_mut();
        // A hostile catalog of endless distinct words must not grow the memo for ever.
        if stems.len() > 200_000 {
            stems.clear();
        }
        stems.insert(word.to_string(), term);
        term
    })
}

/// The stem hash of one lower-case word that is not a stopword.
fn term_of(word: &str) -> Term {
    term_or_stop(word).unwrap_or_else(|| hash_of(&stem(word)))
}

/// Calls `each` with the stem hash of every word of `text` but stopwords, until it returns
/// false.
fn terms_while(text: &str, mut each: impl FnMut(Term) -> bool) {
    raw_words(text, |w| match term_or_stop(w) {
        Some(term) => each(term),
        None => true,
    });
}

/// The Snowball (Porter 2) English stem of a lower-case word.
pub fn stem(word: &str) -> String {
    STEMMER.with(|s| s.stem(word).into_owned())
}

/// Calls `each` with every lower-case word of `text`, split at punctuation, `_`, `-` and
/// camelCase humps (`createMergeRequest` is three words), stopwords left out.
fn for_each_word(text: &str, mut each: impl FnMut(&str)) {
    words_while(text, |w| {
        each(w);
        true
    });
}

/// As [`for_each_word`], until `each` returns false.
fn words_while(text: &str, mut each: impl FnMut(&str) -> bool) {
    raw_words(text, |w| is_stopword(w) || each(w));
}

/// Calls `each` with every lower-case word of `text`, stopwords included, until it returns
/// false.
fn raw_words(text: &str, mut each: impl FnMut(&str) -> bool) {
    let mut word = String::new();
    let mut prev_lower = false;
    let mut go_on = true;
    let mut flush = |word: &mut String, go_on: &mut bool| {
        if !word.is_empty() {
            *go_on = each(word);
        }
        word.clear();
    };
    // The previous character when it was a CJK one: such text has no spaces, so each
    // character is a word, and so is each pair of neighbours ("截图" beside "截" and "图").
    let mut previous_cjk: Option<char> = None;
    for c in text.chars() {
        if is_cjk(c) {
            flush(&mut word, &mut go_on);
            if go_on {
                word.push(c);
                flush(&mut word, &mut go_on);
            }
            if let Some(p) = previous_cjk.filter(|_| go_on) {
                word.push(p);
                word.push(c);
                flush(&mut word, &mut go_on);
            }
            previous_cjk = Some(c);
            prev_lower = false;
            if !go_on {
                return;
            }
            continue;
        }
        previous_cjk = None;
        if c.is_ascii() {
            // Most text is ASCII: no Unicode tables.
            if !c.is_ascii_alphanumeric() {
                flush(&mut word, &mut go_on);
                prev_lower = false;
            } else if c.is_ascii_uppercase() {
                if prev_lower {
                    flush(&mut word, &mut go_on);
                }
                word.push(c.to_ascii_lowercase());
                prev_lower = false;
            } else {
                word.push(c);
                prev_lower = c.is_ascii_lowercase();
            }
        } else if !c.is_alphanumeric() {
            flush(&mut word, &mut go_on);
            prev_lower = false;
        } else if c.is_uppercase() {
            if prev_lower {
                flush(&mut word, &mut go_on);
            }
            word.extend(c.to_lowercase());
            prev_lower = false;
        } else {
            word.push(c);
            prev_lower = c.is_lowercase();
        }
        if !go_on {
            return;
        }
    }
    flush(&mut word, &mut go_on);
}

/// Whether `c` is written without spaces between words: CJK ideographs, kana, Hangul.
fn is_cjk(c: char) -> bool {
    chinese::is_han(c) || chinese::is_kana(c) || matches!(c as u32, 0xAC00..=0xD7AF)
}

/// The stems of the words of `text` (stopwords left out), in order.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_word(text, |w| out.push(stem(w)));
    out
}

fn term_hashes(text: &str) -> Vec<Term> {
    let mut out = Vec::new();
    terms_while(text, |t| {
        out.push(t);
        true
    });
    out
}

/// The actions a word's stem names, as a bit set over [`ACTIONS`].
fn actions_of(term: Term) -> u32 {
    action_table().get(&term).copied().unwrap_or(0)
}

fn action_table() -> &'static FxHashMap<Term, u32> {
    static TABLE: std::sync::OnceLock<FxHashMap<Term, u32>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: FxHashMap<Term, u32> = FxHashMap::default();
        for (bit, (_, verbs)) in ACTIONS.iter().enumerate() {
            for verb in verbs.iter() {
                *table.entry(hash_of(&stem(verb))).or_default() |= 1 << bit;
            }
        }
        table
    })
}

/// The near-words of a stem, as stem hashes.
fn near_words(term: Term) -> &'static [Term] {
    static TABLE: std::sync::OnceLock<FxHashMap<Term, Vec<Term>>> = std::sync::OnceLock::new();
    TABLE
        .get_or_init(|| {
            let mut table: FxHashMap<Term, Vec<Term>> = FxHashMap::default();
            for (word, near) in NEAR_WORDS {
                let key = hash_of(&stem(word));
                let entry = table.entry(key).or_default();
                for n in near.iter() {
                    let n = hash_of(&stem(n));
                    if n != key && !entry.contains(&n) {
                        entry.push(n);
                    }
                }
            }
            table
        })
        .get(&term)
        .map_or(&[], Vec::as_slice)
}

/// The first words of a description that only introduce it: "This tool will", "Use this
/// tool to", a "Server |" label, a bracketed note, a warning.
fn description_start(description: &str) -> &str {
    let mut text = description.trim_start();
    loop {
        let before = text;
        text = text.trim_start_matches(|c: char| !c.is_alphanumeric() && c != '[');
        if let Some(rest) = text.strip_prefix('[') {
            text = rest.split_once(']').map_or(rest, |(_, after)| after);
        }
        // "Notion | Retrieve a page": a product label before a bar.
        let head = &text[..text.floor_char_boundary_compat(60)];
        if let Some(at) = head.find(" | ") {
            if text[..at].split_whitespace().count() <= 3 {
                text = &text[at + 3..];
            }
        }
        for intro in [
            "this tool will ",
            "this tool ",
            "use this tool to ",
            "use this to ",
            "tool to ",
            "a tool to ",
            "allows you to ",
            "allows claude to ",
            "lets you ",
            "deprecated: ",
            "deprecated. ",
            "important: ",
            "warning: ",
            "note: ",
        ] {
            let head = text.as_bytes().get(..intro.len());
            if head.is_some_and(|h| h.eq_ignore_ascii_case(intro.as_bytes())) {
                text = &text[intro.len()..];
                break;
            }
        }
        if text.len() == before.len() {
            return text;
        }
    }
}

/// `str::floor_char_boundary`, which is not stable yet.
trait FloorCharBoundary {
    fn floor_char_boundary_compat(&self, at: usize) -> usize;
}

impl FloorCharBoundary for str {
    fn floor_char_boundary_compat(&self, at: usize) -> usize {
        let mut at = at.min(self.len());
        while !self.is_char_boundary(at) {
            at -= 1;
        }
        at
    }
}

/// Whether a description says the tool is deprecated, early (not a remark deep in its notes
/// about a deprecated field).
fn says_deprecated(description: &str) -> bool {
    let head: String = description.chars().take(160).collect();
    let mut found = false;
    for_each_word(&head, |w| found |= w == "deprecated");
    found
}

/// One searchable tool: `tool` is what the caller keeps with it (the parsed tool, or a handle
/// to find it again).
pub struct Document<T = Tool> {
    pub server: String,
    pub tool: T,
    name: String,
    /// The stems of the name's parts, in order.
    name_parts: Vec<Term>,
    /// Every other field's stems with their counts, sorted by stem; the name field is added
    /// by the [`Index`], which knows which parts the server's tools all share.
    fields: Vec<(Term, [u8; FIELDS])>,
    lengths: [f32; FIELDS],
    /// The actions of the tool's verb (bits of [`ACTIONS`]), 0 if none is known.
    verb: u32,
    deprecated: bool,
    /// The description's first words, kept for a deprecated tool to name its replacement.
    note: String,
    /// Where the tool's name and description stand in the dense model's space
    /// ([`dense::quantized`]); empty when nothing of them is known to it.
    vector: Box<[i8]>,
}

impl Document<Tool> {
    /// A parsed tool.
    pub fn new(server: &str, tool: Tool) -> Document<Tool> {
        let mut params: Vec<String> = Vec::new();
        // Top-level property names; only an unusual root (allOf, $ref) needs the full model.
        match crate::protocol::json_schema::SchemaView::new(&tool.input_schema)
            .and_then(|s| s.properties())
        {
            Some(props) => params.extend(props.keys().cloned()),
            None => params.extend(
                ToolSchema::from_input_schema(&tool.input_schema)
                    .props
                    .into_iter()
                    .map(|p| p.name),
            ),
        }
        let name = tool.name.clone();
        let description = tool.description.clone();
        Document::from_parts(
            server,
            &name,
            &description,
            params.iter().map(String::as_str),
            tool,
        )
    }
}

impl<T> Document<T> {
    /// A tool given by its parts: its server, name, description and parameter names.
    pub fn from_parts<'p>(
        server: &str,
        name: &str,
        description: &str,
        params: impl Iterator<Item = &'p str>,
        tool: T,
    ) -> Document<T> {
        let mut counts: FxHashMap<Term, [u8; FIELDS]> = FxHashMap::default();
        let mut lengths = [0f32; FIELDS];
        let mut add = |term: Term, field: usize| {
            let slot = &mut counts.entry(term).or_default()[field];
            *slot = slot.saturating_add(1);
            lengths[field] += 1.0;
        };
        let start = description_start(description);
        // The first sentence says what the tool does; the rest, how to use it.
        let summary = first_sentence(start);
        let mut summary_words = 0;
        terms_while(&summary, |_| {
            summary_words += 1;
            true
        });
        let mut seen = 0;
        let mut first_word: Option<Term> = None;
        terms_while(start, |term| {
            first_word.get_or_insert(term);
            add(term, if seen < summary_words { SUMMARY } else { BODY });
            seen += 1;
            seen < summary_words + BODY_WORDS
        });
        // A Chinese description's summary in English words too, so an English task meets it.
        let summary_glosses = chinese::glosses(&summary);
        terms_while(&summary_glosses, |term| {
            add(term, SUMMARY);
            true
        });
        for param in params {
            for term in term_hashes(param) {
                add(term, PARAMS);
            }
        }
        // People name the product ("a notion page", "slack channel"), which is the server.
        for term in term_hashes(server) {
            add(term, SERVER);
        }
        let mut fields: Vec<(Term, [u8; FIELDS])> = counts.into_iter().collect();
        fields.sort_unstable_by_key(|(t, _)| *t);
        let name_parts = term_hashes(name);
        // The tool's verb: the first word of its description if that is a verb, else the
        // first verb of its name.
        let verb = match first_word.map(actions_of) {
            Some(actions) if actions != 0 => actions,
            _ => name_parts
                .iter()
                .map(|t| actions_of(*t))
                .find(|a| *a != 0)
                .unwrap_or(0),
        };
        let deprecated = says_deprecated(description);
        // Made once, when a listing is read (and kept in the search file beside the cache):
        // a query is embedded only when no tool shares a word with it.
        let vector = dense::embed(&format!("{name}. {summary_glosses} {start}"))
            .map(|v| dense::quantized(&v))
            .unwrap_or_default();
        Document {
            server: server.to_string(),
            tool,
            name: name.to_string(),
            name_parts,
            fields,
            lengths,
            verb,
            deprecated,
            note: if deprecated {
                description.chars().take(300).collect()
            } else {
                String::new()
            },
            vector,
        }
    }

    /// A copy of the analysis keeping something else with it.
    fn analysis_with<U>(&self, tool: U) -> Document<U> {
        Document {
            server: self.server.clone(),
            tool,
            name: self.name.clone(),
            name_parts: self.name_parts.clone(),
            fields: self.fields.clone(),
            lengths: self.lengths,
            verb: self.verb,
            deprecated: self.deprecated,
            note: self.note.clone(),
            vector: self.vector.clone(),
        }
    }

    /// The same document keeping something else with it.
    pub fn with_tool<U>(self, tool: U) -> Document<U> {
        Document {
            server: self.server,
            tool,
            name: self.name,
            name_parts: self.name_parts,
            fields: self.fields,
            lengths: self.lengths,
            verb: self.verb,
            deprecated: self.deprecated,
            note: self.note,
            vector: self.vector,
        }
    }

    fn field_counts(&self, term: Term) -> [u8; FIELDS] {
        match self.fields.binary_search_by_key(&term, |(t, _)| *t) {
            Ok(i) => self.fields[i].1,
            Err(_) => [0; FIELDS],
        }
    }
}

/// What a saved search file starts with; its key follows on the same line.
const SAVED_MAGIC: &[u8] = b"ferry-find 6 ";
/// What a saved file of tool vectors starts with; its key follows on the same line.
const VECTORS_MAGIC: &[u8] = b"ferry-vectors 2 ";

/// A server's documents as bytes, to keep beside its cached tools: a later search reads them
/// instead of parsing and analysing the tools again. `key` says what they were made from
/// (ferry's version and the cache file's size and time); [`load_documents`] checks it. The
/// tool vectors are not in it ([`save_vectors`]): only a search that no tool shares a word
/// with reads them, and they were 40% of the bytes every search read.
pub fn save_documents<T>(documents: &[Document<T>], key: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(documents.len() * 512);
    out.extend_from_slice(SAVED_MAGIC);
    out.extend_from_slice(key.as_bytes());
    out.push(b'\n');
    let text = |out: &mut Vec<u8>, text: &str| {
        out.extend_from_slice(&(text.len() as u32).to_le_bytes());
        out.extend_from_slice(text.as_bytes());
    };
    out.extend_from_slice(&(documents.len() as u32).to_le_bytes());
    for doc in documents {
        text(&mut out, &doc.name);
        out.extend_from_slice(&(doc.name_parts.len() as u32).to_le_bytes());
        for part in &doc.name_parts {
            out.extend_from_slice(&part.to_le_bytes());
        }
        // Without the server's words: the server a file is read for adds its own
        // (load_documents), so a search need not strip them from every tool again.
        let fields: Vec<(Term, [u8; FIELDS])> = doc
            .fields
            .iter()
            .map(|(term, counts)| {
                let mut counts = *counts;
                counts[SERVER] = 0;
                (*term, counts)
            })
            .filter(|(_, counts)| counts.iter().any(|n| *n > 0))
            .collect();
        out.extend_from_slice(&(fields.len() as u32).to_le_bytes());
        for (term, counts) in &fields {
            out.extend_from_slice(&term.to_le_bytes());
            out.extend_from_slice(counts);
        }
        let mut lengths = doc.lengths;
        lengths[SERVER] = 0.0;
        for length in lengths {
            out.extend_from_slice(&length.to_le_bytes());
        }
        out.extend_from_slice(&doc.verb.to_le_bytes());
        out.push(u8::from(doc.deprecated));
        text(&mut out, &doc.note);
    }
    out
}

/// A server's tool vectors as bytes, each with its tool's name, to keep beside its saved
/// documents; [`load_vectors`] reads them back into documents [`load_documents`] made.
pub fn save_vectors<T>(documents: &[Document<T>], key: &str) -> Vec<u8> {
    let mut out = Vec::with_capacity(documents.len() * 300);
    out.extend_from_slice(VECTORS_MAGIC);
    out.extend_from_slice(key.as_bytes());
    out.push(b'\n');
    out.extend_from_slice(&(documents.len() as u32).to_le_bytes());
    for doc in documents {
        out.extend_from_slice(&(doc.name.len() as u32).to_le_bytes());
        out.extend_from_slice(doc.name.as_bytes());
        out.extend_from_slice(&(doc.vector.len() as u32).to_le_bytes());
        out.extend(doc.vector.iter().map(|v| *v as u8));
    }
    out
}

/// Gives `documents` (one server's, in the order [`load_documents`] made them) the vectors
/// [`save_vectors`] saved with `key`; false, and nothing changed, when the key differs or the
/// bytes are not such a file. A document whose tool the saved file does not hold keeps none.
pub fn load_vectors<T>(bytes: &[u8], key: &str, documents: &mut [Document<T>]) -> bool {
    let Some(saved) = read_vectors(bytes, key) else {
        return false;
    };
    // The documents are the saved tools in order, some perhaps left out.
    let mut rest = saved.iter();
    for doc in documents {
        if let Some((_, vector)) = rest.by_ref().find(|(name, _)| *name == doc.name) {
            doc.vector = vector.iter().map(|v| *v as i8).collect();
        }
    }
    true
}

fn read_vectors<'a>(bytes: &'a [u8], key: &str) -> Option<Vec<(&'a str, &'a [u8])>> {
    let rest = bytes.strip_prefix(VECTORS_MAGIC)?;
    let line_end = rest.iter().position(|b| *b == b'\n')?;
    if &rest[..line_end] != key.as_bytes() {
        return None;
    }
    let mut reader = Reader(&rest[line_end + 1..]);
    let count = reader.u32()? as usize;
    let mut saved = Vec::with_capacity(count.min(1 << 16));
    for _ in 0..count {
        let name = reader.text()?;
        let dims = reader.u32()? as usize;
        saved.push((name, reader.take(dims)?));
    }
    reader.0.is_empty().then_some(saved)
}

/// The documents [`save_documents`] made with `key`, as tools of `server`, each carrying what
/// `tool` makes of its name (`None` leaves the tool out); `None` when the key differs or the
/// bytes are not such a file. The fields of each server's documents count its name: a saved
/// file holds no server word of its own. They have no vectors until [`load_vectors`].
pub fn load_documents<T>(
    bytes: &[u8],
    key: &str,
    server: &str,
    mut tool: impl FnMut(&str) -> Option<T>,
) -> Option<Vec<Document<T>>> {
    let rest = bytes.strip_prefix(SAVED_MAGIC)?;
    let line_end = rest.iter().position(|b| *b == b'\n')?;
    if &rest[..line_end] != key.as_bytes() {
        return None;
    }
    let mut reader = Reader(&rest[line_end + 1..]);
    let count = reader.u32()? as usize;
    let mut documents = Vec::with_capacity(count.min(1 << 16));
    let server_terms = term_hashes(server);
    for _ in 0..count {
        let name = reader.text()?;
        let parts = reader.u32()? as usize;
        let mut name_parts = Vec::with_capacity(parts.min(64));
        for _ in 0..parts {
            name_parts.push(reader.u64()?);
        }
        let fields_count = reader.u32()? as usize;
        let mut fields: Vec<(Term, [u8; FIELDS])> =
            Vec::with_capacity(fields_count.min(4096) + server_terms.len());
        for _ in 0..fields_count {
            let term = reader.u64()?;
            let counts: [u8; FIELDS] = reader.take(FIELDS)?.try_into().ok()?;
            fields.push((term, counts));
        }
        let mut lengths = [0f32; FIELDS];
        for length in lengths.iter_mut() {
            *length = f32::from_le_bytes(reader.take(4)?.try_into().ok()?);
        }
        let verb = reader.u32()?;
        let deprecated = reader.take(1)?[0] != 0;
        let note = reader.text()?;
        let Some(kept) = tool(name) else {
            continue;
        };
        // The server's words are this server's, whatever name the file was saved under (a
        // saved file holds none).
        lengths[SERVER] = 0.0;
        for term in &server_terms {
            match fields.binary_search_by_key(term, |(t, _)| *t) {
                Ok(i) => fields[i].1[SERVER] = fields[i].1[SERVER].saturating_add(1),
                Err(i) => {
                    let mut counts = [0; FIELDS];
                    counts[SERVER] = 1;
                    fields.insert(i, (*term, counts));
                }
            }
            lengths[SERVER] += 1.0;
        }
        documents.push(Document {
            server: server.to_string(),
            tool: kept,
            name: name.to_string(),
            name_parts,
            fields,
            lengths,
            verb,
            deprecated,
            note: note.to_string(),
            vector: Box::default(),
        });
    }
    reader.0.is_empty().then_some(documents)
}

/// Reads a saved search file, every read checked against its end.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn text(&mut self) -> Option<&'a str> {
        let n = self.u32()? as usize;
        std::str::from_utf8(self.take(n)?).ok()
    }
}

/// A document as ranked: its name parts split into the tool's own and the server's shared.
struct Prepared {
    /// Name parts of the tool's own, with counts.
    own: Vec<(Term, u8)>,
    /// Name parts all of its server's tools share.
    shared: Vec<Term>,
    lengths: [f32; FIELDS],
    /// The tool this deprecated tool names as its replacement, if any.
    replacement: Option<usize>,
}

/// For each stem, the documents that hold it (their places in the index) with their counts.
type Postings = FxHashMap<Term, Vec<(u32, [u8; FIELDS])>>;

/// Tools ready to be ranked: documents with what is known of the whole catalog.
pub struct Index<T = Tool> {
    documents: Vec<Document<T>>,
    prepared: Vec<Prepared>,
    average: [f64; FIELDS],
    /// For each stem, the documents that hold it with their counts of it, when built
    /// ([`Index::with_postings`]).
    postings: Option<Postings>,
}

impl<T> Default for Index<T> {
    fn default() -> Index<T> {
        Index::new(Vec::new())
    }
}

impl<T> Index<T> {
    pub fn new(documents: Vec<Document<T>>) -> Index<T> {
        // Name parts that most of a server's tools share.
        let mut per_server: FxHashMap<&str, (usize, FxHashMap<Term, usize>)> = FxHashMap::default();
        for doc in &documents {
            let (count, parts) = per_server.entry(&doc.server).or_default();
            *count += 1;
            let mut seen = FxHashSet::default();
            for part in &doc.name_parts {
                if seen.insert(*part) {
                    *parts.entry(*part).or_default() += 1;
                }
            }
        }
        let shared_of = |server: &str, part: Term| {
            per_server.get(server).is_some_and(|(count, parts)| {
                let n = parts.get(&part).copied().unwrap_or(0);
                *count >= 3 && n >= 3 && n as f64 >= SHARED_PART * *count as f64
            })
        };
        let names: FxHashMap<(&str, &str), usize> = documents
            .iter()
            .enumerate()
            .map(|(i, d)| ((d.server.as_str(), d.name.as_str()), i))
            .collect();
        let mut prepared = Vec::with_capacity(documents.len());
        let mut sums = [0f64; FIELDS];
        for doc in &documents {
            let mut own: Vec<(Term, u8)> = Vec::new();
            let mut shared = Vec::new();
            let mut lengths = doc.lengths;
            for part in &doc.name_parts {
                if shared_of(&doc.server, *part) {
                    shared.push(*part);
                    lengths[SERVER] += 1.0;
                } else {
                    match own.iter_mut().find(|(t, _)| t == part) {
                        Some((_, n)) => *n = n.saturating_add(1),
                        None => own.push((*part, 1)),
                    }
                    lengths[NAME] += 1.0;
                }
            }
            for (sum, length) in sums.iter_mut().zip(lengths) {
                *sum += length as f64;
            }
            let replacement = if doc.deprecated {
                replacement_in(&doc.note, &doc.name, &doc.server, &names)
            } else {
                None
            };
            prepared.push(Prepared {
                own,
                shared,
                lengths,
                replacement,
            });
        }
        let n = documents.len().max(1) as f64;
        let average = sums.map(|s| (s / n).max(1.0));
        Index {
            documents,
            prepared,
            average,
            postings: None,
        }
    }

    /// The index with each stem's documents listed, for a catalog searched many times (the
    /// proxy): a search then reads only the documents that hold its words. A one-off search
    /// (the CLI) is faster without: it reads every document once anyway.
    pub fn with_postings(mut self) -> Index<T> {
        let mut postings: Postings = FxHashMap::default();
        for (i, doc) in self.documents.iter().enumerate() {
            let prepared = &self.prepared[i];
            let mut terms: Vec<Term> = doc
                .fields
                .iter()
                .map(|(t, _)| *t)
                .chain(prepared.own.iter().map(|(t, _)| *t))
                .chain(prepared.shared.iter().copied())
                .collect();
            terms.sort_unstable();
            terms.dedup();
            for term in terms {
                postings
                    .entry(term)
                    .or_default()
                    .push((i as u32, self.counts(i, term)));
            }
        }
        self.postings = Some(postings);
        self
    }

    pub fn documents(&self) -> &[Document<T>] {
        &self.documents
    }

    /// Gives the documents at `at` (one server's, as [`load_documents`] made them) the vectors
    /// saved in `bytes` ([`load_vectors`]), for the fused ranking and [`Index::nearest`].
    pub fn load_vectors(&mut self, at: std::ops::Range<usize>, bytes: &[u8], key: &str) -> bool {
        match self.documents.get_mut(at) {
            Some(documents) => load_vectors(bytes, key, documents),
            None => false,
        }
    }

    pub fn into_documents(self) -> Vec<Document<T>> {
        self.documents
    }

    /// A document's per-field counts of `term`, its own name parts included.
    fn counts(&self, i: usize, term: Term) -> [u8; FIELDS] {
        let mut counts = self.documents[i].field_counts(term);
        let prepared = &self.prepared[i];
        if let Some((_, n)) = prepared.own.iter().find(|(t, _)| *t == term) {
            counts[NAME] = *n;
        }
        if prepared.shared.contains(&term) {
            counts[SERVER] = counts[SERVER].saturating_add(1);
        }
        counts
    }

    /// BM25F's pseudo term frequency: the counts of every field, weighted and normalised.
    fn weighted_frequency(&self, i: usize, counts: [u8; FIELDS]) -> f64 {
        let lengths = &self.prepared[i].lengths;
        (0..FIELDS)
            .filter(|f| counts[*f] > 0)
            .map(|f| {
                let b = B[f];
                let norm = 1.0 - b + b * lengths[f] as f64 / self.average[f];
                WEIGHTS[f] * counts[f] as f64 / norm
            })
            .sum()
    }

    /// The documents ranked for `query`, best first, with their scores: the best
    /// [`RANKED_MAX`] that match at all.
    pub fn rank(&self, query: &str) -> Vec<(&Document<T>, f64)> {
        let text = query;
        let mut query = Query::parse(query);
        if self.documents.is_empty() {
            return Vec::new();
        }
        self.correct_typos(&mut query);
        // Every stem the query may match, the words' own and their near-words, with its
        // document frequency.
        let mut stems: Vec<Term> = Vec::new();
        for word in &query.words {
            for (term, _) in &word.alternatives {
                if !stems.contains(term) {
                    stems.push(*term);
                }
            }
        }
        // Each word's alternatives as positions in `stems`.
        let slots: Vec<Vec<(usize, f64)>> = query
            .words
            .iter()
            .map(|w| {
                w.alternatives
                    .iter()
                    .map(|(t, weight)| (stems.iter().position(|s| s == t).unwrap_or(0), *weight))
                    .collect()
            })
            .collect();
        // The counts of every stem in every document that holds one, in one flat table.
        let width = stems.len();
        let mut matched: Vec<usize> = Vec::new();
        let mut table: Vec<[u8; FIELDS]> = Vec::new();
        let mut df = vec![0usize; width];
        match &self.postings {
            // Straight from the lists: only the documents that hold a word are read.
            Some(postings) => {
                let mut row_of = vec![u32::MAX; self.documents.len()];
                for (column, term) in stems.iter().enumerate() {
                    let Some(list) = postings.get(term) else {
                        continue;
                    };
                    df[column] = list.len();
                    for (doc, counts) in list {
                        let row = &mut row_of[*doc as usize];
                        if *row == u32::MAX {
                            *row = matched.len() as u32;
                            matched.push(*doc as usize);
                            table.extend(std::iter::repeat_n([0u8; FIELDS], width));
                        }
                        table[*row as usize * width + column] = *counts;
                    }
                }
            }
            None => {
                for i in 0..self.documents.len() {
                    let start = table.len();
                    let mut any = false;
                    for (d, term) in df.iter_mut().zip(&stems) {
                        let c = self.counts(i, *term);
                        if c.iter().any(|n| *n > 0) {
                            *d += 1;
                            any = true;
                        }
                        table.push(c);
                    }
                    if any {
                        matched.push(i);
                    } else {
                        table.truncate(start);
                    }
                }
            }
        }
        let n = self.documents.len() as f64;
        let idf: Vec<f64> = df
            .iter()
            .map(|df| ((n - *df as f64 + 0.5) / (*df as f64 + 0.5) + 1.0).ln())
            .collect();
        let writes = action_bits(&[
            "create", "update", "delete", "send", "run", "stop", "restore",
        ]);
        let reads = action_bits(&["read", "list", "search"]);
        // The most of the query (its words weighed by rarity) that any one document matches:
        // when little, the words are not the catalog's, and the dense side is trusted more.
        // Words read through the dictionary do not count: they are its guesses, not the task's.
        let query_idf: f64 = (query.words.iter().zip(&slots))
            .filter(|(w, _)| !w.glossed)
            .map(|(_, s)| idf[s[0].0])
            .sum();
        let mut best_share = 0.0f64;
        let mut scored: Vec<(usize, f64)> = matched
            .iter()
            .enumerate()
            .map(|(row, i)| {
                let counts = &table[row * width..(row + 1) * width];
                let mut score = 0.0;
                let mut covered = 0;
                let mut share = 0.0;
                for (word, slots) in query.words.iter().zip(&slots) {
                    let mut best = 0.0f64;
                    // A near-word is no more telling than the word written: "project" common
                    // in a catalog does not become rare by way of "repository".
                    let written = idf[slots[0].0];
                    for (p, weight) in slots {
                        let tf = self.weighted_frequency(*i, counts[*p]);
                        if tf > 0.0 {
                            let idf = idf[*p].min(written);
                            best = best.max(weight * idf * tf * (K1 + 1.0) / (tf + K1));
                        }
                    }
                    score += word.weight * best;
                    if best > 0.0 && !word.glossed {
                        share += idf[slots[0].0];
                    }
                }
                best_share = best_share.max(share / query_idf.max(1e-9));
                let prepared = &self.prepared[*i];
                // The query names the tool: every word of its name and no other.
                let exact = !prepared.own.is_empty()
                    && prepared.own.iter().all(|(t, _)| query.written.contains(t))
                    && query.written.iter().all(|t| {
                        prepared.own.iter().any(|(o, _)| o == t) || prepared.shared.contains(t)
                    });
                if exact {
                    score *= EXACT_NAME;
                }
                for (part, _) in &prepared.own {
                    if stems.contains(part) {
                        covered += 1;
                    }
                }
                let coverage = if prepared.own.is_empty() {
                    0.0
                } else {
                    covered as f64 / prepared.own.len() as f64
                };
                score *= 1.0 + NAME_COVERED_BONUS * coverage * coverage;
                let verb = self.documents[*i].verb;
                if query.verb != 0 && verb != 0 {
                    score *= if query.verb & verb != 0 {
                        VERB_AGREES
                    } else {
                        VERB_DISAGREES
                    };
                }
                // A question is answered by reading: "did the deploy work?" is not a deploy.
                if query.question && verb & writes != 0 && verb & reads == 0 {
                    score *= QUESTION_WRITES;
                }
                (*i, score)
            })
            .filter(|(_, score)| *score > 0.0)
            .collect();
        // A deprecated tool steps below the tool it names instead, which takes its place.
        let lifts: Vec<(usize, f64)> = scored
            .iter()
            .filter(|(i, _)| self.documents[*i].deprecated)
            .filter_map(|(i, score)| Some((self.prepared[*i].replacement?, score * 1.001)))
            .collect();
        for (i, score) in scored.iter_mut() {
            if self.documents[*i].deprecated {
                *score *= DEPRECATED;
            }
        }
        for (replacement, lift) in lifts {
            match scored.iter_mut().find(|(j, _)| *j == replacement) {
                Some((_, score)) => *score = score.max(lift),
                None => scored.push((replacement, lift)),
            }
        }
        // Meaning weighs in once a word is shared; with none, the ranking is empty and
        // [`Index::nearest`] offers weak matches, marked as such.
        if !scored.is_empty() {
            // The task as written: the model places a Chinese task better than its glosses.
            if let Some(vector) = dense::embed(text) {
                self.fuse(&vector, &mut scored, best_share);
            }
        }
        // Only the best are ever read: those are sorted, not every tool that shares a word.
        let order = |a: &(usize, f64), b: &(usize, f64)| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0));
        if scored.len() > RANKED_MAX {
            scored.select_nth_unstable_by(RANKED_MAX, order);
            scored.truncate(RANKED_MAX);
        }
        // Equal scores keep server and tool order.
        scored.sort_by(order);
        scored
            .into_iter()
            .map(|(i, score)| (&self.documents[i], score))
            .collect()
    }
}

impl<T> Index<T> {
    /// A query word that no tool holds, spelt one edit away from a word some tools hold, also
    /// matches that word (the one most tools hold), a little lower: "screnshot" is "screenshot".
    fn correct_typos(&self, query: &mut Query) {
        let mut candidates: FxHashMap<Term, Vec<usize>> = FxHashMap::default();
        let mut written: FxHashMap<Term, bool> = FxHashMap::default();
        for word in &query.words {
            written.insert(word.alternatives[0].0, false);
        }
        // Most queries hold no typo: a first pass, which ends as soon as every word is seen,
        // says which words no tool holds, and only those are respelt.
        let mut unseen = written.len();
        let mut see = |term: Term, written: &mut FxHashMap<Term, bool>| {
            if let Some(seen) = written.get_mut(&term).filter(|s| !**s) {
                *seen = true;
                unseen -= 1;
            }
            unseen > 0
        };
        match &self.postings {
            Some(postings) => {
                let terms: Vec<Term> = written.keys().copied().collect();
                for term in terms {
                    if postings.contains_key(&term) {
                        see(term, &mut written);
                    }
                }
            }
            None => {
                'docs: for (doc, prepared) in self.documents.iter().zip(&self.prepared) {
                    let terms = doc.fields.iter().map(|(t, _)| *t);
                    for term in terms.chain(prepared.own.iter().map(|(t, _)| *t)) {
                        if !see(term, &mut written) {
                            break 'docs;
                        }
                    }
                }
            }
        }
        for (w, word) in query.words.iter().enumerate() {
            let term = word.alternatives[0].0;
            if written.get(&term) != Some(&false)
                // A dictionary's word is spelt right: no respelling.
                || word.glossed
                || word.text.len() < 4
                || !word.text.bytes().all(|b| b.is_ascii_lowercase())
            {
                continue;
            }
            for spelling in one_edit(&word.text) {
                if let Some(t) = term_or_stop(&spelling) {
                    if t != term {
                        candidates.entry(t).or_default().push(w);
                    }
                }
            }
        }
        if candidates.is_empty() {
            return;
        }
        // How many tools hold each candidate, and whether any holds each written word.
        let mut df: FxHashMap<Term, usize> = FxHashMap::default();
        let looked_up: Vec<Term> = written.keys().chain(candidates.keys()).copied().collect();
        let mut note = |term: Term| {
            if let Some(seen) = written.get_mut(&term) {
                *seen = true;
            }
            if candidates.contains_key(&term) {
                *df.entry(term).or_default() += 1;
            }
        };
        match &self.postings {
            Some(postings) => {
                for term in looked_up {
                    if let Some(list) = postings.get(&term) {
                        for _ in 0..list.len() {
                            note(term);
                        }
                    }
                }
            }
            None => {
                for (doc, prepared) in self.documents.iter().zip(&self.prepared) {
                    doc.fields.iter().for_each(|(t, _)| note(*t));
                    prepared.own.iter().for_each(|(t, _)| note(*t));
                }
            }
        }
        for (w, word) in query.words.iter_mut().enumerate() {
            if written.get(&word.alternatives[0].0) != Some(&false) {
                continue;
            }
            let best = candidates
                .iter()
                .filter(|(_, words)| words.contains(&w))
                .filter_map(|(t, _)| Some((*t, *df.get(t)?)))
                .max_by_key(|(t, n)| (*n, *t));
            if let Some((term, _)) = best {
                word.alternatives.push((term, TYPO_WEIGHT));
            }
        }
    }

    /// What `find` shows for `query`, best first: the ranking ([`Index::rank`]), or when no
    /// tool shares a word with the query, the tools nearest to it by meaning
    /// ([`Index::nearest`]), with `true` for such weak matches.
    pub fn search(&self, query: &str) -> (Vec<(&Document<T>, f64)>, bool) {
        let ranked = self.rank(query);
        if ranked.is_empty() {
            (self.nearest(query), true)
        } else {
            (ranked, false)
        }
    }

    /// When no tool shares a word with `query` ([`Index::rank`] finds nothing): the tools
    /// nearest to it by meaning, best first with their cosines, those close enough to be worth
    /// a look (above [`NEAREST_FLOOR`], and [`NEAREST_MARGIN`] above the catalog's mean or
    /// above [`NEAREST_CLOSE`]). Weak matches, to be
    /// shown as such: a task in another language over an English catalog finds its tools here,
    /// English nonsense finds nothing. Only this reads the model at query time.
    pub fn nearest(&self, query: &str) -> Vec<(&Document<T>, f64)> {
        let Some(vector) = dense::embed(query) else {
            return Vec::new();
        };
        let similar = self.similarities(&vector);
        let known = self
            .documents
            .iter()
            .filter(|d| !d.vector.is_empty())
            .count();
        if known == 0 {
            return Vec::new();
        }
        let mean = similar.iter().sum::<f64>() / known as f64;
        let floor = NEAREST_FLOOR.max((mean + NEAREST_MARGIN).min(NEAREST_CLOSE));
        let mut near: Vec<(usize, f64)> = similar
            .into_iter()
            .enumerate()
            .filter(|(_, s)| *s >= floor)
            // A deprecated tool steps down, as in the ranking.
            .map(|(i, s)| {
                let deprecated = self.documents[i].deprecated;
                (i, if deprecated { s * DEPRECATED } else { s })
            })
            .collect();
        near.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        near.truncate(RANKED_MAX);
        near.into_iter()
            .map(|(i, s)| (&self.documents[i], s))
            .collect()
    }

    /// Every document's cosine to `query` (none without a vector scores 0).
    fn similarities(&self, query: &[f32]) -> Vec<f64> {
        let query = dense::quantized(query);
        self.documents
            .iter()
            .map(|d| dense::cosine(&query, &d.vector))
            .collect()
    }

    /// The lexical scores fused with the dense model's: each side scaled so that its best
    /// document scores 1 (the dense side from the catalog's mean similarity up), then weighed.
    /// A document no query word reaches joins only when the model places it close enough to
    /// the query on its own.
    fn fuse(&self, query: &[f32], scored: &mut Vec<(usize, f64)>, share: f64) {
        let weight = DENSE_WEIGHT + DENSE_GAIN * (1.0 - share.clamp(0.0, 1.0));
        let similar = self.similarities(query);
        let mean = similar.iter().sum::<f64>() / similar.len().max(1) as f64;
        let top = similar.iter().copied().fold(f64::MIN, f64::max);
        if top - mean < 1e-6 {
            return;
        }
        let lexical_top = scored.iter().map(|(_, s)| *s).fold(0.0, f64::max);
        let mut fused: Vec<f64> = vec![0.0; similar.len()];
        let mut reached = vec![false; similar.len()];
        for (i, score) in scored.iter() {
            fused[*i] += (1.0 - weight) * score / lexical_top;
            reached[*i] = true;
        }
        for (i, s) in similar.iter().enumerate() {
            if reached[i] || *s >= DENSE_ALONE {
                fused[i] += weight * ((s - mean) / (top - mean)).max(0.0);
                reached[i] = true;
            }
        }
        *scored = fused
            .into_iter()
            .enumerate()
            .filter(|(i, score)| reached[*i] && *score > 0.0)
            .collect();
    }
}

/// The documents ranked for `query`, best first, for a caller with a plain list of documents
/// (a one-off search): an [`Index`] is built over them for the call.
pub fn rank<'a, T>(query: &str, documents: &'a [Document<T>]) -> Vec<(&'a Document<T>, f64)> {
    let index = Index::new(
        documents
            .iter()
            .enumerate()
            .map(|(i, d)| d.analysis_with(i))
            .collect(),
    );
    index
        .rank(query)
        .into_iter()
        .map(|(d, score)| (&documents[d.tool], score))
        .collect()
}

/// The tools [`shown`] picks from a ranking of parsed tools, ready for rendering.
pub fn shown_tools<'a>(
    ranked: &[(&'a Document<Tool>, f64)],
    limit: usize,
) -> Vec<crate::render::tool::FoundTool<'a>> {
    shown(ranked, limit)
        .into_iter()
        .map(|(i, with_help)| crate::render::tool::FoundTool {
            server: &ranked[i].0.server,
            tool: &ranked[i].0.tool,
            with_help,
            mark: None,
        })
        .collect()
}

/// Which of the ranked hits `find` shows, at most `limit`, each with whether its whole help
/// is shown: the first always with its help; the second with its help too when it scores
/// close to the first; later hits only while they score a fair share of the first's.
pub fn shown<T>(ranked: &[(&Document<T>, f64)], limit: usize) -> Vec<(usize, bool)> {
    let Some((_, top)) = ranked.first() else {
        return Vec::new();
    };
    // When the first two are close, the choice is the agent's: every hit up to the limit.
    let open = uncertain(ranked);
    ranked
        .iter()
        .take(limit.max(1))
        .enumerate()
        .take_while(|(i, (_, score))| open || *i == 0 || *score >= SHOWN_SHARE * top)
        .map(|(i, (_, score))| (i, i == 0 || (i == 1 && *score >= CLOSE_SHARE * top)))
        .collect()
}

/// Whether a ranking leaves the choice open: the second hit scores close to the first.
pub fn uncertain<T>(ranked: &[(&Document<T>, f64)]) -> bool {
    match ranked {
        [(_, first), (_, second), ..] => *second >= CLOSE_SHARE * first,
        _ => false,
    }
}

/// When the choice is open and the best hits come from more than one server, the servers whose
/// tools fit best (by their hits' scores among the first ten), at most three, so an agent can
/// look at one of them whole; empty otherwise.
pub fn fitting_servers<'a, T>(ranked: &[(&'a Document<T>, f64)]) -> Vec<&'a str> {
    if !uncertain(ranked) {
        return Vec::new();
    }
    servers_by_fit(ranked)
}

/// The servers whose tools fit best (by their hits' scores among the first ten), at most three,
/// when the hits come from more than one server; empty otherwise.
pub fn servers_by_fit<'a, T>(ranked: &[(&'a Document<T>, f64)]) -> Vec<&'a str> {
    let mut fit: Vec<(&str, f64)> = Vec::new();
    for (doc, score) in ranked.iter().take(10) {
        match fit.iter_mut().find(|(s, _)| *s == doc.server) {
            Some((_, total)) => *total += score,
            None => fit.push((&doc.server, *score)),
        }
    }
    if fit.len() < 2 {
        return Vec::new();
    }
    fit.sort_by(|a, b| b.1.total_cmp(&a.1));
    fit.iter().take(3).map(|(s, _)| *s).collect()
}

/// The tool of the same server that a deprecated tool's note names, if any.
fn replacement_in(
    note: &str,
    own: &str,
    server: &str,
    names: &FxHashMap<(&str, &str), usize>,
) -> Option<usize> {
    note.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == '.'))
        .filter(|w| !w.is_empty() && *w != own)
        .find_map(|w| names.get(&(server, w)).copied())
}

/// One word of a query: the stems it matches, with weights (its own at 1, near-words lower).
struct QueryWord {
    /// The word as written, lower case.
    text: String,
    alternatives: Vec<(Term, f64)>,
    weight: f64,
    /// Read from a Chinese word through the dictionary, not written.
    glossed: bool,
}

/// A parsed query: its words, the stems written (no near-words), the actions its verb names,
/// and whether it asks a question ("did the build pass?"), which a tool that reads answers.
struct Query {
    words: Vec<QueryWord>,
    written: Vec<Term>,
    verb: u32,
    question: bool,
}

/// Words that open a question: the task wants to know something, not to change it.
const QUESTION_WORDS: &[&str] = &[
    "did", "is", "are", "was", "were", "what", "which", "who", "whose", "where", "when", "why",
    "how", "does", "do", "has", "have", "can", "any", "show", "whats",
];

/// The bits of [`ACTIONS`] named.
fn action_bits(names: &[&str]) -> u32 {
    ACTIONS
        .iter()
        .enumerate()
        .filter(|(_, (name, _))| names.contains(name))
        .fold(0, |bits, (bit, _)| bits | 1 << bit)
}

/// The spellings one edit away from `word` (a letter deleted, swapped with the next, replaced
/// or inserted): a typo is most often one of those.
fn one_edit(word: &str) -> Vec<String> {
    let chars: Vec<char> = word.chars().collect();
    let mut out = Vec::new();
    let with = |prefix: &[char], middle: &str, suffix: &[char]| -> String {
        prefix.iter().collect::<String>() + middle + &suffix.iter().collect::<String>()
    };
    for i in 0..=chars.len() {
        if i < chars.len() {
            out.push(with(&chars[..i], "", &chars[i + 1..]));
            if i + 1 < chars.len() {
                let swapped: String = [chars[i + 1], chars[i]].iter().collect();
                out.push(with(&chars[..i], &swapped, &chars[i + 2..]));
            }
        }
        for letter in 'a'..='z' {
            let l = letter.to_string();
            if i < chars.len() && chars[i] != letter {
                out.push(with(&chars[..i], &l, &chars[i + 1..]));
            }
            out.push(with(&chars[..i], &l, &chars[i..]));
        }
    }
    out
}

impl Query {
    fn parse(text: &str) -> Query {
        // A task is a few words: a query of thousands (from a hostile caller) is cut, not
        // ranked word by word against every tool.
        let text: String = text.chars().take(2000).collect::<String>().to_lowercase();
        let text = text.replace(['\u{2019}', '`'], "'");
        // A Chinese task's words in English (a dictionary's reading) go first: the first word
        // is read for the verb, and a long query is cut at its end.
        let glosses = read_idioms(&collapse(&chinese::glosses(&text)));
        let padded = read_idioms(&collapse(&text));
        let question = [&glosses, &padded]
            .iter()
            .flat_map(|p| p.split(' '))
            .find(|w| !w.is_empty())
            .is_some_and(|w| QUESTION_WORDS.contains(&w.trim_matches('\'')));
        let mut seen = FxHashSet::default();
        let mut words = Vec::new();
        let mut verb = 0;
        for (part, glossed) in [(&glosses, true), (&padded, false)] {
            for_each_word(part, |w| {
                if words.len() >= MAX_QUERY_TERMS {
                    return;
                }
                let term = term_of(w);
                if !seen.insert(term) {
                    return;
                }
                let mut weight = 1.0;
                if words.is_empty() {
                    verb = actions_of(term);
                    if verb != 0 {
                        weight = QUERY_VERB_LITERAL;
                    }
                }
                let mut alternatives = vec![(term, 1.0)];
                for near in near_words(term) {
                    if !alternatives.iter().any(|(t, _)| t == near) {
                        alternatives.push((*near, NEAR_WEIGHT));
                    }
                }
                words.push(QueryWord {
                    text: w.to_string(),
                    alternatives,
                    weight,
                    glossed,
                });
            });
        }
        let written = words.iter().map(|w| w.alternatives[0].0).collect();
        Query {
            words,
            written,
            verb,
            question,
        }
    }
}

/// The words of `text` with every idiom replaced by what it means, in one pass from the left
/// (a meaning is never read again as an idiom).
fn read_idioms(text: &str) -> String {
    let words: Vec<&str> = text.split(' ').collect();
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    let mut i = 0;
    static SPLIT: std::sync::OnceLock<Vec<(Vec<&str>, &str)>> = std::sync::OnceLock::new();
    let idioms = SPLIT.get_or_init(|| {
        IDIOMS
            .iter()
            .map(|(idiom, meaning)| (idiom.split(' ').collect(), *meaning))
            .collect()
    });
    'words: while i < words.len() {
        for (idiom, meaning) in idioms {
            if words[i..].starts_with(idiom) {
                out.push(meaning);
                i += idiom.len();
                continue 'words;
            }
        }
        out.push(words[i]);
        i += 1;
    }
    out.join(" ")
}

fn collapse(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | '.' | '?' | '!' | ';' | ':'))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_query_is_cut_to_its_first_distinct_words() {
        let long: String = (0..10_000).map(|i| format!("word{i} ")).collect();
        let query = Query::parse(&long);
        assert_eq!(query.words.len(), MAX_QUERY_TERMS);
        assert_eq!(query.words[0].alternatives[0].0, term_of("word0"));
        // Repeats count once.
        assert_eq!(Query::parse("file file file list").words.len(), 2);
    }

    #[test]
    fn terms_split_and_stem() {
        assert_eq!(terms("createMergeRequest"), ["creat", "merg", "request"]);
        assert_eq!(terms("read_multiple_files"), ["read", "multipl", "file"]);
        assert_eq!(
            terms("Take a screenshot of the page"),
            ["take", "screenshot", "page"]
        );
        assert_eq!(terms("listing issues"), ["list", "issu"]);
        assert_eq!(terms("creates"), ["creat"]);
        assert_eq!(terms("access"), ["access"]);
        assert_eq!(terms("folders directories"), ["folder", "directori"]);
    }

    #[test]
    fn saved_documents_rank_as_the_documents_they_were_made_from() {
        let tools = [
            ("read_text_file", "Read a file as text.", "path"),
            (
                "read_file",
                "Read a file. DEPRECATED: Use read_text_file instead.",
                "path",
            ),
            ("create_directory", "Create a new directory.", "path"),
        ];
        let made = || -> Vec<Document<String>> {
            tools
                .iter()
                .map(|(n, d, p)| Document::from_parts("fs", n, d, [*p].into_iter(), n.to_string()))
                .collect()
        };
        let bytes = save_documents(&made(), "v1");
        let mut loaded = load_documents(&bytes, "v1", "fs", |n| Some(n.to_string())).unwrap();
        // The ranking weighs meaning too: the vectors saved apart are read back in.
        assert!(load_vectors(
            &save_vectors(&made(), "v1"),
            "v1",
            &mut loaded
        ));
        let ranking = |docs: Vec<Document<String>>| -> Vec<(String, String)> {
            Index::new(docs)
                .rank("make a new folder")
                .iter()
                .map(|(d, s)| (d.tool.clone(), format!("{s:.6}")))
                .collect()
        };
        assert_eq!(ranking(loaded), ranking(made()));
        // The vectors are apart, read back only into the documents kept.
        let vectors = save_vectors(&made(), "v1");
        let mut kept = load_documents(&bytes, "v1", "fs", |n| {
            (n != "read_file").then(|| n.to_string())
        })
        .unwrap();
        assert!(kept.iter().all(|d| d.vector.is_empty()));
        assert!(!load_vectors(&vectors, "v2", &mut kept));
        assert!(!load_vectors(
            &vectors[..vectors.len() - 1],
            "v1",
            &mut kept
        ));
        assert!(load_vectors(&vectors, "v1", &mut kept));
        let made = made();
        for doc in &kept {
            let original = made.iter().find(|d| d.name == doc.name).unwrap();
            assert_eq!(doc.vector, original.vector);
        }
        // Another key, a cut file or a filter.
        assert!(load_documents(&bytes, "v2", "fs", |n| Some(n.to_string())).is_none());
        assert!(
            load_documents(&bytes[..bytes.len() - 1], "v1", "fs", |n| Some(
                n.to_string()
            ))
            .is_none()
        );
        let some = load_documents(&bytes, "v1", "fs", |n| {
            (n != "read_file").then(|| n.to_string())
        });
        assert_eq!(some.unwrap().len(), 2);
    }

    #[test]
    fn a_plain_list_ranks_as_its_index_does() {
        let docs: Vec<Document<&str>> = [
            ("make_dir", "Create a new directory."),
            ("read", "Read a file."),
        ]
        .iter()
        .map(|(n, d)| Document::from_parts("fs", n, d, std::iter::empty(), *n))
        .collect();
        let ranked = rank("make a new folder", &docs);
        assert_eq!(ranked.len(), 1);
        assert!(std::ptr::eq(ranked[0].0, &docs[0]));
    }

    #[test]
    fn idioms_read_as_what_they_mean() {
        let query = Query::parse("get rid of a mongo collection");
        assert_eq!(query.words[0].alternatives[0].0, term_of("delete"));
        assert_ne!(query.verb, 0);
    }

    fn docs(tools: &[(&str, &str, &str)]) -> Vec<Document<String>> {
        tools
            .iter()
            .map(|(s, n, d)| Document::from_parts(s, n, d, std::iter::empty(), n.to_string()))
            .collect()
    }

    #[test]
    fn cjk_text_splits_into_characters_and_their_pairs() {
        let words = terms("网页截图 screenshot");
        for w in ["网", "页", "截", "图", "网页", "页截", "截图", "screenshot"] {
            assert!(words.contains(&w.to_string()), "{w} in {words:?}");
        }
        let docs = docs(&[
            ("web", "take_screenshot", "网页截图工具"),
            ("web", "delete_file", "删除文件"),
        ]);
        let ranked = rank("截图", &docs);
        assert_eq!(ranked[0].0.tool, "take_screenshot");
    }

    #[test]
    fn a_word_one_edit_from_a_catalog_word_matches_it() {
        let docs = docs(&[
            ("web", "take_screenshot", "Take a screenshot of the page."),
            ("fs", "delete_file", "Delete a file."),
        ]);
        for typo in ["screnshot", "screenshto", "delet a file"] {
            let ranked = rank(typo, &docs);
            assert!(!ranked.is_empty(), "{typo}");
        }
        assert_eq!(rank("screnshot", &docs)[0].0.tool, "take_screenshot");
        assert_eq!(rank("delet the file", &docs)[0].0.tool, "delete_file");
        // A word that is right is not corrected into another.
        assert_eq!(rank("page", &docs).len(), 1);
    }

    #[test]
    fn an_english_task_finds_a_tool_described_in_chinese() {
        // "Plan a driving route", "check the weather forecast".
        let docs = docs(&[
            ("maps", "route", "规划驾车路线"),
            ("maps", "forecast", "查询天气预报"),
            ("fs", "read_file", "Read a file."),
        ]);
        assert_eq!(
            rank("weather forecast for Paris", &docs)[0].0.tool,
            "forecast"
        );
        assert_eq!(rank("plan a drive", &docs)[0].0.tool, "route");
    }

    #[test]
    fn a_question_prefers_a_tool_that_reads() {
        let docs = docs(&[
            ("git", "create_branch", "Create a branch."),
            ("git", "list_branches", "List the branches."),
        ]);
        // Scores are each query's own (fused, scaled to its best): the writer is weighed
        // against the reader.
        let score = |query: &str| {
            let ranked = rank(query, &docs);
            let of = |tool: &str| ranked.iter().find(|(d, _)| d.tool == tool).unwrap().1;
            of("create_branch") / of("list_branches")
        };
        assert!(score("did I create the branch") < score("create the branch"));
        assert_eq!(rank("is there a branch", &docs)[0].0.tool, "list_branches");
    }

    #[test]
    fn close_hits_show_more_and_name_the_servers_that_fit() {
        let docs = docs(&[
            ("slack", "send_message", "Send a message to a channel."),
            ("teams", "send_message", "Send a message to a channel."),
            ("teams", "list_channels", "List the channels."),
        ]);
        let ranked = rank("message to a channel", &docs);
        assert!(uncertain(&ranked));
        assert!(shown(&ranked, 5).len() >= 2);
        let servers = fitting_servers(&ranked);
        assert_eq!(servers.len(), 2);
        // One clear winner: no hint.
        let ranked = rank("list channels", &docs);
        assert!(!uncertain(&ranked));
        assert!(fitting_servers(&ranked).is_empty());
    }
}
