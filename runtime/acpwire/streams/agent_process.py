"""An agent subprocess: started in a process group of its own, its stderr drained, and shut
down so that nothing of it is left behind."""

from __future__ import annotations

import collections
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from .._loop import CancelScope, Event, Loop, current_loop
from ..errors import AgentLaunchError, AgentNotExecutable, AgentNotFound, PeerExited
from .child import Child, start_child
from .pipes import PipeStream, widen_pipe

STDERR_TAIL_LINES = 40
STDERR_LINE_BYTES = 8192  # longer stderr lines are cut: memory stays bounded
EXIT_EOF_GRACE = 1.0
"""After the agent exits, how long a process it left (outside its group, or not yet killed)
may keep its output pipes open before they are closed on our side."""
GRACE_PERIOD = 5.0
"""Default time the agent has to exit once its stdin is closed."""
TERMINATE_GRACE_PERIOD = 2.0
"""Default time the agent's process group has to exit after SIGTERM, before SIGKILL."""
KILL_WAIT = 1.0
"""After SIGKILL, how long to wait for the group's processes to be gone."""
GROUP_POLL_INTERVAL = 0.02


@dataclass
class AgentProcess:
    """A running agent subprocess: its protocol stream, and what it wrote to stderr."""

    process: Child
    """The child process: `pid`, `returncode`, `await wait()`."""
    stderr_tail: collections.deque[str] = field(
        default_factory=lambda: collections.deque(maxlen=STDERR_TAIL_LINES)
    )
    """Its last stderr lines (at most `STDERR_TAIL_LINES`, each cut at `STDERR_LINE_BYTES`)."""
    _loop: Loop = field(init=False, repr=False)  # the loop it runs on
    _stderr_done: Event = field(init=False, repr=False)  # set once its stderr reached EOF

    def __post_init__(self) -> None:
        self._loop = current_loop()
        self._stderr_done = self._loop.Event()

    @property
    def stream(self) -> PipeStream:
        """The protocol stream: we write to the agent's stdin and read its stdout."""
        return self.process.stream

    async def exited(self, wait: float = 2.0) -> PeerExited:
        """The error describing the agent's exit (waits a little for it to finish dying and
        for its last stderr output to be read)."""
        with self._loop.move_on_after(wait):
            await self.process.wait()
            await self._stderr_done.wait()
        return PeerExited(self.process.returncode, "\n".join(self.stderr_tail))


async def _drain_stderr(agent: AgentProcess, forward: Callable[[str], None] | None) -> None:
    """Read the agent's stderr as it comes (a full pipe would block the agent)."""
    stream = agent.process.stderr
    pending = bytearray()

    def emit(raw: bytes | bytearray) -> None:
        line = raw[:STDERR_LINE_BYTES].decode("utf-8", "replace")
        if len(raw) > STDERR_LINE_BYTES:
            line += f" [... {len(raw) - STDERR_LINE_BYTES} bytes cut]"
        agent.stderr_tail.append(line)
        if forward is not None:
            forward(line)

    while chunk := await stream.receive_some():
        start = 0
        while (nl := chunk.find(b"\n", start)) != -1:
            pending += chunk[start:nl]
            emit(pending)
            pending.clear()
            start = nl + 1
        if len(pending) < STDERR_LINE_BYTES:  # past the cap the rest of the line is dropped
            pending += chunk[start : start + STDERR_LINE_BYTES]
    if pending:
        emit(pending)
    agent._stderr_done.set()


def forward_to_stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


@asynccontextmanager
async def spawn_agent(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    forward_stderr: Callable[[str], None] | None = forward_to_stderr,
    grace_period: float = GRACE_PERIOD,
    terminate_grace_period: float = TERMINATE_GRACE_PERIOD,
) -> AsyncIterator[AgentProcess]:
    """Start an agent subprocess (the caller's environment is inherited, `env` adds to it).

    Its stderr is drained continuously, forwarded line by line and its tail kept for error
    reports. The agent runs in a session and process group of its own, so shutdown reaches
    whatever it started too (the real agent behind an `npx`/`uvx`/npm shim or a shell
    script, its helpers); a terminal's Ctrl-C reaches only this process, which then shuts
    the agent down as below. A process that calls `setsid` itself leaves the group and is not
    tracked.

    Leaving the block, normally, with an exception or cancelled: the agent's stdin is
    closed and it gets `grace_period` seconds to exit; then what still runs of its process
    group (the agent, or what it left behind) gets SIGTERM and `terminate_grace_period`
    seconds; then SIGKILL. No process of the group is left behind, and leaving takes at most
    `grace_period + terminate_grace_period + KILL_WAIT + EXIT_EOF_GRACE` seconds (9 s with
    the defaults; the last one only while a process outside the group holds the agent's
    stderr open).

    A command that is not found or not executable raises `AgentNotFound` /
    `AgentNotExecutable`, naming the command and the PATH or directory searched.
    POSIX only (process groups).
    """
    full_env = {**os.environ, **(env or {})}
    loop = current_loop()
    agent = AgentProcess(_start(command, full_env, cwd))
    widen_pipe(agent.stream.receive_fd)
    # Cancelling the block must not stop reading stderr before the agent is shut down.
    readers = loop.CancelScope(shield=True)
    try:
        async with loop.open_nursery() as nursery:
            nursery.start_soon(_read_output, readers, agent, forward_stderr)
            try:
                yield agent
            finally:
                with loop.CancelScope(shield=True):
                    await _shut_down(agent, grace_period, terminate_grace_period)
                    with loop.move_on_after(EXIT_EOF_GRACE):  # long only if a process outside
                        await agent._stderr_done.wait()  # the group still holds stderr open
                readers.cancel()
    finally:
        agent.stream.close_send()
        agent.stream.close_receive()
        agent.process.stderr.close_receive()


def _start(command: Sequence[str], env: dict[str, str], cwd: str | None) -> Child:
    if isinstance(command, str) or not command:
        raise AgentLaunchError(
            f"the agent command {command!r} is not a list of arguments: pass the program and "
            "its arguments as a list, e.g. ['my-agent', '--acp'] (shlex.split(line) splits a "
            "command line)"
        )
    try:
        return start_child(command, env, cwd, new_session=True)
    except (FileNotFoundError, PermissionError, NotADirectoryError) as exc:
        raise _launch_error(command[0], env, cwd, exc) from exc


async def _read_output(
    scope: CancelScope, agent: AgentProcess, forward_stderr: Callable[[str], None] | None
) -> None:
    with scope:
        async with agent._loop.open_nursery() as nursery:
            nursery.start_soon(agent.process.watch)
            nursery.start_soon(_drain_stderr, agent, forward_stderr)
            nursery.start_soon(_end_of_output_on_exit, agent)


async def _end_of_output_on_exit(agent: AgentProcess) -> None:
    """Once the agent exited, end its output even if a child of it keeps the pipe open:
    otherwise requests waiting for answers would wait for that child."""
    await agent.process.wait()
    await agent._loop.sleep(EXIT_EOF_GRACE)
    agent.stream.close_receive()


async def _shut_down(agent: AgentProcess, grace_period: float, terminate_grace: float) -> None:
    """Close the agent's stdin, then signal its process group until every process is gone."""
    group = agent.process.pid  # the agent leads its own session and group
    try:
        agent.stream.close_send()
        with agent._loop.move_on_after(grace_period):
            await agent.process.wait()
        if not _group_running(group):
            return
        _signal_group(group, signal.SIGTERM)  # the agent, or what it left behind
        if await _group_exits(agent, terminate_grace):
            return
        _signal_group(group, signal.SIGKILL)
        await _group_exits(agent, KILL_WAIT)
    except BaseException:  # interrupted (a second Ctrl-C): still leave nothing behind
        _signal_group(group, signal.SIGKILL)
        raise


async def _group_exits(agent: AgentProcess, seconds: float) -> bool:
    """Wait up to `seconds` for the agent and every other process of its group to exit."""
    with agent._loop.move_on_after(seconds):
        await agent.process.wait()
        while _group_running(agent.process.pid):
            await agent._loop.sleep(
                GROUP_POLL_INTERVAL
            )  # the kernel has nothing to wait on for this
        return True
    return False


def _signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except (ProcessLookupError, PermissionError):  # gone, or nothing left we may signal
        pass


def _group_running(group: int) -> bool:
    """Whether a process of the group still runs. Zombies (exited, not yet reaped) don't
    count: an orphan's zombie stays until its new parent reaps it, and some container inits
    never do."""
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # a member we may not signal (another user's): still there
        return True
    if not os.path.isdir("/proc"):  # not Linux: a zombie counts as running
        return True
    return any(
        _runs_in_group(entry.path, group) for entry in os.scandir("/proc") if entry.name.isdigit()
    )


def _runs_in_group(proc_dir: str, group: int) -> bool:
    try:
        with open(f"{proc_dir}/stat", "rb") as stat_file:
            stat = stat_file.read()
    except OSError:  # exited meanwhile
        return False
    state, _parent, process_group = stat.rpartition(b")")[2].split()[:3]  # after "pid (comm)"
    return int(process_group) == group and state != b"Z"


# --------------------------------------------------------------------------- launch errors


def _launch_error(program: str, env: dict[str, str], cwd: str | None, error: OSError) -> OSError:
    """`error` from starting `program`, as an error that says what was searched and the fix."""
    if cwd is not None and error.filename == cwd:
        return AgentLaunchError(
            f"cannot start agent {program!r}: its working directory {cwd!r} is unusable "
            f"({error.strerror}): pass an existing directory as cwd"
        )
    if os.sep in program:  # a path: relative ones start from the agent's working directory
        path = os.path.normpath(os.path.join(cwd or os.getcwd(), program))
        found = path if os.path.lexists(path) else None
        searched = f"there is no {path}" if cwd is None else f"there is no {path} (cwd {cwd!r})"
        fix = "check the path"
    else:
        import shutil  # only when a start fails: shutil imports bz2 and lzma

        search_path = os.pathsep.join(os.get_exec_path(env))
        found = shutil.which(program, mode=os.F_OK, path=search_path)
        searched = f"not found on PATH (searched {search_path})"
        fix = "install it, give its full path, or add its directory to PATH (env={'PATH': ...})"
    if isinstance(error, PermissionError):
        return AgentNotExecutable(
            f"agent command {program!r} ({found or searched}) is not executable: make it "
            f"executable (chmod +x) or run it through its interpreter, e.g. ['sh', {program!r}]"
        )
    if found is not None:
        return AgentNotFound(
            f"agent command {program!r} ({found}) could not be run: the interpreter on its "
            f"#! line was not found: install that interpreter or fix the line"
        )
    return AgentNotFound(f"agent command {program!r}: {searched}: {fix}")
