"""Run a turn against any ACP agent and print what happens.

    python -m acpwire.examples.client [--protocol 2|1] [--prompt TEXT] -- <agent command...>

Initializes (v2 by default, falling back to v1 when the agent only speaks v1), opens a
session, sends the prompt (answering the permission request with "allow"), then sends a
slow prompt and cancels it after three chunks, and closes the session. With `--stream N`
it asks the agent for N chunks instead and reports messages per second; with
`--roundtrips N` it sends N `session/new` requests one after another (after a warm-up) and
reports their latency.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from typing import Any

import trio

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import UNSET, OpenVariant
from acpwire import __version__
from acpwire.client import ClientConnection, open_agent

CANCEL_AFTER_CHUNKS = 3


def describe(update: Any) -> str:
    """One readable line per session update, for either protocol version."""
    match update:
        case (
            v2.AgentMessageChunk(content=v2.TextContent(text=text))
            | v1.AgentMessageChunk(content=v1.TextContent(text=text))
        ):
            return f"agent: {text!r}"
        case v2.SessionStateUpdate(state=state, stop_reason=reason):
            return f"state: {state}" + ("" if reason is UNSET else f" ({reason})")
        case v2.UserMessage(message_id=message_id):
            return f"user message accepted as {message_id}"
        case v2.ToolCallProgress(tool_call_id=call, status=status) | (
            v1.ToolCallProgress(tool_call_id=call, status=status)
        ):
            return f"tool call {call}: {status}"
        case v1.ToolCall(tool_call_id=call, title=title):
            return f"tool call {call}: {title!r}"
        case v2.ToolCallContentChunk(tool_call_id=call):
            return f"tool call {call}: content"
        case OpenVariant():
            return f"unknown update {update.tag!r}"
    return type(update).__name__


def is_chunk(update: Any) -> bool:
    return type(update) is v2.AgentMessageChunk or type(update) is v1.AgentMessageChunk


def allow(options: list[Any]) -> str:
    chosen = next((o for o in options if o.kind.startswith("allow")), options[0])
    return str(chosen.option_id)


class Printer:
    """Shared by both versions' clients: prints updates, cancels the slow prompt."""

    def __init__(self, quiet: bool = False) -> None:
        self.quiet = quiet
        self.chunks = 0
        self.cancel_after: int | None = None
        self.conn: ClientConnection | None = None
        self.cancel_sent = trio.Event()

    def show(self, text: str) -> None:
        if not self.quiet:
            print(f"  {text}", flush=True)

    def on_update(self, update: Any) -> bool:
        """Show an update and count the chunks; True when it is time to cancel the turn."""
        if not self.quiet:
            self.show(describe(update))
        if not is_chunk(update):
            return False
        self.chunks += 1
        return self.chunks == self.cancel_after

    async def cancel(self, session_id: str) -> None:
        if self.conn is not None:
            self.show("-> session/cancel")
            await self.conn.cancel(session_id)
            self.cancel_sent.set()


PRINTER = Printer()


class ClientV2(v2.ClientBase):
    """Session updates are read from `conn.subscribe` (see `v2_turn`), not by a handler."""

    def __init__(self, agent: v2.AgentPeer) -> None:
        self.agent = agent

    async def session_request_permission(
        self, params: v2.RequestPermissionRequest
    ) -> v2.RequestPermissionResponse:
        PRINTER.show(f"permission asked: {params.title!r} -> allow")
        return v2.RequestPermissionResponse(
            outcome=v2.SelectedPermissionOutcome(option_id=allow(params.options))
        )


class ClientV1(v1.ClientBase):
    def __init__(self, agent: v1.AgentPeer) -> None:
        self.agent = agent

    async def session_update(self, params: v1.SessionNotification) -> None:
        if PRINTER.on_update(params.update):
            await PRINTER.cancel(params.session_id)

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        PRINTER.show("permission asked -> allow")
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=allow(params.options))
        )


async def initialize(conn: ClientConnection, protocol: int) -> None:
    if protocol == 2:
        info = v2.Implementation(name="acpwire-example-client", version=__version__)
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=info))
    else:
        info1 = v1.Implementation(name="acpwire-example-client", version=__version__)
        await conn.initialize(v1.InitializeRequest(protocol_version=1, client_info=info1))
    print(f"initialized: protocol version {conn.protocol_version}", flush=True)


async def v2_turn(conn: ClientConnection, session_id: str, text: str) -> str:
    """Prompt and follow the session until it is idle again; returns the stop reason."""
    agent = conn.v2
    async with agent.subscribe(session_id) as updates:
        accepted = await agent.peer.session_prompt(
            v2.PromptRequest(session_id=session_id, prompt=[v2.TextContent(text=text)])
        )
        PRINTER.show(f"prompt accepted: messageId {accepted.message_id}")
        async for update in updates:
            if PRINTER.on_update(update):
                await PRINTER.cancel(session_id)
            if isinstance(update, v2.SessionStateUpdate) and update.state == "idle":
                return str(update.stop_reason)
    raise RuntimeError("the connection closed during the turn")


async def v1_turn(conn: ClientConnection, session_id: str, text: str) -> str:
    response = await conn.v1.peer.session_prompt(
        v1.PromptRequest(session_id=session_id, prompt=[v1.TextContent(text=text)])
    )
    return str(response.stop_reason)


async def new_session(conn: ClientConnection) -> str:
    if conn.protocol_version == 2:
        session2 = await conn.v2.peer.session_new(v2.NewSessionRequest(cwd=os.getcwd()))
        return session2.session_id
    session1 = await conn.v1.peer.session_new(v1.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
    return session1.session_id


def can_close_sessions(conn: ClientConnection) -> bool:
    """Whether the agent advertised `session/close` (v2: any `session` capability; v1:
    `sessionCapabilities.close`)."""
    if conn.protocol_version == 2:
        capabilities = conn.v2.initialize_response.capabilities
        return isinstance(capabilities, v2.AgentCapabilities) and isinstance(
            capabilities.session, v2.SessionCapabilities
        )
    capabilities1 = conn.v1.initialize_response.agent_capabilities
    return (
        isinstance(capabilities1, v1.AgentCapabilities)
        and isinstance(capabilities1.session_capabilities, v1.SessionCapabilities)
        and isinstance(capabilities1.session_capabilities.close, v1.SessionCloseCapabilities)
    )


async def close_session(conn: ClientConnection, session_id: str) -> bool:
    """`session/close` when the agent advertised it; whether it was sent."""
    if not can_close_sessions(conn):
        return False
    if conn.protocol_version == 2:
        await conn.v2.peer.session_close(v2.CloseSessionRequest(session_id=session_id))
    else:
        await conn.v1.peer.session_close(v1.CloseSessionRequest(session_id=session_id))
    return True


WARM_UP_ROUNDTRIPS = 100


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of sorted values."""
    return sorted_values[max(0, math.ceil(p / 100 * len(sorted_values)) - 1)]


async def roundtrips(conn: ClientConnection, count: int) -> dict[str, Any]:
    """`session/new` `count` times in a row (after a warm-up): request/response latency."""
    latencies: list[float] = []
    for i in range(WARM_UP_ROUNDTRIPS + count):
        started = time.perf_counter_ns()
        session_id = await new_session(conn)
        if i >= WARM_UP_ROUNDTRIPS:
            latencies.append((time.perf_counter_ns() - started) / 1e6)
        if not session_id:
            raise RuntimeError("session/new answered without a session id")
    latencies.sort()
    return {
        "roundtrips": count,
        "p50_ms": percentile(latencies, 50),
        "p99_ms": percentile(latencies, 99),
        "mean_ms": sum(latencies) / count,
        "max_ms": latencies[-1],
        "seconds": sum(latencies) / 1e3,
    }


async def run(
    command: list[str], protocol: int, prompt: str, stream: int, round_trips: int = 0
) -> dict[str, Any]:
    factories: dict[str, Any] = (
        {"v1": ClientV1} if protocol == 1 else {"v2": ClientV2, "v1": ClientV1}
    )
    async with open_agent(command, **factories) as conn:
        PRINTER.conn = conn
        await initialize(conn, protocol)
        session_id = await new_session(conn)
        print(f"session {session_id}", flush=True)
        turn = v2_turn if conn.protocol_version == 2 else v1_turn
        if round_trips:
            return await roundtrips(conn, round_trips)
        if stream:
            PRINTER.quiet = True
            started = time.perf_counter()
            reason = await turn(conn, session_id, f"stream {stream}")
            seconds = time.perf_counter() - started
            return {
                "chunks": PRINTER.chunks,
                "stop": reason,
                "seconds": seconds,
                "msgs_per_sec": PRINTER.chunks / seconds,
            }
        print(f"> {prompt}", flush=True)
        first = await turn(conn, session_id, prompt)
        print(f"turn ended: {first}", flush=True)
        PRINTER.chunks, PRINTER.cancel_after = 0, CANCEL_AFTER_CHUNKS
        print("> please answer slowly so that I can cancel you", flush=True)
        second = await turn(conn, session_id, "please answer slowly so that I can cancel you " * 5)
        print(f"turn ended: {second}", flush=True)
        closed = await close_session(conn, session_id)
        print(
            "session closed" if closed else "session left open: the agent has no session/close",
            flush=True,
        )
        return {"protocol": conn.protocol_version, "first": first, "second": second}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m acpwire.examples.client", description=__doc__)
    parser.add_argument("--protocol", type=int, choices=(1, 2), default=2)
    parser.add_argument("--prompt", default="hello from the acpwire example client")
    parser.add_argument("--stream", type=int, default=0)
    parser.add_argument("--roundtrips", type=int, default=0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the agent command after --")
    result = trio.run(run, command, args.protocol, args.prompt, args.stream, args.roundtrips)
    print(result, flush=True)
    ok = (
        args.stream
        or args.roundtrips
        or (result["first"] == "end_turn" and result["second"] == "cancelled")
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
