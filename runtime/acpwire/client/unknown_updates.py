"""Session updates of a type these bindings do not know: delivered, never dropped.

v2's `SessionUpdate` is an open union (an unknown `sessionUpdate` tag decodes as
`v2.UnknownSessionUpdate`), but v1's is closed: the v1 schema has no catch-all variant, so a
v1 `session/update` from an agent newer than this client, or a vendor extension, failed to
decode and was dropped without a word. `open_session_updates` gives the client a codec whose
`session/update` decodes such an update as `V1UnknownSessionUpdate` (the update object as
received) and logs a WARNING once per tag on the `acpwire` logger.

Only an unknown tag takes this path, and only after the strict decode failed: the normal
path is the same code as before. The bindings themselves stay closed for v1; were the v1
generator to emit an `UnknownSessionUpdate` (an `OpenVariant` named in the union's
`UnionInfo`), this module would find the union open and change nothing.
"""

from __future__ import annotations

import functools
import logging
import typing
from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

import acp_schema.v2.methods as methods
from acp_schema import Codec, MessageCodec, OpenVariant
from acp_schema._runtime.schema import UnionInfo

__all__ = ["V1UnknownSessionUpdate", "open_session_updates"]

log = logging.getLogger("acpwire")

SESSION_UPDATE = methods.SESSION_UPDATE.name  # the same name in v1


class V1UnknownSessionUpdate(OpenVariant):
    """A v1 session update whose `sessionUpdate` tag these bindings do not know (an agent
    newer than this client, or a `_`-prefixed extension): the update object exactly as
    received (a dict: it keeps every key and encodes back unchanged); `.tag` is its type.

    The client delivers it to the session's subscribers and `session_update` handler like any
    update; `V1SessionState` keeps it in `unknown`.
    """

    tag_field: ClassVar[str] = "sessionUpdate"
    """The wire field naming the variant, `sessionUpdate`."""


class _OpenUpdatesCodec(Codec[Any]):
    """The `session/update` params codec: the surface's own first; when it fails, the same
    params read with an open update union (an unknown tag -> V1UnknownSessionUpdate)."""

    __slots__ = ("_open", "_report")

    def __init__(self, closed: Codec[Any], open: Codec[Any], report: Callable[[str], None]):
        super().__init__(closed.type)
        self._open = open
        self._report = report

    def decode(self, data: bytes | bytearray | memoryview | str) -> Any:
        try:
            return super().decode(data)
        except msgspec.ValidationError as exc:
            return self._reopen(self._open.decode, data, exc)

    def convert(self, obj: Any) -> Any:
        try:
            return super().convert(obj)
        except msgspec.ValidationError as exc:
            return self._reopen(self._open.convert, obj, exc)

    def _reopen(self, read: Callable[[Any], Any], data: Any, exc: Exception) -> Any:
        try:
            shell = read(data)
        except msgspec.ValidationError:
            raise exc from None  # not (only) an unknown tag: the surface's own error
        update = shell.update
        if not isinstance(update, V1UnknownSessionUpdate):
            raise exc
        self._report(update.tag)
        return self.type(**msgspec.structs.asdict(shell))


@functools.cache
def _open_params(params: type[msgspec.Struct]) -> Codec[Any] | None:
    """Reads a struct like `params` whose `update` union decodes an unknown tag as
    `V1UnknownSessionUpdate`; None when the union is open already (v2). Built once per type."""
    fields = []
    for field in msgspec.structs.fields(params):
        tp = field.type
        if field.name == "update":
            union, *metadata = typing.get_args(tp)
            info = next(m for m in metadata if isinstance(m, UnionInfo))
            if info.unknown is not None:
                return None
            tp = typing.Annotated[
                union, msgspec.structs.replace(info, unknown=V1UnknownSessionUpdate)
            ]
        default = msgspec.field(name=field.encode_name)
        if not field.required:
            default = msgspec.field(default=field.default, name=field.encode_name)
        fields.append((field.name, tp, default))
    lenient = {"__acp_lenient__": getattr(params, "__acp_lenient__", {})}
    return Codec(msgspec.defstruct(params.__name__, fields, namespace=lenient, kw_only=True))


def open_session_updates(codec: MessageCodec, peer: str) -> MessageCodec:
    """`codec` (a client's, of one surface) with a `session/update` that decodes an update
    of an unknown tag as `V1UnknownSessionUpdate` instead of failing, logging a WARNING the
    first time each tag arrives (`peer` names the agent). `codec` itself when its update
    union is open already."""
    spec = codec.inbound.get(SESSION_UPDATE)
    open_params = None if spec is None else _open_params(spec.params.type)
    if spec is None or open_params is None:
        return codec
    seen: set[str] = set()

    def report(tag: str) -> None:
        if tag not in seen:
            seen.add(tag)
            log.warning(
                "%s sent a session/update of type %r, which these bindings do not know: "
                "delivered to subscribers as V1UnknownSessionUpdate (logged once per type)",
                peer,
                tag,
            )

    params = _OpenUpdatesCodec(spec.params, open_params, report)
    inbound = {**codec.inbound, SESSION_UPDATE: msgspec.structs.replace(spec, params=params)}
    return MessageCodec(inbound, codec.outbound, codec.error)
