#!/usr/bin/env python3
"""Aligns the languages of ferry's static embedding model (assets/find/static.bin) with English
using translation pairs, so a task written in Chinese, Japanese, Russian, German, ... lands near
the English tool descriptions that say the same.

The distilled model (scripts/make_static_model.py) places each piece alone: "读取" and "read"
come out in different corners of the space, and a query in another language shares no piece
with an English catalog. Here the pieces of the other languages are moved so that a
translated sentence's vector (the sum of its pieces', as ferry embeds a text) matches its
English sentence's: a ridge least-squares fit per dimension, solved by conjugate gradients,

    minimise |A_f X + A_k V_k - T|^2 + LAMBDA |X - V_f|^2

A the counts of pieces in the translations (rows: pairs), f the pieces moved, k the pieces
kept, T the English sentences' unit vectors scaled to the translations' current norms.
Only pieces that the other languages use at least FOREIGN_RATIO times as often as the English
side does (the catalogs' msgids and the snapshot tool descriptions of tests/corpus and
benches/heldout) are moved, so English texts keep (nearly all) their vectors; ferry's lexical
ranking, which decides for any query sharing a word with a tool, does not read the model. Deterministic (fixed order, fixed hold-out split).

Source of the pairs: the gettext catalogs (.mo) that Debian packages install under
/usr/share/locale/LANG/LC_MESSAGES (English msgid -> translated msgstr); free software
translations, each under its package's license (GPL/LGPL and others, recorded in
/usr/share/doc/PACKAGE/copyright). The model keeps no text of them, only moved vectors.
The catalogs on the machine that made the committed model: Debian 12 (bookworm) packages
coreutils, findutils, grep, sed, tar, diffutils, bash, make, wget, git, apt, dpkg, glib2.0,
gtk+2.0, systemd, polkit, shadow, procps, psmisc, man-db, gnupg2, gnutls28, binutils,
postgresql-15, iso-codes, xkeyboard-config, PackageKit, appstream, avahi, gstreamer1.0,
shared-mime-info, util-linux, Linux-PAM and the rest found there. Reproduce:

    apt-get install gettext coreutils findutils grep sed tar git wget apt dpkg iso-codes \\
        libglib2.0-0 libgtk2.0-0 systemd policykit-1 postgresql-15 xkeyboard-config  # catalogs
    python3 -m venv /tmp/dvenv && /tmp/dvenv/bin/pip install numpy scipy
    /tmp/dvenv/bin/python scripts/make_static_model.py ... /tmp/static-base.bin  # see there
    /tmp/dvenv/bin/python scripts/align_static_model.py /tmp/static-base.bin assets/find/static.bin

(The committed static.bin before alignment is make_static_model.py's output, and was the base.)
It prints, for held-out pairs of each language, how often the English sentence is the nearest
of 500 to its translation, before and after.
"""
import gettext
import glob
import json
import os
import re
import sys

import numpy as np
import scipy.sparse as sp

from static_model.model_file import Tokenizer, load, pack, ridge_cg, unpack, write

LANGS = ["zh_CN", "zh_TW", "ja", "ko", "ru", "uk", "de", "fr", "es", "it", "pt_BR", "pt", "pl",
         "nl", "sv", "cs", "tr"]
LAMBDA = 1.0
ITERATIONS = 60
# A piece is moved when the other languages use it this many times more than English does.
FOREIGN_RATIO = 8.0
MIN_USES = 2


def clean(text):
    """A catalog string as a sentence: no format directives, accelerators or markup."""
    text = re.sub(r"%(\d+\$)?[-+ #0]*\d*(\.\d+)?[hlLqjzt]*[a-zA-Z%]", " ", text)
    text = re.sub(r"\{[^}]*\}|<[^>]*>|\\[nt]|[_&](?=\w)", " ", text)
    return " ".join(text.split())


def pairs_of(lang):
    """(English, translation) pairs of every catalog of `lang`, in a fixed order."""
    out = []
    seen = set()
    for mo in sorted(glob.glob(f"/usr/share/locale/{lang}/LC_MESSAGES/*.mo")):
        try:
            with open(mo, "rb") as f:
                catalog = gettext.GNUTranslations(f)._catalog
        except Exception:
            continue
        for key in sorted(catalog, key=str):
            if not isinstance(key, str) or not key:
                continue
            source, target = clean(key), clean(catalog[key])
            if not (3 <= len(source) <= 200) or not target or source == target:
                continue
            if len(source.split()) < 2 or not re.search("[A-Za-z]{3}", source):
                continue
            if (source, target) in seen:
                continue
            seen.add((source, target))
            out.append((source, target))
    return out


def rows(tokenize, texts, count):
    """The piece counts of each text, as a sparse matrix."""
    indptr, indices = [0], []
    for t in texts:
        indices.extend(tokenize(t))
        indptr.append(len(indices))
    data = np.ones(len(indices), np.float32)
    m = sp.csr_matrix((data, np.array(indices, np.int64), np.array(indptr)), (len(texts), count))
    m.sum_duplicates()
    return m


def unit(m):
    return m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-9)


def nearest_rate(foreign, english, size=500):
    """How often a translation's nearest English sentence, among `size`, is its own."""
    hits = total = 0
    for start in range(0, len(foreign) - size + 1, size):
        f, e = unit(foreign[start:start + size]), unit(english[start:start + size])
        hits += int((np.argmax(f @ e.T, axis=1) == np.arange(size)).sum())
        total += size
    return hits / max(total, 1)


def main(source, target):
    pieces, scores, scales, packed, dims, _ = load(source)
    count = len(pieces)
    vectors = unpack(scales, packed)
    tokenize = Tokenizer(pieces, scores)
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    english_texts = []
    for folder in ["tests/corpus", "benches/heldout"]:
        for name in sorted(os.listdir(os.path.join(root, folder))):
            if name.endswith(".tools.json"):
                listing = json.load(open(os.path.join(root, folder, name)))
                for tool in listing["tools"] if isinstance(listing, dict) else listing:
                    english_texts.append(f"{tool.get('name', '')}. {tool.get('description') or ''}")
    all_pairs = []
    for lang in LANGS:
        pairs = pairs_of(lang)
        print(f"{lang}: {len(pairs)} pairs", flush=True)
        all_pairs.extend((lang, s, t) for s, t in pairs)
    # Every tenth pair is held out for the figures, never fitted.
    held = [p for i, p in enumerate(all_pairs) if i % 10 == 0]
    fit = [p for i, p in enumerate(all_pairs) if i % 10 != 0]
    sources = sorted({s for _, s, _ in all_pairs})
    english = rows(tokenize, english_texts + sources, count)
    A = rows(tokenize, [t for _, _, t in fit], count)
    english_uses = np.asarray(english.sum(axis=0)).ravel()
    foreign_uses = np.asarray(A.sum(axis=0)).ravel()
    moved = np.where((foreign_uses >= MIN_USES) & (foreign_uses > FOREIGN_RATIO * english_uses))[0]
    kept = np.setdiff1d(np.arange(count), moved)
    print(f"{len(fit)} pairs fitted, {len(held)} held out; moving {len(moved)} of {count} pieces",
          flush=True)

    E = rows(tokenize, [s for _, s, _ in fit], count) @ vectors
    current = A @ vectors
    T = unit(E) * np.linalg.norm(current, axis=1, keepdims=True)
    Af, Ak = A[:, moved].tocsr(), A[:, kept].tocsr()
    rhs = Af.T @ (T - Ak @ vectors[kept]) + LAMBDA * vectors[moved]

    def apply(x):
        return Af.T @ (Af @ x) + LAMBDA * x

    x, rr = ridge_cg(apply, rhs, vectors[moved].astype(np.float64), ITERATIONS)
    print(f"residual {np.sqrt(rr.sum()):.4f} after {ITERATIONS} steps", flush=True)
    aligned = vectors.copy()
    aligned[moved] = x.astype(np.float32)

    for lang in LANGS:
        mine = [p for p in held if p[0] == lang]
        if len(mine) < 500:
            continue
        F = rows(tokenize, [t for _, _, t in mine], count)
        En = rows(tokenize, [s for _, s, _ in mine], count) @ vectors
        before = nearest_rate(F @ vectors, En)
        after = nearest_rate(F @ aligned, En)
        print(f"{lang}: held-out translation nearest its English {before:.3f} -> {after:.3f}")

    # 4 bits per value with a scale per row; the rows not moved keep their bytes.
    new_scales = scales.copy()
    new_packed = packed.copy()
    new_scales[moved], new_packed[moved] = pack(aligned[moved])
    size = write(target, pieces, scores, new_scales, new_packed)
    print(f"{target}: {count} pieces x {dims} dims, {len(moved)} moved, {size} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: align_static_model.py BASE.bin TARGET.bin")
    main(*sys.argv[1:])
