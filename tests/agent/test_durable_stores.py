"""The durable session stores, `SqliteSessionStore` and `RedisSessionStore` (against a real
Redis server the tests start): sessions and history that outlive the process (a store opened
again on the same file or server is the restarted server's), history written by a thread in
batches and read with what was recorded just now, served by `turn_agents` like the memory
store; and the deprecation of stores without `save` / `history`."""

from __future__ import annotations

import itertools
import logging
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

import acp_schema
import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acpwire.agent import (
    MemorySessionStore,
    SqliteSessionStore,
    StoredSession,
    turn_agents,
)
from acpwire.agent.stores.redis_store import RedisSessionStore
from acpwire.agent.stores.writer import HistoryWriter
from acpwire.examples import tool_agent
from helpers.durable import finished_turn, own_update, surface_story
from helpers.lines import new_session
from helpers.raw import request, response
from helpers.redis_server import redis_server
from helpers.serving import served_tool_agent
from helpers.surfaces import AnySurface, module

CHUNK = v2.AgentMessageChunk(message_id="m1", content=v2.TextContent(text="hi"))


DurableStore = SqliteSessionStore | RedisSessionStore
Opener = Callable[[], DurableStore]
PREFIXES = itertools.count()


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(params=["sqlite", "redis"])
def store_at(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """Opens the store of one place (a file, a key prefix): again and again, as a server
    restarted opens it."""
    return opener(request, tmp_path)


@pytest.fixture(params=["memory", "sqlite", "redis"])
def any_store_at(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    """`store_at`, and the memory store (opened again: the same store, a new connection)."""
    return opener(request, tmp_path)


def opener(request: pytest.FixtureRequest, tmp_path: Path) -> Opener:
    if request.param == "memory":
        memory = MemorySessionStore()
        return lambda: memory  # type: ignore[return-value]
    if request.param == "sqlite":
        return lambda: SqliteSessionStore(tmp_path / "sessions.db")
    url, prefix = request.getfixturevalue("redis_url"), f"test{next(PREFIXES)}:"
    return lambda: RedisSessionStore(url, prefix=prefix)


def test_sessions_and_history_survive_reopening(store_at: Opener) -> None:
    store = store_at()
    store.add(StoredSession("s2", "/a", 2))
    store.add(
        StoredSession(
            "s1", "/b", 1, history=[v1.UserMessageChunk(content=v1.TextContent(text="q"))]
        )
    )
    record = store.recorder("s2")
    updates: list[v2.SessionUpdate] = [
        v2.UserMessage(message_id="u1", content=[v2.TextContent(text="q")]),
        CHUNK,
        v2.SessionStateUpdate(state="idle", stop_reason="end_turn"),
    ]
    for update in updates:
        record(update)
    session = store.get("s2")
    assert session is not None
    session.title, session.prompt_count = "q", 3
    store.save(session)
    store.close()

    again = store_at()  # the server restarted
    try:
        assert [s.session_id for s in again.sessions()] == ["s2", "s1"]  # oldest first
        found = again.get("s2")
        assert found is not None
        assert (found.cwd, found.protocol_version, found.title, found.prompt_count) == (
            "/a",
            2,
            "q",
            3,
        )
        assert found.updated_at == session.updated_at
        assert list(again.history("s2")) == updates
        assert list(again.history("s1")) == [v1.UserMessageChunk(content=v1.TextContent(text="q"))]
        assert again.get("nope") is None
    finally:
        again.close()


def surface_history(surface: AnySurface) -> list[Any]:
    """A history an agent on `surface` records: an update the turn helpers send (the stable
    module's class, the same on the wire) and one of the surface's own classes; on an unstable
    surface that one is a variant the stable surface lacks (`plan_removed`); on v2 an
    extension variant too (v1's union is closed)."""
    types, stable = module(surface), module(acp_schema.surface(surface.protocol_version))
    helper = (
        stable.AgentMessageChunk(message_id="m1", content=stable.TextContent(text="hi"))
        if surface.protocol_version == 2
        else stable.AgentMessageChunk(content=stable.TextContent(text="hi"))
    )
    own = own_update(surface)
    if surface.protocol_version == 1:
        return [helper, own]
    return [helper, own, types.UnknownSessionUpdate(sessionUpdate="_acme_progress", n=1)]


def test_the_history_of_any_surface_survives_reopening(
    store_at: Opener, surface: AnySurface
) -> None:
    """A durable store gives back what an agent on any surface recorded, as the memory store
    does (the same classes), after a restart: an unstable-only variant included."""
    recorded = surface_history(surface)
    store = store_at()
    store.add(StoredSession("s", "/", surface.protocol_version))
    record = store.recorder("s")
    for update in recorded:
        record(update)
    assert list(store.history("s")) == recorded
    store.close()
    again = store_at()
    try:
        assert list(again.history("s")) == recorded
        assert [type(u) for u in again.history("s")] == [type(u) for u in recorded]
    finally:
        again.close()


def test_history_read_includes_what_was_recorded_just_now_in_few_batches(
    store_at: Opener,
) -> None:
    store = store_at()
    try:
        store.add(StoredSession("s", "/", 2))
        record = store.recorder("s")
        for n in range(10_000):
            record(v2.AgentMessageChunk(message_id="m", content=v2.TextContent(text=str(n))))
        texts = [u.content.text for u in store.history("s")]  # type: ignore[union-attr]
        assert texts == [str(n) for n in range(10_000)]
        assert store.writer.batches < 100, f"{store.writer.batches} writes for 10000 updates"
    finally:
        store.close()


def test_a_failed_write_is_logged_and_written_with_the_next_batch(
    caplog: pytest.LogCaptureFixture,
) -> None:
    written: list[str] = []
    failures = [RuntimeError("disk full")]

    def write(batch: Sequence[tuple[str, object]]) -> None:
        if failures:
            raise failures.pop()
        written.extend(session for session, _ in batch)

    writer = HistoryWriter(write, name="test writer")
    with caplog.at_level(logging.ERROR, logger="acpwire.agent"):
        writer.put(("a", CHUNK))
        writer.flush()  # the first try failed: a flush does not hang on it
        writer.put(("b", CHUNK))
        writer.close()
    assert written == ["a", "b"]
    assert "writing 1 updates failed" in caplog.text and "disk full" in caplog.text


def test_the_writer_runs_off_the_calling_thread(tmp_path: Path) -> None:
    threads: set[int] = set()
    writer = HistoryWriter(lambda batch: threads.add(threading.get_ident()), name="w")
    writer.put(("a", CHUNK))
    writer.close()
    assert threads and threading.get_ident() not in threads


def test_synchronous_must_be_sqlites(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="synchronous must be one of"):
        SqliteSessionStore(tmp_path / "x.db", synchronous="sometimes")


@pytest.mark.usefixtures("loop")
@pytest.mark.parametrize("version", [2, 1])
async def test_serve_turns_replays_a_session_after_a_restart(
    store_at: Opener, version: int
) -> None:
    """A turn served over one store, replayed by a store opened again on the file: v2
    `session/resume` and v1 `session/load` send exactly what the turn sent."""
    store = store_at()
    async with served_tool_agent(version, store) as peer:
        sid = await new_session(peer, version)
        sent = await finished_turn(peer, sid, version)
    store.close()
    updates = [
        m
        for m in sent
        if m.get("method") == "session/update"
        and m["params"]["update"].get("sessionUpdate") != "state_update"
    ]
    store = store_at()
    try:
        async with served_tool_agent(version, store) as peer:
            if version == 2:
                params = {"sessionId": sid, "cwd": "/repo", "replayFrom": {"type": "start"}}
                await peer.send(request(7, "session/resume", params))
                got = [await peer.receive() for _ in range(len(updates) + 2)]
                assert got == [*updates, sent[-1], response(7, {})]
            else:
                params = {"sessionId": sid, "cwd": "/repo", "mcpServers": []}
                await peer.send(request(7, "session/load", params))
                got = [await peer.receive() for _ in range(len(updates) + 2)]
                user = [
                    m
                    for m in got
                    if m.get("params", {}).get("update", {}).get("sessionUpdate")
                    == "user_message_chunk"
                ]
                assert len(user) == 1 and got[len(user) :] == [*updates, response(7, {})]
            again = await finished_turn(peer, sid, version)  # the ids go on from the history
            ids = {m["params"]["update"].get("toolCallId") for m in again if "params" in m}
            assert not ids & {m["params"]["update"].get("toolCallId") for m in updates} - {None}
    finally:
        store.close()


@pytest.mark.usefixtures("loop")
async def test_turn_agents_on_any_surface_replay_what_they_sent(
    any_store_at: Opener, surface: AnySurface
) -> None:
    """`turn_agents` on each surface (`unstable=True` for the unstable ones) records a turn
    into each store and replays it, on a new connection after the store was opened again (a
    restart): v2 `session/resume` and v1 `session/load` send exactly what the turn sent, an
    unstable-only variant included."""
    version, work = surface.protocol_version, surface_story(surface.unstable)
    serving: dict[str, Any] = {"work": work, "unstable": surface.unstable}
    store = any_store_at()
    async with served_tool_agent(version, store, **serving) as peer:
        sid = await new_session(peer, version)
        sent = await finished_turn(peer, sid, version)
    closed(store)
    updates = [m for m in sent if m.get("method") == "session/update"]
    tags = [m["params"]["update"]["sessionUpdate"] for m in updates]
    assert ("plan_removed" if surface.unstable else "session_info_update") in tags
    store = any_store_at()
    try:
        async with served_tool_agent(version, store, **serving) as peer:
            got = await replayed(peer, sid, version, len(updates) + 2)
            if version == 2:  # the states are not replayed: the last one is sent as it is now
                assert got == [*(m for m in updates if m not in states(updates)), sent[-1]]
            else:  # the prompt comes first, as the user's message
                prompt, replay = got[: len(got) - len(updates)], got[len(got) - len(updates) :]
                assert replay == updates
                assert [m["params"]["update"]["sessionUpdate"] for m in prompt] == [
                    "user_message_chunk"
                ]
    finally:
        closed(store)


def states(updates: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in updates if m["params"]["update"]["sessionUpdate"] == "state_update"]


def closed(store: object) -> None:
    """Closes a durable store (the memory store has nothing to close)."""
    if isinstance(store, SqliteSessionStore | RedisSessionStore):
        store.close()


async def replayed(peer: Any, sid: str, version: int, count: int) -> list[dict[str, Any]]:
    """What the agent sends for v2 `session/resume` from the start (v1 `session/load`), up
    to `count` messages or its response."""
    params: dict[str, Any] = {"sessionId": sid, "cwd": "/repo"}
    if version == 2:
        params["replayFrom"] = {"type": "start"}
    else:
        params["mcpServers"] = []
    await peer.send(request(7, "session/resume" if version == 2 else "session/load", params))
    got: list[dict[str, Any]] = []
    while not got or got[-1].get("id") != 7:
        got.append(await peer.receive())
        assert len(got) <= count + 1, got
    assert got[-1] == response(7, {})
    return got[:-1]


class OldStore:
    """A store of an earlier release: no save() and no history()."""

    def __init__(self) -> None:
        self.inner = MemorySessionStore()

    def add(self, session: StoredSession) -> None:
        self.inner.add(session)

    def get(self, session_id: str) -> StoredSession | None:
        return self.inner.get(session_id)

    def sessions(self) -> Iterable[StoredSession]:
        return self.inner.sessions()

    def recorder(self, session_id: str) -> Callable[[Any], object]:
        return self.inner.recorder(session_id)


def test_a_store_without_save_and_history_is_deprecated_and_still_works() -> None:
    with pytest.warns(DeprecationWarning, match=r"without save\(\) and history\(\) is deprecated"):
        turn_agents(tool_agent.work, name="t", version="1", store=OldStore())


@pytest.mark.usefixtures("loop")
async def test_an_old_store_still_replays() -> None:
    store = OldStore()
    with pytest.warns(DeprecationWarning):
        async with served_tool_agent(2, store) as peer:  # type: ignore[arg-type]
            sid = await new_session(peer, 2)
            sent = await finished_turn(peer, sid, 2)
            reply = await peer.call(
                7,
                "session/resume",
                {"sessionId": sid, "cwd": "/repo", "replayFrom": {"type": "start"}},
            )
    first = next(m for m in sent if m.get("method") == "session/update")
    assert reply == first  # the replay starts with the prompt, read from the objects


def test_a_missing_redis_server_is_named() -> None:
    with pytest.raises(Exception, match="6390"):
        RedisSessionStore("redis://127.0.0.1:6390/0")  # nothing listens there


def test_the_redis_tests_fail_without_redis_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without `redis-server` the Redis store's tests fail, naming the install: never skip."""
    monkeypatch.setenv("PATH", "/nonexistent")
    with pytest.raises(pytest.fail.Exception, match="apt-get install redis-server"):
        with redis_server():
            pass
