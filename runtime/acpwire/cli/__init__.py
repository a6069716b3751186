"""The `acpwire` command: `acpwire run` (a headless client), `acpwire trace` (a transparent tap
between an editor and an agent, recording the traffic), `acpwire show` (a recorded trace
rendered for a person), `acpwire replay` (one side of a recorded trace played against a live
peer) and `acpwire check` (an agent's conformance, rule by rule). `acpwire <command> --help` says more; `python -m acpwire` runs it too.

Built on acpwire's public API only, like any user's program; nothing of it is imported by
`import acpwire`.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from acpwire import __version__

from . import check, replay, run, show, trace
from .codes import output_closed

__all__ = ["main"]

COMMANDS = (run, trace, show, replay, check)


def parser() -> argparse.ArgumentParser:
    """The command line of `acpwire` and its subcommands."""
    top = argparse.ArgumentParser(
        prog="acpwire",
        description="Run, record and look at Agent Client Protocol (ACP) traffic.",
        epilog="`acpwire <command> --help` for each command's options.",
    )
    top.add_argument("--version", action="version", version=f"acpwire {__version__}")
    subcommands = top.add_subparsers(title="commands", metavar="<command>", required=True)
    for command in COMMANDS:
        command.add_parser(subcommands)
    return top


def split_command(argv: Sequence[str]) -> tuple[list[str], list[str]]:
    """`[options] -- <command...>`: the options, and the command after the first `--`."""
    arguments = list(argv)
    if "--" not in arguments:
        return arguments, []
    at = arguments.index("--")
    return arguments[:at], arguments[at + 1 :]


def main(argv: Sequence[str] | None = None) -> int:
    """Run `acpwire` with `argv` (default: the process's arguments); returns the exit code."""
    options, command = split_command(sys.argv[1:] if argv is None else argv)
    top = parser()
    args = top.parse_args(options)
    subparser = args.subparser
    if command and not args.takes_command:
        subparser.error(f"unexpected `-- {' '.join(command)}`: this command runs no agent")
    args.command = command
    try:
        code: int = args.handler(args, subparser)
    except BrokenPipeError:
        return output_closed()
    return code
