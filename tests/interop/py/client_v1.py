"""ACP v1 client built on the official Python SDK (PyPI agent-client-protocol==0.12.1).

Usage: python client_v1.py [--stream N | --roundtrips N] -- <agent command...>
The last stdout line is a JSON summary; exit code 0 iff it says "ok": true.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any, NamedTuple

import acp
from acp import schema as s

log = logging.getLogger("py-client-v1")
WARMUP_ROUNDTRIPS = 100


class InteropClient:
    """Implements the acp.Client protocol: counts updates, auto-allows permissions."""

    def __init__(self) -> None:
        self.updates: Counter[str] = Counter()
        self.permission_requests = 0
        self.turn_chunks = 0
        self.cancel_after = 0  # when > 0: set `cancel_now` after this many chunks of the turn
        self.cancel_now = asyncio.Event()
        self.cancel_sent = False
        self.count_kinds = True

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if self.count_kinds:
            self.updates[update.session_update] += 1
        if update.session_update == "agent_message_chunk":
            self.turn_chunks += 1
            if self.turn_chunks == self.cancel_after:
                self.cancel_now.set()

    async def request_permission(
        self, options: list[s.PermissionOption], session_id: str, tool_call: Any, **kwargs: Any
    ) -> s.RequestPermissionResponse:
        self.permission_requests += 1
        if self.cancel_sent:
            return s.RequestPermissionResponse(outcome=s.DeniedOutcome(outcome="cancelled"))
        allow = next(o for o in options if o.kind in ("allow_once", "allow_always"))
        return s.RequestPermissionResponse(
            outcome=s.AllowedOutcome(outcome="selected", option_id=allow.option_id)
        )


class Args(NamedTuple):
    stream: int  # N of `--stream N`, else 0
    roundtrips: int  # N of `--roundtrips N`, else 0
    command: list[str]


def parse_args(argv: list[str]) -> Args:
    if "--" not in argv:
        sys.exit("usage: client_v1.py [--stream N | --roundtrips N] -- <agent command...>")
    sep = argv.index("--")
    own, command = argv[:sep], argv[sep + 1 :]

    def number(flag: str) -> int:
        return int(own[own.index(flag) + 1]) if flag in own else 0

    return Args(number("--stream"), number("--roundtrips"), command)


async def prompt_text(conn: Any, session_id: str, text: str) -> str:
    response = await conn.prompt(session_id=session_id, prompt=[acp.text_block(text)])
    return response.stop_reason


def latency_stats(times_ns: list[int]) -> dict[str, float]:
    """p50/p99 (nearest rank), mean and max of `times_ns` (non-empty), in ms to 4 decimals."""
    ordered = sorted(times_ns)

    def ms(ns: float) -> float:
        return round(ns / 1e6, 4)

    def rank(p: int) -> float:
        return ms(ordered[math.ceil(p / 100 * len(ordered)) - 1])

    mean = sum(ordered) / len(ordered)
    return {"p50Ms": rank(50), "p99Ms": rank(99), "meanMs": ms(mean), "maxMs": ms(ordered[-1])}


async def measure_roundtrips(conn: Any, n: int, summary: dict[str, Any]) -> None:
    """Warm up, then time `n` sequential `session/new` requests, one response at a time."""
    cwd = os.getcwd()
    missing = 0

    async def roundtrip() -> int:
        nonlocal missing
        t = time.perf_counter_ns()
        response = await conn.new_session(cwd=cwd, mcp_servers=[])
        elapsed = time.perf_counter_ns() - t
        if not isinstance(response.session_id, str):
            missing += 1
        return elapsed

    for _ in range(WARMUP_ROUNDTRIPS):
        await roundtrip()
    t0 = time.perf_counter_ns()
    times_ns = [await roundtrip() for _ in range(n)]
    seconds = (time.perf_counter_ns() - t0) / 1e9
    summary.update(roundtrips=n, **latency_stats(times_ns), seconds=seconds)
    if missing:
        summary["errors"].append(f"{missing} session/new responses without a sessionId")


async def run(args: Args, summary: dict[str, Any]) -> None:
    command = args.command
    client = InteropClient()
    # Inherit our environment and stderr (the SDK defaults to a trimmed env and a stderr pipe).
    async with acp.spawn_agent_process(
        client, command[0], *command[1:], env=dict(os.environ), transport_kwargs={"stderr": None}
    ) as (conn, proc):
        await scenario(conn, client, args, summary)
    if proc.returncode != 0:
        summary["errors"].append(f"agent exited with {proc.returncode}")


async def scenario(conn: Any, client: InteropClient, args: Args, summary: dict[str, Any]) -> None:
    """The scenario (or the benchmark) over an open connection, whatever its transport."""
    stream = args.stream
    errors: list[str] = summary["errors"]
    init = await conn.initialize(
        protocol_version=acp.PROTOCOL_VERSION,
        client_capabilities=s.ClientCapabilities(),
        client_info=s.Implementation(name="interop-py-client-v1", version="0.12.1"),
    )
    summary["protocolVersion"] = init.protocol_version
    if init.protocol_version != 1:
        errors.append(f"protocolVersion {init.protocol_version} != 1")
    session_id = (await conn.new_session(cwd=os.getcwd(), mcp_servers=[])).session_id

    if args.roundtrips:
        await measure_roundtrips(conn, args.roundtrips, summary)
    elif stream:
        client.count_kinds = False
        t0 = time.perf_counter()
        stop = await prompt_text(conn, session_id, f"stream {stream}")
        seconds = time.perf_counter() - t0
        chunks = client.turn_chunks
        summary.update(
            chunks=chunks, seconds=seconds, msgsPerSec=round(chunks / seconds), stopReason=stop
        )
        if chunks != stream:
            errors.append(f"got {chunks} chunks, expected {stream}")
        if stop != "end_turn":
            errors.append(f"stream stopReason {stop}")
    else:
        stop1 = await prompt_text(conn, session_id, "Please read the README")
        summary["prompt1StopReason"] = stop1
        if stop1 != "end_turn":
            errors.append(f"prompt1 stopReason {stop1}")
        if client.permission_requests != 1:
            errors.append(f"permissionRequests {client.permission_requests} != 1")
        if client.updates["tool_call"] != 1 or client.updates["tool_call_update"] < 1:
            errors.append("expected one tool_call and a tool_call_update")

        client.turn_chunks, client.cancel_after = 0, 3
        turn2 = asyncio.create_task(prompt_text(conn, session_id, "Please be slow"))
        await asyncio.wait(
            {turn2, asyncio.create_task(client.cancel_now.wait())},
            return_when="FIRST_COMPLETED",
        )
        if client.cancel_now.is_set():
            client.cancel_sent = True
            await conn.cancel(session_id=session_id)
        stop2 = await turn2
        summary["prompt2StopReason"], summary["prompt2Chunks"] = stop2, client.turn_chunks
        if stop2 != "cancelled":
            errors.append(f"prompt2 stopReason {stop2}")
        if client.turn_chunks >= 200:
            errors.append(f"prompt2 was not cut short ({client.turn_chunks} chunks)")

        caps = init.agent_capabilities
        if caps and caps.session_capabilities and caps.session_capabilities.close is not None:
            await conn.close_session(session_id=session_id)
            summary["sessionClosed"] = True
        summary["updates"] = dict(client.updates)
    summary["permissionRequests"] = client.permission_requests


def summarized(client: Callable[[dict[str, Any]], Coroutine[Any, Any, None]]) -> int:
    """Run `client(summary)` and print the summary (its errors, and any exception, in it);
    the exit code is 0 iff it says "ok": true."""
    summary: dict[str, Any] = {"ok": False, "protocolVersion": None, "errors": []}
    try:
        asyncio.run(client(summary))
    except Exception as exc:
        log.exception("client failed")
        summary["errors"].append(f"{type(exc).__name__}: {exc}")
    summary["ok"] = not summary["errors"]
    print(json.dumps(summary), flush=True)
    return 0 if summary["ok"] else 1


def main() -> int:
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[%(name)s] %(message)s")
    args = parse_args(sys.argv[1:])
    return summarized(lambda summary: run(args, summary))


if __name__ == "__main__":
    sys.exit(main())
