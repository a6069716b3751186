"""The sans-IO JSON-RPC core: error replies, batches, the in-flight table, our pending requests.

Expected wire shapes are the ones JSON-RPC 2.0 and the ACP transports page name: -32700 with
`id: null` for bad JSON, -32600 for a message that is JSON but no valid request (with its
id when it has a usable one), -32602 naming the failing `$.params...` path, nothing at all
for notifications, and the batch rules of shared/spec/v2/transports.md.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import acp_schema.v2 as v2
from acpwire._wire.dispatch import handler_dispatch
from acpwire._wire.jsonrpc import Answer, Call, JsonRpcCore, Reply
from acpwire._wire.versions import bootstrap_codec
from acpwire.errors import InvalidResponse, PeerError, RpcError
from helpers.constants import PERMISSION_REQUEST
from helpers.raw import error_response, notification, request, response

CWD = {"cwd": "/repo"}


# --------------------------------------------------------------------------- helpers


def agent_core() -> JsonRpcCore:
    """The core of an initialized v2 agent: typed requests in, client results typed."""
    return JsonRpcCore(v2.AGENT_CODEC)


def line(message: Any) -> bytes:
    return message if isinstance(message, bytes) else msgspec.json.encode(message)


def receive(core: JsonRpcCore, message: Any) -> list[Any]:
    return core.receive_line(line(message))


def replies(events: list[Any]) -> list[Any]:
    """What the core wants sent back, decoded."""
    return [msgspec.json.decode(e.data) for e in events if isinstance(e, Reply)]


def only_reply(core: JsonRpcCore, message: Any) -> Any:
    events = receive(core, message)
    assert [type(e) for e in events] == [Reply], events
    return replies(events)[0]


def calls(events: list[Any]) -> list[Call]:
    return [e for e in events if isinstance(e, Call)]


def only_call(core: JsonRpcCore, message: Any) -> Call:
    events = receive(core, message)
    assert [type(e) for e in events] == [Call], events
    return events[0]


def assert_error(reply: Any, id: Any, code: int) -> str:
    """`reply` is exactly an error response with this id and code; returns its message."""
    assert set(reply) == {"jsonrpc", "id", "error"}, reply
    assert reply["jsonrpc"] == "2.0"
    assert reply["id"] == id
    assert reply["error"]["code"] == code, reply
    message: str = reply["error"]["message"]
    return message


def decode(data: bytes | None) -> Any:
    assert data is not None
    return msgspec.json.decode(data)


# --------------------------------------------------------------------------- single messages


@pytest.mark.parametrize("data", [b'{"jsonrpc": "2.0", "id": 1', b"{not json}", b"\xff\xfe"])
def test_bad_json_is_a_parse_error_with_null_id(data: bytes) -> None:
    message = assert_error(only_reply(agent_core(), data), None, -32700)
    assert message.startswith("Parse error")


@pytest.mark.parametrize("data", [b"Loading model weights...", b"[INFO] ready", b"\xff\xfe"])
def test_a_line_that_is_not_json_is_handed_over_for_the_log(data: bytes) -> None:
    (reply,) = agent_core().receive_line(data)
    assert isinstance(reply, Reply) and reply.unparsable == data


@pytest.mark.parametrize("data", [b"1", b'"text"', b"null", b"true"])
def test_json_that_is_not_an_object_is_an_invalid_request(data: bytes) -> None:
    message = assert_error(only_reply(agent_core(), data), None, -32600)
    assert "Expected `object`" in message


def test_an_id_out_of_every_number_range_is_an_invalid_request_that_says_so() -> None:
    data = b'{"jsonrpc":"2.0","id":1e400,"method":"session/prompt","params":{}}'
    message = assert_error(only_reply(agent_core(), data), None, -32600)
    assert "Number out of range - at `$.id`" in message


@pytest.mark.parametrize(
    "message",
    [
        {"id": 3, "method": "_vendor/ping"},  # no `jsonrpc`
        {"jsonrpc": "1.0", "id": 3, "method": "_vendor/ping"},
        {"jsonrpc": "2.0", "id": 3, "method": 5},
        {"jsonrpc": "2.0", "id": 3},  # neither method nor result/error
    ],
)
def test_invalid_request_is_answered_with_its_id(message: Any) -> None:
    message_text = assert_error(only_reply(agent_core(), message), 3, -32600)
    assert message_text.startswith("Invalid request")


def test_initialize_without_jsonrpc_before_a_version_is_picked() -> None:
    core = JsonRpcCore(bootstrap_codec())
    reply = only_reply(core, {"id": 0, "method": "initialize", "params": {"protocolVersion": 2}})
    assert_error(reply, 0, -32600)


def test_a_switched_codec_decodes_the_next_line_though_its_decoder_is_not_built_yet() -> None:
    """`switch_codec` builds no decoder (the `initialize` answer goes out first: cold start);
    the first line decoded after it builds the new codec's, so none is decoded with another."""
    core = JsonRpcCore(bootstrap_codec())
    core.switch_codec(v2.AGENT_CODEC)
    assert not core.prepared
    call = only_call(core, request(1, "session/new", CWD))
    assert core.prepared
    assert call.spec is v2.AGENT_CODEC.inbound["session/new"]
    assert call.params == v2.NewSessionRequest(cwd="/repo")
    core.switch_codec(bootstrap_codec())  # (a codec without methods has nothing to build)
    assert core.prepared


@pytest.mark.parametrize("jsonrpc", [None, "1.0", 2])
def test_known_method_with_missing_or_wrong_jsonrpc_is_rejected(jsonrpc: Any) -> None:
    message: dict[str, Any] = {"id": 4, "method": "session/new", "params": CWD}
    if jsonrpc is not None:
        message["jsonrpc"] = jsonrpc
    assert_error(only_reply(agent_core(), message), 4, -32600)


@pytest.mark.parametrize("bad_id", [True, {"n": 1}, [1]])
def test_request_with_an_unusable_id_gets_invalid_request_with_null_id(bad_id: Any) -> None:
    message = {"jsonrpc": "2.0", "id": bad_id, "method": "session/new", "params": CWD}
    assert_error(only_reply(agent_core(), message), None, -32600)


def test_unknown_method_is_a_call_without_spec() -> None:
    call = only_call(agent_core(), request(7, "foo/bar", {"x": [1, 2]}))
    assert call.spec is None
    assert (call.id, call.method, call.is_request) == (7, "foo/bar", True)
    assert msgspec.json.decode(call.params) == {"x": [1, 2]}  # kept raw


@pytest.mark.parametrize("method", ["foo/bar", "session/list"])  # unknown / not implemented
async def test_dispatch_answers_unhandled_requests_with_method_not_found(method: str) -> None:
    class NewOnly(v2.AgentBase):
        async def session_new(self, params: v2.NewSessionRequest) -> v2.NewSessionResponse:
            return v2.NewSessionResponse(session_id="s")

    core = agent_core()
    call = only_call(core, request(8, method, {}))
    with pytest.raises(RpcError) as caught:
        await handler_dispatch(NewOnly(), v2.AgentBase)(call)
    assert decode(core.respond_error(8, caught.value)) == {
        "jsonrpc": "2.0",
        "id": 8,
        "error": {"code": -32601, "message": "Method not found", "data": {"method": method}},
    }


def test_known_method_params_are_typed() -> None:
    call = only_call(agent_core(), request("a", "session/new", CWD))
    assert call.spec is v2.SESSION_NEW
    assert call.params == v2.NewSessionRequest(cwd="/repo")


@pytest.mark.parametrize(
    ("method", "params", "path"),
    [
        ("session/new", {"cwd": 5}, "`$.params.cwd`"),
        ("session/new", 5, "`$.params`"),
        ("session/prompt", {"sessionId": "s", "prompt": [{"type": "text"}]}, "`$.params.prompt"),
    ],
)
def test_invalid_params_name_the_failing_path(method: str, params: Any, path: str) -> None:
    message = assert_error(only_reply(agent_core(), request(9, method, params)), 9, -32602)
    assert message.startswith("Invalid params")
    assert path in message


def test_missing_params_of_a_known_request_are_invalid_params() -> None:
    assert_error(only_reply(agent_core(), request(9, "session/new")), 9, -32602)


@pytest.mark.parametrize("params", [{"sessionId": 5}, 5, {}])
def test_notification_with_bad_params_gets_no_reply(params: Any) -> None:
    assert receive(agent_core(), notification("session/cancel", params)) == []


def test_valid_notification_is_a_call_without_id() -> None:
    call = only_call(agent_core(), notification("session/cancel", {"sessionId": "s"}))
    assert not call.is_request
    assert call.params == v2.CancelSessionNotification(session_id="s")


# --------------------------------------------------------------------------- answering


def test_response_bytes_are_exact() -> None:
    core = agent_core()
    only_call(core, request(1, "session/new", CWD))
    only_call(core, request("two", "session/new", CWD))
    result = v2.NewSessionResponse(session_id="sess_1")
    assert core.respond(1, result) == b'{"jsonrpc":"2.0","id":1,"result":{"sessionId":"sess_1"}}'
    assert core.respond_error("two", RpcError(-32002, "Resource not found", {"uri": "x"})) == (
        b'{"jsonrpc":"2.0","id":"two","error":'
        b'{"code":-32002,"message":"Resource not found","data":{"uri":"x"}}}'
    )


def test_duplicate_in_flight_id_is_rejected_and_the_first_still_answered_once() -> None:
    core = agent_core()
    first = only_call(core, request(5, "session/new", CWD))
    assert_error(only_reply(core, request(5, "session/new", {"cwd": "/other"})), 5, -32600)
    assert core.in_flight == {5}
    assert decode(core.respond(5, None))["id"] == 5
    assert first.params.cwd == "/repo"
    assert core.in_flight == frozenset()
    only_call(core, request(5, "session/new", CWD))  # free again once answered


def test_each_request_is_answered_exactly_once() -> None:
    core = agent_core()
    only_call(core, request(1, "session/new", CWD))
    core.respond(1, None)
    with pytest.raises(KeyError):
        core.respond(1, None)
    with pytest.raises(KeyError):
        core.respond_error(1, RpcError.internal_error("again"))
    with pytest.raises(KeyError):
        core.respond(2, None)  # never received


def test_notifications_cannot_be_answered() -> None:
    core = agent_core()
    only_call(core, notification("session/cancel", {"sessionId": "s"}))
    assert core.in_flight == frozenset()


def test_unsolicited_error_has_null_id() -> None:
    data = agent_core().unsolicited_error(RpcError.invalid_request("too long"))
    assert data == (
        b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid request: too long"}}'
    )


# --------------------------------------------------------------------------- our requests


def test_our_request_ids_start_at_zero_and_encode_the_method() -> None:
    core = agent_core()
    first_id, data = core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    second_id, _ = core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    assert (first_id, second_id) == (0, 1)
    assert decode(data) == {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "session/request_permission",
        "params": msgspec.json.decode(msgspec.json.encode(PERMISSION_REQUEST)),
    }
    assert decode(core.notify(v2.SESSION_UPDATE, _state_update("running"))) == {
        "jsonrpc": "2.0",
        "method": "session/update",
        "params": {
            "sessionId": "s",
            "update": {"sessionUpdate": "state_update", "state": "running"},
        },
    }


def _state_update(state: str) -> v2.UpdateSessionNotification:
    return v2.UpdateSessionNotification(session_id="s", update=v2.SessionStateUpdate(state=state))


def test_response_is_matched_to_its_request_with_a_typed_result() -> None:
    core = agent_core()
    request_id, _ = core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    selected = {"outcome": {"outcome": "selected", "optionId": "allow"}}
    events = receive(core, response(request_id, selected))
    assert len(events) == 1 and isinstance(events[0], Answer)
    answer = events[0]
    assert answer.id == 0 and answer.error is None
    assert answer.result == v2.RequestPermissionResponse(
        outcome=v2.SelectedPermissionOutcome(option_id="allow")
    )
    # A second answer to the same id (late or duplicate) is dropped.
    assert receive(core, response(request_id, selected)) == []


def test_error_response_becomes_a_peer_error_naming_the_method() -> None:
    core = agent_core()
    request_id, _ = core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    error = error_response(request_id, -32002, "Resource not found", {"uri": "file:///x"})
    (answer,) = receive(core, error)
    assert isinstance(answer, Answer) and answer.result is None
    assert isinstance(answer.error, PeerError) and isinstance(answer.error, RpcError)
    assert answer.error.to_wire() == error["error"]
    assert answer.error.method == "session/request_permission"
    assert str(answer.error) == "session/request_permission: Resource not found (-32002)"


@pytest.mark.parametrize("id", [0, 99, "0", None])
def test_responses_to_unknown_ids_are_dropped(id: Any) -> None:
    core = agent_core()  # nothing pending
    assert receive(core, response(id, {})) == []
    assert receive(core, {"jsonrpc": "2.0", "id": id, "error": {"code": 1, "message": "x"}}) == []


def test_result_of_the_wrong_shape_fails_the_pending_request_as_invalid_response() -> None:
    core = agent_core()
    request_id, _ = core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    (answer,) = receive(core, response(request_id, {"outcome": 5}))
    assert isinstance(answer, Answer)
    assert isinstance(answer.error, InvalidResponse)  # not an RpcError: nothing said -32602
    assert answer.error.method == "session/request_permission"
    assert "`$.result.outcome`" in answer.error.reason


def test_forgotten_request_drops_its_late_answer() -> None:
    core = agent_core()
    request_id, _ = core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    core.forget(request_id)
    assert receive(core, response(request_id, {})) == []


def test_abandon_all_returns_pending_ids_and_drops_their_answers() -> None:
    core = agent_core()
    ids = [core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)[0] for _ in range(3)]
    assert sorted(core.abandon_all()) == ids == [0, 1, 2]
    assert core.abandon_all() == []
    assert receive(core, response(1, {})) == []
    assert core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)[0] == 3  # ids go on


# --------------------------------------------------------------------------- batches


def new_session(id: Any) -> dict[str, Any]:
    return request(id, "session/new", CWD)


CANCEL_NOTE = notification("session/cancel", {"sessionId": "s"})


@pytest.mark.parametrize("data", [b"[]", b"[ ]", b"  [\n]"])
def test_empty_batch_is_one_invalid_request_not_an_array(data: bytes) -> None:
    assert_error(only_reply(agent_core(), data), None, -32600)


def test_batch_of_bad_json_is_one_parse_error() -> None:
    assert_error(only_reply(agent_core(), b'[{"jsonrpc": "2.0", "method"'), None, -32700)


def test_all_notification_batch_sends_nothing() -> None:
    events = receive(agent_core(), [CANCEL_NOTE, notification("_vendor/note"), CANCEL_NOTE])
    assert len(calls(events)) == 3 and replies(events) == []


def test_mixed_batch_is_answered_with_one_array_once_every_request_is_answered() -> None:
    core = agent_core()
    events = receive(core, [new_session(1), CANCEL_NOTE, new_session("b")])
    assert [c.id for c in calls(events) if c.is_request] == [1, "b"]
    assert replies(events) == []
    assert core.respond("b", v2.NewSessionResponse(session_id="sb")) is None
    array = decode(core.respond_error(1, RpcError.internal_error("x")))
    assert isinstance(array, list) and len(array) == 2
    by_id = {item["id"]: item for item in array}
    assert by_id["b"] == {"jsonrpc": "2.0", "id": "b", "result": {"sessionId": "sb"}}
    assert_error(by_id[1], 1, -32603)


def test_batch_of_responses_to_our_requests() -> None:
    core = agent_core()
    a, _ = core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    b, _ = core.request(v2.SESSION_REQUEST_PERMISSION, PERMISSION_REQUEST)
    cancelled = {"outcome": {"outcome": "cancelled"}}
    events = receive(
        core,
        [
            response(b, cancelled),
            {"jsonrpc": "2.0", "id": a, "error": {"code": -32800, "message": "Request cancelled"}},
        ],
    )
    assert [(type(e), e.id) for e in events] == [(Answer, b), (Answer, a)]
    assert events[1].error.code == -32800


def test_invalid_entries_get_their_own_invalid_request_with_null_id() -> None:
    core = agent_core()
    events = receive(core, [1, new_session(1), "x", CANCEL_NOTE])
    assert replies(events) == []  # held back until the request is answered
    array = decode(core.respond(1, None))
    assert sorted((item["id"] is None, item.get("error", {}).get("code")) for item in array) == [
        (False, None),
        (True, -32600),
        (True, -32600),
    ]


def test_batch_with_only_invalid_entries_is_answered_at_once() -> None:
    (array,) = replies(receive(agent_core(), [1, [], {"jsonrpc": "2.0"}]))
    assert [(item["id"], item["error"]["code"]) for item in array] == [(None, -32600)] * 3


def test_notification_with_bad_params_in_a_batch_gets_no_reply() -> None:
    events = receive(agent_core(), [notification("session/cancel", {"sessionId": 5}), CANCEL_NOTE])
    assert replies(events) == []


BatchEntry = tuple[str, int]  # ("request" | "notification" | "extension" | "invalid", id)


@st.composite
def batches(draw: st.DrawFn) -> tuple[list[BatchEntry], int]:
    kinds = st.sampled_from(["request", "extension", "notification", "invalid"])
    entries = [(kind, i) for i, kind in enumerate(draw(st.lists(kinds, min_size=1, max_size=8)))]
    return entries, draw(st.integers(0, 2**32))


def batch_line(entries: list[BatchEntry]) -> list[Any]:
    def entry(kind: str, id: int) -> Any:
        return {
            "request": new_session(id),
            "extension": request(id, "_vendor/op", {"n": id}),
            "notification": CANCEL_NOTE,
            "invalid": 1,
        }[kind]

    return [entry(kind, id) for kind, id in entries]


@settings(max_examples=200, deadline=None)
@given(batches())
def test_batch_answers_each_request_once_in_one_array(drawn: tuple[list[BatchEntry], int]) -> None:
    entries, seed = drawn
    core = agent_core()
    events = receive(core, batch_line(entries))
    requests = [c for c in calls(events) if c.is_request]
    assert sorted(c.id for c in requests) == [
        id for kind, id in entries if kind in {"request", "extension"}
    ]
    sent = replies(events)
    random.Random(seed).shuffle(requests)
    for call in requests:
        assert not sent, "the array went out before every request was answered"
        data = (
            core.respond(call.id, {"n": call.id})
            if call.id % 2
            else core.respond_error(call.id, RpcError.internal_error("odd"))
        )
        if data is not None:
            sent.append(decode(data))
    invalid = sum(kind == "invalid" for kind, _ in entries)
    if not requests and not invalid:
        assert sent == []  # never an empty array
        return
    (array,) = sent
    assert isinstance(array, list)
    assert sorted(item["id"] for item in array if item["id"] is not None) == sorted(
        c.id for c in requests
    )
    assert sum(item["id"] is None for item in array) == invalid
    assert core.in_flight == frozenset()
