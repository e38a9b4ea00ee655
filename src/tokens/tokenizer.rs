//! Token counting with OpenAI's public BPE encodings (tiktoken-rs). Claude's tokenizer is not
//! public, so every count for Claude is a close estimate; the encodings are built lazily, once,
//! and only when something must be counted (never on the call path unless a budget needs it).

use crate::{Error, Result};
use std::sync::OnceLock;
use tiktoken_rs::CoreBPE;

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
        let built = cell.get_or_init(|| {
            let built = match encoding {
                Encoding::O200kBase => tiktoken_rs::o200k_base(),
                Encoding::Cl100kBase => tiktoken_rs::cl100k_base(),
            };
            built.map_err(|e| e.to_string())
        });
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
}
