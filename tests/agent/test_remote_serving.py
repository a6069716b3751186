"""`serve_remote` stops when cancelled, on either loop: the README's way to run it in a
program (`[url] = await nursery.start(...)`, then cancel the nursery) is also asyncio's with
an anyio task group. Hypercorn's asyncio worker survives one cancellation but not the
repeated one of an anyio cancel scope (its shutdown raised InvalidStateError)."""

from __future__ import annotations

from functools import partial

import anyio
import pytest

from acp_schema import v2
from acpwire import agent_app, open_remote, serve_remote
from acpwire.examples.hello_agent import HelloAgent
from acpwire.examples.hello_client import HelloClient

pytestmark = pytest.mark.usefixtures("loop")

INFO = v2.Implementation(name="serving-test", version="1.0")


@pytest.mark.parametrize("transport", ["http", "websocket"])
async def test_cancelling_its_task_group_stops_the_server(transport: str) -> None:
    app = agent_app(HelloAgent)
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tasks:
            [url] = await tasks.start(partial(serve_remote, app, bind="127.0.0.1:0"))
            async with open_remote(url, v2=HelloClient, transport=transport) as conn:  # type: ignore[arg-type]
                await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
            tasks.cancel_scope.cancel()
        assert tasks.cancel_scope.cancelled_caught
    with pytest.raises(OSError):  # nothing listens there any more
        await anyio.connect_tcp("127.0.0.1", int(url.split(":")[2].split("/")[0]))
