"""W3C trace context in `params._meta`, as ACP's meta-propagation RFD (and the extensibility
page) reserve it: the root-level keys `traceparent`, `tracestate` and `baggage`, shared with
MCP's instrumentations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from opentelemetry.context import Context
from opentelemetry.propagators.textmap import Getter, TextMapPropagator

__all__ = ["context_from", "with_context"]


class _MetaGetter(Getter[Mapping[str, object]]):
    """Reads `_meta` for a propagator: only string values (a `traceparent: 5` is no header)."""

    def get(self, carrier: Mapping[str, object], key: str) -> list[str] | None:
        value = carrier.get(key)
        return [value] if isinstance(value, str) else None

    def keys(self, carrier: Mapping[str, object]) -> list[str]:
        return list(carrier)


_GETTER = _MetaGetter()


class _OnlyMeta(msgspec.Struct):
    """The `_meta` of params kept raw (an extension method's)."""

    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


_ONLY_META = msgspec.json.Decoder(_OnlyMeta)


def meta_of(params: object) -> Mapping[str, object] | None:
    """The `_meta` object of a message's params: typed params, a dict, or raw JSON."""
    if isinstance(params, msgspec.Struct):
        meta = getattr(params, "meta", None)
    elif isinstance(params, dict):
        meta = params.get("_meta")
    elif isinstance(params, msgspec.Raw):
        try:
            meta = _ONLY_META.decode(params).meta
        except msgspec.DecodeError:  # params that are not an object, or a `_meta` that is not
            return None
    else:
        return None
    return meta if isinstance(meta, dict) else None


def context_from(propagator: TextMapPropagator, params: object) -> Context | None:
    """The trace context the peer sent in the params' `_meta` (None: none, or not valid: a
    malformed `traceparent` is ignored, as W3C trace context says)."""
    meta = meta_of(params)
    if not meta:
        return None
    return propagator.extract(meta, getter=_GETTER)


def with_context(params: Any, carrier: dict[str, str]) -> Any:
    """`params` with the `carrier`'s keys set in its `_meta` (over any already there, as a
    propagator sets headers); the caller's params are not changed (a copy). Params that have
    no `_meta` to carry them (none, a list, raw JSON) are returned as they are."""
    if not carrier:
        return params
    if isinstance(params, msgspec.Struct):
        if "meta" not in params.__struct_fields__:
            return params
        meta = params.meta  # type: ignore[attr-defined]
        merged = {**meta, **carrier} if isinstance(meta, dict) else carrier
        return msgspec.structs.replace(params, meta=merged)
    if isinstance(params, dict):
        meta = params.get("_meta")
        return {**params, "_meta": {**meta, **carrier} if isinstance(meta, dict) else carrier}
    return params
