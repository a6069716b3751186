"""A peer's error shows what its `data` says: agents put the useful part there
(`{"code": -32603, "message": "Internal error", "data": "OPENAI_API_KEY is not set"}`)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import acp_schema.v1 as v1
from acpwire import PeerError, RpcError, connect, serve_agent
from acpwire.errors import DATA_TEXT_LIMIT
from acpwire.testing import memory_stream_pair
from helpers.clients import ClientV1

pytestmark = pytest.mark.usefixtures("loop")


@pytest.mark.parametrize(
    ("data", "text"),
    [
        (None, "authenticate: Internal error (-32603)"),
        (
            "OPENAI_API_KEY is not set",
            "authenticate: Internal error (-32603): OPENAI_API_KEY is not set",
        ),
        (
            {"message": "log in first", "hint": 3},
            "authenticate: Internal error (-32603): log in first",
        ),
        ({"method": "authenticate"}, "authenticate: Internal error (-32603)"),
        ("  \n", "authenticate: Internal error (-32603)"),
        (["a list"], "authenticate: Internal error (-32603)"),
        ("Internal error", "authenticate: Internal error (-32603)"),
    ],
)
def test_the_text_shows_a_string_data_or_its_message(data: Any, text: str) -> None:
    error = PeerError("authenticate", -32603, "Internal error", data)
    assert str(error) == text
    assert error.data == data  # kept whole


def test_a_long_data_is_cut() -> None:
    error = PeerError("session/new", -32603, "Internal error", "x" * (DATA_TEXT_LIMIT + 20))
    assert str(error) == (
        f"session/new: Internal error (-32603): {'x' * DATA_TEXT_LIMIT}... (20 more characters)"
    )


class KeyedAgent(v1.AgentBase):
    """Fails `authenticate` the way agents do: the reason in `data`."""

    def __init__(self, client: v1.ClientPeer) -> None:
        pass

    async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
        return v1.InitializeResponse(protocol_version=1)

    async def authenticate(self, params: v1.AuthenticateRequest) -> v1.AuthenticateResponse:
        raise RpcError(-32603, "Internal error", "OPENAI_API_KEY is not set")


async def test_a_caller_sees_the_data_in_the_exception_text() -> None:
    agent_end, client_end = memory_stream_pair()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(lambda: serve_agent(v1=KeyedAgent, stream=agent_end))
        async with connect(client_end, v1=ClientV1) as conn:
            await conn.initialize(v1.InitializeRequest(protocol_version=1))
            with pytest.raises(PeerError) as raised:
                await conn.v1.peer.authenticate(v1.AuthenticateRequest(method_id="openai"))
        await client_end.aclose()
    assert str(raised.value) == "authenticate: Internal error (-32603): OPENAI_API_KEY is not set"
