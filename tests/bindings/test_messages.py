"""decode_message and the per-side codecs: one-pass fast path, envelope path, ambiguous methods."""

from __future__ import annotations

import msgspec
import pytest

from acp_schema import UNSET, ErrorResponse, Notification, Request, Response, v1, v2
from acp_schema.v2 import unstable as v2u

CHUNK = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
    b'{"sessionUpdate":"agent_message_chunk","messageId":"m","content":{"type":"text","text":"x"}}}}'
)
UNKNOWN_VARIANT = (
    b'{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":'
    b'{"sessionUpdate":"_vendor_thing","payload":[1,null]}}}'
)
MCP = b'"params":{"serverId":"srv","requestId":"r1","method":"tools/list"}'


def roundtrip(codec_decode: object, line: bytes) -> object:
    message = v2.decode_message(line) if codec_decode is None else codec_decode(line)  # type: ignore[operator]
    assert msgspec.json.decode(v2.encode_message(message)) == msgspec.json.decode(line)
    return message


def test_fast_and_envelope_paths_give_the_same_message_class() -> None:
    fast = roundtrip(None, CHUNK)
    slow = roundtrip(None, UNKNOWN_VARIANT)  # the unknown variant needs the fallback path
    assert type(fast) is type(slow) is v2.SessionUpdateMessage
    assert isinstance(slow, v2.SessionUpdateMessage)
    assert isinstance(slow.params.update, v2.UnknownSessionUpdate)
    assert slow.id is UNSET and slow.method == "session/update"


def test_request_keeps_its_id_and_encodes_a_complete_line() -> None:
    line = b'{"jsonrpc":"2.0","id":"req-7","method":"session/cancel","params":{"sessionId":"s"}}'
    message = roundtrip(None, line)
    assert isinstance(message, v2.SessionCancelMessage) and message.id == "req-7"
    built = v2.SessionCancelMessage(
        jsonrpc="2.0", params=v2.CancelSessionNotification(session_id="s")
    )
    assert msgspec.json.decode(v2.encode_message(built)) == {
        "jsonrpc": "2.0",
        "method": "session/cancel",
        "params": {"sessionId": "s"},
    }


def test_extension_methods_keep_raw_params() -> None:
    message = roundtrip(None, b'{"jsonrpc":"2.0","id":1,"method":"_acme/ping","params":{"a":1}}')
    assert type(message) is Request
    assert isinstance(message.params, msgspec.Raw)
    assert msgspec.json.decode(message.params) == {"a": 1}
    note = roundtrip(None, b'{"jsonrpc":"2.0","method":"_acme/tick"}')
    assert type(note) is Notification and note.params is UNSET


def test_responses_are_typed_by_the_method_they_answer() -> None:
    line = b'{"jsonrpc":"2.0","id":3,"result":{"messageId":"u1"}}'
    typed = v2.decode_message(line, result_method={3: "session/prompt"}.get)
    assert isinstance(typed, Response) and isinstance(typed.result, v2.PromptResponse)
    untyped = v2.decode_message(line)
    assert isinstance(untyped, Response) and isinstance(untyped.result, msgspec.Raw)
    error = v2.decode_message(
        b'{"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":{"method":"x"}}}'
    )
    assert isinstance(error, ErrorResponse) and error.error.code == -32601


def test_a_method_both_sides_handle_is_decoded_per_receiver() -> None:
    assert v2u.AMBIGUOUS_METHODS == frozenset({"mcp/message"})
    note = b'{"jsonrpc":"2.0","method":"mcp/message",' + MCP + b"}"
    request = b'{"jsonrpc":"2.0","id":5,"method":"mcp/message",' + MCP + b"}"
    at_agent = v2u.AGENT_CODEC.decode(note)
    assert isinstance(at_agent, v2u.McpMessageAgentMessage)
    assert isinstance(at_agent.params, v2u.MessageMcpNotification)
    at_client = v2u.CLIENT_CODEC.decode(request)
    assert isinstance(at_client, v2u.McpMessageClientMessage)
    assert isinstance(at_client.params, v2u.MessageMcpRequest)
    # Without a receiver the method is ambiguous: its params stay raw.
    unsure = v2u.decode_message(request)
    assert type(unsure) is Request and isinstance(unsure.params, msgspec.Raw)


def test_side_codecs_only_accept_what_that_side_handles() -> None:
    # session/update is handled by the client; at the agent it is not a known method.
    at_agent = v2.AGENT_CODEC.decode(CHUNK)
    assert type(at_agent) is Notification and isinstance(at_agent.params, msgspec.Raw)
    assert isinstance(v2.CLIENT_CODEC.decode(CHUNK), v2.SessionUpdateMessage)


@pytest.mark.parametrize(
    ("line", "path"),
    [
        (CHUNK.replace(b'"messageId":"m"', b'"messageId":3'), "$.params.update.messageId"),
        (b'{"jsonrpc":"1.0","method":"session/update","params":{}}', "$.jsonrpc"),
        (b'{"jsonrpc":"2.0","id":1}', "$"),
    ],
)
def test_invalid_messages_name_the_failing_path(line: bytes, path: str) -> None:
    with pytest.raises(msgspec.ValidationError, match=f"at `{path.replace('$', '[$]')}`"):
        v2.decode_message(line)


def test_v1_session_update() -> None:
    line = CHUNK.replace(b'"messageId":"m",', b"")
    message = v1.decode_message(line)
    assert isinstance(message, v1.SessionUpdateMessage)
    assert isinstance(message.params.update, v1.AgentMessageChunk)
