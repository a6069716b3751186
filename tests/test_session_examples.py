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

ROOT = Path(__file__).parents[1]
INTEROP = ROOT / "tests" / "interop"
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
    "import trio; from acpwire import serve_agent; from acpwire.sessions import turn_agents; "
    "from acpwire.examples.tool_agent import work; "
    "trio.run(lambda: serve_agent(v1=turn_agents(work, name='tool-agent-v1')[1]))",
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
