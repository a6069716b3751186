"""Which event stream each message of a Streamable HTTP connection goes to, and which headers
a client's POST must carry (sans-IO: one `Routes` per connection).

Server -> client, in the order the agent wrote them:

- a response goes where the POST of its request said: to the session's stream when the
  request was of a session (`Acp-Session-Id`, or `params.sessionId`), except the requests
  that create a session (`session/new`, `session/fork`), which the client has no stream for
  yet: their responses go to the connection-scoped stream, as do responses to everything
  else (`initialize` again, `session/list`, `authenticate`, ...) and to ids the table does
  not know.

  `session/load` and `session/resume` are answered on the session's stream, where their
  replayed history goes: the schema has the agent answer only after the replay, and only
  one stream keeps that order (across two streams the answer could overtake the history).
  The RFD names `session/load` among the connection-scoped responses, for clients without
  the session's stream; its own flow opens that stream before `session/load`, and clients
  read every stream, so they take the answer wherever it comes;
- a request or notification of the agent goes to the stream of its `params.sessionId`
  (`session/update`, `session/request_permission`, fs and terminal requests), and one
  without (`$/cancel_request`, extension notifications) to the connection-scoped stream.

Client -> server: a message with `params.sessionId` must carry the same `Acp-Session-Id`
(the RFD's routing: "session-scoped request missing Acp-Session-Id? -> 400"), except
`session/load` and `session/resume`, which the RFD answers on the connection-scoped stream
because the client may not have the session's stream yet: without the header they are
accepted and answered there. The answer to an agent request that went to a session's stream
may carry the header ("permission responses"); a wrong one is 400, a missing one is accepted,
since the request's id already names the session (the official Python SDK's client sends
none).

A request of a session the server does not know (see below) is answered on the
connection-scoped stream: the client cannot open that session's stream (404).

A session is known to the connection once the agent named it (a result's `sessionId`, an
update's or request's `params.sessionId`): a session-scoped GET for another one is 404
unless the server knows it from another connection (`known_elsewhere`).
"""

from __future__ import annotations

from collections.abc import Callable

from msgspec import UnsetType

from ...streams.envelope import Envelope, RequestId

LOADING = frozenset({"session/load", "session/resume"})
"""Requests of a session the client may send without `Acp-Session-Id` (then answered on the
connection-scoped stream)."""

CREATING = frozenset({"session/new", "session/fork"})
"""Requests whose response goes to the connection-scoped stream although they may name a
session: the client has no stream for the session they create yet."""


class Routes:
    """The routing state of one connection (see the module)."""

    def __init__(self) -> None:
        self._answers: dict[RequestId, str | None] = {}  # client request id -> its stream
        self._asked: dict[RequestId, str | None] = {}  # agent request id -> its stream
        self.sessions: set[str] = set()
        """The sessions the agent named on this connection."""

    def incoming(
        self, message: Envelope, header_session: str | None, known: Callable[[str], bool]
    ) -> str | None:
        """Record a message the client POSTed; the reason to refuse it (400), or None.
        `known(session)`: whether the client can open that session's stream; the answer to
        a request of a session it cannot goes to the connection-scoped stream."""
        if message.method is not None:
            session = message.params_session
            lenient = header_session is None and message.method in LOADING
            if session is not None and header_session != session and not lenient:
                return _mismatch("params.sessionId", session, header_session)
            if message.is_request and not isinstance(message.id, UnsetType):
                route = header_session
                if message.method in CREATING or (route is not None and not known(route)):
                    route = None
                self._answers[message.id] = route
            return None
        if isinstance(message.id, UnsetType):
            return None
        expected = self._asked.get(message.id)
        if expected is not None and header_session not in (expected, None):
            return _mismatch("the request it answers", expected, header_session)
        self._asked.pop(message.id, None)
        return None

    def outgoing(self, message: Envelope) -> str | None:
        """The session whose stream an agent's message goes to (None: the connection's)."""
        if message.method is None:
            if message.result_session is not None:
                self.sessions.add(message.result_session)
            if isinstance(message.id, UnsetType):
                return None
            return self._answers.pop(message.id, None)
        session = message.params_session
        if session is not None:
            self.sessions.add(session)
        if message.is_request and not isinstance(message.id, UnsetType):
            self._asked[message.id] = session
        return session


def _mismatch(source: str, session: str, header: str | None) -> str:
    if header is None:
        return f"missing Acp-Session-Id header: the message is of session {session!r} ({source})"
    return f"Acp-Session-Id {header!r} does not match session {session!r} ({source})"
