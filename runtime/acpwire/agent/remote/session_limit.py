"""How many sessions one connection of a remote server has open (`RemoteOptions.
max_sessions_per_connection`), sans-IO: one `SessionLimit` per connection.

A session is open on the connection from the answer to the `session/new` or `session/fork`
that created it, or from the `session/load` / `session/resume` of it, until the client's
`session/close` of it. A request that would open one more past the limit does not reach the
agent: it is answered with an error naming the limit (and logged), and the connection goes on.
"""

from __future__ import annotations

import logging

import msgspec
from msgspec import UnsetType

from ...streams.envelope import Envelope, RequestId

log = logging.getLogger("acpwire")

CREATING = frozenset({"session/new", "session/fork"})
REOPENING = frozenset({"session/load", "session/resume"})
CLOSING = "session/close"
OPENING = CREATING | REOPENING
LIMIT_ERROR = -32603
"""The JSON-RPC code of the answer to a request over the limit (an internal error: the
server's limit, not the request, is at fault; `data.limit` names it)."""


class SessionLimit:
    """The sessions of one connection and the requests creating new ones (see the module)."""

    def __init__(self, limit: int, connection: str) -> None:
        self.limit = limit
        self.connection = connection
        self.open: set[str] = set()
        """The sessions open on the connection."""
        self._creating: set[RequestId] = set()  # session/new and fork requests unanswered

    @property
    def watching(self) -> bool:
        """True while an answer may create a session (the agent's output must be read)."""
        return bool(self._creating)

    def refusal(self, message: Envelope) -> bytes | None:
        """Record a message of the client; the error answer to send it instead of passing it
        on (a request that would open a session past the limit), or None."""
        method = message.method
        if method is None or (method not in OPENING and method != CLOSING):
            return None
        session = message.params_session
        if method == CLOSING:
            if session is not None:
                self.open.discard(session)
            return None
        if method in REOPENING and session in self.open:
            return None
        if len(self.open) + len(self._creating) >= self.limit:
            log.warning(
                "remote ACP connection %s: %s refused, the connection has %d sessions open, "
                "the limit (RemoteOptions.max_sessions_per_connection)",
                self.connection,
                method,
                self.limit,
            )
            if not message.is_request:
                return b""
            return _error(message.id, self.limit)
        if method in CREATING:
            if not isinstance(message.id, UnsetType):
                self._creating.add(message.id)
        elif session is not None:
            self.open.add(session)
        return None

    def outgoing(self, message: Envelope) -> None:
        """Record a message of the agent (only needed while `watching`)."""
        if message.method is not None or isinstance(message.id, UnsetType):
            return
        if message.id in self._creating:
            self._creating.discard(message.id)
            if message.result_session is not None:
                self.open.add(message.result_session)


def _error(request_id: RequestId | UnsetType, limit: int) -> bytes:
    error = {
        "code": LIMIT_ERROR,
        "message": f"this connection has {limit} sessions open, the server's limit: close one "
        "(session/close) or open another connection",
        "data": {"limit": limit},
    }
    return msgspec.json.encode({"jsonrpc": "2.0", "id": request_id, "error": error})
