"""The fixture pair over the network (what `nox -s bench`'s remote pairs run): the echo agent
with `--serve HOST:PORT` prints its URL and serves; the fixture client with `--url` runs its
whole session against it, over each profile, the two processes on different loops."""

from __future__ import annotations

import ast
import json
import subprocess
import sys

import pytest

from helpers.processes import PYTHONPATH

CLIENT = [sys.executable, "-m", "acpwire.fixtures.client"]
AGENT = [sys.executable, "-m", "acpwire.fixtures.echo_agent"]
ENV = {**PYTHONPATH, "PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize(
    ("transport", "http1"), [("websocket", False), ("http", False), ("http", True)]
)
@pytest.mark.parametrize("protocol", [2, 1])
def test_the_fixture_client_runs_its_session_against_the_served_echo_agent(
    protocol: int, transport: str, http1: bool
) -> None:
    serve = [*AGENT, "--loop", "asyncio", "--serve", "127.0.0.1:0"]
    with subprocess.Popen(serve, env=ENV, stdout=subprocess.PIPE, text=True) as agent:
        try:
            assert agent.stdout is not None
            url = json.loads(agent.stdout.readline())["url"]
            options = ["--url", url, "--transport", transport, *(["--http1"] if http1 else [])]
            out = subprocess.run(
                [*CLIENT, "--loop", "trio", "--protocol", str(protocol), *options],
                env=ENV,
                capture_output=True,
                text=True,
                timeout=30,
            )
        finally:
            agent.terminate()
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    result = {"protocol": protocol, "first": "end_turn", "second": "cancelled"}
    assert ast.literal_eval(lines[-1]) == result
    assert "session closed" in lines
