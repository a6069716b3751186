"""A scripted client to test an agent with: `client_for(MyAgent)` (served in this process) or
`client_for(command=[...])` (a subprocess) gives a `FakeClient`, initialized, whose
`prompt(...)` runs one turn through acpwire's `prompt()` (permission answers scripted or by
policy, a cancel on cue) and returns its `TurnResult`: the events, the stop reason and the
folded `SessionState`."""

from __future__ import annotations

import collections
import functools
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeAlias

import msgspec

from acp_schema import tag_of, v1, v2
from acpwire import (
    AgentRequests,
    ClientConnection,
    ConnectionOptions,
    PermissionRequested,
    Permissions,
    Policy,
    SessionState,
    SessionUpdateEvent,
    TurnEvent,
    V1SessionState,
    V1TurnEvent,
    ask_user,
    connect,
    open_agent,
    open_session,
    prompt,
    serve_agent,
)
from acpwire.agent import AgentFactory, V1AgentFactory
from acpwire.streams import AnyByteStream

from .background import serving
from .memory import memory_stream_pair
from .scenario import ScenarioError

__all__ = ["ClientFor", "ClientScenario", "FakeClient", "PromptStep", "TurnResult", "client_for"]

OPTIONS = ConnectionOptions(check_outgoing=True)
"""The fake client checks what it sends against the schema."""


@dataclass
class TurnResult:
    """One prompt turn as the client saw it."""

    stop_reason: str | None
    """How the turn ended (`end_turn`, `cancelled`, ...)."""
    state: SessionState | V1SessionState
    """The session's state with the turn's updates folded in (messages, tool calls, ...)."""
    events: list[TurnEvent | V1TurnEvent]
    """The turn's events in wire order (updates and the agent's requests)."""

    @property
    def updates(self) -> list[Any]:
        """The turn's `session/update` updates, in order (`v2.SessionUpdate` /
        `v1.SessionUpdate` variants)."""
        return [event.update for event in self.events if isinstance(event, SessionUpdateEvent)]

    @property
    def permission_requests(
        self,
    ) -> list[v2.RequestPermissionRequest | v1.RequestPermissionRequest]:
        """The agent's `session/request_permission` params that reached the turn as events
        (those the policy did not answer by itself)."""
        return [event.request for event in self.events if isinstance(event, PermissionRequested)]

    @property
    def text(self) -> str:
        """The agent's reply in this turn: the text of its `agent_message_chunk` updates,
        joined (`state.messages` holds the session's messages, earlier turns' too)."""
        return "".join(
            update.content.text
            for update in self.updates
            if tag_of(update) == "agent_message_chunk" and tag_of(update.content) == "text"
        )


class PromptStep(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One prompt of a `ClientScenario` (the arguments of `FakeClient.prompt`)."""

    text: str
    """The prompt's text."""
    answers: list[str | None] = msgspec.field(default_factory=list)
    """The answers to the permission requests the policy leaves to the turn, in order: an
    option id, or None (JSON null) for `cancelled`."""
    cancel_after: int | None = None
    """Send `session/cancel` once this many updates of the turn arrived (v2 counts the user
    message and the `running` state too), None: never."""


class ClientScenario(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """A fake client's script as data: one session, its prompts in order."""

    prompts: list[PromptStep]
    """The prompts, one turn each."""
    cwd: str = "/"
    """The session's working directory (absolute)."""

    @classmethod
    def parse(cls, data: ClientScenario | dict[str, Any]) -> ClientScenario:
        """A checked scenario from a Struct or a dict; `ScenarioError` naming what is wrong."""
        if isinstance(data, ClientScenario):
            return data
        try:
            return msgspec.convert(data, cls)
        except msgspec.ValidationError as exc:
            text, _, where = str(exc).partition(" - at `$")
            raise ScenarioError(f"client scenario {where.rstrip('`')}: {text}") from None


class FakeClient:
    """A client driving an agent turn by turn (built by `client_for`, initialized)."""

    def __init__(self, conn: ClientConnection, requests: AgentRequests) -> None:
        """Built by `client_for`. @private"""
        self.conn = conn
        """The connection, for calls the fake client has no shortcut for
        (`client.conn.v2.peer.session_list(...)`)."""
        self.requests = requests
        """The `AgentRequests` its handlers answer through (and its permission policy)."""
        self._states: dict[str, SessionState | V1SessionState] = {}

    @property
    def protocol_version(self) -> int:
        """The version the agent chose in `initialize`."""
        return self.conn.protocol_version

    @property
    def initialize_response(self) -> v2.InitializeResponse | v1.InitializeResponse:
        """The agent's `initialize` answer."""
        view = self.conn.v2 if self.protocol_version == 2 else self.conn.v1
        return view.initialize_response

    async def new_session(self, cwd: str = "/") -> str:
        """Open a new session (`session/new`) and return its id."""
        opened = await open_session(self._view(), cwd=cwd)
        session_id: str = opened.session_id
        self._states[session_id] = opened.state
        return session_id

    async def prompt(
        self,
        text: str,
        *,
        session_id: str | None = None,
        answers: Sequence[str | None] = (),
        cancel_after: int | None = None,
    ) -> TurnResult:
        """Run one turn of `text` in `session_id` (default: the last session opened, or a new
        one) and return it once it ended. `answers`: the answers to the permission requests
        that reach the turn, in order (an option id, or None for `cancelled`); a request with
        no answer left raises `ScenarioError`, as does an option id the request does not
        offer; answers left over are not used (`permission_requests` of the result says how
        many were asked). `cancel_after`: send `session/cancel` once this many of the turn's updates
        arrived (the turn then ends as the agent reports it, `cancelled` by the protocol)."""
        if session_id is None:
            session_id = next(reversed(self._states), None) or await self.new_session()
        view: Any = self._view()
        acp: Any = v2 if self.protocol_version == 2 else v1
        params = acp.PromptRequest(session_id=session_id, prompt=[acp.TextContent(text=text)])
        left = collections.deque(answers)
        events: list[Any] = []
        updates = 0
        async with prompt(view, self.requests, params, state=self._states.get(session_id)) as turn:
            async for event in turn:
                events.append(event)
                if isinstance(event, PermissionRequested):
                    _answer(event, left)
                elif isinstance(event, SessionUpdateEvent):
                    updates += 1
                    if updates == cancel_after:
                        await turn.cancel()
        self._states[session_id] = turn.state
        return TurnResult(turn.stop_reason, turn.state, events)

    async def run(self, scenario: ClientScenario | dict[str, Any]) -> list[TurnResult]:
        """Play a `ClientScenario` (or the same as a dict) in a new session: its turns."""
        scenario = ClientScenario.parse(scenario)
        session_id = await self.new_session(scenario.cwd)
        return [
            await self.prompt(
                step.text,
                session_id=session_id,
                answers=step.answers,
                cancel_after=step.cancel_after,
            )
            for step in scenario.prompts
        ]

    def _view(self) -> Any:
        return self.conn.v2 if self.protocol_version == 2 else self.conn.v1


def _answer(event: PermissionRequested[Any], left: collections.deque[str | None]) -> None:
    request = event.request
    offered = [option.option_id for option in request.options]
    if not left:
        title = getattr(request, "title", None)
        raise ScenarioError(
            f"the agent asked for permission{f' ({title!r})' if isinstance(title, str) else ''}"
            f" with options {offered}, and no answer is left: add one to `answers` (an option "
            "id, or None for cancelled), or pass a permission policy to client_for"
        )
    answer = left.popleft()
    if answer is None:
        event.cancel()
    elif answer in offered:
        event.select(answer)
    else:
        raise ScenarioError(
            f"the scripted answer {answer!r} is not among the options the agent offered: {offered}"
        )


@asynccontextmanager
async def client_for(
    agent: AgentFactory | None = None,
    *,
    v1: V1AgentFactory | None = None,
    command: Sequence[str] | None = None,
    stream: AnyByteStream | None = None,
    protocol: int = 2,
    permissions: Policy = ask_user,
    options: ConnectionOptions = OPTIONS,
) -> AsyncIterator[FakeClient]:
    """A `FakeClient` connected to an agent and initialized with `protocol` (the agent may
    answer with the other version; `client.protocol_version` says which it chose):

    - `client_for(MyAgent)` / `client_for(MyAgent, v1=MyV1Agent)` / `client_for(v1=...)`:
      the agent classes (or factories, as for `serve_agent`) served in this process over an
      in-memory stream, on whichever loop runs the test;
    - `client_for(command=[...])`: the agent started as a process (`open_agent`);
    - `client_for(stream=...)`: an agent at the other end of a byte stream (`connect`), such
      as `FakeAgent.connected()`'s.

    `permissions`: the policy asked first (`approve_all`, `rules(...)`, ...; default
    `ask_user`: every request is answered from the turn's scripted `answers`). `options`: the
    connection's (default: what the client sends is checked against the schema).
    Leaving the block closes the connection (an in-process agent gets two seconds to finish,
    then it is cancelled).
    """
    ways = [agent is not None or v1 is not None, command is not None, stream is not None]
    if ways.count(True) != 1:
        raise TypeError(
            "give the agent one way: as classes (client_for(MyAgent, v1=...)), command= or stream="
        )
    if protocol not in (1, 2):
        raise ValueError(f"protocol must be 2 or 1, not {protocol!r}")
    requests = AgentRequests(Permissions(permissions))
    v2_client, v1_client = requests.v2_client, requests.v1_client
    connected = None
    if command is not None:
        connected = open_agent(command, v2=v2_client, v1=v1_client, options=options)
    elif stream is not None:
        connected = connect(stream, v2=v2_client, v1=v1_client, options=options)
    if connected is not None:
        async with connected as conn:
            yield await _initialized(conn, requests, protocol)
        return
    client_end, agent_end = memory_stream_pair()
    serve = functools.partial(serve_agent, agent, v1=v1, stream=agent_end, options=options)
    async with (
        serving(serve, client_end),
        connect(client_end, v2=v2_client, v1=v1_client, options=options) as conn,
    ):
        yield await _initialized(conn, requests, protocol)


ClientFor: TypeAlias = Callable[..., AbstractAsyncContextManager[FakeClient]]
"""The type of the pytest fixture `acp_client_for` (`client_for`)."""


async def _initialized(
    conn: ClientConnection, requests: AgentRequests, protocol: int
) -> FakeClient:
    name, version = "acpwire-fake-client", "0"
    if protocol == 2:
        info = v2.Implementation(name=name, version=version)
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
    else:
        client_info = v1.Implementation(name=name, version=version)
        await conn.initialize(v1.InitializeRequest(protocol_version=1, client_info=client_info))
    return FakeClient(conn, requests)
