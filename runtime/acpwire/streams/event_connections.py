"""The httpx transport of a Streamable HTTP client: POSTs and DELETEs share one connection,
and each event stream (a `GET`) gets an HTTP/2 connection of its own, closed with it.

Why not one HTTP/2 connection for everything: httpcore (1.0.9, under httpx 0.28) lets the
task that waits for a response read the socket for every stream of the connection while it
holds the connection's read lock, and a task whose response a reader already took off the
socket still queues for that lock before it looks for it
(`AsyncHTTP2Connection._receive_stream_event` / `_receive_events`,
https://github.com/encode/httpcore/blob/1.0.9/httpcore/_async/http2.py#L327-L388). With three
responses pending on one connection (an idle event stream, a session's stream, a POST), the
idle stream's task can take the lock first and block on a socket that stays quiet, while the
POST's `202` (already received) waits behind it: the client stops sending, the server waits
for the client (a permission answer), and the connection hangs until the next keepalive.
With at most two responses pending per connection the lock is always handed to the task
whose response arrived, so a long-lived stream gets a connection of its own, and POSTs (one
at a time, from the connection's writer) share one. Each connection is still HTTP/2 (the
RFD's profile), and cookies stay the client's (one jar above the transports).

Needs the `remote` extra (`pip install 'acpwire[remote]'`).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Callable

import httpx


class EventStreamConnections(httpx.AsyncBaseTransport):
    """`GET` requests each on a fresh transport from `make` (closed when the response is);
    everything else on one shared transport."""

    def __init__(self, make: Callable[[], httpx.AsyncBaseTransport]) -> None:
        self._make = make
        self._shared = make()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        if request.method != "GET":
            return await self._shared.handle_async_request(request)
        transport = self._make()
        try:
            response = await transport.handle_async_request(request)
        except BaseException:
            await transport.aclose()
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _ClosingStream(response.stream, transport)
        return response

    async def aclose(self) -> None:
        await self._shared.aclose()


class _ClosingStream(httpx.AsyncByteStream):
    """A response body that closes its transport (its connection) when it is closed."""

    def __init__(self, body: httpx.AsyncByteStream, transport: httpx.AsyncBaseTransport) -> None:
        self._body = body
        self._transport = transport

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._body.__aiter__()  # the body's own iterator: no generator around it

    async def aclose(self) -> None:
        try:
            await self._body.aclose()
        finally:
            await self._transport.aclose()


def event_stream_transport(
    *, http1: bool, http2: bool, context: ssl.SSLContext
) -> EventStreamConnections:
    """The transport for `httpx.AsyncClient(transport=...)`, every connection with `context`."""

    def make() -> httpx.AsyncBaseTransport:
        return httpx.AsyncHTTPTransport(verify=context, http1=http1, http2=http2)

    return EventStreamConnections(make)
