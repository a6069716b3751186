"""An event stream sends what queued up while it was busy in one write: several events in one
body chunk instead of a write per message. (Seen over HTTP/1.1, where each chunk of the
chunked body is one write of the app; Hypercorn's HTTP/2 streams merge the app's writes into
DATA frames themselves.)"""

from __future__ import annotations

import anyio
import pytest

from acpwire import agent_app
from acpwire.examples.hello_agent import HelloAgent
from acpwire.streams.sse import SseParser
from helpers.constants import RAW_INITIALIZE
from helpers.remote import raw_client, served

pytestmark = pytest.mark.usefixtures("loop")

QUEUED = 3


async def test_messages_queued_for_a_stream_go_out_in_one_chunk() -> None:
    app = agent_app(HelloAgent)
    with anyio.fail_after(8):
        async with served(app) as url, raw_client(http2=False) as client:
            answered = await client.post(url, json=RAW_INITIALIZE)
            connection_id = answered.headers["acp-connection-id"]
            headers = {"acp-connection-id": connection_id}
            for id_ in range(1, QUEUED + 1):  # each answered on the connection-scoped stream
                unknown = {"jsonrpc": "2.0", "id": id_, "method": "_x/unknown", "params": {}}
                assert (await client.post(url, json=unknown, headers=headers)).status_code == 202
            mailbox = app._hub.connections[connection_id].mailbox(None)
            while len(mailbox._queue) < QUEUED:  # the agent answered all three (no reader yet)
                await anyio.sleep(0.01)
            stream_headers = {**headers, "accept": "text/event-stream"}
            async with client.stream("GET", url, headers=stream_headers) as response:
                assert response.status_code == 200
                first = await response.aiter_raw().__anext__()
    answers = SseParser(1 << 20).feed(first)
    assert [answer.count(b'"id":') for answer in answers] == [1] * QUEUED
