"""`SqliteSessionStore`: sessions and their history in an SQLite file (standard library
`sqlite3`), the embedded default for one machine: it survives a restart of the server.

Blocking I/O and the event loop: history is written by a `HistoryWriter` thread in batches
(one transaction per batch, whatever the number of updates), so the send path of an update
only queues it. The rest runs on the caller's thread, where each call is one short statement
on an indexed table (microseconds: `nox -s bench` measures them, bench/session_stores.py):
`add` and `save` (a prompt's start) write one row, `get` reads one, `history` waits for the
writer to catch up and then reads the session's rows a page at a time. The database is in
WAL mode, so readers never wait for the writer; `synchronous="NORMAL"` (the default) makes a
commit durable against a crash of the process, `"FULL"` against a power loss too (slower).

One process writes a session at a time (sessions are driven by one connection at a time).
Several processes may open the same file (WAL); for server processes on several machines use
`RedisSessionStore`.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from ..sessions import SessionUpdate, StoredSession
from .writer import Entry
from .written import _WrittenHistory, decode_update

SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL UNIQUE,
    cwd TEXT NOT NULL,
    protocol_version INTEGER NOT NULL,
    title TEXT,
    updated_at REAL NOT NULL,
    prompt_count INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS updates (
    n INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    data BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS updates_of_session ON updates (session_id, n);
"""
COLUMNS = "session_id, cwd, protocol_version, title, updated_at, prompt_count"
PAGE = 500
"""History rows read per statement (a long history is read in pages)."""
SYNCHRONOUS = ("OFF", "NORMAL", "FULL", "EXTRA")


class SqliteSessionStore(_WrittenHistory):
    """Sessions and their history in the SQLite file `path` (made when missing)."""

    def __init__(self, path: str | Path, *, synchronous: str = "NORMAL") -> None:
        """`synchronous`: SQLite's setting of that name for the history writes: "NORMAL"
        (durable when the process crashes) or "FULL" (when the machine does, slower)."""
        if synchronous.upper() not in SYNCHRONOUS:
            raise ValueError(f"synchronous must be one of {SYNCHRONOUS}, not {synchronous!r}")
        self.path = Path(path)
        """The database file."""
        self._synchronous = synchronous.upper()
        self._lock = threading.Lock()  # the caller's connection, used from any thread
        self._db = self._connect()
        with self._db:
            self._db.executescript(SCHEMA)
        self._writer_db: sqlite3.Connection | None = None
        super().__init__(self._write, name=f"acpwire history writer ({self.path})")

    def _connect(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute(f"PRAGMA synchronous={self._synchronous}")
        db.execute("PRAGMA busy_timeout=10000")
        return db

    # ------------------------------------------------------------------ SessionStore

    def add(self, session: StoredSession) -> None:
        """Keep a new session (and the history it comes with, if any)."""
        row = (
            session.session_id,
            session.cwd,
            session.protocol_version,
            session.title,
            session.updated_at,
            session.prompt_count,
        )
        with self._lock:
            self._db.execute(f"INSERT INTO sessions ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)", row)
        self._added(session)

    def get(self, session_id: str) -> StoredSession | None:
        """The session (its `history` empty: read it with `history`), None when unknown."""
        with self._lock:
            row = self._db.execute(
                f"SELECT {COLUMNS} FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
        return None if row is None else self._session(row)

    def sessions(self) -> Iterator[StoredSession]:
        """All sessions, oldest first."""
        with self._lock:
            rows = self._db.execute(f"SELECT {COLUMNS} FROM sessions ORDER BY n").fetchall()
        return (self._session(row) for row in rows)

    def save(self, session: StoredSession) -> None:
        """Write the session's title, time and prompt count."""
        with self._lock:
            self._db.execute(
                "UPDATE sessions SET title = ?, updated_at = ?, prompt_count = ? "
                "WHERE session_id = ?",
                (session.title, session.updated_at, session.prompt_count, session.session_id),
            )

    def close(self) -> None:
        """Write what is queued, stop the writer and close the database."""
        self.writer.close()
        with self._lock:
            self._db.close()

    def _pages(self, session_id: str, version: int) -> Iterator[SessionUpdate]:
        last = 0
        while True:
            with self._lock:
                rows = self._db.execute(
                    "SELECT n, data FROM updates WHERE session_id = ? AND n > ? ORDER BY n LIMIT ?",
                    (session_id, last, PAGE),
                ).fetchall()
            for last, data in rows:  # noqa: B007  (`last` is the page's keyset cursor)
                yield decode_update(version, data)
            if len(rows) < PAGE:
                return

    def _session(self, row: tuple[object, ...]) -> StoredSession:
        session_id, cwd, version, title, updated_at, prompt_count = row
        return StoredSession(
            session_id=str(session_id),
            cwd=str(cwd),
            protocol_version=int(version),  # type: ignore[call-overload]
            title=None if title is None else str(title),
            updated_at=float(updated_at),  # type: ignore[arg-type]
            prompt_count=int(prompt_count),  # type: ignore[call-overload]
        )

    def _write(self, batch: Sequence[Entry]) -> None:
        """One transaction for the whole batch (on the writer thread)."""
        if self._writer_db is None:
            self._writer_db = self._connect()
        encode = self._encode
        rows: Iterable[tuple[str, bytes]] = [(sid, encode(update)) for sid, update in batch]
        with self._writer_db:
            self._writer_db.execute("BEGIN")
            self._writer_db.executemany(
                "INSERT INTO updates (session_id, data) VALUES (?, ?)", rows
            )
