"""A child process on either loop: `subprocess.Popen` on OS pipes, its exit seen without
blocking the loop (a pidfd on Linux; elsewhere a short poll)."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence

from .._loop import Event, Loop, current_loop
from .pipes import PipeStream

EXIT_POLL_INTERVAL = 0.02


class Child:
    """A started process: `pid`, `returncode` (None while it runs), `wait()`, and its
    stdin/stdout as one `PipeStream` plus stderr as another (receive only)."""

    def __init__(self, popen: subprocess.Popen[bytes], stream: PipeStream, stderr: PipeStream):
        self.popen = popen
        """The `subprocess.Popen` object."""
        self.pid = popen.pid
        """Its process id (it leads a process group of its own: the group's id too)."""
        self.stream = stream
        """Its stdin (we send) and stdout (we receive) as one stream."""
        self.stderr = stderr
        """Its stderr (receive only)."""
        self._loop = current_loop()
        self._exited: Event = self._loop.Event()

    @property
    def returncode(self) -> int | None:
        """Its exit code once it exited (negative: the signal that ended it), else None."""
        return self.popen.returncode

    async def wait(self) -> int:
        """Wait for the process to exit (the `watch` task reaps it); its return code."""
        await self._exited.wait()
        returncode = self.popen.returncode
        assert returncode is not None
        return returncode

    async def watch(self) -> None:
        """Reap the process once it exits and wake the tasks waiting for that (run it as
        one task: a pidfd has room for one waiter)."""
        try:
            await _wait_for_exit(self._loop, self.popen)
        finally:
            if self.popen.returncode is not None:
                self._exited.set()


async def _wait_for_exit(loop: Loop, popen: subprocess.Popen[bytes]) -> None:
    pidfd = _open_pidfd(popen.pid)
    if pidfd is None:
        while popen.poll() is None:
            await loop.sleep(EXIT_POLL_INTERVAL)
        return
    exited = loop.readable_fd(pidfd)
    try:
        while popen.poll() is None:
            await exited.wait()
    finally:
        exited.close()
        os.close(pidfd)


def _open_pidfd(pid: int) -> int | None:
    pidfd_open = getattr(os, "pidfd_open", None)  # Linux 5.3+
    if pidfd_open is None:
        return None
    try:
        fd: int = pidfd_open(pid)
    except OSError:  # not supported by this kernel, or already reaped
        return None
    return fd


def start_child(
    command: Sequence[str], env: dict[str, str], cwd: str | None, *, new_session: bool
) -> Child:
    """Start `command` with its stdin, stdout and stderr on pipes of ours (may raise the
    OSError of a command that cannot be started)."""
    stdin_read, stdin_write = os.pipe()
    stdout_read, stdout_write = os.pipe()
    stderr_read, stderr_write = os.pipe()
    ours, theirs = (stdin_write, stdout_read, stderr_read), (stdin_read, stdout_write, stderr_write)
    try:
        popen = subprocess.Popen(
            list(command),
            stdin=stdin_read,
            stdout=stdout_write,
            stderr=stderr_write,
            env=env,
            cwd=cwd,
            start_new_session=new_session,
        )
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in theirs:
            os.close(fd)
    return Child(popen, PipeStream(stdin_write, stdout_read), PipeStream(receive_fd=stderr_read))
