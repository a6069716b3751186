# Copied verbatim from codegen/support/_support.py by acpwire codegen.
"""Runtime support shared by every generated acp_schema module (copied verbatim by codegen).

Decoding has two paths. The fast path is a plain msgspec decoder for the
generated type: strict, and as fast as msgspec gets. Only when it rejects a
message does the fallback run: it walks the already-parsed JSON with the type
annotations and applies what msgspec alone cannot express:

- unknown variants of open unions become `OpenVariant` dicts that keep every key
  and re-encode unchanged;
- untagged alternatives (and default variants without a tag) are tried in schema order;
- fields marked `x-deserialize-default-on-error` / `-default-on-null` fall back to
  "omitted", lists marked `x-deserialize-skip-invalid-items` drop bad items.

Valid input never reaches the fallback, so leniency costs nothing there. Anything
still invalid raises `msgspec.ValidationError` naming the JSON path that failed.

The same walk, strict, checks what we send (`check_outgoing`): no leniency, and an open
enum's value or an open union's tag must be one this schema release knows or begin with `_`
(other unknown values are reserved for future ACP versions: a sender must not invent them).
"""

from __future__ import annotations

import functools
import operator
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, Literal, TypeVar, Union

import msgspec
from msgspec import UNSET, Raw, UnsetType

__all__ = [
    "ON_ERROR",
    "ON_NULL",
    "SKIP_INVALID",
    "UNSET",
    "Caller",
    "Codec",
    "ErrorResponse",
    "MessageCodec",
    "MethodMessage",
    "Notification",
    "OpenEnum",
    "OpenLiteral",
    "OpenVariant",
    "OutgoingCheckError",
    "Raw",
    "Request",
    "Response",
    "UnionInfo",
    "UnsetType",
    "check_alternatives",
    "check_outgoing",
    "convert",
    "decode_message",
    "encode_message",
    "tag_guard",
]

T = TypeVar("T")
P = TypeVar("P")
R = TypeVar("R")
E = TypeVar("E")

# Leniency flags per field, from the schema's x-deserialize-* annotations.
ON_ERROR = 1
ON_NULL = 2
SKIP_INVALID = 4


class OpenVariant(dict[str, Any]):
    """A variant of an open union that this schema release does not know.

    It is the JSON object exactly as received (a dict), so it keeps all its data and
    encodes back unchanged. `tag` is its discriminator value, e.g. `_vendor_thing`.
    """

    tag_field: ClassVar[str] = ""

    @property
    def tag(self) -> str:
        return str(self[self.tag_field])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


@dataclass(frozen=True, slots=True)
class OpenEnum:
    """An enum whose unknown values are valid (extensions, future releases): the fallback path
    accepts any value of `base` for it (attached with `Annotated`, ignored by msgspec)."""

    base: type


_Values = TypeVar("_Values")

if typing.TYPE_CHECKING:
    OpenLiteral: typing.TypeAlias = _Values | str
else:

    class OpenLiteral:
        """`OpenLiteral[Literal[...]]`, an inline open enum: type checkers see
        `Literal[...] | str`, msgspec decodes the closed Literal (shared strings, no
        allocation) and the fallback path accepts any other string."""

        def __class_getitem__(cls, values: Any) -> Any:
            return typing.Annotated[values, OpenEnum(str)]


# Hashed by identity: typing hashes Annotated metadata, and `variants` is a dict.
@dataclass(frozen=True, slots=True, eq=False)
class UnionInfo:
    """How the fallback path resolves one union (attached with `Annotated`, ignored by msgspec)."""

    name: str
    tag_field: str | None
    variants: Mapping[str, type[Any]]  # by tag; a default variant may answer to its name too
    alternatives: tuple[Any, ...]  # untagged members, tried in schema order
    unknown: type[OpenVariant] | None


class _TagGuard(msgspec.Struct):
    def __post_init__(self) -> None:
        raise ValueError("no variant has this tag")


_TAG_GUARDS: dict[str, type[msgspec.Struct]] = {}


def tag_guard(tag_field: str) -> type[msgspec.Struct]:
    """A union member that never decodes, so a lone tagged variant's tag stays required.

    msgspec treats the tag of a single tagged struct as optional; in a union of two tagged
    structs it is required, and an object without it goes to the fallback path.
    """
    guard = _TAG_GUARDS.get(tag_field)
    if guard is None:
        guard = msgspec.defstruct(
            f"TagGuard_{tag_field}", [], bases=(_TagGuard,), tag_field=tag_field, tag="\x00guard"
        )
        _TAG_GUARDS[tag_field] = guard
    return guard


def check_alternatives(
    obj: object,
    tag_attr: str | None,
    alternatives: tuple[tuple[str | None, tuple[str, ...]], ...],
    exclusive: bool = False,
) -> None:
    """`__post_init__` check of a struct merged from a union: one alternative's fields are present.

    With a discriminator, the alternative it names must have its required fields; without
    one, at least one alternative must (exactly one for an `exclusive` oneOf).
    """
    if tag_attr is not None:
        tag = getattr(obj, tag_attr)
        for when, required in alternatives:
            if when == tag:
                _require(obj, required, f"{tag_attr} = {tag!r}")
        return
    present = sum(all(getattr(obj, a) is not UNSET for a in req) for _, req in alternatives)
    names = " or ".join("+".join(req) for _, req in alternatives)
    if present == 0:
        raise ValueError(f"Object must have {names}")
    if exclusive and present > 1:
        raise ValueError(f"Object must have exactly one of {names}")


def _require(obj: object, attrs: tuple[str, ...], context: str) -> None:
    for attr in attrs:
        if getattr(obj, attr) is UNSET:
            raise ValueError(f"Object missing required field `{attr}` (required when {context})")


# --------------------------------------------------------------------------- fallback


def _error(message: str, path: str) -> msgspec.ValidationError:
    return msgspec.ValidationError(f"{message} - at `{path}`")


def _rebase(exc: msgspec.ValidationError, path: str, root: str = "$") -> msgspec.ValidationError:
    """msgspec's error for a sub-value, its path's `root` replaced by where the value sits
    (`root` is `$.v` for an error from a boxed convert, see `_Target`)."""
    text = str(exc)
    head, marker, tail = text.rpartition(f" - at `{root}")
    if marker and tail[:1] in ("`", ".", "["):
        return msgspec.ValidationError(f"{head} - at `{path}{tail}")
    return _error(text, path)


def _unknown_value(
    value: str, what: str, known: Any, path: str, default: bool = False
) -> msgspec.ValidationError:
    allowed = "".join(f"{k!r}, " for k in known) + (
        "none (the default variant), " if default else ""
    )
    return _error(
        f"Unknown {what} {value!r}: this schema release allows {allowed}or an `_`-prefixed "
        "extension (other values are reserved for future ACP versions)",
        path,
    )


def convert(obj: Any, tp: Any, path: str = "$", strict: bool = False) -> Any:
    """Convert parsed JSON to `tp`: msgspec first, the schema's fallback rules where it fails.

    `strict`: the fallback applies no leniency and accepts an unknown enum value or union tag
    only when it begins with `_` (what a sender of this release may send)."""
    target = _target(tp, strict)
    try:
        return msgspec.convert({"v": obj}, target.box).v
    except msgspec.ValidationError as exc:
        return target.repair(obj, path, exc)


class _Target:
    """What the fallback knows about one type, worked out once (typing introspection and
    msgspec's handling of a non-struct type are slow when repeated per value).

    `box`: a one-field struct around the type. msgspec caches what it knows about a struct
    type, but re-reads any other type (a union, `Annotated[...]`) on every `convert` (~15x
    slower); errors therefore come out at `$.v...`, and `fail` puts the real path there.
    """

    __slots__ = ("args", "box", "fields", "repair", "strict", "tp")

    def __init__(self, tp: Any, strict: bool) -> None:
        self.tp = tp
        self.strict = strict
        self.box: type[Any] = msgspec.defstruct("Box", [("v", tp)])
        self.args: Any = None
        self.fields: tuple[tuple[msgspec.structs.FieldInfo, int, _Target], ...] | None = None
        self.repair: Callable[[Any, str, msgspec.ValidationError], Any] = self._fail
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            inner, *metadata = typing.get_args(tp)
            info = next((m for m in metadata if isinstance(m, UnionInfo)), None)
            open_enum = next((m for m in metadata if isinstance(m, OpenEnum)), None)
            if info is not None:
                self.args, self.repair = (info, inner), self._union
            elif open_enum is not None:
                self.args, self.repair = (open_enum.base, typing.get_args(inner)), self._open_enum
            elif typing.get_origin(inner) is list:
                lengths = [m.min_length for m in metadata if isinstance(m, msgspec.Meta)]
                min_length = next((n for n in lengths if n is not None), None)
                self.args, self.repair = (_target(inner, strict), min_length), self._bounded_list
        elif isinstance(tp, type) and issubclass(tp, msgspec.Struct):
            fields = [
                (f, getattr(tp, "__acp_lenient__", {}).get(f.name, 0))
                for f in msgspec.structs.fields(tp)
            ]
            self.args, self.repair = tuple(fields), self._struct
        elif origin is Union or origin is types.UnionType:
            members = typing.get_args(tp)
            candidates = tuple(m for m in members if m is not type(None) and m is not UnsetType)
            self.args, self.repair = (type(None) in members, candidates), self._plain_union
        elif origin is list:
            self.args, self.repair = typing.get_args(tp)[0], self._list
        elif origin is dict:
            self.args, self.repair = typing.get_args(tp)[1], self._dict

    @staticmethod
    def _fail(obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        raise _rebase(exc, path, root="$.v")

    def _union(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        info: UnionInfo = self.args[0]
        if info.tag_field is not None and isinstance(obj, dict) and info.tag_field in obj:
            tag = obj[info.tag_field]
            variant = info.variants.get(tag) if isinstance(tag, str) else None
            if variant is not None:  # a known tag with a bad payload stays an error
                # msgspec already failed on exactly this variant (same error, same path):
                # straight to its repair, without converting it again
                return _target(variant, self.strict).repair(obj, path, exc)
            if self.strict and isinstance(tag, str) and not tag.startswith("_"):
                what, where = f"`{info.tag_field}` of {info.name}", f"{path}.{info.tag_field}"
                default = bool(info.alternatives)
                raise _unknown_value(tag, what, info.variants, where, default)
            if info.unknown is not None and isinstance(tag, str):
                return info.unknown(obj)
        failures: list[msgspec.ValidationError] = []
        for member in info.alternatives:
            try:
                return convert(obj, member, path, self.strict)
            except msgspec.ValidationError as error:
                failures.append(error)
        if len(failures) == 1 and isinstance(obj, dict):
            raise failures[0]  # the one candidate (a default variant): its error names the field
        if info.tag_field is not None and isinstance(obj, dict):
            if info.tag_field not in obj:
                raise _error(f"Object missing required field `{info.tag_field}`", path)
            tag_path = f"{path}.{info.tag_field}"
            raise _error(f"Invalid value {obj[info.tag_field]!r} for {info.name}", tag_path)
        raise _error(f"Expected `{info.name}`, got `{type(obj).__name__}`", path)

    def _open_enum(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        base, known = self.args
        if type(obj) is not base:
            return self._fail(obj, path, exc)
        # Unknown strings are reserved for future ACP versions; an integer one (an error code)
        # is simply another value.
        if self.strict and isinstance(obj, str) and not obj.startswith("_"):
            raise _unknown_value(obj, "value", known, path)
        return obj

    def _bounded_list(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        items, min_length = self.args
        result = items.repair(obj, path, exc)
        if min_length is not None and len(result) < min_length:
            raise _error(f"Expected `array` of length >= {min_length}", path)
        return result

    def _struct(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        if not isinstance(obj, dict):
            raise _error(f"Expected `object`, got `{type(obj).__name__}`", path)
        fields = self.fields
        if fields is None:  # on first use: a struct may contain itself, so not in __init__
            fields = self.fields = tuple(
                (f, 0 if self.strict else flags, _target(f.type, self.strict))
                for f, flags in self.args
            )
        kwargs: dict[str, Any] = {}
        for field, flags, target in fields:
            name = field.encode_name
            if name not in obj:
                if field.required:
                    raise _error(f"Object missing required field `{name}`", path)
                continue
            value = obj[name]
            if value is None and flags & ON_NULL:
                continue
            try:
                if flags & SKIP_INVALID and isinstance(value, list):
                    kwargs[field.name] = _skip_invalid(value, field.type, f"{path}.{name}")
                    continue
                try:  # convert() inlined: the path string is only built for a failure
                    kwargs[field.name] = msgspec.convert({"v": value}, target.box).v
                except msgspec.ValidationError as error:
                    kwargs[field.name] = target.repair(value, f"{path}.{name}", error)
            except msgspec.ValidationError:
                if flags & ON_ERROR:
                    continue
                raise
        try:
            return self.tp(**kwargs)
        except (ValueError, TypeError) as error:
            raise _error(str(error), path) from None

    def _plain_union(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        nullable, candidates = self.args
        if obj is None and nullable:
            return None
        if len(candidates) == 1:  # msgspec just failed on it: straight to its repair
            return _target(candidates[0], self.strict).repair(obj, path, exc)
        for member in candidates:
            try:
                return convert(obj, member, path, self.strict)
            except msgspec.ValidationError:
                continue
        return self._fail(obj, path, exc)

    def _list(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        if not isinstance(obj, list):
            return self._fail(obj, path, exc)
        return [convert(v, self.args, f"{path}[{i}]", self.strict) for i, v in enumerate(obj)]

    def _dict(self, obj: Any, path: str, exc: msgspec.ValidationError) -> Any:
        if not isinstance(obj, dict):
            return self._fail(obj, path, exc)
        return {k: convert(v, self.args, f"{path}.{k}", self.strict) for k, v in obj.items()}


_TARGETS: dict[bool, dict[int, _Target]] = {False: {}, True: {}}


def _target(tp: Any, strict: bool = False) -> _Target:
    """The cached _Target of `tp`, looked up by identity (hashing typing objects is slow);
    the entry keeps `tp` alive, so its id is never reused."""
    targets = _TARGETS[strict]
    target = targets.get(id(tp))
    if target is None or target.tp is not tp:
        target = targets[id(tp)] = _Target(tp, strict)
    return target


def _skip_invalid(items: list[Any], tp: Any, path: str) -> list[Any]:
    list_type = next(
        (m for m in (typing.get_args(tp) or (tp,)) if typing.get_origin(m) is list), None
    )
    if list_type is None:
        return convert(items, tp, path)  # type: ignore[no-any-return]
    (item_type,) = typing.get_args(list_type)
    kept = []
    for i, item in enumerate(items):
        try:
            kept.append(convert(item, item_type, f"{path}[{i}]"))
        except msgspec.ValidationError:
            continue
    return kept


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
    obj = msgspec.json.decode(Codec._encoder.encode(value))
    try:
        convert(obj, type(value) if tp is None else tp, path, strict=True)
    except msgspec.ValidationError as exc:
        raise OutgoingCheckError(f"outgoing value rejected by check_outgoing: {exc}") from None


# --------------------------------------------------------------------------- codecs


BEYOND_MSGSPEC = (RecursionError, UnicodeDecodeError)
"""What msgspec lets through on hostile input: nesting deeper than Python's recursion limit,
invalid UTF-8 inside a string. Decoding turns both into `msgspec.DecodeError`."""


def _undecodable(exc: BaseException) -> msgspec.DecodeError:
    if isinstance(exc, RecursionError):
        return msgspec.DecodeError("JSON is nested too deeply")
    return msgspec.DecodeError(f"JSON is not valid UTF-8: {exc}")


class Codec(Generic[T]):
    """Decode bytes to `T` (strict fast path, then the schema's fallback rules) and encode back."""

    __slots__ = ("_decoder", "type")

    _encoder: ClassVar[msgspec.json.Encoder] = msgspec.json.Encoder()

    def __init__(self, type: Any) -> None:
        self.type = type
        self._decoder: msgspec.json.Decoder[T] | None = None

    def decode(self, data: bytes | bytearray | memoryview | str) -> T:
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = msgspec.json.Decoder(self.type)
        try:
            return decoder.decode(data)
        except msgspec.ValidationError as exc:
            # msgspec just failed on this type: straight to the repair (converting the parsed
            # value first would only fail the same way), with the error as a convert gives it
            boxed = _rebase(exc, "$.v")
            result: T = _target(self.type).repair(msgspec.json.decode(data), "$", boxed)
            return result
        except BEYOND_MSGSPEC as exc:
            raise _undecodable(exc) from exc

    def convert(self, obj: Any) -> T:
        """Like `decode`, from already-parsed JSON (dicts, lists, scalars)."""
        result: T = convert(obj, self.type)
        return result

    def encode(self, value: T) -> bytes:
        return self._encoder.encode(value)

    def check_outgoing(self, value: T, path: str = "$") -> None:
        """`check_outgoing(value, self.type, path)`: raises `OutgoingCheckError` if this schema
        release does not allow sending `value`."""
        check_outgoing(value, self.type, path)


# --------------------------------------------------------------------------- JSON-RPC envelopes


class Request(msgspec.Struct, Generic[P], kw_only=True, gc=False):
    """A JSON-RPC 2.0 request."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: int | str | None
    method: str
    params: P | UnsetType = UNSET


class Notification(msgspec.Struct, Generic[P], kw_only=True, gc=False):
    """A JSON-RPC 2.0 notification (a request without an id; no response)."""

    jsonrpc: Literal["2.0"] = "2.0"
    method: str
    params: P | UnsetType = UNSET


class Response(msgspec.Struct, Generic[R], kw_only=True, gc=False):
    """A successful JSON-RPC 2.0 response."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: int | str | None
    result: R


class ErrorResponse(msgspec.Struct, Generic[E], kw_only=True, gc=False):
    """A JSON-RPC 2.0 error response; `error` is the schema's `Error` type."""

    jsonrpc: Literal["2.0"] = "2.0"
    id: int | str | None
    error: E


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
    params included, in a single pass; encoding one gives the complete JSON-RPC line.
    `id` is UNSET for a notification.
    """

    jsonrpc: Literal["2.0"]  # required on the wire, so it is required here too
    id: int | str | UnsetType | None = UNSET
    method: ClassVar[str]  # the tag, as a class attribute for speed


@dataclass(frozen=True, slots=True)
class MethodSpec(Generic[P, R]):
    """One row of a generated method table."""

    name: str
    side: str  # the side that handles it: "agent", "client" or "protocol"
    kind: Literal["request", "notification"]
    params: Codec[P]
    result: Codec[R] | None
    message: type[MethodMessage]
    handler: str  # the handler method's name, e.g. `session_prompt`


class Caller(typing.Protocol):
    """What the generated peer proxies (`ClientPeer`, `AgentPeer`) send through: a connection."""

    async def request(self, spec: MethodSpec[P, R], params: P) -> R: ...

    async def notify(self, spec: MethodSpec[P, None], params: P) -> None: ...


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
        self.outbound = outbound
        self.error = error
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
        if not self.inbound:  # e.g. before `initialize` picked a protocol version
            return self.decode_envelope(data, result_method)
        fast = self._fast or self.fast_decoder
        try:
            return fast.decode(data)
        except msgspec.ValidationError:
            return self.decode_envelope(data, result_method)
        except BEYOND_MSGSPEC as exc:
            raise _undecodable(exc) from exc

    def decode_envelope(
        self, data: bytes | bytearray | memoryview | str, result_method: ResultLookup | None = None
    ) -> Message:
        """The envelope path alone: for what the fast decoder has already rejected."""
        try:
            return decode_message(data, self.inbound, self.outbound, self.error, result_method)
        except BEYOND_MSGSPEC as exc:
            raise _undecodable(exc) from exc


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
                raise _rebase(exc, "$.params") from None
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
            raise _rebase(exc, "$.error") from None
    if isinstance(env.result, UnsetType):
        raise msgspec.ValidationError("Object missing required field `result` or `error` - at `$`")
    result: Any = env.result
    method = result_method(env.id) if result_method is not None else None
    result_spec = outbound.get(method) if method is not None else None
    if result_spec is not None and result_spec.result is not None:
        try:
            result = result_spec.result.decode(result)
        except msgspec.ValidationError as exc:
            raise _rebase(exc, "$.result") from None
    return Response(id=env.id, result=result)


encode_message: Callable[[Message | msgspec.Struct], bytes] = Codec._encoder.encode
"""Encode a message (or any generated struct) to compact JSON bytes. It is msgspec's encoder
method itself: no Python frame of ours per message."""
