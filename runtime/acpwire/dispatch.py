"""Route an incoming call to the handler method the generated method table names."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from msgspec import Raw, UnsetType

from .connection import Dispatch
from .errors import RpcError
from .jsonrpc import Call


def implemented(impl: object, base: type, handler: str) -> bool:
    """Whether `impl` overrides `base`'s default (which only raises NotImplementedError)."""
    return getattr(type(impl), handler, None) is not getattr(base, handler, None)


def handler_dispatch(impl: Any, base: type) -> Dispatch:
    """A Dispatch calling `impl.<handler>(params)` for each call of this protocol surface.

    Methods `impl` does not override get -32601 (requests) or are ignored (notifications).
    `_`-prefixed extension methods go to `impl.extension(method, params)` when it exists;
    other unknown notifications are ignored, unknown requests get -32601.
    """
    handlers: dict[int, Callable[[Any], Awaitable[Any]] | None] = {}  # id(spec) -> bound handler

    async def dispatch(call: Call) -> Any:
        spec = call.spec
        if spec is None:
            extension = getattr(impl, "extension", None)
            if call.method.startswith("_") and extension is not None:
                params: Raw | UnsetType = call.params
                return await extension(call.method, params)
            if call.is_request:
                raise RpcError.method_not_found(call.method)
            return None
        key = id(spec)
        if key not in handlers:
            ok = implemented(impl, base, spec.handler)
            handlers[key] = getattr(impl, spec.handler) if ok else None
        handler = handlers[key]
        if handler is None:
            if call.is_request:
                raise RpcError.method_not_found(call.method)
            return None
        return await handler(call.params)

    return dispatch
