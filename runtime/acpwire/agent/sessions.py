"""Sessions served completely from one turn function, for v2 and v1.

    async def work(turn: AgentTurn) -> StopReason:
        await turn.say("hello")
        return "end_turn"

    trio.run(partial(serve_turns, work, name="my-agent", version="1.0"))
    asyncio.run(serve_turns(work, name="my-agent", version="1.0", store=MyStore()))

The agents `turn_agents` builds serve `session/new`, `session/prompt` (your work, as a v2
`Turn` or a `V1Turn`), `session/cancel`, `session/close`, `session/list` (cursor paging),
v2 `session/resume` with `replayFrom` and v1 `session/load` (replaying the history the store
recorded as it was sent), and v1 `session/resume`; `initialize` advertises exactly that
(`agent_capabilities`). A session's history is replayed in the version it was recorded in:
a session started over v1 is listed over v2 but cannot be replayed there (-32602).
`turn_agents(..., unstable=True)` builds the same agents on `acp_schema.v2.unstable` and
`acp_schema.v1.unstable` (answering with their classes; your work may send their updates).
"""

from __future__ import annotations

import base64
import time
import uuid
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, cast, overload

import acp_schema
import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import UNSET, tag_of

from .._wire.options import ConnectionOptions
from ..errors import RpcError
from ..streams.byte_stream import AnyByteStream
from .capabilities import agent_capabilities
from .endpoint import serve_agent
from .schedulers import PromptTurns, V1PromptTurns
from .turns import AnyWork, text_of

if TYPE_CHECKING:
    import acp_schema.v1.unstable as v1u
    import acp_schema.v2.unstable as v2u

SessionUpdate = v2.SessionUpdate | v1.SessionUpdate


@dataclass(eq=False)
class StoredSession:
    """A session as the store keeps it: what `session/list` reports and its history."""

    session_id: str
    """The session's id."""
    cwd: str
    """Its working directory (`session/list` filters on it; resume and load must give it)."""
    protocol_version: int
    """The version its history is recorded in (replayed only over that version)."""
    title: str | None = None
    """Its title (`serve_turns`: the first line of its first prompt), None before one."""
    updated_at: float = field(default_factory=time.time)
    """When it was last prompted (seconds since the epoch)."""
    history: list[SessionUpdate] = field(default_factory=list)
    """Every update sent in it, in order, for a store that keeps the history in this object
    (`MemorySessionStore`); a durable store leaves it empty and gives the history by its
    `history(session_id)` (replayed by v2 `session/resume` and v1 `session/load`)."""
    prompt_count: int = 0
    """The prompts started in it so far: turn ids continue from here on every connection, so a
    resumed session never reuses the message and tool call ids of its history."""


class SessionStore(Protocol):
    """Where sessions and their history live: `MemorySessionStore` (the default, in memory),
    `SqliteSessionStore` (a file: survives restarts), `RedisSessionStore` (shared by several
    server processes), or your own.

    A store is asked on the event loop's thread: keep each method quick (a durable store
    writes history from a thread of its own, see `SqliteSessionStore`). Sessions are driven
    by one connection at a time; the store is shared by every connection of a server.
    Implement `save` and `history` too (`SavingSessionStore`): without them a store is
    deprecated."""

    def add(self, session: StoredSession) -> None:
        """Keep a new session (`session/new`)."""
        ...

    def get(self, session_id: str) -> StoredSession | None:
        """The session, None when unknown (answered -32002)."""
        ...

    def sessions(self) -> Iterable[StoredSession]:
        """All sessions, always in the same order (oldest first): `session/list` pages it."""
        ...

    def recorder(self, session_id: str) -> Callable[[SessionUpdate], object]:
        """The function appending an update sent in the session to its history: asked once
        per turn, called on the send path of every update (keep it cheap)."""
        ...


class SavingSessionStore(SessionStore, Protocol):
    """A `SessionStore` that is told what changes and gives the history itself: what every
    store should be (a durable one must). A store without `save` and `history` still works
    (its `StoredSession` objects are changed in place and their `history` read) but is
    deprecated; both methods join `SessionStore` in the next release."""

    def save(self, session: StoredSession) -> None:
        """Keep what changed of a session `get` gave (`title`, `updated_at`, `prompt_count`):
        called when a prompt starts. A store of in-memory objects has nothing to do."""
        ...

    def history(self, session_id: str) -> Iterable[SessionUpdate]:
        """Every update recorded in the session, in order, including those recorded just now
        (replayed by v2 `session/resume` and v1 `session/load`)."""
        ...


LEGACY_STORE = (
    "a SessionStore without save() and history() is deprecated since acpwire 0.2.0: add "
    "`def save(self, session): pass` (a store of in-memory objects has nothing to do) and "
    "`def history(self, session_id): return self.get(session_id).history`; until then "
    "changes are made to the StoredSession objects `get` returns, and history is read from them"
)


class MemorySessionStore:
    """Sessions in memory, for the life of the process."""

    def __init__(self) -> None:
        self._sessions: dict[str, StoredSession] = {}

    def add(self, session: StoredSession) -> None:
        """Keep a new session."""
        self._sessions[session.session_id] = session

    def get(self, session_id: str) -> StoredSession | None:
        """The session, None when unknown."""
        return self._sessions.get(session_id)

    def sessions(self) -> Iterable[StoredSession]:
        """All sessions, oldest first."""
        return self._sessions.values()

    def recorder(self, session_id: str) -> Callable[[SessionUpdate], object]:
        """The `append` of the session's history list."""
        return self._sessions[session_id].history.append

    def save(self, session: StoredSession) -> None:
        """Nothing to do: `get` gave the stored object itself."""

    def history(self, session_id: str) -> Iterable[SessionUpdate]:
        """The session's history list."""
        return self._sessions[session_id].history


@dataclass(frozen=True)
class Served:
    """What the agents of `turn_agents` serve."""

    work: AnyWork
    store: SessionStore
    name: str
    version: str
    page_size: int


@overload
def turn_agents(
    work: AnyWork,
    *,
    name: str,
    version: str,
    store: SessionStore | None = None,
    page_size: int = 50,
    unstable: Literal[False] = False,
) -> tuple[type[v2.AgentBase], type[v1.AgentBase]]: ...
@overload
def turn_agents(
    work: AnyWork,
    *,
    name: str,
    version: str,
    store: SessionStore | None = None,
    page_size: int = 50,
    unstable: Literal[True],
) -> tuple[type[v2u.AgentBase], type[v1u.AgentBase]]: ...
def turn_agents(
    work: AnyWork,
    *,
    name: str,
    version: str,
    store: SessionStore | None = None,
    page_size: int = 50,
    unstable: bool = False,
) -> tuple[type[Any], type[Any]]:
    """The v2 and v1 agent classes serving `work` (for `serve_agent(v2cls, v1=v1cls)`),
    sharing one store (a `MemorySessionStore` unless given); `name` and `version` as for
    `serve_turns`. `unstable`: on the unstable surfaces (`acp_schema.v2.unstable`,
    `acp_schema.v1.unstable`: their `AgentBase`, answering with their classes)."""
    if store is not None and not (hasattr(store, "save") and hasattr(store, "history")):
        warnings.warn(LEGACY_STORE, DeprecationWarning, stacklevel=2)
    served = Served(work, store or MemorySessionStore(), name, version, page_size)
    if not unstable:
        return (
            type("TurnAgent", (TurnAgent,), {"served": served}),
            type("V1TurnAgent", (V1TurnAgent,), {"served": served}),
        )
    v2_surface, v1_surface = acp_schema.surface(2, True), acp_schema.surface(1, True)
    return (
        type(
            "TurnAgent",
            (_TurnHandlers, v2_surface.agent_base),
            {"served": served, "types": v2_surface.module},
        ),
        type(
            "V1TurnAgent",
            (_V1TurnHandlers, v1_surface.agent_base),
            {"served": served, "types": v1_surface.module},
        ),
    )


async def serve_turns(
    work: AnyWork,
    *,
    name: str,
    version: str,
    store: SessionStore | None = None,
    page_size: int = 50,
    stream: AnyByteStream | None = None,
    options: ConnectionOptions | None = None,
    **limits: Any,
) -> None:
    """Serve `work` over v2 and v1 (stdio unless `stream=` is given):
    `trio.run(lambda: serve_turns(work, name="my-agent", version="1.0"))`
    or `asyncio.run(serve_turns(work, name="my-agent", version="1.0"))`.

    `name` and `version` are your agent's, as `initialize` reports them to the client (v2
    `info`, v1 `agentInfo`): required, because no default would be true (acpwire's own
    would name the library, not the agent). `store`: where sessions and their history live
    (a `MemorySessionStore` by default). `page_size`: sessions per `session/list` page.
    `stream` and `options` (`ConnectionOptions`) as for `serve_agent`; the keywords
    `max_line_bytes` ... `check_outgoing` of earlier releases are passed on to it too (prefer
    `options=`)."""
    agent_v2, agent_v1 = turn_agents(
        work, name=name, version=version, store=store, page_size=page_size
    )
    await serve_agent(agent_v2, v1=agent_v1, stream=stream, options=options, **limits)


class _SessionsServed:
    """What both versions' agents share: the store and its sessions."""

    served: ClassVar[Served]
    protocol_version: ClassVar[int]

    def new_session(self, cwd: str) -> str:
        session_id = f"sess_{uuid.uuid4().hex}"
        self.served.store.add(StoredSession(session_id, cwd, self.protocol_version))
        return session_id

    def session(self, session_id: str, cwd: str | None = None) -> StoredSession:
        """The stored session; -32002 when unknown, -32602 for another `cwd`."""
        session = self.served.store.get(session_id)
        if session is None:
            raise RpcError.resource_not_found(session_id)
        if cwd is not None and cwd != session.cwd:
            raise RpcError.invalid_params(
                f"session {session_id} has the cwd {session.cwd!r}, not {cwd!r}: send the "
                "session's working directory"
            )
        return session

    def turn_ids(self, prefix: str) -> Callable[[str], str]:
        """`prefix_<n>` for a session's n-th prompt, counted in the stored session."""

        def next_id(session_id: str) -> str:
            session = self.session(session_id)
            session.prompt_count += 1
            self._save(session)
            return f"{prefix}_{session.prompt_count}"

        return next_id

    def prompted(self, session_id: str, text: str) -> None:
        session = self.session(session_id)
        session.updated_at = time.time()
        if session.title is None and text:
            session.title = text.splitlines()[0][:80]
        self._save(session)

    def _save(self, session: StoredSession) -> None:
        save = getattr(self.served.store, "save", None)
        if save is not None:
            save(session)

    def history(self, session: StoredSession) -> Iterable[SessionUpdate]:
        """The session's history, recorded in this agent's version (-32602 otherwise)."""
        if session.protocol_version != self.protocol_version:
            raise RpcError.invalid_params(
                f"session {session.session_id} was recorded over ACP v{session.protocol_version}"
                f" and cannot be replayed over v{self.protocol_version}: resume it without "
                "replay, or over the version it was started with"
            )
        history = getattr(self.served.store, "history", None)
        return session.history if history is None else history(session.session_id)

    def page(self, cwd: object, cursor: object) -> tuple[list[StoredSession], str | None]:
        """One `session/list` page, and the cursor of the next one (None after the last)."""
        wanted = [
            s for s in self.served.store.sessions() if not isinstance(cwd, str) or s.cwd == cwd
        ]
        start = _after(wanted, cursor) if isinstance(cursor, str) else 0
        end = start + self.served.page_size
        next_cursor = _cursor(wanted[end - 1].session_id) if end < len(wanted) else None
        return wanted[start:end], next_cursor


def _cursor(session_id: str) -> str:
    return base64.urlsafe_b64encode(session_id.encode()).decode()


def _after(sessions: list[StoredSession], cursor: str) -> int:
    """The index after the session the cursor names; -32602 for a cursor not ours."""
    try:
        session_id = base64.urlsafe_b64decode(cursor.encode()).decode()
    except (ValueError, UnicodeDecodeError):
        session_id = None
    for index, session in enumerate(sessions):
        if session.session_id == session_id:
            return index + 1
    raise RpcError.invalid_params(
        f"invalid session/list cursor {cursor!r}: pass the nextCursor of the previous page "
        "with the same cwd"
    )


def _infos(info: type[Any], sessions: list[StoredSession]) -> list[Any]:
    """The sessions as `info` (the `SessionInfo` of the agent's surface)."""
    return [
        info(
            session_id=s.session_id,
            cwd=s.cwd,
            title=s.title if s.title is not None else UNSET,
            updated_at=datetime.fromtimestamp(s.updated_at, UTC).isoformat(),
        )
        for s in sessions
    ]


class _TurnHandlers(_SessionsServed):
    """The v2 handlers of `TurnAgent`, answering with `types` (the surface's module): on
    `v2.AgentBase`, or the unstable surface's (`turn_agents(..., unstable=True)`)."""

    protocol_version = 2
    types: ClassVar[Any] = v2
    client: v2.ClientPeer

    def __init__(self, client: v2.ClientPeer) -> None:
        self.client = client
        self.turns = PromptTurns(
            client, recorder=self.served.store.recorder, turn_ids=self.turn_ids("user")
        )

    async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
        types = self.types
        return types.InitializeResponse(  # type: ignore[no-any-return]
            protocol_version=2,
            info=types.Implementation(name=self.served.name, version=self.served.version),
            capabilities=agent_capabilities(type(self)),  # type: ignore[arg-type]
        )

    async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
        return self.types.NewSessionResponse(session_id=self.new_session(params.cwd))  # type: ignore[no-any-return]

    async def session_list(self, params: v2.ListSessionsRequest) -> v2.ListSessionsResponse:
        sessions, next_cursor = self.page(params.cwd, params.cursor)
        return self.types.ListSessionsResponse(  # type: ignore[no-any-return]
            sessions=_infos(self.types.SessionInfo, sessions),
            next_cursor=UNSET if next_cursor is None else next_cursor,
        )

    async def session_resume(self, params: v2.ResumeSessionRequest) -> v2.ResumeSessionResponse:
        """Replays the history for `replayFrom: {"type": "start"}` (-32602 for other cursors),
        then the current state (a MUST, even without replay), then the response."""
        session = self.session(params.session_id, params.cwd)
        replay_from, state_update = params.replay_from, self.types.SessionStateUpdate
        replay = tag_of(replay_from)  # by wire tag: the classes are the surface's
        last: v2.SessionStateUpdate = state_update(state="idle")  # the last state recorded
        if replay == "start":
            for update in cast(Iterable[v2.SessionUpdate], self.history(session)):
                if tag_of(update) == "state_update":  # sent as it is now, below
                    last = cast(v2.SessionStateUpdate, update)
                else:
                    await self._send(session.session_id, update)
        elif replay is not None:
            raise RpcError.invalid_params(
                f"replayFrom type {replay!r} is not supported: use "
                '{"type": "start"} or omit replayFrom'
            )
        state = self.turns.current_state(session.session_id)
        # idle: the last turn's end as it was reported (its stop reason and error), so the
        # replayed state is the state of a client that saw the turn end
        now = last if state == "idle" and last.state == "idle" else state_update(state=state)
        await self._send(session.session_id, now)
        return self.types.ResumeSessionResponse()  # type: ignore[no-any-return]

    async def session_prompt(self, params: v2.PromptRequest) -> v2.PromptResponse:
        self.prompted(params.session_id, text_of(params.prompt))
        return await self.turns.start(params, self.served.work)

    async def session_cancel(self, params: v2.CancelSessionNotification) -> None:
        self.turns.cancel(params.session_id)

    async def session_close(self, params: v2.CloseSessionRequest) -> v2.CloseSessionResponse:
        return await self.turns.close(params.session_id)

    async def _send(self, session_id: str, update: v2.SessionUpdate) -> None:
        notification = self.types.UpdateSessionNotification(session_id=session_id, update=update)
        await self.client.session_update(notification)


class TurnAgent(_TurnHandlers, v2.AgentBase):
    """A v2 agent serving `served.work` (build one with `turn_agents`)."""


class _V1TurnHandlers(_SessionsServed):
    """The v1 handlers of `V1TurnAgent`, answering with `types` (see `_TurnHandlers`)."""

    protocol_version = 1
    types: ClassVar[Any] = v1
    client: v1.ClientPeer

    def __init__(self, client: v1.ClientPeer) -> None:
        self.client = client
        self.turns = V1PromptTurns(
            client, recorder=self.served.store.recorder, turn_ids=self.turn_ids("turn")
        )

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        types = self.types
        return types.InitializeResponse(  # type: ignore[no-any-return]
            protocol_version=1,
            agent_info=types.Implementation(name=self.served.name, version=self.served.version),
            agent_capabilities=agent_capabilities(type(self)),  # type: ignore[arg-type]
        )

    async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
        return self.types.NewSessionResponse(session_id=self.new_session(params.cwd))  # type: ignore[no-any-return]

    async def session_load(self, params: v1.LoadSessionRequest) -> v1.LoadSessionResponse:
        """Replays the whole history, then responds (v1: the load response ends replay)."""
        session = self.session(params.session_id, params.cwd)
        notification = self.types.SessionNotification
        for update in cast(Iterable[v1.SessionUpdate], self.history(session)):
            await self.client.session_update(
                notification(session_id=session.session_id, update=update)
            )
        return self.types.LoadSessionResponse()  # type: ignore[no-any-return]

    async def session_list(self, params: v1.ListSessionsRequest) -> v1.ListSessionsResponse:
        sessions, next_cursor = self.page(params.cwd, params.cursor)
        return self.types.ListSessionsResponse(  # type: ignore[no-any-return]
            sessions=_infos(self.types.SessionInfo, sessions),
            next_cursor=UNSET if next_cursor is None else next_cursor,
        )

    async def session_resume(self, params: v1.ResumeSessionRequest) -> v1.ResumeSessionResponse:
        self.session(params.session_id, params.cwd)  # v1 resume MUST NOT replay
        return self.types.ResumeSessionResponse()  # type: ignore[no-any-return]

    async def session_prompt(self, params: v1.PromptRequest) -> v1.PromptResponse:
        self.prompted(params.session_id, text_of(params.prompt))
        return await self.turns.start(params, self.served.work)

    async def session_cancel(self, params: v1.CancelNotification) -> None:
        self.turns.cancel(params.session_id)

    async def session_close(self, params: v1.CloseSessionRequest) -> v1.CloseSessionResponse:
        return await self.turns.close(params.session_id)


class V1TurnAgent(_V1TurnHandlers, v1.AgentBase):
    """A v1 agent serving `served.work` (build one with `turn_agents`)."""
