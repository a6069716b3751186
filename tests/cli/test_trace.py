"""`acpwire trace` as a process: bytes forwarded unchanged both ways, each line in the trace
with its time and side, secrets redacted in the trace only, stderr, exit codes, signals and
EOF passed through as a pipe would."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from acpwire import __version__
from helpers.commands import ACPWIRE, ECHO_AGENT, ENV, acpwire, agent, start

CAT = ["cat"]


def records(trace: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    header, *rest = (json.loads(line) for line in trace.read_bytes().splitlines())
    return header, rest


def tap(
    trace: Path, *command: str, stdin: bytes, extra: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [*ACPWIRE, "trace", "--out", str(trace), *extra, "--", *command],
        input=stdin,
        capture_output=True,
        timeout=60,
        env=ENV,
    )


def test_bytes_pass_unchanged_and_each_line_is_recorded(tmp_path: Path) -> None:
    trace = tmp_path / "cat.trace"
    sent = (
        b'{"jsonrpc":"2.0","id":1,"method":"x"}\n'
        b'  {"spaced" : [1, 2]}  \r\n'
        b"not json at all\n"
        b'{"bad utf-8":"\xff"}\n'
        b"\n"
        b'{"last":"no newline"}'
    )
    done = tap(trace, *CAT, stdin=sent)
    assert done.returncode == 0, done.stderr
    assert done.stdout == sent  # what the editor reads is what the agent wrote
    header, rest = records(trace)
    assert header["acpwire_trace"] == 1
    assert header["command"] == CAT
    assert header["redacted"] == ["env", "headers", "auth"]
    assert header["acpwire"] == __version__
    for side in ("client", "agent"):
        mine = [r for r in rest if r.get("from") == side]
        assert [r.get("line", r.get("text")) for r in mine[:-1]] == [
            {"jsonrpc": "2.0", "id": 1, "method": "x"},
            {"spaced": [1, 2]},
            "not json at all",
            '{"bad utf-8":"\ufffd"}',
            "",
            {"last": "no newline"},
        ]
        assert mine[1]["crlf"] is True
        assert mine[-2]["unterminated"] is True
        assert mine[-1] == {"t": mine[-1]["t"], "from": side, "eof": True}
        times = [r["t"] for r in mine]
        assert times == sorted(times) and times[0] >= 0
    assert rest[-1]["exit"] == {"code": 0}
    assert rest[-1]["cpu"] >= 0
    embedded = trace.read_bytes().splitlines()[1:3]  # JSON lines are embedded byte for byte
    assert embedded[0].endswith(b'"line":{"jsonrpc":"2.0","id":1,"method":"x"}}')
    assert embedded[1].endswith(b'"line":  {"spaced" : [1, 2]}  ,"crlf":true}')


def test_secrets_are_redacted_in_the_trace_only(tmp_path: Path) -> None:
    trace = tmp_path / "secret.trace"
    new_session = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "session/new",
        "params": {
            "cwd": "/repo",
            "mcpServers": [
                {
                    "name": "db",
                    "command": "db-mcp",
                    "args": [],
                    "env": [{"name": "DB_PASSWORD", "value": "hunter2"}],
                },
                {
                    "type": "http",
                    "name": "api",
                    "url": "https://x",
                    "headers": [{"name": "Authorization", "value": "Bearer abc"}],
                },
            ],
        },
    }
    login = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "authenticate",
        "params": {"methodId": "key", "_meta": {"apiKey": "k-123"}},
    }
    auth_methods = {
        "jsonrpc": "2.0",
        "id": 0,
        "result": {
            "authMethods": [{"type": "terminal", "id": "t", "name": "T", "env": {"TOKEN": "tok-9"}}]
        },
    }
    custom = {"jsonrpc": "2.0", "method": "x/note", "params": {"text": "my token is sk-live-42 ok"}}
    lines = [new_session, login, auth_methods, custom]
    sent = b"".join(json.dumps(m).encode() + b"\n" for m in lines) + b"stray sk-live-7\n"
    done = tap(trace, *CAT, stdin=sent, extra=("--redact", r"sk-live-\d+"))
    assert done.returncode == 0, done.stderr
    assert done.stdout == sent  # forwarded unchanged, secrets and all
    text = trace.read_text()
    for secret in ("hunter2", "Bearer abc", "k-123", "tok-9", "sk-live-42", "sk-live-7"):
        assert secret not in text
    header, rest = records(trace)
    assert header["patterns"] == [r"sk-live-\d+"]
    client = [r for r in rest if r.get("from") == "client"]
    servers = client[0]["line"]["params"]["mcpServers"]
    assert servers[0]["env"] == [{"name": "DB_PASSWORD", "value": "[redacted]"}]
    assert servers[1]["headers"] == [{"name": "Authorization", "value": "[redacted]"}]
    assert client[1]["line"]["params"] == {"methodId": "key", "_meta": "[redacted]"}
    assert client[2]["line"]["result"]["authMethods"][0]["env"] == {"TOKEN": "[redacted]"}
    assert client[3]["line"]["params"]["text"] == "my token is [redacted] ok"
    assert client[4]["text"] == "stray [redacted]"
    assert all(r.get("redacted") for r in client[:4])


def test_stderr_and_the_exit_code_pass_through(tmp_path: Path) -> None:
    trace = tmp_path / "exit.trace"
    code = "import sys; sys.stderr.write('agent says hi\\n'); sys.exit(7)"
    done = tap(trace, *agent(code), stdin=b"")
    assert done.returncode == 7
    assert done.stderr == b"agent says hi\n"
    assert records(trace)[1][-1]["exit"] == {"code": 7}


def test_the_signal_that_ended_the_agent_ends_the_tap(tmp_path: Path) -> None:
    trace = tmp_path / "signal.trace"
    done = tap(trace, *agent("import os, signal; os.kill(os.getpid(), signal.SIGTERM)"), stdin=b"")
    assert done.returncode == -signal.SIGTERM
    assert records(trace)[1][-1]["exit"] == {"signal": signal.SIGTERM}


SIGNAL_REPORTER = """
import signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: (print("got SIGTERM", flush=True), sys.exit(3)))
print("ready", flush=True)
time.sleep(30)
"""


def test_signals_to_the_tap_reach_the_agent(tmp_path: Path) -> None:
    trace = tmp_path / "pass.trace"
    process = subprocess.Popen(
        [*ACPWIRE, "trace", "--out", str(trace), "--", *agent(SIGNAL_REPORTER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b"ready\n"
    process.send_signal(signal.SIGTERM)
    stdout, _ = process.communicate(timeout=30)
    assert stdout == b"got SIGTERM\n"
    assert process.returncode == 3


def test_stdin_eof_reaches_the_agent_as_eof(tmp_path: Path) -> None:
    trace = tmp_path / "eof.trace"
    done = tap(trace, *agent("import sys; print(len(sys.stdin.read()))"), stdin=b"12345")
    assert done.returncode == 0
    assert done.stdout == b"5\n"


WRITER = """
import sys
for n in range(10**7):
    sys.stdout.write('{"n": %d}\\n' % n)
"""


def test_a_reader_that_goes_away_breaks_the_agents_pipe(tmp_path: Path) -> None:
    trace = tmp_path / "broken.trace"
    process = subprocess.Popen(
        [*ACPWIRE, "trace", "--out", str(trace), "--", *agent(WRITER)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdout is not None
    assert process.stdout.readline() == b'{"n": 0}\n'
    process.stdout.close()  # the editor is gone
    process.wait(timeout=30)
    assert process.returncode in (-signal.SIGPIPE, 1)  # the agent died of the broken pipe
    _, rest = records(trace)
    assert {"from": "agent", "eof": True, "broken": True}.items() <= next(
        r for r in rest if r.get("eof") and r["from"] == "agent"
    ).items()


BURST = """
import os
block = b"x" * 65535 + b"\\n"
for _ in range(3):  # what the pipes and the tap hold, then exit at once
    view = memoryview(block)
    while view:
        view = view[os.write(1, view):]
"""


def test_what_the_agent_wrote_before_exiting_all_reaches_a_slow_editor(tmp_path: Path) -> None:
    trace = tmp_path / "burst.trace"
    process = subprocess.Popen(
        [*ACPWIRE, "trace", "--out", str(trace), "--", *agent(BURST)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdout is not None
    time.sleep(2.5)  # the agent is long gone; the editor starts reading only now
    received = process.stdout.read()
    assert process.wait(timeout=30) == 0
    assert len(received) == 3 * 65536


def test_an_acp_session_through_the_tap(tmp_path: Path) -> None:
    trace = tmp_path / "session.trace"
    tapped = [*ACPWIRE, "trace", "--out", str(trace), "--", *ECHO_AGENT]
    done = acpwire("run", "--approve", "all", "Hello", "--", *tapped)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello \n"
    _, rest = records(trace)
    methods = [r["line"].get("method") for r in rest if "line" in r and r["from"] == "client"]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]


def test_an_agent_that_is_not_found_exits_127(tmp_path: Path) -> None:
    trace = tmp_path / "missing.trace"
    done = tap(trace, "no-such-agent-anywhere", stdin=b"")
    assert done.returncode == 127
    assert b"acpwire trace: agent command 'no-such-agent-anywhere': not found" in done.stderr
    assert records(trace)[1][-1]["exit"] == {"code": 127}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--", "cat"], "the following arguments are required: --out"),
        (["--out", "x.trace"], "the agent command is missing"),
        (
            ["--out", "/no/such/dir/x.trace", "--", "cat"],
            "--out /no/such/dir/x.trace: No such file",
        ),
        (
            ["--out", "x.trace", "--redact", "(", "--", "cat"],
            "--redact '(': not a regular expression",
        ),
    ],
)
def test_usage_errors(args: list[str], says: str, tmp_path: Path) -> None:
    done = acpwire("trace", *args, cwd=tmp_path)
    assert done.returncode == 2
    assert says in done.stderr


def test_help_is_complete() -> None:
    done = acpwire("trace", "--help")
    assert done.returncode == 0
    for words in (
        "--out FILE",
        "--redact PATTERN",
        "stderr is passed through",
        "SIGTERM",
        "127",
        "acpwire show",
    ):
        assert words in done.stdout


def test_a_slow_line_is_recorded_within_the_recorders_wait(tmp_path: Path) -> None:
    """The trace is written while the session runs, not only at its end."""
    trace = tmp_path / "live.trace"
    process = start("trace", "--out", str(trace), "--", *CAT)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write('{"id": 1}\n')
    process.stdin.flush()
    assert process.stdout.readline() == '{"id": 1}\n'
    deadline = time.monotonic() + 5
    while trace.read_text().count('"line":{"id": 1}') < 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert trace.read_text().count('"line":{"id": 1}') == 2
    process.stdin.close()
    assert process.wait(timeout=30) == 0
