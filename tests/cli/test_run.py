"""`acpwire run` as a process: the turn shown as it streams (text and NDJSON), permission by
policy or asked on the terminal, Ctrl-C, --timeout, --url, and each exit code."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from acpwire import __version__
from acpwire.cli.codes import MEANING, ExitCode
from helpers.commands import (
    ACPWIRE,
    ECHO_AGENT,
    ENV,
    HELLO_AGENT,
    TOOL_AGENT,
    acpwire,
    agent,
    start,
    start_with_terminal,
)

SLOW = "slow " * 60  # the echo agent says each word 50 ms apart: 3 s


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def read_events_until(process: subprocess.Popen[str], wanted: str) -> list[dict[str, Any]]:
    """Events from a running `--format json` process, up to the first `wanted` one."""
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(json.loads(line))
        if seen[-1]["event"] == wanted or seen[-1].get("update", {}).get("sessionUpdate") == wanted:
            return seen
    raise AssertionError(f"no {wanted!r} event; stderr: {process.stderr and process.stderr.read()}")


@pytest.mark.parametrize("protocol", ["1", "2"])
def test_a_turn_in_text_the_answer_on_stdout_the_rest_on_stderr(protocol: str) -> None:
    done = acpwire(
        "run", "--protocol", protocol, "--approve", "all", "Hello there", "--", *ECHO_AGENT
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello there \n"
    assert done.stderr.splitlines() == [
        f"[acpwire-echo {__version__}, protocol v{protocol}]",
        "[session sess_1 (new)]",
        "[tool Echo the prompt: pending]",
        "[permission 'Echo the prompt': allow (--approve all)]",
        "[tool Echo the prompt: in_progress]",
        "[tool Echo the prompt: completed]",
        "[end_turn]",
    ]


def test_with_stderr_on_stdout_a_bracketed_line_starts_a_line_of_its_own() -> None:
    done = subprocess.run(
        [*ACPWIRE, "run", "--approve", "all", "Hello there", "--", *ECHO_AGENT],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,  # `2>&1`
        text=True,
        env=ENV,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout
    assert done.stdout.splitlines()[-3:] == [
        "Hello there ",
        "[tool Echo the prompt: completed]",
        "[end_turn]",
    ]


def test_json_events_in_wire_order_with_the_policy_decision_at_its_place() -> None:
    done = acpwire("run", "--format", "json", "--approve", "none", "Hi", "--", *ECHO_AGENT)
    assert done.returncode == 0, done.stderr
    seen = events(done.stdout)
    kinds = [e["event"] if e["event"] != "update" else e["update"]["sessionUpdate"] for e in seen]
    assert kinds == [
        "initialized",
        "session",
        "turn_started",
        "user_message",
        "state_update",
        "tool_call_update",
        "state_update",  # requires_action: the permission request comes next on the wire
        "permission",
        "state_update",
        "tool_call_update",
        "state_update",
        "turn_ended",
    ]
    assert seen[0] == {
        "event": "initialized",
        "protocolVersion": 2,
        "agent": f"acpwire-echo {__version__}",
    }
    assert seen[6]["update"]["state"] == "requires_action"
    assert seen[7] == {
        "event": "permission",
        "title": "Echo the prompt",
        "decision": "reject",
        "by": "--approve none",
    }
    assert seen[9]["update"]["status"] == "failed"
    assert seen[-1] == {"event": "turn_ended", "turn": 1, "stopReason": "end_turn", "exitCode": 0}


def test_stdin_lines_are_one_turn_each_in_one_session() -> None:
    done = acpwire("run", "--approve", "all", "--", *ECHO_AGENT, stdin="one two\n\nthree\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "one two \nthree \n"
    assert done.stderr.count("[session ") == 1
    assert done.stderr.count("[end_turn]") == 2


@pytest.mark.parametrize("agent_command", [HELLO_AGENT, TOOL_AGENT], ids=["hello", "tool"])
def test_the_examples_agents(agent_command: list[str]) -> None:
    done = acpwire("run", "--approve", "all", "Hi", "--", *agent_command)
    assert done.returncode == 0, done.stderr
    assert done.stdout in ("Hello from acpwire! \n", "I will add your prompt to notes.txt.\n")


def test_asking_without_a_terminal_rejects_and_says_so() -> None:
    done = acpwire("run", "Hi", "--", *HELLO_AGENT)  # --approve ask by default
    assert done.returncode == ExitCode.REFUSAL == 3, done.stderr
    assert "[permission 'Say hello?': reject (--approve ask, no terminal to ask on)]" in done.stderr
    assert "[refusal]" in done.stderr


def test_asking_on_the_terminal_not_on_stdin() -> None:
    """The question goes to /dev/tty and is answered there; stdout has only the answer."""
    leader, follower = os.openpty()
    try:
        process = start_with_terminal("run", "Hi", "--", *HELLO_AGENT, terminal=follower)
        os.close(follower)
        question = b""
        while b"(anything else: cancel): " not in question:
            question += os.read(leader, 1024)
        assert b"[permission] Say hello?" in question
        assert b"1) Yes (allow_once)" in question and b"2) No (reject_once)" in question
        os.write(leader, b"1\n")
        stdout, stderr = process.communicate(timeout=30)
    finally:
        os.close(leader)
    assert process.returncode == 0, stderr
    assert stdout == "Hello from acpwire! \n"
    assert "[permission 'Say hello?': yes (asked)]" in stderr


def test_ctrl_c_cancels_the_turn_then_the_exit_code_says_cancelled() -> None:
    process = start("run", "--format", "json", "--approve", "all", SLOW, "--", *ECHO_AGENT)
    read_events_until(process, "agent_message_chunk")
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=30)
    assert process.returncode == ExitCode.CANCELLED == 4, stderr
    rest = events(stdout)
    assert rest[0] == {"event": "note", "message": "cancelling the turn (Ctrl-C again to quit)"}
    assert rest[-1] == {"event": "turn_ended", "turn": 1, "stopReason": "cancelled", "exitCode": 4}


def test_a_second_ctrl_c_quits() -> None:
    process = start("run", "--format", "json", "--approve", "all", "--", *ECHO_AGENT)
    assert process.stdin is not None
    process.stdin.write(SLOW + "\n")
    process.stdin.flush()
    read_events_until(process, "agent_message_chunk")
    process.send_signal(signal.SIGINT)
    read_events_until(process, "note")
    process.send_signal(signal.SIGINT)  # while cancelling, or waiting for the next prompt
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == ExitCode.INTERRUPTED == 130, stderr


def test_a_turn_over_the_timeout_is_cancelled_and_exits_9() -> None:
    slower = "slow " * 300  # 15 s; the timeout bounds starting the agent too
    done = acpwire("run", "--approve", "all", "--timeout", "5", slower, "--", *ECHO_AGENT)
    assert done.returncode == ExitCode.TIMEOUT == 9, done.stderr
    assert "[the turn took longer than 5 s: cancelling it]" in done.stderr
    assert "[cancelled]" in done.stderr
    assert "acpwire run: timeout: turn 1 did not end within 5 s" in done.stderr


MAX_TOKENS_AGENT = """
import trio
from acpwire import serve_turns

async def work(turn):
    await turn.say("partial")
    return "max_tokens"

trio.run(lambda: serve_turns(work, name="short", version="1"))
"""

FAILING_SESSION_AGENT = """
import trio
from acp_schema import v2
from acpwire import RpcError, serve_agent

class Agent(v2.AgentBase):
    def __init__(self, client):
        pass

    async def initialize(self, params):
        info = v2.Implementation(name="failing", version="1")
        return v2.InitializeResponse(protocol_version=2, info=info)

    async def session_new(self, params):
        raise RpcError.internal_error("no sessions today")

trio.run(serve_agent, Agent)
"""

EXITING_AGENT = """
import os
import trio
from acpwire import serve_turns

async def work(turn):
    os._exit(3)

trio.run(lambda: serve_turns(work, name="exiting", version="1"))
"""

VERSION_99_AGENT = """
import json, sys
request = json.loads(sys.stdin.readline())
print(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"protocolVersion": 99}}), flush=True)
sys.stdin.read()
"""


@pytest.mark.parametrize(
    ("agent_code", "code", "says"),
    [
        (MAX_TOKENS_AGENT, ExitCode.OTHER_STOP_REASON, "[max_tokens]"),
        (
            FAILING_SESSION_AGENT,
            ExitCode.AGENT_ERROR,
            "agent error: session/new: Internal error: no sessions today",
        ),
        (EXITING_AGENT, ExitCode.AGENT_ERROR, "agent error: "),
        (VERSION_99_AGENT, ExitCode.PROTOCOL_ERROR, "protocol error: agent `"),
    ],
    ids=["max_tokens", "agent-error", "agent-exits", "protocol-version"],
)
def test_exit_codes(agent_code: str, code: ExitCode, says: str) -> None:
    done = acpwire("run", "--approve", "all", "Hi", "--", *agent(agent_code))
    assert done.returncode == code, done.stderr
    assert says in done.stderr


def test_an_agent_that_cannot_be_found_exits_8() -> None:
    done = acpwire("run", "Hi", "--", "no-such-agent-anywhere")
    assert done.returncode == ExitCode.AGENT_NOT_FOUND == 8
    assert (
        "agent not found: agent command 'no-such-agent-anywhere': not found on PATH" in done.stderr
    )


def test_an_agent_that_cannot_be_reached_exits_8() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    done = acpwire("run", "--url", f"ws://127.0.0.1:{port}/acp", "Hi")
    assert done.returncode == ExitCode.AGENT_NOT_FOUND, done.stderr
    assert f"agent not reachable: the agent at ws://127.0.0.1:{port}/acp" in done.stderr


@pytest.mark.parametrize("transport", ["websocket", "http"])
def test_a_remote_agent(transport: str) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = [sys.executable, "-m", "acpwire.examples.hello_remote", "--bind", f"127.0.0.1:{port}"]
    with subprocess.Popen(server, env=ENV, stderr=subprocess.PIPE, text=True) as serving:
        try:
            assert serving.stderr is not None
            assert "Running on" in serving.stderr.readline()
            url = f"http://127.0.0.1:{port}/acp"
            done = acpwire("run", "--url", url, "--transport", transport, "--approve", "all", "Hi")
        finally:
            serving.terminate()
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from acpwire! \n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["Hi"], "the agent command is missing"),
        (["--url", "ws://x/acp", "Hi", "--", "agent"], "either --url URL or `-- <agent command>`"),
        (["--timeout", "0", "Hi", "--", "agent"], "--timeout must be a positive number"),
        (["--cwd", "/no/such/dir", "Hi", "--", "agent"], "--cwd /no/such/dir: not a directory"),
        (["--approve", "some", "Hi", "--", "agent"], "invalid choice: 'some'"),
    ],
)
def test_usage_errors_exit_2_naming_the_fix(args: list[str], says: str) -> None:
    done = acpwire("run", *args)
    assert done.returncode == ExitCode.USAGE == 2
    assert says in done.stderr


CWD_AGENT = """
import os, runpy, sys
print("agent cwd: " + os.getcwd(), file=sys.stderr, flush=True)
runpy.run_module("acpwire.fixtures.echo_agent", run_name="__main__")
"""


def test_the_agent_runs_in_cwd(tmp_path: Path) -> None:
    done = acpwire("run", "--approve", "all", "--cwd", str(tmp_path), "Hi", "--", *agent(CWD_AGENT))
    assert done.returncode == 0, done.stderr
    assert f"agent cwd: {tmp_path}" in done.stderr


def test_help_names_every_option_and_exit_code() -> None:
    done = acpwire("run", "--help")
    assert done.returncode == 0
    for option in (
        "--protocol",
        "--format",
        "--approve",
        "--cwd",
        "--timeout",
        "--url",
        "--transport",
    ):
        assert option in done.stdout
    for code, meaning in MEANING.items():
        assert f"{int(code):>3}  {meaning}" in done.stdout
    assert "Ctrl-C cancels the running turn" in done.stdout


def test_a_reader_that_goes_away_ends_the_run_with_141() -> None:
    process = start("run", "--format", "json", "--approve", "all", SLOW, "--", *ECHO_AGENT)
    assert process.stdout is not None
    read_events_until(process, "agent_message_chunk")
    process.stdout.close()  # `acpwire run ... | head -3`
    assert process.wait(timeout=30) == ExitCode.OUTPUT_CLOSED == 141
