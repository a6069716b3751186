"""The byte stream of a WebSocket connection (agent/remote/pulled_stream.py): the agent's
reader reads the socket itself, and what it answers is sent by it before it reads again (no
trip through the connection's writer task); a message sent while it waits for the socket
goes through the writer (`send_all`), after what is owed."""

from __future__ import annotations

import json

import anyio
import pytest

from acpwire.agent.endpoint import AgentEndpoint
from acpwire.agent.remote.pulled_stream import PulledAgentStream
from acpwire.examples.hello_agent import HelloAgent
from helpers.constants import RAW_INITIALIZE
from helpers.loops import wait_all_tasks_blocked

pytestmark = pytest.mark.usefixtures("loop")

INITIALIZE = json.dumps(RAW_INITIALIZE).encode()
NEW_SESSION = (
    b'{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/","mcpServers":[]}}'
)


class Script:
    """A client's messages read one at a time, and what happened, in order."""

    def __init__(self, *messages: bytes) -> None:
        self.messages = list(messages)
        self.log: list[str] = []
        self.more = anyio.Event()  # set: the source returns b"" once the messages ran out

    async def source(self) -> bytes:
        self.log.append("read")
        if not self.messages:
            await self.more.wait()
            return b""
        return self.messages.pop(0)

    async def outlet(self, line: bytes) -> None:
        self.log.append(f"sent {line.decode()}")


def stream_of(script: Script) -> PulledAgentStream:
    return PulledAgentStream(script.source, script.outlet, max_buffered_bytes=1 << 20)


async def test_what_the_reader_answers_it_sends_before_it_reads_again() -> None:
    script = Script(b"1", b"2")
    stream = stream_of(script)
    assert await stream.receive_some() == b"1\n"
    assert stream.try_send([b"a", b"\n"]) == 2
    assert script.log == ["read"]  # taken, not sent yet
    assert await stream.receive_some() == b"2\n"
    assert script.log == ["read", "sent a", "read"]


async def test_a_message_sent_while_the_reader_waits_goes_through_the_writer() -> None:
    script = Script()
    stream = stream_of(script)
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(stream.receive_some)
        await wait_all_tasks_blocked()
        assert stream.try_send([b"late", b"\n"]) == 0  # the reader would not send it
        await stream.send_all(b"late\n")
        script.more.set()
    assert script.log == ["read", "sent late"]


async def test_a_message_another_task_sends_is_not_held_for_the_reader() -> None:
    """The reader may be away for long (a notification handler that waits): a turn's update
    sent meanwhile goes through the writer, not held until the reader reads again."""
    script = Script(b"1")
    stream = stream_of(script)
    await stream.receive_some()  # this task is the reader, away from the socket now
    taken: list[int] = []

    async def turn() -> None:
        taken.append(stream.try_send([b"update", b"\n"]))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(turn)
    assert taken == [0]
    assert stream.try_send([b"answer", b"\n"]) == 7  # the reader's own


async def test_the_writer_sends_what_is_owed_first() -> None:
    script = Script(b"1")
    stream = stream_of(script)
    await stream.receive_some()
    assert stream.try_send([b"first\nsecond\n"]) == 13
    await stream.send_all(b"third\n")
    assert script.log == ["read", "sent first", "sent second", "sent third"]


async def test_nothing_is_taken_once_the_input_ended() -> None:
    script = Script()
    script.more.set()
    stream = stream_of(script)
    assert await stream.receive_some() == b""
    assert await stream.receive_some() == b""  # not read again
    assert stream.try_send([b"a", b"\n"]) == 0
    assert script.log == ["read"]


async def test_an_agent_answers_each_request_before_the_next_is_read() -> None:
    script = Script(INITIALIZE, NEW_SESSION)
    script.more.set()
    await AgentEndpoint({2: HelloAgent}).serve(stream_of(script))
    events = [entry.split(",")[0] for entry in script.log]
    assert events == [
        "read",
        'sent {"jsonrpc":"2.0"',
        "read",
        'sent {"jsonrpc":"2.0"',
        "read",
    ], script.log
    assert '"sessionId"' in script.log[3]
