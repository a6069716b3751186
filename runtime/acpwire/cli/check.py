"""`acpwire check -- <agent command>` (or `--url URL`): a conformance checker for agents. Runs
scripted scenarios against the agent (`check_scenarios`; a remote one over `check_remote`), judges its answers rule by rule
(`check_rules`, each with the schema or spec text it checks) and prints the table
(`check_report`). `acpwire check --client -- <client command>` checks a client against a
scripted agent (`check_client`, `check_client_agent`, `check_client_rules`)."""

from __future__ import annotations

import argparse
import enum
import os
import sys
from typing import Any

import trio

from .check_client import ClientSettings, check_client, relay
from .check_client_rules import CLIENT_RULES
from .check_peer import AgentNotStarted, process_channel
from .check_remote import remote_channel
from .check_report import render_json, render_text
from .check_rules import RULES
from .check_scenarios import Settings, run_scenarios
from .check_verdicts import Status, Verdict

__all__ = ["CheckExit", "add_parser"]

DEFAULT_TIMEOUT = 10.0


class CheckExit(enum.IntEnum):
    """What `acpwire check` exits with (the numbers `acpwire run` uses for the same cases)."""

    PASSED = 0
    FAILED = 1
    USAGE = 2
    RULE_FAILED = 7
    AGENT_NOT_STARTED = 8


MEANING = {
    CheckExit.PASSED: "no rule failed (some may be not applicable)",
    CheckExit.FAILED: "acpwire itself failed (a bug: please report the traceback)",
    CheckExit.USAGE: "the command line is wrong",
    CheckExit.RULE_FAILED: "the agent (--client: the client) broke at least one rule",
    CheckExit.AGENT_NOT_STARTED: "the agent could not be started (--url: reached), or exited "
    "before answering initialize (--client: the client could not be started, or exited without starting its agent)",
}

DESCRIPTION = """\
A conformance checker for ACP agents: runs scripted scenarios against the agent (four
processes of it, spoken to in raw JSON-RPC lines over stdio) and prints a table, rule by
rule: pass, FAIL or n/a (not applicable, with the reason). Each failure shows the rule's
schema or spec text and the wire lines as evidence (-> sent to the agent, <- from it).

Scenarios: initialize (the version requested, then 65535 and 0 in their own processes);
unknown methods and notifications, string and large ids, $/cancel_request; every method
the capabilities bind, probed with params it rejects (or read-only) to compare served with
advertised; session/new with wrong params, a prompt of an unknown session; a turn (its
permission requests allowed); a turn per refusal (its permission request answered with the
reject option, `cancelled`, v2: an option not offered, a custom outcome), whose tool call
must not run; a turn cancelled by session/cancel, a turn closed by session/close (v2); a
malformed line and a request without a method.

--url URL checks an agent served over the network instead (the remote-transport RFD's
WebSocket profile: acpwire's agent_app, the SDKs' remote servers): the same scenarios in raw
lines, one text frame per line both ways, a new connection where a process would be started;
--header 'Authorization: Bearer ...' is sent when connecting. input.stdout-clean (a rule of
the stdio transport) is n/a there. Only WebSocket so far (--transport websocket).

An agent without credentials may refuse sessions or prompts: the rules that need them are
then not applicable (with its answer as the reason), never passed. The prompts contain the
word "slow" (the SDK example agents stream slowly then, so they can be cancelled).

--client checks a client instead: acpwire plays a scripted agent. Clients spawn their agent,
so write `{agent}` where the client command takes the agent command: it is replaced by
`acpwire check --client --serve SOCKET`, a relay from its stdio to this checker: an argument
that is exactly `{agent}` becomes the command's arguments, one that contains it (as
`--agent={agent}`, or `bash -c "client -- {agent}"`) gets the command as one string quoted
for a shell. Without `{agent}` the
client command is spawned with its own stdin/stdout as the agent's connection (a client that
speaks ACP on its stdio, as an agent's parent would). Without a client command the checker
prints the agent command to give an editor, and waits for it (prompt twice, cancel the
second turn; give a long --timeout: the run ends after that much silence between turns).

The scripted agent answers initialize with the version asked for (2, or 1; with --protocol,
that one), serves session/new, session/prompt, session/close and session/list. In the
client's first turn it sends 3000 updates then a request, requests of unknown methods (with a
string and a large integer id), an unknown notification, $/cancel_request (for no request,
for one just sent), v1: fs/read_text_file of a file that does not exist and terminal/output
of an unknown terminal, and a permission request; a later turn streams chunks until the
client sends session/cancel, then asks one more permission (v2: cancelled with
$/cancel_request), which must be answered `cancelled`. The run ends when the client closes
the connection, or after --timeout seconds of silence with no turn running. The client's
stdout goes to stderr (stdout is the table).
"""


def _epilog() -> str:
    rules = "\n".join(f"  {r.id:<29} {r.title}" for r in RULES)
    client_rules = "\n".join(f"  {r.id:<29} {r.title}" for r in CLIENT_RULES)
    codes = "\n".join(f"  {int(code):>3}  {MEANING[code]}" for code in CheckExit)
    return f"""\
rules (`--format json` has each one's sources: schema type or spec page and section, and the
sentence it checks):
{rules}

rules of --client:
{client_rules}

exit codes:
{codes}

examples:
  acpwire check -- python -m acpwire.fixtures.echo_agent
  acpwire check --protocol 1 --format json -- node agent.mjs
  acpwire check --url ws://127.0.0.1:8000/acp --header 'Authorization: Bearer s3cret'
  acpwire check --client -- node client.mjs -- {{agent}}
  acpwire check --client -- my-client --agent={{agent}}
  acpwire check --client          (prints the agent command for an editor, then waits)
"""


def add_parser(subcommands: Any) -> None:
    """Register `check` with its options."""
    parser = subcommands.add_parser(
        "check",
        help="check an agent's conformance to the protocol, rule by rule",
        description=DESCRIPTION,
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="acpwire check [--protocol 1|2] [--format text|json] [--timeout S] [--cwd DIR] "
        "-- <agent command...>\n       acpwire check [options] --url URL [--transport websocket] "
        "[--header K:V]...\n       acpwire check --client [options] [-- <client command "
        "with {agent}...>]",
    )
    parser.add_argument(
        "--client",
        action="store_true",
        help="check a client (the command after --) against a scripted agent, not an agent",
    )
    parser.add_argument(
        "--serve",
        metavar="SOCKET",
        help="with --client: the agent command the client runs (acpwire writes it for you): "
        "relay this process's stdio to the checker listening at SOCKET",
    )
    parser.add_argument(
        "--protocol",
        type=int,
        choices=(1, 2),
        help="check only this protocol version (default: ask for 2, check 1 if the agent answers 1)",
    )
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help="the table (text, default) or one JSON document (json) on stdout",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        default=DEFAULT_TIMEOUT,
        help=f"seconds to wait for each answer the checker expects (default: {DEFAULT_TIMEOUT:g})",
    )
    parser.add_argument(
        "--cwd",
        metavar="DIR",
        help="the sessions' working directory; the agent runs there too (default: this one; "
        "with --url: sent as given, a directory of the agent's machine)",
    )
    parser.add_argument(
        "--url",
        help="check an agent served over the network at this ACP endpoint (ws://, wss://, "
        "http://, https://; a new connection per scenario; needs acpwire[remote])",
    )
    parser.add_argument(
        "--transport",
        choices=("websocket",),
        help="with --url: the transport (default and, so far, only: websocket, one text frame "
        "per line; Streamable HTTP is not supported yet)",
    )
    parser.add_argument(
        "--header",
        metavar="K:V",
        action="append",
        default=[],
        help="with --url: an HTTP header sent when connecting (repeatable), e.g. "
        "'Authorization: Bearer ...'",
    )
    parser.set_defaults(handler=check_command, takes_command=True, subparser=parser)


def check_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`acpwire check`: check the arguments, run the scenarios on trio, print the table."""
    if args.serve is not None:
        if not args.client or args.command:
            parser.error("--serve SOCKET goes with --client and no command")
        trio.run(relay, args.serve)
        return CheckExit.PASSED
    if args.client:
        if args.url is not None:
            parser.error("--client checks a client command: --url is for a remote agent")
        return _check_client(args, parser)
    if args.url is None and (args.header or args.transport is not None):
        parser.error("--transport and --header go with --url")
    if args.url is not None:
        if args.command:
            parser.error("give either --url URL or `-- <agent command>`, not both")
        cwd = _checked_cwd(args, parser, local=False)
        connect = remote_channel(args.url, _headers(args.header, parser))
        target = ["--url", args.url]
    elif not args.command:
        parser.error(
            "the agent command is missing: acpwire check [options] -- <agent command> "
            "(or --url URL)"
        )
    else:
        cwd = _checked_cwd(args, parser)
        connect = process_channel(args.command, cwd)
        target = args.command
    settings = Settings(connect, args.protocol, args.timeout, cwd, remote=args.url is not None)
    try:
        outcome = trio.run(run_scenarios, settings)
    except AgentNotStarted as error:
        # a remote agent's error names it (its URL) and what happened
        said = str(error) if args.url is not None else f"the agent could not be started: {error}"
        print(f"acpwire check: {said}", file=sys.stderr)
        return CheckExit.AGENT_NOT_STARTED
    verdicts = outcome.verdicts.table(outcome.protocol)
    return _report(args, target, outcome.protocol, outcome.agent, verdicts)


def _headers(given: list[str], parser: argparse.ArgumentParser) -> dict[str, str]:
    """`--header K:V` options as a mapping (`K: V` and `K:V` alike)."""
    headers = {}
    for header in given:
        name, colon, value = header.partition(":")
        if not colon or not name.strip():
            parser.error(f"--header {header!r}: give it as NAME:VALUE")
        headers[name.strip()] = value.strip()
    return headers


def _checked_cwd(
    args: argparse.Namespace, parser: argparse.ArgumentParser, local: bool = True
) -> str:
    """The working directory (`--cwd`, absolute), once `--timeout` and it are checked (not
    `local`: a directory of the remote agent's machine, taken as given)."""
    if args.timeout <= 0:
        parser.error("--timeout must be a positive number of seconds")
    if not local:
        if args.cwd is not None and not os.path.isabs(args.cwd):
            parser.error(f"--cwd {args.cwd}: with --url, an absolute path on the agent's machine")
        return str(args.cwd or os.getcwd())
    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        parser.error(f"--cwd {args.cwd}: not a directory")
    return cwd


def _check_client(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    settings = ClientSettings(args.command, args.protocol, args.timeout, _checked_cwd(args, parser))
    try:
        outcome = trio.run(check_client, settings)
    except AgentNotStarted as error:
        print(f"acpwire check --client: the client could not be started: {error}", file=sys.stderr)
        return CheckExit.AGENT_NOT_STARTED
    verdicts = outcome.verdicts.table(outcome.protocol)
    return _report(args, args.command, outcome.protocol, outcome.client, verdicts, "client")


def _report(
    args: argparse.Namespace,
    target: list[str],
    protocol: int | None,
    name: str | None,
    verdicts: list[Verdict],
    peer: str = "agent",
) -> int:
    """Print the table (or the JSON document) of `target` (the command checked, or `--url
    URL`); the exit code of the verdicts."""
    failed = any(v.status is Status.FAIL for v in verdicts)
    code = CheckExit.RULE_FAILED if failed else CheckExit.PASSED
    if args.format == "json":
        text = render_json(target, protocol, name, verdicts, code, peer)
    else:
        text = render_text(target, protocol, name, verdicts, peer)
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return code
