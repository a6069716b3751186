"""`acpwire check` against the official SDKs' agents of the interop tests (tests/interop/README.md:
TypeScript `@agentclientprotocol/sdk` 2.4.0 v2 and v1, Python `agent-client-protocol` 0.12.1 v1):
the results the README's table shows, rule by rule. Fails (never skips) when node +
tests/interop/ts/node_modules or the Python SDK are missing: `nox -s tests` installs them."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys

import pytest

from helpers.commands import ACPWIRE, ENV
from helpers.paths import INTEROP

MISSING = [
    *(
        []
        if shutil.which("node") and (INTEROP / "ts/node_modules/@agentclientprotocol/sdk").is_dir()
        else ["node or tests/interop/ts/node_modules"]
    ),
    *([] if importlib.util.find_spec("acp") else ["the Python SDK (`import acp`)"]),
]
if MISSING:
    pytest.fail(f"missing: {' and '.join(MISSING)}; run `nox -s tests`", pytrace=False)

V1_NOT_APPLICABLE = {
    "turn.user-message",
    "turn.running",
    "turn.idle-stop-reason",
    "turn.requires-action",
    "turn.close-order",
    "input.close-unknown-session",
}
AGENTS = {
    # agent: (its command in tests/interop, protocol, the rules it fails)
    "ts-v2": (["node", "ts/agent_v2.mjs"], 2, {"caps.served-advertised"}),
    "ts-v1": (["node", "ts/agent_v1.mjs"], 1, set()),
    "py-v1": (
        [sys.executable, "py/agent_v1.py"],
        1,
        {"input.parse-error", "input.invalid-request"},
    ),
}


@pytest.mark.parametrize("agent", AGENTS)
def test_the_sdk_agents_results(agent: str) -> None:
    command, protocol, failing = AGENTS[agent]
    done = subprocess.run(
        [*ACPWIRE, "check", "--format", "json", "--", *command],
        cwd=INTEROP,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
    )
    document = json.loads(done.stdout)
    assert document["protocolVersion"] == protocol
    seen = {r["rule"]: r["status"] for r in document["results"]}
    assert {rule for rule, status in seen.items() if status == "fail"} == failing, document
    not_applicable = V1_NOT_APPLICABLE if protocol == 1 else set()
    assert {rule for rule, status in seen.items() if status == "n/a"} == not_applicable
    assert done.returncode == (7 if failing else 0)
