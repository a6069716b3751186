"""`open_remote`: a client connection to an agent served over the network (the RFD's
WebSocket or Streamable HTTP profile), the same `ClientConnection` as `open_agent` gives.

Needs the `remote` extra (`pip install 'acpwire[remote]'`): httpx (HTTP/2 with h2) and
httpx-ws, imported at the first call.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

from .._groups import SingleException
from .._wire.options import ConnectionOptions
from ..streams.extra import remote_module
from ..streams.reconnect import Reconnect, reconnect_policy
from .connection import ClientConnection, ClientFactory, V1ClientFactory, _factories

Transport = Literal["websocket", "http"]


@asynccontextmanager
async def open_remote(
    url: str,
    *,
    v2: ClientFactory | None = None,
    v1: V1ClientFactory | None = None,
    transport: Transport = "websocket",
    headers: Mapping[str, str] | None = None,
    options: ConnectionOptions | None = None,
    http2: bool = True,
    verify: Any = True,
    resume: bool | Reconnect = False,
) -> AsyncIterator[ClientConnection]:
    """Connect to the agent at `url` (its ACP endpoint, e.g. `http://host:8000/acp`;
    `ws://` / `wss://` work too) and serve the connection while the block runs.

    `transport`: "websocket" (one socket, full duplex) or "http" (Streamable HTTP: POSTs and
    event streams, over HTTP/2 unless `http2=False`). `headers`: sent with every request
    (`{"Authorization": "Bearer ..."}`); the server's cookies are kept for the connection.
    `v2` / `v1` and `options` as for `open_agent` (`options.max_line_bytes` bounds a message
    from the agent). `verify`: TLS verification as httpx takes it (True, an
    `ssl.SSLContext`, or a CA bundle path).

    `resume`: resumable streams, when the server offers them (`RemoteOptions(resumable=...)`
    there; its `initialize` result says so in `_meta.transport.resumable`): after a cut the
    client reconnects by itself and gets every message it missed, as if nothing happened
    (True: `Reconnect()`'s attempts and waits; or your own `Reconnect`). When the server no
    longer keeps what was missed, or no attempt succeeds, calls fail with
    `acpwire.errors.ResumeFailed`.

    Raises `acpwire.errors.RemoteConnectionError` (a `ConnectionClosed`) naming the URL when
    the agent cannot be reached or refuses (401, 403, 503, ...), and calls fail with it when
    the connection is lost. Reconnect by calling `open_remote` again; `open_session` then
    resumes or loads a session by the agent's capabilities.
    """
    factories = _factories(v2, v1)
    options = options if options is not None else ConnectionOptions()
    if transport not in ("websocket", "http"):
        raise ValueError(f"transport must be 'websocket' or 'http', not {transport!r}")
    with SingleException() as single:
        reconnect = reconnect_policy(resume)
        opening = _open_stream(url, transport, headers, options, http2, verify, reconnect)
        async with opening as stream:
            conn = ClientConnection(
                stream,
                factories,
                peer=f"the agent at {url}",
                closed_reason=stream.closed_reason,
                options=options,
            )
            async with conn._serving():
                with single.callers_code():
                    yield conn


def _open_stream(
    url: str,
    transport: Transport,
    headers: Mapping[str, str] | None,
    options: ConnectionOptions,
    http2: bool,
    verify: Any,
    reconnect: Reconnect | None,
) -> contextlib.AbstractAsyncContextManager[Any]:
    feature = "open_remote"
    if transport == "websocket" and reconnect is not None:
        resumable = remote_module("acpwire.streams.websocket_resume", feature)
        return resumable.open_resumable_websocket(  # type: ignore[no-any-return]
            url,
            reconnect=reconnect,
            headers=headers,
            max_message_bytes=options.max_line_bytes,
            verify=verify,
        )
    if transport == "websocket":
        websocket = remote_module("acpwire.streams.websocket", feature)
        return websocket.open_websocket(  # type: ignore[no-any-return]
            url, headers=headers, max_message_bytes=options.max_line_bytes, verify=verify
        )
    streamable_http = remote_module("acpwire.streams.streamable_http", feature)
    return streamable_http.open_streamable_http(  # type: ignore[no-any-return]
        url,
        headers=headers,
        http2=http2,
        max_message_bytes=options.max_line_bytes,
        max_buffered_bytes=options.max_buffered_bytes,
        verify=verify,
        reconnect=reconnect,
    )
