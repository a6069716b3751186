"""`_WrittenHistory`: what the durable stores share: history recorded through a
`HistoryWriter` thread (see writer.py) and read back, after a flush, a page at a time in the
protocol version the session was recorded in. A store subclasses it and implements `get`
(the session, or None) and `_pages` (its stored updates, decoded by `decode_update`).

An update is stored as its JSON, and one of an unstable surface's classes (an agent built on
`acp_schema.v2.unstable` sends its own, such as `plan_removed`, beside the stable classes of
the turn helpers) with `UNSTABLE` before it: read back, each is decoded by the surface it was
recorded with and by that surface's rules (`acp_schema.Codec`), so a durable store gives the
same classes back as the memory store: an unstable-only variant, an extension variant
(`UnknownSessionUpdate`) and what only the unstable surface knows of a stable variant.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence

import msgspec

import acp_schema
from acp_schema import Codec, surface_of

from ..sessions import SessionUpdate, StoredSession
from .writer import Entry, HistoryWriter

UNSTABLE = b"unstable:"
"""The mark before a stored update of an unstable surface (JSON never starts with it)."""

_DECODERS: dict[tuple[int, bool], Codec[SessionUpdate]] = {}


def _decoder(version: int, unstable: bool) -> Codec[SessionUpdate]:
    """The surface's `SessionUpdate` codec (msgspec, then the schema's rules: an extension
    variant comes back as the `UnknownSessionUpdate` it was); an unstable surface is imported
    when first met."""
    decoder = _DECODERS.get((version, unstable))
    if decoder is None:
        module = acp_schema.surface(version, unstable).module
        decoder = _DECODERS[version, unstable] = Codec(module.SessionUpdate)
    return decoder


def decode_update(version: int, data: bytes) -> SessionUpdate:
    """A stored update, decoded as the surface of `version` it was recorded with."""
    if data.startswith(UNSTABLE):
        return _decoder(version, True).decode(memoryview(data)[len(UNSTABLE) :])
    return _decoder(version, False).decode(data)


class _WrittenHistory(ABC):
    def __init__(self, write: Callable[[Sequence[Entry]], None], *, name: str) -> None:
        """`write(batch)`: writes a batch of (session id, update) entries, on the writer
        thread; `name`: the thread's."""
        self._versions: dict[str, int] = {}  # session -> its protocol version (never changes)
        self._json = msgspec.json.Encoder().encode
        self.writer = HistoryWriter(write, name=name)
        """The thread writing history (`flush()` waits for it)."""

    @abstractmethod
    def get(self, session_id: str) -> StoredSession | None:
        """The session (its `history` empty: read it with `history`), None when unknown."""

    @abstractmethod
    def _pages(self, session_id: str, version: int) -> Iterator[SessionUpdate]:
        """The session's stored updates in order, decoded as `version`."""

    def _added(self, session: StoredSession) -> None:
        """A new session was stored: its version is known, its history queued."""
        self._versions[session.session_id] = session.protocol_version
        for update in session.history:
            self.writer.put((session.session_id, update))

    def _encode(self, update: object) -> bytes:
        """The update as stored (on the writer thread): its JSON, marked when unstable."""
        surface = surface_of(update)
        data = self._json(update)
        return UNSTABLE + data if surface is not None and surface.unstable else data

    def recorder(self, session_id: str) -> Callable[[SessionUpdate], object]:
        """Queues each update for the writer thread (no I/O on the send path)."""
        put = self.writer.put
        return lambda update: put((session_id, update))

    def history(self, session_id: str) -> Iterator[SessionUpdate]:
        """The session's updates in order, everything this process recorded until now
        included (waits for the writer first); read a page at a time as the caller iterates."""
        version = self._version(session_id)
        self.writer.flush()
        return self._pages(session_id, version)

    def flush(self) -> None:
        """Wait until every update recorded so far is written."""
        self.writer.flush()

    def _version(self, session_id: str) -> int:
        version = self._versions.get(session_id)
        if version is None:
            session = self.get(session_id)
            if session is None:
                raise KeyError(session_id)
            version = self._versions[session_id] = session.protocol_version
        return version
