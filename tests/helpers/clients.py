"""Typed test clients and what a test does with one: `ClientV2` / `ClientV1` log every update
and permission request (`describe` names each), `TurnClientV2` / `TurnClientV1` hand the
agent's requests to a turn (`acpwire.client.prompt`); sessions opened and prompted, updates
read until a state."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any

import anyio

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import UNSET, Surface, tag_of
from acpwire.client import AgentRequests, ClientConnection
from helpers.constants import INIT_V1, INIT_V2


class Recording:
    """A client that logs every session update and permission request, in arrival order.

    It answers permission requests with `answer`, or never (None: it waits to be cancelled).
    """

    module: Any
    answer: str | None = "allow"

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.log: list[Any] = []
        self.asked = anyio.Event()

    async def session_update(self, params: Any) -> None:
        self.log.append(params.update)

    async def session_request_permission(self, params: Any) -> Any:
        self.log.append(params)
        self.asked.set()
        if self.answer is None:
            await anyio.sleep_forever()
        outcome = self.module.SelectedPermissionOutcome(option_id=self.answer)
        return self.module.RequestPermissionResponse(outcome=outcome)


class ClientV2(Recording, v2.ClientBase):
    module = v2


class ClientV1(Recording, v1.ClientBase):
    module = v1


class HoldingClientV2(ClientV2):
    answer = None


class HoldingClientV1(ClientV1):
    answer = None


@functools.cache
def recording_client(surface: Surface[Any, Any, Any, Any], holding: bool = False) -> type[Any]:
    """`ClientV2` / `ClientV1` (`HoldingClientV2` / `HoldingClientV1` when `holding`) on
    `surface`'s own `ClientBase`, answering with its classes. One class per surface."""
    stable = {2: (ClientV2, HoldingClientV2), 1: (ClientV1, HoldingClientV1)}
    if not surface.unstable:
        return stable[surface.protocol_version][holding]
    name = f"{'Holding' if holding else ''}Client_{surface.label.replace('.', '_')}"
    attributes = {"module": surface.module, "answer": None if holding else "allow"}
    return type(name, (Recording, surface.client_base), attributes)


def describe(item: Any) -> str:
    """One short word for each logged update or permission request, for either version and
    any surface (by the variants' wire tags)."""
    tag = tag_of(item)
    if tag == "user_message":
        return "user_message"
    if tag == "state_update":
        reason = item.stop_reason
        return f"state {item.state}" + ("" if reason is UNSET else f" {reason}")
    if tag in ("tool_call", "tool_call_update"):
        return f"tool_call {item.status}"
    if tag == "agent_message_chunk" and tag_of(item.content) == "text":
        return f"chunk {item.content.text.strip()}"
    if tag == "tool_call_content_chunk":
        return "tool_call_content"
    if hasattr(item, "options") and tag is None:  # session/request_permission params
        return "permission"
    return type(item).__name__


class TurnClientV2(v2.ClientBase):
    def __init__(self, agent: Any) -> None:
        self.requests = AgentRequests()

    async def session_request_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse:
        return await self.requests.request_permission(params)

    async def elicitation_create(
        self, params: v2.CreateElicitationRequest
    ) -> v2.CreateElicitationResponse:
        return await self.requests.elicitation(params)


class TurnClientV1(v1.ClientBase):
    def __init__(self, agent: Any) -> None:
        self.requests = AgentRequests()

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        return await self.requests.request_permission(params)


class _TurnRequests:
    """A client of any surface handing the agent's permission and elicitation requests to its
    `AgentRequests` (the handler base comes second: `turn_client(surface)`)."""

    def __init__(self, agent: Any) -> None:
        self.agent = agent
        self.requests = AgentRequests()

    async def session_request_permission(self, params: Any) -> Any:
        return await self.requests.request_permission(params)

    async def elicitation_create(self, params: Any) -> Any:
        return await self.requests.elicitation(params)


@functools.cache
def turn_client(surface: Surface[Any, Any, Any, Any]) -> type[Any]:
    """`TurnClientV2` / `TurnClientV1` on `surface`'s own `ClientBase` (one class per surface)."""
    name = f"TurnClient_{surface.label.replace('.', '_')}"
    return type(name, (_TurnRequests, surface.client_base), {})


async def new_v2_session(conn: ClientConnection) -> str:
    await conn.initialize(INIT_V2)
    return (await conn.v2_agent.session_new(v2.NewSessionRequest(cwd="/repo"))).session_id


async def new_v1_session(conn: ClientConnection) -> str:
    await conn.initialize(INIT_V1)
    new = v1.NewSessionRequest(cwd="/repo", mcp_servers=[])
    return (await conn.v1_agent.session_new(new)).session_id


def prompt_v2(session_id: str, text: str) -> v2.PromptRequest:
    return v2.PromptRequest(session_id=session_id, prompt=[v2.TextContent(text=text)])


def prompt_v1(session_id: str, text: str) -> v1.PromptRequest:
    return v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text=text)])


async def until_idle(updates: AsyncIterator[Any]) -> None:
    await until_state(updates, "idle")


async def until_state(updates: AsyncIterator[Any], state: str) -> None:
    """Read the updates until the session is in `state` (its requests wait for the reader)."""
    async for update in updates:
        if tag_of(update) == "state_update" and update.state == state:
            return
    raise AssertionError(f"the connection closed before the session was {state}")
