"""The envelope of a line that cannot be decoded whole: its top-level `id` and `method`, found
without decoding the rest. A line nested too deeply (msgspec's decoder gives up at a depth
that depends on the Python stack it runs on, so a valid request with deep params can reach
it), and the head of a line over the length limit (the rest of it was never kept)."""

from __future__ import annotations

import re

import msgspec

_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[][{},:]', re.DOTALL)
"""Strings and the structural characters; numbers, literals and whitespace are skipped."""

_SCALAR = re.compile(rb'\s*("(?:[^"\\]|\\.)*"|[^\s,:{}\[\]"]+)', re.DOTALL)
"""A string, number, `true`, `false` or `null` (an object or array is no scalar)."""


def top_level_scalars(
    data: bytes, names: frozenset[bytes], *, cut: bool = False
) -> dict[str, object]:
    """The members of the top-level JSON object in `data` named in `names` (JSON keys, as
    `b'"id"'`) whose values are strings, numbers, booleans or null. Linear in `data`, no
    recursion: one scan of its strings and brackets.

    `cut`: `data` is the start of a longer line, so a value running to its end may be cut
    short (`12` of `1234`) and is not taken."""
    found: dict[str, object] = {}
    depth = 0
    expecting_key = False
    key = b""
    for match in _TOKEN.finditer(data):
        token = match.group()
        if token[:1] == b'"':
            if depth == 1 and expecting_key:
                key, expecting_key = token, False
        elif token in (b"{", b"["):
            depth += 1
            expecting_key = token == b"{" and depth == 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                break
        elif token == b",":
            expecting_key = depth == 1
        elif depth == 1 and key in names:  # the ":" after a wanted key
            value = _SCALAR.match(data, match.end())
            if value is not None and not (cut and value.end() == len(data)):
                try:
                    found[msgspec.json.decode(key)] = msgspec.json.decode(value.group(1))
                except msgspec.DecodeError:
                    pass
    return found
