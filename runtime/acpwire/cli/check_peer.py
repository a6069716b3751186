"""The checker's side of the wire: an agent process (or a remote connection: `check_remote`)
spoken to in raw JSON-RPC lines, every line both ways kept in a transcript (the evidence of
`acpwire check`'s verdicts).

Raw lines, not acpwire's connection: the checker sends what a well-behaved client never would
(malformed JSON, unknown methods, wrong params) and judges the agent's exact answers.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import signal
import subprocess
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Protocol

import trio

__all__ = [
    "AgentNotStarted",
    "Channel",
    "Connect",
    "Incoming",
    "Peer",
    "RequestHandler",
    "Transcript",
    "WireLine",
    "ended",
    "open_peer",
    "process_channel",
]

STDERR_TAIL = 20
"""Lines of the agent's stderr kept to explain an agent that could not start."""
EXIT_GRACE = 3.0
"""Seconds an agent has to exit after its stdin is closed, before it is killed."""

JsonObject = dict[str, Any]


class AgentNotStarted(Exception):
    """The agent command could not be run, or it exited before answering `initialize`."""


@dataclass(frozen=True)
class WireLine:
    """One line on the wire: `to_agent` (sent by the checker) or from it; `seq` is its place
    in the transcript."""

    seq: int
    process: int
    to_agent: bool
    text: str

    def render(self) -> str:
        return f"{'->' if self.to_agent else '<-'} {self.text}"


@dataclass
class Transcript:
    """Every line of every agent process the checker ran, in order."""

    lines: list[WireLine] = field(default_factory=list)
    processes: int = 0

    def add(self, process: int, to_agent: bool, text: str) -> WireLine:
        line = WireLine(len(self.lines), process, to_agent, text)
        self.lines.append(line)
        return line


@dataclass(frozen=True)
class Incoming:
    """A line from the agent: its JSON (None when it is not a JSON object) and its line."""

    message: JsonObject | None
    line: WireLine

    @property
    def method(self) -> str | None:
        method = self.message.get("method") if self.message else None
        return method if isinstance(method, str) else None

    @property
    def is_request(self) -> bool:
        return self.method is not None and self.message is not None and "id" in self.message

    @property
    def is_response(self) -> bool:
        return (
            self.message is not None
            and self.method is None
            and ("result" in self.message or "error" in self.message)
        )

    def answers(self, request_id: object) -> bool:
        """Whether this is the response to the request `request_id` (same JSON value and type)."""
        if not self.is_response or self.message is None:
            return False
        got = self.message.get("id")
        return type(got) is type(request_id) and got == request_id

    @property
    def error_code(self) -> int | None:
        error = self.message.get("error") if self.message else None
        code = error.get("code") if isinstance(error, dict) else None
        return code if isinstance(code, int) else None


RequestHandler = Callable[[Incoming], JsonObject]
"""Answers a request of the agent: the response's `result` or `error` member (a dict with
the one key)."""


class Channel(Protocol):
    """A peer's line transport: an agent process's stdio (`process_channel`), or a remote
    connection (`check_remote`), each line one text frame or message."""

    async def send_all(self, data: bytes) -> None:
        """Send the bytes (whole lines); a peer gone is not an error (its silence is)."""

    async def receive_some(self) -> bytes:
        """Bytes of lines from the peer; b"" once it ended."""

    async def close(self) -> None:
        """End the checker's side, and wait (a little) for the peer to go."""

    def gone(self) -> bool:
        """Whether the peer ended (exited, or closed the connection)."""

    def summary(self) -> str:
        """Why the peer is gone, for an `AgentNotStarted` message."""


Connect = Callable[[], AbstractAsyncContextManager[Channel]]
"""Opens a new channel to the agent (a new process, or a new connection), once per scenario."""


class Peer:
    """One agent process (or connection): send lines, receive them (agent requests answered by
    `on_request`)."""

    def __init__(
        self,
        channel: Channel,
        transcript: Transcript,
        number: int,
        timeout: float,
        on_request: RequestHandler,
    ) -> None:
        self.channel = channel
        self.transcript = transcript
        self.number = number
        self.timeout = timeout
        """Seconds to wait for an answer the checker expects."""
        self.on_request = on_request
        self._lines_send, self._lines = trio.open_memory_channel[Incoming](math.inf)
        self._next_id = 0
        self.closed = False
        """Whether the agent closed its stdout (or the connection)."""
        self.last_request: WireLine | None = None
        """The line of the last request sent."""
        self.last_sent: WireLine | None = None
        """The last line sent."""

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    async def send_line(self, text: str) -> WireLine:
        """Write `text` and a newline to the agent (even when it is not JSON)."""
        line = self.last_sent = self.transcript.add(self.number, True, text)
        await self.channel.send_all(text.encode() + b"\n")
        return line

    async def send(self, message: JsonObject) -> WireLine:
        return await self.send_line(json.dumps(message, separators=(",", ":")))

    async def request(self, method: str, params: object, request_id: object = None) -> object:
        """Send a request; returns its id."""
        rid = self.new_id() if request_id is None else request_id
        self.last_request = await self.send(
            {"jsonrpc": "2.0", "id": rid, "method": method, "params": params}
        )
        return rid

    async def notify(self, method: str, params: object) -> None:
        await self.send({"jsonrpc": "2.0", "method": method, "params": params})

    async def receive(self, timeout: float | None = None) -> Incoming | None:
        """The agent's next line (its requests answered on the way), None on timeout or when
        the agent closed its stdout."""
        with trio.move_on_after(self.timeout if timeout is None else timeout):
            try:
                incoming = await self._lines.receive()
            except trio.EndOfChannel:
                self.closed = True
                return None
            if incoming.is_request and incoming.message is not None:
                answer = self.on_request(incoming)
                await self.send({"jsonrpc": "2.0", "id": incoming.message["id"], **answer})
            return incoming
        return None

    async def until(
        self, done: Callable[[Incoming], bool], timeout: float | None = None
    ) -> tuple[list[Incoming], Incoming | None]:
        """Lines up to the first that is `done` (returned apart; None when none came within
        the timeout, which bounds the whole wait)."""
        seen: list[Incoming] = []
        deadline = trio.current_time() + (self.timeout if timeout is None else timeout)
        while True:
            incoming = await self.receive(max(0.0, deadline - trio.current_time()))
            if incoming is None:
                return seen, None
            if done(incoming):
                return seen, incoming
            seen.append(incoming)

    async def call(
        self, method: str, params: object, request_id: object = None
    ) -> tuple[list[Incoming], Incoming | None]:
        """Send a request and wait for its response: (the lines before it, the response).
        `last_request` is the request's line."""
        rid = await self.request(method, params, request_id)
        return await self.until(lambda incoming: incoming.answers(rid))

    async def send_request(self, method: str, params: object, request_id: object) -> None:
        """Send a request with `request_id` (any JSON value, for the id rules)."""
        await self.send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})

    async def _read(self) -> None:
        buffer = b""
        async with self._lines_send:
            while chunk := await self.channel.receive_some():
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for raw in lines:
                    await self._deliver(raw)
            if buffer:
                await self._deliver(buffer)
        self.closed = True

    def gone(self) -> bool:
        """Whether the agent ended (its stdout closed, or it exited; the connection closed)."""
        return self.closed or self.channel.gone()

    async def _deliver(self, raw: bytes) -> None:
        text = raw.decode("utf-8", "replace").rstrip("\r")
        line = self.transcript.add(self.number, False, text)
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None
        message = parsed if isinstance(parsed, dict) else None
        await self._lines_send.send(Incoming(message, line))


class ProcessChannel:
    """An agent process's stdio as a `Channel` (its stderr's tail kept for `summary`)."""

    def __init__(self, process: trio.Process) -> None:
        self.process = process
        self.stderr_tail: list[str] = []

    async def send_all(self, data: bytes) -> None:
        assert self.process.stdin is not None
        try:
            await self.process.stdin.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the agent is gone: what it (did not) answer is the evidence

    async def receive_some(self) -> bytes:
        assert self.process.stdout is not None
        return bytes(await self.process.stdout.receive_some())

    async def close(self) -> None:
        """Close its stdin, wait for it to exit (killed after `EXIT_GRACE`)."""
        if self.process.stdin is not None:
            with trio.CancelScope(shield=True):
                await self.process.stdin.aclose()
        await ended(self.process, EXIT_GRACE, group=True)

    def gone(self) -> bool:
        return self.process.poll() is not None

    async def read_stderr(self) -> None:
        assert self.process.stderr is not None
        buffer = b""
        async for chunk in self.process.stderr:
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            self.stderr_tail = [
                *self.stderr_tail,
                *(raw.decode("utf-8", "replace") for raw in lines),
            ][-STDERR_TAIL:]

    def summary(self) -> str:
        code = self.process.returncode
        said = "\n".join(f"  {line}" for line in self.stderr_tail)
        how = "closed its stdout" if code is None else f"exited with code {code}"
        return f"the agent {how} before answering initialize" + (
            f"; its stderr ended with:\n{said}" if said else " (nothing on stderr)"
        )


def process_channel(command: Sequence[str], cwd: str) -> Connect:
    """Each call runs `command` in `cwd`: a new agent process, its stderr read."""

    @asynccontextmanager
    async def running() -> AsyncIterator[Channel]:
        try:
            process = await trio.lowlevel.open_process(
                list(command),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                process_group=0,  # ended() stops what it started too: see there
            )
        except OSError as error:
            raise AgentNotStarted(f"{command[0]}: {error.strerror or error}") from error
        channel = ProcessChannel(process)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(channel.read_stderr)
            try:
                yield channel
            finally:
                await channel.close()  # shielded: the agent never outlives its scenario

    return running


@asynccontextmanager
async def open_peer(
    connect: Connect, transcript: Transcript, timeout: float, on_request: RequestHandler
) -> AsyncIterator[Peer]:
    """`async with open_peer(connect, ...) as peer`: a new channel to the agent, its output
    read; on exit the channel is closed (a process's stdin closed, then it is waited for)."""
    async with connect() as channel:
        transcript.processes += 1
        peer = Peer(channel, transcript, transcript.processes, timeout, on_request)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(peer._read)
            try:
                yield peer
            finally:
                with trio.CancelScope(shield=True):
                    await channel.close()


async def ended(process: trio.Process, grace: float, *, group: bool = False) -> None:
    """Wait for `process` to exit, killing it after `grace` seconds; even when cancelled.

    `group`: it leads a process group of its own, and what is left of the group is killed
    then too. The real agent behind an `npx` / `uvx` shim is the shim's child: killed alone,
    the shim left it running, holding the agent's pipes open, and the check waited for
    their end forever."""
    with trio.CancelScope(shield=True):
        with trio.move_on_after(grace):
            await process.wait()
        if process.returncode is None:
            process.kill()
            await process.wait()
        if group:
            with contextlib.suppress(ProcessLookupError):  # no process of the group is left
                os.killpg(process.pid, signal.SIGKILL)
