"""`acpwire.otel`: an editor (client) and an agent in one process, both instrumented, make one
trace: the client's CLIENT span of each request is the parent of the agent's SERVER span
(through `params._meta.traceparent`), each side has a turn span ending with the stop reason,
JSON-RPC errors are ERROR spans with their code; a malformed incoming traceparent is ignored.
Also: `import acpwire` imports no OpenTelemetry."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio
import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from acp_schema import v1, v2
from acpwire import ClientConnection, ConnectionOptions, WireLine, connect, serve_agent
from acpwire.errors import PeerError
from acpwire.examples.hello_agent import HelloAgent
from acpwire.examples.hello_client import HelloClient
from acpwire.examples.hello_v1_agent import HelloV1Agent
from acpwire.otel import Telemetry
from acpwire.testing import memory_stream_pair
from helpers.hello_turns import HELLO_TURN, INFO, hello_turn
from helpers.paths import ROOT
from helpers.raw import RawPeer

pytestmark = pytest.mark.usefixtures("loop")


@pytest.fixture
def exporter() -> InMemorySpanExporter:
    return InMemorySpanExporter()


def provider_for(exporter: InMemorySpanExporter) -> TracerProvider:
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider


@asynccontextmanager
async def instrumented_pair(
    exporter: InMemorySpanExporter,
    agent: type = HelloAgent,
    *,
    client_options: ConnectionOptions | None = None,
    agent_lines: list[WireLine] | None = None,
) -> AsyncIterator[ClientConnection]:
    """The agent served and the HelloClient connected over an in-memory pair, each side with a
    Telemetry of its own on one tracer provider (unless `client_options` says otherwise)."""
    provider = provider_for(exporter)
    on_line = agent_lines.append if agent_lines is not None else None
    agent_options = ConnectionOptions(
        telemetry=Telemetry(tracer_provider=provider), on_line=on_line
    )
    if client_options is None:
        client_options = ConnectionOptions(telemetry=Telemetry(tracer_provider=provider))
    client_side, agent_side = memory_stream_pair()
    with anyio.fail_after(8):
        async with anyio.create_task_group() as tasks:

            async def serve() -> None:
                await serve_agent(
                    agent if agent is not HelloV1Agent else None,
                    v1=agent if agent is HelloV1Agent else None,
                    stream=agent_side,
                    options=agent_options,
                )

            tasks.start_soon(serve)
            kind = {"v1": HelloClientV1} if agent is HelloV1Agent else {"v2": HelloClient}
            async with connect(client_side, **kind, options=client_options) as conn:  # type: ignore[arg-type]
                yield conn
            tasks.cancel_scope.cancel()  # the agent: its spans ended with its answers


class HelloClientV1(v1.ClientBase):
    def __init__(self, agent: v1.AgentPeer) -> None:
        self.agent = agent

    async def session_request_permission(
        self, params: v1.RequestPermissionRequest
    ) -> v1.RequestPermissionResponse:
        choice = next(o for o in params.options if o.kind == "allow_once")
        return v1.RequestPermissionResponse(
            outcome=v1.SelectedPermissionOutcome(option_id=choice.option_id)
        )


def one(spans: Sequence[ReadableSpan], name: str, kind: SpanKind) -> ReadableSpan:
    found = [span for span in spans if span.name == name and span.kind == kind]
    assert len(found) == 1, [(span.name, span.kind) for span in spans]
    return found[0]


def parent_of(span: ReadableSpan) -> int | None:
    return span.parent.span_id if span.parent is not None else None


def span_id(span: ReadableSpan) -> int:
    assert span.context is not None
    return span.context.span_id


def turn_spans(spans: Sequence[ReadableSpan]) -> list[ReadableSpan]:
    return [span for span in spans if span.name == "acp.turn"]


async def test_one_trace_crosses_editor_to_agent(exporter: InMemorySpanExporter) -> None:
    provider = provider_for(exporter)
    editor = provider.get_tracer("editor")
    lines: list[WireLine] = []
    with editor.start_as_current_span("user asks") as root:
        async with instrumented_pair(exporter, agent_lines=lines) as conn:
            assert await hello_turn(conn) == HELLO_TURN
    spans = exporter.get_finished_spans()
    assert {span.context.trace_id for span in spans if span.context} == {
        root.get_span_context().trace_id
    }
    for method in ("initialize", "session/new", "session/prompt"):
        sent = one(spans, method, SpanKind.CLIENT)
        handled = one(spans, method, SpanKind.SERVER)
        assert parent_of(handled) == span_id(sent)
        for span in (sent, handled):
            assert span.attributes is not None
            assert span.attributes["rpc.system"] == "jsonrpc"
            assert span.attributes["rpc.method"] == method
            assert span.status.status_code == StatusCode.UNSET
        assert sent.attributes and handled.attributes
        assert (
            sent.attributes["rpc.jsonrpc.request_id"]
            == handled.attributes["rpc.jsonrpc.request_id"]
        )
    # the client's turn: the parent of its prompt; the agent's: the child of its prompt's
    # SERVER span, and the parent of the permission request its work sends
    handled_prompt = one(spans, "session/prompt", SpanKind.SERVER)
    [agent_turn] = [
        span for span in turn_spans(spans) if parent_of(span) == span_id(handled_prompt)
    ]
    [client_turn] = [span for span in turn_spans(spans) if span is not agent_turn]
    assert parent_of(client_turn) == span_id(root)  # type: ignore[arg-type]
    assert parent_of(one(spans, "session/prompt", SpanKind.CLIENT)) == span_id(client_turn)
    asked = one(spans, "session/request_permission", SpanKind.CLIENT)
    answered = one(spans, "session/request_permission", SpanKind.SERVER)
    assert parent_of(asked) == span_id(agent_turn)
    assert parent_of(answered) == span_id(asked)
    for turn in (agent_turn, client_turn):
        assert turn.attributes is not None
        assert turn.attributes["acp.stop_reason"] == "end_turn"
        assert turn.attributes["acp.session_id"] == "session-1"
        kinds = [
            event.attributes["acp.session_update"] for event in turn.events if event.attributes
        ]
        # the three chunks of the reply are one event (the first), and all are counted
        assert kinds == [
            "user_message",
            *("state_update",) * 3,  # running, requires_action, running
            "agent_message_chunk",
            "state_update",  # idle
        ]
        assert turn.attributes["acp.session_updates"] == 8
    # the agent's updates carry the trace context of its turn
    updates = [
        json.loads(w.line) for w in lines if w.direction == "out" and b"session/upd" in w.line
    ]
    assert updates and {update["params"]["_meta"]["traceparent"][36:52] for update in updates} == {
        f"{span_id(agent_turn):016x}"
    }
    # the turns end with their idle: after the permission was answered
    assert agent_turn.end_time and answered.end_time and agent_turn.end_time > answered.end_time


async def test_an_error_answer_is_an_error_span_with_its_code(
    exporter: InMemorySpanExporter,
) -> None:
    async with instrumented_pair(exporter) as conn:
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
        prompt = v2.PromptRequest(session_id="nowhere", prompt=[v2.TextContent(text="Hi")])
        with pytest.raises(PeerError) as raised:
            await conn.v2.peer.session_prompt(prompt)
    code = raised.value.code
    spans = exporter.get_finished_spans()
    for span in (
        one(spans, "session/prompt", SpanKind.CLIENT),
        one(spans, "session/prompt", SpanKind.SERVER),
    ):
        assert span.status.status_code == StatusCode.ERROR
        assert span.attributes and span.attributes["rpc.jsonrpc.error_code"] == code
    for turn in turn_spans(spans):
        assert turn.status.status_code == StatusCode.ERROR
        assert turn.attributes is not None and "acp.stop_reason" not in turn.attributes


async def test_a_v1_turn_ends_with_the_stop_reason_of_its_result(
    exporter: InMemorySpanExporter,
) -> None:
    async with instrumented_pair(exporter, HelloV1Agent) as conn:
        await conn.initialize(v1.InitializeRequest(protocol_version=1))
        agent = conn.v1.peer
        session = await agent.session_new(v1.NewSessionRequest(cwd=os.getcwd(), mcp_servers=[]))
        prompt: list[v1.ContentBlock] = [v1.TextContent(text="Hi")]
        done = await agent.session_prompt(
            v1.PromptRequest(session_id=session.session_id, prompt=prompt)
        )
    spans = exporter.get_finished_spans()
    for span in (
        *turn_spans(spans),
        one(spans, "session/prompt", SpanKind.CLIENT),
        one(spans, "session/prompt", SpanKind.SERVER),
    ):
        assert span.attributes and span.attributes["acp.stop_reason"] == done.stop_reason
    assert len(turn_spans(spans)) == 2


SPEC_TRACEPARENT = "00-80e1afed08e019fc1110464cfa66635c-7a085853722dc6d2-01"
"""The extensibility page's example of `_meta.traceparent`."""


async def test_a_request_written_as_the_spec_shows_continues_its_trace(
    exporter: InMemorySpanExporter,
) -> None:
    """Any client (here raw JSON lines) that puts W3C trace context at the root of `_meta`."""
    client_side, agent_side = memory_stream_pair()
    options = ConnectionOptions(telemetry=Telemetry(tracer_provider=provider_for(exporter)))
    peer = RawPeer(client_side)
    with anyio.fail_after(8):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(lambda: serve_agent(HelloAgent, stream=agent_side, options=options))
            info = {"name": "raw", "version": "1"}
            await peer.call(1, "initialize", {"protocolVersion": 2, "info": info})
            meta = {"traceparent": SPEC_TRACEPARENT, "tracestate": "vendor=1"}
            answer = await peer.call(2, "session/new", {"cwd": os.getcwd(), "_meta": meta})
            assert answer["result"]["sessionId"] == "session-1"
            tasks.cancel_scope.cancel()
    handled = one(exporter.get_finished_spans(), "session/new", SpanKind.SERVER)
    assert handled.context is not None and handled.parent is not None
    assert handled.parent.is_remote
    assert f"{handled.context.trace_id:032x}" == "80e1afed08e019fc1110464cfa66635c"
    assert f"{handled.parent.span_id:016x}" == "7a085853722dc6d2"
    assert handled.context.trace_state.get("vendor") == "1"
    assert handled.attributes and handled.attributes["rpc.jsonrpc.request_id"] == "2"


@pytest.mark.parametrize(
    "meta",
    [
        {"traceparent": "00-not-a-trace-01"},
        {"traceparent": 5, "tracestate": ["x"]},
        {"traceparent": "00-00000000000000000000000000000000-0000000000000000-01"},
    ],
    ids=["garbage", "not-a-string", "all-zero"],
)
async def test_a_malformed_traceparent_is_ignored(
    exporter: InMemorySpanExporter, meta: dict[str, object]
) -> None:
    """A client without telemetry sends its own `_meta`: the agent's span starts a trace."""
    async with instrumented_pair(exporter, client_options=ConnectionOptions()) as conn:
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
        request = v2.NewSessionRequest(cwd=os.getcwd(), meta=meta)
        session = await conn.v2.peer.session_new(request)
    assert session.session_id == "session-1"
    handled = one(exporter.get_finished_spans(), "session/new", SpanKind.SERVER)
    assert handled.parent is None and handled.context is not None and handled.context.is_valid


async def test_the_trace_context_goes_in_meta_beside_the_callers_keys(
    exporter: InMemorySpanExporter,
) -> None:
    lines: list[WireLine] = []
    async with instrumented_pair(exporter, agent_lines=lines) as conn:
        await conn.initialize(v2.InitializeRequest(protocol_version=2, info=INFO))
        request = v2.NewSessionRequest(cwd=os.getcwd(), meta={"zed.dev/debugMode": True})
        await conn.v2.peer.session_new(request)
        assert request.meta == {"zed.dev/debugMode": True}  # the caller's params untouched
    sent = one(exporter.get_finished_spans(), "session/new", SpanKind.CLIENT)
    [line] = [json.loads(w.line) for w in lines if b'"session/new"' in w.line]
    meta = line["params"]["_meta"]
    assert meta["zed.dev/debugMode"] is True
    assert sent.context is not None
    ids = f"{sent.context.trace_id:032x}-{sent.context.span_id:016x}"
    assert meta["traceparent"] == f"00-{ids}-{sent.context.trace_flags:02x}"


def test_import_acpwire_imports_no_opentelemetry() -> None:
    code = (
        "import sys, acpwire, acpwire.agent, acpwire.client; "
        "print([m for m in sys.modules if m.split('.')[0] == 'opentelemetry'])"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_the_readme_example_prints_the_trace_it_shows(capsys: pytest.CaptureFixture[str]) -> None:
    readme = (ROOT / "README.md").read_text()
    [(code, shown)] = re.findall(
        r"```python\n((?:(?!```).)*?acpwire\.otel(?:(?!```).)*)```\n\n```text\n(.*?)```\n",
        readme,
        re.S,
    )
    exec(compile(code, "README.md", "exec"), {})
    assert capsys.readouterr().out == shown


def test_without_opentelemetry_acpwire_otel_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['opentelemetry'] = None  # as if not installed\n"
        "import acpwire\n"
        "try:\n"
        "    import acpwire.otel\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install acpwire[otel]" in done.stdout
