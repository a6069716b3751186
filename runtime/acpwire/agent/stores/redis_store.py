"""`RedisSessionStore`: sessions and their history on a Redis server, shared by several server
processes (Hypercorn workers, machines behind a load balancer): a session opened through one
is resumed through another.

Redis fits because what is shared is small and append-mostly: a hash per session (its
`session/list` fields and prompt count), a list of session ids (oldest first), and a list per
session of its updates (JSON), appended with RPUSH, which keeps the order of the one process
driving the session. A SQL server would do too; Redis needs no schema and its appends cost
one round trip per batch.

Keys (under `prefix`, "acp:" by default): `sessions` (list of ids), `session:<id>` (hash),
`history:<id>` (list). History is written by a `HistoryWriter` thread (one pipeline per
batch); the other calls are one round trip each on the caller's thread (`add`, `get`,
`save`; `sessions` two), which blocks the event loop for that long: keep Redis near the
server (the same host or network; `nox -s bench` measures it). Needs the `redis` package
(`pip install 'acpwire[redis]'`).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Sequence
from itertools import groupby
from typing import Any

from ..sessions import SessionUpdate, StoredSession
from .writer import Entry
from .written import _WrittenHistory, decode_update

PAGE = 500
"""History entries read per round trip."""
INSTALL = "pip install 'acpwire[redis]'"


def _redis() -> Any:
    try:
        return importlib.import_module("redis")
    except ModuleNotFoundError as exc:
        raise ModuleNotFoundError(
            f"RedisSessionStore needs the `redis` package, which is not installed: {INSTALL}",
            name="redis",
        ) from exc


class RedisSessionStore(_WrittenHistory):
    """Sessions and their history on the Redis server at `url`."""

    def __init__(self, url: str = "redis://127.0.0.1:6379/0", *, prefix: str = "acp:") -> None:
        """`url`: the server (`redis://host:port/db`, `rediss://` for TLS, `unix:///path`);
        `prefix`: the start of every key, so several apps can share one database."""
        self.url = url
        """The Redis server's URL."""
        self.prefix = prefix
        """The start of every key of this store."""
        self._client = _redis().Redis.from_url(url)
        self._client.ping()  # fail now, naming the server, not at the first session
        super().__init__(self._write, name=f"acpwire history writer ({url})")

    # ------------------------------------------------------------------ SessionStore

    def add(self, session: StoredSession) -> None:
        """Keep a new session (and the history it comes with, if any)."""
        pipe = self._client.pipeline()
        pipe.hset(self._key(session.session_id), mapping=_fields(session))
        pipe.rpush(self.prefix + "sessions", session.session_id)
        pipe.execute()
        self._added(session)

    def get(self, session_id: str) -> StoredSession | None:
        """The session (its `history` empty: read it with `history`), None when unknown."""
        fields = self._client.hgetall(self._key(session_id))
        return _session(session_id, fields) if fields else None

    def sessions(self) -> Iterator[StoredSession]:
        """All sessions, oldest first."""
        ids = [raw.decode() for raw in self._client.lrange(self.prefix + "sessions", 0, -1)]
        pipe = self._client.pipeline()
        for session_id in ids:
            pipe.hgetall(self._key(session_id))
        found = pipe.execute()
        return (_session(i, fields) for i, fields in zip(ids, found, strict=True) if fields)

    def save(self, session: StoredSession) -> None:
        """Write the session's title, time and prompt count."""
        key = self._key(session.session_id)
        pipe = self._client.pipeline()
        pipe.hset(key, mapping=_fields(session))
        if session.title is None:
            pipe.hdel(key, "title")
        pipe.execute()

    def close(self) -> None:
        """Write what is queued, stop the writer and close the connections."""
        self.writer.close()
        self._client.close()

    def _key(self, session_id: str) -> str:
        return f"{self.prefix}session:{session_id}"

    def _pages(self, session_id: str, version: int) -> Iterator[SessionUpdate]:
        key, start = f"{self.prefix}history:{session_id}", 0
        while True:
            page = self._client.lrange(key, start, start + PAGE - 1)
            for data in page:
                yield decode_update(version, data)
            if len(page) < PAGE:
                return
            start += PAGE

    def _write(self, batch: Sequence[Entry]) -> None:
        """One pipeline for the whole batch, an RPUSH per run of one session (writer thread)."""
        pipe = self._client.pipeline(transaction=False)
        encode = self._encode
        for session_id, entries in groupby(batch, key=lambda entry: entry[0]):
            pipe.rpush(f"{self.prefix}history:{session_id}", *(encode(u) for _, u in entries))
        pipe.execute()


def _fields(session: StoredSession) -> dict[str, str | int | float]:
    fields: dict[str, str | int | float] = {
        "cwd": session.cwd,
        "protocol_version": session.protocol_version,
        "updated_at": repr(session.updated_at),
        "prompt_count": session.prompt_count,
    }
    if session.title is not None:
        fields["title"] = session.title
    return fields


def _session(session_id: str, fields: dict[bytes, bytes]) -> StoredSession:
    title = fields.get(b"title")
    return StoredSession(
        session_id=session_id,
        cwd=fields[b"cwd"].decode(),
        protocol_version=int(fields[b"protocol_version"]),
        title=None if title is None else title.decode(),
        updated_at=float(fields[b"updated_at"]),
        prompt_count=int(fields[b"prompt_count"]),
    )
