//! Chinese read through a dictionary: "截图" also says "screenshot". A Chinese task shares no
//! word with an English catalog, nor an English task with a Chinese description, and the static
//! model's reach across languages is too weak for a whole sentence; English words beside the
//! Chinese ones let the lexical ranking (and the model, which knows English best) match them.
//!
//! The words come from CC-CEDICT (`assets/find/zh_en.txt`, made by
//! `scripts/make_chinese_glosses.py`): one sorted line per headword, found by binary search in
//! the embedded text, so nothing is parsed or built when a process starts.

static TEXT: &str = include_str!("../../../assets/find/zh_en.txt");

/// The longest headword, in characters.
const LONGEST: usize = 4;

/// Whether `c` is a Han character (CJK ideographs, their extension A and compatibility block).
pub(super) fn is_han(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF)
}

/// Whether `c` is hiragana or katakana.
pub(super) fn is_kana(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF)
}

/// The English words of every Chinese word in `text`, space-separated, in order; empty when
/// `text` has no Han character the dictionary knows. Each run of Han characters is split at
/// the longest headword from the left; a character no headword starts with is passed over.
pub(super) fn glosses(text: &str) -> String {
    // Japanese (text with kana) writes its own kanji forms ("検索", "気") and gives shared
    // words other meanings: a Chinese dictionary does not read it.
    if !text.chars().any(is_han) || text.chars().any(is_kana) {
        return String::new();
    }
    let mut out = String::new();
    let mut run: Vec<char> = Vec::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if is_han(c) {
            run.push(c);
            continue;
        }
        let mut at = 0;
        while at < run.len() {
            let longest = LONGEST.min(run.len() - at);
            let found = (1..=longest).rev().find_map(|n| {
                let head: String = run[at..at + n].iter().collect();
                line_of(&head).map(|line| (n, line))
            });
            match found {
                Some((n, line)) => {
                    for word in line.split(' ').skip(1) {
                        if !out.is_empty() {
                            out.push(' ');
                        }
                        out.push_str(word);
                    }
                    at += n;
                }
                None => at += 1,
            }
        }
        run.clear();
    }
    out
}

/// The line whose headword is `head`, by binary search over the sorted lines.
fn line_of(head: &str) -> Option<&'static str> {
    let bytes = TEXT.as_bytes();
    let (mut low, mut high) = (0usize, bytes.len());
    while low < high {
        // The line that holds the middle byte.
        let middle = low + (high - low) / 2;
        let start = bytes[low..middle]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(low, |i| low + i + 1);
        let end = bytes[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(bytes.len(), |i| start + i);
        let line = &TEXT[start..end];
        match line.split(' ').next().unwrap_or("").cmp(head) {
            std::cmp::Ordering::Equal => return Some(line),
            std::cmp::Ordering::Less => low = end + 1,
            std::cmp::Ordering::Greater => high = start,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_headword_is_found_and_the_lines_are_sorted() {
        let heads: Vec<&str> = TEXT.lines().map(|l| l.split(' ').next().unwrap()).collect();
        assert!(heads.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        let ends = [heads[0], heads[heads.len() - 1]];
        for head in heads.iter().step_by(101).chain(ends.iter()) {
            assert_eq!(
                line_of(head).map(|l| l.split(' ').next().unwrap()),
                Some(*head)
            );
        }
        assert_eq!(line_of("zzz"), None);
        assert_eq!(line_of(""), None);
    }

    #[test]
    fn a_chinese_run_is_split_at_its_longest_words() {
        // 网页 (web page) and 截图 (screenshot), not 网, 页, 截, 图.
        assert_eq!(glosses("网页截图"), "web page screenshot");
        // Traditional characters too, and words between other text.
        assert_eq!(glosses("請刪除 this 檔案"), "delete file");
        // Particles add no English.
        assert_eq!(glosses("的"), "");
        assert_eq!(glosses("no chinese here"), "");
        assert_eq!(glosses("读取文件"), "read document");
        // Japanese is not read as Chinese.
        assert_eq!(glosses("ファイルを削除"), "");
        assert!(!glosses("削除").is_empty());
    }
}
