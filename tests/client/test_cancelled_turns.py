"""A cancelled turn's permission requests are answered `cancelled`, whichever API cancelled it.

The schema (`RequestPermissionOutcome.cancelled`): "When a client sends a `session/cancel`
notification to cancel an ongoing prompt turn, it MUST respond to all pending
`session/request_permission` requests with this `cancelled` outcome." A request that crossed
the cancel on the wire is pending too: before, it reached the client's handler, which could
approve a tool call of the cancelled turn (found by `acpwire check --client`).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from helpers.clients import recording_client
from helpers.constants import SESSION
from helpers.raw import RawPeer, request
from helpers.serving import raw_agent
from helpers.surfaces import AnySurface, module

pytestmark = pytest.mark.usefixtures("loop")

OTHER_SESSION = "sess_2"


def permission(surface: AnySurface, request_id: int, session_id: str = SESSION) -> Any:
    tool_call = {"toolCallId": "call_1", "kind": "edit"}
    params: dict[str, Any] = {
        "sessionId": session_id,
        "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}],
    }
    if surface.protocol_version == 2:
        params |= {"title": "Edit?", "subject": {"type": "tool_call", "toolCall": tool_call}}
    else:
        params["toolCall"] = tool_call
    return request(request_id, "session/request_permission", params)


async def outcome_of(peer: RawPeer, request_id: int) -> Any:
    with anyio.fail_after(2):
        while True:
            message = await peer.receive()
            if message.get("id") == request_id and "method" not in message:
                return message["result"]["outcome"]


def view_of(conn: Any) -> Any:
    """`conn.v2` / `conn.v1`, by the version negotiated."""
    return conn.v2 if conn.protocol_version == 2 else conn.v1


async def cancel_through_the_peer(conn: Any, surface: AnySurface) -> None:
    cancel = surface.agent_methods["session/cancel"].params.type(session_id=SESSION)
    await view_of(conn).peer.session_cancel(cancel)


async def cancel_through_the_connection(conn: Any, surface: AnySurface) -> None:
    await conn.cancel(SESSION)


@pytest.mark.parametrize("cancel", [cancel_through_the_connection, cancel_through_the_peer])
async def test_a_permission_request_after_the_cancel_is_answered_cancelled(
    surface: AnySurface, cancel: Any
) -> None:
    client = recording_client(surface)
    async with raw_agent(client=client, surface=surface) as (conn, peer):
        await cancel(conn, surface)
        assert (await peer.receive())["method"] == "session/cancel"
        await peer.send(permission(surface, 7))
        assert await outcome_of(peer, 7) == {"outcome": "cancelled"}
        assert conn.client.log == []  # the handler never saw it


async def test_other_sessions_and_the_next_turn_ask_the_handler(surface: AnySurface) -> None:
    client = recording_client(surface)
    async with raw_agent(client=client, surface=surface) as (conn, peer):
        await conn.cancel(SESSION)
        assert (await peer.receive())["method"] == "session/cancel"
        await peer.send(permission(surface, 7, OTHER_SESSION))
        assert await outcome_of(peer, 7) == {"outcome": "selected", "optionId": "allow"}

        prompt_type = surface.agent_methods["session/prompt"].params.type
        again = prompt_type(session_id=SESSION, prompt=[module(surface).TextContent(text="again")])
        async with anyio.create_task_group() as nursery:
            nursery.start_soon(view_of(conn).peer.session_prompt, again)
            assert (await peer.receive())["method"] == "session/prompt"
            await peer.send(permission(surface, 8))
            assert await outcome_of(peer, 8) == {"outcome": "selected", "optionId": "allow"}
            nursery.cancel_scope.cancel()
        assert len(conn.client.log) == 2
