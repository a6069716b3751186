"""`Telemetry`: OpenTelemetry spans for the requests and prompt turns of a connection, and the
W3C trace context carried in `_meta` (see the package's docstring for what is recorded)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from msgspec import UNSET
from opentelemetry import context, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.propagators.textmap import TextMapPropagator
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator
from opentelemetry.util.types import AttributeValue

import acp_schema.v2.methods as methods
from acp_schema import tag_of

from .._version import __version__
from .._wire.dispatch import Dispatch
from .._wire.jsonrpc import Call, RequestId
from .._wire.telemetry import ConnectionInstrumentation, Instrumentation
from ..errors import PeerError, RpcError
from .carrier import context_from, with_context
from .turns import STOP_REASON, UPDATE_KIND, Turn, Turns

__all__ = ["Telemetry"]

PROMPT = methods.SESSION_PROMPT.name  # the same names in v1
SESSION_UPDATE = methods.SESSION_UPDATE.name
TURN_SPAN = "acp.turn"

RPC_SYSTEM = "rpc.system"
RPC_METHOD = "rpc.method"
JSONRPC_VERSION = "rpc.jsonrpc.version"
REQUEST_ID = "rpc.jsonrpc.request_id"
ERROR_CODE = "rpc.jsonrpc.error_code"
ERROR_MESSAGE = "rpc.jsonrpc.error_message"
SESSION_ID = "acp.session_id"

INTERNAL_ERROR = -32603  # what the connection answers a handler's other exceptions with


class Telemetry:
    """OpenTelemetry for acpwire connections: `ConnectionOptions(telemetry=Telemetry())`.

    `tracer_provider`: where the spans go (default: the global one, `trace.set_tracer_provider`).
    `propagator`: how the trace context is written to and read from `_meta` (default: W3C
    trace context and baggage: the `traceparent`, `tracestate` and `baggage` keys ACP
    reserves; not the global propagator, which may write other keys)."""

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        propagator: TextMapPropagator | None = None,
    ) -> None:
        self.tracer: Tracer = trace.get_tracer("acpwire", __version__, tracer_provider)
        """The tracer the spans are made with (instrumentation scope `acpwire`)."""
        self.propagator: TextMapPropagator = propagator or CompositePropagator(
            [TraceContextTextMapPropagator(), W3CBaggagePropagator()]
        )
        """Writes the trace context to `_meta` and reads it back."""

    def connection(self, peer: str) -> ConnectionInstrumentation:
        """The instrumentation of one connection (the connection asks for it)."""
        return ConnectionTelemetry(self.tracer, self.propagator)


class ConnectionTelemetry:
    """The spans of one connection: its requests (CLIENT sent, SERVER handled), its turns,
    its notifications as events."""

    def __init__(self, tracer: Tracer, propagator: TextMapPropagator) -> None:
        self._tracer = tracer
        self._propagator = propagator
        self._turns = Turns()

    # ------------------------------------------------------------------ ours

    async def request(
        self,
        method: str,
        params: Any,
        encode: Callable[[Any], tuple[RequestId, bytes]],
        call: Callable[[RequestId, bytes], Awaitable[Any]],
    ) -> Any:
        """Our request in a CLIENT span (a `session/prompt` in a turn span around it), its
        trace context in `_meta`."""
        attributes = _attributes(method, params)
        turn = None
        parent = None
        if method == PROMPT:
            turn_span = self._tracer.start_span(TURN_SPAN, attributes=_turn_attributes(params))
            turn = self._turns.start(_session_id(params), turn_span)
            parent = trace.set_span_in_context(turn_span)
        span = self._tracer.start_span(method, parent, SpanKind.CLIENT, attributes)
        with trace.use_span(span, True, record_exception=False, set_status_on_exception=False):
            try:
                params = with_context(params, self._carrier())
                request_id, data = encode(params)
                span.set_attribute(REQUEST_ID, str(request_id))
                result = await call(request_id, data)
            except RpcError as exc:  # the peer's error answer (PeerError)
                _answered_error(span, exc.code, exc.message)
                self._turn_failed(turn, exc.message)
                raise
            except BaseException as exc:  # no answer: closed, cancelled, an invalid result
                _failed(span, exc)
                self._turn_failed(turn, type(exc).__name__)
                raise
            self._answered(span, turn, result)
            return result

    def notification(self, method: str, params: Any, encode: Callable[[Any], bytes]) -> bytes:
        """Our notification: an event on its session's turn (else on the current span), the
        trace context of that span in `_meta`; an idle state update ends the turn."""
        session_id = _session_id(params)
        turn = self._turns.current(session_id)
        if turn is not None:
            self._event(turn, call_method=method, params=params)
            if turn.carrier is None:
                turn.carrier = self._carrier(trace.set_span_in_context(turn.span))
            carrier = turn.carrier
        else:
            span = trace.get_current_span()
            if span.is_recording():
                span.add_event(method, _event_attributes(method, params))
            carrier = self._carrier()
        data = encode(with_context(params, carrier))
        if method == SESSION_UPDATE:
            self._update(session_id, params)
        return data

    def _carrier(self, of: context.Context | None = None) -> dict[str, str]:
        carrier: dict[str, str] = {}
        self._propagator.inject(carrier, of)
        return carrier

    # ------------------------------------------------------------------ theirs

    def dispatch(self, dispatch: Dispatch) -> Dispatch:
        """`dispatch` with each request handled in a SERVER span (the child of the context
        its `_meta` carries), each notification an event on its session's turn."""

        def instrumented(call: Call) -> Awaitable[Any] | None:
            if call.id is UNSET:
                self._received(call)
                return dispatch(call)
            return self._handle(dispatch, call)

        return instrumented

    def _handle(self, dispatch: Dispatch, call: Call) -> Awaitable[Any] | None:
        method, params = call.method, call.params
        attributes = _attributes(method, params)
        attributes[REQUEST_ID] = str(call.id)
        # the peer's context, else a new trace (not whatever was current when it started)
        parent = context_from(self._propagator, params) or context.Context()
        span = self._tracer.start_span(method, parent, SpanKind.SERVER, attributes)
        turn = None
        current = trace.set_span_in_context(span)
        if method == PROMPT:
            turn_attributes = _turn_attributes(params)
            turn_span = self._tracer.start_span(TURN_SPAN, current, attributes=turn_attributes)
            turn = self._turns.start(_session_id(params), turn_span)
            current = trace.set_span_in_context(turn_span)
        token = context.attach(current)
        try:
            pending = dispatch(call)
        except Exception as exc:  # -32601, -32602: answered at once
            self._handler_failed(span, turn, exc)
            raise
        finally:
            context.detach(token)
        if pending is None:  # nothing runs (a request sent without an id is not answered)
            span.end()
            if turn is not None:
                self._turns.end(turn, None)
            return None
        return self._run(span, turn, current, pending)

    async def _run(
        self, span: Span, turn: Turn | None, current: context.Context, pending: Awaitable[Any]
    ) -> Any:
        """The handler, its span (or its turn's) current: what it calls is their child."""
        token = context.attach(current)
        try:
            result = await pending
        except GeneratorExit:  # closed from outside, maybe in another context: no detaching
            self._handler_failed(span, turn, GeneratorExit())
            raise
        except BaseException as exc:
            context.detach(token)
            self._handler_failed(span, turn, exc)
            raise
        context.detach(token)
        self._answered(span, turn, result)
        span.end()
        return result

    def _received(self, call: Call) -> None:
        params = call.params
        session_id = _session_id(params)
        turn = self._turns.current(session_id)
        if turn is not None:
            self._event(turn, call_method=call.method, params=params)
        if call.method == SESSION_UPDATE:
            self._update(session_id, params)

    # ------------------------------------------------------------------ both

    @staticmethod
    def _event(turn: Turn, *, call_method: str, params: Any) -> None:
        """A notification of the turn's session, sent or received: on the turn's span."""
        if call_method == SESSION_UPDATE:
            turn.update(call_method, tag_of(getattr(params, "update", None)))
        else:
            turn.span.add_event(call_method)

    def _update(self, session_id: str | None, params: Any) -> None:
        update = getattr(params, "update", None)
        if tag_of(update) == "state_update" and getattr(update, "state", None) == "idle":
            self._turns.idle(session_id, _stop_reason(update))

    def _answered(self, span: Span, turn: Turn | None, result: Any) -> None:
        stop_reason = _stop_reason(result)
        if stop_reason is not None:
            span.set_attribute(STOP_REASON, stop_reason)
        if turn is not None:
            self._turns.answered(turn, stop_reason)

    def _handler_failed(self, span: Span, turn: Turn | None, exc: BaseException) -> None:
        """The handler raised: the error the connection answers with, on the span."""
        if isinstance(exc, PeerError):  # a nested request failed: answered -32603
            _answered_error(span, INTERNAL_ERROR, str(exc))
        elif isinstance(exc, RpcError):
            _answered_error(span, exc.code, exc.message)
        elif isinstance(exc, Exception):
            _answered_error(span, INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
        else:  # cancelled: -32800, or the method's cancelled result (a permission request)
            _failed(span, exc)
        span.end()
        self._turn_failed(turn, span_description(exc))

    def _turn_failed(self, turn: Turn | None, description: str) -> None:
        if turn is not None:
            self._turns.fail(turn, description)

    def closed(self) -> None:
        """The connection closed: the turns still open end."""
        self._turns.end_all()


if TYPE_CHECKING:

    def _is_instrumentation(telemetry: Telemetry) -> Instrumentation:
        return telemetry  # mypy checks that Telemetry is what ConnectionOptions takes


def span_description(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def _answered_error(span: Span, code: int, message: str) -> None:
    span.set_attribute(ERROR_CODE, code)
    span.set_attribute(ERROR_MESSAGE, message)
    span.set_status(Status(StatusCode.ERROR, message))


def _failed(span: Span, exc: BaseException) -> None:
    span.set_attribute("error.type", type(exc).__qualname__)
    span.set_status(Status(StatusCode.ERROR, span_description(exc)))


def _session_id(params: Any) -> str | None:
    session_id = getattr(params, "session_id", None)
    return session_id if isinstance(session_id, str) else None


def _stop_reason(message: Any) -> str | None:
    """The stop reason of a v1 prompt result or of an idle state update, if it has one."""
    stop_reason = getattr(message, "stop_reason", None)
    return stop_reason if isinstance(stop_reason, str) else None


def _attributes(method: str, params: Any) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {
        RPC_SYSTEM: "jsonrpc",
        RPC_METHOD: method,
        JSONRPC_VERSION: "2.0",
    }
    session_id = _session_id(params)
    if session_id is not None:
        attributes[SESSION_ID] = session_id
    return attributes


def _turn_attributes(params: Any) -> dict[str, AttributeValue]:
    session_id = _session_id(params)
    return {} if session_id is None else {SESSION_ID: session_id}


def _event_attributes(method: str, params: Any) -> dict[str, AttributeValue]:
    attributes = _attributes(method, params)
    kind = tag_of(getattr(params, "update", None))
    if kind is not None:
        attributes[UPDATE_KIND] = kind
    return attributes
