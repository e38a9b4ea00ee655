//! The dense side of `find`: a static embedding model (as model2vec makes them) that places a
//! text by the average of its pieces' vectors, so "wipe the key" meets "Delete a key" and
//! "网页截图" meets "Take a screenshot of the page" without a shared word.
//!
//! The model (`assets/find/static.bin`, made by `scripts/make_static_model.py` from
//! multilingual-e5-small, its pieces then fitted to the teacher's sentence vectors by
//! `scripts/distill_static_model.py` and its languages aligned by
//! `scripts/align_static_model.py`) is compiled in but only read here: its pages are mapped from the
//! binary and touched when `find` first embeds a text, never by `ferry --version` or a call.
//! Its vocabulary is a SentencePiece unigram one; a text is split into pieces by the same
//! Viterbi search SentencePiece uses, over the pieces kept.

use rustc_hash::FxHashMap;
use std::sync::OnceLock;

static MODEL_BYTES: &[u8] = include_bytes!("../../../assets/find/static.bin");
/// Which model `static.bin` is, for the keys of saved tool vectors: vectors a former model made
/// are remade. Raise it with the model (a test holds the model's checksum to it).
pub const MODEL_VERSION: u32 = 2;

/// The most bytes of a text embedded: what a tool is for is said early.
const TEXT_BYTES: usize = 600;
/// The most words whose split is remembered (a few MB).
const SPLITS_KEPT: usize = 50_000;
/// SentencePiece's mark of a word's start.
const WORD_START: &str = "\u{2581}";

/// The parsed model: pieces, their scores and their 4-bit rows.
struct Model {
    pieces: FxHashMap<&'static [u8], u32>,
    /// The most bytes of a piece.
    longest: usize,
    /// Each piece's unigram log probability, in tenths.
    scores: &'static [u8],
    scales: &'static [u8],
    rows: &'static [u8],
    dims: usize,
}

fn model() -> Option<&'static Model> {
    static MODEL: OnceLock<Option<Model>> = OnceLock::new();
    MODEL.get_or_init(|| parse(MODEL_BYTES)).as_ref()
}

/// The model in `bytes` (layout in scripts/make_static_model.py), `None` if it is not one.
fn parse(bytes: &'static [u8]) -> Option<Model> {
    let rest = bytes.strip_prefix(b"FSM1")?;
    let count = u32::from_le_bytes(rest.get(..4)?.try_into().ok()?) as usize;
    let dims = u32::from_le_bytes(rest.get(4..8)?.try_into().ok()?) as usize;
    if dims == 0 || dims % 2 != 0 {
        return None;
    }
    let mut at = 8;
    let mut pieces = FxHashMap::with_capacity_and_hasher(count, Default::default());
    let mut longest = 0;
    for id in 0..count {
        let len = *rest.get(at)? as usize;
        let piece = rest.get(at + 1..at + 1 + len)?;
        pieces.insert(piece, id as u32);
        longest = longest.max(len);
        at += 1 + len;
    }
    let scores = rest.get(at..at + count)?;
    at += count;
    let scales = rest.get(at..at + 4 * count)?;
    at += 4 * count;
    let rows = rest.get(at..at + count * dims / 2)?;
    (at + count * dims / 2 == rest.len()).then_some(Model {
        pieces,
        longest,
        scores,
        scales,
        rows,
        dims,
    })
}

impl Model {
    fn score(&self, id: u32) -> f32 {
        self.scores[id as usize] as i8 as f32 / 10.0
    }

    /// Adds piece `id`'s vector to `sum`.
    fn add_row(&self, id: u32, sum: &mut [f32]) {
        let at = id as usize * 4;
        let scale = f32::from_le_bytes(self.scales[at..at + 4].try_into().unwrap_or_default());
        let half = self.dims / 2;
        let row = &self.rows[id as usize * half..(id as usize + 1) * half];
        for (pair, byte) in sum.chunks_exact_mut(2).zip(row) {
            pair[0] += ((byte & 0x0f) as f32 - 8.0) * scale;
            pair[1] += ((byte >> 4) as f32 - 8.0) * scale;
        }
    }

    /// The pieces of one word (without spaces), by the most probable split; a character no
    /// piece holds is passed over.
    fn word_pieces(&self, word: &str, out: &mut Vec<u32>) {
        let text = format!("{WORD_START}{word}");
        let bytes = text.as_bytes();
        // Character starts: a piece begins and ends on them.
        let starts: Vec<usize> = text
            .char_indices()
            .map(|(i, _)| i)
            .chain([bytes.len()])
            .collect();
        let n = starts.len() - 1;
        // best[i]: the best score of a split of the first i characters, from[i] its last piece.
        let mut best = vec![f32::NEG_INFINITY; n + 1];
        let mut from: Vec<(usize, Option<u32>)> = vec![(0, None); n + 1];
        best[0] = 0.0;
        for i in 0..n {
            if best[i] == f32::NEG_INFINITY {
                continue;
            }
            for e in i + 1..=n {
                let len = starts[e] - starts[i];
                if len > self.longest {
                    break;
                }
                if let Some(id) = self.pieces.get(&bytes[starts[i]..starts[e]]) {
                    let score = best[i] + self.score(*id);
                    if score > best[e] {
                        best[e] = score;
                        from[e] = (i, Some(*id));
                    }
                }
            }
            // An unknown character: far less likely than any piece.
            let unknown = best[i] - 30.0;
            if unknown > best[i + 1] {
                best[i + 1] = unknown;
                from[i + 1] = (i, None);
            }
        }
        let start = out.len();
        let mut i = n;
        while i > 0 {
            let (previous, id) = from[i];
            if let Some(id) = id {
                // The bare word-start mark says nothing.
                if &bytes[starts[previous]..starts[i]] != WORD_START.as_bytes() {
                    out.push(id);
                }
            }
            i = previous;
        }
        out[start..].reverse();
    }
}

/// The pieces `text` is split into, by id (for tests and the bench).
pub fn pieces(text: &str) -> Vec<String> {
    let Some(model) = model() else {
        return Vec::new();
    };
    let mut ids = Vec::new();
    for word in normalized(text).split_whitespace() {
        model.word_pieces(word, &mut ids);
    }
    let names: FxHashMap<u32, &[u8]> = model.pieces.iter().map(|(p, i)| (*i, *p)).collect();
    ids.iter()
        .map(|i| String::from_utf8_lossy(names[i]).into_owned())
        .collect()
}

/// The text as the model's vocabulary writes it: full-width letters and digits as ASCII,
/// identifiers split into words (`createMergeRequest`, `create_merge_request`), cut to its
/// first [`TEXT_BYTES`].
fn normalized(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(TEXT_BYTES) + 8);
    let mut previous_lower = false;
    for c in text.chars() {
        if out.len() >= TEXT_BYTES {
            break;
        }
        let c = match c as u32 {
            0xFF01..=0xFF5E => char::from_u32(c as u32 - 0xFEE0).unwrap_or(c),
            0x3000 => ' ',
            _ => c,
        };
        if c == '_' || c == '-' && previous_lower {
            out.push(' ');
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower {
            out.push(' ');
        }
        previous_lower = c.is_lowercase();
        out.push(c);
    }
    out
}

/// A text's place in the model's space, at unit length; `None` when no piece of it is known
/// (or the model is missing).
pub fn embed(text: &str) -> Option<Vec<f32>> {
    let model = model()?;
    let mut ids = Vec::new();
    // A catalog says the same words again and again: each is split once per thread.
    thread_local! {
        static SPLITS: std::cell::RefCell<FxHashMap<String, Vec<u32>>> = Default::default();
    }
    SPLITS.with(|splits| {
        let mut splits = splits.borrow_mut();
        if splits.len() > SPLITS_KEPT {
            splits.clear();
        }
        for word in normalized(text).split_whitespace() {
            match splits.get(word) {
                Some(known) => ids.extend_from_slice(known),
                None => {
                    let start = ids.len();
                    model.word_pieces(word, &mut ids);
                    splits.insert(word.to_string(), ids[start..].to_vec());
                }
            }
        }
    });
    let mut sum = vec![0f32; model.dims];
    for id in &ids {
        model.add_row(*id, &mut sum);
    }
    let norm = sum.iter().map(|x| x * x).sum::<f32>().sqrt();
    (norm > 1e-6).then(|| sum.iter().map(|x| x / norm).collect())
}

/// A unit vector in a byte per value, as documents keep it.
pub fn quantized(vector: &[f32]) -> Box<[i8]> {
    vector
        .iter()
        .map(|x| (x * 127.0).round().clamp(-127.0, 127.0) as i8)
        .collect()
}

/// The cosine of two [`quantized`] vectors, 0 when their lengths differ (a tool without one).
pub fn cosine(a: &[i8], b: &[i8]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    dot(a, b) as f64 / (127.0 * 127.0)
}

/// The dot product of two rows of the same length. The release build is optimised for size,
/// which leaves a plain loop unvectorised: 3.3 ms for ten thousand rows of 256, 0.57 ms with
/// SSE2 (every x86-64 processor), 0.19 ms with AVX2.
#[cfg(target_arch = "x86_64")]
fn dot(a: &[i8], b: &[i8]) -> i32 {
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the processor has AVX2, checked just above.
        return unsafe { dot_avx2(a, b) };
    }
    dot_sse2(a, b)
}

/// [`dot`] 32 values a step, on processors with AVX2 (most since 2013).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn dot_avx2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let steps = n / 16;
    let mut acc = _mm256_setzero_si256();
    for i in 0..steps {
        // SAFETY: 16 bytes at 16 * i, inside both slices as i < n / 16.
        let (va, vb) = unsafe {
            (
                _mm_loadu_si128(a.as_ptr().add(16 * i) as *const __m128i),
                _mm_loadu_si128(b.as_ptr().add(16 * i) as *const __m128i),
            )
        };
        let product = _mm256_madd_epi16(_mm256_cvtepi8_epi16(va), _mm256_cvtepi8_epi16(vb));
        acc = _mm256_add_epi32(acc, product);
    }
    let mut lanes = [0i32; 8];
    // SAFETY: 32 bytes into an array of eight i32.
    unsafe { _mm256_storeu_si256(lanes.as_mut_ptr() as *mut __m256i, acc) };
    let mut sum = lanes.iter().sum::<i32>();
    for i in 16 * steps..n {
        sum += a[i] as i32 * b[i] as i32;
    }
    sum
}

#[cfg(target_arch = "x86_64")]
fn dot_sse2(a: &[i8], b: &[i8]) -> i32 {
    use std::arch::x86_64::*;
    let n = a.len().min(b.len());
    let steps = n / 16;
    // SAFETY: SSE2 is part of the x86-64 baseline; each unaligned load reads 16 bytes at
    // 16 * i, and i < steps = n / 16 keeps them inside both slices.
    let mut sum = unsafe {
        let mut acc = _mm_setzero_si128();
        for i in 0..steps {
            let va = _mm_loadu_si128(a.as_ptr().add(16 * i) as *const __m128i);
            let vb = _mm_loadu_si128(b.as_ptr().add(16 * i) as *const __m128i);
            // Each byte widened to 16 bits with its sign: paired with itself, shifted down.
            let a_lo = _mm_srai_epi16(_mm_unpacklo_epi8(va, va), 8);
            let a_hi = _mm_srai_epi16(_mm_unpackhi_epi8(va, va), 8);
            let b_lo = _mm_srai_epi16(_mm_unpacklo_epi8(vb, vb), 8);
            let b_hi = _mm_srai_epi16(_mm_unpackhi_epi8(vb, vb), 8);
            acc = _mm_add_epi32(acc, _mm_madd_epi16(a_lo, b_lo));
            acc = _mm_add_epi32(acc, _mm_madd_epi16(a_hi, b_hi));
        }
        let mut lanes = [0i32; 4];
        _mm_storeu_si128(lanes.as_mut_ptr() as *mut __m128i, acc);
        lanes.iter().sum::<i32>()
    };
    for i in 16 * steps..n {
        sum += a[i] as i32 * b[i] as i32;
    }
    sum
}

#[cfg(not(target_arch = "x86_64"))]
fn dot(a: &[i8], b: &[i8]) -> i32 {
    a.iter().zip(b).map(|(x, y)| *x as i32 * *y as i32).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cosine of an unquantised query and a document's quantised vector: what
    /// [`cosine`] approximates with the query quantised too.
    fn similarity(query: &[f32], document: &[i8]) -> f32 {
        if query.len() != document.len() {
            return 0.0;
        }
        query
            .iter()
            .zip(document)
            .map(|(q, d)| q * *d as f32)
            .sum::<f32>()
            / 127.0
    }

    fn cos(a: &str, b: &str) -> f32 {
        similarity(&embed(a).unwrap(), &quantized(&embed(b).unwrap()))
    }

    #[test]
    fn the_dot_product_is_exact_at_the_extremes_and_any_length() {
        for n in [0, 1, 15, 16, 17, 256, 300] {
            let a: Vec<i8> = (0..n).map(|i| [-127, 127, -1, 0, 5][i % 5]).collect();
            let b: Vec<i8> = (0..n).map(|i| [-127, -127, 3, 9, -8][i % 5]).collect();
            let plain: i32 = a.iter().zip(&b).map(|(x, y)| *x as i32 * *y as i32).sum();
            assert_eq!(dot(&a, &b), plain, "{n}");
            #[cfg(target_arch = "x86_64")]
            assert_eq!(dot_sse2(&a, &b), plain, "{n}");
        }
    }

    #[test]
    fn the_cosine_of_quantized_vectors_is_the_similarity_and_zero_without_one() {
        let query = embed("capture the page as an image").unwrap();
        let texts = [
            "Take a screenshot of the page",
            "Delete a key",
            "List the branches",
        ];
        let near: Vec<f64> = texts
            .iter()
            .map(|t| {
                let vector = quantized(&embed(t).unwrap());
                let one = cosine(&quantized(&query), &vector);
                assert!(
                    (one - similarity(&query, &vector) as f64).abs() < 0.02,
                    "{t}"
                );
                one
            })
            .collect();
        assert!(near[0] > near[1] && near[0] > near[2], "{near:?}");
        assert_eq!(cosine(&quantized(&query), &[]), 0.0);
    }

    /// A new static.bin with the old MODEL_VERSION would leave users' saved tool vectors, made
    /// by the former model, beside query vectors of the new one.
    #[test]
    fn the_model_version_is_raised_with_the_model() {
        let fnv = MODEL_BYTES.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
            (h ^ *b as u64).wrapping_mul(0x0100_0000_01b3)
        });
        assert_eq!(
            (MODEL_VERSION, format!("{fnv:#x}")),
            (2, "0x7fc6ac98c4dc8936".to_string()),
            "assets/find/static.bin changed: raise MODEL_VERSION and record the new checksum here"
        );
    }

    #[test]
    fn the_model_is_shipped_and_parses() {
        let model = model().expect("assets/find/static.bin parses");
        assert!(model.pieces.len() > 10_000);
        assert!(model.dims >= 64);
    }

    #[test]
    fn words_split_into_the_most_probable_pieces() {
        // Common words are one piece; a rare one splits; CJK text splits into known pieces.
        assert_eq!(pieces("the file"), ["\u{2581}the", "\u{2581}file"]);
        let rare = pieces("screnshot");
        assert!(rare.len() >= 2, "{rare:?}");
        assert_eq!(rare.concat(), "\u{2581}screnshot");
        assert!(!pieces("网页截图").is_empty());
        // Identifiers split into words first; nothing known gives no vector.
        let words = pieces("create_mergeRequest");
        assert_eq!(
            words.iter().filter(|p| p.starts_with('\u{2581}')).count(),
            3
        );
        assert_eq!(words.concat(), "\u{2581}create\u{2581}merge\u{2581}Request");
        assert!(embed("").is_none());
        assert!(embed("\u{10FFFF}").is_none());
    }

    #[test]
    fn meaning_outweighs_spelling() {
        // No word in common, yet the directory is nearer than the screenshot.
        let directory = "Create a new directory";
        assert!(
            cos("make a new folder", directory) > cos("take a screenshot of the page", directory)
        );
        assert!(cos("make a new folder", directory) > 0.3);
    }
}
