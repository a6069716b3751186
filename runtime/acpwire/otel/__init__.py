"""OpenTelemetry for acpwire (`pip install acpwire[otel]`): spans for the requests and prompt
turns of a connection, and the W3C trace context carried in `_meta`, so that one trace
crosses editor -> agent.

    from acpwire.otel import Telemetry

    options = acpwire.ConnectionOptions(telemetry=Telemetry(tracer_provider=provider))
    # serve_agent(MyAgent, options=options), open_agent(command, v2=MyClient, options=options)

Nothing is instrumented unless a connection is given a `Telemetry`; `import acpwire` never
imports OpenTelemetry (only `import acpwire.otel` does).

What a connection records, on either side (an agent's, a client's):

- a request it sends: a CLIENT span named by the method (`session/new`,
  `session/request_permission`, ...), the child of the current span; its trace context is
  written to the request's `params._meta` (`traceparent`, `tracestate`, `baggage`: the root
  keys ACP's meta-propagation RFD reserves for W3C trace context);
- a request it handles: a SERVER span named by the method, the child of the context the
  request's `_meta` carries (a new trace when it carries none, or a malformed one, which is
  ignored); the handler runs with it current, so what the handler sends is its child;
- both with the JSON-RPC attributes of OpenTelemetry's RPC conventions: `rpc.system`
  ("jsonrpc"), `rpc.method`, `rpc.jsonrpc.version`, `rpc.jsonrpc.request_id`, and for an
  error answer `rpc.jsonrpc.error_code` and `rpc.jsonrpc.error_message` with an ERROR
  status (a request with no answer: closed, cancelled, a result of the wrong type, is ERROR
  with `error.type`); `acp.session_id` when the params name a session;
- a prompt turn: an `acp.turn` span (`acp.session_id`, `acp.stop_reason`). On the client it
  is the parent of the `session/prompt` CLIENT span; on the agent the child of the
  `session/prompt` SERVER span, and current while the handler runs (a v2 turn's background
  work included). It ends with the stop reason: the prompt's result (v1) or the session's
  next idle `state_update` (v2); with an error status when the prompt fails;
- notifications (`session/update` above all: thousands a turn) are not spans: each one is
  an event named by the method on its session's open turn (`acp.session_update`: the
  update's kind), a sent one on the current span when its session has no open turn; a sent
  notification carries the trace context of the span its event is on. Chunks that continue
  a run of chunks of their kind (a reply streamed as `agent_message_chunk`s) are not events
  of their own: the run's first marks when it started, and the turn's
  `acp.session_updates` counts every update.
"""

from __future__ import annotations

try:
    import opentelemetry.trace  # noqa: F401
except ImportError as exc:
    raise ImportError(
        "acpwire.otel needs OpenTelemetry's API: `pip install acpwire[otel]` "
        "(or `pip install opentelemetry-api`)"
    ) from exc

from .._wire.telemetry import ConnectionInstrumentation, Instrumentation
from .telemetry import Telemetry

__all__ = ["ConnectionInstrumentation", "Instrumentation", "Telemetry"]
