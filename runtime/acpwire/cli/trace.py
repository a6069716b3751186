"""`acpwire trace --out FILE -- <agent command>`: a transparent tap between an editor and an
agent. The editor runs it instead of the agent; the tap runs the agent, forwards the bytes
unchanged both ways and writes each line to FILE (`trace_format`) with its time and side.

Two threads forward (stdin -> the agent's stdin, the agent's stdout -> stdout), each writing
what it read downstream, then queueing it with its time for a third thread that records the
lines (`Recorder`); the main thread waits for the agent and passes signals on. The agent's stderr is this process's (passed through as it is).
"""

from __future__ import annotations

import argparse
import collections
import datetime
import os
import re
import resource
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

from acpwire import __version__

from .trace_format import DEFAULT_RULES, Redactor, TraceWriter

__all__ = ["add_parser"]

READ_SIZE = 1 << 16
EOF_GRACE = 1.0
"""After the agent exits, how long its stdout may stay open with nothing moving (a process it
left holds it) before the tap stops forwarding it."""
FORWARDED_SIGNALS = (
    signal.SIGTERM,
    signal.SIGINT,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
)
NOT_FOUND, NOT_EXECUTABLE = 127, 126  # as a shell says it

DESCRIPTION = """\
A transparent tap between an editor and an agent: in the editor's settings, the agent
command `my-agent --acp` becomes `acpwire trace --out /tmp/acp.trace -- my-agent --acp`.

The bytes are forwarded unchanged both ways; each line is also written to FILE with a
monotonic timestamp and the side that wrote it (NDJSON, a header line first: README
"Trace files"). Secrets are replaced in the trace only, never in what is forwarded:
`env` and `headers` values, authenticate / auth/login params, and whatever a --redact
pattern matches. The agent's stderr is passed through; its exit code (or the signal that
ended it) is this command's; SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are
passed on to it. EOF either way is passed on as a closed pipe would: stdin's end closes the
agent's stdin; the editor closing its end makes the agent's next write fail.

`acpwire show FILE` renders the trace.
"""

EPILOG = """\
exit code: the agent's; 128+N when a signal N ended it and could not be re-raised; 127
when the agent command is not found, 126 when it is not executable, 2 for a wrong command
line.

example:
  acpwire trace --out session.trace -- python -m acpwire.examples.hello_agent
"""


def add_parser(subcommands: Any) -> None:
    """Register `trace` with its options."""
    parser = subcommands.add_parser(
        "trace",
        help="run an agent behind a recording tap (for an editor's agent command)",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="acpwire trace --out FILE [--redact PATTERN]... -- <agent command...>",
    )
    parser.add_argument("--out", required=True, metavar="FILE", help="the trace file (replaced)")
    parser.add_argument(
        "--redact",
        action="append",
        default=[],
        metavar="PATTERN",
        help="a regular expression whose matches are replaced in the trace (repeatable)",
    )
    parser.set_defaults(handler=trace_command, takes_command=True, subparser=parser)


def trace_command(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    """`acpwire trace`: check the arguments, then tap."""
    if not args.command:
        parser.error("the agent command is missing: acpwire trace --out FILE -- <agent command>")
    for pattern in args.redact:
        try:
            re.compile(pattern)
        except re.error as error:
            parser.error(f"--redact {pattern!r}: not a regular expression ({error})")
    try:
        out = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError as error:
        parser.error(f"--out {args.out}: {error.strerror}")
    try:
        return Tap(args.command, out, Redactor(args.redact)).run()
    finally:
        os.close(out)


class Tap:
    """The agent, its two forwarding threads and the trace."""

    def __init__(self, command: list[str], out: int, redactor: Redactor) -> None:
        self.command = command
        self.start = time.monotonic()
        started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        header = {
            "started": started,
            "command": command,
            "redacted": list(DEFAULT_RULES),
            "patterns": redactor.patterns,
            "acpwire": __version__,
        }
        self.trace = TraceWriter(out, header, redactor)
        self.recorder = Recorder(self.trace)

    def run(self) -> int:
        try:
            agent = subprocess.Popen(
                self.command,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                bufsize=0,
                process_group=0,  # signals reach it through this tap only: never twice
            )
        except FileNotFoundError:
            return self._failed(NOT_FOUND, "not found")
        except PermissionError:
            return self._failed(NOT_EXECUTABLE, "not executable")
        except BaseException:
            self.recorder.close()
            raise
        assert agent.stdin is not None and agent.stdout is not None
        previous = {
            number: signal.signal(number, lambda number, _: _pass_on(agent, number))
            for number in FORWARDED_SIGNALS
        }
        to_agent = self._forward(sys.stdin.fileno(), agent.stdin.fileno(), b"client")
        to_editor = self._forward(agent.stdout.fileno(), sys.stdout.fileno(), b"agent")
        cpu = _cpu_seconds()
        to_agent.start()
        to_editor.start()
        returncode = agent.wait()
        self._drain(to_editor)
        self.recorder.close()
        for number, handler in previous.items():
            signal.signal(number, handler)
        cpu = round(_cpu_seconds() - cpu, 6)
        if returncode < 0:
            self.trace.event(self._now(), exit={"signal": -returncode}, cpu=cpu)
            _die_of(-returncode)
            return 128 - returncode
        self.trace.event(self._now(), exit={"code": returncode}, cpu=cpu)
        return returncode

    def _drain(self, to_editor: threading.Thread) -> None:
        """Forward what the agent wrote before it exited, however slowly the editor reads it
        (a pipe keeps it too); stop waiting only once nothing came for `EOF_GRACE` seconds
        with nothing left to write (a process the agent left holds its stdout open)."""
        while to_editor.is_alive():
            moved = self.recorder.chunks
            to_editor.join(EOF_GRACE)
            if self.recorder.chunks == moved and not self.recorder.writing[b"agent"]:
                return

    def _failed(self, code: int, what: str) -> int:
        self.recorder.close()
        self.trace.event(self._now(), exit={"code": code})
        sys.stderr.write(f"acpwire trace: agent command {self.command[0]!r}: {what}\n")
        return code

    def _now(self) -> float:
        return time.monotonic() - self.start

    def _forward(self, source: int, sink: int, side: bytes) -> threading.Thread:
        return threading.Thread(
            target=forward,
            args=(source, sink, side, self.recorder, self.start),
            name=f"acpwire trace: {side.decode()}",
            daemon=True,  # stdin's reader may block for ever: it must not keep us alive
        )


def forward(source: int, sink: int, side: bytes, recorder: Recorder, start: float) -> None:
    """Copy `source` to `sink` as it comes, handing each chunk to the recorder (with the time
    it was read, before writing it on: so the trace's order is causal, never a peer's answer
    before what it answers); at EOF close `sink`; when `sink`'s reader went away, stop
    reading `source` and close it."""
    read, write, clock, chunk, writing = (
        os.read,
        os.write,
        time.monotonic,
        recorder.chunk,
        recorder.writing,
    )
    broken = False
    while True:
        try:
            data = read(source, READ_SIZE)
        except OSError:
            data = b""
        if not data:
            break
        writing[side] = True
        chunk(clock() - start, side, data)  # queued before the peer can see it and answer
        try:
            view = memoryview(data)
            while view:
                view = view[write(sink, view) :]
        except OSError:
            broken = True
        writing[side] = False
        if broken:
            break
    recorder.eof(clock() - start, side, broken)
    _close(sink)
    if broken:
        _close(source)


class Recorder:
    """Turns the forwarded chunks into trace records, off the forwarding path: the forwarding
    threads only queue each chunk with its time; this thread splits them into lines and
    writes them in batches, every few milliseconds while traffic flows."""

    BUSY_WAIT = 0.002
    IDLE_WAIT = 0.05

    def __init__(self, trace: TraceWriter) -> None:
        self.trace = trace
        self.queue: collections.deque[tuple[float, bytes, bytes | None, bool]] = collections.deque()
        self.partial: dict[bytes, list[bytes]] = {b"client": [], b"agent": []}
        self.chunks = 0  # forwarded so far, both ways
        self.writing = {b"client": False, b"agent": False}  # a chunk being written downstream
        self.stopping = threading.Event()
        self.thread = threading.Thread(
            target=self._run, name="acpwire trace: recorder", daemon=True
        )
        self.thread.start()

    def chunk(self, seconds: float, side: bytes, data: bytes) -> None:
        """`side` wrote `data` (received `seconds` after the start)."""
        self.queue.append((seconds, side, data, False))
        self.chunks += 1

    def eof(self, seconds: float, side: bytes, broken: bool) -> None:
        """`side` closed its output (`broken`: its reader went away first)."""
        self.queue.append((seconds, side, None, broken))

    def close(self) -> None:
        """Record what is queued, then stop."""
        self.stopping.set()
        self.thread.join()

    def _run(self) -> None:
        wait = self.BUSY_WAIT
        while not self.stopping.wait(wait):
            wait = self.BUSY_WAIT if self._drain() else min(wait * 2, self.IDLE_WAIT)
        self._drain()

    def _drain(self) -> bool:
        queue, took = self.queue, False
        while queue:
            took = True
            seconds, side, data, broken = queue.popleft()
            if data is None:
                self._ended(seconds, side, broken)
            else:
                self._lines(seconds, side, data)
        return took

    def _lines(self, seconds: float, side: bytes, data: bytes) -> None:
        partial = self.partial[side]
        if b"\n" not in data:
            partial.append(data)
            return
        if partial:
            partial.append(data)
            data = b"".join(partial)
            partial.clear()
        lines = data.split(b"\n")
        last = lines.pop()
        if last:
            partial.append(last)
        self.trace.lines(seconds, side, lines)

    def _ended(self, seconds: float, side: bytes, broken: bool) -> None:
        partial = self.partial[side]
        if partial:
            self.trace.lines(seconds, side, [b"".join(partial)], unterminated=True)
            partial.clear()
        fields = {"broken": True} if broken else {}
        self.trace.event(seconds, **{"from": side.decode(), "eof": True, **fields})


def _cpu_seconds() -> float:
    """This process's CPU time (user + system), its children's aside."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _close(fd: int) -> None:
    try:
        os.close(fd)
    except OSError:
        pass


def _pass_on(agent: subprocess.Popen[bytes], number: int) -> None:
    if agent.returncode is None:
        try:
            agent.send_signal(number)
        except ProcessLookupError:
            pass


def _die_of(number: int) -> None:
    """End this process by the signal that ended the agent (when it can end a process)."""
    handler: Callable[[int, Any], Any] | int = signal.SIG_DFL
    try:
        signal.signal(number, handler)
        sys.stdout.flush()
        os.kill(os.getpid(), number)
    except (OSError, ValueError):
        return
