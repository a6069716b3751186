"""The `acpwire` command run as a process (`python -m acpwire`), and the agents it runs."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import termios
from pathlib import Path

from helpers.processes import PYTHONPATH

ACPWIRE = [sys.executable, "-m", "acpwire"]
"""The command: `python -m acpwire` in this interpreter."""

ECHO_AGENT = [sys.executable, "-m", "acpwire.fixtures.echo_agent"]
HELLO_AGENT = [sys.executable, "-m", "acpwire.examples.hello_agent"]
TOOL_AGENT = [sys.executable, "-m", "acpwire.examples.tool_agent"]
ENV = {**os.environ, **PYTHONPATH}
"""The environment the command and its agents run in (acpwire importable)."""


def acpwire(
    *args: str,
    stdin: str = "",
    timeout: float = 60.0,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `acpwire ARGS` to its end, stdin given, stdout and stderr captured (`env`: added
    to `ENV`)."""
    return subprocess.run(
        [*ACPWIRE, *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**ENV, **(env or {})},
        cwd=cwd,
    )


def start(*args: str, stdin: int | None = subprocess.PIPE) -> subprocess.Popen[str]:
    """Start `acpwire ARGS` (stdin, stdout and stderr pipes, text)."""
    return subprocess.Popen(
        [*ACPWIRE, *args],
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def start_with_terminal(*args: str, terminal: int) -> subprocess.Popen[str]:
    """Start `acpwire ARGS` in a session of its own whose controlling terminal is the pty
    `terminal` (its `/dev/tty`); stdin, stdout and stderr stay pipes."""

    def take_terminal() -> None:
        fcntl.ioctl(terminal, termios.TIOCSCTTY, 0)

    return subprocess.Popen(
        [*ACPWIRE, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
        start_new_session=True,
        preexec_fn=take_terminal,
        pass_fds=(terminal,),
    )


def agent(code: str) -> list[str]:
    """An agent written as `python -c` code."""
    return [sys.executable, "-c", code]
