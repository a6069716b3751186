"""Forward-compatible traffic for the codec benchmark: what a newer or looser peer sends.

One `session/update` line in `EVERY` of the corpus is rewritten, in turn, into:
- an unknown update variant (`sessionUpdate: "_next_<tag>"`): acpwire -> `UnknownSessionUpdate`;
- an unknown content block (`type: "_next_text"`): acpwire -> `UnknownContentBlock`;
- a malformed `_meta` (a number; the schema says default-on-error): acpwire drops it.

The hand-written reference is strict: it rejects all three. Its best case here is "reference +
dict fallback": a line its Structs reject is decoded untyped (`msgspec.json.decode`), the
cheapest thing a strict binding can do short of failing. acpwire keeps such lines typed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import msgspec

from acp_schema import UNSET, OpenVariant

EVERY = 100
KINDS = ("unknown update variant", "unknown content block", "malformed _meta (default-on-error)")

_UPDATE_TAG = re.compile(rb'"sessionUpdate":"([a-z_]+)"')
_TEXT_BLOCK = b'"content":{"type":"text"'


def rewrite(line: bytes, kind: int) -> bytes | None:
    """The line as a newer/looser peer might send it, or None if this kind does not apply."""
    if kind == 0:
        return _UPDATE_TAG.sub(rb'"sessionUpdate":"_next_\1"', line, count=1)
    if kind == 1:
        if _TEXT_BLOCK not in line:
            return None
        return line.replace(_TEXT_BLOCK, b'"content":{"type":"_next_text"', 1)
    return line.replace(b'"update":{', b'"update":{"_meta":42,', 1)


def mix(lines: list[bytes], labels: list[tuple[str, str, str]]) -> tuple[list[bytes], list[int]]:
    """The corpus with one session/update in EVERY rewritten (kinds in turn); the indexes of
    the rewritten lines."""
    mixed, changed = list(lines), []
    updates = [i for i, (_, method, _) in enumerate(labels) if method == "session/update"]
    kind = 0
    for i in updates[EVERY // 2 :: EVERY]:
        for attempt in range(len(KINDS)):  # a line without a text block takes the next kind
            new = rewrite(lines[i], (kind + attempt) % len(KINDS))
            if new is not None:
                mixed[i] = new
                changed.append(i)
                break
        kind = (kind + 1) % len(KINDS)
    return mixed, changed


def check(decoded: Any, line: bytes) -> str | None:
    """acpwire's typed reading of a rewritten line, or what is wrong with it."""
    update = decoded.params.update
    if b'"_next_text"' in line:
        ok = any(v.tag == "_next_text" for v in _open_variants(update))
    elif b'"sessionUpdate":"_next_' in line:
        ok = isinstance(update, OpenVariant) and update.tag.startswith("_next_")
    else:
        ok = update.meta is UNSET  # a non-object `_meta` is dropped (default-on-error)
    return None if ok else f"not read as expected: {line[:100]!r}"


def _open_variants(value: Any) -> list[OpenVariant]:
    """Every OpenVariant in a decoded value (structs, lists, dicts), outermost first."""
    if isinstance(value, OpenVariant):
        return [value]
    if isinstance(value, msgspec.Struct):
        value = [getattr(value, f) for f in value.__struct_fields__]
    elif isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [v for item in value for v in _open_variants(item)]
    return []


def with_dict_fallback(decode: Callable[[bytes, Any], Any], lookup: Any) -> Callable[[bytes], Any]:
    """A strict decoder that falls back to an untyped dict for what it rejects."""

    def run(line: bytes) -> Any:
        try:
            return decode(line, lookup)
        except msgspec.ValidationError:
            return msgspec.json.decode(line)

    return run
