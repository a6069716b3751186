"""Shared test helpers: `async def` tests run under trio (or both loops), and a raw
JSON-lines peer.

An `async def test_...` is run here with `anyio.run`, bounded by `ASYNC_TEST_TIMEOUT`
seconds (tests bound their own waits more tightly): on trio, or on trio and on asyncio when
it takes the `loop` fixture (`pytestmark = pytest.mark.usefixtures("loop")` for a module).
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio
import msgspec
import pytest
import trio

import acp_schema.v2 as v2
from acpwire._framing import LineReader

ASYNC_TEST_TIMEOUT = 10.0

PERMISSION_REQUEST = v2.RequestPermissionRequest(
    session_id="sess_1",
    title="Run it?",
    subject=v2.ToolCallPermissionSubject(tool_call=v2.ToolCallUpdate(tool_call_id="call_1")),
    options=[v2.PermissionOption(option_id="allow", name="Allow", kind="allow_once")],
)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    test = pyfuncitem.obj
    if not inspect.iscoroutinefunction(test):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}

    async def bounded() -> None:
        with anyio.fail_after(ASYNC_TEST_TIMEOUT):
            await test(**kwargs)

    backend = (
        pyfuncitem.callspec.params.get("loop", "trio")
        if hasattr(pyfuncitem, "callspec")
        else "trio"
    )
    anyio.run(bounded, backend=backend)
    return True


LOOPS = ["trio", "asyncio"]


@pytest.fixture(params=LOOPS)
def loop(request: pytest.FixtureRequest) -> str:
    """The event loop the test runs on (the test runs once per loop)."""
    name: str = request.param
    return name


class RawPeer:
    """The far end of a connection, written to and read from as raw JSON lines."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self._reader = LineReader()
        self._lines: deque[bytes] = deque()

    async def send(self, *messages: Any) -> None:
        """Send each message as one line: bytes as they are, anything else as JSON."""
        for message in messages:
            data = message if isinstance(message, bytes) else msgspec.json.encode(message)
            await self.stream.send_all(data if data.endswith(b"\n") else data + b"\n")

    async def receive_line(self) -> bytes:
        while not self._lines:
            data = await self.stream.receive_some(65536)
            if not data:
                raise EOFError("the connection closed")
            self._lines.extend(line for line in self._reader.feed(data) if isinstance(line, bytes))
        return self._lines.popleft()

    async def receive(self) -> Any:
        """The next message, decoded (a dict, or a list for a batch response)."""
        return msgspec.json.decode(await self.receive_line())

    async def call(self, id: Any, method: str, params: Any = None) -> Any:
        """Send a request and return the next message (its response, in these tests)."""
        await self.send(request(id, method, params))
        return await self.receive()

    async def expect_silence(self, seconds: float = 0.05) -> None:
        with trio.move_on_after(seconds):
            line = await self.receive_line()
            raise AssertionError(f"expected nothing, got {line!r}")

    async def close(self) -> None:
        await self.stream.aclose()


def request(id: Any, method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification(method: str, params: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return message


async def until(condition: Callable[[], Any], seconds: float = 2.0) -> None:
    """Wait (bounded) until `condition()` holds."""
    with trio.fail_after(seconds):
        while not condition():
            await trio.sleep(0.001)


def response(id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_response(id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": error}
