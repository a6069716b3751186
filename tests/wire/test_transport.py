"""Transports: agents launched through wrappers (shutdown reaches the whole process group and
every drain is bounded), the agent side's stdout guard, and errors for commands that can't
be started. Real subprocesses; POSIX (process groups), Linux for the /proc checks."""

from __future__ import annotations

import os
import signal
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from acpwire import errors
from acpwire.client import open_agent
from acpwire.streams import AgentProcess, agent_process, spawn_agent
from helpers.clients import ClientV2
from helpers.constants import RAW_INIT_V2
from helpers.loops import until
from helpers.processes import PYTHONPATH, loop_script, python
from helpers.raw import RawPeer, request

GRACE = 0.2  # both grace periods in these tests
LEAVE_BOUND = (
    2 * GRACE + agent_process.KILL_WAIT + agent_process.EXIT_EOF_GRACE
)  # the documented one

pytestmark = pytest.mark.usefixtures("loop")


def process_state(pid: int) -> str | None:
    """The process's state letter from /proc (Z: a zombie), None once it is gone."""
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return None
    return stat_line.rpartition(b")")[2].split()[0].decode()


def running(pid: int) -> bool:
    return process_state(pid) not in (None, "Z")


def running_in_group(group: int) -> list[int]:
    """The pids of the group's processes that still run (zombies have exited)."""
    pids = [int(entry.name) for entry in os.scandir("/proc") if entry.name.isdigit()]
    found = []
    for pid in pids:
        try:
            if os.getpgid(pid) == group and running(pid):
                found.append(pid)
        except ProcessLookupError:
            pass
    return found


def kill_if_running(pid: int) -> None:
    """Test clean-up: what the code under test should have ended."""
    if pid and running(pid):
        os.kill(pid, signal.SIGKILL)


async def first_line_number(agent: AgentProcess) -> int:
    """The number the agent (or a process it started) writes as its first stdout line."""
    with anyio.fail_after(5):
        return int(await RawPeer(agent.stream).receive_line())


def own_group(agent: AgentProcess) -> int:
    group = os.getpgid(agent.process.pid)
    assert group == agent.process.pid != os.getpgrp(), "the agent is not in a group of its own"
    return group


# --------------------------------------------------------------------------- process trees

# Ignores SIGTERM and stdin EOF, holding the stdout and stderr it inherited open; its pid on
# stdout says it is ready. The shell script that starts it dies on SIGTERM (as npm shims do).
STUBBORN_CHILD = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print(os.getpid(), flush=True)
sys.stdin.read()
print("child: stdin closed", file=sys.stderr, flush=True)
time.sleep(60)
"""


def wrapper_script(tmp_path: Path) -> Path:
    child = tmp_path / "child.py"
    child.write_text(STUBBORN_CHILD)
    wrapper = tmp_path / "agent-wrapper"
    wrapper.write_text(
        f'#!/bin/sh\n"{sys.executable}" "{child}"\necho "wrapper: child exited" >&2\n'
    )
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return wrapper


class Boom(Exception):
    pass


@pytest.mark.parametrize("leaving", ["normally", "raising", "cancelled"])
async def test_leaving_ends_a_wrapped_agent_whose_child_ignores_eof_and_sigterm(
    tmp_path: Path, leaving: str
) -> None:
    command = [str(wrapper_script(tmp_path))]
    child = group = 0
    raised = False
    left_at = 0.0
    try:
        with anyio.CancelScope() as scope:
            try:
                async with spawn_agent(
                    command, forward_stderr=None, grace_period=GRACE, terminate_grace_period=GRACE
                ) as agent:
                    child = await first_line_number(agent)
                    group = own_group(agent)
                    assert os.getpgid(child) == group
                    left_at = anyio.current_time()
                    if leaving == "raising":
                        raise Boom
                    if leaving == "cancelled":
                        scope.cancel()
                        await anyio.sleep_forever()
            except* Boom:
                raised = True
        took = anyio.current_time() - left_at
        assert raised == (leaving == "raising")
        assert took < LEAVE_BOUND, f"leaving took {took:.2f} s"
        assert not running(child)
        assert running_in_group(group) == []
        assert agent.process.returncode == -signal.SIGTERM  # the wrapper died on SIGTERM
        assert list(agent.stderr_tail) == ["child: stdin closed"]  # read while shutting down
    finally:
        kill_if_running(child)


# Starts a helper in its own session (out of reach of the agent's group) that inherits the
# agent's stdout and stderr, writes the helper's pid, and exits when its stdin ends.
LEAVES_AN_ESCAPED_HELPER = """
import subprocess, sys
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                          stdin=subprocess.DEVNULL, start_new_session=True)
print(helper.pid, flush=True)
sys.stdin.read()
sys.stderr.write("agent: bye\\n")
"""


async def test_leaving_returns_in_time_while_a_process_outside_the_group_holds_stderr() -> None:
    helper = 0
    try:
        async with spawn_agent(
            python(LEAVES_AN_ESCAPED_HELPER),
            forward_stderr=None,
            grace_period=GRACE,
            terminate_grace_period=GRACE,
        ) as agent:
            helper = await first_line_number(agent)
            left_at = anyio.current_time()
        took = anyio.current_time() - left_at
        assert took < LEAVE_BOUND, f"leaving took {took:.2f} s"
        assert agent.process.returncode == 0
        assert list(agent.stderr_tail) == ["agent: bye"]
        assert running(helper)  # a process that leaves the group is not tracked (documented)
    finally:
        kill_if_running(helper)


# Exits on stdin EOF, leaving a helper in its group that holds none of its pipes, ignores
# stdin EOF (it has no stdin) and dies on SIGTERM.
LEAVES_A_HELPER_IN_ITS_GROUP = """
import subprocess, sys
helper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                          stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)
print(helper.pid, flush=True)
sys.stdin.read()
"""


async def test_a_helper_the_agent_leaves_behind_in_its_group_is_terminated() -> None:
    helper = 0
    try:
        async with spawn_agent(
            python(LEAVES_A_HELPER_IN_ITS_GROUP),
            forward_stderr=None,
            grace_period=GRACE,
            terminate_grace_period=5.0,
        ) as agent:
            helper = await first_line_number(agent)
            group = own_group(agent)
            left_at = anyio.current_time()
        took = anyio.current_time() - left_at
        assert agent.process.returncode == 0
        assert not running(helper)
        assert running_in_group(group) == []
        assert took < GRACE + 2.0, f"leaving took {took:.2f} s: SIGTERM was enough"
    finally:
        kill_if_running(helper)


IGNORES_SIGTERM = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(30)"
)


async def test_open_agent_passes_the_grace_periods_on() -> None:
    async with open_agent(
        python(IGNORES_SIGTERM), v2=ClientV2, grace_period=GRACE, terminate_grace_period=GRACE
    ) as conn:
        left_at = anyio.current_time()
    took = anyio.current_time() - left_at
    assert took < LEAVE_BOUND, f"leaving took {took:.2f} s"
    assert conn.closed


# --------------------------------------------------------------------------- the stdout guard

# An agent on serve_agent that writes to stdout behind the protocol's back while it answers
# `initialize`: through print() and straight to fd 1. argv[1] "off" opts out of the guard;
# argv[2] names the loop it runs on.
CHATTY_AGENT = loop_script("""
import os, sys
from acpwire.agent import serve_agent
from acpwire.fixtures.echo_agent import EchoAgentV2
from acpwire.streams import stdio_stream

class Chatty(EchoAgentV2):
    async def initialize(self, params):
        print("stray print")
        os.write(1, b"stray write\\n")
        return await super().initialize(params)

guard = sys.argv[1] != "off"
run_on(sys.argv[2], lambda: serve_agent(Chatty, stream=stdio_stream(guard_stdout=guard)))
""")


async def test_stray_stdout_output_of_an_agent_goes_to_stderr_not_into_the_protocol(
    loop: str,
) -> None:
    async with spawn_agent(
        [*python(CHATTY_AGENT), "on", loop], env=PYTHONPATH, forward_stderr=None
    ) as agent:
        peer = RawPeer(agent.stream)
        with anyio.fail_after(5):
            answer = await peer.call(1, "initialize", RAW_INIT_V2)
            assert answer["id"] == 1 and answer["result"]["protocolVersion"] == 2
            await until(lambda: {"stray print", "stray write"} <= set(agent.stderr_tail))


async def test_the_stdout_guard_can_be_turned_off(loop: str) -> None:
    async with spawn_agent(
        [*python(CHATTY_AGENT), "off", loop], env=PYTHONPATH, forward_stderr=None
    ) as agent:
        peer = RawPeer(agent.stream)
        await peer.send(request(1, "initialize", RAW_INIT_V2))
        with anyio.fail_after(5):
            assert await peer.receive_line() in (b"stray print", b"stray write")


# --------------------------------------------------------------------------- launch errors


def not_executable(tmp_path: Path) -> list[str]:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\n")
    return [str(script)]


def missing_interpreter(tmp_path: Path) -> list[str]:
    script = tmp_path / "agent.py"
    script.write_text("#!/nonexistent/python3\n")
    script.chmod(0o755)
    return [str(script)]


LaunchCase = tuple[Callable[[Path], list[str]], Callable[[Path], dict[str, Any]], type, list[str]]

LAUNCH_CASES: dict[str, LaunchCase] = {
    "not-on-path": (
        lambda tmp: ["acpwire-no-such-agent"],
        lambda tmp: {"env": {"PATH": f"{tmp}/bin:{tmp}/sbin"}},
        errors.AgentNotFound,
        ["'acpwire-no-such-agent'", "not found on PATH", "{tmp}/bin:{tmp}/sbin", "full path"],
    ),
    "relative-path": (
        lambda tmp: ["./agent"],
        lambda tmp: {"cwd": str(tmp)},
        errors.AgentNotFound,
        ["'./agent'", "there is no {tmp}/agent", "cwd '{tmp}'"],
    ),
    "not-executable": (
        not_executable,
        lambda tmp: {},
        errors.AgentNotExecutable,
        ["'{tmp}/agent.sh'", "not executable", "chmod +x", "['sh', '{tmp}/agent.sh']"],
    ),
    "missing-interpreter": (
        missing_interpreter,
        lambda tmp: {},
        errors.AgentNotFound,
        ["'{tmp}/agent.py'", "interpreter on its #! line was not found"],
    ),
    "missing-cwd": (
        lambda tmp: ["sh"],
        lambda tmp: {"cwd": f"{tmp}/gone"},
        errors.AgentLaunchError,
        ["'sh'", "working directory '{tmp}/gone'", "No such file or directory"],
    ),
}


@pytest.mark.parametrize("case", LAUNCH_CASES)
async def test_an_agent_that_cannot_be_started_gets_an_error_naming_the_command_and_fix(
    tmp_path: Path, case: str
) -> None:
    command, options, error_type, fragments = LAUNCH_CASES[case]
    with pytest.raises(error_type) as caught:
        async with open_agent(command(tmp_path), v2=ClientV2, **options(tmp_path)):
            pass
    message = str(caught.value)
    for fragment in fragments:
        assert fragment.format(tmp=tmp_path) in message
    assert isinstance(caught.value, OSError)  # also a FileNotFoundError / PermissionError
    assert isinstance(caught.value.__cause__, OSError)


@pytest.mark.parametrize("command", [[], "", "my-agent --acp"])
async def test_an_agent_command_that_is_not_a_list_of_arguments_says_how_to_pass_one(
    command: list[str] | str,
) -> None:
    """Not an IndexError from subprocess, nor a string run letter by letter."""
    with pytest.raises(errors.AgentLaunchError, match=r"e\.g\. \['my-agent', '--acp'\]"):
        async with open_agent(command, v2=ClientV2):
            pass
