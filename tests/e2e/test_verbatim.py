"""Forwarding byte for byte while reading typed (`acpwire.Verbatim`), on v1 and v2: lines
carrying fields these bindings do not know at several depths (top level, inside params,
inside a nested struct, inside an unknown variant) go out exactly as they came, while their
typed view reads what the bindings know. Re-encoding the decoded message would have lost
them: each line is checked to show that too."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import OpenVariant
from acpwire import Verbatim

VENDOR_AUTH = {"type": "_vendor_sso", "id": "sso", "name": "SSO", "issuer": {"url": "https://x"}}


def initialize_answer(version: int) -> dict[str, Any]:
    """An agent's `initialize` answer with an unstable capability (`fork`), vendor fields and
    a vendor auth method (an unknown variant with a nested object)."""
    session = {"fork": {}, "_vendorFlag": True}
    if version == 2:
        result: dict[str, Any] = {
            "protocolVersion": 2,
            "info": {"name": "agent", "version": "1", "_build": "abc"},
            "capabilities": {"session": session},
        }
    else:
        result = {"protocolVersion": 1, "agentCapabilities": {"sessionCapabilities": session}}
    result["authMethods"] = [VENDOR_AUTH]
    result["_vendorTopOfResult"] = 1
    return {"jsonrpc": "2.0", "id": 0, "result": result, "x-trace": "t1"}


def chunk_notification(version: int) -> dict[str, Any]:
    """A session/update with unknown fields on the envelope, in params and in a content block."""
    update: dict[str, Any] = {
        "sessionUpdate": "agent_message_chunk",
        "content": {"type": "text", "text": "hi", "_x": {"deep": [1, 2]}},
    }
    if version == 2:
        update["messageId"] = "m"
    params = {"sessionId": "s", "update": update, "_hint": "params level"}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params, "traceId": "t2"}


def client_decoder(version: int) -> Callable[[bytes], Any]:
    """What a client reads, responses typed as answers to its `initialize` (id 0)."""
    codec = (v2 if version == 2 else v1).CLIENT_CODEC
    return functools.partial(codec.decode, result_method=lambda id: "initialize")


def line_of(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(", ", ": ")).encode()  # not msgspec's spacing


@pytest.mark.parametrize("version", [1, 2])
def test_an_initialize_answer_is_forwarded_unchanged_and_read_typed(version: int) -> None:
    line = line_of(initialize_answer(version))
    received = Verbatim(line, client_decoder(version))
    assert bytes(received) == received.line == line
    result = received.message.result
    if version == 2:
        assert isinstance(result, v2.InitializeResponse) and result.info.name == "agent"
        session: Any = result.capabilities.session  # type: ignore[union-attr]
    else:
        assert isinstance(result, v1.InitializeResponse) and result.protocol_version == 1
        session = result.agent_capabilities.session_capabilities  # type: ignore[union-attr]
    assert not hasattr(session, "fork")  # unstable: not a field of the stable bindings
    (auth,) = result.auth_methods
    assert isinstance(auth, OpenVariant) and auth == VENDOR_AUTH  # kept whole, nested object too
    reencoded = json.loads((v2 if version == 2 else v1).encode_message(received.message))
    lost = reencoded["result"]
    assert "x-trace" not in reencoded and "_vendorTopOfResult" not in lost
    capabilities = lost["capabilities"]["session"] if version == 2 else lost["agentCapabilities"]
    assert "fork" not in json.dumps(capabilities) and "_vendorFlag" not in json.dumps(lost)
    assert lost["authMethods"] == [VENDOR_AUTH]  # an unknown variant survives either way


@pytest.mark.parametrize("version", [1, 2])
def test_a_session_update_is_forwarded_unchanged_and_read_typed(version: int) -> None:
    line = line_of(chunk_notification(version))
    received = Verbatim(line, client_decoder(version))
    assert bytes(received) == line
    update = received.message.params.update
    assert isinstance(update, (v2.AgentMessageChunk, v1.AgentMessageChunk))
    assert update.content.text == "hi"  # type: ignore[union-attr]
    reencoded = (v2 if version == 2 else v1).encode_message(received.message)
    for field in (b"traceId", b"_hint", b'"_x"'):
        assert field in line and field not in reencoded


def test_an_unknown_variant_is_forwarded_whole() -> None:
    body = {"sessionUpdate": "_vendor_x", "nested": {"extra": [1, {"deeper": None}]}}
    message = {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {"sessionId": "s", "update": body},
    }
    line = line_of(message)
    received = Verbatim(line, v2.CLIENT_CODEC.decode)
    assert bytes(received) == line
    assert received.message.params.update == body  # type: ignore[union-attr]


def test_the_typed_view_is_decoded_once_on_demand_and_a_bad_line_still_forwards() -> None:
    calls: list[bytes] = []

    def decode(line: bytes) -> Any:
        calls.append(line)
        return v2.CLIENT_CODEC.decode(line)

    line = line_of(chunk_notification(2))
    received = Verbatim(line, decode)
    assert calls == []  # forwarding alone decodes nothing
    assert received.message is received.message and calls == [line]
    broken = Verbatim(b'{"jsonrpc": "2.0", "method": "session/update", "params": 3}', decode)
    assert bytes(broken).startswith(b'{"jsonrpc"')
    with pytest.raises(msgspec.ValidationError):
        _ = broken.message
