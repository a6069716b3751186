# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""`Codec`: one type's decoder and encoder (strict msgspec fast path, then the fallback)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

import msgspec

from .check import check_outgoing
from .fallback import convert, rebase, repair

__all__ = ["BEYOND_MSGSPEC", "Codec", "undecodable"]

T = TypeVar("T")


BEYOND_MSGSPEC = (RecursionError, UnicodeDecodeError)
"""What msgspec lets through on hostile input: nesting deeper than Python's recursion limit,
invalid UTF-8 inside a string. Decoding turns both into `msgspec.DecodeError`."""


def undecodable(exc: BaseException) -> msgspec.DecodeError:
    if isinstance(exc, RecursionError):
        return msgspec.DecodeError("JSON is nested too deeply")
    return msgspec.DecodeError(f"JSON is not valid UTF-8: {exc}")


class Codec(Generic[T]):
    """Decode bytes to `T` (strict fast path, then the schema's fallback rules) and encode back."""

    __slots__ = ("_decoder", "_load", "_type")

    _encoder: ClassVar[msgspec.json.Encoder] = msgspec.json.Encoder()

    def __init__(self, type: Any = None, *, load: Callable[[], Any] | None = None) -> None:
        """`Codec(SomeType)`, or `Codec(load=lambda: types.SomeType)`: the type looked up when
        first needed (the generated method tables name types without importing them)."""
        self._type = type
        self._load = load
        self._decoder: msgspec.json.Decoder[T] | None = None

    @property
    def type(self) -> Any:
        """The type it decodes to and encodes from."""
        load = self._load
        if load is not None:
            self._type = load()
            self._load = None
        return self._type

    def decode(self, data: bytes | bytearray | memoryview | str) -> T:
        """A `T` from JSON; raises `msgspec.ValidationError` naming the path of what is wrong."""
        decoder = self._decoder
        if decoder is None:
            decoder = self._decoder = msgspec.json.Decoder(self.type)
        try:
            return decoder.decode(data)
        except msgspec.ValidationError as exc:
            # msgspec just failed on this type: straight to the repair (converting the parsed
            # value first would only fail the same way), with the error as a convert gives it
            boxed = rebase(exc, "$.v")
            result: T = repair(self.type, msgspec.json.decode(data), "$", boxed)
            return result
        except BEYOND_MSGSPEC as exc:
            raise undecodable(exc) from exc

    def convert(self, obj: Any) -> T:
        """Like `decode`, from already-parsed JSON (dicts, lists, scalars)."""
        result: T = convert(obj, self.type)
        return result

    def encode(self, value: T) -> bytes:
        """`value` as JSON."""
        return self._encoder.encode(value)

    def check_outgoing(self, value: T, path: str = "$") -> None:
        """`check_outgoing(value, self.type, path)`: raises `OutgoingCheckError` if this schema
        release does not allow sending `value`."""
        check_outgoing(value, self.type, path)
