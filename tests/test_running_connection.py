"""What the layers above the wire use of a running connection (`_wire.running`), and the client's
update router (`client/router.py`) on its own, without a connection."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.abc
import msgspec
import pytest
from conftest import PERMISSION_REQUEST, notification, request

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import MethodSpec
from acpwire import PromptTurns, Turn, V1PromptTurns
from acpwire._wire.connection import Connection
from acpwire._wire.jsonrpc import Call, JsonRpcCore
from acpwire._wire.running import RunningConnection, running_connection
from acpwire.client.router import UpdateRouter
from acpwire.testing import memory_stream_pair

pytestmark = pytest.mark.usefixtures("loop")


class Recorder:
    """A Caller that is not a connection: it records what the peer sends."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def request(self, spec: MethodSpec[Any, Any], params: Any) -> Any:
        self.sent.append(params)

    async def notify(self, spec: MethodSpec[Any, None], params: Any) -> None:
        self.sent.append(params)


class FakeConnection(Recorder):
    """A running connection as the upper layers see it, without the wire."""

    def __init__(self, nursery: anyio.abc.TaskGroup) -> None:
        super().__init__()
        self.nursery = nursery
        self.cancelled: list[Callable[[Call], bool]] = []

    @property
    def initialize_response(self) -> object:
        return None

    def start_soon(self, work: Callable[..., Coroutine[Any, Any, object]], *args: Any) -> None:
        self.nursery.start_soon(work, *args)

    def requests_in_flight(self) -> list[Call]:
        return []

    def cancel_requests(self, matches: Callable[[Call], bool]) -> int:
        self.cancelled.append(matches)
        return 0


async def test_the_wire_connection_is_a_running_connection() -> None:
    ours, _ = memory_stream_pair()
    connection = Connection(ours, v2.AGENT_CODEC, lambda call: None)
    assert isinstance(connection, RunningConnection)
    assert running_connection(connection) is connection
    assert running_connection(Recorder()) is None
    with pytest.raises(RuntimeError, match="the connection is not running"):
        connection.start_soon(anyio.sleep, 0)


async def test_prompt_turns_refuses_a_peer_over_anything_but_a_connection() -> None:
    with pytest.raises(TypeError, match="PromptTurns needs the ClientPeer of an acpwire conn"):
        PromptTurns(v2.ClientPeer(Recorder()))
    assert V1PromptTurns(v1.ClientPeer(Recorder())).connection is None


async def test_prompt_turns_needs_only_the_interface() -> None:
    """Any RunningConnection serves: PromptTurns runs its turns in its task group and cancels
    through it, not through the wire connection's class."""

    async def work(turn: Turn) -> Any:
        await turn.say("hi")
        return "end_turn"

    params = v2.PromptRequest(session_id="s1", prompt=[v2.TextContent(text="hello")])
    async with anyio.create_task_group() as nursery:
        fake = FakeConnection(nursery)
        turns = PromptTurns(v2.ClientPeer(fake))
        assert turns.connection is fake
        response = await turns.start(params, work)
    kinds = [type(sent.update).__name__ for sent in fake.sent]
    assert response.message_id.startswith("user_")
    assert kinds == [
        "UserMessage",
        "SessionStateUpdate",
        "AgentMessageChunk",
        "SessionStateUpdate",
    ]
    assert fake.sent[-1].update.stop_reason == "end_turn"
    assert turns.cancel("s1") is False and len(fake.cancelled) == 1


# --------------------------------------------------------------------------- the router


def call_of(message: dict[str, Any]) -> Call:
    (call,) = JsonRpcCore(v2.CLIENT_CODEC).receive_line(msgspec.json.encode(message))
    assert isinstance(call, Call)
    return call


def update(text: str) -> Call:
    chunk = {"sessionUpdate": "agent_message_chunk", "messageId": "m", "content": {}}
    chunk["content"] = {"type": "text", "text": text}
    return call_of(notification("session/update", {"sessionId": "sess_1", "update": chunk}))


async def test_a_request_waits_until_the_updates_before_it_were_taken() -> None:
    dispatched: list[Any] = []

    async def handled(call: Call) -> None:
        dispatched.append(call.method)

    router = UpdateRouter()
    spec = v2.CLIENT_CODEC.inbound["session/update"]
    route = router.routing(handled, spec, handles_updates=False)
    permission = call_of(
        request(7, "session/request_permission", msgspec.to_builtins(PERMISSION_REQUEST))
    )
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
