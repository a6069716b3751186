"""What the layers above the wire use of a running connection: `RunningConnection`.

A generated peer (`ClientPeer`, `AgentPeer`) sends through its `caller`, an `acp_schema.Caller`
(`request`, `notify`); that is all the bindings know of a connection. Helpers that run
alongside the handlers (the agent's `PromptTurns`) need a little more of the connection the
peer was built on: where to start background work, the peer's requests still unanswered,
cancelling some of them, and what `initialize` negotiated. `running_connection(peer.caller)`
gives the caller typed as that, or None for a caller that is not a connection (a test
double): no one looks at the connection's private fields or class.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, Protocol, TypeVarTuple, Unpack, runtime_checkable

from acp_schema import Caller

from .jsonrpc import Call

Ts = TypeVarTuple("Ts")


@runtime_checkable
class RunningConnection(Caller, Protocol):
    """A connection as the layers above the wire use it (`Connection` is one): send
    (`request`, `notify`, from `acp_schema.Caller`), and the few things more below."""

    @property
    def initialize_response(self) -> object:
        """What the agent answered `initialize` with on this connection (the negotiated
        surface's `InitializeResponse`); None before it was answered."""
        ...

    def start_soon(
        self, work: Callable[[Unpack[Ts]], Coroutine[Any, Any, object]], *args: *Ts
    ) -> None:
        """Run `work(*args)` in the connection's task group: it ends when the connection
        does. RuntimeError when the connection is not running."""
        ...

    def requests_in_flight(self) -> list[Call]:
        """The peer's requests not answered yet, in the order they arrived."""
        ...

    def cancel_requests(self, matches: Callable[[Call], bool]) -> int:
        """Cancel the handlers of the peer's unanswered requests that `matches`; returns how
        many. Each is answered as cancelled (-32800, or the connection's cancelled result)."""
        ...


def running_connection(caller: Caller) -> RunningConnection | None:
    """`caller` (a generated peer's) as a running connection, or None when it is not one."""
    return caller if isinstance(caller, RunningConnection) else None
