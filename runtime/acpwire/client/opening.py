"""Opening a session again: replayed history folded into the session state (client side).

    opened = await open_session(conn.v2, cwd="/work", session_id=saved_id)
    opened.how          # "resumed", "loaded" or "new"
    opened.state        # the replayed history, folded (SessionState / V1SessionState)

The replay is complete when the call returns: v2 `session/resume` with `replayFrom` and v1
`session/load` answer only after every replayed `session/update` (the schema's rule), and the
updates received before the answer are folded before it returns. `open_session` falls back
resume -> load -> new by the agent's advertised capabilities (v2: `capabilities.session`;
v1: `loadSession`, `sessionCapabilities.resume`) and on -32601 (method not found).
`authenticated(call, authenticate)` runs a call again after `authenticate()` when the agent
answers -32000 (authentication required).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, overload

import msgspec

from acp_schema import v1, v2

from .._groups import SingleException
from .._loop import current_loop
from ..errors import PeerError
from .connection import Negotiated, V1Negotiated
from .state import SessionState, V1SessionState

__all__ = ["Opened", "authenticated", "load", "open_session", "replay"]

T = TypeVar("T")
State = TypeVar("State", SessionState, V1SessionState)
METHOD_NOT_FOUND = -32601
AUTH_REQUIRED = -32000


@dataclass
class Opened(Generic[State]):
    """A session ready for prompts: how it was opened, its state (replayed history folded),
    and the agent's answer (resume/load/new response)."""

    session_id: str
    """The session's id (a new session's, when it could not be opened again)."""
    how: Literal["resumed", "loaded", "new"]
    """How it was opened: `resumed` (v2 `session/resume`, v1 `session/resume`), `loaded`
    (v1 `session/load`) or `new` (`session/new`)."""
    state: State
    """The replayed history, folded (empty for a new session and for v1 resume)."""
    response: Any
    """The agent's answer: a `ResumeSessionResponse`, `LoadSessionResponse` or
    `NewSessionResponse` of the negotiated version."""


async def _folding(
    conn: Any, session_id: str, state: Any, request: Callable[[], Awaitable[T]]
) -> T:
    """Run `request` while folding the session's updates into `state`; return once the
    updates received before its answer were folded."""
    with SingleException():
        async with conn.subscribe(session_id) as updates, current_loop().open_nursery() as nursery:

            async def fold() -> None:
                async for update in updates:
                    state.apply(update)  # no checkpoint between taking and folding

            nursery.start_soon(fold)
            response = await request()
            gate = updates._gate()  # the updates queued before the answer: wait until taken
            if gate is not None:
                await gate.wait()
            nursery.cancel_scope.cancel()
    return response


async def replay(
    conn: Negotiated, params: v2.ResumeSessionRequest, state: SessionState | None = None
) -> tuple[v2.ResumeSessionResponse, SessionState]:
    """`session/resume` (give `replay_from=v2.ReplayFromStart()` for the whole history);
    returns once the replay is complete, with it folded into `state` (default: new)."""
    state = SessionState() if state is None else state
    response = await _folding(
        conn, params.session_id, state, lambda: conn.peer.session_resume(params)
    )
    return response, state


async def load(
    conn: V1Negotiated, params: v1.LoadSessionRequest, state: V1SessionState | None = None
) -> tuple[v1.LoadSessionResponse, V1SessionState]:
    """v1 `session/load`: returns once the agent replayed the history, folded into `state`."""
    state = V1SessionState() if state is None else state
    response = await _folding(
        conn, params.session_id, state, lambda: conn.peer.session_load(params)
    )
    return response, state


async def authenticated(
    call: Callable[[], Awaitable[T]], authenticate: Callable[[], Awaitable[object]]
) -> T:
    """`await call()`; when the agent answers -32000 (authentication required), await
    `authenticate()` (e.g. `conn.v1.peer.authenticate(...)`) and call once more."""
    try:
        return await call()
    except PeerError as error:
        if error.code != AUTH_REQUIRED:
            raise
    await authenticate()
    return await call()


def _present(value: object) -> bool:
    return isinstance(value, msgspec.Struct)


@overload
async def open_session(
    conn: Negotiated,
    *,
    cwd: str,
    session_id: str | None = None,
    mcp_servers: list[v2.McpServer] | None = None,
    history: bool = True,
) -> Opened[SessionState]: ...
@overload
async def open_session(
    conn: V1Negotiated,
    *,
    cwd: str,
    session_id: str | None = None,
    mcp_servers: list[v1.McpServer] | None = None,
    history: bool = True,
) -> Opened[V1SessionState]: ...
async def open_session(
    conn: Negotiated | V1Negotiated,
    *,
    cwd: str,
    session_id: str | None = None,
    mcp_servers: list[v2.McpServer] | list[v1.McpServer] | None = None,
    history: bool = True,
) -> Opened[SessionState] | Opened[V1SessionState]:
    """Resume `session_id` (with its history replayed when `history`), else load it (v1),
    else start a new session: each step only when the agent advertises it (v2:
    `capabilities.session`; v1: `loadSession`, `sessionCapabilities.resume`), and the next
    one when it answers -32601 anyway. Without `session_id`: a new session.

    Typed by the version: `conn.v2` gives an `Opened[SessionState]`, `conn.v1` an
    `Opened[V1SessionState]`. The replay is complete when it returns: the agent answers
    resume/load after the replayed updates, and those are folded into `opened.state` first.
    Without history wanted (`history=False`) v1 resume (which never replays) comes before
    load. It waits as long as the agent takes (a long history replays for a while): bound it
    with the loop's own timeout (`trio.fail_after`, `asyncio.timeout`, `anyio.fail_after`),
    which cancels the request with `$/cancel_request`."""
    # the view of the negotiated version (`conn.v2` is a `Negotiated` whichever v2 surface)
    if isinstance(conn, Negotiated):
        return await _open_v2(conn, cwd, session_id, mcp_servers or [], history)
    return await _open_v1(conn, cwd, session_id, mcp_servers or [], history)


async def _open_v2(
    conn: Negotiated, cwd: str, session_id: str | None, servers: list[Any], history: bool
) -> Opened[SessionState]:
    capabilities = conn.initialize_response.capabilities
    if session_id is not None and _present(getattr(capabilities, "session", None)):
        params = v2.ResumeSessionRequest(
            session_id=session_id,
            cwd=cwd,
            mcp_servers=servers,
            replay_from=v2.ReplayFromStart() if history else msgspec.UNSET,
        )
        try:
            response, state = await replay(conn, params)
            return Opened(session_id, "resumed", state, response)
        except PeerError as error:
            if error.code != METHOD_NOT_FOUND:
                raise
    new = await conn.peer.session_new(v2.NewSessionRequest(cwd=cwd, mcp_servers=servers))
    return Opened(new.session_id, "new", SessionState(), new)


async def _open_v1(
    conn: V1Negotiated, cwd: str, session_id: str | None, servers: list[Any], history: bool
) -> Opened[V1SessionState]:
    capabilities = conn.initialize_response.agent_capabilities
    if session_id is not None:
        can_load = getattr(capabilities, "load_session", False) is True
        session_capabilities = getattr(capabilities, "session_capabilities", None)
        can_resume = _present(getattr(session_capabilities, "resume", None))
        loading = [_load_v1] if can_load else []
        resuming = [_resume_v1] if can_resume else []
        # v1 resume restores without history: with history wanted, load comes first
        attempts = [*loading, *resuming] if history else [*resuming, *loading]
        for attempt in attempts:
            try:
                return await attempt(conn, session_id, cwd, servers)
            except PeerError as error:
                if error.code != METHOD_NOT_FOUND:
                    raise
    new = await conn.peer.session_new(v1.NewSessionRequest(cwd=cwd, mcp_servers=servers))
    return Opened(new.session_id, "new", V1SessionState(), new)


async def _load_v1(
    conn: V1Negotiated, session_id: str, cwd: str, servers: list[Any]
) -> Opened[V1SessionState]:
    params = v1.LoadSessionRequest(session_id=session_id, cwd=cwd, mcp_servers=servers)
    response, state = await load(conn, params)
    return Opened(session_id, "loaded", state, response)


async def _resume_v1(
    conn: V1Negotiated, session_id: str, cwd: str, servers: list[Any]
) -> Opened[V1SessionState]:
    """v1 `session/resume` restores the session without replaying its history."""
    params = v1.ResumeSessionRequest(session_id=session_id, cwd=cwd, mcp_servers=servers)
    response = await conn.peer.session_resume(params)
    return Opened(session_id, "resumed", V1SessionState(), response)
