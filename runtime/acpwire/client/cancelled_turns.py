"""The client's half of cancellation, whichever API sends `session/cancel`.

The schema: "When a client sends a `session/cancel` notification to cancel an ongoing prompt
turn, it MUST respond to all pending `session/request_permission` requests with this
`cancelled` outcome." Pending means more than the requests already in: a permission request
the agent sent before it read the cancel crosses it on the wire, and the client cannot tell
it from one it received earlier. So from a session's `session/cancel` until the client sends
that session's next `session/prompt`, its permission requests are answered `cancelled`
without reaching the client's handler (which might approve a tool call of a cancelled turn).

`CancelledTurns` is the caller behind the typed agent peer (`conn.v2.peer`), so
`conn.cancel(...)`, `conn.v1.peer.session_cancel(...)` and `prompt()` all keep the rule.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

import acp_schema.v2.methods as _v2
from acp_schema import MethodSpec

from .._wire.connection import Connection
from .._wire.dispatch import Dispatch
from .._wire.jsonrpc import Call
from .._wire.versions import AnySurface
from .permissions import PERMISSION, cancelled_permission

log = logging.getLogger("acpwire")

SESSION_CANCEL = _v2.SESSION_CANCEL.name  # the same names in v1
SESSION_PROMPT = _v2.SESSION_PROMPT.name

P = TypeVar("P")
R = TypeVar("R")


class CancelledTurns:
    """Sessions whose turn this client cancelled, until it prompts them again."""

    __slots__ = ("_connection", "_sessions")

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._sessions: set[str] = set()

    def request(self, spec: MethodSpec[P, R], params: P) -> Coroutine[Any, Any, R]:
        """Send a request to the agent; a `session/prompt` starts a turn no longer cancelled."""
        if spec.name == SESSION_PROMPT:
            self._sessions.discard(params.session_id)  # type: ignore[attr-defined]
        return self._connection.request(spec, params)

    def notify(self, spec: MethodSpec[P, None], params: P) -> Coroutine[Any, Any, None]:
        """Send a notification to the agent; after a `session/cancel`, the session's pending
        permission requests (and those still to come in its turn) are answered `cancelled`."""
        if spec.name == SESSION_CANCEL:
            self._cancel(params.session_id)  # type: ignore[attr-defined]
        return self._connection.notify(spec, params)

    def request_method(self, method: str, params: Any) -> Coroutine[Any, Any, Any]:
        """An extension request (`Extensions(conn.v2.peer)`), sent as it is."""
        return self._connection.request_method(method, params)

    def notify_method(self, method: str, params: Any) -> Coroutine[Any, Any, None]:
        """An extension notification, sent as it is."""
        return self._connection.notify_method(method, params)

    def _cancel(self, session_id: str) -> None:
        self._sessions.add(session_id)
        self._connection.cancel_requests(
            lambda call: call.method == PERMISSION and _session_of(call) == session_id
        )

    def dispatch(self, dispatch: Dispatch, surface: AnySurface) -> Dispatch:
        """`dispatch`, answering a cancelled turn's permission requests itself."""
        sessions = self._sessions

        def answering_cancelled_turns(call: Call) -> Awaitable[Any] | None:
            if sessions and _session_of(call) in sessions:
                answer = cancelled_answer(call, surface)
                if answer is not None:
                    log.debug(
                        "%s %r answered cancelled: the client cancelled session %s's turn",
                        call.method,
                        call.id,
                        _session_of(call),
                    )
                    return _answered(answer)
            return dispatch(call)

        return answering_cancelled_turns


def cancelled_answer(call: Call, surface: AnySurface) -> Any:
    """What the client answers a request of the agent's that is cancelled (its turn was, or
    the agent sent `$/cancel_request`) instead of -32800: a permission request gets the
    `cancelled` outcome the schema requires; None for any other request."""
    return cancelled_permission(surface) if call.method == PERMISSION else None


def _session_of(call: Call) -> object:
    return getattr(call.params, "session_id", None) if call.spec else None


async def _answered(result: Any) -> Any:
    return result
