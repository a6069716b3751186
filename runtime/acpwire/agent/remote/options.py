"""`RemoteOptions`: what a remote agent server checks and bounds, the one place their
defaults and meanings are written (the limits of each ACP connection itself stay in
`ConnectionOptions`)."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from .guard import Authorize


@dataclass(frozen=True)
class ResumeOptions:
    """Resumable event streams (`RemoteOptions(resumable=ResumeOptions())`): every message the
    server sends carries a per-stream cursor (an SSE `id:`; on a WebSocket, the frame's
    number), and a client that lost its connection reconnects with the last one it read
    (`Last-Event-ID`) and gets what it missed. Advertised in the `initialize` result as
    `_meta.transport.resumable`.

    Each stream keeps the messages its reader took, newest first, up to both bounds below
    (messages not read yet are always kept: `max_stream_bytes` bounds them); a cursor older
    than what is kept is answered 409 (the client then falls back to `session/resume`). The
    messages are kept for the connection's life: until DELETE, or `idle_timeout` seconds
    without a client."""

    max_events: int = 4096
    """Messages kept per stream after its reader took them."""

    max_bytes: int = 4 * 1024 * 1024
    """Bytes of messages kept per stream after its reader took them."""

    def __post_init__(self) -> None:
        if self.max_events < 1 or self.max_bytes < 1:
            raise ValueError("ResumeOptions.max_events and max_bytes must be positive")


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
    connection is closed (a client that stopped reading, or never opened the stream); and
    seconds a write to an event stream may wait for its client before that stream ends (a
    client that stopped reading it, or dropped it unsaid: an HTTP/2 client may close a
    response without resetting its stream, as httpx does); the connection then waits
    `idle_timeout` for a client, as after a disconnect."""

    keepalive_interval: float = 15.0
    """Seconds of silence after which an event stream sends a comment, so intermediaries
    keep it open. (WebSocket pings are the ASGI server's: `serve_remote` sets Hypercorn's.)"""

    initialize_timeout: float = 30.0
    """Seconds the agent gets to answer an `initialize` POST; then 504."""

    idle_timeout: float = 300.0
    """Seconds a connection may go without a client before it is ended (logged): Streamable
    HTTP, no event stream open and no request; WebSocket, a socket that dropped without a
    close (a normal close ends the connection at once). Until then the connection's turns
    run on and are recorded in the session store, so a client that comes back resumes the
    session with everything its turn did; then the agent reads EOF, as when a stdio client
    leaves (its turns are cancelled)."""

    max_sessions_per_connection: int = 1000
    """Sessions one connection may have open at once (`session/new`, `fork`, `load`,
    `resume`, until `session/close`); a request for one more is answered with an error
    naming the limit (-32603, `data.limit`) and logged, and the connection goes on."""

    known_sessions: int = 100_000
    """Session ids this server remembers from its connections (the oldest are forgotten), so
    a client that reconnects may open a session's stream before `session/load`. With a
    session store (`agent_app(store=...)`) the store is asked too: nothing is forgotten."""

    resumable: ResumeOptions | None = None
    """Resumable event streams (see `ResumeOptions`); None: none (no cursors, nothing kept
    after it was sent, a WebSocket that drops ends its connection)."""

    def __post_init__(self) -> None:
        for name in (
            "max_connections",
            "max_message_bytes",
            "max_stream_bytes",
            "max_sessions_per_connection",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"RemoteOptions.{name} must be positive")
        if self.idle_timeout <= 0:
            raise ValueError("RemoteOptions.idle_timeout must be positive")
