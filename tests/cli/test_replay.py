"""`acpwire replay` as a process: a trace recorded with `acpwire trace` between the hello
client and the hello agent, played back as the client against the same agent (no divergence)
and against changed ones (each divergence with its trace line), and as the agent for the
hello client (serving stdio) and for a client it starts."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from acpwire.cli.codes import ExitCode
from helpers.commands import ACPWIRE, ENV, HELLO_AGENT, TOOL_AGENT, acpwire, start
from helpers.traces import record_hello_trace

HERE = Path(__file__).parent
HELLO_CLIENT = [sys.executable, "-m", "acpwire.examples.hello_client"]
SHAPE_CHANGED = [sys.executable, str(HERE / "different_agent.py"), "shape"]
TEXT_CHANGED = [sys.executable, str(HERE / "different_agent.py"), "text"]
STDIO_CLIENT = [sys.executable, str(HERE / "stdio_client.py")]
HELLO_V1_AGENT = [sys.executable, "-m", "acpwire.examples.hello_v1_agent"]


@pytest.fixture(scope="module")
def hello_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return record_hello_trace(tmp_path_factory.mktemp("replay") / "hello.trace")


def trace_line(trace: Path, number: int) -> dict[str, object]:
    line: dict[str, object] = json.loads(trace.read_text().splitlines()[number - 1])["line"]
    return line


def test_as_client_against_the_recorded_agent_no_divergence(hello_trace: Path) -> None:
    done = acpwire("replay", str(hello_trace), "--as", "client", "--", *HELLO_AGENT)
    assert done.returncode == ExitCode.END_TURN == 0, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        f"acpwire replay: hello.trace as the client, against {' '.join(HELLO_AGENT)}",
        "6 recorded messages sent, 14 of the agent's matched",
        "no divergence",
    ]


def test_strict_sees_values_the_shape_allows(hello_trace: Path) -> None:
    by_shape = acpwire("replay", str(hello_trace), "--as", "client", "--", *TEXT_CHANGED)
    assert by_shape.returncode == 0, by_shape.stdout + by_shape.stderr
    strict = acpwire("replay", str(hello_trace), "--as", "client", "--strict", "--", *TEXT_CHANGED)
    assert strict.returncode == ExitCode.DIVERGED == 10, strict.stdout + strict.stderr
    assert trace_line(hello_trace, 14)["params"]["update"]["content"]["text"] == "Hello "  # type: ignore[index]
    assert (
        "  line 14 (agent session/update agent_message_chunk): different: "
        "$.params.update.content.text: 'Hello ' recorded, 'Good ' live"
    ) in strict.stdout.splitlines()
    same = acpwire("replay", str(hello_trace), "--as", "client", "--strict", "--", *HELLO_AGENT)
    assert same.returncode == 0, same.stdout  # the hello agent says the same each time


def test_as_client_against_a_different_agent_reports_each_divergence(hello_trace: Path) -> None:
    done = acpwire(
        "replay", str(hello_trace), "--as", "client", "--timeout", "1", "--", *SHAPE_CHANGED
    )
    assert done.returncode == ExitCode.DIVERGED, done.stdout + done.stderr
    assert trace_line(hello_trace, 5)["result"] == {"sessionId": "session-1"}
    assert trace_line(hello_trace, 11)["method"] == "session/request_permission"
    assert done.stdout.splitlines()[2:] == [
        "  line 5 (agent session/new response): different: $.result.availableCommands: live, not recorded",
        "  line 10 (agent session/update state_update): missing: not received within 1 s",
        "  line 11 (agent session/request_permission): missing: not received within 1 s",
        "  line 13 (agent session/update state_update): missing: not received within 1 s",
        "4 divergences",
    ]


def test_as_agent_for_the_hello_client_serving_stdio(hello_trace: Path) -> None:
    replay = [*ACPWIRE, "replay", str(hello_trace), "--as", "agent"]
    done = subprocess.run(
        [*HELLO_CLIENT, "--", *replay], capture_output=True, text=True, timeout=60, env=ENV
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "state: running",
        "state: requires_action",
        "permission: Say hello? -> Yes",
        "state: running",
        "agent: Hello ",
        "agent: from ",
        "agent: acpwire! ",
        "turn ended: end_turn",
        "session/prompt failed: -32002 Resource not found: no-such-session",
    ]
    assert done.stderr.splitlines()[-2:] == [  # the replay's report, on its stderr
        "14 recorded messages sent, 6 of the client's matched",
        "no divergence",
    ]


def test_as_agent_starting_the_client(hello_trace: Path) -> None:
    done = acpwire("replay", str(hello_trace), "--as", "agent", "--", *STDIO_CLIENT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "no divergence"
    assert "turn ended: end_turn" in done.stderr  # the client's stderr, passed through


def test_as_agent_a_client_leaving_a_request_out(hello_trace: Path) -> None:
    done = acpwire(
        "replay",
        str(hello_trace),
        "--as",
        "agent",
        "--timeout",
        "2",
        "--",
        *STDIO_CLIENT,
        "--no-close",
    )
    assert done.returncode == ExitCode.DIVERGED, done.stdout + done.stderr
    assert done.stdout.splitlines()[-2:] == [
        "  line 20 (client session/close): missing: the peer closed the connection first",
        "1 divergence",
    ]


def test_a_request_that_matches_nothing_is_answered_and_reported(
    hello_trace: Path, tmp_path: Path
) -> None:
    """The client asks what the recording never answered: an error for it, a divergence."""
    asks = '{"jsonrpc":"2.0","id":"x","method":"session/list","params":{}}\n'
    process = subprocess.run(
        [*ACPWIRE, "replay", str(hello_trace), "--as", "agent", "--timeout", "1"],
        input=asks,
        capture_output=True,
        text=True,
        timeout=60,
        env=ENV,
    )
    assert process.returncode == ExitCode.DIVERGED
    answer = json.loads(process.stdout.splitlines()[0])
    assert answer["id"] == "x" and answer["error"]["code"] == -32603
    assert "no session/list request of this shape" in answer["error"]["message"]
    assert (
        "  before any recorded line (client session/list): unexpected: nothing recorded "
        'matches it: {"jsonrpc":"2.0","id":"x","method":"session/list","params":{}}'
    ) in process.stderr.splitlines()
    assert "  line 2 (client initialize): missing: the peer closed the connection first" in (
        process.stderr.splitlines()
    )


def test_usage_errors(hello_trace: Path, tmp_path: Path) -> None:
    not_a_trace = tmp_path / "notes.txt"
    not_a_trace.write_text("hello\n")
    for args, says in (
        (["replay", str(hello_trace), "--as", "client"], "--as client needs the agent command"),
        (["replay", str(not_a_trace), "--as", "agent"], "not an acpwire trace"),
        (["replay", str(tmp_path / "none"), "--as", "agent"], "No such file or directory"),
        (["replay", str(hello_trace)], "the following arguments are required: --as"),
        (["replay", str(hello_trace), "--as", "agent", "--timeout", "0"], "--timeout must be"),
    ):
        done = acpwire(*args)
        assert done.returncode == ExitCode.USAGE, args
        assert says in done.stderr, (args, done.stderr)
    missing = acpwire("replay", str(hello_trace), "--as", "client", "--", "no-such-agent-x")
    assert missing.returncode == ExitCode.AGENT_NOT_FOUND, missing.stderr
    assert "the agent could not be started" in missing.stderr


def test_help_is_complete() -> None:
    done = acpwire("replay", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for option in (
        "--as {client,agent}",
        "--strict",
        "--timeout S",
        "--format {text,json}",
        "FILE",
    ):
        assert option in text
    for says in (
        "missing",
        "unexpected",
        "different",
        "-32603",
        "sessionUpdate",
        "stopReason",
        "_meta",
        "[redacted]",
        "late",
        f"{int(ExitCode.DIVERGED)} the peer diverged from the recording",
        f"{int(ExitCode.AGENT_NOT_FOUND)} the peer command could not be started",
        "acpwire replay hello.trace --as client -- python -m acpwire.examples.hello_agent",
    ):
        assert says in text, says
    assert "replay" in acpwire("--help").stdout
    assert f"{int(ExitCode.DIVERGED):>3}  " not in acpwire("run", "--help").stdout  # run's own


def test_session_ids_the_agent_chose_are_replaced_by_the_live_ones(tmp_path: Path) -> None:
    """The tool agent names its sessions at random: the recorded prompt's session id is
    replaced by the one the live agent gave, or the prompt would fail (-32002)."""
    trace = tmp_path / "tool.trace"
    tap = ["trace", "--out", str(trace), "--", *TOOL_AGENT]
    recorded = acpwire("run", "--approve", "all", "Hi", "--", *ACPWIRE, *tap, cwd=tmp_path)
    assert recorded.returncode == 0, recorded.stderr
    session = trace_line(trace, 5)["result"]["sessionId"]  # type: ignore[index]
    assert str(session).startswith("sess_")
    for strict in ([], ["--strict"]):
        done = acpwire(
            "replay", str(trace), "--as", "client", *strict, "--", *TOOL_AGENT, cwd=tmp_path
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert done.stdout.splitlines()[-1] == "no divergence"
        assert session not in done.stdout


def test_the_report_as_json(hello_trace: Path) -> None:
    done = acpwire(
        "replay", str(hello_trace), "--as", "client", "--format", "json", "--", *TEXT_CHANGED
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "trace": str(hello_trace),
        "plays": "client",
        "against": TEXT_CHANGED,
        "sent": 6,
        "matched": 14,
        "divergences": [],
    }
    strict = acpwire(
        "replay", str(hello_trace), "--as", "client", "--strict", "--format", "json",
        "--", *TEXT_CHANGED,
    )  # fmt: skip
    assert strict.returncode == ExitCode.DIVERGED
    assert json.loads(strict.stdout)["divergences"][0] == {
        "kind": "different",
        "line": 14,
        "what": "agent session/update agent_message_chunk",
        "detail": "$.params.update.content.text: 'Hello ' recorded, 'Good ' live",
        "times": 1,
    }


def test_a_v1_session(tmp_path: Path) -> None:
    trace = tmp_path / "v1.trace"
    tap = ["trace", "--out", str(trace), "--", *HELLO_V1_AGENT]
    recorded = acpwire("run", "--protocol", "1", "--approve", "all", "Hi", "--", *ACPWIRE, *tap)
    assert recorded.returncode == 0, recorded.stderr
    assert trace_line(trace, 2)["params"]["protocolVersion"] == 1  # type: ignore[index]
    done = acpwire("replay", str(trace), "--as", "client", "--", *HELLO_V1_AGENT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.splitlines()[-1] == "no divergence"
    again = acpwire("run", "--protocol", "1", "--approve", "all", "Hi", "--", *ACPWIRE,
                    "replay", str(trace), "--as", "agent")  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert again.stderr.splitlines()[-1] == "no divergence"


def test_ctrl_c_reports_the_divergences_so_far(hello_trace: Path) -> None:
    process = start("replay", str(hello_trace), "--as", "agent")
    assert process.stdin is not None
    process.stdin.write('{"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}\n')
    process.stdin.flush()
    assert process.stdout is not None
    assert json.loads(process.stdout.readline())["error"]["code"] == -32603
    process.send_signal(signal.SIGINT)  # stdin stays open: only Ctrl-C ends it
    assert process.wait(timeout=30) == ExitCode.INTERRUPTED == 130
    assert process.stderr is not None
    stderr = process.stderr.read()
    process.stdin.close()
    assert stderr.splitlines()[-5:] == [
        "acpwire replay: interrupted; the divergences so far:",
        "acpwire replay: hello.trace as the agent, against stdio",
        "0 recorded messages sent, 0 of the client's matched",
        "  before any recorded line (client session/list): unexpected: nothing recorded "
        'matches it: {"jsonrpc":"2.0","id":1,"method":"session/list","params":{}}',
        "1 divergence",
    ]
