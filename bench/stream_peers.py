"""The processes of bench/streaming.py (run by it, not by hand):

    python bench/stream_peers.py agent UPDATES REPEAT --loop trio|asyncio
    python bench/stream_peers.py client UPDATES REPEAT --loop trio|asyncio -- <agent command...>
    python bench/stream_peers.py floor-writer UPDATES REPEAT
    python bench/stream_peers.py floor-reader UPDATES REPEAT -- <writer command...>

UPDATES is a file of `session/update` lines, sent REPEAT times over. Every process decodes it
into the typed v2 notifications before anything is timed.

- acpwire: the agent answers `session/new` by sending every update through its `ClientPeer`
  (`session_update`), then the session; the client (`open_agent`, a `session_update` handler
  counting the updates) times `session/new` from sending it to its answer, which comes after
  every update on the wire. Only the public API is used (`agent_pid` for the agent's memory
  where the checkout has it).
- floor: the writer, once it says it is ready and given a line on stdin, encodes each typed notification with msgspec and
  writes them in pieces of about 64 KiB with blocking `os.write`, then an answer line; the
  reader reads 64 KiB at a time, splits lines and decodes each with the same typed one-pass
  decoder acpwire uses (`acp_schema.v2.CLIENT_CODEC.fast_decoder`): no event loop, no JSON-RPC
  state, no dispatch.

A client prints one JSON line: `{"updates": N, "seconds": S, "agent_rss_kb": ...,
"agent_cpu_s": ..., "client_cpu_s": ...}`, the CPU seconds each process used while streaming.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import msgspec

import acp_schema.v2 as v2
from acp_schema import Notification

READ_SIZE = 64 * 1024


def load_updates(path: str) -> list[v2.UpdateSessionNotification]:
    lines = Path(path).read_bytes().splitlines()
    decoded = [v2.CLIENT_CODEC.decode(line) for line in lines]
    return [message.params for message in decoded]  # type: ignore[union-attr]


def run(loop: str, main: Any, *args: Any) -> Any:
    """`main(*args)` started as a program starts it (any checkout's acpwire runs it)."""
    if loop == "trio":
        import trio

        return trio.run(main, *args)
    import asyncio

    return asyncio.run(main(*args))


def cpu_seconds(pid: int | None) -> float | None:
    """User + system CPU time a process has used so far, from /proc (Linux; 10 ms ticks)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_used(pid: int | None, before: float | None, own_before: float) -> dict[str, float]:
    """The CPU seconds both processes used since `before` (the other's) and `own_before`."""
    after = cpu_seconds(pid)
    used = {"client_cpu_s": time.process_time() - own_before}
    if before is not None and after is not None:
        used["agent_cpu_s"] = after - before
    return used


def peak_rss_kb(pid: int | None) -> int | None:
    """VmHWM (the peak resident set) of a process, from /proc (Linux)."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


# --------------------------------------------------------------------------- acpwire


def acpwire_agent(updates_path: str, repeat: int, loop: str) -> None:
    from acpwire import serve_agent

    updates = load_updates(updates_path)

    class StreamAgent(v2.AgentBase):
        def __init__(self, client: v2.ClientPeer) -> None:
            self.client = client

        async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
            info = v2.Implementation(name="stream-agent", version="1")
            return v2.InitializeResponse(protocol_version=2, info=info)

        async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
            send = self.client.session_update
            for _ in range(repeat):
                for update in updates:
                    await send(update)
            return v2.NewSessionResponse(session_id="streamed")

    run(loop, serve_agent, StreamAgent)


def acpwire_client(updates_path: str, repeat: int, loop: str, command: list[str]) -> None:
    from acpwire import open_agent

    expected = len(load_updates(updates_path)) * repeat

    class Counting(v2.ClientBase):
        count = 0

        def __init__(self, agent: v2.AgentPeer) -> None:
            self.agent = agent

        async def session_update(self, params: v2.UpdateSessionNotification) -> None:
            Counting.count += 1

    async def main() -> dict[str, Any]:
        async with open_agent(command, v2=Counting) as conn:
            info = v2.Implementation(name="stream-client", version="1")
            await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
            pid = getattr(conn, "agent_pid", None)
            agent_cpu, own_cpu = cpu_seconds(pid), time.process_time()
            started = time.perf_counter()
            await conn.v2.peer.session_new(v2.NewSessionRequest(cwd="/"))
            seconds = time.perf_counter() - started
            cpu = cpu_used(pid, agent_cpu, own_cpu)
            rss = peak_rss_kb(pid)
        return {"updates": Counting.count, "seconds": seconds, "agent_rss_kb": rss, **cpu}

    result = run(loop, main)
    if result["updates"] != expected:
        raise SystemExit(f"received {result['updates']} updates of {expected}")
    result["client_rss_kb"] = peak_rss_kb(os.getpid())
    print(json.dumps(result))


# --------------------------------------------------------------------------- floor


def floor_writer(updates_path: str, repeat: int) -> None:
    encode = msgspec.json.Encoder().encode
    messages = [Notification(method="session/update", params=p) for p in load_updates(updates_path)]
    _write_all(b"ready\n")
    os.read(0, 100)  # the go
    pending: list[bytes] = []
    size = 0
    for message in messages * repeat:
        data = encode(message)
        pending += (data, b"\n")
        size += len(data) + 1
        if size >= READ_SIZE:
            _write_all(b"".join(pending))
            pending.clear()
            size = 0
    pending.append(b'{"jsonrpc":"2.0","id":1,"result":{"sessionId":"streamed"}}\n')
    _write_all(b"".join(pending))
    os.read(0, 100)  # until the reader is done


def _write_all(data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(1, view) :]


def floor_reader(updates_path: str, repeat: int, command: list[str]) -> None:
    decode = v2.CLIENT_CODEC.fast_decoder.decode
    expected = len(load_updates(updates_path)) * repeat
    writer = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert writer.stdin is not None and writer.stdout is not None
    send, receive = writer.stdin.fileno(), writer.stdout.fileno()
    ready = b""
    while not ready.endswith(b"\n"):  # the writer has decoded its updates: not timed
        ready += os.read(receive, 100)
    count, tail, done = 0, b"", False
    agent_cpu, own_cpu = cpu_seconds(writer.pid), time.process_time()
    started = time.perf_counter()
    os.write(send, b"go\n")
    while not done:
        data = os.read(receive, READ_SIZE)
        if not data:
            raise SystemExit("the writer closed its output early")
        *lines, tail = (tail + data).split(b"\n")
        for line in lines:
            if line.startswith(b'{"jsonrpc":"2.0","id":1,'):
                done = True
                break
            decode(line)
            count += 1
    seconds = time.perf_counter() - started
    cpu = cpu_used(writer.pid, agent_cpu, own_cpu)
    rss = peak_rss_kb(writer.pid)
    os.write(send, b"done\n")
    writer.wait()
    if count != expected:
        raise SystemExit(f"received {count} updates of {expected}")
    result = {"updates": count, "seconds": seconds, "agent_rss_kb": rss, **cpu}
    result["client_rss_kb"] = peak_rss_kb(os.getpid())
    print(json.dumps(result))


def main(argv: list[str]) -> None:
    role, updates_path, repeat_text, *rest = argv
    repeat = int(repeat_text)
    command = rest[rest.index("--") + 1 :] if "--" in rest else []
    loop = rest[rest.index("--loop") + 1] if "--loop" in rest else "trio"
    if role == "agent":
        acpwire_agent(updates_path, repeat, loop)
    elif role == "client":
        acpwire_client(updates_path, repeat, loop, command)
    elif role == "floor-writer":
        floor_writer(updates_path, repeat)
    elif role == "floor-reader":
        floor_reader(updates_path, repeat, command)
    else:
        raise SystemExit(f"unknown role {role!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
