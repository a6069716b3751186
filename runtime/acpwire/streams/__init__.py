"""What a connection runs over, on trio or asyncio: byte streams, this process's stdio, and
agent subprocesses.

`connect(stream, ...)` and `serve_agent(..., stream=...)` take any `ByteStream`: an object
with trio's stream methods (every trio stream qualifies, and `acpwire.testing`'s in-memory
pairs), or an anyio `ByteStream` (`anyio.connect_tcp`, `anyio.connect_unix`,
`anyio.abc.SocketStream.from_socket`, ...), which works on both loops:

    async with await anyio.connect_unix("/run/agent.sock") as socket:
        async with connect(socket, v2=MyClient) as conn:
            ...

Stdio and agent subprocesses need none of this: `serve_agent` uses `stdio_stream()` and
`open_agent` uses `spawn_agent(command)` (an `AgentProcess`: its `Child` process and the
`PipeStream` of its stdin/stdout). `Reconnect`: how `open_remote(..., resume=...)` tries
again after a cut.
"""

from typing import TYPE_CHECKING, TypeAlias

from .._lazy import exports
from . import byte_stream as _byte_stream
from .byte_stream import ByteStream, HalfCloseable
from .pipes import PipeStream
from .stdio import stdio_stream

AnyByteStream: TypeAlias = _byte_stream.AnyByteStream
"""What a connection accepts: a `ByteStream`, or an anyio ByteStream."""

__all__ = [
    "AgentProcess",
    "AnyByteStream",
    "ByteStream",
    "Child",
    "HalfCloseable",
    "PipeStream",
    "Reconnect",
    "spawn_agent",
    "stdio_stream",
]

if TYPE_CHECKING:  # imported on first use at run time (`_lazy`): an agent spawns no process
    from .agent_process import AgentProcess, spawn_agent
    from .child import Child
    from .reconnect import Reconnect
else:
    __getattr__, __dir__ = exports(__name__, {})
