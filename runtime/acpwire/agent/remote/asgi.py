"""The ASGI 3 vocabulary the remote server uses: scopes and messages are plain dicts (the
ASGI specification's), and a few helpers to read headers and answer with a status."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def headers_of(scope: Scope) -> dict[str, str]:
    """The request's headers, names in lower case, repeated ones joined with `, `."""
    found: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", ()):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        found[name] = f"{found[name]}, {value}" if name in found else value
    return found


CLOSE = {"connection": "close"}


def closes(scope: Scope) -> bool:
    """Whether a response that ends what the client sends on this ACP connection closes
    its HTTP connection (HTTP/1.1): see `closing`."""
    return scope.get("http_version") == "1.1"


def closing(scope: Scope) -> dict[str, str]:
    """`Connection: close` for a response over HTTP/1.1 after which the client has nothing
    more to send on this ACP connection (the DELETE's answer, an event stream, which ends
    with its connection). Hypercorn closes an idle keep-alive socket only when its keep-alive
    timeout runs out, even after the client closed it: without this each client that leaves
    holds a socket of the server for that long. (HTTP/2 forbids the header.)"""
    return dict(CLOSE) if closes(scope) else {}


def encoded(headers: Mapping[str, str] | Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    return [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in pairs]


NO_BODY = tuple(encoded({"content-length": "0"}))
"""The headers of a response with no body and no others (a 202 per POST): built once."""


async def respond(
    send: Send,
    status: int,
    body: bytes | str = b"",
    *,
    content_type: str = "text/plain; charset=utf-8",
    headers: Mapping[str, str] | None = None,
) -> None:
    """A whole response: `status`, `body` (text by default), extra `headers`."""
    data = body.encode() if isinstance(body, str) else body
    if data or headers:
        pairs = dict(headers or {})
        if data:
            pairs["content-type"] = content_type
        pairs["content-length"] = str(len(data))
        start: Iterable[tuple[bytes, bytes]] = encoded(pairs)
    else:
        start = NO_BODY
    await send({"type": "http.response.start", "status": status, "headers": start})
    await send({"type": "http.response.body", "body": data})
