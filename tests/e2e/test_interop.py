"""Interop: acpwire against peers built on the official ACP SDKs, over real stdio subprocesses.

Peers (tests/interop/README.md): TypeScript `@agentclientprotocol/sdk` 2.4.0 (v1 and the v2
draft) and Python `agent-client-protocol` 0.12.1 (v1). Their clients run against
`python -m acpwire.fixtures.echo_agent`; `python -m acpwire.fixtures.client` runs against their
agents, including a v2 request to a v1-only agent (falls back to v1). Each test runs with our
side on every test loop (`--loop`; trio, the default, takes no flag). The module fails (never
skips) when node + tests/interop/ts/node_modules or the Python SDK (`import acp` in this
interpreter) are missing: `nox -s tests` installs them.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
from typing import Any

import pytest

from helpers.paths import INTEROP, ROOT

TIMEOUT = 60.0
TAIL_LINES = 25
PATHS = [ROOT / "generated", ROOT / "runtime", ROOT, os.environ.get("PYTHONPATH")]
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in PATHS if p)}

HAVE_NODE = (
    shutil.which("node") is not None
    and (INTEROP / "ts" / "node_modules" / "@agentclientprotocol" / "sdk").is_dir()
)
HAVE_PY_SDK = importlib.util.find_spec("acp") is not None
MISSING = [
    *([] if HAVE_NODE else ["node or tests/interop/ts/node_modules"]),
    *([] if HAVE_PY_SDK else ["the Python SDK agent-client-protocol (`import acp`)"]),
]
if MISSING:
    pytest.fail(
        f"interop peers missing: {' and '.join(MISSING)}; run `nox -s tests`, which installs them",
        pytrace=False,
    )

OUR_AGENT = [sys.executable, "-m", "acpwire.fixtures.echo_agent"]
OUR_CLIENT = [sys.executable, "-m", "acpwire.fixtures.client"]
DEFAULT_LOOP = "trio"

pytestmark = pytest.mark.usefixtures("loop")
THEIR_CLIENTS = {
    "ts-v1": ["node", "ts/client_v1.mjs"],
    "ts-v2": ["node", "ts/client_v2.mjs"],
    "py-v1": [sys.executable, "py/client_v1.py"],
}
THEIR_AGENTS = {
    "ts-v1": ["node", "ts/agent_v1.mjs"],
    "ts-v2": ["node", "ts/agent_v2.mjs"],
    "py-v1": [sys.executable, "py/agent_v1.py"],
}


def tail(text: str) -> str:
    return "\n".join(text.splitlines()[-TAIL_LINES:]) or "(empty)"


def on_loop(command: list[str], loop: str) -> list[str]:
    """`command`, with our fixture agent or client in it running on `loop`."""
    for ours in (OUR_AGENT, OUR_CLIENT):
        if command[: len(ours)] == ours and loop != DEFAULT_LOOP:
            return [*ours, "--loop", loop, *command[len(ours) :]]
    return command


def run_pair(client: list[str], agent: list[str], loop: str) -> str:
    """Run `client -- agent` in tests/interop, our side on `loop`; return the client's stdout,
    fail if it fails."""
    command = [*on_loop(client, loop), "--", *on_loop(agent, loop)]
    proc = subprocess.Popen(
        command,
        cwd=INTEROP,
        env=ENV,
        text=True,
        start_new_session=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(timeout=TIMEOUT)
        problem = f"exited with {proc.returncode}" if proc.returncode else ""
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # the client's session: client and agent
        out, err = proc.communicate()
        problem = f"timed out after {TIMEOUT:.0f} s"
    if problem:
        pytest.fail(
            f"{' '.join(command)}\n{problem}\n"
            f"--- stdout (tail) ---\n{tail(out)}\n--- stderr (tail) ---\n{tail(err)}",
            pytrace=False,
        )
    return out


def last_line(out: str) -> str:
    lines = out.strip().splitlines()
    return lines[-1] if lines else ""


@pytest.mark.parametrize(
    ("client", "version"),
    [
        pytest.param("ts-v1", 1),
        pytest.param("ts-v2", 2),
        pytest.param("py-v1", 1),
    ],
)
def test_their_client_our_agent(loop: str, client: str, version: int) -> None:
    out = run_pair(THEIR_CLIENTS[client], OUR_AGENT, loop)
    summary: dict[str, Any] = json.loads(last_line(out))
    context = f"{client} client summary: {summary}"
    assert summary["ok"] and summary["errors"] == [], context
    assert summary["protocolVersion"] == version, context
    assert summary["prompt1StopReason"] == "end_turn", context
    assert summary["prompt2StopReason"] == "cancelled", context
    assert summary["permissionRequests"] >= 1, context
    assert summary["updates"].get("agent_message_chunk", 0) >= 3, context
    assert 3 <= summary["prompt2Chunks"] < 200, context
    if version == 2:
        states = ["running", "requires_action", "running", "idle"]
        assert summary["prompt1States"] == states, context
        assert summary["updates"].get("user_message", 0) >= 2, context
        assert isinstance(summary["prompt1MessageId"], str), context
        assert summary["prompt1MessageId"], context
        assert summary["sessionClosed"] is True, context


@pytest.mark.parametrize(
    ("protocol", "agent", "negotiated"),
    [
        pytest.param(2, "ts-v2", 2, id="v2-ts-v2"),
        pytest.param(1, "ts-v1", 1, id="v1-ts-v1"),
        pytest.param(1, "py-v1", 1, id="v1-py-v1"),
        pytest.param(2, "py-v1", 1, id="v2-fallback-py-v1"),
        pytest.param(2, "ts-v1", 1, id="v2-fallback-ts-v1"),
    ],
)
def test_our_client_their_agent(loop: str, protocol: int, agent: str, negotiated: int) -> None:
    out = run_pair([*OUR_CLIENT, "--protocol", str(protocol)], THEIR_AGENTS[agent], loop)
    context = f"acpwire client transcript (tail):\n{tail(out)}"
    result = ast.literal_eval(last_line(out))
    assert result == {"protocol": negotiated, "first": "end_turn", "second": "cancelled"}, context
    assert f"initialized: protocol version {negotiated}" in out, context
    assert "permission asked" in out and "-> session/cancel" in out, context
    if negotiated == 2:
        assert "state: requires_action" in out and "state: idle (end_turn)" in out, context


STREAM_CHUNKS = 2000


@pytest.mark.parametrize(
    ("client", "agent", "version"),
    [
        pytest.param(THEIR_CLIENTS["ts-v1"], OUR_AGENT, 1, id="ts-v1-client"),
        pytest.param(THEIR_CLIENTS["ts-v2"], OUR_AGENT, 2, id="ts-v2-client"),
        pytest.param(THEIR_CLIENTS["py-v1"], OUR_AGENT, 1, id="py-v1-client"),
        pytest.param(OUR_CLIENT, THEIR_AGENTS["ts-v2"], 2, id="ts-v2-agent"),
        pytest.param(OUR_CLIENT, THEIR_AGENTS["py-v1"], 1, id="py-v1-agent"),
    ],
)
def test_stream(loop: str, client: list[str], agent: list[str], version: int) -> None:
    """The benchmark's `stream N` turn: every chunk arrives and the turn ends normally."""
    out = run_pair([*client, "--stream", str(STREAM_CHUNKS)], agent, loop)
    last = last_line(out)
    if client is OUR_CLIENT:
        result = ast.literal_eval(last)
        assert (result["chunks"], result["stop"]) == (STREAM_CHUNKS, "end_turn"), result
        assert f"initialized: protocol version {version}" in out, tail(out)
    else:
        summary = json.loads(last)
        assert summary["ok"] and summary["chunks"] == STREAM_CHUNKS, summary
        assert summary["protocolVersion"] == version, summary
        assert summary["stopReason"] == "end_turn", summary
