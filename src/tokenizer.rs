//! Token counting with OpenAI's public BPE encodings, by tiktoken-rs's own pattern and merge.
//! Claude's tokenizer is not public, so every count for Claude is a close estimate; the
//! encodings are built lazily, once, and only when something must be counted (never on the
//! call path unless a budget needs it). The vocabularies are embedded in a compact form
//! (assets/tokenizers/).
//!
//! A count is `CoreBPE::encode_ordinary`'s loop, not a `CoreBPE`: building one also builds a
//! decoder and a sorted copy of the 200,000-token vocabulary, which counting never reads and
//! which were two thirds of a cold `ferry tokens` (about 90 of 130 ms). The split pattern
//! (fancy-regex, as CoreBPE compiles it) and the merge (`tiktoken_rs::byte_pair_split`) are
//! tiktoken-rs's; the tests check every count against a `CoreBPE` on the whole corpus.

use crate::{Error, Result};
use fancy_regex::Regex;
use rustc_hash::FxHashMap;
use std::sync::OnceLock;
use tiktoken_rs::Rank;

const O200K_VOCAB: &[u8] = include_bytes!("../assets/tokenizers/o200k_base.bin");
const CL100K_VOCAB: &[u8] = include_bytes!("../assets/tokenizers/cl100k_base.bin");
/// cl100k_base's split pattern, as tiktoken defines it.
const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// Why an encoding could not be built from the vocabulary and pattern ferry carries.
#[derive(Debug, thiserror::Error)]
enum BuildError {
    #[error("the vocabulary is truncated")]
    Truncated,
    #[error("{0}")]
    Pattern(#[from] Box<fancy_regex::Error>),
}

/// Reads a compact vocabulary: each token as a length byte then its bytes, in rank order.
fn read_vocab(bytes: &[u8]) -> std::result::Result<FxHashMap<Vec<u8>, Rank>, BuildError> {
    let mut count = 0;
    let mut at = 0;
    while at < bytes.len() {
        at += 1 + bytes[at] as usize;
        count += 1;
    }
    let mut encoder = FxHashMap::with_capacity_and_hasher(count, Default::default());
    let mut at = 0;
    while at < bytes.len() {
        let len = bytes[at] as usize;
        let token = bytes
            .get(at + 1..at + 1 + len)
            .ok_or(BuildError::Truncated)?;
        encoder.insert(token.to_vec(), encoder.len() as Rank);
        at += 1 + len;
    }
    Ok(encoder)
}

/// One encoding, as counting needs it: its vocabulary and its split pattern.
struct Bpe {
    encoder: FxHashMap<Vec<u8>, Rank>,
    pattern: Regex,
}

fn build(encoding: Encoding) -> std::result::Result<Bpe, BuildError> {
    let (vocab, pattern): (&[u8], &str) = match encoding {
        Encoding::O200kBase => (O200K_VOCAB, tiktoken_rs::O200K_BASE_PAT_STR),
        Encoding::Cl100kBase => (CL100K_VOCAB, CL100K_PATTERN),
    };
    Ok(Bpe {
        encoder: read_vocab(vocab)?,
        pattern: Regex::new(pattern).map_err(Box::new)?,
    })
}

/// A public BPE encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// GPT-4o and later; ferry's default.
    O200kBase,
    /// GPT-4 and GPT-3.5.
    Cl100kBase,
}

impl Encoding {
    pub fn parse(name: &str) -> Result<Encoding> {
        match name {
            "o200k_base" | "o200k" => Ok(Encoding::O200kBase),
            "cl100k_base" | "cl100k" => Ok(Encoding::Cl100kBase),
            other => Err(Error::usage(format!("unknown tokenizer {other:?}"))
                .with_hint("use o200k_base or cl100k_base")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}

/// Counts tokens in one encoding.
#[derive(Clone, Copy)]
pub struct Tokenizer {
    bpe: &'static Bpe,
    pub encoding: Encoding,
}

type Built = std::result::Result<Bpe, BuildError>;
static O200K: OnceLock<Built> = OnceLock::new();
static CL100K: OnceLock<Built> = OnceLock::new();

impl Tokenizer {
    /// The tokenizer for `encoding`, built on first use.
    pub fn get(encoding: Encoding) -> Result<Tokenizer> {
        let cell = match encoding {
            Encoding::O200kBase => &O200K,
            Encoding::Cl100kBase => &CL100K,
        };
        let built = cell.get_or_init(|| build(encoding));
        match built {
            Ok(bpe) => Ok(Tokenizer { bpe, encoding }),
            Err(e) => Err(Error::server(format!(
                "cannot build the {} tokenizer: {e}",
                encoding.name()
            ))),
        }
    }

    /// The number of tokens in `text` (special-token text counted as ordinary text), as
    /// `CoreBPE::count_ordinary` gives it. Should the pattern give up on a text (fancy-regex's
    /// backtracking limit), the rest counts a token a byte, never fewer than there are.
    pub fn count(&self, text: &str) -> usize {
        let Bpe { encoder, pattern } = self.bpe;
        let mut count = 0;
        let mut end = 0;
        for found in pattern.find_iter(text) {
            let Ok(found) = found else {
                return count + text.len() - end;
            };
            let piece = found.as_str().as_bytes();
            end = found.end();
            count += if encoder.contains_key(piece) {
                1
            } else {
                tiktoken_rs::byte_pair_split(piece, encoder).len()
            };
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_match_tiktoken() {
        // Reference counts from OpenAI's tiktoken (Python, encode_ordinary) on the same strings.
        let o200k = Tokenizer::get(Encoding::O200kBase).unwrap();
        let cl100k = Tokenizer::get(Encoding::Cl100kBase).unwrap();
        let cases = [
            ("hello world", 2, 2),
            ("", 0, 0),
            ("tiktoken is great!", 6, 6),
            ("<|endoftext|>", 7, 7),
            (
                "read_file(path:str, head?:int) - Read a file as text",
                15,
                15,
            ),
            (
                r#"{"name":"echo","description":"Echoes back","input_schema":{"type":"object"}}"#,
                18,
                18,
            ),
            ("héllo wörld ✓ 你好世界", 9, 13),
        ];
        for (text, in_o200k, in_cl100k) in cases {
            assert_eq!(o200k.count(text), in_o200k, "o200k_base: {text:?}");
            assert_eq!(cl100k.count(text), in_cl100k, "cl100k_base: {text:?}");
        }
    }

    #[test]
    fn counts_are_tiktoken_rs_counts() {
        // Against tiktoken-rs's own CoreBPE (built from its own vocabularies): every corpus
        // file, pieces too long for a single merge table, and odd text.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");
        let mut texts = vec![
            "héllo wörld ✓ 你好世界 <|endoftext|> \r\n\t  x\n\n".to_string(),
            "a".repeat(500),
            "é".repeat(300),
            format!("https://example.com/{}", "x9".repeat(200)),
            " ".repeat(260) + "end",
            "\n".repeat(150),
        ];
        let mut files: Vec<_> = std::fs::read_dir(dir)
            .expect("tests/corpus")
            .flatten()
            .map(|e| e.path())
            .collect();
        files.sort();
        for path in files {
            texts.push(std::fs::read_to_string(path).unwrap_or_default());
        }
        let pairs = [
            (
                Tokenizer::get(Encoding::O200kBase).unwrap(),
                tiktoken_rs::o200k_base().unwrap(),
            ),
            (
                Tokenizer::get(Encoding::Cl100kBase).unwrap(),
                tiktoken_rs::cl100k_base().unwrap(),
            ),
        ];
        for (ours, reference) in pairs {
            for text in &texts {
                assert_eq!(
                    ours.count(text),
                    reference.encode_ordinary(text).len(),
                    "{}: {:?}",
                    ours.encoding.name(),
                    text.chars().take(60).collect::<String>()
                );
            }
        }
    }
}
