"""Python names for schema names: snake_case attributes, CamelCase classes, no keyword clashes."""

from __future__ import annotations

import keyword
import re

_WORD_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NON_IDENT = re.compile(r"[^0-9a-zA-Z_]+")
_RESERVED_ATTRS = frozenset({"self", "cls"})


def _safe(name: str) -> str:
    if not name or name[0].isdigit():
        name = "_" + name
    if keyword.iskeyword(name) or keyword.issoftkeyword(name) or name in _RESERVED_ATTRS:
        name += "_"
    return name


def snake_case(wire_name: str) -> str:
    """`toolCallId` -> `tool_call_id`; `_meta` -> `meta`; `type` stays `type`."""
    stripped = wire_name.lstrip("_")
    words = _WORD_BOUNDARY.sub("_", stripped)
    words = _NON_IDENT.sub("_", words).strip("_").lower()
    return _safe(words or "field")


def camel_case(text: str) -> str:
    """`agent_message_chunk` -> `AgentMessageChunk`; `resource_link` -> `ResourceLink`."""
    parts = [p for p in _NON_IDENT.split(text.replace("_", " ").replace("-", " ")) if p]
    joined = "".join(p[:1].upper() + p[1:] for p in " ".join(parts).split())
    return _safe(joined or "Value")


def constant_name(value: str | int, title: str | None = None) -> str:
    """An UPPER_CASE constant name for an enum value."""
    text = title if title else str(value)
    if isinstance(value, int) and not title:
        text = f"value_{value}".replace("-", "minus_")
    name = _NON_IDENT.sub("_", _WORD_BOUNDARY.sub("_", text)).strip("_").upper()
    return _safe(name or "VALUE")
