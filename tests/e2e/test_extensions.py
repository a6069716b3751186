"""Extension (`_`-prefixed) methods sent from either side through the front door
(`acpwire.Extensions`, `ClientConnection.extensions`), and the agent process's id from a client
connection (`ClientConnection.agent_pid`)."""

from __future__ import annotations

import os
import sys
from typing import Any

import anyio
import msgspec
import pytest

import acp_schema.v2 as v2
from acp_schema import UNSET
from acpwire import Extensions, InvalidResponse, PeerError, open_agent
from acpwire.fixtures.echo_agent import EchoAgentV2
from helpers.clients import ClientV2
from helpers.constants import INIT_V2
from helpers.processes import PYTHONPATH
from helpers.serving import messages, pair

pytestmark = pytest.mark.usefixtures("loop")


class Ping(msgspec.Struct):
    n: int


class Pong(msgspec.Struct):
    n: int
    side: str


class ExtensionAgent(EchoAgentV2):
    """Answers `_acme/ping` with a Pong; `_acme/ask_client` pings the client back."""

    notes: list[tuple[str, Any]]

    async def extension(self, method: str, params: Any) -> Any:
        decoded = None if params is UNSET else msgspec.json.decode(params)
        if method == "_acme/ping":
            return Pong(n=decoded["n"] + 1, side="agent")
        if method == "_acme/ask_client":
            ext = Extensions(self.client)
            pong = await ext.request("_acme/ping", Ping(n=decoded["n"]), result=Pong)
            await ext.notify("_acme/told", {"pong": pong.n})
            return {"client said": pong.n}
        type(self).notes.append((method, decoded))
        return None


class ExtensionClient(ClientV2):
    notes: list[tuple[str, Any]]

    async def extension(self, method: str, params: Any) -> Any:
        decoded = None if params is UNSET else msgspec.json.decode(params)
        if method == "_acme/ping":
            return Pong(n=decoded["n"] * 10, side="client")
        type(self).notes.append((method, decoded))
        return None


async def test_a_client_sends_extension_requests_and_notifications_to_the_agent() -> None:
    ExtensionAgent.notes = []
    async with pair(ExtensionAgent) as p:
        await p.conn.initialize(INIT_V2)
        ext = p.conn.extensions
        assert await ext.request("_acme/ping", Ping(n=1), result=Pong) == Pong(n=2, side="agent")
        raw = await ext.request("_acme/ping", {"n": 5})
        assert isinstance(raw, msgspec.Raw)
        assert msgspec.json.decode(raw) == {"n": 6, "side": "agent"}
        assert await Extensions(p.conn.v2.peer).request(
            "_acme/ping", {"n": 7}, result=dict[str, Any]
        ) == {"n": 8, "side": "agent"}
        await ext.notify("_acme/note", {"seen": True})
        await ext.notify("_acme/bare")
        await ext.request("_acme/ping", {"n": 0})  # answered after the notifications
        assert ExtensionAgent.notes == [("_acme/note", {"seen": True}), ("_acme/bare", None)]


async def test_an_agent_sends_extension_requests_and_notifications_to_the_client() -> None:
    ExtensionClient.notes = []
    async with pair(ExtensionAgent, client_v2=ExtensionClient) as p:
        await p.conn.initialize(INIT_V2)
        answer = await p.conn.extensions.request("_acme/ask_client", {"n": 4})
        assert msgspec.json.decode(answer) == {"client said": 40}
        assert ExtensionClient.notes == [("_acme/told", {"pong": 40})]


async def test_requests_and_notifications_are_written_jsonrpc_first_as_peers_write_them() -> None:
    async with pair(ExtensionAgent) as p:
        await p.conn.initialize(INIT_V2)
        await p.conn.v2.peer.session_cancel(v2.CancelSessionNotification(session_id="s"))
        await p.conn.extensions.notify("_acme/note", {"k": 1})
        await p.conn.extensions.request("_acme/ping", {"n": 1})
    lines = bytes(p.wire.sent).splitlines()
    assert lines[0].startswith(b'{"jsonrpc":"2.0","id":0,"method":"initialize","params":')
    assert lines[1] == b'{"jsonrpc":"2.0","method":"session/cancel","params":{"sessionId":"s"}}'
    assert lines[2] == b'{"jsonrpc":"2.0","method":"_acme/note","params":{"k":1}}'
    assert lines[3] == b'{"jsonrpc":"2.0","id":1,"method":"_acme/ping","params":{"n":1}}'
    assert [m.get("method") for m in messages(p.wire.sent)] == [
        "initialize",
        "session/cancel",
        "_acme/note",
        "_acme/ping",
    ]


async def test_extension_failures_name_what_went_wrong() -> None:
    async with pair(ExtensionAgent) as p:
        await p.conn.initialize(INIT_V2)
        ext = p.conn.extensions
        with pytest.raises(ValueError, match="'_acme/ping'"):
            await ext.request("acme/ping", {"n": 1})
        with pytest.raises(ValueError, match="start with `_`"):
            await ext.notify("session/cancel", {})
        with pytest.raises(InvalidResponse, match="_acme/ping"):
            await ext.request("_acme/ping", {"n": 1}, result=list[int])
    async with pair() as p:  # the echo agent has no extension handler
        await p.conn.initialize(INIT_V2)
        with pytest.raises(PeerError) as caught:
            await p.conn.extensions.request("_acme/ping", {"n": 1})
        assert caught.value.code == -32601


def test_extensions_need_a_peer_of_a_running_connection() -> None:
    with pytest.raises(TypeError, match=r"ClientConnection\.extensions"):
        Extensions(object())


async def test_open_agent_gives_the_agent_process_id() -> None:
    command = [sys.executable, "-m", "acpwire.fixtures.echo_agent"]
    env = {**os.environ, **PYTHONPATH}
    async with open_agent(command, v2=ClientV2, env=env) as conn:
        await conn.initialize(INIT_V2)  # it runs
        pid = conn.agent_pid
        assert isinstance(pid, int)
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            assert b"acpwire.fixtures.echo_agent" in cmdline.read()
        with open(f"/proc/{pid}/stat", "rb") as stat:
            assert int(stat.read().rpartition(b")")[2].split()[1]) == os.getpid()  # our child
    async with pair() as p:
        assert p.conn.agent_pid is None  # connect(): no process of its own
    await anyio.sleep(0)
