"""`_WrittenHistory`: what the durable stores share: history recorded through a
`HistoryWriter` thread (see writer.py) and read back, after a flush, a page at a time in the
protocol version the session was recorded in. A store subclasses it and implements `get`
(the session, or None) and `_pages` (its stored updates, decoded)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence

import msgspec

from ..sessions import SessionUpdate, StoredSession
from .writer import Entry, HistoryWriter


class _WrittenHistory(ABC):
    def __init__(self, write: Callable[[Sequence[Entry]], None], *, name: str) -> None:
        """`write(batch)`: writes a batch of (session id, update) entries, on the writer
        thread; `name`: the thread's."""
        self._versions: dict[str, int] = {}  # session -> its protocol version (never changes)
        self._encode = msgspec.json.Encoder().encode
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
