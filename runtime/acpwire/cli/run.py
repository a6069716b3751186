"""`acpwire run`: a headless client. One prompt (or stdin's lines, one turn each) against an
agent, the turn shown as it streams, permission by policy or asked on the terminal, and an
exit code a script can branch on."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import trio

import acpwire
from acp_schema import surface_of, v1, v2
from acpwire import (
    AgentRequests,
    ElicitationRequested,
    PermissionContext,
    PermissionRequested,
    Permissions,
    SessionState,
    SessionUpdateEvent,
    V1SessionState,
    open_agent,
    open_remote,
    open_session,
    prompt,
)
from acpwire.errors import (
    AgentLaunchError,
    ConnectionClosed,
    InitializeTimeout,
    InvalidResponse,
    PeerError,
    ProtocolMismatch,
    RemoteConnectionError,
)

from .asking import Terminal, open_terminal
from .codes import ExitCode, exit_code_of_stop_reason, exit_code_table, output_closed
from .run_output import JsonOutput, Output, TextOutput

if TYPE_CHECKING:
    import acp_schema.v2.unstable as v2u

__all__ = ["add_parser"]

POLICIES = {
    "all": acpwire.approve_all,
    "reads": acpwire.approve_reads,
    "none": acpwire.deny_all,
    "ask": acpwire.ask_user,
}
CANCEL_GRACE = 5.0
"""Seconds a turn cancelled by --timeout has to report its end before acpwire gives up."""

DESCRIPTION = """\
A headless ACP client: start the agent (or connect to it with --url), open a session, send
PROMPT (without one: each line of stdin, one turn each) and show the turn as it streams.

text: the agent's message text on stdout; tool calls, permission decisions, thoughts and
the stop reason on stderr, in brackets. json: one event per line on stdout (initialized,
session, turn_started, update, permission, turn_ended, note, error).

Permission requests are answered by --approve: all (allow every tool), reads (allow reads,
searches and thinking; ask for the rest), none (reject every tool), ask (ask for each, the
default). Asking happens on the terminal (/dev/tty), so stdin and stdout stay free for
prompts and answers; without a terminal what would be asked is rejected.

Ctrl-C cancels the running turn (session/cancel) and waits for the agent to end it; a second
Ctrl-C (or one with no turn running) quits.
"""

EPILOG = f"""\
exit codes (the first turn not ending end_turn sets it; later prompts still run):
{exit_code_table()}

examples:
  acpwire run "Hello" -- python -m acpwire.examples.hello_agent
  acpwire run --approve all --format json "Hi" -- python -m acpwire.fixtures.echo_agent
  printf 'one\\ntwo\\n' | acpwire run --approve none -- my-agent --stdio
  acpwire run --url ws://127.0.0.1:8000/acp "Hi"
"""


def add_parser(subcommands: Any) -> None:
    """Register `run` with its options."""
    parser = subcommands.add_parser(
        "run",
        help="run prompts against an agent, headless",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="acpwire run [options] [PROMPT] -- <agent command...>\n"
        "       acpwire run [options] --url URL [PROMPT]",
    )
    parser.add_argument(
        "prompt", nargs="?", metavar="PROMPT", help="the prompt (default: stdin's lines)"
    )
    parser.add_argument(
        "--protocol",
        type=int,
        choices=(1, 2),
        help="speak only this protocol version (default: offer 2, accept 1)",
    )
    parser.add_argument(
        "--format", choices=("text", "json"), default="text", help="output (default: text)"
    )
    parser.add_argument(
        "--approve",
        choices=tuple(POLICIES),
        default="ask",
        help="how permission requests are answered (default: ask)",
    )
    parser.add_argument(
        "--cwd",
        metavar="DIR",
        help="the session's working directory (default: this one); the agent runs there too",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="seconds each step (initialize, opening the session, each turn) may take (default: no limit; initialize 30)",
    )
    parser.add_argument(
        "--url", help="connect to an agent served over the network instead (needs acpwire[remote])"
    )
    parser.add_argument(
        "--transport",
        choices=("websocket", "http"),
        default="websocket",
        help="with --url: WebSocket or Streamable HTTP (default: websocket)",
    )
    parser.set_defaults(handler=run_command, takes_command=True, subparser=parser)


def run_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`acpwire run`: check the arguments, then run on trio."""
    if args.url and args.command:
        parser.error("give either --url URL or `-- <agent command>`, not both")
    if not args.url and not args.command:
        parser.error(
            "the agent command is missing: acpwire run [options] [PROMPT] -- <agent command>"
        )
    if args.timeout is not None and args.timeout <= 0:
        parser.error("--timeout must be a positive number of seconds")
    cwd = os.path.abspath(args.cwd or os.getcwd())
    if not os.path.isdir(cwd):
        parser.error(f"--cwd {args.cwd}: not a directory")
    output: Output = JsonOutput() if args.format == "json" else TextOutput()
    run = Run(args, cwd, output)
    return int(trio.run(run.main))


@dataclass
class Failure(Exception):
    """Ends the run with `code`."""

    code: ExitCode
    kind: str
    message: str


class Run:
    """One `acpwire run`: the connection, the session and its turns."""

    def __init__(self, args: argparse.Namespace, cwd: str, output: Output) -> None:
        self.args = args
        self.cwd = cwd
        self.output = output
        self.terminal: Terminal | None = None
        self.turn: Any = None  # the running turn (TurnEvents / V1TurnEvents)
        self.cancelling = False
        self.interrupted = False
        self.connected = False
        self.state: CountingState | V1CountingState | None = None  # the session's state
        self.decided: list[tuple[int, str, str, str]] = []  # (updates applied, permission)
        self.shown = 0  # updates of the session shown

    async def main(self) -> ExitCode:
        with trio.open_signal_receiver(signal.SIGINT) as interrupts:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._watch, interrupts, nursery.cancel_scope)
                code = await self._guarded()
                nursery.cancel_scope.cancel()
        return ExitCode.INTERRUPTED if self.interrupted else code

    async def _watch(self, interrupts: AsyncIterator[int], scope: trio.CancelScope) -> None:
        """The first Ctrl-C cancels the running turn; a second one (or one with no turn
        running) quits."""
        async with trio.open_nursery() as nursery:
            async for _ in interrupts:
                if self.turn is not None and not self.cancelling:
                    self.cancelling = True
                    self.output.note("cancelling the turn (Ctrl-C again to quit)")
                    nursery.start_soon(self.turn.cancel)
                else:
                    self.interrupted = True
                    scope.cancel()
                    return

    async def _guarded(self) -> ExitCode:
        self.terminal = open_terminal() if self.args.approve in ("reads", "ask") else None
        try:
            return await self._connected()
        except Failure as failure:
            self.output.error(failure.kind, failure.message, failure.code)
            return failure.code
        except BrokenPipeError:
            return output_closed()
        except Exception as error:
            code, kind = self._classify(error)
            if code is ExitCode.FAILED:
                raise
            self.output.error(kind, str(error), code)
            return code
        finally:
            if self.terminal is not None:
                self.terminal.close()

    def _classify(self, error: Exception) -> tuple[ExitCode, str]:
        if isinstance(error, RemoteConnectionError) and not self.connected:
            return ExitCode.AGENT_NOT_FOUND, "agent not reachable"
        if isinstance(error, AgentLaunchError):
            return ExitCode.AGENT_NOT_FOUND, "agent not found"
        if isinstance(error, InitializeTimeout):
            return ExitCode.TIMEOUT, "timeout"
        if isinstance(error, ProtocolMismatch | InvalidResponse):
            return ExitCode.PROTOCOL_ERROR, "protocol error"
        if isinstance(error, PeerError | ConnectionClosed):
            return ExitCode.AGENT_ERROR, "agent error"
        if isinstance(error, ModuleNotFoundError) and self.args.url:
            return ExitCode.USAGE, "missing extra"  # the message names the install command
        return ExitCode.FAILED, "failed"

    def _open(self, requests: AgentRequests) -> Any:
        v2_client = requests.v2_client if self.args.protocol in (None, 2) else None
        v1_client = requests.v1_client if self.args.protocol in (None, 1) else None
        if self.args.url:
            transport = self.args.transport
            return open_remote(self.args.url, v2=v2_client, v1=v1_client, transport=transport)
        return open_agent(self.args.command, v2=v2_client, v1=v1_client, cwd=self.cwd)

    async def _connected(self) -> ExitCode:
        permissions = Permissions(self._policy())
        requests = AgentRequests(permissions)
        async with self._open(requests) as conn:
            version = self.args.protocol or 2
            name, release = "acpwire-run", acpwire.__version__
            initialize: v2.InitializeRequest | v1.InitializeRequest = (
                v2.InitializeRequest(
                    protocol_version=2, info=v2.Implementation(name=name, version=release)
                )
                if version == 2
                else v1.InitializeRequest(
                    protocol_version=1, client_info=v1.Implementation(name=name, version=release)
                )
            )
            timeout = self.args.timeout if self.args.timeout is not None else 30.0
            await conn.initialize(initialize, timeout=timeout)
            self.connected = True
            view = conn.v2 if conn.protocol_version == 2 else conn.v1
            self.output.initialized(conn.protocol_version, _agent_name(view.initialize_response))
            with self._step("opening the session"):
                opened = await open_session(view, cwd=self.cwd)
            self.output.session(opened.session_id, opened.how)
            self.state = CountingState() if conn.protocol_version == 2 else V1CountingState()
            code = ExitCode.END_TURN
            number = 0
            async for text in self._prompts():
                number += 1
                turn_code = await self._turn(view, requests, opened, number, text)
                if code is ExitCode.END_TURN:
                    code = turn_code
            return code

    @contextlib.contextmanager
    def _step(self, what: str) -> Iterator[None]:
        """Bound one step by --timeout: `Failure(TIMEOUT)` when it runs out."""
        timeout = self.args.timeout
        with trio.move_on_after(timeout if timeout is not None else float("inf")) as scope:
            yield
        if scope.cancelled_caught:
            raise Failure(ExitCode.TIMEOUT, "timeout", f"{what} took longer than {timeout:g} s")

    async def _prompts(self) -> AsyncIterator[str]:
        if self.args.prompt is not None:
            yield self.args.prompt
            return
        while True:
            line = await trio.to_thread.run_sync(sys.stdin.readline, abandon_on_cancel=True)
            if not line:
                return
            if line.strip():
                yield line.rstrip("\n")

    async def _turn(
        self, view: Any, requests: AgentRequests, opened: Any, number: int, text: str
    ) -> ExitCode:
        acp: Any = v2 if view.connection.protocol_version == 2 else v1
        params = acp.PromptRequest(
            session_id=opened.session_id, prompt=[acp.TextContent(text=text)]
        )
        self.output.turn_started(number, text)
        self.cancelling = False
        timed_out = False
        async with prompt(view, requests, params, state=self.state) as turn:
            self.turn = turn
            try:
                with trio.move_on_after(self.args.timeout or float("inf")) as scope:
                    await self._events(turn)
                if scope.cancelled_caught:
                    timed_out = True
                    self.output.note(
                        f"the turn took longer than {self.args.timeout:g} s: cancelling it"
                    )
                    await turn.cancel()
                    with trio.move_on_after(CANCEL_GRACE):
                        await self._events(turn)
            finally:
                self.turn = None
        if timed_out:
            self.output.turn_ended(number, turn.stop_reason, ExitCode.TIMEOUT)
            raise Failure(
                ExitCode.TIMEOUT,
                "timeout",
                f"turn {number} did not end within {self.args.timeout:g} s",
            )
        code = exit_code_of_stop_reason(turn.stop_reason)
        self.output.turn_ended(number, turn.stop_reason, code)
        return code

    async def _events(self, turn: Any) -> None:
        async for event in turn:
            if isinstance(event, SessionUpdateEvent):
                self.shown += 1
                self.output.update(event.update)
                self._show_decided()
            elif isinstance(event, PermissionRequested):
                await self._ask(event, turn.state)
            elif isinstance(event, ElicitationRequested):
                surface = surface_of(event.request)
                assert surface is not None  # a generated request
                event.respond(surface.module.CancelElicitationResponse())
                self.output.note("an elicitation was declined (acpwire run does not answer forms)")

    async def _ask(self, event: PermissionRequested[Any], state: Any) -> None:
        title = _permission_title(event.request, state)
        assert self.terminal is not None  # the policy asks only when there is one
        option_id = await self.terminal.choose(title, event.request.options)
        if option_id is None:
            event.cancel()
            self.output.permission(title, "cancelled", "asked")
        else:
            event.select(option_id)
            self.output.permission(title, option_id, "asked")

    def _policy(self) -> Callable[[PermissionContext], Any]:
        """The --approve policy, reporting what it decides; with nobody to ask, asking
        rejects."""
        policy = POLICIES[self.args.approve]
        by = f"--approve {self.args.approve}"
        if self.terminal is None and self.args.approve in ("reads", "ask"):
            by += ", no terminal to ask on"

        def decide(context: PermissionContext) -> Any:
            decision = policy(context)
            if decision == "ask" and self.terminal is None:
                decision = "reject"
            if decision != "ask":
                applied = self.state.applied if self.state is not None else 0
                self.decided.append((applied, _context_title(context), decision, by))
                self._show_decided()
            return decision

        return decide

    def _show_decided(self) -> None:
        """Show the policy's decisions at their place among the updates: a request is
        decided when it arrives, the updates before it may not be shown yet."""
        while self.decided and self.decided[0][0] <= self.shown:
            _, title, decision, by = self.decided.pop(0)
            self.output.permission(title, decision, by)


class CountingState(SessionState):
    """A v2 session state counting the updates folded into it."""

    applied = 0

    def apply(self, update: v2.SessionUpdate | v2u.SessionUpdate) -> None:
        self.applied += 1
        super().apply(update)


class V1CountingState(V1SessionState):
    """A v1 session state counting the updates folded into it."""

    applied = 0

    def apply(self, update: Any) -> None:
        self.applied += 1
        super().apply(update)


def _agent_name(response: v2.InitializeResponse | v1.InitializeResponse) -> str:
    info = response.info if isinstance(response, v2.InitializeResponse) else response.agent_info
    if isinstance(info, (v2.Implementation, v1.Implementation)):
        return f"{info.name} {info.version}"
    return "an agent without info"


def _context_title(context: PermissionContext) -> str:
    return context.title or context.command or context.tool_call_id or "permission"


def _permission_title(request: Any, state: Any) -> str:
    title = getattr(request, "title", None)
    if isinstance(title, str):
        return title
    tool_call = getattr(request, "tool_call", None)
    call = state.tool_calls.get(getattr(tool_call, "tool_call_id", None))
    return str(getattr(call, "title", None) or "permission")
