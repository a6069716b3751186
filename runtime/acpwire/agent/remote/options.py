"""`RemoteOptions`: what a remote agent server checks and bounds, the one place their
defaults and meanings are written (the limits of each ACP connection itself stay in
`ConnectionOptions`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from .guard import Authorize


@dataclass(frozen=True)
class RemoteOptions:
    """The checks and limits of `agent_app` (`remote=RemoteOptions(...)`)."""

    authorize: Authorize | None = None
    """The authentication hook, run for every request (`bearer_token("...")`, or your own:
    None lets a request through, a `Denied` answers 401/403). None: no authentication,
    fine on a loopback address; put one on anything else."""

    allowed_origins: Collection[str] = ()
    """Browser origins (`https://app.example`) allowed besides the server's own (and, on a
    loopback address, loopback origins); any other `Origin` is answered 403."""

    allowed_hosts: Collection[str] = ()
    """`Host` values (`myhost:8000`) allowed on a loopback address besides loopback names
    (DNS rebinding protection); elsewhere `Host` is not checked."""

    path: str | None = "/acp"
    """The endpoint's path (404 elsewhere); None serves any path (mounted in a larger app)."""

    max_connections: int = 1000
    """ACP connections at once (both profiles); past that `initialize` and the WebSocket
    upgrade are answered 503 with `Retry-After`."""

    max_message_bytes: int = 16 * 1024 * 1024
    """Largest message accepted from a client: a larger POST body is answered 413, a larger
    WebSocket message closes the socket (1009)."""

    max_stream_bytes: int = 4 * 1024 * 1024
    """Bytes the agent's messages may queue on one event stream before the agent waits for
    its reader (Streamable HTTP; back-pressure)."""

    stall_timeout: float = 60.0
    """Seconds a full event stream may go without its reader taking anything before the
    connection is closed (a client that stopped reading, or never opened the stream)."""

    keepalive_interval: float = 15.0
    """Seconds of silence after which an event stream sends a comment, so intermediaries
    keep it open. (WebSocket pings are the ASGI server's: `serve_remote` sets Hypercorn's.)"""

    initialize_timeout: float = 30.0
    """Seconds the agent gets to answer an `initialize` POST; then 504."""

    known_sessions: int = 100_000
    """Session ids this server remembers from its connections (the oldest are forgotten), so
    a client that reconnects may open a session's stream before `session/load`."""

    def __post_init__(self) -> None:
        for name in ("max_connections", "max_message_bytes", "max_stream_bytes"):
            if getattr(self, name) < 1:
                raise ValueError(f"RemoteOptions.{name} must be positive")
