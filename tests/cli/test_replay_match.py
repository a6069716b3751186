"""The matching rule of `acpwire replay` (`acpwire.cli.replay_match`): by shape, strict, the
keys whose values count, ids learned and substituted."""

from __future__ import annotations

import importlib
from typing import Any

import msgspec
import msgspec.inspect

from acpwire.cli.replay_match import VALUE_KEYS, IdMap, differences, kind_of, substituted


def chunk(text: Any, kind: str = "text") -> dict[str, Any]:
    return {
        "method": "session/update",
        "params": {
            "sessionId": "s1",
            "update": {
                "sessionUpdate": "agent_message_chunk",
                "content": {"type": kind, "text": text},
            },
        },
    }


def test_by_shape_other_values_may_differ() -> None:
    assert differences(chunk("Hello"), chunk("Good day")) == []
    assert differences(chunk("Hello"), chunk("Good day"), strict=True) == [
        "$.params.update.content.text: 'Hello' recorded, 'Good day' live"
    ]


def test_types_keys_and_structural_values_count() -> None:
    assert differences(chunk("Hello"), chunk(5)) == [
        "$.params.update.content.text: string recorded, number live"
    ]
    assert differences(chunk("Hello"), chunk("Hello", kind="image")) == [
        "$.params.update.content.type: 'text' recorded, 'image' live"
    ]
    assert differences({"result": {"a": 1}}, {"result": {"b": 1}}) == [
        "$.result.a: recorded, missing live",
        "$.result.b: live, not recorded",
    ]
    assert differences({"stopReason": "end_turn"}, {"stopReason": "refusal"}) == [
        "$.stopReason: 'end_turn' recorded, 'refusal' live"
    ]
    assert differences({"x": True}, {"x": 1}) == ["$.x: boolean recorded, number live"]


def test_meta_is_ignored_by_shape_only() -> None:
    live = {"params": {"_meta": {"traceparent": "00-ab"}}}
    assert differences({"params": {}}, live) == []
    assert differences({"params": {}}, live, strict=True) == ["$.params._meta: live, not recorded"]


def test_arrays_by_shape_whatever_their_counts() -> None:
    text = {"type": "text", "text": "a"}
    image = {"type": "image", "data": "..."}
    assert differences([text], [text, text, text]) == []
    assert differences([text, image], [image, text]) == []
    assert differences([text], []) == ["$: 1 items recorded, 0 live"]
    assert differences([text], [text, image]) == [  # compared with the last recorded item
        "$[1].text: recorded, missing live",
        "$[1].data: live, not recorded",
        "$[1].type: 'text' recorded, 'image' live",
    ]
    found = differences([text, image], [text])
    assert found == ["$[1]: the recorded item's shape is not among the live ones"]
    assert differences([text], [text, text], strict=True) == ["$: 1 items recorded, 2 live"]


def test_ids_are_learned_substituted_and_checked_when_strict() -> None:
    ids = IdMap()
    assert differences({"sessionId": "rec"}, {"sessionId": "live"}, ids=ids) == []
    assert ids.live == {"rec": "live"}
    sent = {"id": 3, "params": {"sessionId": "rec", "prompt": [{"toolCallId": "rec"}]}}
    assert substituted(sent, ids) == {
        "id": 3,
        "params": {"sessionId": "live", "prompt": [{"toolCallId": "live"}]},
    }
    assert differences({"sessionId": "rec"}, {"sessionId": "other"}, ids=ids) == []
    assert differences({"sessionId": "rec"}, {"sessionId": "other"}, strict=True, ids=ids) == [
        "$.sessionId: 'rec' was 'live' live before, now 'other'"
    ]


def test_at_most_three_differences_a_message() -> None:
    assert len(differences({str(n): 1 for n in range(10)}, {})) == 3


def test_kind_of_names_the_update() -> None:
    assert kind_of(chunk("x")) == "session/update agent_message_chunk"
    assert kind_of({"method": "session/prompt", "params": {}}) == "session/prompt"


def test_value_keys_are_the_schemas_tags_and_enumerations() -> None:
    """VALUE_KEYS is written out (importing the schema's modules would cost the command
    its start time); this derives it from the schema, so it cannot drift."""
    derived = set()
    for name in ("acp_schema.v2", "acp_schema.v1"):
        module = importlib.import_module(name)
        for value in (getattr(module, name) for name in module.__all__):  # (names load lazily)
            if not (isinstance(value, type) and issubclass(value, msgspec.Struct)):
                continue
            if value.__struct_config__.tag_field:
                derived.add(value.__struct_config__.tag_field)
            for field in msgspec.inspect.type_info(value).fields:  # type: ignore[attr-defined]
                kinds = (
                    field.type.types
                    if isinstance(field.type, msgspec.inspect.UnionType)
                    else (field.type,)
                )
                if any(
                    isinstance(t, msgspec.inspect.LiteralType | msgspec.inspect.EnumType)
                    for t in kinds
                ):
                    derived.add(field.encode_name)
    assert derived == VALUE_KEYS
