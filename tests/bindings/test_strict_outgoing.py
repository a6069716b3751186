"""The opt-in strict check of what we send (`check_outgoing`, `CheckedJsonRpcCore`).

Receiving stays lenient (an unknown open-enum value or union tag is kept: forward
compatibility); sending checks that every such value is known to this schema release or
`_`-prefixed, that required fields are there and every value has its schema type.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import msgspec
import pytest

import acp_schema.v1 as v1
import acp_schema.v2 as v2
from acp_schema import UNSET, Codec, OutgoingCheckError, check_outgoing
from acpwire._wire.connection import Connection
from acpwire._wire.jsonrpc import Call, CheckedJsonRpcCore, JsonRpcCore
from acpwire._wire.options import ConnectionOptions
from acpwire.errors import RpcError
from acpwire.testing import memory_stream_pair
from helpers.constants import PERMISSION_REQUEST
from helpers.raw import RawPeer, request

pytestmark = pytest.mark.usefixtures("loop")

CODEX_ENV_VAR_AUTH = {
    "id": "openai-api-key",
    "name": "Use OPENAI_API_KEY",
    "description": "...",
    "type": "env_var",
    "vars": [{"name": "OPENAI_API_KEY"}],
}


def state_update(**fields: Any) -> v2.UpdateSessionNotification:
    return v2.UpdateSessionNotification(session_id="sess_1", update=v2.SessionStateUpdate(**fields))


def rejection(value: Any, path: str = "$", tp: Any = None) -> str:
    with pytest.raises(OutgoingCheckError) as caught:
        check_outgoing(value, tp, path)
    return str(caught.value)


# --------------------------------------------------------------------------- check_outgoing


@pytest.mark.parametrize(
    ("fields", "path", "allowed"),
    [
        ({"state": "runing"}, "$.params.update.state", "'running', 'idle', 'requires_action'"),
        (
            {"state": "idle", "stop_reason": "end_trun"},
            "$.params.update.stopReason",
            "'end_turn', 'max_tokens', 'max_turn_requests', 'refusal', 'cancelled', 'error'",
        ),
    ],
)
def test_a_typo_in_an_open_enum_names_the_path_and_the_allowed_values(
    fields: dict[str, str], path: str, allowed: str
) -> None:
    value = state_update(**fields)
    # received, the same value is accepted (a future release may define it) ...
    assert Codec(v2.UpdateSessionNotification).decode(msgspec.json.encode(value)) == value
    # ... sent, it is a typo
    message = rejection(value, "$.params")
    assert f"at `{path}`" in message
    assert f"allows {allowed}, or an `_`-prefixed extension" in message


def test_known_and_extension_values_pass() -> None:
    check_outgoing(state_update(state="idle", stop_reason="end_turn"))
    check_outgoing(state_update(state="_paused"))
    vendor_block = v2.UnknownContentBlock({"type": "_vendor_blob", "data": [1, 2]})
    check_outgoing(v2.PromptRequest(session_id="s", prompt=[vendor_block]))
    # an integer open enum (error codes) takes any integer: nothing is reserved there
    check_outgoing(v2.Error(code=-32099, message="vendor failure"))


def test_an_invented_union_tag_is_rejected() -> None:
    line = msgspec.json.encode(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "result": {"protocolVersion": 1, "authMethods": [CODEX_ENV_VAR_AUTH]},
        }
    )
    received = v1.CLIENT_CODEC.decode(line, lambda _id: "initialize")
    with pytest.raises(OutgoingCheckError) as caught:
        v1.INITIALIZE.result.check_outgoing(received.result, "$.result")
    message = str(caught.value)
    assert "at `$.result.authMethods[0].type`" in message
    assert "allows 'terminal', 'agent', none (the default variant), or an `_`-prefixed" in message

    typo_block = v2.UnknownContentBlock({"type": "imgae", "data": "AA=="})
    message = rejection(v2.PromptRequest(session_id="s", prompt=[typo_block]), "$.params")
    assert "Unknown `type` of ContentBlock 'imgae'" in message
    assert "at `$.params.prompt[0].type`" in message


def test_a_missing_required_field_or_a_wrong_type_is_rejected() -> None:
    message = rejection(v2.NewSessionResponse(session_id=UNSET), "$.result")  # type: ignore[arg-type]
    assert "missing required field `sessionId` - at `$.result`" in message
    chunk = v1.AgentMessageChunk(content=v1.TextContent(text=5))  # type: ignore[arg-type]
    message = rejection(v1.SessionNotification(session_id="s", update=chunk), "$.params")
    assert "Expected `str`, got `int` - at `$.params.update.content.text`" in message


def test_no_leniency_on_the_way_out() -> None:
    """`_meta` is default-on-error: a malformed one is dropped on receive, refused on send."""
    value = v2.NewSessionResponse(session_id="s", meta=5)  # type: ignore[arg-type]
    received = Codec(v2.NewSessionResponse).decode(msgspec.json.encode(value))
    assert received.meta is UNSET
    assert "at `$._meta`" in rejection(value)


def test_a_whole_message_is_checked_as_its_own_type() -> None:
    message = v2.SessionUpdateMessage(jsonrpc="2.0", params=state_update(state="runing"))
    assert "at `$.params.update.state`" in rejection(message)


# --------------------------------------------------------------------------- JsonRpcCore


CHECKED = ("request", "notify", "respond", "respond_error", "receive_line")


def test_off_by_default_and_nothing_shadows_the_plain_methods() -> None:
    core = JsonRpcCore(v2.CLIENT_CODEC)
    assert not core.check_outgoing
    assert b'"runing"' in core.notify(v2.SESSION_UPDATE, state_update(state="runing"))
    for name in CHECKED:
        assert getattr(core, name).__func__ is getattr(JsonRpcCore, name)
    core = CheckedJsonRpcCore(v2.CLIENT_CODEC)
    assert core.check_outgoing
    assert all(getattr(core, name).__func__ is not getattr(JsonRpcCore, name) for name in CHECKED)


def test_core_checks_requests_and_notifications_before_encoding() -> None:
    core = CheckedJsonRpcCore(v2.AGENT_CODEC)
    with pytest.raises(OutgoingCheckError, match=r"at `\$\.params\.update\.state`"):
        core.notify(v2.SESSION_UPDATE, state_update(state="runing"))
    bad_kind = msgspec.structs.replace(
        PERMISSION_REQUEST,
        options=[v2.PermissionOption(option_id="allow", name="Allow", kind="allow_onse")],
    )
    with pytest.raises(OutgoingCheckError, match=r"at `\$\.params\.options\[0\]\.kind`"):
        core.request(v2.SESSION_REQUEST_PERMISSION, bad_kind)
    assert not core.in_flight and core.abandon_all() == []  # nothing was sent or is awaited
    request_id, data = core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    assert request_id == 0 and b'"allow_once"' in data


def test_core_checks_results_and_the_request_stays_answerable() -> None:
    core = CheckedJsonRpcCore(v2.AGENT_CODEC)
    line = msgspec.json.encode(request(7, "session/new", {"cwd": "/tmp"}))
    (call,) = core.receive_line(line)
    assert isinstance(call, Call) and call.id == 7
    with pytest.raises(
        OutgoingCheckError, match=r"Expected `str`, got `int` - at `\$\.result\.sessionId`"
    ):
        core.respond(7, v2.NewSessionResponse(session_id=5))  # type: ignore[arg-type]
    assert core.in_flight == {7}
    assert b'"code":-32603' in (core.respond_error(7, RpcError.internal_error("bad result")) or b"")
    (call,) = core.receive_line(msgspec.json.encode(request(8, "session/new", {"cwd": "/tmp"})))
    assert b'"sessionId":"sess_1"' in (
        core.respond(8, v2.NewSessionResponse(session_id="sess_1")) or b""
    )


async def test_connection_answers_a_bad_result_with_internal_error_and_logs_it(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def dispatch(call: Call) -> v2.NewSessionResponse:
        return v2.NewSessionResponse(session_id="sess_1", config_options=[{"kind": "nope"}])  # type: ignore[list-item]

    ours, theirs = memory_stream_pair()
    connection = Connection(
        ours, v2.AGENT_CODEC, dispatch, options=ConnectionOptions(check_outgoing=True)
    )
    peer = RawPeer(theirs)
    with caplog.at_level(logging.ERROR):
        async with anyio.create_task_group() as nursery:
            await nursery.start(connection.run)
            answer = await peer.call(1, "session/new", {"cwd": "/tmp"})
            nursery.cancel_scope.cancel()
    assert answer["id"] == 1 and answer["error"]["code"] == -32603
    assert "OutgoingCheckError" in answer["error"]["message"]
    assert "at `$.result.configOptions[0]" in answer["error"]["message"]
    assert any("OutgoingCheckError" in r.getMessage() + str(r.exc_info) for r in caplog.records)


async def test_serve_agent_checks_what_the_agent_sends_when_asked() -> None:
    """serve_agent(check_outgoing=True): a typo in an update fails the send in the handler
    (so its request is answered -32603) and never reaches the wire; off, it goes out."""
    from functools import partial

    from acpwire.agent import serve_agent

    class TypoAgent(v2.AgentBase):
        def __init__(self, client: v2.ClientPeer) -> None:
            self.client = client

        async def initialize(self, params: v2.InitializeRequest) -> v2.InitializeResponse:
            info = v2.Implementation(name="typo", version="1")
            caps = v2.AgentCapabilities(session=v2.SessionCapabilities())
            return v2.InitializeResponse(protocol_version=2, info=info, capabilities=caps)

        async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
            typo = v2.SessionStateUpdate(state="runing")  # type: ignore[arg-type]
            await self.client.session_update(
                v2.UpdateSessionNotification(session_id="s1", update=typo)
            )
            return v2.NewSessionResponse(session_id="s1")

    init = {"protocolVersion": 2, "info": {"name": "t", "version": "1"}}
    for check in (False, True):
        ours, theirs = memory_stream_pair()
        peer = RawPeer(theirs)
        async with anyio.create_task_group() as nursery:
            nursery.start_soon(partial(serve_agent, TypoAgent, stream=ours, check_outgoing=check))
            await peer.send(request(1, "initialize", init))
            assert "result" in await peer.receive()
            await peer.send(request(2, "session/new", {"cwd": "/", "mcpServers": []}))
            first = await peer.receive()
            if check:
                assert first["id"] == 2 and first["error"]["code"] == -32603
                assert "'runing'" in first["error"]["message"]
            else:
                assert first["params"]["update"]["state"] == "runing"
                assert (await peer.receive())["result"] == {"sessionId": "s1"}
            nursery.cancel_scope.cancel()
