"""ACP v1 agent built on the official Python SDK (PyPI agent-client-protocol==0.12.1).

Usage: python agent_v1.py [--stream N]      (stdout = protocol, stderr = logs)
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import sys
from typing import Any

import acp
from acp import schema as s

log = logging.getLogger("py-agent-v1")


def parse_stream(argv: list[str]) -> int:
    if "--stream" in argv:
        return int(argv[argv.index("--stream") + 1])
    return int(os.environ.get("ACP_INTEROP_STREAM") or 0)


STREAM = parse_stream(sys.argv[1:])
PERMISSION_OPTIONS = [
    s.PermissionOption(option_id="allow", name="Allow", kind="allow_once"),
    s.PermissionOption(option_id="reject", name="Reject", kind="reject_once"),
]


class InteropAgent:
    """Implements the acp.Agent protocol (only the methods the scenario needs)."""

    def __init__(self) -> None:
        self.client: acp.Client | None = None
        self.turns: dict[str, asyncio.Event] = {}  # session id -> cancel event of the running turn
        self.sessions: set[str] = set()

    def on_connect(self, conn: acp.Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> s.InitializeResponse:
        log.info("initialize, client asked for protocol %s", protocol_version)
        return s.InitializeResponse(
            protocol_version=acp.PROTOCOL_VERSION,
            agent_capabilities=s.AgentCapabilities(
                session_capabilities=s.SessionCapabilities(close=s.SessionCloseCapabilities())
            ),
            agent_info=s.Implementation(name="interop-py-agent-v1", version="0.12.1"),
        )

    async def new_session(self, cwd: str, **kwargs: Any) -> s.NewSessionResponse:
        session_id = f"sess_py_v1_{len(self.sessions) + 1}"
        self.sessions.add(session_id)
        return s.NewSessionResponse(session_id=session_id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> s.PromptResponse:
        if session_id not in self.sessions:
            raise acp.RequestError.invalid_params({"sessionId": session_id})
        cancelled = self.turns[session_id] = asyncio.Event()
        try:
            stop = await self._turn(
                session_id, " ".join(b.text for b in prompt if b.type == "text"), cancelled
            )
        finally:
            self.turns.pop(session_id, None)
        return s.PromptResponse(stop_reason=stop)

    async def _turn(self, session_id: str, text: str, cancelled: asyncio.Event) -> str:
        assert self.client is not None
        client = self.client

        async def say(chunk: str) -> None:
            await client.session_update(session_id, acp.update_agent_message_text(chunk))

        m = re.fullmatch(r"\s*stream\s+(\d+)\s*", text)
        n = STREAM or (int(m.group(1)) if m else 0)
        if n:
            for i in range(n):
                await say(f"chunk {i} ")
            return "end_turn"
        if "slow" in text:
            for i in range(200):
                if cancelled.is_set():
                    return "cancelled"
                await say(f"slow {i} ")
                try:
                    await asyncio.wait_for(cancelled.wait(), 0.05)
                except TimeoutError:
                    pass
            return "cancelled" if cancelled.is_set() else "end_turn"

        for chunk in ("Hello ", "from ", "the Python v1 agent. "):
            await say(chunk)
        await client.session_update(
            session_id,
            acp.start_tool_call("call_1", "Read README.md", kind="read", status="pending"),
        )
        response = await client.request_permission(
            session_id=session_id,
            tool_call=s.ToolCallUpdate(
                tool_call_id="call_1", title="Read README.md", kind="read", status="pending"
            ),
            options=PERMISSION_OPTIONS,
        )
        outcome = response.outcome
        if cancelled.is_set() or outcome.outcome == "cancelled":
            await client.session_update(
                session_id, acp.update_tool_call("call_1", status="cancelled")
            )
            return "cancelled"
        if outcome.option_id != "allow":
            await client.session_update(session_id, acp.update_tool_call("call_1", status="failed"))
            await say("Permission denied. ")
            return "end_turn"
        await client.session_update(
            session_id, acp.update_tool_call("call_1", status="in_progress")
        )
        await client.session_update(
            session_id,
            acp.update_tool_call(
                "call_1", status="completed", content=[acp.tool_content(acp.text_block("# README"))]
            ),
        )
        for chunk in ("The tool ", "finished. ", "Done."):
            await say(chunk)
        return "end_turn"

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log.info("cancel %s", session_id)
        if event := self.turns.get(session_id):
            event.set()

    async def close_session(self, session_id: str, **kwargs: Any) -> s.CloseSessionResponse:
        log.info("close %s", session_id)
        if event := self.turns.get(session_id):
            event.set()
        self.sessions.discard(session_id)
        return s.CloseSessionResponse()


async def main() -> None:
    # session/close is stable in ACP v1, but SDK 0.12.1 still routes it as
    # "unstable": without this flag it answers -32601 Method not found.
    await acp.run_agent(InteropAgent(), use_unstable_protocol=True)


if __name__ == "__main__":
    logging.basicConfig(stream=sys.stderr, level=logging.INFO, format="[%(name)s] %(message)s")
    asyncio.run(main())
