"""Route an incoming call to the handler method the generated method table names."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp_schema import MessageCodec

from ..errors import RpcError
from .connection import Dispatch
from .jsonrpc import Call

Handler = Callable[[Any], Awaitable[Any]]

log = logging.getLogger("acpwire")


def implemented(impl: object, base: type, handler: str) -> bool:
    """Whether `impl` overrides `base`'s default (which only raises NotImplementedError)."""
    return overrides(type(impl), base, handler)


def overrides(cls: type, base: type, handler: str) -> bool:
    """Whether the class `cls` overrides `base`'s default handler `handler`."""
    return getattr(cls, handler, None) is not getattr(base, handler, None)


def handler_dispatch(impl: Any, base: type, codec: MessageCodec | None = None) -> Dispatch:
    """A Dispatch calling `impl.<handler>(params)` for each call of this protocol surface.

    `codec`: the connection's codec from now on; a call of one of its methods that was read
    before it was switched in (its params still raw) is decoded with it first.

    Methods `impl` does not override get -32601 (requests) or are ignored (notifications).
    `_`-prefixed extension methods go to `impl.extension(method, params)` when it exists;
    other unknown notifications are ignored, unknown requests get -32601.

    It returns the handler's coroutine rather than awaiting it, so a call costs no extra
    coroutine, and None for an ignored notification; errors of its own (-32601) are raised
    before anything is awaited.
    """
    handlers: dict[str, Handler | None] = {}  # handler name -> bound handler, None: not ours

    def resolve(name: str) -> Handler | None:
        handler = getattr(impl, name) if implemented(impl, base, name) else None
        handlers[name] = handler
        return handler

    def dispatch(call: Call) -> Awaitable[Any] | None:
        spec = call.spec
        if spec is None:
            if codec is None or call.method not in codec.inbound:
                return _unknown_method(impl, call)
            call = retyped(call, codec)
            spec = call.spec
            assert spec is not None
        name = spec.handler
        handler = handlers[name] if name in handlers else resolve(name)
        if handler is not None:
            if spec.kind == "request" and call.id is UNSET:
                _request_without_id(call)
                return None
            return handler(call.message.params)  # type: ignore[union-attr]
        if call.id is not UNSET:
            raise RpcError.method_not_found(call.method)
        return None

    return dispatch


def _request_without_id(call: Call) -> None:
    """A request method sent as a notification is not run: nobody waits for its answer, and
    its handler would block the reader, which runs notifications in order."""
    log.warning(
        "ignored %s sent without an id: it is a request, the peer must send an id", call.method
    )


def retyped(call: Call, codec: MessageCodec) -> Call:
    """`call`, read with params kept raw, decoded as `codec` decodes its method."""
    try:
        message = codec.decode_envelope(msgspec.json.encode(call.message))
    except msgspec.ValidationError as exc:
        raise RpcError.invalid_params(str(exc)) from None
    # A request or notification in, the same kind out.
    return Call(message, codec.inbound[call.method], call.id)  # type: ignore[arg-type]


def _unknown_method(impl: Any, call: Call) -> Awaitable[Any] | None:
    extension = getattr(impl, "extension", None)
    if call.method.startswith("_") and extension is not None:
        params: Raw | UnsetType = call.params
        result: Awaitable[Any] = extension(call.method, params)
        return result
    if call.id is not UNSET:
        raise RpcError.method_not_found(call.method)
    return None
