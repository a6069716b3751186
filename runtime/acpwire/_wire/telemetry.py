"""What a connection asks of its instrumentation (`ConnectionOptions.telemetry`), without
importing any: `acpwire.otel.Telemetry` is the one acpwire ships (OpenTelemetry spans, trace
context in `_meta`). A connection without one never calls any of this."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, Protocol

__all__ = ["ConnectionInstrumentation", "Instrumentation"]


class ConnectionInstrumentation(Protocol):
    """The instrumentation of one connection (`Instrumentation.connection` made it).

    Request ids are JSON-RPC's (`int | str | None`); an incoming call is the connection's own
    record of it (its `method`, `params` and `id`, UNSET for a notification)."""

    def request(
        self,
        method: str,
        params: Any,
        encode: Callable[[Any], tuple[int | str | None, bytes]],
        call: Callable[[int | str | None, bytes], Awaitable[Any]],
    ) -> Coroutine[Any, Any, Any]:
        """Send our request: `encode(params)` (of the params it may have added to) gives its
        id and bytes, `call(id, bytes)` sends them and waits for the result, which this
        returns (or the error it raises)."""
        ...

    def notification(self, method: str, params: Any, encode: Callable[[Any], bytes]) -> bytes:
        """Our notification's bytes: `encode(params)`, of the params it may have added to."""
        ...

    def dispatch(
        self, dispatch: Callable[[Any], Awaitable[Any] | None]
    ) -> Callable[[Any], Awaitable[Any] | None]:
        """`dispatch` (what starts an incoming call: the awaitable of its handler, or None),
        instrumented: what the connection starts each incoming call with."""
        ...

    def closed(self) -> None:
        """The connection closed: nothing more will be sent or answered."""
        ...


class Instrumentation(Protocol):
    """Instruments connections (`ConnectionOptions(telemetry=...)`): `acpwire.otel.Telemetry`."""

    def connection(self, peer: str) -> ConnectionInstrumentation:
        """The instrumentation of a new connection with `peer` ("the client", an agent
        command, ...)."""
        ...
