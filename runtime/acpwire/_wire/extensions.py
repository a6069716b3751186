"""Extension methods sent to the peer, from either side: `Extensions`.

ACP lets both sides add methods outside the protocol: their names start with `_`
(`_acme/ping`), and what their params and results are is agreed between the two sides. An
acpwire agent or client receives them in its `extension(method, params)` handler; this module
sends them.
"""

from __future__ import annotations

import functools
from typing import Any, Protocol, TypeVar, overload, runtime_checkable

import msgspec
from msgspec import UNSET

from ..errors import InvalidResponse

R = TypeVar("R")


@runtime_checkable
class ExtensionSender(Protocol):
    """What `Extensions` sends through: a running connection (`Connection` is one)."""

    async def request_method(self, method: str, params: Any) -> Any:
        """Send a request of any method (an extension) and return its result: kept as the
        JSON received (`msgspec.Raw`) unless the negotiated surface types the method."""
        ...

    async def notify_method(self, method: str, params: Any) -> None:
        """Send a notification of any method (an extension)."""
        ...


class Extensions:
    """Extension (`_`-prefixed) requests and notifications to the peer of a connection:

        ext = Extensions(self.client)      # an agent: the ClientPeer it was built with
        ext = conn.extensions              # a client: the ClientConnection's (same as
                                           # Extensions(conn.v2.peer))
        pong = await ext.request("_acme/ping", Ping(n=1), result=Pong)
        raw = await ext.request("_acme/ping", {"n": 1})   # msgspec.Raw: the result as sent
        await ext.notify("_acme/progress", {"done": 3})

    `params`: anything msgspec encodes (a Struct of yours, a dict, a `msgspec.Raw`), or left
    out (the message then has no params). `result`: the type to decode the result to (a
    msgspec Struct of yours, `dict[str, Any]`, ...); `msgspec.Raw` (the default) keeps the
    result's JSON as it was received.
    """

    def __init__(self, peer: object) -> None:
        """`peer`: a generated peer of a running connection (the agent's `ClientPeer`, the
        client's `AgentPeer`), or the connection it sends through. TypeError for anything
        else (a peer built on a test double sends through no connection)."""
        caller = getattr(peer, "caller", peer)
        if not isinstance(caller, ExtensionSender):
            raise TypeError(
                f"cannot send extension methods through {peer!r}: pass the ClientPeer an "
                "agent was built with, a client's AgentPeer (conn.v2.peer), or use "
                "ClientConnection.extensions"
            )
        self._connection = caller

    @overload
    async def request(self, method: str, params: Any = UNSET) -> msgspec.Raw: ...

    @overload
    async def request(self, method: str, params: Any = UNSET, *, result: type[R]) -> R: ...

    async def request(self, method: str, params: Any = UNSET, *, result: Any = msgspec.Raw) -> Any:
        """Send the extension request `method` and return its result, decoded as `result`.

        Raises `PeerError` when the peer answers with an error (-32601 when it does not
        handle `method`), `InvalidResponse` when the result does not fit `result`,
        `ConnectionClosed` when no answer can come, ValueError for a name without `_`."""
        raw = await self._connection.request_method(_extension(method), params)
        if result is msgspec.Raw:
            return raw
        try:
            return _decoder(result).decode(raw)
        except msgspec.ValidationError as exc:
            raise InvalidResponse(method, str(exc)) from None

    async def notify(self, method: str, params: Any = UNSET) -> None:
        """Send the extension notification `method` (nothing comes back). ValueError for a
        name without `_`; `ConnectionClosed` when the connection is closed."""
        await self._connection.notify_method(_extension(method), params)


def _extension(method: str) -> str:
    if not method.startswith("_"):
        raise ValueError(
            f"{method!r} is not an extension method: their names start with `_` "
            f"(e.g. '_{method}'); the protocol's own methods are on the typed peers"
        )
    return method


@functools.cache
def _decoder(result: Any) -> msgspec.json.Decoder[Any]:
    return msgspec.json.Decoder(result)
