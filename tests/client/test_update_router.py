"""The client's update router (`client/router.py`) on its own, without a connection: a
session's request waits until its subscribers took the updates before it; closing ends the
streams."""

from __future__ import annotations

from typing import Any

import anyio
import msgspec
import pytest

import acp_schema.v2 as v2
from acpwire._wire.jsonrpc import Call, JsonRpcCore
from acpwire.client.router import UpdateRouter
from helpers.constants import PERMISSION_REQUEST
from helpers.raw import notification, request

pytestmark = pytest.mark.usefixtures("loop")


def call_of(message: dict[str, Any]) -> Call:
    (call,) = JsonRpcCore(v2.CLIENT_CODEC).receive_line(msgspec.json.encode(message))
    assert isinstance(call, Call)
    return call


def update(text: str) -> Call:
    chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "m"}
    chunk["content"] = {"type": "text", "text": text}
    return call_of(notification("session/update", {"sessionId": "sess_1", "update": chunk}))


async def test_a_request_waits_until_the_updates_before_it_were_taken() -> None:
    dispatched: list[str] = []

    async def handled(call: Call) -> None:
        dispatched.append(call.method)

    router = UpdateRouter()
    spec = v2.CLIENT_CODEC.inbound["session/update"]
    route, _ = router.routing(handled, spec, on_update=None)
    params = msgspec.to_builtins(PERMISSION_REQUEST)
    permission = call_of(request(7, "session/request_permission", params))
    async with router.subscribe("sess_1") as stream:
        assert route(update("one")) is None  # to the subscriber only
        router.on_request(permission)
        pending = route(permission)
        assert pending is not None and dispatched == []
        async with anyio.create_task_group() as nursery:
            nursery.start_soon(lambda: pending)
            await anyio.sleep(0.01)
            assert dispatched == []  # held behind the unread update
            assert (await stream.__anext__()).content.text == "one"
        assert dispatched == ["session/request_permission"]


async def test_streams_end_when_the_router_closes_and_later_ones_at_once() -> None:
    router = UpdateRouter()
    async with router.subscribe("sess_1") as before:
        router.close()
        assert [item async for item in before] == []
        async with router.subscribe("sess_1") as after:
            assert [item async for item in after] == []
