"""The README's session-layer examples run as users run them: the client
`acpwire.examples.render_turn` (one code path for v1 and v2) against the agent
`acpwire.examples.tool_agent` over v2 and over v1, and against the official SDK peers (the
TypeScript v2 agent, the Python SDK v1 agent), each a real subprocess over stdio."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import acpwire
from helpers.paths import INTEROP, ROOT
from helpers.raw import request
from helpers.serving import raw_agent

ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(str(ROOT / part) for part in ("generated", "runtime")),
}
CLIENT = [sys.executable, "-m", "acpwire.examples.render_turn"]
TOOL_AGENT = [sys.executable, "-m", "acpwire.examples.tool_agent"]
# The same work served over v1 only: the client asks for v2 and gets v1.
TOOL_AGENT_V1 = [
    sys.executable,
    "-c",
    "import trio; from acpwire import serve_agent; from acpwire.agent import turn_agents; "
    "from acpwire.examples.tool_agent import work; "
    "trio.run(lambda: serve_agent(v1=turn_agents(work, name='tool-agent-v1', version='1')[1]))",
]
SESSION = "sess_1"
OPTIONS = [
    {"optionId": "yes", "name": "Allow", "kind": "allow_once"},
    {"optionId": "no", "name": "Reject", "kind": "reject_once"},
]
ASKED = "\nallow / reject? "  # the example's question for a tool its policy does not allow


def render_turn(text: str, agent: list[str], answer: str = "", cwd: Path = ROOT) -> str:
    """Run the example client against `agent` with `answer` on its stdin; its stdout."""
    done = subprocess.run(
        [*CLIENT, text, "--", *agent],
        input=answer,
        cwd=cwd,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("agent", [TOOL_AGENT, TOOL_AGENT_V1], ids=["v2", "v1"])
def test_the_client_example_allows_the_tool_agents_edit(agent: list[str]) -> None:
    output = render_turn("remember the milk", agent, answer="allow\n")
    assert output == (
        f"I will add your prompt to notes.txt.{ASKED}\n[end_turn] Append to notes.txt: completed\n"
    )


@pytest.mark.parametrize("agent", [TOOL_AGENT, TOOL_AGENT_V1], ids=["v2", "v1"])
def test_the_client_example_cancels_the_permission_on_an_answer_not_offered(
    agent: list[str],
) -> None:
    """An answer that is no option id is the `cancelled` outcome: the agent does not edit."""
    output = render_turn("remember the milk", agent, answer="y\n")
    assert output.endswith(f"{ASKED}\n[end_turn] Append to notes.txt: failed\n")


def test_the_client_example_with_the_typescript_sdk_v2_agent() -> None:
    """Its tool is a read: the policy allows it, nothing is asked."""
    output = render_turn("read the readme", ["node", "ts/agent_v2.mjs"], cwd=INTEROP)
    assert output == (
        "Hello from the TS v2 agent. The tool finished. Done.\n"
        "[end_turn] Read README.md: completed\n"
    )


def test_the_client_example_with_the_python_sdk_v1_agent() -> None:
    output = render_turn("read the readme", [sys.executable, "py/agent_v1.py"], cwd=INTEROP)
    assert output == (
        "Hello from the Python v1 agent. The tool finished. Done.\n"
        "[end_turn] Read README.md: completed\n"
    )


def ask(request_id: int, version: int, kind: str) -> dict[str, object]:
    """A permission request for a tool call of `kind` (no turn of the session is running)."""
    tool_call = {"toolCallId": f"call_{request_id}", "title": "A tool", "kind": kind}
    params: dict[str, object] = {"sessionId": SESSION, "options": OPTIONS}
    if version == 2:
        params |= {"title": "Run it?", "subject": {"type": "tool_call", "toolCall": tool_call}}
    else:
        params["toolCall"] = tool_call
    return request(request_id, "session/request_permission", params)


@pytest.mark.parametrize("version", [2, 1])
async def test_the_clients_agent_requests_builds_answer_permission_by_its_policy(
    loop: str, version: int
) -> None:
    """`requests.v2_client` / `v1_client` route the agent's permission requests through
    `requests`: a read is allowed by `approve_reads`; an edit would be asked, and with no
    turn running (nobody to ask) it is rejected with the offered reject option."""
    requests = acpwire.AgentRequests(acpwire.Permissions(acpwire.approve_reads))
    client = requests.v2_client if version == 2 else requests.v1_client
    async with raw_agent(version, client=client) as (conn, peer):
        await peer.send(ask(1, version, "read"))
        assert await peer.receive() == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {"outcome": {"outcome": "selected", "optionId": "yes"}},
        }
        await peer.send(ask(2, version, "edit"))
        assert await peer.receive() == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"outcome": {"outcome": "selected", "optionId": "no"}},
        }
        assert isinstance(conn.client, acpwire.TurnClient if version == 2 else acpwire.V1TurnClient)
