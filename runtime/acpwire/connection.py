"""One JSON-RPC connection on trio: a reader task, handler tasks, a serialized send path.

- Requests run as concurrent tasks, at most `max_concurrent_requests` at once; as many more
  wait in a backlog, and past that a request is refused with an error, so tasks and memory
  stay bounded (the reader itself never waits: handlers may wait for answers only it reads).
  Each runs in its own cancel scope, created on arrival, so `$/cancel_request` can stop it. Whatever happens, the request gets
  exactly one response: its result, the handler's `RpcError`, -32603 for any other
  exception, or -32800 when it was cancelled.
- Notifications run in order on the reader task (session updates must arrive in order), so
  their handlers should be quick.
- Sends go through a bounded outbox drained by one writer task (outbox.py): bursts are
  written together, and a slow reader slows the writer instead of growing memory.
- When the peer closes the stream, requests still waiting fail with `ConnectionClosed`.
"""

from __future__ import annotations

import collections
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import msgspec
import trio
from msgspec import UNSET

from acp_schema._support import MessageCodec, MethodSpec

from .errors import ConnectionClosed, RpcError
from .framing import DEFAULT_MAX_LINE_BYTES, LineReader, OversizedLine
from .jsonrpc import Answer, Call, Event, JsonRpcCore, Reply, RequestId
from .outbox import DEFAULT_MAX_BUFFERED_BYTES, Outbox

log = logging.getLogger("acpwire")

P = TypeVar("P")
R = TypeVar("R")

CANCEL_REQUEST = "$/cancel_request"
READ_CHUNK = 64 * 1024
ADMIT_PATIENCE = 8  # scheduler passes to wait for a free slot before refusing a request

Dispatch = Callable[[Call], Awaitable[Any] | None]
"""Starts one incoming call: returns what to await for its result (ignored for notifications),
or None when there is nothing to run (an ignored notification; no awaitable built for it)."""


class _Waiter:
    """One of our requests waiting for its answer (a trio.Event: cheaper than a channel)."""

    __slots__ = ("answer", "done")

    def __init__(self) -> None:
        self.answer: Answer | None = None
        self.done = trio.Event()


class Connection:
    def __init__(
        self,
        stream: trio.abc.Stream,
        codec: MessageCodec,
        dispatch: Dispatch,
        *,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
        max_concurrent_requests: int = 64,
        max_buffered_bytes: int = DEFAULT_MAX_BUFFERED_BYTES,
        cancelled_result: Callable[[Call], Any] | None = None,
        closed_reason: Callable[[], Awaitable[ConnectionClosed]] | None = None,
    ) -> None:
        """`cancelled_result(call)`: what to answer a cancelled request with instead of -32800
        (None keeps -32800); ACP answers a cancelled permission request with `cancelled`.
        `closed_reason()`: the error pending requests fail with once the peer's stream ends
        (a subprocess transport reports the exit code and stderr)."""
        self.stream = stream
        self.core = JsonRpcCore(codec)
        self.dispatch = dispatch
        self._reader = LineReader(max_line_bytes)
        self._outbox = Outbox(stream, max_buffered_bytes, on_failure=self._close)
        self.max_concurrent_requests = max_concurrent_requests
        self._running = 0
        self._backlog: collections.deque[Call] = collections.deque()
        self._waiting: dict[RequestId, _Waiter] = {}
        self._handlers: dict[RequestId, tuple[trio.CancelScope, Call]] = {}
        self.cancelled_result = cancelled_result
        self.closed_reason = closed_reason
        self._reason_resolved: trio.Event | None = None
        self._on_close: list[Callable[[], None]] = []
        self._closed: ConnectionClosed | None = None
        self._nursery: trio.Nursery | None = None
        self.initialize_response: Any = None  # what the agent answered `initialize` with
        self.on_request: Callable[[Call], None] | None = None  # sees each request on arrival

    # ------------------------------------------------------------------ running

    async def run(self, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Serve until the peer closes its side; then fail what is still pending."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._outbox.run)
            task_status.started()
            try:
                await self._read_loop()
                self._close(ConnectionClosed("the peer closed the connection"))
                await self._failure()  # resolve the better reason (exit code, stderr) now
            finally:
                self._close(ConnectionClosed("the connection was shut down"))
                nursery.cancel_scope.cancel()

    async def _read_loop(self) -> None:
        receive_line = self.core.receive_line
        while True:
            try:
                data = await self.stream.receive_some(READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            items = self._reader.feed(data) if data else self._reader.eof()
            for item in items:
                try:
                    events = (
                        receive_line(item) if isinstance(item, bytes) else self._oversized(item)
                    )
                except Exception as exc:  # a backstop: one bad line must not end the connection
                    log.exception("could not process a line")
                    error = RpcError.parse_error(repr(exc))
                    events = [Reply(self.core.unsolicited_error(error))]
                for event in events:
                    if (
                        type(event) is Call
                        and event.id is UNSET
                        and (event.spec is None or event.spec.side != "protocol")
                    ):
                        # A notification ($/cancel_request aside), run in order on this task;
                        # inline, without a coroutine of its own: it is most of the traffic.
                        try:
                            pending = self.dispatch(event)
                            if pending is not None:
                                await pending
                        except Exception:
                            log.exception("notification handler for %s failed", event.method)
                    else:
                        await self._handle(event)
            if not data:
                return

    def _oversized(self, item: OversizedLine) -> list[Event]:
        error = RpcError.invalid_request(f"message of {item.size} bytes is over the line limit")
        return [Reply(self.core.unsolicited_error(error))]

    async def _handle(self, event: Event) -> None:
        if isinstance(event, Reply):
            await self._reply(event.data)
        elif isinstance(event, Answer):
            waiter = self._waiting.pop(event.id, None)
            if waiter is not None:
                waiter.answer = event
                waiter.done.set()
        elif event.method == CANCEL_REQUEST:
            self._cancel_handler(event)
            if event.is_request:  # it is a notification, but a request must still be answered
                assert not isinstance(event.id, msgspec.UnsetType)
                reply = self.core.respond(event.id, None)
                if reply is not None:
                    await self._reply(reply)
        elif event.is_request:
            await self._admit(event)

    async def _admit(self, call: Call) -> None:
        """Start the request's handler, or queue it when all slots are busy.

        The reader never waits for a slot: handlers may be waiting for answers only it can
        read. Past the backlog bound the request is refused with an error instead.
        """
        request_id = call.id
        assert not isinstance(request_id, msgspec.UnsetType)
        self._handlers[request_id] = (trio.CancelScope(), call)  # cancellable from now on
        if self.on_request is not None:  # on the reader: in wire order with notifications
            self.on_request(call)
        if self._running < self.max_concurrent_requests:
            self._start(call)
        elif len(self._backlog) < self.max_concurrent_requests or await self._room_soon():
            self._backlog.append(call)
        else:
            del self._handlers[request_id]
            error = RpcError.internal_error(
                f"overloaded: {self._running} requests running, {len(self._backlog)} queued"
            )
            reply = self.core.respond_error(request_id, error)
            if reply is not None:
                await self._reply(reply)

    async def _room_soon(self) -> bool:
        """Let running handlers finish before refusing: requests read in one chunk all arrive
        before any handler had a chance to run."""
        for _ in range(ADMIT_PATIENCE):
            await trio.sleep(0)
            if len(self._backlog) < self.max_concurrent_requests:
                return True
        return False

    def _start(self, call: Call) -> None:
        self._running += 1
        self.nursery.start_soon(self._run_request, call)

    def _cancel_handler(self, call: Call) -> None:
        if call.spec is None:  # params not decoded (before initialize): no id to trust
            return
        entry = self._handlers.get(call.params.request_id)
        if entry is not None:
            entry[0].cancel()

    def cancel_requests(self, matches: Callable[[Call], bool]) -> int:
        """Cancel the in-flight handlers of incoming requests that match; returns how many."""
        hits = [scope for scope, call in self._handlers.values() if matches(call)]
        for scope in hits:
            scope.cancel()
        return len(hits)

    def requests_in_flight(self) -> list[Call]:
        """The incoming requests not answered yet, in the order they arrived."""
        return [call for _, call in self._handlers.values()]

    @property
    def nursery(self) -> trio.Nursery:
        """The connection's nursery: background work here ends when the connection does."""
        if self._nursery is None:
            raise RuntimeError("the connection is not running")
        return self._nursery

    async def _run_request(self, call: Call) -> None:
        request_id = call.id
        assert not isinstance(request_id, msgspec.UnsetType)
        reply: bytes | None = None
        scope = self._handlers[request_id][0]
        try:
            with scope:
                try:
                    pending = self.dispatch(call)
                    result = None if pending is None else await pending
                    reply = self.core.respond(request_id, result)
                except RpcError as exc:
                    reply = self.core.respond_error(request_id, exc)
                except Exception as exc:
                    log.exception("handler for %s failed", call.method)
                    error = RpcError.internal_error(f"{type(exc).__name__}: {exc}")
                    reply = self.core.respond_error(request_id, error)
            if scope.cancelled_caught:
                substitute = self.cancelled_result(call) if self.cancelled_result else None
                if substitute is None:
                    reply = self.core.respond_error(request_id, RpcError.request_cancelled())
                else:
                    reply = self.core.respond(request_id, substitute)
        finally:
            self._handlers.pop(request_id, None)
            self._running -= 1
            if self._backlog:
                self._start(self._backlog.popleft())
        if reply is not None:
            await self._reply(reply)

    async def _reply(self, data: bytes) -> None:
        """Send an answer of ours; when the peer can't take it any more there is no one to tell."""
        try:
            await self._send(data)
        except ConnectionClosed:
            pass

    # ------------------------------------------------------------------ sending

    async def _send(self, data: bytes) -> None:
        outbox = self._outbox
        try:
            if outbox.full:
                await outbox.room()
            outbox.put_nowait(data)  # raises once closed
        except ConnectionClosed as exc:
            self._close(exc)
            raise

    async def request(self, spec: MethodSpec[P, R], params: P) -> R:
        """Send a request and wait for its result; raises `RpcError` or `ConnectionClosed`."""
        if self._closed is not None:
            raise await self._failure()
        request_id, data = self.core.request(spec, params)
        waiter = self._waiting[request_id] = _Waiter()
        try:
            await self._send(data)
            await waiter.done.wait()
        except trio.Cancelled:
            self._abandon(request_id)
            raise
        except ConnectionClosed:
            raise await self._failure() from None
        answer = waiter.answer
        if answer is None:  # the connection closed first
            raise await self._failure()
        if answer.error is not None:
            raise answer.error
        result: R = answer.result
        return result

    async def _failure(self) -> ConnectionClosed:
        """Why the connection is closed, in the best words available: a subprocess transport
        knows the exit code and stderr even when a failed write noticed the death first."""
        assert self._closed is not None
        if self.closed_reason is not None:
            if self._reason_resolved is None:  # the first to ask resolves it, others wait
                self._reason_resolved = trio.Event()
                with trio.CancelScope(shield=True):
                    self._closed = await self.closed_reason()
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

    async def notify(self, spec: MethodSpec[P, None], params: P) -> None:
        try:
            await self._send(self.core.notify(spec, params))
        except ConnectionClosed:
            raise await self._failure() from None

    # ------------------------------------------------------------------ closing

    def on_close(self, callback: Callable[[], None]) -> None:
        """Call `callback` once when the connection closes (at once if it already has)."""
        if self._closed is not None:
            callback()
        else:
            self._on_close.append(callback)

    def _close(self, reason: ConnectionClosed) -> None:
        if self._closed is not None:
            return
        self._closed = reason
        for callback in self._on_close:
            callback()
        self._outbox.fail(reason)
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
        stream = self.stream
        if isinstance(stream, trio.abc.HalfCloseableStream):
            await stream.send_eof()
        else:
            await stream.aclose()
