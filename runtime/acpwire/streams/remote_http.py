"""What both remote client transports share: the RFD's header names, the httpx client of one
connection (its cookie jar keeps the server's cookies for the connection's duration, the
RFD's MUST), and the error for a refused request.

Needs the `remote` extra (`pip install 'acpwire[remote]'`).
"""

from __future__ import annotations

import os
import ssl
from collections.abc import Mapping

import httpx

from ..errors import RemoteConnectionError
from .event_connections import event_stream_transport

CONNECTION_ID_HEADER = "Acp-Connection-Id"
SESSION_ID_HEADER = "Acp-Session-Id"
QUOTED_BODY = 300
"""Characters of a refusing server's body quoted in the error."""

TIMEOUT = httpx.Timeout(connect=10.0, read=None, write=30.0, pool=None)
"""No read timeout: event streams stay open, and a POST waits while the agent is behind
(back-pressure); liveness comes from keepalives and the caller's own timeouts."""


def http_url(url: str) -> str:
    """`ws://` / `wss://` as the `http://` / `https://` of the upgrade request."""
    for ws, http in (("ws://", "http://"), ("wss://", "https://")):
        if url.startswith(ws):
            return http + url[len(ws) :]
    return url


_DEFAULT_CONTEXTS: dict[tuple[str | None, str | None], ssl.SSLContext] = {}


def tls_context(verify: object) -> ssl.SSLContext:
    """The TLS context for httpx's `verify` (True, an `ssl.SSLContext`, a CA bundle path, or
    False). The default one (True) is built once per `SSL_CERT_FILE` / `SSL_CERT_DIR`:
    loading the CA bundle takes ~45 ms, which every connection would pay (over http:// too)."""
    if isinstance(verify, ssl.SSLContext):
        return verify
    if verify is not True:
        return httpx.create_ssl_context(verify=verify)  # type: ignore[arg-type]
    key = (os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    context = _DEFAULT_CONTEXTS.get(key)
    if context is None:
        context = _DEFAULT_CONTEXTS[key] = httpx.create_ssl_context()
    return context


def http_client(
    url: str,
    *,
    headers: Mapping[str, str] | None,
    http2: bool,
    verify: object,
    event_streams_apart: bool = False,
) -> httpx.AsyncClient:
    """The client of one ACP connection to `url`. `http2`: HTTP/2 over `http://` by prior
    knowledge, over `https://` by ALPN (HTTP/1.1 when the server offers only that); False:
    HTTP/1.1. `event_streams_apart`: each GET on a connection of its own (Streamable HTTP,
    see event_connections.py)."""
    http1 = not http2 or url.startswith("https://")
    context = tls_context(verify)
    transport = (
        event_stream_transport(http1=http1, http2=http2, context=context)
        if event_streams_apart
        else None
    )
    return httpx.AsyncClient(
        headers=dict(headers or {}),
        http1=http1,
        http2=http2,
        timeout=TIMEOUT,
        verify=context,
        transport=transport,
        event_hooks={"response": [_read_refusal]},
    )


async def _read_refusal(response: httpx.Response) -> None:
    """Read a refusal's body while it can be (a refused WebSocket upgrade is closed unread)."""
    if response.status_code >= 400:
        await response.aread()


async def refused(url: str, response: httpx.Response, what: str) -> RemoteConnectionError:
    """The error for a request the server answered with a failure status."""
    try:
        body = (await response.aread()).decode("utf-8", "replace").strip()
    except (httpx.HTTPError, httpx.StreamError):  # closed unread (a refused WebSocket upgrade)
        body = ""
    quoted = f": {body[:QUOTED_BODY]}" if body else ""
    return RemoteConnectionError(
        url,
        f"{what}: {response.status_code} {response.reason_phrase}{quoted}",
        status=response.status_code,
    )
