"""One JSON-RPC connection on trio or asyncio: a reader task, handler tasks, a serialized send path.

The limits are `ConnectionOptions` (options.py). What the layers above use of a running
connection besides sending is `RunningConnection` (running.py); after `initialize` their
endpoint switches it to the negotiated surface with `switch_to`, its one change of state.

- Requests run concurrently, at most `max_concurrent_requests` at once; as many more wait
  in a backlog, and past that a request is refused with an error, so tasks and memory stay
  bounded (the reader itself never waits: handlers may wait for answers only it reads).
  A request's handler starts on the reader, as soon as the request is read, in a copy of the
  reader's context: one that finishes without waiting is answered there, with no task of its
  own (most requests: latency). The first time a handler waits, the task it runs in becomes
  that request's task and a new reader task carries on reading, so a handler that blocks
  never stalls the reader. A handler that waits runs in a cancel scope of its own, so
  `$/cancel_request` can stop it. Whatever happens, the request gets exactly one response:
  its result, the handler's `RpcError`, -32603 for any other exception (a result of the
  wrong type, an error the peer answered a nested request of the handler with: see
  `PeerError`), or -32800 when it was cancelled.
- Notifications run in order on the reader task (session updates must arrive in order), so
  their handlers should be quick.
- Sends go through a bounded outbox drained by one writer task (outbox.py): bursts are
  written together, and a slow reader slows the writer instead of growing memory.
- A line hook (`ConnectionOptions.on_line`, line_hook.py) sees each line as it is read, before
  it is processed, and each message as it is queued; without one, reading tests it once a
  read and sending not at all (a plain `Outbox`).
- Instrumentation (`ConnectionOptions.telemetry`, telemetry.py: OpenTelemetry spans) wraps
  the dispatch and our requests and notifications; without one, a request or notification
  sent tests it once (`is None`) and incoming calls not at all.
- When the peer closes the stream, requests still waiting fail with `ConnectionClosed`, and
  the requests it sent are still answered: their handlers get `eof_grace_period` seconds to
  finish, then are cancelled and answered with an error saying the input ended.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import logging
import types
import uuid
from collections.abc import Awaitable, Callable, Coroutine, Generator, Sequence
from typing import Any, TypeVar, TypeVarTuple, Unpack

import msgspec
from msgspec import UNSET

from acp_schema import MessageCodec, MethodMessage, MethodSpec

from .._loop import (
    TASK_STATUS_IGNORED,
    CancelScope,
    Loop,
    Nursery,
    TaskStatus,
    current_loop,
    stream_errors,
)
from .._loop import Event as LoopEvent
from ..errors import ConnectionClosed, PeerError, RpcError
from ..streams.byte_stream import AnyByteStream, byte_stream, close_sending
from .dispatch import (
    RESULT_SHAPES,
    DirectRoute,
    Dispatch,
    WrongResult,
    checked_result,
    result_shape_of,
)
from .framing import LineBlock, LineReader
from .jsonrpc import Answer, Call, CheckedJsonRpcCore, Event, JsonRpcCore, Reply, RequestId
from .line_hook import HookedOutbox, LineHook
from .log_flood import WarningFlood
from .options import ConnectionOptions
from .outbox import Outbox
from .telemetry import ConnectionInstrumentation
from .versions import Side

log = logging.getLogger("acpwire")

P = TypeVar("P")
R = TypeVar("R")
Ts = TypeVarTuple("Ts")

CANCEL_REQUEST = "$/cancel_request"
READ_CHUNK = 64 * 1024
ADMIT_PATIENCE = 8  # scheduler passes to wait for a free slot before refusing a request
SNIPPET_BYTES = 120
# What the side that wrote a line that is not JSON must do instead (None: a side not known).
NON_JSON_ADVICE: dict[Side | None, str] = {
    "agent": "Agents must send JSON-RPC messages only (over stdio: on stdout) and log to stderr.",
    "client": (
        "Clients must send JSON-RPC messages only (over stdio: to the agent's stdin, one a line)."
    ),
    None: "Only JSON-RPC messages may be written to the protocol stream.",
}
DEFAULT_OPTIONS = ConnectionOptions()


class _Waiter:
    """One of our requests waiting for its answer (an Event for its one waiter: cheaper than
    a channel, and than an Event any number of tasks may wait for on asyncio)."""

    __slots__ = ("answer", "done", "taken")

    def __init__(self, done: LoopEvent) -> None:
        self.answer: Answer | None = None
        self.done = done
        self.taken = False  # its caller resumed (with the answer, or without: it gave up)


class _Handling(msgspec.Struct, gc=False):
    """An incoming request from its arrival until its answer is queued.

    `scope`: the cancel scope its handler runs in, once it has one (a handler that waited,
    or one started from the backlog); `cancelled`: cancelling was asked before that (the
    handler was still running on the reader, or waiting in the backlog)."""

    call: Call
    scope: CancelScope | None = None
    cancelled: bool = False

    def cancel(self) -> None:
        if self.scope is not None:
            self.scope.cancel()
        else:
            self.cancelled = True


class _Waited(msgspec.Struct, gc=False):
    """A request whose handler, started on the reader, waits for the first time: the
    coroutine, the context it runs in, and what it yielded to the event loop."""

    handling: _Handling
    coroutine: Coroutine[Any, Any, Any]
    context: contextvars.Context
    yielded: Any


@types.coroutine
def _resume(
    coroutine: Coroutine[Any, Any, Any], context: contextvars.Context, yielded: Any
) -> Generator[Any, Any, Any]:
    """Drive `coroutine`, started elsewhere and suspended at `yielded`, to its end in the
    calling task: what the event loop sends or throws goes to it, run in `context`."""
    send, throw = coroutine.send, coroutine.throw
    while True:
        try:
            value = yield yielded
        except GeneratorExit:
            coroutine.close()
            raise
        except BaseException as exc:
            try:
                yielded = context.run(throw, exc)
            except StopIteration as stop:
                return stop.value
        else:
            try:
                yielded = context.run(send, value)
            except StopIteration as stop:
                return stop.value


class Connection:
    """One JSON-RPC connection over a byte stream; `run` serves it (see the module)."""

    __slots__ = (
        "_all_answered",
        "_background",
        "_background_ended",
        "_backlog",
        "_cancelled_result",
        "_closed",
        "_closed_reason",
        "_connection_id",
        "_deliver_direct",
        "_dispatch",
        "_finished",
        "_handlers",
        "_initialize_response",
        "_input_ended",
        "_line_hook",
        "_max_concurrent",
        "_negotiated",
        "_non_json_advice",
        "_nursery",
        "_on_close",
        "_on_request",
        "_outbox",
        "_overdue",
        "_reader",
        "_reason_resolved",
        "_running",
        "_stream_errors",
        "_telemetry",
        "_to_start",
        "_unanswered",
        "_unparsable_lines",
        "_waiting",
        "core",
        "loop",
        "options",
        "peer",
        "stream",
    )

    def __init__(
        self,
        stream: AnyByteStream,
        codec: MessageCodec,
        dispatch: Dispatch,
        *,
        options: ConnectionOptions = DEFAULT_OPTIONS,
        peer: str = "the peer",
        peer_side: Side | None = None,
        on_request: Callable[[Call], None] | None = None,
        cancelled_result: Callable[[Call], Any] | None = None,
        closed_reason: Callable[[], Awaitable[ConnectionClosed]] | None = None,
        connection_id: str | None = None,
    ) -> None:
        """`codec` and `dispatch`: how calls are read and started until `switch_to`.
        `options`: the limits, and whether what is sent is checked (`check_outgoing`).
        `peer`: who is at the other end, for log messages (the agent command, "client").
        `peer_side`: its side, for the advice a line that is not JSON is logged with.
        `on_request(call)`: sees each incoming request on arrival, on the reader (in wire
        order with the notifications), before its handler is started.
        `cancelled_result(call)`: what to answer a cancelled request with instead of -32800
        (None keeps -32800); ACP answers a cancelled permission request with `cancelled`.
        `closed_reason()`: the error pending requests fail with once the peer's stream ends
        (a subprocess transport reports the exit code and stderr).
        `connection_id`: what tells this connection from others (`WireLine.connection`):
        a remote connection's `Acp-Connection-Id`; by default a new UUID."""
        self.stream = byte_stream(stream)
        self.loop: Loop = current_loop()
        self._stream_errors = stream_errors(self.loop)
        self.options = options
        self.core: JsonRpcCore = (
            CheckedJsonRpcCore(codec, peer) if options.check_outgoing else JsonRpcCore(codec, peer)
        )
        self._connection_id = connection_id
        self._telemetry: ConnectionInstrumentation | None = None
        if options.telemetry is not None:
            self._telemetry = options.telemetry.connection(peer)
            dispatch = self._telemetry.dispatch(dispatch)
        self._dispatch = dispatch
        self._deliver_direct: Callable[[Any], Awaitable[Any] | None] | None = None
        self.peer = peer
        self._on_request = on_request
        self._cancelled_result = cancelled_result
        self._closed_reason = closed_reason
        self._reader = LineReader(options.max_line_bytes)
        self._line_hook = (
            None if options.on_line is None else LineHook(options.on_line, peer, self.connection_id)
        )
        self._outbox = (
            Outbox(self.stream, options.max_buffered_bytes, on_failure=self._close)
            if self._line_hook is None
            else HookedOutbox(self._line_hook, self.stream, options.max_buffered_bytes, self._close)
        )
        self._max_concurrent = options.max_concurrent_requests  # read per request: one lookup
        self._running = 0
        self._backlog: list[_Handling] = []  # a list: a deque would cost 0.5 KiB per connection
        self._to_start: list[_Handling] = []  # admitted, not started (rarely more than one)
        self._waiting: dict[RequestId, _Waiter] = {}
        self._handlers: dict[RequestId, _Handling] = {}
        self._reason_resolved: LoopEvent | None = None
        self._on_close: list[Callable[[], None]] = []
        if self._telemetry is not None:
            self._on_close.append(self._telemetry.closed)
        self._closed: ConnectionClosed | None = None
        self._nursery: Nursery | None = None
        self._input_ended = False  # the reader read the end of the input
        # set once the input ended and the rest was answered, when `run` no longer reads
        self._finished: LoopEvent | None = None
        self._initialize_response: object = None
        self._negotiated = False  # `switch_to` was called
        self._unanswered = 0  # requests admitted whose answer is not queued yet
        # made when the input ends; set once every request is answered or none can be
        self._all_answered: LoopEvent | None = None
        self._overdue: RpcError | None = None  # the answer of handlers cancelled at the end
        self._background = 0  # tasks of `start_soon` running
        self._background_ended: LoopEvent | None = None  # made once the input ended
        self._unparsable_lines = WarningFlood(peer, "has written %d lines that are not JSON")
        self._non_json_advice = NON_JSON_ADVICE[peer_side]

    def switch_to(
        self,
        codec: MessageCodec,
        dispatch: Dispatch,
        initialize_response: object,
        direct: DirectRoute | None = None,
    ) -> None:
        """`initialize` succeeded: read and write with the negotiated surface's `codec` and
        start calls with `dispatch` from now on; `initialize_response` is what the agent
        answered (`RunningConnection.initialize_response`). `direct`: the notifications of
        one method that `dispatch` starts as `direct.start(params)`, started so at once when
        several lines of a read are decoded in one call (no `Call` built, no dispatch); not
        with telemetry, whose dispatch sees every call."""
        if self._telemetry is not None:
            direct = None
        self.core.switch_codec(codec, None if direct is None else direct.spec)
        self._deliver_direct = None if direct is None else direct.start
        self._dispatch = dispatch if self._telemetry is None else self._telemetry.dispatch(dispatch)
        self._initialize_response = initialize_response
        self._negotiated = True

    @property
    def connection_id(self) -> str:
        """What tells this connection from others (`WireLine.connection`): the id it was
        given, else a UUID made on first use."""
        if self._connection_id is None:
            self._connection_id = str(uuid.uuid4())
        return self._connection_id

    @property
    def initialize_response(self) -> object:
        """What the agent answered `initialize` with (None before `switch_to`)."""
        return self._initialize_response

    @property
    def dispatch(self) -> Dispatch:
        """What starts each incoming call (the one given, then the one of `switch_to`)."""
        return self._dispatch

    # ------------------------------------------------------------------ running

    async def run(self, task_status: TaskStatus = TASK_STATUS_IGNORED) -> None:
        """Serve until the peer closes its side; then fail what is still pending."""
        async with self.loop.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._outbox.run)
            task_status.started()
            try:
                if not await self._read_task():
                    # A handler that waited took this task: the reader it started reads on.
                    assert self._finished is not None
                    await self._finished.wait()
            finally:
                self._close(ConnectionClosed("the connection was shut down"))
                nursery.cancel_scope.cancel()

    async def _read_task(self) -> bool:
        """Read until the input ends, then see the rest answered (True); or until a
        request's handler started here waits: then this is that request's task (False)."""
        scope = self.loop.CancelScope()
        reply: bytes | None = None
        with scope:
            waited = await self._read()
            if waited is not None:
                handling = waited.handling
                handling.scope = scope  # cancelling the request cancels this task's work
                if handling.cancelled:
                    scope.cancel()
                reply = await self._finish_waited(waited)
        if waited is None:
            self._end_input(ConnectionClosed("the peer closed the connection"))
            await self.failure()  # resolve the better reason (exit code, stderr) now
            await self._answer_the_rest()
            await self._let_background_work_end()
            if self._finished is not None:
                self._finished.set()
            return True
        call = handling.call
        if scope.cancelled_caught:
            reply = self._cancelled_reply(call, call.id)  # type: ignore[arg-type]
        if reply is not None:
            await self._reply(reply)
        self._answered()
        return False

    async def _read(self) -> _Waited | None:
        """Read and process lines until the input ends (None), or until a request's handler
        waits: that request is handed back, and a new reader task reads on.

        The requests of one read start once every line of it was processed, in wire order
        (as if each were a task started then), each on this task (`_start`)."""
        receive_line = self.core.receive_line
        to_start = self._to_start
        line_hook = self._line_hook
        events: Sequence[Event | MethodMessage]
        while True:
            while to_start:
                started = self._start(to_start.pop(0))
                if started is None:
                    continue
                if isinstance(started, _Waited):
                    self._start_reader()
                    return started
                await self._reply(started)  # answered, but the outbox is full: wait for room
                self._answered()
            if self._input_ended:
                return None
            try:
                data = await self.stream.receive_some(READ_CHUNK)
            except self._stream_errors:
                data = b""
            if data:
                self._outbox.input_arrived()
                # the hook sees each line: without one, several lines are decoded in one call
                items = (
                    self._reader.feed_block(data) if line_hook is None else self._reader.feed(data)
                )
            else:
                self._input_ended = True
                items = self._reader.eof()
            if line_hook is not None:
                line_hook.read(items)  # type: ignore[arg-type]  # (no LineBlock with a hook)
            for item in items:
                try:
                    if type(item) is bytes:
                        events = receive_line(item)
                    elif type(item) is LineBlock:
                        # no local for the bound method: a suspended reader's frame holds it
                        events = self.core.receive_block(item.data)
                        if not events:  # not all calls: read line by line, next
                            items += item.lines()
                            continue
                    else:  # an OversizedLine
                        size, head = item.size, item.head  # type: ignore[union-attr]
                        events = self.core.receive_oversized(size, head)
                except Exception as exc:  # a backstop: one bad line must not end the connection
                    log.exception("could not process a line")
                    error = RpcError.parse_error(repr(exc))
                    events = [Reply(self.core.unsolicited_error(error))]
                # the notifications the core gave as their messages, and where they go (set
                # together by `switch_to`; an await below may switch: these are `events`')
                direct, deliver = self.core.direct_message, self._deliver_direct
                for event in events:
                    if type(event) is direct:  # a client's session/update, most of the traffic
                        try:  # run in order on this task, as the notifications below
                            pending = deliver(event.params)  # type: ignore[union-attr,misc]
                            if pending is not None:
                                await pending
                        except Exception:
                            log.exception(
                                "notification handler for %s failed",
                                event.method,  # type: ignore[union-attr]
                            )
                        continue
                    if type(event) is Call:
                        if event.id is UNSET:
                            spec = event.spec
                            if spec is None or spec.side != "protocol":
                                # A notification ($/cancel_request aside), run in order on this
                                # task; inline, without a coroutine of its own: most of the
                                # traffic.
                                try:
                                    pending = self._dispatch(event)
                                    if pending is not None:
                                        await pending
                                except Exception:
                                    log.exception(
                                        "notification handler for %s failed", event.method
                                    )
                                continue
                        elif (
                            event.message.method != CANCEL_REQUEST
                            and self._running < self._max_concurrent
                        ):  # a request, and a slot is free: queued to start (else `_admit`)
                            self._running += 1
                            to_start.append(self._admitted(event))
                            continue
                    elif type(event) is Answer:  # to one of our requests: no coroutine for it
                        waiter = self._deliver(event)
                        if waiter is not None and not self._negotiated:
                            # `initialize`'s answer: its caller switches to the negotiated
                            # codec and dispatch as it resumes, before the lines after it in
                            # this read are dispatched (they are the negotiated version's)
                            while not waiter.taken:
                                await self.loop.checkpoint()
                        continue
                    assert not isinstance(event, MethodMessage)  # (direct: above)
                    await self._handle(event)

    def _start_reader(self) -> None:
        """A new reader task: it starts the requests still to start, then reads on."""
        nursery = self._nursery
        assert nursery is not None  # requests are read by `run`, inside it
        if self._finished is None:  # what `run` waits for once a handler took its task
            self._finished = self.loop.Event()
        nursery.start_soon(self._read_task)

    async def _answer_the_rest(self) -> None:
        """The input ended: let the requests received get their answers, within the grace
        period; past it, cancel their handlers (answered with `RpcError.input_ended`)."""
        grace = self.options.eof_grace_period
        self._all_answered = self.loop.Event()
        if self._outbox.error is not None:  # no answer can be written
            self._all_answered.set()
        with self.loop.move_on_after(grace):
            if self._unanswered:
                await self._all_answered.wait()
        if self._unanswered:
            self._overdue = RpcError.input_ended(grace)
            self.cancel_requests(lambda call: True)  # the backlog starts cancelled
        with self.loop.move_on_after(grace):  # answers wait for room in the outbox
            if self._unanswered:
                await self._all_answered.wait()
            await self._outbox.flush()

    def _answered(self) -> None:
        self._unanswered -= 1
        if self._all_answered is not None and not self._unanswered:
            self._all_answered.set()

    def _report_unparsable(self, line: bytes) -> None:
        """Warn about a line that is not JSON: quote the first few, then count them."""
        snippet = line[:SNIPPET_BYTES].decode("utf-8", "replace")
        more = f" ... ({len(line)} bytes)" if len(line) > SNIPPET_BYTES else ""
        self._unparsable_lines.warn(
            "%s wrote a line that is not JSON: %r%s. %s",
            self.peer,
            snippet,
            more,
            self._non_json_advice,
        )

    async def _handle(self, event: Event) -> None:
        if isinstance(event, Reply):
            if event.unparsable is not None:
                self._report_unparsable(event.unparsable)
            await self._reply(event.data)
        elif isinstance(event, Answer):
            self._deliver(event)
        elif event.method == CANCEL_REQUEST:
            self._cancel_handler(event)
            if event.is_request:  # it is a notification, but a request must still be answered
                assert not isinstance(event.id, msgspec.UnsetType)
                reply = self.core.respond(event.id, None)
                if reply is not None:
                    await self._reply(reply)
        elif event.is_request:
            await self._admit(event)

    def _deliver(self, answer: Answer) -> _Waiter | None:
        """Wake the call waiting for `answer` (none: it gave up, and the answer is dropped)."""
        waiter = self._waiting.pop(answer.id, None)
        if waiter is not None:
            waiter.answer = answer
            waiter.done.set()
        return waiter

    async def _admit(self, call: Call) -> None:
        """Queue a request that found every slot busy in the backlog (`_read` queues the
        others to start after the lines read with them).

        The reader never waits for a slot: handlers may be waiting for answers only it can
        read. Past the backlog bound the request is refused with an error instead.
        """
        request_id = call.id
        assert not isinstance(request_id, msgspec.UnsetType)
        handling = self._admitted(call)
        if len(self._backlog) < self._max_concurrent or await self._room_soon():
            self._backlog.append(handling)
        else:
            del self._handlers[request_id]
            self._unanswered -= 1
            error = RpcError.internal_error(
                f"overloaded: {self._running} requests running, {len(self._backlog)} queued"
            )
            reply = self.core.respond_error(request_id, error)
            if reply is not None:
                await self._reply(reply)

    def _admitted(self, call: Call) -> _Handling:
        """An incoming request is in: cancellable from now on, seen by `on_request` (on the
        reader: in wire order with the notifications), and awaited by the end of the input."""
        handling = self._handlers[call.id] = _Handling(call)  # type: ignore[index]
        if self._on_request is not None:
            self._on_request(call)
        self._unanswered += 1
        return handling

    async def _room_soon(self) -> bool:
        """Let running handlers finish before refusing: requests read in one chunk all arrive
        before any handler had a chance to run (the ones still to start start now, each in
        a task of its own)."""
        while self._to_start:
            self._spawn(self._to_start.pop(0))
        for _ in range(ADMIT_PATIENCE):
            await self.loop.sleep(0)
            if len(self._backlog) < self._max_concurrent:
                return True
        return False

    def _start(self, handling: _Handling) -> _Waited | bytes | None:
        """Run the request's handler on the reader, in a copy of its context, until it
        finishes (answered at once: None) or first waits (handed back: see `_read`). One that
        was cancelled before it started, or whose handler gives an awaitable other than a
        coroutine, runs in a task of its own. An answer the full outbox cannot take now is
        returned, for `_read` to send once there is room (then it is answered)."""
        if handling.cancelled:  # its handler runs until its first checkpoint, as any task
            self._spawn(handling)
            return None
        call = handling.call
        context = contextvars.copy_context()
        try:
            pending = context.run(self._dispatch, call)
            if pending is None:
                result = None
            elif type(pending) is types.CoroutineType:
                try:
                    yielded = context.run(pending.send, None)
                except StopIteration as done:
                    result = done.value
                else:
                    return _Waited(handling, pending, context, yielded)
            elif inspect.isawaitable(pending):
                self._spawn(handling, pending)
                return None
            else:
                raise WrongResult(call, pending, "an awaitable: make it `async def`")
            reply = self._result_reply(call, result)
        except Exception as exc:
            reply = self._error_reply(call, exc)
        except BaseException:  # cancelled: the connection is shutting down
            self._done(handling)
            raise
        self._done(handling)
        if reply is not None:
            try:
                if not self._outbox.offer(reply):
                    return reply  # the outbox is full
            except ConnectionClosed:
                pass  # the peer can't take it any more: there is no one to tell
        self._answered()
        return None

    async def _finish_waited(self, waited: _Waited) -> bytes | None:
        """Run a handler that waited to its end (in its request's cancel scope): its answer."""
        call = waited.handling.call
        try:
            result = await _resume(waited.coroutine, waited.context, waited.yielded)
            return self._result_reply(call, result)
        except Exception as exc:
            return self._error_reply(call, exc)
        finally:
            self._done(waited.handling)

    def _spawn(self, handling: _Handling, pending: object = None) -> None:
        """Run a request in a task of its own: one from the backlog (`pending` None: not
        dispatched yet), or one whose handler gave an awaitable that is not a coroutine."""
        nursery = self._nursery
        assert nursery is not None  # requests are read by `run`, inside it
        nursery.start_soon(self._run_request, handling, pending)

    async def _run_request(self, handling: _Handling, pending: object) -> None:
        call = handling.call
        scope = handling.scope = self.loop.CancelScope()
        if handling.cancelled:
            scope.cancel()
        reply: bytes | None = None
        try:
            with scope:
                try:
                    if pending is None:
                        pending = self._dispatch(call)
                        if pending is not None and not inspect.isawaitable(pending):
                            raise WrongResult(call, pending, "an awaitable: make it `async def`")
                    result = None if pending is None else await pending  # type: ignore[misc]
                    reply = self._result_reply(call, result)
                except Exception as exc:
                    reply = self._error_reply(call, exc)
            if scope.cancelled_caught:
                reply = self._cancelled_reply(call, call.id)  # type: ignore[arg-type]
        finally:
            self._done(handling)
        if reply is not None:
            await self._reply(reply)
        self._answered()

    def _done(self, handling: _Handling) -> None:
        """The request's handler ended: free its slot for the backlog's first."""
        self._handlers.pop(handling.call.id, None)  # type: ignore[arg-type]
        self._running -= 1
        if self._backlog:
            self._running += 1
            self._spawn(self._backlog.pop(0))

    def _result_reply(self, call: Call, result: Any) -> bytes | None:
        """The answer carrying a handler's result (checked against its method's result type)."""
        spec = call.spec
        if spec is not None and spec.result is not None:
            shape = RESULT_SHAPES.get(spec.result) or result_shape_of(spec.result)
            if not isinstance(result, shape.classes):  # None for an empty result, or wrong
                result = checked_result(call, shape, result)
        return self.core.respond(call.id, result)  # type: ignore[arg-type]

    def _error_reply(self, call: Call, exc: Exception) -> bytes | None:
        """The error answer for an exception a handler raised."""
        request_id: RequestId = call.id  # type: ignore[assignment]
        if isinstance(exc, PeerError):
            log.warning("the handler of %s failed: %s", call.method, exc)
            return self.core.respond_error(request_id, exc.nested_failure())
        if isinstance(exc, RpcError):
            return self.core.respond_error(request_id, exc)
        if isinstance(exc, WrongResult):
            log.error("%s", exc)
            return self.core.respond_error(request_id, RpcError.internal_error(str(exc)))
        log.error("handler for %s failed", call.method, exc_info=exc)
        error = RpcError.internal_error(f"{type(exc).__name__}: {exc}")
        return self.core.respond_error(request_id, error)

    def _cancel_handler(self, call: Call) -> None:
        if call.spec is None:  # params not decoded (before initialize): no id to trust
            return
        handling = self._handlers.get(call.params.request_id)
        if handling is not None:
            handling.cancel()

    def cancel_requests(self, matches: Callable[[Call], bool]) -> int:
        """Cancel the in-flight handlers of incoming requests that match; returns how many."""
        hits = [handling for handling in self._handlers.values() if matches(handling.call)]
        for handling in hits:
            handling.cancel()
        return len(hits)

    def requests_in_flight(self) -> list[Call]:
        """The incoming requests not answered yet, in the order they arrived."""
        return [handling.call for handling in self._handlers.values()]

    def start_soon(
        self, work: Callable[[Unpack[Ts]], Coroutine[Any, Any, object]], *args: *Ts
    ) -> None:
        """Run `work(*args)` in the connection's task group: it ends when the connection
        does. RuntimeError when the connection is not running."""
        if self._nursery is None:
            raise RuntimeError("the connection is not running")
        self._nursery.start_soon(self._background_work, work, *args)

    async def _background_work(
        self, work: Callable[[Unpack[Ts]], Coroutine[Any, Any, object]], *args: *Ts
    ) -> None:
        self._background += 1
        try:
            await work(*args)
        finally:
            self._background -= 1
            if not self._background and self._background_ended is not None:
                self._background_ended.set()

    async def _let_background_work_end(self) -> None:
        """The input ended: background work gets `background_grace_period` seconds to end."""
        grace = self.options.background_grace_period
        if grace <= 0 or not self._background:
            return
        self._background_ended = self.loop.Event()
        with self.loop.move_on_after(grace):
            await self._background_ended.wait()
        with self.loop.move_on_after(self.options.eof_grace_period):
            await self._outbox.flush()

    def _cancelled_reply(self, call: Call, request_id: RequestId) -> bytes | None:
        if self._overdue is not None:  # cancelled because the input ended
            return self.core.respond_error(request_id, self._overdue)
        substitute = self._cancelled_result(call) if self._cancelled_result else None
        if substitute is None:
            return self.core.respond_error(request_id, RpcError.request_cancelled())
        return self.core.respond(request_id, substitute)

    async def _reply(self, data: bytes) -> None:
        """Send an answer of ours; when the peer can't take it any more there is no one to tell."""
        try:
            await self._send(data)
        except ConnectionClosed:
            pass

    # ------------------------------------------------------------------ sending

    async def _send(self, data: bytes) -> None:
        """Queue `data` for the writer, first waiting for room when the outbox is full.

        The common case of every send is `self._outbox.offer(data)`, without a coroutine of
        its own: False, and nothing is queued, when the outbox is full. It raises
        ConnectionClosed once writing failed; the outbox has closed the connection then
        (`_close` is its `on_failure`)."""
        if not self._outbox.offer(data):
            outbox = self._outbox
            try:
                await outbox.room()
                outbox.put_nowait(data)  # raises once closed
            except ConnectionClosed as exc:
                self._close(exc)
                raise

    def request(self, spec: MethodSpec[P, R], params: P) -> Coroutine[Any, Any, R]:
        """Send a request and wait for its result (`await` it).

        Raises `PeerError` (an `RpcError`) when the peer answers with an error,
        `InvalidResponse` when its result does not fit the method's result type, and
        `ConnectionClosed` when no answer can come any more."""
        if self._telemetry is not None:
            encode = functools.partial(self.core.request, spec)
            return self._telemetry.request(spec.name, params, encode, self._call)
        return self._call(*self.core.request(spec, params))

    def request_method(self, method: str, params: Any) -> Coroutine[Any, Any, Any]:
        """`request` of any method (an extension): the result is kept as the JSON received
        (`msgspec.Raw`) unless the codec types the method."""
        if self._telemetry is not None:
            encode = functools.partial(self.core.request_method, method)
            return self._telemetry.request(method, params, encode, self._call)
        return self._call(*self.core.request_method(method, params))

    async def _call(self, request_id: RequestId, data: bytes) -> Any:
        if self._closed is not None:
            self.core.forget(request_id)
            raise await self.failure()
        waiter = self._waiting[request_id] = _Waiter(self.loop.SingleWaiterEvent())
        try:
            if not self._outbox.offer(data):
                await self._send(data)
            await waiter.done.wait()
        except self.loop.Cancelled:
            self._abandon(request_id)
            raise
        except ConnectionClosed:
            raise await self.failure() from None
        finally:
            waiter.taken = True
        answer = waiter.answer
        if answer is None:  # the connection closed first
            raise await self.failure()
        if answer.error is not None:
            raise answer.error
        return answer.result

    async def failure(self) -> ConnectionClosed:
        """Why the connection is closed, in the best words available: a subprocess transport
        knows the exit code and stderr even when a failed write noticed the death first."""
        assert self._closed is not None
        if self._closed_reason is not None:
            if self._reason_resolved is None:  # the first to ask resolves it, others wait
                self._reason_resolved = self.loop.Event()
                with self.loop.CancelScope(shield=True):
                    self._closed = await self._closed_reason()
                self._reason_resolved.set()
            else:
                await self._reason_resolved.wait()
        return self._closed

    def _abandon(self, request_id: RequestId) -> None:
        """Our caller gave up: stop waiting and tell the peer (`$/cancel_request`, best effort)."""
        self.core.forget(request_id)
        self._waiting.pop(request_id, None)
        spec = self.core.codec.outbound.get(CANCEL_REQUEST)
        if self._closed is not None or spec is None:
            return
        try:  # queued at once, before anything the cancelled caller sends next
            self._outbox.put_nowait(self.core.notify(spec, spec.params.type(request_id=request_id)))
        except ConnectionClosed:
            pass

    def notify(self, spec: MethodSpec[P, None], params: P) -> Coroutine[Any, Any, None]:
        """Send a notification (`await` it)."""
        if self._telemetry is not None:
            encode = functools.partial(self.core.notify, spec)
            return self._notify(self._telemetry.notification(spec.name, params, encode))
        return self._notify(self.core.notify(spec, params))

    def notify_method(self, method: str, params: Any) -> Coroutine[Any, Any, None]:
        """`notify` of any method (an extension)."""
        if self._telemetry is not None:
            encode = functools.partial(self.core.notify_method, method)
            return self._notify(self._telemetry.notification(method, params, encode))
        return self._notify(self.core.notify_method(method, params))

    async def _notify(self, data: bytes) -> None:
        try:
            if not self._outbox.offer(data):
                await self._send(data)
        except ConnectionClosed:
            raise await self.failure() from None

    # ------------------------------------------------------------------ closing

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call `callback` once when the connection closes (at once if it already has)."""
        if self._closed is not None:
            callback()
        else:
            self._on_close.append(callback)

    def _close(self, reason: ConnectionClosed) -> None:
        """Nothing more can be read or written (writing failed, or `run` is ending)."""
        self._end_input(reason)
        self._outbox.fail(reason)
        if self._all_answered is not None:
            self._all_answered.set()  # no answer can be written any more

    def _end_input(self, reason: ConnectionClosed) -> None:
        """Nothing more can be read: our requests will never be answered (ours still can be)."""
        if self._closed is not None:
            return
        self._closed = reason
        for callback in self._on_close:
            callback()
        self.core.abandon_all()
        for waiter in self._waiting.values():
            waiter.done.set()  # with no answer
        self._waiting.clear()

    @property
    def closed(self) -> bool:
        return self._closed is not None

    async def aclose(self) -> None:
        """Write what is queued, then close our sending side; the peer sees EOF."""
        await self._outbox.flush()
        await close_sending(self.stream)
