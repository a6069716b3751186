"""Playing one side of a recorded trace against a live peer over a byte stream, and noting
where the peer diverges from the recording (`Replayer`); `acpwire replay` and
`acpwire.testing.FakeAgent.from_trace` run it.

The script is played in recorded order. Before sending one of its messages, the replayer
waits (at most `timeout` seconds) for the peer's messages recorded before it; what has not
come by then is *missing* (*late* if it comes afterwards). Each live message is matched to a
recorded one of the peer's not matched yet: a response by the request it answers (ids are
remapped: the replayer's requests keep their recorded ids, its responses take the live
request's id), a request or a notification by its kind (method, and `sessionUpdate` for
updates), those due now before the overdue ones, earliest first, preferring one of its shape.
By shape, a run of recorded chunks of one kind is matched as its first chunk, and live
chunks following a matched chunk of their kind join it (chunking differs from run to run). A
live message that matches nothing recorded is *unexpected* (a request is then answered
-32603, so the peer does not wait for ever); one that matches but differs is *different*
(`replay_match` says how they are compared).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

import anyio
import msgspec
import trio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from acpwire.streams import ByteStream

from .replay_match import IdMap, differences, kind_of, substituted
from .replay_script import Recorded, Script, Side, other_side

__all__ = ["Divergence", "Replayer"]

Kind = Literal["missing", "late", "unexpected", "different", "not JSON"]
NOT_RECORDED = -32603
SHOWN = 100
"""How many characters of a live message a divergence shows."""

Incoming = dict[str, Any] | str
"""A live line: the message, or the text of a line that is not a JSON object."""
Inbox = MemoryObjectReceiveStream[Incoming]

GONE = (
    OSError,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    trio.BrokenResourceError,
    trio.ClosedResourceError,
)
"""What sending to or reading from a peer that went away raises (on either loop)."""

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.Decoder().decode


@dataclass(frozen=True)
class Divergence:
    """One place where the live peer did not do what the recording says."""

    kind: Kind
    """`missing` (recorded, did not come in time), `late` (came after the replay's next
    message), `unexpected` (matches nothing recorded), `different` (matches a recorded
    message, differs from it), `not JSON` (a line that is no JSON object)."""
    line: int
    """The trace line concerned: the recorded message missing or differing; for a live
    message that matches nothing, the last recorded line played (sent or matched) before it
    arrived (0: none yet)."""
    what: str
    """The message concerned (`agent session/update tool_call`)."""
    detail: str
    """How it diverges."""
    times: int = 1
    """How many live messages in a row it stands for (unexpected ones of one kind: the
    detail shows the first)."""

    def __str__(self) -> str:
        where = (
            f"line {self.line}"
            if self.kind in ("missing", "late", "different")
            else (f"after line {self.line}" if self.line else "before any recorded line")
        )
        times = f" ({self.times} in a row)" if self.times > 1 else ""
        return f"{where} ({self.what}): {self.kind}{times}: {self.detail}"


@dataclass
class _Expected:
    """A message the peer is expected to send."""

    recorded: Recorded
    done: bool = False
    """Matched to a live message."""
    live_id: Any = None
    """For a request: the id the live peer gave it."""
    overdue: Divergence | None = None
    """Not come in time: its `missing` divergence (replaced by a `late` one if it comes)."""
    due: str = ""
    """When it was due: `before line N` (the replay's message it was recorded before)."""
    answer: Recorded | None = None
    """For an overdue request: the replay's recorded response to it, sent when it comes."""


class Replayer:
    """Plays `plays` (`client` or `agent`) of `script` against the peer on a stream."""

    def __init__(
        self,
        script: Script,
        plays: Side,
        *,
        strict: bool = False,
        timeout: float = 10.0,
        first_wait: float | None = None,
        end_wait: float | None = None,
    ) -> None:
        self.script = script
        self.plays = plays
        self.peer = other_side(plays)
        self.strict = strict
        self.timeout = timeout
        """Seconds to wait for the peer's messages recorded before each one the replay sends
        (`math.inf`: as long as it takes)."""
        self.first_wait = timeout if first_wait is None else first_wait
        """The same until the peer sent its first message (its start may take longer)."""
        self.end_wait = end_wait
        """Once the script is played: seconds to wait for the peer to close the connection
        (what comes meanwhile is checked too); None: wait as long as it takes."""
        self.divergences: list[Divergence] = []
        self.sent = 0
        self.matched = 0
        self.ids = IdMap()
        self._expected = [
            _Expected(recorded)
            for recorded in script.messages
            if recorded.side == self.peer
            and not recorded.eof
            and not (recorded.in_run and not strict)
        ]
        self._by_recorded = {id(e.recorded): e for e in self._expected}
        self._by_kind: dict[str, list[_Expected]] = {}  # requests and notifications
        for expected in self._expected:
            if not expected.recorded.is_response:
                self._by_kind.setdefault(expected.recorded.kind, []).append(expected)
        self._responses = {
            id(e.recorded.answers): e
            for e in self._expected
            if e.recorded.is_response and e.recorded.answers is not None
        }
        self._my_requests: dict[str, Recorded] = {}  # by the id sent (JSON)
        self._last: _Expected | None = None
        self._played = 0  # the last line of the trace played (sent or matched)
        self._closed = False
        self._heard = False  # the peer sent something

    async def run(self, stream: ByteStream) -> list[Divergence]:
        """Play the script over `stream` (closed by the caller); the divergences, in the
        order of their lines in the trace."""
        sender, inbox = anyio.create_memory_object_stream[Incoming](math.inf)
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(_read_lines, stream, sender)
            try:
                await self._play(stream, inbox)
            finally:
                tasks.cancel_scope.cancel()
        self.divergences.sort(key=lambda divergence: divergence.line)
        return self.divergences

    async def _play(self, stream: ByteStream, inbox: Inbox) -> None:
        window: list[_Expected] = []
        closes = False  # the peer closed its output before the replay's next message
        for recorded in self.script.messages:
            if recorded.side == self.peer:
                if id(recorded) in self._by_recorded:
                    window.append(self._by_recorded[id(recorded)])
                closes = closes or recorded.eof
                continue
            await self._settle(window, stream, inbox, f"before line {recorded.line}", closes)
            window, closes = [], False
            if self._closed:
                continue  # the peer is gone: what it was to send is reported missing
            if recorded.eof:
                send_eof = getattr(stream, "send_eof", None)
                if send_eof is not None:
                    with contextlib.suppress(*GONE):
                        await send_eof()
                continue
            await self._send(recorded, stream)
        await self._settle(window, stream, inbox, "by the end of the script", closes)
        await self._until_closed(stream, inbox)

    async def _settle(
        self, window: list[_Expected], stream: ByteStream, inbox: Inbox, due: str, closes: bool
    ) -> None:
        """Take live messages until the window's expected ones all came, and the peer closed
        the connection if it `closes` there (or until the time is up, or the peer closed it);
        those that did not come are missing (late if they come afterwards)."""
        limit = self.timeout if self._heard else self.first_wait
        with anyio.move_on_after(limit):
            while not self._closed and (closes or any(not e.done for e in window)):
                await self._receive(stream, inbox)
        for expected in window:
            if not expected.done and expected.overdue is None:
                why = (
                    "the peer closed the connection first"
                    if self._closed
                    else f"not received within {limit:g} s"
                )
                expected.overdue = self._diverged("missing", expected.recorded, why)
                expected.due = due

    async def _until_closed(self, stream: ByteStream, inbox: Inbox) -> None:
        with anyio.move_on_after(math.inf if self.end_wait is None else self.end_wait):
            while not self._closed:
                await self._receive(stream, inbox)

    async def _receive(self, stream: ByteStream, inbox: Inbox) -> None:
        try:
            message = await inbox.receive()
        except anyio.EndOfStream:
            self._closed = True
            return
        self._heard = True
        await self._take(message, stream)

    async def _send(self, recorded: Recorded, stream: ByteStream) -> None:
        message = substituted(recorded.message, self.ids)
        if recorded.is_response:
            request = self._by_recorded.get(id(recorded.answers))
            if request is None:
                return  # it answers no request of the recording
            if request.live_id is None:
                request.answer = recorded  # sent if the request comes late
                return
            message["id"] = request.live_id
        elif recorded.is_request:
            self._my_requests[_key(message["id"])] = recorded
        try:
            await _send_line(stream, message)
        except GONE:
            self._closed = True
            return
        self.sent += 1
        self._played = max(self._played, recorded.line)

    async def _take(self, message: Incoming, stream: ByteStream) -> None:
        """A live message from the peer: match it, compare it, answer what matches nothing."""
        if isinstance(message, str):
            self._unexpected("not JSON", f"{self.peer} line", message)
            return
        if "method" not in message:
            self._take_response(message)
            return
        kind = kind_of(message)
        expected = self._match(kind, message)
        if expected is None:
            self._unexpected("unexpected", f"{self.peer} {kind}", _encode(message).decode())
            if "id" in message:
                await self._refuse(message, stream)
            return
        expected.live_id = message.get("id")
        self._compare(expected, message)
        if expected.answer is not None:
            answer, expected.answer = expected.answer, None
            await self._send(answer, stream)

    def _take_response(self, message: dict[str, Any]) -> None:
        request = self._my_requests.pop(_key(message.get("id")), None)
        expected = self._responses.get(id(request)) if request is not None else None
        if expected is None or expected.done:
            what = f"{self.peer} response" + (f" to {kind_of(request.message)}" if request else "")
            self._unexpected("unexpected", what, _encode(message).decode())
            return
        self._compare(expected, message)

    def _match(self, kind: str, message: dict[str, Any]) -> _Expected | None:
        last = self._last
        if (
            last is not None
            and last.recorded.is_chunk
            and not self.strict
            and last.recorded.kind == kind
        ):
            return last
        candidates = sorted(  # the ones due now first, then the overdue ones
            (expected for expected in self._by_kind.get(kind, ()) if not expected.done),
            key=lambda expected: expected.overdue is not None,
        )
        for expected in candidates:
            if not differences(
                _body(expected.recorded.message), _body(message), strict=self.strict
            ):
                return expected
        return candidates[0] if candidates else None

    def _compare(self, expected: _Expected, message: dict[str, Any]) -> None:
        if expected.overdue is not None:
            self.divergences.remove(expected.overdue)
            expected.overdue = None
            detail = f"recorded {expected.due}, came after it"
            self._diverged("late", expected.recorded, detail)
        expected.done = True
        self._last = expected
        self._played = max(self._played, expected.recorded.line)
        self.matched += 1
        found = differences(
            _body(expected.recorded.message), _body(message), strict=self.strict, ids=self.ids
        )
        if found:
            self._diverged("different", expected.recorded, "; ".join(found))

    async def _refuse(self, request: dict[str, Any], stream: ByteStream) -> None:
        error = {
            "code": NOT_RECORDED,
            "message": f"acpwire replay: no {kind_of(request)} request of this shape is "
            f"left in the recording {self.script.path.name}",
        }
        with contextlib.suppress(*GONE):
            await _send_line(stream, {"jsonrpc": "2.0", "id": request["id"], "error": error})

    def _diverged(self, kind: Kind, recorded: Recorded, detail: str) -> Divergence:
        divergence = Divergence(kind, recorded.line, f"{recorded.side} {recorded.kind}", detail)
        self.divergences.append(divergence)
        return divergence

    def _unexpected(self, kind: Kind, what: str, shown: str) -> None:
        line = self._played
        if len(shown) > SHOWN:
            shown = shown[: SHOWN - 3] + "..."
        detail = f"nothing recorded matches it: {shown}" if kind == "unexpected" else shown
        last = self.divergences[-1] if self.divergences else None
        if last is not None and (last.kind, last.line, last.what) == (kind, line, what):
            self.divergences[-1] = dataclasses.replace(last, times=last.times + 1)
            return
        self.divergences.append(Divergence(kind, line, what, detail))


def _body(message: dict[str, Any]) -> dict[str, Any]:
    """A message but its JSON-RPC id (never compared)."""
    return {key: value for key, value in message.items() if key != "id"}


def _key(request_id: Any) -> str:
    return _encode(request_id).decode()


async def _send_line(stream: ByteStream, message: dict[str, Any]) -> None:
    await stream.send_all(_encode(message) + b"\n")


async def _read_lines(stream: ByteStream, inbox: MemoryObjectSendStream[Incoming]) -> None:
    """The peer's lines, decoded (a line that is not JSON as its text), until EOF."""
    pending = b""
    async with inbox:
        while True:
            try:
                data = await stream.receive_some()
            except GONE:
                data = b""
            if not data:
                break
            *lines, pending = (pending + bytes(data)).split(b"\n")
            for line in lines:
                if line.strip():
                    await inbox.send(_decoded(line))
        if pending.strip():
            await inbox.send(_decoded(pending))


def _decoded(line: bytes) -> Incoming:
    try:
        message = _decode(line)
    except msgspec.DecodeError:
        return line.decode(errors="replace")
    return message if isinstance(message, dict) else line.decode(errors="replace")
