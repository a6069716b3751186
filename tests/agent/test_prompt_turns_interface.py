"""`PromptTurns` uses only `RunningConnection` of the connection its client peer is built on:
any running connection serves, and a peer over anything else is refused."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.abc
import pytest

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import MethodSpec
from acpwire import PromptTurns, Turn, V1PromptTurns
from acpwire._wire.jsonrpc import Call

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


async def test_prompt_turns_refuses_a_peer_over_anything_but_a_connection() -> None:
    with pytest.raises(TypeError, match="PromptTurns needs the ClientPeer of an acpwire conn"):
        PromptTurns(v2.ClientPeer(Recorder()))
    assert V1PromptTurns(v1.ClientPeer(Recorder())).connection is None


async def test_prompt_turns_needs_only_the_interface() -> None:
    """PromptTurns runs its turns in the task group of any RunningConnection and cancels
    through it, not through the wire connection's class."""

    async def work(turn: Turn) -> Any:
        await turn.say("hi")
        return "end_turn"

    params = v2.PromptRequest(session_id="s1", prompt=[v2.TextContent(text="hello")])
    async with anyio.create_task_group() as nursery:
        fake = FakeConnection(nursery)
        turns = PromptTurns(v2.ClientPeer(fake))
        response = await turns.start(params, work)
    assert response.message_id.startswith("user_")
    kinds = [type(sent.update).__name__ for sent in fake.sent]
    assert kinds == ["UserMessage", "SessionStateUpdate", "AgentMessageChunk", "SessionStateUpdate"]
    assert fake.sent[-1].update.stop_reason == "end_turn"
    assert turns.cancel("s1") is False and len(fake.cancelled) == 1
