# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""`check_outgoing`: what this side sends, checked against the schema release (development
and tests; never on the hot path).

The fallback walk, strict: no leniency, and an open enum's value or an open union's tag must
be one this schema release knows or begin with `_` (other unknown values are reserved for
future ACP versions: a sender must not invent them).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .fallback import convert

__all__ = ["OutgoingCheckError", "check_outgoing"]

_ENCODER = msgspec.json.Encoder()


class OutgoingCheckError(ValueError):
    """A value we were about to send is not one this schema release allows; the message
    names the JSON path (and, for an open enum or union, the values it allows)."""


def check_outgoing(value: Any, tp: Any = None, path: str = "$") -> None:
    """Check a value before it is sent (development and tests; not on the hot path).

    `value` is a message or any generated struct (checked as `tp`, default its own type) and
    is checked as JSON, the way the peer will read it: required fields present, every value
    of its schema type, and every open enum value / open union tag known to this schema
    release or `_`-prefixed (receiving accepts any, for forward compatibility). Raises
    `OutgoingCheckError` naming the JSON path (under `path`, e.g. `$.params`).
    """
    obj = msgspec.json.decode(_ENCODER.encode(value))
    try:
        convert(obj, type(value) if tp is None else tp, path, strict=True)
    except msgspec.ValidationError as exc:
        raise OutgoingCheckError(f"outgoing value rejected by check_outgoing: {exc}") from None
