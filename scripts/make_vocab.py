#!/usr/bin/env python3
"""Converts a tiktoken vocabulary (`<base64 token> <rank>` per line, ranks 0..n in order) into
ferry's compact form: each token as one length byte then its bytes, in rank order.

The compact form is 2.3 MB for o200k_base and cl100k_base together instead of 5.3 MB of
base64 text, which keeps ferry's binary under 10 MB. Usage:

    scripts/make_vocab.py ~/.cargo/registry/src/*/tiktoken-rs-*/assets/o200k_base.tiktoken \
        assets/tokenizers/o200k_base.bin
"""
import base64
import sys


def main(source: str, target: str) -> None:
    out = bytearray()
    with open(source) as lines:
        for expected, line in enumerate(lines):
            token, rank = line.split()
            if int(rank) != expected:
                sys.exit(f"{source}: ranks are not contiguous at line {expected + 1}")
            raw = base64.b64decode(token)
            if not 0 < len(raw) < 256:
                sys.exit(f"{source}: token of rank {rank} has {len(raw)} bytes")
            out.append(len(raw))
            out += raw
    with open(target, "wb") as f:
        f.write(out)
    print(f"{target}: {expected + 1} tokens, {len(out)} bytes")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: make_vocab.py SOURCE.tiktoken TARGET.bin")
    main(sys.argv[1], sys.argv[2])
