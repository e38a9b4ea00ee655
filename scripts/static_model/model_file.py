"""What the static-model scripts share: ferry's model file (assets/find/static.bin, read by
src/tokens/find/dense.rs), ferry's way of splitting a text into its pieces, and the ridge
solver the fitting scripts use. make_static_model.py writes a model, align_static_model.py and
distill_static_model.py read one and write another.

File layout (little-endian): b"FSM1", u32 pieces, u32 dims, then per piece u8 length and
its UTF-8 bytes (U+2581 marks a word start), then per piece an i8 unigram score (tenths
of a nat), then per piece an f32 row scale, then per piece dims/2 bytes of 4-bit values
(low nibble first, value - 8 times the scale).
"""
import struct

import numpy as np

MAGIC = b"FSM1"
TEXT_BYTES = 600
WORD_START = "\u2581"


def load(path):
    """pieces, scores (nats), row scales, packed rows, dims, and the bytes up to the scales."""
    data = open(path, "rb").read()
    assert data[:4] == MAGIC, "not a static model"
    count, dims = struct.unpack_from("<II", data, 4)
    at = 12
    pieces = []
    for _ in range(count):
        n = data[at]
        pieces.append(data[at + 1: at + 1 + n].decode("utf-8"))
        at += 1 + n
    scores = np.frombuffer(data, np.int8, count, at).astype(np.float32) / 10.0
    at += count
    scales = np.frombuffer(data, "<f4", count, at).copy()
    at += 4 * count
    packed = np.frombuffer(data, np.uint8, count * dims // 2, at).reshape(count, dims // 2)
    head = data[: at]
    return pieces, scores, scales, packed, dims, head


def unpack(scales, packed, dtype=np.float32):
    """The rows as vectors of `dtype`."""
    low = (packed & 0x0F).astype(dtype) - 8.0
    high = (packed >> 4).astype(dtype) - 8.0
    q = np.empty((packed.shape[0], packed.shape[1] * 2), dtype)
    q[:, 0::2] = low
    q[:, 1::2] = high
    return q * scales.astype(dtype)[:, None]


def pack(vectors):
    """Rows at 4 bits per value, symmetric, a scale per row: (scales, packed)."""
    scale = np.abs(vectors).max(axis=1) / 7.0
    scale[scale == 0] = 1.0
    q = np.clip(np.rint(vectors / scale[:, None]), -7, 7).astype(np.int8) + 8
    return scale, (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)


def write(target, pieces, scores, scales, packed):
    """Writes a model file; `scores` in nats. Returns its size in bytes."""
    out = bytearray(MAGIC)
    out += struct.pack("<II", len(pieces), packed.shape[1] * 2)
    for p in pieces:
        raw = p.encode("utf-8")
        out.append(len(raw))
        out += raw
    out += np.clip(np.rint(np.asarray(scores) * 10), -127, 0).astype(np.int8).tobytes()
    out += np.asarray(scales).astype("<f4").tobytes()
    out += packed.tobytes()
    with open(target, "wb") as f:
        f.write(out)
    return len(out)


def ridge_cg(apply, rhs, x, iterations, tolerance=None):
    """Solves apply(x) = rhs by conjugate gradients, every column at once (each its own
    system), from `x`; stops early once every column's squared residual is below
    `tolerance`, if given. Returns x and the squared residuals."""
    r = rhs - apply(x)
    p = r.copy()
    rr = (r * r).sum(axis=0)
    for _ in range(iterations):
        ap = apply(p)
        alpha = rr / np.maximum((p * ap).sum(axis=0), 1e-30)
        x += alpha * p
        r -= alpha * ap
        rr_new = (r * r).sum(axis=0)
        if tolerance is not None and rr_new.max() < tolerance:
            return x, rr_new
        p = r + (rr_new / np.maximum(rr, 1e-30)) * p
        rr = rr_new
    return x, rr


class Tokenizer:
    """ferry's split (src/tokens/find/dense.rs): the same normalisation and Viterbi search."""

    def __init__(self, pieces, scores):
        self.ids = {p: i for i, p in enumerate(pieces)}
        self.scores = scores
        self.longest = max(len(p) for p in pieces)  # in characters, a bound on bytes' search
        self.cache = {}

    @staticmethod
    def normalized(text):
        """`_`, and `-` after a lower-case letter, are spaces; a capital after a lower-case
        letter starts a word; full-width forms are narrowed; at most TEXT_BYTES bytes."""
        out = []
        size = 0
        previous_lower = False
        for c in text:
            if size >= TEXT_BYTES:
                break
            o = ord(c)
            if 0xFF01 <= o <= 0xFF5E:
                c = chr(o - 0xFEE0)
            elif o == 0x3000:
                c = " "
            if c == "_" or (c == "-" and previous_lower):
                out.append(" ")
                size += 1
                previous_lower = False
                continue
            if c.isupper() and previous_lower:
                out.append(" ")
                size += 1
            previous_lower = c.islower()
            out.append(c)
            size += len(c.encode("utf-8"))
        return "".join(out)

    def word(self, word):
        hit = self.cache.get(word)
        if hit is not None:
            return hit
        text = WORD_START + word
        n = len(text)
        best = [-np.inf] * (n + 1)
        back = [(0, None)] * (n + 1)
        best[0] = 0.0
        for i in range(n):
            if best[i] == -np.inf:
                continue
            for e in range(i + 1, min(n, i + self.longest) + 1):
                pid = self.ids.get(text[i:e])
                if pid is not None:
                    s = best[i] + self.scores[pid]
                    if s > best[e]:
                        best[e] = s
                        back[e] = (i, pid)
            unknown = best[i] - 30.0
            if unknown > best[i + 1]:
                best[i + 1] = unknown
                back[i + 1] = (i, None)
        out = []
        i = n
        while i > 0:
            prev, pid = back[i]
            if pid is not None and text[prev:i] != WORD_START:
                out.append(pid)
            i = prev
        out.reverse()
        self.cache[word] = out
        return out

    def __call__(self, text):
        ids = []
        for w in self.normalized(text).split():
            ids.extend(self.word(w))
        return ids
