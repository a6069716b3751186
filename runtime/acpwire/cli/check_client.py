"""`acpwire check --client`: how the scripted agent (`check_client_agent`) meets the client.

Clients spawn their agent themselves (an editor's agent command, the SDK example clients'
`-- <agent command>`), so the usual way is a relay: acpwire listens on a Unix socket and the
client command gets, where it says `{agent}` (a whole argument, or inside one, as
`--agent={agent}`: see `with_agent`), the command of a tiny relay process
(`acpwire check --client --serve SOCKET`) that joins its stdio to that socket; the scripted
agent itself runs in the checker, which prints the table. Without a client command the
checker prints that agent command and waits for a client (an editor) to run it. A client
command without `{agent}` is spawned with its stdin/stdout as the agent's connection: for a
client that speaks ACP on its own stdio.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass

import trio

from .check_client_agent import ClientOutcome, ScriptedAgent
from .check_client_wire import ClientWire
from .check_peer import AgentNotStarted, ended

__all__ = ["PLACEHOLDER", "ClientSettings", "check_client", "relay", "serve_command"]

PLACEHOLDER = "{agent}"
EXIT_GRACE = 5.0
"""Seconds the client has to exit once the scripted agent closed its connection."""


@dataclass(frozen=True)
class ClientSettings:
    command: Sequence[str]
    """The client command (empty: wait for a client to run the printed agent command)."""
    protocol: int | None
    timeout: float
    cwd: str


def serve_command(socket_path: str) -> list[str]:
    """The agent command a client runs to reach the checker listening at `socket_path`."""
    return [sys.executable, "-m", "acpwire", "check", "--client", "--serve", socket_path]


def with_agent(command: Sequence[str], agent: Sequence[str]) -> list[str]:
    """`command` with `{agent}` replaced: an argument that is just `{agent}` by the agent
    command's arguments, one that contains it by the command quoted for a shell."""
    out: list[str] = []
    for argument in command:
        if argument == PLACEHOLDER:
            out += agent
        else:
            out.append(argument.replace(PLACEHOLDER, shlex.join(agent)))
    return out


async def check_client(settings: ClientSettings) -> ClientOutcome:
    """Run the scripted agent against the client; raises `AgentNotStarted` (for the client)
    when it cannot be started or exits without connecting."""
    outcome = ClientOutcome()
    if settings.command and not any(PLACEHOLDER in a for a in settings.command):
        await _over_stdio(settings, outcome)
        return outcome
    with tempfile.TemporaryDirectory(prefix="acpwire-check-") as folder:
        path = os.path.join(folder, "agent.sock")
        sock = trio.socket.socket(trio.socket.AF_UNIX, trio.socket.SOCK_STREAM)
        await sock.bind(path)
        sock.listen(1)
        listener = trio.SocketListener(sock)
        agent = serve_command(path)
        if not settings.command:
            print(
                "acpwire check --client: waiting for a client; its agent command:\n  "
                + shlex.join(agent),
                file=sys.stderr,
                flush=True,
            )
            async with listener:
                stream = await listener.accept()
            await _serve(settings, outcome, stream, stream)
            return outcome
        await _spawned_with_relay(settings, outcome, listener, with_agent(settings.command, agent))
    return outcome


async def _serve(
    settings: ClientSettings,
    outcome: ClientOutcome,
    send: trio.abc.SendStream,
    receive: trio.abc.ReceiveStream,
) -> None:
    wire = ClientWire(send, receive, outcome.transcript)
    outcome.transcript.processes = 1
    await ScriptedAgent(wire, outcome, settings.protocol, settings.timeout).run()
    with trio.CancelScope(shield=True):
        await send.aclose()


async def _start(command: Sequence[str], cwd: str, stdin: int, stdout: int) -> trio.Process:
    try:
        return await trio.lowlevel.open_process(
            list(command),
            cwd=cwd,
            stdin=stdin,
            stdout=stdout,
            process_group=0,  # ended() stops the client behind a shim too: see there
        )
    except OSError as error:
        raise AgentNotStarted(f"{command[0]}: {error.strerror or error}") from error


async def _over_stdio(settings: ClientSettings, outcome: ClientOutcome) -> None:
    process = await _start(settings.command, settings.cwd, subprocess.PIPE, subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    try:
        await _serve(settings, outcome, process.stdin, process.stdout)
    finally:
        await ended(process, EXIT_GRACE, group=True)


async def _spawned_with_relay(
    settings: ClientSettings,
    outcome: ClientOutcome,
    listener: trio.SocketListener,
    command: list[str],
) -> None:
    # The client's stdout goes to our stderr: ours is the table.
    process = await _start(command, settings.cwd, subprocess.DEVNULL, sys.stderr.fileno())
    try:
        stream: trio.SocketStream | None = None
        async with trio.open_nursery() as nursery:

            async def exited() -> None:
                await process.wait()
                await trio.sleep(0.5)  # a relay that connected just before
                nursery.cancel_scope.cancel()

            nursery.start_soon(exited)
            async with listener:
                stream = await listener.accept()
            nursery.cancel_scope.cancel()
        if stream is None:
            raise AgentNotStarted(
                f"the client exited with code {process.returncode} without starting its agent "
                f"(is `{PLACEHOLDER}` where the client command takes the agent command?)"
            )
        await _serve(settings, outcome, stream, stream)
    finally:
        await ended(process, EXIT_GRACE, group=True)


async def relay(socket_path: str) -> None:
    """`--serve SOCKET`: this process's stdin to the checker's socket, the socket to stdout,
    until either side ends."""
    stream = await trio.open_unix_socket(socket_path)
    stdin = trio.lowlevel.FdStream(os.dup(sys.stdin.fileno()))
    stdout = trio.lowlevel.FdStream(os.dup(sys.stdout.fileno()))

    async def pump(source: trio.abc.ReceiveStream, sink: trio.abc.SendStream) -> None:
        try:
            while chunk := await source.receive_some():
                await sink.send_all(chunk)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass

    async with trio.open_nursery() as nursery:

        async def to_checker() -> None:
            await pump(stdin, stream)
            try:
                await stream.send_eof()
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                nursery.cancel_scope.cancel()

        async def from_checker() -> None:
            await pump(stream, stdout)
            await stdout.aclose()
            nursery.cancel_scope.cancel()

        nursery.start_soon(to_checker)
        nursery.start_soon(from_checker)
    await stream.aclose()
