# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""JSON-RPC 2.0 messages: envelopes, the generated per-method messages' base, method tables
(`MethodSpec`), and `MessageCodec`, which decodes a whole line of one protocol surface."""

from __future__ import annotations

import functools
import operator
import typing
from collections.abc import Callable, Mapping
from typing import Any, ClassVar, Generic, Literal, TypeVar

import msgspec
from msgspec import UNSET, Raw, UnsetType

from .codec import BEYOND_MSGSPEC, Codec, undecodable
from .fallback import rebase

__all__ = [
    "Caller",
    "ErrorResponse",
    "Message",
    "MessageCodec",
    "MethodMessage",
    "MethodSpec",
    "Notification",
    "Request",
    "Response",
    "decode_message",
    "encode_message",
]

P = TypeVar("P")
R = TypeVar("R")
E = TypeVar("E")


class Request(msgspec.Struct, Generic[P], kw_only=True, gc=False):
    """A JSON-RPC 2.0 request."""

    jsonrpc: Literal["2.0"] = "2.0"
    """The protocol version, always `"2.0"`."""
    id: int | str | None
    """The id its response echoes."""
    method: str
    """The method name."""
    params: P | UnsetType = UNSET
    """The method's params (UNSET: omitted)."""


class Notification(msgspec.Struct, Generic[P], kw_only=True, gc=False):
    """A JSON-RPC 2.0 notification (a request without an id; no response)."""

    jsonrpc: Literal["2.0"] = "2.0"
    """The protocol version, always `"2.0"`."""
    method: str
    """The method name."""
    params: P | UnsetType = UNSET
    """The method's params (UNSET: omitted)."""


class Response(msgspec.Struct, Generic[R], kw_only=True, gc=False):
    """A successful JSON-RPC 2.0 response."""

    jsonrpc: Literal["2.0"] = "2.0"
    """The protocol version, always `"2.0"`."""
    id: int | str | None
    """The id of the request it answers."""
    result: R
    """The method's result."""


class ErrorResponse(msgspec.Struct, Generic[E], kw_only=True, gc=False):
    """A JSON-RPC 2.0 error response; `error` is the schema's `Error` type."""

    jsonrpc: Literal["2.0"] = "2.0"
    """The protocol version, always `"2.0"`."""
    id: int | str | None
    """The id of the request it answers (None when that id could not be read)."""
    error: E
    """What went wrong: the schema's `Error` (code, message, optional data)."""


class Envelope(msgspec.Struct, kw_only=True, gc=False):
    """Any JSON-RPC message with its payload kept as raw bytes until the method is known."""

    jsonrpc: str | UnsetType = UNSET
    id: int | str | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: Raw | UnsetType = UNSET
    result: Raw | UnsetType = UNSET
    error: Raw | UnsetType = UNSET


ENVELOPE_DECODER: msgspec.json.Decoder[Envelope] = msgspec.json.Decoder(Envelope)


class MethodMessage(msgspec.Struct, kw_only=True, gc=False, tag_field="method"):
    """Base of the generated per-method messages (`SessionUpdateMessage`, ...).

    Tagged by `method`, so one msgspec decoder reads a whole request or notification,
    params included, in a single pass; `encode_message` gives the complete JSON-RPC line.
    `id` is UNSET for a notification.
    """

    jsonrpc: Literal["2.0"]  # required on the wire, so it is required here too
    """The protocol version, always `"2.0"`."""
    id: int | str | UnsetType | None = UNSET
    """The request's id; UNSET for a notification."""
    method: ClassVar[str]  # the tag, as a class attribute for speed
    """The method name (the tag the message class is decoded by)."""


class MethodSpec(
    msgspec.Struct, Generic[P, R], frozen=True
):  # a Struct, not a dataclass: defined in microseconds at import (cold start)
    """One row of a generated method table."""

    name: str
    """The method name, e.g. `session/prompt`."""
    side: str
    """The side that handles it: "agent", "client" or "protocol"."""
    kind: Literal["request", "notification"]
    """Whether it is answered (request) or not (notification)."""
    params: Codec[P]
    """Decodes and encodes its params."""
    result: Codec[R] | None
    """Decodes and encodes its result (None for a notification)."""
    message: type[MethodMessage]
    """Its generated message class (`SessionPromptMessage`, ...)."""
    handler: str
    """The handler method's name, e.g. `session_prompt`."""


class Caller(typing.Protocol):
    """What the generated peer proxies (`ClientPeer`, `AgentPeer`) send through: a connection."""

    async def request(self, spec: MethodSpec[P, R], params: P) -> R:
        """Send the request `spec` describes and return its decoded result."""
        ...

    async def notify(self, spec: MethodSpec[P, None], params: P) -> None:
        """Send the notification `spec` describes."""
        ...


ResultLookup = Callable[[int | str | None], str | None]

Message = MethodMessage | Request[Any] | Notification[Any] | Response[Any] | ErrorResponse[Any]


class MessageCodec:
    """Decodes JSON-RPC lines of one protocol surface into typed messages.

    A request or notification of a known method becomes its per-method message
    (`SessionUpdateMessage`, ...) with typed params; an extension method a generic
    `Request`/`Notification` with `msgspec.Raw` params; a response a `Response` (typed when
    `result_method(id)` names the method it answers) or `ErrorResponse`.

    Fast path: one msgspec pass over the union of per-method messages, tagged by `method`.
    Whatever it rejects (responses, extension methods, params that need the fallback rules,
    invalid input) takes the envelope path: params/result kept as `msgspec.Raw` (slices of
    the input, no copy), then decoded with the method's codec and its fallback rules.
    """

    def __init__(
        self,
        inbound: Mapping[str, MethodSpec[Any, Any]],
        outbound: Mapping[str, MethodSpec[Any, Any]],
        error: Codec[Any],
    ) -> None:
        """`inbound`: methods the receiver handles; `outbound`: methods whose results it receives."""
        self.inbound = inbound
        """The methods the receiver handles (name -> `MethodSpec`): their params decode typed."""
        self.outbound = outbound
        """The methods the receiver calls (name -> `MethodSpec`): their results decode typed."""
        self.error = error
        """Decodes the `error` object of an error response."""
        self._fast: msgspec.json.Decoder[MethodMessage] | None = None

    @property
    def fast_decoder(self) -> msgspec.json.Decoder[MethodMessage]:
        """The single-pass decoder; raises msgspec.ValidationError for anything else."""
        fast = self._fast
        if fast is None:
            union: Any = functools.reduce(operator.or_, (s.message for s in self.inbound.values()))
            fast = self._fast = msgspec.json.Decoder(union)
        return fast

    def decode(
        self, data: bytes | bytearray | memoryview | str, result_method: ResultLookup | None = None
    ) -> Message:
        """One JSON-RPC line as a typed message (see the class); a response's result is typed
        when `result_method(id)` names the method of the request it answers."""
        if not self.inbound:  # e.g. before `initialize` picked a protocol version
            return self.decode_envelope(data, result_method)
        fast = self._fast or self.fast_decoder
        try:
            return fast.decode(data)
        except msgspec.ValidationError:
            return self.decode_envelope(data, result_method)
        except BEYOND_MSGSPEC as exc:
            raise undecodable(exc) from exc

    def decode_envelope(
        self, data: bytes | bytearray | memoryview | str, result_method: ResultLookup | None = None
    ) -> Message:
        """The envelope path alone: for what the fast decoder has already rejected."""
        try:
            return decode_message(data, self.inbound, self.outbound, self.error, result_method)
        except BEYOND_MSGSPEC as exc:
            raise undecodable(exc) from exc


def decode_message(
    data: bytes | bytearray | memoryview | str,
    inbound: Mapping[str, MethodSpec[Any, Any]],
    outbound: Mapping[str, MethodSpec[Any, Any]],
    error: Codec[Any],
    result_method: ResultLookup | None = None,
) -> Message:
    """Decode one JSON-RPC line into a typed message through the envelope path.

    The envelope is decoded first with params/result as `msgspec.Raw` (slices of the
    input, no copy); the payload is decoded straight into the method's generated type.
    Unknown methods (extensions) keep their params as `Raw`. A response's result is
    typed when `result_method(id)` names the method of the request it answers.
    """
    env = ENVELOPE_DECODER.decode(data)
    if env.jsonrpc != "2.0":
        raise msgspec.ValidationError('Expected `jsonrpc` to be "2.0" - at `$.jsonrpc`')
    if not isinstance(env.method, UnsetType):
        spec = inbound.get(env.method)
        params: Any = env.params
        if spec is not None:
            if isinstance(params, UnsetType):
                raise msgspec.ValidationError(
                    "Object missing required field `params` - at `$.params`"
                )
            try:
                params = spec.params.decode(params)
            except msgspec.ValidationError as exc:
                raise rebase(exc, "$.params") from None
            return spec.message(jsonrpc="2.0", id=env.id, params=params)  # type: ignore[call-arg]
        if isinstance(env.id, UnsetType):
            return Notification(method=env.method, params=params)
        return Request(id=env.id, method=env.method, params=params)
    if isinstance(env.id, UnsetType):
        raise msgspec.ValidationError("Object missing required field `id` - at `$`")
    if not isinstance(env.error, UnsetType):
        try:
            return ErrorResponse(id=env.id, error=error.decode(env.error))
        except msgspec.ValidationError as exc:
            raise rebase(exc, "$.error") from None
    if isinstance(env.result, UnsetType):
        raise msgspec.ValidationError("Object missing required field `result` or `error` - at `$`")
    result: Any = env.result
    method = result_method(env.id) if result_method is not None else None
    result_spec = outbound.get(method) if method is not None else None
    if result_spec is not None and result_spec.result is not None:
        try:
            result = result_spec.result.decode(result)
        except msgspec.ValidationError as exc:
            raise rebase(exc, "$.result") from None
    return Response(id=env.id, result=result)


class _Line(msgspec.Struct, gc=False):
    """A request or notification in the key order peers write: msgspec writes a struct's tag
    (a `MethodMessage`'s `method`) before its fields, peers write `jsonrpc` and `id` first."""

    jsonrpc: str
    id: Any  # UNSET (a notification) is left out
    method: str
    params: Any


_encode: Callable[[Any], bytes] = Codec._encoder.encode


def encode_message(message: Message | msgspec.Struct) -> bytes:
    """Encode a message (or any generated struct) to compact JSON bytes, a message's keys in
    the order peers write them (`jsonrpc`, `id`, `method`, `params` / `jsonrpc`, `id`,
    `result`), so decoding a line they wrote and encoding it gives the same bytes back."""
    if isinstance(message, MethodMessage):
        params = message.params  # type: ignore[attr-defined]  # every generated message has it
        return _encode(_Line(message.jsonrpc, message.id, message.method, params))
    return _encode(message)
