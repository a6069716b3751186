"""`RunningConnection` (`_wire/running.py`): what the layers above use of a running connection;
the wire's `Connection` is one, any other caller is not."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

import acp_schema.v2 as v2
from acp_schema import MethodSpec
from acpwire._wire.connection import Connection
from acpwire._wire.running import RunningConnection, running_connection
from acpwire.testing import memory_stream_pair

pytestmark = pytest.mark.usefixtures("loop")


class Recorder:
    """A Caller that is not a connection."""

    async def request(self, spec: MethodSpec[Any, Any], params: Any) -> Any:
        return None

    async def notify(self, spec: MethodSpec[Any, None], params: Any) -> None:
        return None


async def test_the_wire_connection_is_a_running_connection() -> None:
    ours, _ = memory_stream_pair()
    connection = Connection(ours, v2.AGENT_CODEC, lambda call: None)
    assert isinstance(connection, RunningConnection)
    assert running_connection(connection) is connection
    assert running_connection(Recorder()) is None
    with pytest.raises(RuntimeError, match="the connection is not running"):
        connection.start_soon(anyio.sleep, 0)


async def test_switch_to_changes_codec_dispatch_and_the_initialize_response() -> None:
    ours, _ = memory_stream_pair()
    connection = Connection(ours, v2.AGENT_CODEC, lambda call: None)
    assert connection.initialize_response is None
    response = v2.InitializeResponse(
        protocol_version=2, info=v2.Implementation(name="a", version="1")
    )

    def dispatch(call: Any) -> None:
        return None

    connection.switch_to(v2.CLIENT_CODEC, dispatch, response)
    assert connection.core.codec is v2.CLIENT_CODEC
    assert connection.dispatch is dispatch and connection.initialize_response is response
