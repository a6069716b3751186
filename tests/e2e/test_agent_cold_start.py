"""An agent's start imports what answering `initialize` needs, not the rest (issue 18, cold
start): when its `initialize` handler runs, a stdio agent (v2 and v1 served, its turns run by
`PromptTurns`, as a user's agent is written) has imported neither the client package nor
`serve_turns` and its stores, and of the generated bindings only the protocol areas of the
`initialize` messages (and of the error codes): no session, prompt or update types yet.

The time this saves is measured by bench/agents.py (agent start); this pins, deterministically,
which modules are imported."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap

from bindings.test_lazy_surfaces import area_closure

from helpers.processes import PYTHONPATH, python

AGENT = textwrap.dedent(
    """
    from __future__ import annotations  # annotations naming the types import no area

    import functools, json, sys

    import acp_schema.v1 as v1
    import acp_schema.v2 as v2
    from acpwire import PromptTurns, V1PromptTurns, serve_agent
    from acpwire.fixtures.loops import run_main


    def loaded() -> list[str]:
        return sorted(m for m in sys.modules if m.startswith(("acpwire", "acp_schema")))


    class Agent(v2.AgentBase):
        def __init__(self, client: v2.ClientPeer) -> None:
            self.turns = PromptTurns(client)

        async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
            print(json.dumps(loaded()), file=sys.stderr, flush=True)
            info = v2.Implementation(name="agent", version="1")
            return v2.InitializeResponse(protocol_version=2, info=info)

        async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
            return v2.NewSessionResponse(session_id="s1")


    class V1Agent(v1.AgentBase):
        def __init__(self, client: v1.ClientPeer) -> None:
            self.turns = V1PromptTurns(client)

        async def initialize(self, params: v1.InitializeRequest) -> v1.InitializeResponse:
            return v1.InitializeResponse(protocol_version=1)

        async def session_new(self, params: v1.NewSessionRequest) -> v1.NewSessionResponse:
            return v1.NewSessionResponse(session_id="s1")


    run_main(sys.argv[1], functools.partial(serve_agent, Agent, v1=V1Agent))
    """
)

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {"protocolVersion": 2, "info": {"name": "test", "version": "1"}},
}

NEEDED_AREAS = sorted(
    {
        f"acp_schema.v2.{area}"
        for name in ("InitializeRequest", "InitializeResponse", "ErrorCode")
        for area in area_closure("v2", name)
    }
)
"""The v2 areas answering `initialize` needs: its messages' and the error codes' (errors)."""


def loaded_at_initialize(loop: str) -> list[str]:
    """The acpwire and acp_schema modules the agent has imported when its `initialize`
    handler runs, on `loop`."""
    done = subprocess.run(
        [*python(AGENT), loop],
        input=json.dumps(INITIALIZE) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **PYTHONPATH},
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[0])
    assert answer["id"] == 0 and answer["result"]["protocolVersion"] == 2, answer
    loaded: list[str] = json.loads(done.stderr.splitlines()[0])
    return loaded


def test_an_agent_answering_initialize_has_imported_only_what_that_needs(loop: str) -> None:
    """On each test loop (`loop`: conftest.py)."""
    loaded = loaded_at_initialize(loop)
    assert [m for m in loaded if m.startswith("acpwire.client")] == []
    assert "acpwire.agent.sessions" not in loaded
    assert [m for m in loaded if m.startswith("acp_schema.v1._types.")] == []
    areas = [m for m in loaded if m.startswith("acp_schema.v2._types.")]
    assert areas == NEEDED_AREAS
