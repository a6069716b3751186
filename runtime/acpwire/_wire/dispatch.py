"""Route an incoming call to the handler method the generated method table names, and check
what the handler returns against its method's result type."""

from __future__ import annotations

import functools
import logging
import types
import typing
from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp_schema import Codec, MessageCodec, MethodSpec, surface_of

from ..errors import RpcError
from .jsonrpc import Call

Dispatch = Callable[[Call], Awaitable[Any] | None]
"""Starts one incoming call: returns what to await for its result (ignored for notifications),
or None when there is nothing to run (an ignored notification; no awaitable built for it)."""

Handler = Callable[[Any], Awaitable[Any]]


class DirectRoute(msgspec.Struct, frozen=True, gc=False):
    """The notifications of `spec` started by `start(params)` as a dispatch would start them,
    without their call (`Connection.switch_to`: a client's `session/update`). A Struct:
    defined in microseconds at import (cold start)."""

    spec: MethodSpec[Any, None]
    start: Callable[[Any], Awaitable[Any] | None]


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


# --------------------------------------------------------------------------- results


class ResultShape(msgspec.Struct, frozen=True):  # not a NamedTuple: defining it compiles no code
    """What a handler may return for a method: instances of `classes`, or None for `empty`."""

    classes: tuple[type, ...]
    empty: object | None  # the result with every field at its default, when there is one


@functools.cache
def result_shape(result_type: Any) -> ResultShape:
    """The classes of a result type (a Struct, or a union of them under `Annotated`)."""
    if typing.get_origin(result_type) is typing.Annotated:
        return result_shape(typing.get_args(result_type)[0])
    if typing.get_origin(result_type) in (typing.Union, types.UnionType):
        classes = tuple(
            c for arg in typing.get_args(result_type) for c in result_shape(arg).classes
        )
        return ResultShape(classes, None)
    if not isinstance(result_type, type):
        return ResultShape((object,), None)  # nothing checkable
    try:
        empty = result_type() if issubclass(result_type, msgspec.Struct) else None
    except TypeError:  # a required field
        empty = None
    return ResultShape((result_type,), empty)


RESULT_SHAPES: dict[Codec[Any], ResultShape] = {}
"""`result_shape` of each method's result by its codec (`result_shape_of`): a dict lookup by
identity, where `result_shape(codec.type)` is a property call and a hash of the type."""


def result_shape_of(codec: Codec[Any]) -> ResultShape:
    """The shape of what `codec` decodes, kept in RESULT_SHAPES."""
    shape = RESULT_SHAPES[codec] = result_shape(codec.type)
    return shape


class WrongResult(Exception):
    """A handler returned something that is not its method's result: a bug on this side."""

    def __init__(self, call: Call, got: object, expected: str, got_name: str | None = None) -> None:
        handler = call.spec.handler if call.spec is not None else "extension"
        what = "None" if got is None else f"a {got_name or type(got).__qualname__}"
        super().__init__(
            f"the handler `{handler}` of {call.method} returned {what}; it must return {expected}"
        )


def checked_result(call: Call, shape: ResultShape, result: Any) -> Any:
    """The result to send: `result` when it is of the method's result type; the empty
    result for None where the result has no required field (`{}`). `WrongResult` otherwise."""
    if isinstance(result, shape.classes):
        return result
    if result is None and shape.empty is not None:
        return shape.empty
    names = [cls.__qualname__ for cls in shape.classes]
    if type(result).__qualname__ in names:  # the class of the same name of another surface
        expected = " or ".join(f"a {_of_surface(cls)}" for cls in shape.classes)
        raise WrongResult(call, result, expected, _of_surface(type(result)))
    raise WrongResult(call, result, " or ".join(f"a {name}" for name in names))


def _of_surface(cls: type) -> str:
    """`CloseSessionResponse of acp_schema.v2.unstable`: a class named with its surface."""
    surface = surface_of(cls)
    return cls.__qualname__ + (f" of {surface.name}" if surface is not None else "")
