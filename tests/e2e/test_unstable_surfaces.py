"""A program on the unstable surfaces (`acp_schema.v2.unstable`, `.v1.unstable`) through the
front door: it type-checks under `mypy --strict` without casts, and importing acpwire imports
no unstable surface (a program that uses none does not pay for one)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers.processes import PYTHONPATH
from helpers.typecheck import mypy_strict_errors

UNSTABLE_PROGRAM = """\
from typing import assert_type

import acp_schema.v1.unstable as v1u
import acp_schema.v2.unstable as v2u
from acpwire import (
    AgentRequests,
    Permissions,
    PromptTurns,
    SessionState,
    StopReason,
    Turn,
    V1PromptTurns,
    V1SessionState,
    V1Turn,
    approve_reads,
    open_agent,
    prompt,
    serve_agent,
)


class Client(v2u.ClientBase):
    def __init__(self, agent: v2u.AgentPeer) -> None:
        self.requests = AgentRequests(Permissions(approve_reads))

    async def session_request_permission(
        self, params: v2u.RequestPermissionRequest
    ) -> v2u.RequestPermissionResponse:
        return await self.requests.request_permission(params)

    async def elicitation_create(
        self, params: v2u.CreateElicitationRequest
    ) -> v2u.CreateElicitationResponse:
        return await self.requests.elicitation(params)


class V1Client(v1u.ClientBase):
    def __init__(self, agent: v1u.AgentPeer) -> None:
        self.permissions = Permissions()

    async def session_request_permission(
        self, params: v1u.RequestPermissionRequest
    ) -> v1u.RequestPermissionResponse:
        return await self.permissions.answer(params)


class Agent(v2u.AgentBase):
    def __init__(self, client: v2u.ClientPeer) -> None:
        self.turns = PromptTurns(client)

    async def session_prompt(self, params: v2u.PromptRequest) -> v2u.PromptResponse:
        return await self.turns.start(params, self.work)

    async def session_close(self, params: v2u.CloseSessionRequest) -> v2u.CloseSessionResponse:
        return await self.turns.close(params)

    async def work(self, turn: Turn) -> StopReason:
        await turn.update(v2u.PlanRemoved(plan_id="p"))  # a variant of the unstable surface only
        return "end_turn"


class V1Agent(v1u.AgentBase):
    def __init__(self, client: v1u.ClientPeer) -> None:
        self.turns = V1PromptTurns(client)

    async def session_prompt(self, params: v1u.PromptRequest) -> v1u.PromptResponse:
        return await self.turns.start(params, self.work)

    async def session_close(self, params: v1u.CloseSessionRequest) -> v1u.CloseSessionResponse:
        return await self.turns.close(params)

    async def work(self, turn: V1Turn) -> StopReason:
        await turn.update(v1u.PlanRemoved(plan_id="p"))
        return "end_turn"


async def use(
    update: v2u.SessionUpdate,
    v1_update: v1u.SessionUpdate,
    request: v2u.RequestPermissionRequest,
    v1_request: v1u.RequestPermissionRequest,
) -> None:
    await serve_agent(Agent, v1=V1Agent)
    async with open_agent(["agent"], v2=Client, v1=V1Client) as conn:
        assert_type(conn.protocol_version, int)
        info = v2u.Implementation(name="c", version="1")
        await conn.initialize(v2u.InitializeRequest(protocol_version=2, info=info))
        await conn.initialize(v1u.InitializeRequest(protocol_version=1))
        text = v2u.TextContent(text="hi")
        params = v2u.PromptRequest(session_id="s", prompt=[text])
        async with prompt(conn.v2, AgentRequests(), params) as turn:
            assert_type(turn.state, SessionState)
        v1_params = v1u.PromptRequest(session_id="s", prompt=[v1u.TextContent(text="hi")])
        async with prompt(conn.v1, AgentRequests(), v1_params) as v1_turn:
            assert_type(v1_turn.state, V1SessionState)
    state = SessionState()
    state.apply(update)
    state.apply_permission_request(request)
    v1_state = V1SessionState()
    v1_state.apply(v1_update)
    v1_state.apply_permission_request(v1_request)
    assert_type(await Permissions().answer(request, state=state), v2u.RequestPermissionResponse)
    assert_type(await Permissions().answer(v1_request), v1u.RequestPermissionResponse)
    state.apply(v1_update)  # the one mistake: a v1 update in a v2 state
"""


def test_an_unstable_client_and_agent_type_check_without_casts(tmp_path: Path) -> None:
    """Was: 26 errors (the factories, PromptTurns, V1PromptTurns, Permissions, AgentRequests,
    SessionState, V1SessionState took the stable classes only), then 3 (`initialize` and
    `prompt` took the stable requests only), then 3 (`Turn.update` / `V1Turn.update` took the
    stable updates only)."""
    errors = mypy_strict_errors(UNSTABLE_PROGRAM, tmp_path)
    assert len(errors) == 1, errors  # the one mistake: a v1 update in a v2 state
    mistake = UNSTABLE_PROGRAM.splitlines().index(
        "    state.apply(v1_update)  # the one mistake: a v1 update in a v2 state"
    )
    assert f":{mistake + 1}: error:" in errors[0] and '"apply" of "_Fold"' in errors[0]


def test_importing_acpwire_imports_no_unstable_surface() -> None:
    code = "import sys, acpwire; print(sorted(m for m in sys.modules if '.unstable' in m))"
    done = subprocess.run(
        [sys.executable, "-c", code], env=PYTHONPATH, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
