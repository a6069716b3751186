"""The JSON-RPC 2.0 state machine, sans I/O: lines in, events and bytes out.

It knows ids, the pending-request table, batches and the error replies the spec names
(-32700 for bad JSON, -32600 for a bad request, -32602 with the failing path for bad
params). It never awaits: the connection (connection.py) feeds it lines and sends what
it returns. Every incoming request is answered exactly once: `respond` refuses an id
that is not in flight. `CheckedJsonRpcCore` also checks what it encodes against the schema.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

import msgspec
from msgspec import UNSET, Raw, UnsetType

from acp_schema import (
    Codec,
    ErrorResponse,
    MessageCodec,
    MethodMessage,
    MethodSpec,
    Notification,
    Request,
    Response,
)

from ..errors import InvalidResponse, PeerError, RpcError
from .log_flood import WarningFlood
from .shallow import top_level_scalars

RequestId = int | str | None

log = logging.getLogger("acpwire")


class _Probe(msgspec.Struct):
    """Just enough of a message to answer it when it fails to decode."""

    id: Any = UNSET
    method: Any = UNSET


_PROBE = msgspec.json.Decoder(_Probe)
_ENCODER = msgspec.json.Encoder()


# --------------------------------------------------------------------------- events


class Call(msgspec.Struct, gc=False, eq=False):
    """An incoming request (`id` set) or notification (`id` is UNSET).

    A msgspec Struct for its C constructor: one is built per message on the hot path.
    `spec` is None for a method that is not of this protocol (an extension?).
    """

    message: MethodMessage | Request[Any] | Notification[Any]
    spec: MethodSpec[Any, Any] | None
    id: RequestId | UnsetType

    @property
    def method(self) -> str:
        return self.message.method

    @property
    def params(self) -> Any:
        return self.message.params  # type: ignore[union-attr]  # every MethodMessage has params

    @property
    def is_request(self) -> bool:
        return self.id is not UNSET


class Reply(msgspec.Struct, frozen=True, gc=False):
    """Bytes to send as they are (an error answer the core produced itself). (Private
    classes are Structs, not dataclasses: defined in microseconds at import, cold start.)

    `unparsable`: the line that was not JSON at all, when that is what is answered (-32700).
    """

    data: bytes
    unparsable: bytes | None = None


class Answer(msgspec.Struct, frozen=True):
    """The response to one of our requests: a result, or the error it carries (a Struct for
    its C constructor: one is built per answer on the hot path). Tracked by the garbage
    collector: raising its error makes a cycle (error -> traceback -> the frame holding it)."""

    id: RequestId
    result: Any = None
    error: PeerError | InvalidResponse | None = None


Event = Call | Reply | Answer


E = TypeVar("E", bound="Event | MethodMessage")


class _Nothing:
    """No message is of this class (`JsonRpcCore.direct_message` when there is no direct
    method)."""


class _Batch(msgspec.Struct):
    waiting: set[RequestId] = msgspec.field(default_factory=set)
    responses: list[bytes] = msgspec.field(default_factory=list)


class _NotInFlight:
    """What `_in_flight` gives for an id that is not in it (None is a request of no batch)."""


_NOT_IN_FLIGHT = _NotInFlight()


UNPARSABLE = (msgspec.DecodeError, RecursionError, UnicodeDecodeError)
"""What decoding a line can raise besides a validation error: bad JSON, nesting deeper than
Python's recursion limit, invalid UTF-8 inside a string."""


_ENVELOPE_KEYS = frozenset({b'"id"', b'"method"'})
_METHOD_KEY = b'"method"'
_CALL_HEAD = b'{"jsonrpc":"2.0","method":'
"""How a notification starts as acpwire and most peers write it (`jsonrpc` first, no id)."""
_OPEN_BRACE = 0x7B  # b"{"
_CLOSE_BRACE = 0x7D  # b"}"
_NEWLINE = 0x0A
# Searching bytes for a byte given as an int is a bare memchr; given as bytes (`b"\n" in
# data`), or for a longer needle, CPython 3.11 spends ~150 ns more per search: per message.


def _lines_of_one_value(block: bytes) -> int:
    """The number of lines of `block` when every newline in it stands between a ``}`` and a
    ``{``, and the block starts with ``{`` and ends with ``}``; else 0 (an empty block too).

    Such a newline ends a top-level JSON value: no value holds ``}``, whitespace, ``{`` (an
    object or array needs a ``,`` or a closing bracket after a member), and no string holds
    a raw newline. So no value spans two lines, and a decode of the block to as many values
    as lines is one value a line, as reading line by line reads them. One memchr (``find``)
    per line: counting the newlines and the ``}\\n{`` (``bytes.count``) were two scans of
    every byte, ~2.5x the time on CPython 3.11."""
    if not block or block[0] != _OPEN_BRACE or block[-1] != _CLOSE_BRACE:
        return 0
    find = block.find
    lines = 1
    at = find(_NEWLINE)
    while at != -1:  # never the first or last byte (braces): both neighbours exist
        if block[at - 1] != _CLOSE_BRACE or block[at + 1] != _OPEN_BRACE:
            return 0
        lines += 1
        at = find(_NEWLINE, at + 2)
    return lines


def _too_deep(exc: BaseException) -> bool:
    """Whether decoding failed on depth (msgspec raises RecursionError; the codec's envelope
    path turns it into a DecodeError saying so)."""
    return isinstance(exc, RecursionError) or "nested too deeply" in str(exc)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply"
    return str(exc) or type(exc).__name__


def _usable_id(value: object) -> bool:
    """JSON-RPC ids are strings, numbers or null (bool is not a number here)."""
    return value is None or type(value) in (int, str)


def _encode(message: Any) -> bytes:
    """One message as one line of JSON."""
    data = _ENCODER.encode(message)
    if _NEWLINE in data:  # msgspec escapes newlines in strings; only a msgspec.Raw can hold one
        raise ValueError("an ACP message must not contain a raw newline (stdio frames by line)")
    return data


def _unparsable(line: bytes, exc: BaseException) -> Reply:
    return Reply(_error(None, RpcError.parse_error(_describe(exc))), unparsable=line)


def _error(id: RequestId, error: RpcError) -> bytes:
    return _encode(ErrorResponse(id=id, error=error.to_wire()))


# --------------------------------------------------------------------------- the core


class JsonRpcCore:
    """One connection's JSON-RPC state. `switch_codec` swaps the codec when `initialize`
    picks a version."""

    check_outgoing: ClassVar[bool] = False
    """Whether what this core encodes is checked first (`CheckedJsonRpcCore`)."""

    def __init__(self, codec: MessageCodec, peer: str = "the peer") -> None:
        self._peer = peer  # who the log names
        self._unidentified_answers = WarningFlood(
            peer, "has answered %d messages it could not identify (id null)"
        )
        self._ids = itertools.count()
        self._pending: dict[RequestId, str] = {}  # our request id -> method
        self._result_method = self._pending.get
        self._in_flight: dict[RequestId, _Batch | None] = {}  # their request id -> its batch
        self.switch_codec(codec)

    @property
    def codec(self) -> MessageCodec:
        return self._codec

    def switch_codec(self, codec: MessageCodec, direct: MethodSpec[Any, Any] | None = None) -> None:
        """Read and write with `codec` from now on (the negotiated surface's).

        Its one-pass decoder is built when the first line is decoded with it, or before, by
        `prepare`: building it imports every protocol area the surface's calls use (about
        8 ms), no part of answering the `initialize` that chose `codec` (cold start).

        `direct` (a notification method of `codec`): `receive_block` gives its notifications
        as their decoded messages, no `Call` built (`direct_message`)."""
        self._codec = codec
        # the class of the messages `receive_block` gives as they are (no event is a _Nothing)
        self.direct_message: type[Any] = (
            direct.message
            if direct is not None and codec.inbound.get(direct.name) is direct
            else _Nothing
        )
        self._spec_of: dict[type[Any], MethodSpec[Any, Any]] = {
            spec.message: spec for spec in codec.inbound.values()
        }
        # The codec's one-pass decoder called directly; what it rejects takes the envelope path.
        self._prepared = not codec.inbound
        self._decode_fast: Callable[[bytes], Any] = (
            self._prepare_and_decode
            if codec.inbound
            else functools.partial(codec.decode_envelope, result_method=self._result_method)
        )

    @property
    def prepared(self) -> bool:
        """Whether decoding with the current codec needs nothing built first."""
        return self._prepared

    def prepare(self) -> None:
        """Build the current codec's one-pass decoder now, if it is not built yet."""
        if not self._prepared:
            self._prepared = True
            self._decode_fast = self._codec.fast_decoder.decode

    def _prepare_and_decode(self, data: bytes) -> Any:
        self.prepare()
        return self._codec.fast_decoder.decode(data)

    # ----------------------------------------------------------- incoming

    def receive_line(self, line: bytes, batch: _Batch | None = None) -> list[Event]:
        """The events of one line: of the message on it, or of the batch (an array) on it
        unless it is an entry of `batch`."""
        # nearly every line is one message: starting with `{`, it needs no search for `[`
        if (not line or line[0] != _OPEN_BRACE) and batch is None and line.lstrip()[:1] == b"[":
            return self._receive_batch(line)
        try:
            # maybe a call: the one-pass decoder reads those (the head: no search, see _NEWLINE)
            if line.startswith(_CALL_HEAD) or _METHOD_KEY in line:
                try:
                    message: Any = self._decode_fast(line)
                except msgspec.ValidationError:  # an extension, a fallback rule, a response
                    # with "method" in its result, or bad
                    message = self._codec.decode_envelope(line, self._result_method)
            else:  # not a call (a response, or bad): the fast decoder would only raise
                message = self._codec.decode_envelope(line, self._result_method)
        except msgspec.ValidationError as exc:  # (a subclass of DecodeError: check it first)
            return self._invalid(line, exc, in_batch=batch is not None)
        except UNPARSABLE as exc:
            if _too_deep(exc):
                return self._too_deep(line)
            return [_unparsable(line, exc)]
        cls = type(message)
        spec = self._spec_of.get(cls)  # a class lookup: cheaper than isinstance chains
        if spec is not None:
            request_id = message.id
        elif cls is Response or cls is ErrorResponse:
            return self._answer(message)
        else:
            request_id = message.id if cls is Request else UNSET
        return [self._call(message, spec, request_id, batch)]

    def receive_block(self, block: bytes) -> list[Event | MethodMessage]:
        """The events of several lines (``b"\\n"``-separated, none blank) when each is a call
        the one-pass decoder reads (a stream of notifications): decoded in one C call; a
        notification of the `direct` method (`switch_codec`) is given as its message. Nothing
        when any is not (a response, an unknown method, bad input...): read them one by one
        (a block has a line at least: it never decodes to nothing).

        `decode_lines` reads a stream of JSON values whatever the newlines between them (two
        on a line, one over two lines), so the lines are proven one value each first
        (`_lines_of_one_value`), then decoded to as many messages as lines."""
        codec = self._codec
        if not codec.inbound:
            return []
        lines = _lines_of_one_value(block)
        if not lines:
            return []
        try:
            messages = codec.fast_decoder.decode_lines(block)
        except (*UNPARSABLE, msgspec.ValidationError):
            return []
        if len(messages) != lines:
            return []
        spec_of, call, direct = self._spec_of.get, self._call, self.direct_message
        return [
            (message if type(message) is direct else Call(message, spec_of(type(message)), UNSET))
            if message.id is UNSET  # a notification
            else call(message, spec_of(type(message)), message.id, None)
            for message in messages
        ]

    def _receive_batch(self, line: bytes) -> list[Event]:
        try:
            items = msgspec.json.decode(line, type=list[Raw])
        except UNPARSABLE as exc:
            return [_unparsable(line, exc)]
        if not items:
            return [Reply(_error(None, RpcError.invalid_request("empty batch")))]
        batch = _Batch()
        events: list[Event] = []
        for item in items:
            for event in self.receive_line(bytes(item), batch):
                if isinstance(event, Reply):
                    batch.responses.append(event.data)
                else:
                    events.append(event)
        if not batch.waiting:
            events.extend(self._finish(batch))
        return events

    def _call(
        self,
        message: Any,
        spec: MethodSpec[Any, Any] | None,
        request_id: RequestId | UnsetType,
        batch: _Batch | None,
    ) -> Event:
        """A decoded call: a notification, or a request now in flight (unless its id is)."""
        if request_id is UNSET:
            return Call(message, spec, UNSET)
        if request_id in self._in_flight:
            error = RpcError.invalid_request(f"id {request_id!r} is already in use")
            return Reply(_error(request_id, error))
        self._in_flight[request_id] = batch
        if batch is not None:
            batch.waiting.add(request_id)
        return Call(message, spec, request_id)

    def _too_deep(self, data: bytes) -> list[Event]:
        """Valid JSON nested deeper than the decoder goes: a request is answered -32600 with
        its id, an answer to one of ours fails that call, a notification is dropped with a
        warning (no error may be sent back); anything else gets -32600 with `id: null`."""
        envelope = top_level_scalars(data, _ENVELOPE_KEYS)
        method, request_id = envelope.get("method"), envelope.get("id", UNSET)
        reason = "JSON nested too deeply to decode"
        if isinstance(method, str) and request_id is UNSET:
            log.warning("dropped a %s notification: %s", method, reason)
            return []
        if request_id is None or (
            isinstance(request_id, int | str) and not isinstance(request_id, bool)
        ):
            if isinstance(method, str):
                return [Reply(_error(request_id, RpcError.invalid_request(reason)))]
            pending = self._pending.pop(request_id, None)
            if pending is not None:
                return [Answer(request_id, error=InvalidResponse(pending, reason))]
        return [Reply(_error(None, RpcError.invalid_request(reason)))]

    def receive_oversized(self, size: int, head: bytes) -> list[Event]:
        """A line of `size` bytes over the line limit, dropped unread but for its `head`: a
        request whose `id` and `method` are in the head is answered -32600 with its id; an
        answer to one of our requests whose `id` is in the head fails that request
        (`InvalidResponse`; nothing is sent back to an answer); anything else (a notification,
        an id past the head) is answered with `id: null`."""
        error = RpcError.invalid_request(f"message of {size} bytes is over the line limit")
        envelope = top_level_scalars(head, _ENVELOPE_KEYS, cut=True)
        message_id = envelope.get("id")
        if type(message_id) is not int and type(message_id) is not str:
            return [Reply(_error(None, error))]
        if isinstance(envelope.get("method"), str):
            return [Reply(_error(message_id, error))]
        if message_id in self._pending:
            method = self._pending.pop(message_id)
            reason = f"its {size} bytes are over the line limit: raise max_line_bytes to read it"
            return [Answer(message_id, error=InvalidResponse(method, reason))]
        return [Reply(_error(None, error))]

    def _invalid(self, data: bytes, exc: msgspec.ValidationError, in_batch: bool) -> list[Event]:
        """A line that is JSON but not a valid message: answer it if it has an id.

        Invalid batch entries are answered with `id: null`, as the transports page says.
        """
        try:
            probe = _PROBE.decode(data)
        except (*UNPARSABLE, msgspec.ValidationError) as probe_error:  # not an object, or an
            # id no JSON-RPC peer can mean (1e400 is out of every number range)
            error = RpcError.invalid_request(f"not a JSON-RPC message: {_describe(probe_error)}")
            return [Reply(_error(None, error))]
        if probe.id is not UNSET and not _usable_id(probe.id):
            return [Reply(_error(None, RpcError.invalid_request(f"unusable id {probe.id!r}")))]
        has_id = probe.id is not UNSET
        if isinstance(probe.method, str):
            if not has_id:
                return []  # a notification with bad params: nothing may be sent back
            known = probe.method in self.codec.inbound and "at `$.params" in str(exc)
            error = (
                RpcError.invalid_params(str(exc)) if known else RpcError.invalid_request(str(exc))
            )
            return [Reply(_error(probe.id, error))]
        if has_id and probe.id in self._pending:
            # A response to our request that does not fit the result type.
            method = self._pending.pop(probe.id)
            return [Answer(probe.id, error=InvalidResponse(method, str(exc)))]
        reply_id = probe.id if has_id and not in_batch else None
        return [Reply(_error(reply_id, RpcError.invalid_request(str(exc))))]

    def _answer(self, message: Response[Any] | ErrorResponse[Any]) -> list[Event]:
        method = self._pending.pop(message.id, None)
        if method is None:
            if message.id is None and type(message) is ErrorResponse:
                # the peer could not tell what it answers: a line of ours it could not read
                self._unidentified_answers.warn(
                    "%s answered a message it could not identify (id null): error %s: %s",
                    self._peer,
                    message.error.code,
                    message.error.message,
                )
            return []  # an answer to nothing we asked (late, duplicate or bogus): drop it
        if isinstance(message, Response):
            return [Answer(message.id, result=message.result)]
        error = message.error
        data = error.data if error.data is not UNSET else None
        return [Answer(message.id, error=PeerError(method, error.code, error.message, data))]

    # ----------------------------------------------------------- our answers

    def respond(self, request_id: RequestId, result: Any) -> bytes | None:
        """Bytes answering their request (None while the rest of its batch is pending)."""
        data = _encode(Response(id=request_id, result=result))  # first: it may raise
        batch = self._in_flight.pop(request_id, _NOT_IN_FLIGHT)
        return data if batch is None else self._settle(request_id, batch, data)

    def respond_error(self, request_id: RequestId, error: RpcError) -> bytes | None:
        data = _error(request_id, error)
        batch = self._in_flight.pop(request_id, _NOT_IN_FLIGHT)
        return data if batch is None else self._settle(request_id, batch, data)

    def _settle(
        self, request_id: RequestId, batch: _Batch | _NotInFlight, data: bytes
    ) -> bytes | None:
        """The answer `data` to a request of `batch` (what `_in_flight` held for it; KeyError
        when it held nothing): the whole batch's once it is complete, else None."""
        if not isinstance(batch, _Batch):
            raise KeyError(f"request {request_id!r} is not awaiting a response")
        batch.waiting.discard(request_id)
        batch.responses.append(data)
        return b"".join(reply.data for reply in self._finish(batch)) or None

    def _finish(self, batch: _Batch) -> list[Reply]:
        if batch.waiting or not batch.responses:
            return []  # never an empty array back
        return [Reply(b"[" + b",".join(batch.responses) + b"]")]

    def unsolicited_error(self, error: RpcError) -> bytes:
        """An error answering no identifiable request (`id: null`)."""
        return _error(None, error)

    @property
    def in_flight(self) -> frozenset[RequestId]:
        return frozenset(self._in_flight)

    # ----------------------------------------------------------- our calls

    # Requests and notifications are built as the envelopes, not as the per-method messages:
    # msgspec writes a tagged struct's tag (`method`) first; peers write `jsonrpc` first.

    def request(self, spec: MethodSpec[Any, Any], params: Any) -> tuple[int, bytes]:
        return self.request_method(spec.name, params)

    def request_method(self, method: str, params: Any) -> tuple[int, bytes]:
        """Our request of `method` (any method: an extension's answer keeps its result raw)."""
        request_id = next(self._ids)
        data = _encode(Request(id=request_id, method=method, params=params))
        self._pending[request_id] = method
        return request_id, data

    def notify(self, spec: MethodSpec[Any, Any], params: Any) -> bytes:
        return _encode(Notification(method=spec.name, params=params))

    def notify_method(self, method: str, params: Any) -> bytes:
        """Our notification of `method` (any method)."""
        return _encode(Notification(method=method, params=params))

    def forget(self, request_id: RequestId) -> None:
        """Stop waiting for an answer (the caller gave up); a late answer is then dropped."""
        self._pending.pop(request_id, None)

    def abandon_all(self) -> list[RequestId]:
        """The connection closed: every request still pending will never be answered."""
        ids = list(self._pending)
        self._pending.clear()
        return ids


class CheckedJsonRpcCore(JsonRpcCore):
    """A core that checks every request, notification and result it encodes against this
    schema release first (`Codec.check_outgoing`): `OutgoingCheckError` on a violation, and
    nothing is sent. For development and tests (`ConnectionOptions.check_outgoing`); the plain
    `JsonRpcCore` pays nothing for it."""

    check_outgoing: ClassVar[bool] = True

    def __init__(self, codec: MessageCodec, peer: str = "the peer") -> None:
        super().__init__(codec, peer)
        self._result_codecs: dict[RequestId, Codec[Any] | None] = {}  # their id -> result codec

    def request(self, spec: MethodSpec[Any, Any], params: Any) -> tuple[int, bytes]:
        spec.params.check_outgoing(params, "$.params")
        return super().request(spec, params)

    def notify(self, spec: MethodSpec[Any, Any], params: Any) -> bytes:
        spec.params.check_outgoing(params, "$.params")
        return super().notify(spec, params)

    def respond(self, request_id: RequestId, result: Any) -> bytes | None:
        codec = self._result_codecs.pop(request_id, None)
        if codec is not None:
            codec.check_outgoing(result, "$.result")
        return super().respond(request_id, result)

    def respond_error(self, request_id: RequestId, error: RpcError) -> bytes | None:
        self._result_codecs.pop(request_id, None)
        return super().respond_error(request_id, error)

    def receive_line(self, line: bytes, batch: _Batch | None = None) -> list[Event]:
        return self._remember(super().receive_line(line, batch))

    def receive_block(self, block: bytes) -> list[Event | MethodMessage]:
        return self._remember(super().receive_block(block))

    def _remember(self, events: list[E]) -> list[E]:
        """What each incoming request's result must be."""
        for event in events:
            if isinstance(event, Call) and event.is_request and event.spec is not None:
                self._result_codecs[event.id] = event.spec.result  # type: ignore[index]
        return events
