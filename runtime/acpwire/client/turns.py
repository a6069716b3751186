"""A prompt turn as an ordered, typed event stream (client side).

    class Client(v2.ClientBase):
        requests = AgentRequests(Permissions(approve_reads))  # policy, then the running turn

        async def session_request_permission(self, params):
            return await self.requests.request_permission(params)

    async with prompt(conn.v2, client.requests, params) as turn:
        async for event in turn:
            match event:
                case SessionUpdateEvent(update=update): render(update)
                case PermissionRequested(): event.select(event.request.options[0].option_id)
    turn.stop_reason, turn.state                         # the folded SessionState

Events come in wire order: the turn's subscription holds the session's requests among its
updates (`ClientConnection._subscribe_turn`); the turn queues each where it came and only then lets
its handler run (which answers it by policy or waits for the event's answer). The turn ends at the first idle `state_update` after the
`session/prompt` response (v2) or at the `session/prompt` response once the updates before it
were yielded (v1). Leaving the block before the end sends `session/cancel` (pending permission
requests answered `cancelled`, as `conn.cancel` does); `await turn.cancel()` does the same and
keeps iterating to the end the agent reports.

A turn runs on the surface its connection negotiated (`acp_schema.surface_of(conn.peer)`): the
answers it gives are of that surface, and its end is found among that surface's updates.
"""

from __future__ import annotations

import collections
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from acp_schema import surface_of, v1, v2

from .._groups import SingleException
from .._loop import Event as LoopEvent
from .._loop import current_loop, new_event
from ..errors import ConnectionClosed, PeerError
from .connection import Negotiated, V1Negotiated
from .permissions import (
    PERMISSION,
    AnySurface,
    Permissions,
    Verdict,
    cancelled_permission,
    selected_permission,
)
from .router import HeldRequest
from .state import SessionState, V1SessionState

if TYPE_CHECKING:
    import acp_schema.v1.unstable as v1u
    import acp_schema.v2.unstable as v2u

__all__ = [
    "AgentRequests",
    "ElicitationRequested",
    "PermissionRequested",
    "SessionUpdateEvent",
    "TurnClient",
    "TurnEvent",
    "TurnEvents",
    "V1TurnClient",
    "V1TurnEvent",
    "V1TurnEvents",
    "prompt",
]

U = TypeVar("U")
Req = TypeVar("Req")
Resp = TypeVar("Resp")
State = TypeVar("State", SessionState, V1SessionState)
Event = TypeVar("Event")
ELICITATION = "elicitation/create"
TURN_REQUESTS = frozenset({PERMISSION, ELICITATION})
QUEUE_LIMIT = 64  # updates moved from the subscription ahead of the reader (back-pressure)


@dataclass(frozen=True, slots=True)
class SessionUpdateEvent(Generic[U]):
    """A `session/update` of the turn's session (already folded into `turn.state`)."""

    update: U
    """The update (`v2.SessionUpdate` / `v1.SessionUpdate`)."""


class _Answer(Generic[Resp]):
    """The answer to one of the agent's requests, given once from the event."""

    def __init__(self) -> None:
        self.done = new_event()
        self.response: Resp | None = None

    def give(self, response: Resp) -> None:
        if self.done.is_set():
            raise RuntimeError("this request was already answered (or cancelled)")
        self.response = response
        self.done.set()

    async def wait(self) -> Resp:
        await self.done.wait()
        assert self.response is not None
        return self.response


class PermissionRequested(Generic[Req]):
    """`session/request_permission` for the turn's session: answer with `select(option_id)`
    or `cancel()` (the `cancelled` outcome: not approved, no option chosen). A v2 tool call
    subject was already applied to `turn.state` before this event."""

    def __init__(self, request: Req, surface: AnySurface) -> None:
        self.request = request
        """The agent's `session/request_permission` params."""
        self._surface = surface
        self._answer: _Answer[Any] = _Answer()

    @property
    def answered(self) -> bool:
        """Whether it was answered (or cancelled when the turn was left)."""
        return self._answer.done.is_set()

    def select(self, option_id: str) -> None:
        """Answer with the option `option_id` (one of `request.options`)."""
        self._answer.give(selected_permission(self._surface, option_id))

    def cancel(self) -> None:
        """Answer `cancelled`: the agent MUST NOT proceed."""
        self._answer.give(cancelled_permission(self._surface))


class ElicitationRequested(Generic[Req, Resp]):
    """`elicitation/create` for the turn's session: answer with `respond(response)`."""

    def __init__(self, request: Req) -> None:
        self.request = request
        """The agent's `elicitation/create` params."""
        self._answer: _Answer[Resp] = _Answer()

    @property
    def answered(self) -> bool:
        """Whether it was answered (or declined when the turn was left)."""
        return self._answer.done.is_set()

    def respond(self, response: Resp) -> None:
        """Answer with `response` (accept, decline or cancel)."""
        self._answer.give(response)


TurnEvent = (
    SessionUpdateEvent[v2.SessionUpdate]
    | PermissionRequested[v2.RequestPermissionRequest]
    | ElicitationRequested[v2.CreateElicitationRequest, v2.CreateElicitationResponse]
)
"""An event of a v2 turn (`TurnEvents`)."""

V1TurnEvent = (
    SessionUpdateEvent[v1.SessionUpdate]
    | PermissionRequested[v1.RequestPermissionRequest]
    | ElicitationRequested[v1.CreateElicitationRequest, v1.CreateElicitationResponse]
)
"""An event of a v1 turn (`V1TurnEvents`)."""


class _TurnEvents(Generic[Event, State]):
    """One prompt turn: iterate it for its events; `state` is the session's folded state,
    `stop_reason` is set once the turn ended (`ended`)."""

    def __init__(self, session_id: str, state: State, surface: AnySurface) -> None:
        self.session_id = session_id
        """The session the turn runs in."""
        self.state: State = state
        """The session's state, every update of the turn folded in as it is yielded."""
        self.stop_reason: str | None = None
        """How the turn ended (`end_turn`, `cancelled`, ...), None until it did."""
        self.ended = False
        """Whether iterating reached the turn's end."""
        self.prompt_response: Any = None
        """The agent's `session/prompt` answer (v2: the inserted message's id; v1: the stop
        reason), None until it came."""
        self._surface = surface
        self._events: collections.deque[Any] = collections.deque()
        self._loop = current_loop()
        self._readable: LoopEvent | None = None
        self._room: LoopEvent | None = None
        self._finished = False  # the end was queued behind the last event
        self._rejected = False  # the agent answered session/prompt with an error
        self._asked: list[PermissionRequested[Any] | ElicitationRequested[Any, Any]] = []
        self._cancel: Any = None

    # -- the reader's side

    def __aiter__(self) -> _TurnEvents[Event, State]:
        return self

    async def __anext__(self) -> Event:
        while not self._events:
            if self._finished:
                self.ended = True
                raise StopAsyncIteration
            self._readable = self._loop.Event()
            await self._readable.wait()
        event = self._events.popleft()
        if self._room is not None and len(self._events) < QUEUE_LIMIT:
            self._room.set()
            self._room = None
        return event  # type: ignore[no-any-return]

    async def cancel(self) -> None:
        """`session/cancel` (pending permission requests answered `cancelled`); keep iterating
        to the end the agent reports (v2: idle `cancelled`)."""
        await self._cancel(self.session_id)

    # -- the connection's side

    def _push(self, event: object) -> None:
        self._events.append(event)
        if self._readable is not None:
            self._readable.set()
            self._readable = None

    def _ask(self, event: PermissionRequested[Any] | ElicitationRequested[Any, Any]) -> None:
        self._asked.append(event)
        self._push(event)

    def _decline_unanswered(self) -> None:
        """Leaving the turn: what was asked and not answered is declined (permission
        `cancelled`, elicitation `cancel`), so no handler waits for an event nobody reads."""
        for event in self._asked:
            if event.answered:
                continue
            if isinstance(event, PermissionRequested):
                event.cancel()
            else:
                event.respond(cancelled_elicitation(self._surface))

    def _finish(self) -> None:
        self._finished = True
        if self._readable is not None:
            self._readable.set()
            self._readable = None

    async def _wait_room(self) -> None:
        while len(self._events) >= QUEUE_LIMIT:
            self._room = self._room or self._loop.Event()
            await self._room.wait()

    def _update(self, update: Any) -> None:
        self.state.apply(update)
        self._push(SessionUpdateEvent(update))


class TurnEvents(_TurnEvents[TurnEvent, SessionState]):
    """A v2 turn: what `prompt(conn.v2, ...)` gives. Iterate it for its events (`TurnEvent`);
    `state` is the session's folded `SessionState`, `stop_reason` is set once the turn ended
    (`ended`)."""


class V1TurnEvents(_TurnEvents[V1TurnEvent, V1SessionState]):
    """A v1 turn: what `prompt(conn.v1, ...)` gives, as `TurnEvents` for v2 (events
    `V1TurnEvent`, state `V1SessionState`)."""


class AgentRequests:
    """Routes the agent's session requests to the session's running turn, as events. Call it
    from the client's handlers (`return await self.requests.request_permission(params)`).

    Permission requests go through `permissions` first (default: ask for every one): what
    its policy allows or rejects (or a remembered `*_always` answer) is answered at once,
    what it asks becomes a `PermissionRequested` event of the turn. A request for a session
    without a running turn gets the policy's answer, asking meaning reject (non-interactive);
    an elicitation there is answered `cancel`."""

    def __init__(self, permissions: Permissions | None = None) -> None:
        self.permissions = permissions or Permissions()
        """The policy asked first."""
        self._turns: dict[str, _TurnEvents[Any, Any]] = {}
        self._arrivals: dict[int, tuple[Any, Any]] = {}  # id(params) -> (params, entry)

    def v2_client(self, agent: v2.AgentPeer) -> TurnClient:
        """A v2 client answering through these requests, for `open_agent(command,
        v2=requests.v2_client, v1=requests.v1_client)`."""
        return TurnClient(self)

    def v1_client(self, agent: v1.AgentPeer) -> V1TurnClient:
        """A v1 client answering through these requests (see `v2_client`)."""
        return V1TurnClient(self)

    def _arrived(self, turn: _TurnEvents[Any, Any], method: str, params: Any) -> Any:
        """A request (`method`) of the turn's session, at its place in the wire order: apply a
        permission's tool call subject, decide, and queue an event for what is asked."""
        entry: Any
        if method == PERMISSION:
            # the schema: a tool call subject patches the stored tool call, in wire order
            turn.state.apply_permission_request(params)
            verdict = self.permissions.decide(params, turn.state)
            entry = verdict
            if verdict.decision == "ask":
                entry = (verdict, PermissionRequested(params, turn._surface))
                turn._ask(entry[1])
        else:
            entry = ElicitationRequested(params)
            turn._ask(entry)
        self._arrivals[id(params)] = (params, entry)
        return entry

    def _claim(self, method: str, params: Any) -> Any:
        """What `_arrived` made of this request in its turn (None: it came outside one)."""
        arrival = self._arrivals.pop(id(params), None)
        if arrival is None or arrival[0] is not params:
            turn = self._turns.get(getattr(params, "session_id", None) or "")
            if turn is None:
                return None
            self._arrived(turn, method, params)  # its session's stream did not hold it
            arrival = self._arrivals.pop(id(params))
        return arrival[1]

    @overload
    async def request_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse: ...
    @overload
    async def request_permission(
        self, params: v2u.RequestPermissionRequest
    ) -> v2u.RequestPermissionResponse: ...
    @overload
    async def request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse: ...
    @overload
    async def request_permission(
        self, params: v1u.RequestPermissionRequest
    ) -> v1u.RequestPermissionResponse: ...
    async def request_permission(
        self,
        params: v2.RequestPermissionRequest
        | v2u.RequestPermissionRequest
        | v1.RequestPermissionRequest
        | v1u.RequestPermissionRequest,
    ) -> (
        v2.RequestPermissionResponse
        | v2u.RequestPermissionResponse
        | v1.RequestPermissionResponse
        | v1u.RequestPermissionResponse
    ):
        """The answer to a permission request (of its surface): the policy's, else the
        running turn's `PermissionRequested` event's."""
        entry = self._claim(PERMISSION, params)
        if entry is None:
            return await self.permissions.answer(params)
        if isinstance(entry, Verdict):
            return self.permissions.respond(entry)
        verdict, event = entry
        response: Any = await event._answer.wait()
        self.permissions.learn(verdict, response)
        return response  # type: ignore[no-any-return]

    @overload
    async def elicitation(
        self, params: v2.CreateElicitationRequest
    ) -> v2.CreateElicitationResponse: ...
    @overload
    async def elicitation(
        self, params: v2u.CreateElicitationRequest
    ) -> v2u.CreateElicitationResponse: ...
    @overload
    async def elicitation(
        self, params: v1.CreateElicitationRequest
    ) -> v1.CreateElicitationResponse: ...
    @overload
    async def elicitation(
        self, params: v1u.CreateElicitationRequest
    ) -> v1u.CreateElicitationResponse: ...
    async def elicitation(
        self,
        params: v2.CreateElicitationRequest
        | v2u.CreateElicitationRequest
        | v1.CreateElicitationRequest
        | v1u.CreateElicitationRequest,
    ) -> (
        v2.CreateElicitationResponse
        | v2u.CreateElicitationResponse
        | v1.CreateElicitationResponse
        | v1u.CreateElicitationResponse
    ):
        """The answer to an elicitation (of its surface): the running turn's
        `ElicitationRequested` event's (outside a turn: `cancel`)."""
        event: ElicitationRequested[Any, Any] | None = self._claim(ELICITATION, params)
        response: Any
        if event is None:
            response = cancelled_elicitation(_surface_of(params, "an elicitation/create request"))
        else:
            response = await event._answer.wait()
        return response  # type: ignore[no-any-return]


class TurnClient(v2.ClientBase):
    """A v2 client answering the agent's permission and elicitation requests through
    `requests` (its policy, then the running turn's events): `AgentRequests.v2_client` builds
    one. Subclass it to handle more requests (fs, terminal)."""

    def __init__(self, requests: AgentRequests) -> None:
        self.requests = requests
        """Where the agent's permission and elicitation requests go."""

    async def session_request_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse:
        return await self.requests.request_permission(params)

    async def elicitation_create(
        self, params: v2.CreateElicitationRequest
    ) -> v2.CreateElicitationResponse:
        return await self.requests.elicitation(params)


class V1TurnClient(v1.ClientBase):
    """`TurnClient` for v1 (`AgentRequests.v1_client` builds one)."""

    def __init__(self, requests: AgentRequests) -> None:
        self.requests = requests
        """Where the agent's permission and elicitation requests go."""

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        return await self.requests.request_permission(params)

    async def elicitation_create(
        self, params: v1.CreateElicitationRequest
    ) -> v1.CreateElicitationResponse:
        return await self.requests.elicitation(params)


@overload
def prompt(
    conn: Negotiated,
    requests: AgentRequests,
    params: v2.PromptRequest | v2u.PromptRequest,
    *,
    state: SessionState | None = None,
) -> AbstractAsyncContextManager[TurnEvents]: ...
@overload
def prompt(
    conn: V1Negotiated,
    requests: AgentRequests,
    params: v1.PromptRequest | v1u.PromptRequest,
    *,
    state: V1SessionState | None = None,
) -> AbstractAsyncContextManager[V1TurnEvents]: ...
def prompt(
    conn: Negotiated | V1Negotiated,
    requests: AgentRequests,
    params: v2.PromptRequest | v1.PromptRequest | v2u.PromptRequest | v1u.PromptRequest,
    *,
    state: SessionState | V1SessionState | None = None,
) -> AbstractAsyncContextManager[TurnEvents] | AbstractAsyncContextManager[V1TurnEvents]:
    """Send `session/prompt` and give the turn as an event stream:

        async with prompt(conn.v2, requests, params) as turn:
            async for event in turn: ...
        turn.stop_reason, turn.state

    Typed by the version: `conn.v2` with a `v2.PromptRequest` gives a `TurnEvents`
    (events `TurnEvent`, state `SessionState`), `conn.v1` with a `v1.PromptRequest` a
    `V1TurnEvents` (`V1TurnEvent`, `V1SessionState`).

    The events come in wire order: `SessionUpdateEvent` (the update, already folded into
    `turn.state`), `PermissionRequested` (answer with `select(option_id)` or `cancel()`; a v2
    tool call subject is applied to the state first) and `ElicitationRequested`
    (`respond(response)`). `requests` is the `AgentRequests` the client's handlers answer
    through (`open_agent(command, v2=requests.v2_client, v1=requests.v1_client)`): what its
    permission policy allows or rejects is answered at once, what it asks becomes a
    `PermissionRequested` event.

    A v2 turn ends at the first idle `state_update` after the user message its prompt
    inserted; a v1 turn at the `session/prompt` response, once the updates sent before it were
    yielded. Then `turn.stop_reason` and `turn.state` hold the result. `await turn.cancel()`
    sends `session/cancel` and keeps iterating to the end the agent reports (v2: idle
    `cancelled`); leaving the block before the end does the same on the wire, and a
    permission or elicitation still unanswered is answered `cancelled` / `cancel`. A prompt
    the agent rejects raises `PeerError` (and sends no cancel).

    `state`: the session's state to fold into (default: a new one; `opened.state` of
    `open_session` continues the replayed history). One turn per session at a time: a
    second one raises RuntimeError.
    """
    return _turn(conn, requests, params, state)


@asynccontextmanager
async def _turn(conn: Any, requests: AgentRequests, params: Any, state: Any) -> AsyncIterator[Any]:
    session_id = params.session_id
    if session_id in requests._turns:
        raise RuntimeError(f"a turn of session {session_id!r} is already running")
    surface = _surface_of(conn.peer, "the `peer` of `conn.v2` / `conn.v1`")
    version_2 = surface.protocol_version == 2
    if state is None:
        state = SessionState() if version_2 else V1SessionState()
    turn: _TurnEvents[Any, Any] = (
        TurnEvents(session_id, state, surface)
        if version_2
        else V1TurnEvents(session_id, state, surface)
    )
    turn._cancel = conn.cancel
    with SingleException() as single:
        loop = current_loop()
        subscribed = conn.connection._subscribe_turn(session_id)
        async with subscribed as updates, loop.open_nursery() as nursery:
            requests._turns[session_id] = turn
            try:
                drive = _drive_v2 if version_2 else _drive_v1
                nursery.start_soon(drive, turn, requests, conn, params, updates)
                with single.callers_code():
                    yield turn
            finally:
                del requests._turns[session_id]
                if not (turn._finished or turn._rejected or conn.connection.closed):
                    with loop.CancelScope(shield=True):
                        await conn.cancel(session_id)
                turn._decline_unanswered()
                nursery.cancel_scope.cancel()


class _V2End:
    """Where a v2 turn ends: the first idle `state_update` after the user message the prompt
    inserted (its `messageId` comes in the response, which may arrive before or after it);
    the updates are of `surface`'s classes."""

    def __init__(self, surface: AnySurface) -> None:
        variants = surface.session_update_variants
        self.state_update: type | None = variants.get("state_update")
        self.user_message: type | None = variants.get("user_message")
        self.user_message_chunk: type | None = variants.get("user_message_chunk")
        self.position = 0
        self.message_id: str | None = None
        self.inserted_at: int | None = None
        self.first_seen: dict[str, int] = {}  # user message id -> position, until we know ours
        self.idles: list[tuple[int, Any]] = []
        self.end: Any = None  # the surface's `SessionStateUpdate` that ends the turn

    def update(self, update: Any) -> bool:
        """Note an update; True when it ends the turn."""
        position = self.position = self.position + 1
        kind = type(update)
        if kind is self.state_update:
            if update.state != "idle":
                return False
            if self.inserted_at is not None:
                self.end = update
                return True
            self.idles.append((position, update))
        elif kind is self.user_message or kind is self.user_message_chunk:
            message_id: str = update.message_id
            if self.message_id is None:
                self.first_seen.setdefault(message_id, position)
            elif message_id == self.message_id and self.inserted_at is None:
                self.inserted_at = position
        return False

    def responded(self, message_id: str) -> bool:
        """The prompt was accepted; True when an idle after its user message was seen."""
        self.message_id = message_id
        self.inserted_at = self.first_seen.get(message_id)
        if self.inserted_at is not None:
            for position, idle in self.idles:
                if position > self.inserted_at:
                    self.end = idle
                    return True
        return False


async def _pump(
    turn: _TurnEvents[Any, Any], requests: AgentRequests, updates: Any, end: _V2End | None
) -> None:
    """Move the subscription's items into the turn, in wire order: updates, and the
    session's requests (the stream holds them, `HeldRequest`), whose handlers are released
    once their event is queued."""
    while True:
        await turn._wait_room()
        try:
            item = await updates.__anext__()
        except StopAsyncIteration:  # the connection ended before the turn did
            await turn._cancel(turn.session_id)  # raises why, when the connection knows it
            raise ConnectionClosed(
                f"the agent closed the connection during the turn of {turn.session_id}"
            ) from None
        if type(item) is HeldRequest:
            if item.call.method in TURN_REQUESTS:
                requests._arrived(turn, item.call.method, item.call.params)
            item.released.set()
            continue
        turn._update(item)
        if end is not None and end.update(item):
            _end_v2(turn, end)
            return


def _end_v2(turn: _TurnEvents[Any, Any], end: _V2End) -> None:
    assert end.end is not None
    turn.stop_reason = end.end.stop_reason or None
    turn._finish()


async def _send_prompt(turn: _TurnEvents[Any, Any], conn: Any, params: Any) -> Any:
    try:
        return await conn.peer.session_prompt(params)
    except PeerError:
        turn._rejected = True  # no turn runs: nothing to cancel
        raise


async def _drive_v2(
    turn: _TurnEvents[Any, Any],
    requests: AgentRequests,
    conn: Negotiated,
    params: Any,
    updates: Any,
) -> None:
    end = _V2End(turn._surface)
    async with current_loop().open_nursery() as nursery:
        nursery.start_soon(_pump, turn, requests, updates, end)
        response = await _send_prompt(turn, conn, params)
        turn.prompt_response = response
        if end.responded(response.message_id):
            _end_v2(turn, end)
            nursery.cancel_scope.cancel()


async def _drive_v1(
    turn: _TurnEvents[Any, Any],
    requests: AgentRequests,
    conn: V1Negotiated,
    params: Any,
    updates: Any,
) -> None:
    async with current_loop().open_nursery() as nursery:
        nursery.start_soon(_pump, turn, requests, updates, None)
        response = await _send_prompt(turn, conn, params)
        # the updates sent before the response are in the subscription by now: take them
        # into the turn before its end
        gate = updates._gate()
        if gate is not None:
            await gate.wait()
        turn.prompt_response = response
        turn.stop_reason = response.stop_reason
        turn.state.stop_reason = response.stop_reason
        turn._finish()
        nursery.cancel_scope.cancel()


def _surface_of(value: object, what: str) -> AnySurface:
    surface = surface_of(value)
    if surface is None:
        raise TypeError(f"{what} is a {type(value).__qualname__}, of no acp_schema surface")
    return surface


def cancelled_elicitation(surface: AnySurface) -> Any:
    """The surface's `elicitation/create` answer `cancel` (the result type of its method
    table's `elicitation/create`)."""
    result = surface.client_methods[ELICITATION].result
    assert result is not None  # a request: it has a result
    return result.convert({"action": "cancel"})
