"""A tour of the generated bindings: decode the v2 prompt lifecycle, unknown variants, patches.

Run with `python -m acpwire.examples.schema_tour` (or `nox -s demo`).
"""

from __future__ import annotations

import msgspec

import acp_schema
import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import UNSET, OpenVariant

PROMPT_LIFECYCLE = [
    b'{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"sess_1",'
    b'"prompt":[{"type":"text","text":"Fix the failing test"}]}}',
    b'{"jsonrpc":"2.0","id":2,"result":{"messageId":"msg_u1"}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"state_update","state":"running"}}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"agent_message_chunk","messageId":"msg_a1",'
    b'"content":{"type":"text","text":"Looking at the test \xe2\x80\x94 one moment"}}}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"tool_call_update","toolCallId":"call_1","title":"Run pytest",'
    b'"kind":"execute","status":"in_progress"}}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"tool_call_update","toolCallId":"call_1","title":null,"status":"completed"}}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"_acme_telemetry","tokens":42,"nested":{"kept":true}}}}',
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}',
]

V1_LINE = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess_1","update":'
    b'{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hello from v1"}}}}'
)


def describe(update: object) -> str:
    match update:
        case v2.SessionStateUpdate(state=state, stop_reason=reason):
            return f"state -> {state}" + (f" ({reason})" if reason is not UNSET else "")
        case v2.AgentMessageChunk(content=v2.TextContent(text=text)):
            return f"agent says {text!r}"
        case v2.ToolCallProgress(tool_call_id=call, title=title, status=status):
            shown = "unchanged" if title is UNSET else ("cleared" if title is None else repr(title))
            return f"tool call {call}: status={status}, title {shown}"
        case OpenVariant():
            return f"unknown variant {update.tag!r} kept as {dict(update)}"
    return repr(update)


def main() -> None:
    print("acp_schema generated from:")
    for module, (source, sha256) in acp_schema.SCHEMA_RELEASES.items():
        print(f"  {module:12} {source} (sha256 {sha256[:12]})")
    print("\nv2 prompt lifecycle, decoded and re-encoded:")
    pending: dict[int | str | None, str] = {2: "session/prompt"}
    for line in PROMPT_LIFECYCLE:
        message = v2.decode_message(line, result_method=pending.get)
        match message:
            case v2.SessionUpdateMessage(params=params):
                text = describe(params.update)
            case v2.SessionPromptMessage(id=request_id, params=params):
                text = f"request {request_id} session/prompt: {type(params).__name__}"
            case acp_schema.Response(result=result):
                text = f"response: {result!r}"
            case _:
                text = repr(message)
        exact = msgspec.json.decode(v2.encode_message(message)) == msgspec.json.decode(line)
        print(f"  {text:70} round trip {'exact' if exact else 'DIFFERS'}")
        if not exact:
            raise SystemExit(f"round trip changed {line!r}")
    v1_message = v1.decode_message(V1_LINE)
    assert isinstance(v1_message, v1.SessionUpdateMessage)
    v1_update = v1_message.params.update
    assert isinstance(v1_update, v1.AgentMessageChunk)
    assert isinstance(v1_update.content, v1.TextContent)
    print(f"\nv1 session/update: {type(v1_update).__name__} {v1_update.content.text!r}")


if __name__ == "__main__":
    main()
