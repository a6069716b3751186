"""`acpwire replay FILE --as agent|client [-- <peer command>]`: one side of a recorded trace
played back against a live peer, and where the peer diverges from the recording."""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import signal
import sys
from pathlib import Path
from typing import Any, TextIO

import trio

from acpwire.errors import AgentLaunchError
from acpwire.streams import ByteStream, spawn_agent, stdio_stream

from .codes import ExitCode
from .replay_engine import Replayer
from .replay_match import VALUE_KEYS
from .replay_script import read_script
from .trace_format import TraceError

__all__ = ["add_parser"]

DEFAULT_TIMEOUT = 10.0
STARTUP_WAIT = 30.0
"""The wait for the peer's first message is at least this long: starting may take a while
(`npx`, a cold interpreter)."""
END_WAIT = 2.0
"""--as client: once the script is played, how long the agent has to close the connection
(what it sends meanwhile is checked: a message the recording does not have is a
divergence)."""

DESCRIPTION = f"""\
Play one side of a trace recorded by `acpwire trace` against a live peer, and report where
the peer diverges from the recording, each with its line in the trace: a message recorded
that did not come in time (missing), or came only after the replay's next message (late),
one that came but matches nothing recorded (unexpected), one that matches but differs
(different).

--as client: acpwire sends the client's recorded messages to the agent command after `--`
  (its requests keep their ids; session ids and the other ids the agent chose are replaced
  by the live ones) and compares what the agent sends with the recording.
--as agent: acpwire answers the client's requests with the recorded responses (with the
  live request's id) and sends the recorded notifications and requests to the client, in
  recorded order. Without `-- <client command>` it serves stdio, so a client under test can
  run `acpwire replay FILE --as agent` as its agent command (the report then goes to
  stderr); with one, it starts the client and talks to it over the client's stdio. A
  request that matches nothing recorded is answered -32603.

Before it sends each recorded message, acpwire waits for the peer's messages recorded
before it: at most --timeout seconds (default: 10 with --as client; with --as agent as long
as the client takes, a person may be driving it), at least 30 for the peer's first message
(its start). What did not come by then is missing (late if it comes after all: a request
coming late gets its recorded answer then). Once the script is played, the agent has 2 s
to close the connection (--as client); the client is waited for until it closes it (--as
agent). A live message is matched to the earliest recorded one of the peer's with its
method (and `sessionUpdate` for updates) not matched yet (those due now before the overdue
ones), preferring one of its shape; a response by the request it answers.

A trace's redacted values ("[redacted]") are replayed as they are; lines that were not JSON
are left out.

Matching by shape (the default): the same JSON types and object keys all the way down, and
the same values of the keys that give a message its structure ({", ".join(sorted(VALUE_KEYS))});
other values (text, titles, paths, ids, timestamps) may differ and `_meta` is ignored. An
array matches when each live item has the shape of a recorded one and the other way round,
whatever their counts; a run of message, thought or tool call content chunks matches one
or more live chunks.
--strict compares every value and counts too, except JSON-RPC ids and the values of keys
ending in `Id`, which must pair with the live ones consistently.
"""

EPILOG = f"""\
exit codes:
  {int(ExitCode.END_TURN):>3}  no divergence
  {int(ExitCode.DIVERGED):>3}  the peer diverged from the recording (the report lists where)
  {int(ExitCode.AGENT_NOT_FOUND):>3}  the peer command could not be started
  {int(ExitCode.USAGE):>3}  the command line is wrong, or FILE is not a trace
  {int(ExitCode.INTERRUPTED):>3}  Ctrl-C (the report shows the divergences so far)

examples:
  acpwire trace --out hello.trace -- python -m acpwire.examples.hello_agent   (in an editor)
  acpwire replay hello.trace --as client -- python -m acpwire.examples.hello_agent
  acpwire replay hello.trace --as client --strict --format json -- python -m acpwire.examples.hello_agent
  python -m acpwire.examples.hello_client -- acpwire replay hello.trace --as agent
"""


def add_parser(subcommands: Any) -> None:
    """Register `replay` with its options."""
    parser = subcommands.add_parser(
        "replay",
        help="play one side of a recorded trace against a live peer, report divergences",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="acpwire replay FILE --as client [--strict] [--timeout S] [--format text|json]\n"
        "                      -- <agent command...>\n"
        "       acpwire replay FILE --as agent [--strict] [--timeout S] [--format text|json]\n"
        "                      [-- <client command...>]",
    )
    parser.add_argument("file", type=Path, metavar="FILE", help="the trace (`acpwire trace`)")
    parser.add_argument(
        "--as",
        dest="plays",
        required=True,
        choices=("client", "agent"),
        help="the recorded side acpwire plays; the peer is the other one",
    )
    parser.add_argument("--strict", action="store_true", help="compare values too, not only shapes")
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="the report: text, or one JSON document (default: text)",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds to wait for the peer's recorded messages before each step (default: "
        f"{DEFAULT_TIMEOUT:g} with --as client, no limit with --as agent)",
    )
    parser.set_defaults(handler=replay_command, takes_command=True, subparser=parser)


def replay_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`acpwire replay`: check the arguments, read the trace, then play it on trio."""
    if args.plays == "client" and not args.command:
        parser.error(
            "--as client needs the agent command: acpwire replay FILE --as client -- <agent command>"
        )
    if args.timeout is not None and args.timeout <= 0:
        parser.error("--timeout must be a positive number of seconds")
    as_client = args.plays == "client"
    timeout = args.timeout or (DEFAULT_TIMEOUT if as_client else math.inf)
    try:
        script = read_script(args.file)
    except TraceError as error:
        parser.error(f"{args.file}: {error}")
    replayer = Replayer(
        script,
        args.plays,
        strict=args.strict,
        timeout=timeout,
        first_wait=max(timeout, STARTUP_WAIT),
        end_wait=END_WAIT if as_client else None,
    )
    serving_stdio = not as_client and not args.command
    report_to = sys.stderr if serving_stdio else sys.stdout
    report = _json_report if args.format == "json" else _text_report
    try:
        interrupted = trio.run(functools.partial(_interruptible, replayer, args.command))
    except AgentLaunchError as error:
        print(f"acpwire replay: the {replayer.peer} could not be started: {error}", file=sys.stderr)
        return ExitCode.AGENT_NOT_FOUND
    if interrupted:
        print("acpwire replay: interrupted; the divergences so far:", file=report_to)
        replayer.divergences.sort(key=lambda divergence: divergence.line)
    report(replayer, args.command, report_to)
    if interrupted:
        return ExitCode.INTERRUPTED
    return ExitCode.DIVERGED if replayer.divergences else ExitCode.END_TURN


async def _interruptible(replayer: Replayer, command: list[str]) -> bool:
    """Play until done or Ctrl-C; whether Ctrl-C ended it."""
    interrupted = False
    failed: AgentLaunchError | None = None
    with trio.open_signal_receiver(signal.SIGINT) as interrupts:
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal interrupted
                async for _ in interrupts:
                    interrupted = True
                    nursery.cancel_scope.cancel()
                    return

            nursery.start_soon(watch)
            try:
                await _play(replayer, command)
            except AgentLaunchError as error:
                failed = error  # raised as itself, not in the nursery's group
            nursery.cancel_scope.cancel()
    if failed is not None:
        raise failed
    return interrupted


async def _play(replayer: Replayer, command: list[str]) -> None:
    if not command:
        stream: ByteStream = stdio_stream()
        try:
            await replayer.run(stream)
        finally:
            await stream.aclose()
        return
    async with spawn_agent(command) as peer:
        await replayer.run(peer.stream)


def _text_report(replayer: Replayer, command: list[str], out: TextIO) -> None:
    divergences = replayer.divergences
    against = " ".join(command) if command else "stdio"
    print(
        f"acpwire replay: {replayer.script.path.name} as the {replayer.plays}, against {against}",
        file=out,
    )
    print(
        f"{replayer.sent} recorded messages sent, {replayer.matched} of the {replayer.peer}'s matched",
        file=out,
    )
    for divergence in divergences:
        print(f"  {divergence}", file=out)
    summary = f"{len(divergences)} divergence{'s' if len(divergences) != 1 else ''}"
    print(summary if divergences else "no divergence", file=out, flush=True)


def _json_report(replayer: Replayer, command: list[str], out: TextIO) -> None:
    """The report as one JSON document (`divergences`: kind, line, what, detail, times)."""
    report = {
        "trace": str(replayer.script.path),
        "plays": replayer.plays,
        "against": command or None,
        "sent": replayer.sent,
        "matched": replayer.matched,
        "divergences": [dataclasses.asdict(divergence) for divergence in replayer.divergences],
    }
    print(json.dumps(report, ensure_ascii=False), file=out, flush=True)
