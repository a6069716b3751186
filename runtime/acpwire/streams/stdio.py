"""This process's stdin and stdout as the protocol stream of an agent, stdout guarded."""

from __future__ import annotations

import os
import sys

from .pipes import PipeStream, widen_pipe

STDIN_FD, STDOUT_FD, STDERR_FD = 0, 1, 2


def stdio_stream(*, guard_stdout: bool = True) -> PipeStream:
    """This process's stdin (receive) and stdout (send) as one stream (agent side).

    With `guard_stdout` (the default) the protocol keeps stdout for itself (a duplicate of
    fd 1) and fd 1 and `sys.stdout` are pointed at stderr: a stray `print()`, a library or C
    extension writing to fd 1, or a child process inheriting stdout, writes to stderr
    instead of corrupting the JSON-RPC stream. This lasts for the rest of the process;
    output written before the call still went to stdout. Opt out with
    `serve_agent(..., stream=stdio_stream(guard_stdout=False))`.
    """
    if guard_stdout:
        sys.stdout.flush()  # what was printed before goes where it was meant to
    stdin = os.dup(STDIN_FD)
    stdout = os.dup(STDOUT_FD)  # dups are not inherited by child processes
    if guard_stdout:
        os.dup2(STDERR_FD, STDOUT_FD)
        sys.stdout = sys.stderr
    widen_pipe(stdout)  # a no-op unless stdout is a pipe
    return PipeStream(stdout, stdin)
