"""One ACP connection of a remote server: the ordinary agent endpoint (`AgentEndpoint`, as
`serve_agent` runs it) over an `AgentStream`, plus where the agent's messages go.

- WebSocket: every message goes to the socket, in order (`WebSocketOutlet`); with resumable
  streams (`RemoteOptions.resumable`) to the connection-scoped `Mailbox` instead, which the
  socket of the moment reads (see websocket_resume.py).
- Streamable HTTP: each goes to the `Mailbox` of its event stream, chosen by `Routes` (see
  routes.py): the connection-scoped one (key None) or a session's; the response to the
  `initialize` POST goes to that POST instead.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from ..._loop import Event, current_loop
from ...streams.envelope import Envelope, NotAMessage, RequestId, envelope
from ..endpoint import AgentEndpoint
from .agent_stream import AgentStream, Outlet
from .mailbox import Mailbox, Stalled
from .options import RemoteOptions
from .pulled_stream import PulledAgentStream, Source
from .replay import RetainingMailbox, advertised
from .routes import Routes
from .session_limit import SessionLimit

log = logging.getLogger("acpwire")


class RemoteConnection:
    """An ACP connection: `run` serves it until the client is gone."""

    def __init__(
        self,
        endpoint: AgentEndpoint,
        remote: RemoteOptions,
        *,
        profile: str,
        outlet: Outlet | None = None,
        on_session: Callable[[str], None] = lambda session: None,
    ) -> None:
        """`profile`: "http" (the agent's messages go to mailboxes), "websocket" (to
        `outlet`) or "resumable websocket" (to the connection-scoped mailbox).
        `on_session(id)`: a session the agent named (the server remembers it)."""
        self.id = str(uuid.uuid4())
        """The `Acp-Connection-Id`."""
        self.profile = profile
        self._loop = current_loop()
        self._remote = remote
        self._endpoint = endpoint
        self._on_session = on_session
        self.routes = Routes()
        self.sessions = SessionLimit(remote.max_sessions_per_connection, self.id)
        """The sessions open on the connection (`RemoteOptions.max_sessions_per_connection`)."""
        self.mailboxes: dict[str | None, Mailbox] = {}
        max_buffered = endpoint.options.max_buffered_bytes
        if outlet is None:
            outlet = self._route if profile == "http" else self._retain
        self._outlet = outlet
        self.stream = AgentStream(outlet, max_buffered_bytes=max_buffered)
        self._scope = self._loop.CancelScope()
        self.done: Event = self._loop.Event()
        self._initialize_id: RequestId | None = None
        self._initialize_answer: bytes | None = None
        self._initialized: Event = self._loop.Event()
        self.attached = 0
        """What of the client is there now: open event streams (HTTP), 1 for an open
        WebSocket; at 0 the connection is ended `idle_timeout` seconds after `touch`."""
        self._last_seen = time.monotonic()
        self._ending: Event = self._loop.Event()  # set by `end`: the reaper stops
        self.ended = False
        """True from `end`: new requests and event streams are refused (404)."""
        self.received = 0
        """Resumable WebSocket: the client's text frames read so far (a resuming client sends
        again those after it)."""
        self.last_post = 0
        """Resumable Streamable HTTP: the highest `Acp-Message-Seq` of a POST taken (a POST
        retried after a cut is taken once)."""

    def pull_from(self, source: Source) -> None:
        """Before `run`: the agent's reader reads the client's messages from `source`
        itself (a WebSocket: pulled_stream.py) instead of being fed them."""
        max_buffered = self._endpoint.options.max_buffered_bytes
        self.stream = PulledAgentStream(source, self._outlet, max_buffered_bytes=max_buffered)

    def touch(self) -> None:
        """The client did something (a request, a stream opened or closed). Only noted: the
        reaper looks at it when its wait runs out (no wake-up per request)."""
        self._last_seen = time.monotonic()

    def attach(self) -> None:
        self.attached += 1
        self.touch()

    def detach(self) -> None:
        self.attached -= 1
        self.touch()

    async def run(self) -> None:
        """Serve the agent until its input ended and its last answers went out (or `cancel`,
        or `idle_timeout` without a client)."""
        try:
            with self._scope:
                async with self._loop.open_nursery() as nursery:
                    nursery.start_soon(self._end_when_idle)
                    await self._endpoint.serve(self.stream, self.id)
                    nursery.cancel_scope.cancel()
        except Exception:
            log.exception("remote ACP connection %s failed", self.id)
        finally:
            self.end()
            self._initialized.set()
            self.done.set()

    async def _end_when_idle(self) -> None:
        """Reap the connection once no client was there for `idle_timeout` seconds: it ends
        and its work is cancelled at once (its turns had `idle_timeout` already; what they
        did until then is in the session store). It wakes when its wait runs out (while a
        client is attached, every `idle_timeout` seconds) and looks at `attached` and the
        last `touch` then; `end` stops it."""
        timeout = self._remote.idle_timeout
        while True:
            if self.ended:
                return  # the client ended it: its turns have their own grace period
            if self.attached > 0:
                wait = timeout
            else:
                wait = self._last_seen + timeout - time.monotonic()
                if wait <= 0:
                    break
            with self._loop.move_on_after(wait):
                await self._ending.wait()
        log.info(
            "ending remote ACP connection %s: no client for %g s (RemoteOptions.idle_timeout)",
            self.id,
            timeout,
        )
        self.end()
        self.cancel()

    def cancel(self) -> None:
        """End the connection now (its handlers are cancelled)."""
        self._scope.cancel()

    def end(self) -> None:
        """The client is gone (DELETE, disconnect): the agent reads EOF, its requests get
        the endpoint's grace period (its running v2 turns `idle_timeout`, their messages
        dropped), and the event streams end; the connection takes no more requests."""
        self.ended = True
        self._ending.set()
        self.stream.end_input()
        for mailbox in self.mailboxes.values():
            mailbox.close()

    # ------------------------------------------------------------------ Streamable HTTP

    async def initialize(self, message: bytes, request_id: RequestId, timeout: float) -> bytes:
        """Hand the agent the `initialize` request and return its answer (b"" when none came
        within `timeout` seconds or the connection ended first)."""
        self._initialize_id = request_id
        await self.stream.feed(message)
        with self._loop.move_on_after(timeout):
            await self._initialized.wait()
        return self._initialize_answer or b""

    def mailbox(self, session: str | None) -> Mailbox:
        mailbox = self.mailboxes.get(session)
        if mailbox is None:
            name = f"connection {self.id}, " + (
                "its connection-scoped stream" if session is None else f"session {session}"
            )
            retention = self._remote.resumable
            most, stall = self._remote.max_stream_bytes, self._remote.stall_timeout
            mailbox = self.mailboxes[session] = (
                Mailbox(self._loop, name, max_bytes=most, stall_timeout=stall)
                if retention is None
                else RetainingMailbox(
                    self._loop, name, max_bytes=most, stall_timeout=stall, retention=retention
                )
            )
            if self.ended:
                mailbox.close()
        return mailbox

    async def _route(self, line: bytes) -> None:
        try:
            message = envelope(line)
        except NotAMessage:  # the agent's own output is JSON-RPC; be safe anyway
            await self._put(None, line)
            return
        if (
            not self._initialized.is_set()
            and message.is_response
            and self._initialize_id is not None
            and message.id == self._initialize_id
        ):
            self._initialize_answer = self._advertising(line)
            self._initialized.set()
            return
        if self.sessions.watching:
            self.sessions.outgoing(message)
        session = self.routes.outgoing(message)
        for named in (session, message.result_session):
            if named is not None:
                self._on_session(named)
        await self._put(session, line)

    def _advertising(self, answer: bytes) -> bytes:
        retention = self._remote.resumable
        return answer if retention is None else advertised(answer, retention)

    def expect_initialize(self, request_id: RequestId) -> None:
        """A resumable WebSocket's `initialize` request: its answer advertises resumption."""
        self._initialize_id = request_id

    async def _retain(self, line: bytes) -> None:
        """A resumable WebSocket's outlet: every message on the connection-scoped stream."""
        if self.sessions.watching or self._initialize_id is not None:
            try:
                message = envelope(line)
            except NotAMessage:
                message = None
            if message is not None:
                if self.sessions.watching:
                    self.sessions.outgoing(message)
                expected = self._initialize_id
                if expected is not None and message.is_response and message.id == expected:
                    self._initialize_id = None
                    line = self._advertising(line)
        await self._put(None, line)

    async def answer(self, message: Envelope, line: bytes) -> None:
        """Send the client an answer of the server's own to its request `message`, where the
        agent's answer would have gone."""
        route = self.routes.outgoing(Envelope(message.id, None, None, None, failed=True))
        await self._put(route, line)

    async def _put(self, session: str | None, line: bytes) -> None:
        try:
            await self.mailbox(session).put(line)
        except Stalled as exc:
            log.warning("closing remote ACP connection: %s", exc)
            self.end()
            self.cancel()
            raise self._loop.BrokenResourceError(str(exc)) from None


class WebSocketOutlet:
    """The agent's messages as text frames of an ASGI WebSocket. Once the socket is gone
    they are dropped (the agent goes on: a dropped client leaves its connection running
    until `idle_timeout`, a closed one ends it), and read for the session limit while a
    request creating a session is unanswered."""

    def __init__(self, send: Callable[[dict[str, Any]], Any]) -> None:
        self._send = send
        self.open = True
        self.sessions: SessionLimit | None = None

    async def __call__(self, line: bytes) -> None:
        if self.sessions is not None and self.sessions.watching:
            try:
                self.sessions.outgoing(envelope(line))
            except NotAMessage:
                pass
        if not self.open:
            return
        try:
            await self._send({"type": "websocket.send", "text": line.decode()})
        except Exception:  # the server's own error for a socket that went away
            self.open = False
