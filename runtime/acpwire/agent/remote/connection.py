"""One ACP connection of a remote server: the ordinary agent endpoint (`AgentEndpoint`, as
`serve_agent` runs it) over an `AgentStream`, plus where the agent's messages go.

- WebSocket: every message goes to the socket, in order (`WebSocketOutlet`).
- Streamable HTTP: each goes to the `Mailbox` of its event stream, chosen by `Routes` (see
  routes.py): the connection-scoped one (key None) or a session's; the response to the
  `initialize` POST goes to that POST instead.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any

from ..._loop import Event, current_loop
from ...streams.envelope import NotAMessage, RequestId, envelope
from ..endpoint import AgentEndpoint
from .agent_stream import AgentStream, Outlet
from .mailbox import Mailbox, Stalled
from .options import RemoteOptions
from .routes import Routes

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
        """`profile`: "http" (the agent's messages go to mailboxes) or "websocket" (to
        `outlet`). `on_session(id)`: a session the agent named (the server remembers it)."""
        self.id = str(uuid.uuid4())
        """The `Acp-Connection-Id`."""
        self.profile = profile
        self._loop = current_loop()
        self._remote = remote
        self._endpoint = endpoint
        self._on_session = on_session
        self.routes = Routes()
        self.mailboxes: dict[str | None, Mailbox] = {}
        max_buffered = endpoint.options.max_buffered_bytes
        self.stream = AgentStream(outlet or self._route, max_buffered_bytes=max_buffered)
        self._scope = self._loop.CancelScope()
        self.done: Event = self._loop.Event()
        self._initialize_id: RequestId | None = None
        self._initialize_answer: bytes | None = None
        self._initialized: Event = self._loop.Event()

    async def run(self) -> None:
        """Serve the agent until its input ended and its last answers went out (or `cancel`)."""
        try:
            with self._scope:
                await self._endpoint.serve(self.stream)
        except Exception:
            log.exception("remote ACP connection %s failed", self.id)
        finally:
            self.stream.end_input()
            for mailbox in self.mailboxes.values():
                mailbox.close()
            self._initialized.set()
            self.done.set()

    def cancel(self) -> None:
        """End the connection now (its handlers are cancelled)."""
        self._scope.cancel()

    def end(self) -> None:
        """The client is gone (DELETE, disconnect): the agent reads EOF, its requests get
        the endpoint's grace period, and the event streams end."""
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
            mailbox = self.mailboxes[session] = Mailbox(
                self._loop,
                name,
                max_bytes=self._remote.max_stream_bytes,
                stall_timeout=self._remote.stall_timeout,
            )
            if self.stream_closed:
                mailbox.close()
        return mailbox

    @property
    def stream_closed(self) -> bool:
        return self.done.is_set()

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
            self._initialize_answer = line
            self._initialized.set()
            return
        session = self.routes.outgoing(message)
        for named in (session, message.result_session):
            if named is not None:
                self._on_session(named)
        await self._put(session, line)

    async def _put(self, session: str | None, line: bytes) -> None:
        try:
            await self.mailbox(session).put(line)
        except Stalled as exc:
            log.warning("closing remote ACP connection: %s", exc)
            self.end()
            self.cancel()
            raise self._loop.BrokenResourceError(str(exc)) from None


class WebSocketOutlet:
    """The agent's messages as text frames of an ASGI WebSocket."""

    def __init__(self, send: Callable[[dict[str, Any]], Any]) -> None:
        self._send = send
        self.open = True

    async def __call__(self, line: bytes) -> None:
        if not self.open:
            raise current_loop().BrokenResourceError("the WebSocket is closed")
        try:
            await self._send({"type": "websocket.send", "text": line.decode()})
        except Exception as exc:  # the server's own error for a socket that went away
            self.open = False
            raise current_loop().BrokenResourceError(f"the WebSocket is closed: {exc!r}") from exc
