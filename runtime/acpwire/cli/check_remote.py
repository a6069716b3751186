"""`acpwire check --url`: the checker's raw lines over a WebSocket to a remote agent (the RFD's
profile: one text frame per line, both ways), a new connection where a process would be
started. Written on httpx-ws directly, as a user of the `remote` extra would: acpwire's own
connection would not send the bad lines the checker needs.

Not Streamable HTTP (yet): there a body that is no JSON-RPC message gets an HTTP status, not a
JSON-RPC error, and a server may answer a POST naming an unknown session 404 (the Python SDK
does), which the checker's probes send: those need judging by the RFD's HTTP rules first.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio

from acpwire import ConnectionOptions

from .check_peer import AgentNotStarted, Channel, Connect

__all__ = ["WebSocketChannel", "remote_channel"]

INSTALL = "pip install 'acpwire[remote]'"
CLOSE_GRACE = 3.0
"""Seconds the server has to answer the WebSocket close handshake."""


class WebSocketChannel:
    """An open WebSocket to the agent (an httpx-ws session) as a `Channel`."""

    def __init__(self, session: Any, url: str, errors: tuple[type[BaseException], ...]) -> None:
        self._session = session
        self.url = url
        self._errors = errors  # what sending or receiving raises once the socket is gone
        self._ended: str | None = None  # why the connection ended, once it did
        self._receiving: anyio.CancelScope | None = None  # the receive under way

    async def send_all(self, data: bytes) -> None:
        for line in data.split(b"\n"):
            if not line or self._ended is not None:
                continue
            try:
                await self._session.send_text(line.decode("utf-8", "replace"))
            except self._errors:
                pass  # the agent is gone: what it (did not) answer is the evidence

    async def receive_some(self) -> bytes:
        """One text frame as one line (binary frames are ignored, as the RFD says)."""
        import httpx_ws

        while self._ended is None:
            with anyio.CancelScope() as self._receiving:  # `close` ends the wait
                try:
                    text = await self._session.receive_text()
                except httpx_ws.WebSocketInvalidTypeReceived:
                    continue
                except httpx_ws.WebSocketDisconnect as exc:
                    self._ended = (
                        f"the server closed the WebSocket (code {exc.code}: {exc.reason!r})"
                    )
                except self._errors as exc:
                    self._ended = f"the WebSocket connection was lost ({type(exc).__name__})"
                else:
                    return " ".join(text.splitlines()).encode() + b"\n"
        return b""

    async def close(self) -> None:
        """Close the socket (the server has `CLOSE_GRACE` to answer the close handshake); a
        receive under way ends."""
        if self._ended is None:
            self._ended = "the connection was closed by the checker"
        if self._receiving is not None:
            self._receiving.cancel()
        with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
            with anyio.move_on_after(CLOSE_GRACE):
                await self._session.close()

    def gone(self) -> bool:
        return self._ended is not None

    def summary(self) -> str:
        return (
            f"the agent at {self.url} ended the connection before answering initialize: "
            f"{self._ended or 'no answer'}"
        )


def remote_channel(url: str, headers: Mapping[str, str]) -> Connect:
    """Each call opens a new WebSocket to `url` (`ws://`, `wss://`, `http(s)://`), `headers`
    sent with the upgrade request. ModuleNotFoundError naming the extra when it is missing."""
    try:
        import httpx
        import httpx_ws
        import wsproto.utilities
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"acpwire check --url needs the `remote` extra of acpwire, which is not installed "
            f"(no module named {exc.name!r}): {INSTALL}",
            name=exc.name,
        ) from exc
    target = "http" + url[2:] if url.startswith(("ws://", "wss://")) else url
    errors = (
        httpx_ws.HTTPXWSException,
        wsproto.utilities.LocalProtocolError,
        anyio.BrokenResourceError,
        anyio.ClosedResourceError,
        OSError,
    )
    max_message_bytes = ConnectionOptions().max_line_bytes

    @asynccontextmanager
    async def connected() -> AsyncIterator[Channel]:
        opened = False
        try:
            async with httpx.AsyncClient(headers=dict(headers)) as client:
                opening: contextlib.AbstractAsyncContextManager[Any] = httpx_ws.aconnect_ws(
                    target, client, max_message_size_bytes=max_message_bytes
                )
                async with opening as session:
                    opened = True
                    yield WebSocketChannel(session, url, errors)
        except httpx_ws.WebSocketUpgradeError as exc:
            if opened:
                raise
            response = exc.response  # closed unread by httpx-ws: its status says it all
            raise AgentNotStarted(
                f"the agent at {url}: refused the WebSocket upgrade: "
                f"{response.status_code} {response.reason_phrase}"
            ) from None
        except httpx.HTTPError as exc:
            if opened:
                raise
            raise AgentNotStarted(f"the agent at {url}: cannot connect: {exc!r}") from None

    return connected
