"""acpwire on bindings where a `session/update` variant is on the unstable surfaces only, as the
protocol repository's main branch has `Notice` and the compaction updates: generated from a
snapshot derived from schema/ (v1 and v2 stable without them), acpwire imports and works, and a
variant missing from a surface is simply not folded specially there (it is kept in `unknown`)."""

from __future__ import annotations

from pathlib import Path

from helpers.paths import ROOT
from helpers.schema_edits import Schema, drop_def, generate_and_probe, synthetic_release

UNSTABLE_ONLY = ("Notice", "CompactionUpdate", "CompactionSummaryChunk")


def unstable_only(name: str, schema: Schema) -> None:
    """`Notice` and the compaction updates moved to the unstable surface of v1 and v2."""
    if name in ("v1/schema.json", "v2/schema.json"):
        for definition in UNSTABLE_ONLY:
            drop_def(schema, definition)


PROBE = """
import json

import anyio

import acp_schema.v1.unstable as v1u
import acp_schema.v2.unstable as v2u
from acp_schema import tag_of, v1, v2
from acpwire import (
    AgentRequests, PromptTurns, RpcError, SessionState, V1SessionState, agent_capabilities,
    connect, prompt, serve_agent,
)
from acpwire.client import V1UnknownSessionUpdate
from acpwire.testing import memory_stream_pair


class Agent(v2u.AgentBase):
    \"\"\"An unstable agent: it sends a notice, then a reply.\"\"\"

    def __init__(self, client):
        self.turns = PromptTurns(client)

    async def initialize(self, params):
        info = v2u.Implementation(name="a", version="1")
        capabilities = agent_capabilities(Agent)
        return v2u.InitializeResponse(protocol_version=2, info=info, capabilities=capabilities)

    async def session_new(self, params):
        return v2u.NewSessionResponse(session_id="s1")

    async def session_list(self, params):
        return v2u.ListSessionsResponse(sessions=[])

    async def session_resume(self, params):
        raise RpcError.resource_not_found(params.session_id)

    async def session_prompt(self, params):
        return await self.turns.start(params, self.work)

    async def session_cancel(self, params):
        self.turns.cancel(params.session_id)

    async def session_close(self, params):
        return await self.turns.close(params)

    async def work(self, turn):
        await turn.update(v2u.Notice(severity="warning", title="slow"))
        await turn.say("hi")
        return "end_turn"


def client_of(base):
    class Client(base):
        def __init__(self, agent):
            self.requests = AgentRequests()

    return Client


async def turn_state(client_base):
    agent_end, client_end = memory_stream_pair()
    async with anyio.create_task_group() as nursery:
        nursery.start_soon(lambda: serve_agent(Agent, stream=agent_end))
        async with connect(client_end, v2=client_of(client_base)) as conn:
            init = v2.InitializeRequest(protocol_version=2, info=v2.Implementation(name="c", version="1"))
            await conn.initialize(init)
            session = await conn.v2.peer.session_new(v2.NewSessionRequest(cwd="/"))
            params = v2.PromptRequest(session_id=session.session_id, prompt=[v2.TextContent(text="x")])
            async with prompt(conn.v2, conn.client.requests, params) as turn:
                async for _ in turn:
                    pass
        nursery.cancel_scope.cancel()
    state = turn.state
    return {
        "stop_reason": turn.stop_reason,
        "text": [m.text() for m in state.messages.values() if m.role == "agent"],
        "notices": [n.title for n in state.notices],
        "unknown": [tag_of(u) for u in state.unknown],
    }


async def main():
    v1_state = V1SessionState()
    v1_state.apply(v1u.Notice(severity="info", title="unstable v1 notice"))
    v1_state.apply(V1UnknownSessionUpdate({"sessionUpdate": "notice", "title": "t"}))
    print(json.dumps({
        "stable_has": [hasattr(v2, "Notice"), hasattr(v1, "Notice"), hasattr(v2, "CompactionUpdate")],
        "v2_stable_client": await turn_state(v2.ClientBase),
        "v2_unstable_client": await turn_state(v2u.ClientBase),
        "v1": {"notices": [n.title for n in v1_state.notices], "unknown": [u.tag for u in v1_state.unknown]},
    }))


anyio.run(main)
"""


def test_acpwire_works_where_notice_is_unstable_only(tmp_path: Path) -> None:
    """Was: `import acpwire` failed with `AttributeError: module 'acp_schema.v2' has no
    attribute 'Notice'` (the fold's handler tables named the stable classes)."""
    schema_dir = synthetic_release(tmp_path, "9.0.0", unstable_only)
    result = generate_and_probe(schema_dir, tmp_path, PROBE, path=(ROOT / "runtime",))
    turn = {"stop_reason": "end_turn", "text": ["hi"]}
    assert result == {
        "stable_has": [False, False, False],
        "v2_stable_client": {**turn, "notices": [], "unknown": ["notice"]},
        "v2_unstable_client": {**turn, "notices": ["slow"], "unknown": []},
        "v1": {"notices": ["unstable v1 notice"], "unknown": ["notice"]},
    }
