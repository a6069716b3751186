"""A bare Connection (the wire layer, no agent or client on it) whose handlers are scripted
by method name, and the raw JSON-lines peer at its other end."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import anyio.abc
import msgspec

import acp_schema.v2 as v2
from acp_schema import MessageCodec
from acpwire._wire.connection import Connection
from acpwire._wire.jsonrpc import Call
from acpwire._wire.options import ConnectionOptions
from acpwire.errors import RpcError
from acpwire.testing import memory_stream_pair
from helpers.constants import PERMISSION_REQUEST
from helpers.raw import RawPeer


class Handlers:
    """The dispatch of the Connection under test, recording what its handlers saw."""

    def __init__(self, connection: Connection) -> None:
        self.connection = connection
        self.gate = anyio.Event()
        self.started: list[Any] = []
        self.cancelled: list[Any] = []
        self.notes: list[Any] = []
        self.running = 0
        self.peak = 0

    async def __call__(self, call: Call) -> Any:
        params = msgspec.json.decode(call.params) if isinstance(call.params, msgspec.Raw) else None
        match call.method:
            case "_echo":
                return params
            case "_fail":
                raise ValueError("kaboom")
            case "_pretty":  # a raw result with a newline in it cannot go on one line
                return msgspec.Raw(b'{\n  "pretty": true\n}')
            case "_refuse":
                raise RpcError(-32002, "Resource not found", {"uri": "file:///nope"})
            case "_wait":
                return await self._wait(call.id)
            case "_ask":
                answer = await self.connection.request(
                    v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST
                )
                return msgspec.to_builtins(answer)
            case "_note":
                for _ in range(params["seq"] % 3):
                    await anyio.sleep(0)
                self.notes.append(params["seq"])
            case "_note_fail":
                raise ValueError("notification handler failed")
            case _:
                raise RpcError.method_not_found(call.method)
        return None

    async def _wait(self, id: Any) -> str:
        self.started.append(id)
        self.running += 1
        self.peak = max(self.peak, self.running)
        try:
            await self.gate.wait()
            return "released"
        except anyio.get_cancelled_exc_class():
            self.cancelled.append(id)
            raise
        finally:
            self.running -= 1


@dataclass
class Served:
    connection: Connection
    peer: RawPeer
    handlers: Any  # the dispatch: a Handlers unless `serving` was given another
    nursery: anyio.abc.TaskGroup
    stopped: anyio.Event  # set when run() returns (it raising fails the test)


@asynccontextmanager
async def serving(
    dispatch: Callable[[Connection], Callable[[Call], Awaitable[Any] | None]] = Handlers,
    codec: MessageCodec = v2.AGENT_CODEC,
    *,
    peer: str = "the peer",
    cancelled_result: Callable[[Call], Any] | None = None,
    **options: Any,
) -> AsyncIterator[Served]:
    """A running Connection whose dispatch is `dispatch(connection)` (`Handlers` by default),
    and the raw peer at the other end. `options`: `ConnectionOptions`' fields."""
    ours, theirs = memory_stream_pair()
    connection = Connection(
        ours,
        codec,
        lambda call: None,
        options=ConnectionOptions(**options),
        peer=peer,
        cancelled_result=cancelled_result,
    )
    handlers = dispatch(connection)
    connection.switch_to(codec, handlers, None)
    stopped = anyio.Event()

    async def run(task_status: anyio.abc.TaskStatus[None]) -> None:
        await connection.run(task_status=task_status)
        stopped.set()

    async with anyio.create_task_group() as nursery:
        await nursery.start(run)
        yield Served(connection, RawPeer(theirs), handlers, nursery, stopped)
        nursery.cancel_scope.cancel()
