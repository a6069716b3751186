"""`acpwire show FILE`: a trace of `acpwire trace` rendered for a person, in the terminal or as
one self-contained HTML page."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .show_model import tell
from .trace_format import TraceError, read_trace

__all__ = ["add_parser"]

DESCRIPTION = """\
Render a trace written by `acpwire trace`: its sessions and their turns (time to the first
chunk, duration, the longest gap between the agent's messages, state transitions, tool calls
with their statuses, permission requests and their answers), the timeline of every message
(runs of chunks folded into one row), and the protocol rules broken, marked where they
happen: a line that does not fit the schema, a response to no request, a request never
answered, and the v2 prompt lifecycle (the session/prompt response before the user
message, running before output, idle with a stop reason, cancelled after session/cancel,
requires_action while a permission is pending) and cancellation (pending permission
requests answered cancelled).

The terminal view needs rich (pip install 'acpwire[cli]'); --html writes one page with
nothing else needed to open it (inline style, no script, nothing fetched).
"""


def add_parser(subcommands: Any) -> None:
    """Register `show` with its options."""
    parser = subcommands.add_parser(
        "show",
        help="render a recorded trace (terminal, or --html page)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  acpwire show session.trace\n  acpwire show session.trace --html session.html",
    )
    parser.add_argument("file", metavar="FILE", help="a trace written by `acpwire trace`")
    parser.add_argument(
        "--html", metavar="PAGE", help="write the HTML page to PAGE (`-`: to stdout) instead"
    )
    parser.add_argument(
        "--no-timeline",
        action="store_true",
        help="leave the timeline out (sessions and findings only)",
    )
    parser.set_defaults(handler=show_command, takes_command=False, subparser=parser)


def show_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`acpwire show`: read the trace, tell its story, render it."""
    try:
        with open(args.file, "rb") as file:
            data = file.read()
    except OSError as error:
        parser.error(f"{args.file}: {error.strerror}")
    try:
        header, records = read_trace(data)
        story = tell(header, records)
    except TraceError as error:
        parser.error(f"{args.file}: {error}")
    if args.html:
        from .show_html import render_html

        page = render_html(story)
        if args.html == "-":
            sys.stdout.write(page)
        else:
            with open(args.html, "w", encoding="utf-8") as out:
                out.write(page)
        return 0
    from .show_terminal import render_terminal

    try:
        render_terminal(story, sys.stdout, with_timeline=not args.no_timeline)
    except ModuleNotFoundError as error:
        sys.stderr.write(f"acpwire show: {error}\n")
        return 2
    return 0
