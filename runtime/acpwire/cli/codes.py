"""The exit codes of `acpwire run`: one per way a turn or the run can end, for scripts."""

from __future__ import annotations

import enum
import os
import sys

__all__ = ["ExitCode", "exit_code_of_stop_reason", "exit_code_table", "output_closed"]


class ExitCode(enum.IntEnum):
    """What `acpwire run` exits with (`exit_code_table()` prints them for `--help`)."""

    END_TURN = 0
    FAILED = 1
    USAGE = 2
    REFUSAL = 3
    CANCELLED = 4
    OTHER_STOP_REASON = 5
    AGENT_ERROR = 6
    PROTOCOL_ERROR = 7
    AGENT_NOT_FOUND = 8
    TIMEOUT = 9
    INTERRUPTED = 130
    OUTPUT_CLOSED = 141
    DIVERGED = 10
    """`acpwire replay` only: the live peer diverged from the recorded trace (not in `acpwire
    run`'s table: `acpwire replay --help` says it)."""


MEANING = {
    ExitCode.END_TURN: "every turn ended `end_turn`",
    ExitCode.FAILED: "acpwire itself failed (a bug: please report the traceback)",
    ExitCode.USAGE: "the command line is wrong",
    ExitCode.REFUSAL: "a turn ended `refusal`",
    ExitCode.CANCELLED: "a turn ended `cancelled` (Ctrl-C, or the agent cancelled it)",
    ExitCode.OTHER_STOP_REASON: "a turn ended `max_tokens`, `max_turn_requests` or a custom stop reason",
    ExitCode.AGENT_ERROR: "the agent answered a request with an error, or exited / closed the connection",
    ExitCode.PROTOCOL_ERROR: "the agent broke the protocol (no shared version, a response that does not fit its type)",
    ExitCode.AGENT_NOT_FOUND: "the agent could not be started (not found, not executable) or reached (--url)",
    ExitCode.TIMEOUT: "a step took longer than --timeout (the turn was cancelled first)",
    ExitCode.INTERRUPTED: "Ctrl-C twice, or Ctrl-C with no turn running",
    ExitCode.OUTPUT_CLOSED: "stdout was closed by its reader (e.g. piped into `head`)",
}
"""What each exit code means (the table in `acpwire run --help` and the README)."""

_STOP_REASONS = {
    "end_turn": ExitCode.END_TURN,
    "refusal": ExitCode.REFUSAL,
    "cancelled": ExitCode.CANCELLED,
}


def exit_code_of_stop_reason(stop_reason: str | None) -> ExitCode:
    """The exit code of a turn that ended with `stop_reason` (None: the agent gave none)."""
    return _STOP_REASONS.get(stop_reason or "", ExitCode.OTHER_STOP_REASON)


def exit_code_table() -> str:
    """The exit codes, one per line, for `--help`."""
    return "\n".join(f"  {int(code):>3}  {meaning}" for code, meaning in MEANING.items())


def output_closed() -> ExitCode:
    """stdout's reader went away: write nothing more (not even at exit) and say so."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return ExitCode.OUTPUT_CLOSED
