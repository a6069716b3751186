"""Shared test helpers: `async def` tests run on trio or asyncio, and a raw JSON-lines peer.

pytest-trio / anyio's pytest plugin are not used: an `async def test_...` is run here with
`anyio.run`, bounded by `ASYNC_TEST_TIMEOUT` seconds (tests bound their own waits more
tightly), on trio, or once per loop of `LOOPS` (`test_x[trio]`, `test_x[asyncio]`) when it
takes the `loop` argument. A module opts all its async tests in with
`pytestmark = pytest.mark.usefixtures("loop")` (its sync tests still run once, unless they
take `loop`: then they pass it to `run_async`). `ACPWIRE_TEST_LOOPS` (comma-separated, default
`trio,asyncio`; `uvloop` is asyncio on uvloop's event loop) chooses the loops; an unknown name
is an error.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import msgspec
import pytest
import sniffio
import trio.testing

import acp_schema.v2 as v2
from acpwire._wire.framing import LineReader
from acpwire.fixtures.loops import LOOPS as KNOWN_LOOPS
from acpwire.fixtures.loops import run_on

ASYNC_TEST_TIMEOUT = 10.0

LOOPS = tuple(os.environ.get("ACPWIRE_TEST_LOOPS", "trio,asyncio").replace(" ", "").split(","))
if unknown := [loop for loop in LOOPS if loop not in KNOWN_LOOPS]:
    raise pytest.UsageError(
        f"ACPWIRE_TEST_LOOPS: unknown loop(s) {unknown}; known: {list(KNOWN_LOOPS)}"
    )

PERMISSION_REQUEST = v2.RequestPermissionRequest(
    session_id="sess_1",
    title="Run it?",
    subject=v2.ToolCallPermissionSubject(tool_call=v2.ToolCallUpdate(tool_call_id="call_1")),
    options=[v2.PermissionOption(option_id="allow", name="Allow", kind="allow_once")],
)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """A test that takes `loop`, and an async test of a module that uses it, runs per loop."""
    takes_loop = "loop" in inspect.signature(metafunc.function).parameters
    if takes_loop or (
        "loop" in metafunc.fixturenames and inspect.iscoroutinefunction(metafunc.function)
    ):
        metafunc.parametrize("loop", LOOPS)


@pytest.fixture
def loop() -> str:
    """`loop` of a sync test in a module that uses it without taking it: not parametrised."""
    return "trio"


def loop_script(code: str) -> str:
    """`code` for a `python -c` subprocess, given `run_on(loop, function)` (the fixtures' own:
    a subprocess agent runs on the test's loop)."""
    return "import anyio\nfrom acpwire.fixtures.loops import run_on\n" + code


def run_async(function: Callable[[], Awaitable[Any]], loop: str = "trio") -> Any:
    """Run `function()` on the event loop named `loop` (one of `KNOWN_LOOPS`)."""
    return run_on(loop, function)


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    test = pyfuncitem.obj
    if not inspect.iscoroutinefunction(test):
        return None
    kwargs = {name: pyfuncitem.funcargs[name] for name in pyfuncitem._fixtureinfo.argnames}
    callspec = getattr(pyfuncitem, "callspec", None)
    loop = callspec.params.get("loop", "trio") if callspec is not None else "trio"

    async def bounded() -> None:
        with anyio.fail_after(ASYNC_TEST_TIMEOUT):
            await test(**kwargs)

    run_async(bounded, loop)
    return True


async def wait_all_tasks_blocked(cushion: float = 0.0) -> None:
    """Return once every other task has been blocked for `cushion` seconds, on either loop.

    trio's own; on asyncio a task counts as blocked while it waits on a future that is not
    done, and as blocked for the whole cushion when it waits on the same future after it
    (anyio's version polls every 0.1 s and has no cushion).
    """
    if sniffio.current_async_library() == "trio":
        await trio.testing.wait_all_tasks_blocked(cushion)
        return
    while True:
        await asyncio.sleep(0)
        before = _asyncio_waits()
        if before is None:
            continue
        if cushion:
            await asyncio.sleep(cushion)
        if _asyncio_waits() == before:
            return


def _asyncio_waits() -> dict[asyncio.Task[Any], asyncio.Future[Any]] | None:
    """The future each other task waits on, or None if one of them is not blocked."""
    this = asyncio.current_task()
    waits = {}
    for task in asyncio.all_tasks():
        waiter = getattr(task, "_fut_waiter", None)
        if task is this:
            continue
        if waiter is None or waiter.done():
            return None
        waits[task] = waiter
    return waits


class RawPeer:
    """The far end of a connection, written to and read from as raw JSON lines."""

    def __init__(self, stream: Any) -> None:
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
        with anyio.move_on_after(seconds):
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
    with anyio.fail_after(seconds):
        while not condition():
            await anyio.sleep(0.001)


def response(id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id, "result": result}


def error_response(id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": id, "error": error}
