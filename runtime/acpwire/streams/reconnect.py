"""What a remote client does after a cut when it resumes its streams
(`open_remote(..., resume=True)`, or `resume=Reconnect(...)`): how often and how soon it
tries again, whether the server offers resumable streams (the capability its `initialize`
result carries), and the error when resuming failed. Both remote transports use it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import msgspec

from ..errors import ResumeFailed

LAST_EVENT_ID_HEADER = "Last-Event-ID"
"""The request header carrying the last cursor read (SSE's; the WebSocket upgrade too)."""
GONE = frozenset({404, 409})
"""A resume answered with these cannot succeed: the connection is gone (404), or what the
client missed is no longer kept (409)."""


@dataclass(frozen=True)
class Reconnect:
    """How a resuming client tries again after a cut: up to `attempts` times, waiting
    `first_delay` seconds before the first and twice as long before each next one (at most
    `max_delay`)."""

    attempts: int = 6
    """Attempts after a cut before the connection fails with `ResumeFailed`."""
    first_delay: float = 0.05
    """Seconds before the first attempt."""
    max_delay: float = 2.0
    """The longest wait between two attempts, in seconds."""

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.first_delay < 0 or self.max_delay < self.first_delay:
            raise ValueError(
                f"Reconnect needs attempts >= 1 and 0 <= first_delay <= max_delay, not {self!r}"
            )

    def delays(self) -> Iterator[float]:
        """The wait before each attempt."""
        delay = self.first_delay
        for _ in range(self.attempts):
            yield delay
            delay = min(delay * 2, self.max_delay)


def reconnect_policy(resume: bool | Reconnect) -> Reconnect | None:
    """`open_remote`'s `resume` argument as a policy (None: no resumption)."""
    if isinstance(resume, Reconnect):
        return resume
    return Reconnect() if resume else None


def offers_resumption(initialize_answer: bytes) -> bool:
    """Whether the server's `initialize` answer advertises resumable streams
    (`result._meta.transport.resumable`)."""
    try:
        answer = msgspec.json.decode(initialize_answer)
    except msgspec.DecodeError:
        return False
    found: object = answer
    for key in ("result", "_meta", "transport", "resumable"):
        if not isinstance(found, dict):
            return False
        found = found.get(key)
    return isinstance(found, dict)


def resume_failed(url: str, what: str, status: int | None = None) -> ResumeFailed:
    """The error of a connection whose streams could not be resumed after a cut."""
    return ResumeFailed(
        url,
        f"{what}; the connection could not be resumed: open_remote again, then "
        "open_session(conn, session_id=...) resumes the session",
        status=status,
    )
