"""The limits and checks of one connection: `ConnectionOptions`, the one place their defaults
and meanings are written (public as `acpwire.ConnectionOptions`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from .telemetry import Instrumentation
from .wire_line import WireLine


@dataclass(frozen=True)
class ConnectionOptions:
    """The limits and checks of a connection, for `serve_agent`, `serve_turns`, `connect` and
    `open_agent` (`options=ConnectionOptions(max_concurrent_requests=8)`).

    Each is also accepted as a keyword argument of those functions (`max_line_bytes=...`), the
    form of earlier releases; `options=` is the preferred one. One call uses one form: a
    keyword set to anything but its default next to `options=` raises TypeError.
    """

    max_line_bytes: int = 64 * 1024 * 1024
    """Longest line accepted (64 MiB: room for multi-MB tool call updates); a longer one is
    answered -32600 and skipped."""

    max_concurrent_requests: int = 64
    """Requests from the peer handled at once; as many more wait, and past that a request is
    refused with an error (tasks and memory stay bounded)."""

    max_buffered_bytes: int = 4 * 1024 * 1024
    """Bound of the send buffer (4 MiB): a slow reader slows the senders instead of growing
    memory."""

    eof_grace_period: float = 3.0
    """Seconds the requests already received may still run once the peer's input ended; their
    answers are written, then the rest are answered with an error. Below `open_agent`'s
    `grace_period`: an agent answers, then exits."""

    background_grace_period: float = 0.0
    """Seconds the connection's background work (the v2 turns `PromptTurns` runs after
    answering their prompt) may run on once the peer's input ended, what it sends going
    nowhere; then it is cancelled. 0 (the default): cancelled at once, right over stdio,
    where a client that left is gone for good. `agent_app` sets `RemoteOptions.idle_timeout`,
    so a turn whose client dropped finishes and is recorded for the client to resume."""

    check_outgoing: bool = False
    """Check every message this side sends against this schema release first
    (`acp_schema.check_outgoing`): an enum value or union tag unknown to it (a typo such as
    `"end_trun"`) fails the send unless it starts with `_`; a handler's bad result is answered
    -32603 and logged. For development and tests."""

    on_line: Callable[[WireLine], None] | None = None
    """Called with a `WireLine` (direction, the line's bytes, `time.monotonic()`) for every
    line read from the peer and written to it, in order, lines that fail to parse included:
    a trace of the session, a log of its traffic. It runs synchronously on the connection's
    reader (lines read: before they are processed) and senders (lines written: when queued),
    so it must be quick (append to a list, write to a buffered file) and must not block. It
    should not raise: an exception is logged once and the connection goes on, every message
    still processed and sent, the hook still called. None (the default) costs nothing.
    `WireLine.connection` tells the lines of several connections apart (`agent_app`)."""

    telemetry: Instrumentation | None = None
    """Instruments the connection: `acpwire.otel.Telemetry(tracer_provider=...)` (`pip install
    acpwire[otel]`) makes OpenTelemetry spans of every request sent and handled and of every
    prompt turn, and carries the W3C trace context in `_meta` (`traceparent`, `tracestate`,
    `baggage`), so one trace crosses editor -> agent. None (the default): nothing is
    instrumented and OpenTelemetry is not imported."""


def call_options(
    options: ConnectionOptions | None,
    *,
    max_line_bytes: int,
    max_concurrent_requests: int,
    max_buffered_bytes: int,
    eof_grace_period: float,
    check_outgoing: bool,
) -> ConnectionOptions:
    """The options of a call that takes both forms (`options=` and the keywords of earlier
    releases): `options` when given, then every keyword must be at its default (TypeError
    otherwise); else the options the keywords make."""
    keywords = ConnectionOptions(
        max_line_bytes=max_line_bytes,
        max_concurrent_requests=max_concurrent_requests,
        max_buffered_bytes=max_buffered_bytes,
        eof_grace_period=eof_grace_period,
        check_outgoing=check_outgoing,
    )
    if options is None:
        return keywords
    if keywords != ConnectionOptions():
        given = ", ".join(
            f"{field.name}={getattr(keywords, field.name)!r}"
            for field in dataclasses.fields(keywords)
            if getattr(keywords, field.name) != field.default
        )
        raise TypeError(
            f"{given} given next to options=: pass the connection options in one form, "
            f"e.g. options=dataclasses.replace(options, {given})"
        )
    return options
