//! Token counting with OpenAI's public BPE encodings (tiktoken-rs's `CoreBPE`). Claude's
//! tokenizer is not public, so every count for Claude is a close estimate; the encodings are
//! built lazily, once, and only when something must be counted (never on the call path unless
//! a budget needs it). The vocabularies are embedded in a compact form (assets/tokenizers/).

use crate::{Error, Result};
use rustc_hash::FxHashMap;
use std::sync::OnceLock;
use tiktoken_rs::{CoreBPE, Rank};

const O200K_VOCAB: &[u8] = include_bytes!("../assets/tokenizers/o200k_base.bin");
const CL100K_VOCAB: &[u8] = include_bytes!("../assets/tokenizers/cl100k_base.bin");
/// cl100k_base's split pattern, as tiktoken defines it.
const CL100K_PATTERN: &str = "'(?i:[sdmt]|ll|ve|re)|[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++|\\p{N}{1,3}+| ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+|\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s";

/// Reads a compact vocabulary: each token as a length byte then its bytes, in rank order.
fn read_vocab(bytes: &[u8]) -> std::result::Result<FxHashMap<Vec<u8>, Rank>, String> {
    let mut encoder = FxHashMap::default();
    let mut at = 0;
    while at < bytes.len() {
        let len = bytes[at] as usize;
        let token = bytes
            .get(at + 1..at + 1 + len)
            .ok_or("the vocabulary is truncated")?;
        encoder.insert(token.to_vec(), encoder.len() as Rank);
        at += 1 + len;
    }
    Ok(encoder)
}

fn build(encoding: Encoding) -> std::result::Result<CoreBPE, String> {
    let (vocab, specials, pattern): (&[u8], &[(&str, Rank)], &str) = match encoding {
        Encoding::O200kBase => (
            O200K_VOCAB,
            &[("<|endoftext|>", 199999), ("<|endofprompt|>", 200018)],
            tiktoken_rs::O200K_BASE_PAT_STR,
        ),
        Encoding::Cl100kBase => (
            CL100K_VOCAB,
            &[
                ("<|endoftext|>", 100257),
                ("<|fim_prefix|>", 100258),
                ("<|fim_middle|>", 100259),
                ("<|fim_suffix|>", 100260),
                ("<|endofprompt|>", 100276),
            ],
            CL100K_PATTERN,
        ),
    };
    let encoder = read_vocab(vocab)?;
    let specials: FxHashMap<String, Rank> =
        specials.iter().map(|(s, r)| (s.to_string(), *r)).collect();
    CoreBPE::new(encoder, specials, pattern).map_err(|e| e.to_string())
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
    bpe: &'static CoreBPE,
    pub encoding: Encoding,
}

type Built = std::result::Result<CoreBPE, String>;
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

    /// The number of tokens in `text` (special-token text counted as ordinary text).
    pub fn count(&self, text: &str) -> usize {
        self.bpe.count_ordinary(text)
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
    fn compact_vocabularies_encode_exactly_as_tiktoken_rs() {
        // The embedded vocabularies against tiktoken-rs's own, on every tool of the corpus.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus");
        let mut text = String::from("héllo wörld ✓ 你好世界 <|endoftext|> \r\n\t  x\n\n");
        for entry in std::fs::read_dir(dir).expect("tests/corpus").flatten() {
            text.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
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
            assert_eq!(
                ours.bpe.encode_ordinary(&text),
                reference.encode_ordinary(&text),
                "{}",
                ours.encoding.name()
            );
        }
    }
}
