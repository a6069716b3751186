"""The fixtures' `--loop` option (issue 12): the echo agent and the fixture client run the same
code on trio or asyncio, talk to each other across loops over stdio, and refuse uvloop by name
when it is not installed (never a silent fallback to plain asyncio)."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Callable

import pytest

from acpwire.fixtures import client, echo_agent
from helpers.processes import PYTHONPATH

CLIENT = [sys.executable, "-m", "acpwire.fixtures.client"]
AGENT = [sys.executable, "-m", "acpwire.fixtures.echo_agent"]


@pytest.mark.parametrize("protocol", [2, 1])
@pytest.mark.parametrize(
    ("client_loop", "agent_loop"),
    [("asyncio", "asyncio"), ("trio", "asyncio"), ("asyncio", "trio")],
)
def test_the_fixture_client_and_echo_agent_run_a_whole_session_on_any_loop(
    client_loop: str, agent_loop: str, protocol: int
) -> None:
    command = [*CLIENT, "--loop", client_loop, "--protocol", str(protocol), "--"]
    out = subprocess.run(
        [*command, *AGENT, "--loop", agent_loop],
        env={**PYTHONPATH, "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert ast.literal_eval(lines[-1]) == {
        "protocol": protocol,
        "first": "end_turn",
        "second": "cancelled",
    }
    assert "session closed" in lines


@pytest.mark.parametrize(
    ("main", "argv"),
    [
        (client.main, ["--loop", "uvloop", "--", "an-agent"]),
        (echo_agent.main, ["--loop", "uvloop"]),
    ],
)
def test_loop_uvloop_without_uvloop_is_refused_naming_the_install(
    main: Callable[[list[str]], object],
    argv: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # find_spec and import now fail
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert "uvloop not installed (pip install uvloop)" in capsys.readouterr().err
