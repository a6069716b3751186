"""Byte streams for a connection: this process's stdio, and an agent subprocess."""

from __future__ import annotations

import collections
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trio
from trio.lowlevel import FdStream

from .errors import PeerExited
from .pipes import PipeStream, widen_pipe

STDERR_TAIL_LINES = 40
STDERR_LINE_BYTES = 8192  # longer stderr lines are cut: memory stays bounded
EXIT_EOF_GRACE = 1.0  # after the agent exits, how long its stdout may stay open (held by a child)


def stdio_stream() -> PipeStream:
    """This process's stdin (receive) and stdout (send) as one trio stream (agent side)."""
    stdin = FdStream(os.dup(sys.stdin.fileno()))
    stdout = FdStream(os.dup(sys.stdout.fileno()))
    widen_pipe(stdout.fileno())  # a no-op unless stdout is a pipe
    return PipeStream(stdout, stdin)


@dataclass
class AgentProcess:
    """A running agent subprocess: its protocol stream, and what it wrote to stderr."""

    process: trio.Process
    stream: PipeStream
    stderr_tail: collections.deque[str] = field(
        default_factory=lambda: collections.deque(maxlen=STDERR_TAIL_LINES)
    )
    stderr_done: trio.Event = field(default_factory=trio.Event)

    async def exited(self, wait: float = 2.0) -> PeerExited:
        """The error describing the agent's exit (waits a little for it to finish dying and
        for its last stderr output to be read)."""
        with trio.move_on_after(wait):
            await self.process.wait()
            await self.stderr_done.wait()
        return PeerExited(self.process.returncode, "\n".join(self.stderr_tail))


async def _drain_stderr(agent: AgentProcess, forward: Callable[[str], None] | None) -> None:
    """Read the agent's stderr as it comes (a full pipe would block the agent)."""
    stream = agent.process.stderr
    assert stream is not None
    pending = bytearray()

    def emit(raw: bytes | bytearray) -> None:
        line = raw[:STDERR_LINE_BYTES].decode("utf-8", "replace")
        if len(raw) > STDERR_LINE_BYTES:
            line += f" [... {len(raw) - STDERR_LINE_BYTES} bytes cut]"
        agent.stderr_tail.append(line)
        if forward is not None:
            forward(line)

    async for chunk in stream:
        start = 0
        while (nl := chunk.find(b"\n", start)) != -1:
            pending += chunk[start:nl]
            emit(pending)
            pending.clear()
            start = nl + 1
        if len(pending) < STDERR_LINE_BYTES:  # past the cap the rest of the line is dropped
            pending += chunk[start : start + STDERR_LINE_BYTES]
    if pending:
        emit(pending)
    agent.stderr_done.set()


def forward_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@asynccontextmanager
async def spawn_agent(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    forward_stderr: Callable[[str], None] | None = forward_to_stderr,
    grace_period: float = 5.0,
) -> AsyncIterator[AgentProcess]:
    """Start an agent subprocess (the caller's environment is inherited, `env` adds to it).

    Its stderr is drained continuously, forwarded line by line and its tail kept for error
    reports. On exit: stdin is closed, the agent gets `grace_period` seconds to exit, then
    it is terminated (and killed if it still won't go).
    """
    full_env = {**os.environ, **(env or {})}
    process = await trio.lowlevel.open_process(
        list(command),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=full_env,
        cwd=cwd,
    )
    stdin, stdout = process.stdin, process.stdout
    assert isinstance(stdin, FdStream) and isinstance(stdout, FdStream)  # pipes, on Unix
    widen_pipe(stdout.fileno())
    agent = AgentProcess(process, PipeStream(stdin, stdout))
    try:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_drain_stderr, agent, forward_stderr)
            nursery.start_soon(_end_of_output_on_exit, agent)
            try:
                yield agent
            finally:
                with trio.CancelScope(shield=True):
                    await _shut_down(agent, grace_period)
    finally:
        if process.returncode is None:
            process.kill()


async def _end_of_output_on_exit(agent: AgentProcess) -> None:
    """Once the agent exited, end its output even if a child of it keeps the pipe open:
    otherwise requests waiting for answers would wait for that child."""
    await agent.process.wait()
    await trio.sleep(EXIT_EOF_GRACE)
    await agent.stream.receive_stream.aclose()


async def _shut_down(agent: AgentProcess, grace_period: float) -> None:
    try:
        await agent.stream.send_stream.aclose()
    except trio.BrokenResourceError:
        pass
    with trio.move_on_after(grace_period):
        await agent.process.wait()
        return
    agent.process.terminate()
    with trio.move_on_after(grace_period):
        await agent.process.wait()
        return
    agent.process.kill()
    await agent.process.wait()
