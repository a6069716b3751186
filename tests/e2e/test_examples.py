"""The README's code runs as written: its example agent and client are the files in
`acpwire/examples` verbatim, they talk over stdio and print what the README shows, and its
other Python blocks run."""

from __future__ import annotations

import ast
import os
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.paths import ROOT
from helpers.processes import PYTHONPATH

README = (ROOT / "README.md").read_text()
EXAMPLES = tuple(
    f"runtime/acpwire/examples/{name}.py"
    for name in (
        *("hello_agent", "hello_client", "tool_agent", "render_turn", "asyncio_service"),
        *("hello_v1_agent", "hello_v1_client"),
    )
)
SESSION_EXAMPLES = EXAMPLES[2:4]

# A block shown as a file is preceded by an HTML comment naming it.
FILE_BLOCK = re.compile(r"<!-- (\S+) -->\n```python\n(.*?)```\n", re.S)
PYTHON_BLOCK = re.compile(r"```python\n(.*?)```\n", re.S)
CONSOLE_BLOCK = re.compile(r"```console\n\$ (.*?)\n(.*?)```\n", re.S)


def test_the_readme_shows_the_example_files_verbatim() -> None:
    shown = dict(FILE_BLOCK.findall(README))
    assert set(shown) == set(EXAMPLES)
    for path, code in shown.items():
        assert code == (ROOT / path).read_text(), f"README.md and {path} differ"


def code_lines(path: str) -> int:
    """Lines of code as the README counts them: imports included; blank lines, comments and
    the module docstring not."""
    source = (ROOT / path).read_text()
    first = ast.parse(source).body[0]
    is_docstring = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
    skipped = range(first.lineno, (first.end_lineno or 0) + 1) if is_docstring else range(0)
    return sum(
        1
        for number, line in enumerate(source.splitlines(), 1)
        if line.strip() and not line.lstrip().startswith("#") and number not in skipped
    )


# "<!-- path -->" then the block, then the sentence stating its size.
COUNTED = re.compile(
    r"<!-- (\S+) -->\n```python\n(?:(?!```).)*```\n\n[^\n]*?(\d+) lines of code", re.S
)


@pytest.mark.parametrize("path", SESSION_EXAMPLES)
def test_the_session_examples_are_under_30_lines_as_the_readme_says(path: str) -> None:
    stated = dict(COUNTED.findall(README))
    assert int(stated[path]) == code_lines(path) < 30


def test_the_readme_python_blocks_that_are_no_file_run(capsys: pytest.CaptureFixture[str]) -> None:
    files = {code for _, code in FILE_BLOCK.findall(README)}
    snippets = [code for code in PYTHON_BLOCK.findall(README) if code not in files]
    assert snippets, "the README's bindings example"
    for code in snippets:
        exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "agent: hi" in out  # the bindings alone
    assert "asyncio agent: Hello \nasyncio agent: from \nasyncio agent: acpwire! \n" in out


def _run(command: str, cwd: Path) -> str:
    """A README command line (`echo <text> | ` in front: its stdin), run from `cwd` with this
    tree on PYTHONPATH."""
    stdin = ""
    if command.startswith("echo "):
        echoed, command = command.removeprefix("echo ").split(" | ", 1)
        stdin = echoed + "\n"
    argv = [sys.executable if word == "python" else word for word in shlex.split(command)]
    env = {**os.environ, **PYTHONPATH}
    done = subprocess.run(
        argv, input=stdin, cwd=cwd, env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_example_commands_print_what_the_readme_shows(tmp_path: Path) -> None:
    shown = [  # the `acpwire` command's sessions: tests/cli/test_readme_sessions.py
        (command, output)
        for command, output in CONSOLE_BLOCK.findall(README)
        if not command.startswith("acpwire ")
    ]
    assert [command.split(" -- ")[0] for command, _ in shown] == [
        "python -m acpwire.examples.hello_client",
        'echo yes | python -m acpwire.examples.render_turn "Hi"',  # with the v1 agent
        "python -m acpwire.examples.hello_v1_client",
        'echo allow | python -m acpwire.examples.render_turn "remember the milk"',
    ]
    for command, output in shown:
        assert _run(command, tmp_path) == output, command


@pytest.mark.parametrize("module", ["hello_client", "hello_v1_client", "asyncio_service"])
def test_an_example_asked_for_help_prints_its_usage(module: str, tmp_path: Path) -> None:
    """Not `--help` taken for the agent command (it used to fail with AgentNotFound)."""
    output = _run(f"python -m acpwire.examples.{module} --help", tmp_path)
    assert f"python -m acpwire.examples.{module} " in output


def test_the_example_client_runs_a_turn_with_any_v2_agent(tmp_path: Path) -> None:
    command = "python -m acpwire.examples.hello_client -- python -m acpwire.fixtures.echo_agent"
    output = _run(command, tmp_path)
    assert "permission: Echo the prompt back? -> Allow" in output
    assert "turn ended: end_turn" in output


def test_the_examples_pass_mypy_strict_as_a_user_writes_them(tmp_path: Path) -> None:
    """Checked as standalone files (the way a user copies them), not as package modules."""
    for path in EXAMPLES:
        (tmp_path / Path(path).name).write_text((ROOT / path).read_text())
    mypy = [sys.executable, "-m", "mypy", "--strict", "--no-incremental", str(tmp_path)]
    env = {**os.environ, "MYPYPATH": PYTHONPATH["PYTHONPATH"]}
    done = subprocess.run(mypy, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout


ASYNCIO_AGENT = (
    "import asyncio; from acpwire import serve_agent; "
    "from acpwire.examples.hello_agent import HelloAgent; asyncio.run(serve_agent(HelloAgent))"
)


def test_the_asyncio_service_serves_prompts_over_tcp_from_its_running_loop() -> None:
    """The README's embedded example, against the README's agent served on asyncio: two
    prompts on one TCP connection, each reply streamed back, on the service's own loop."""
    agent = [sys.executable, "-c", ASYNCIO_AGENT]
    command = [sys.executable, "-m", "acpwire.examples.asyncio_service", "0", "--", *agent]
    env = {**os.environ, **PYTHONPATH}
    with subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True) as service:
        try:
            assert service.stdout is not None
            banner = service.stdout.readline()  # "serving session-1 on port N"
            port = int(banner.rsplit(" ", 1)[1])
            with socket.create_connection(("127.0.0.1", port), timeout=30) as tcp:
                tcp.sendall(b"hello\nagain\n")
                tcp.shutdown(socket.SHUT_WR)
                received = b""
                while chunk := tcp.recv(4096):
                    received += chunk
        finally:
            service.terminate()
    assert banner.startswith("serving session-1 on port ")
    assert received.decode() == "Hello from acpwire! \n[end_turn]\n" * 2
