"""Variant class names are pinned (codegen/names.py), the same for one wire variant in the
stable and unstable modules, stable when a schema release adds a `$ref`, and reported by
`python -m codegen.vendor report` when they change; types nothing decodes are not exported."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

import acp_schema.v1 as v1
import acp_schema.v1.unstable as v1u
import acp_schema.v2 as v2
import acp_schema.v2.unstable as v2u
from codegen.__main__ import load_modules
from codegen.classify import ShapeError, classify
from codegen.names import VARIANT_NAMES
from codegen.vendor import CLASS_NAMES, UNPINNED, names_sections
from helpers.paths import ROOT

SCHEMA_DIR = ROOT / "schema"


def vendored(version: str) -> dict[str, Any]:
    schema: dict[str, Any] = json.loads((SCHEMA_DIR / version / "schema.json").read_text())
    return schema


def variant_names(schema: dict[str, Any], version: str) -> dict[tuple[str, str], str]:
    module = classify(schema, version=version, unstable=False, source="", sha256="")
    structs = {s.name: s for s in module.structs}
    return {(u.name, str(structs[v].tag_value)): v for u in module.unions for v in u.variants}


def test_every_variant_of_the_vendored_release_is_pinned() -> None:
    modules = load_modules(SCHEMA_DIR)
    assert [m.unpinned for m in modules] == [[], [], [], []]
    generated = {m.version: set(m.by_name()) for m in modules}
    for m in modules:
        generated[m.version] |= set(m.by_name())
    stale = {key: name for key, name in VARIANT_NAMES.items() if name not in generated[key[0]]}
    assert not stale, f"entries of codegen/names.py that name no generated class: {stale}"


@pytest.mark.parametrize("version", ["v1", "v2"])
def test_one_wire_variant_has_one_name_in_stable_and_unstable(version: str) -> None:
    def variants(unstable: bool) -> dict[tuple[str, str], str]:
        (module,) = [
            m for m in load_modules(SCHEMA_DIR) if (m.version, m.unstable) == (version, unstable)
        ]
        structs = {s.name: s for s in module.structs}
        return {(u.name, str(structs[v].tag_value)): v for u in module.unions for v in u.variants}

    stable, unstable = variants(False), variants(True)
    shared = stable.keys() & unstable.keys()
    assert len(shared) > 30
    assert {k: stable[k] for k in shared} == {k: unstable[k] for k in shared}


def test_session_update_names_users_rely_on() -> None:
    for module in (v1, v1u, v2, v2u):
        assert module.ToolCallProgress.__struct_config__.tag == "tool_call_update"
        assert module.ToolCallUpdate.__struct_config__.tag is None  # the payload type
    for module in (v2, v2u):
        assert module.SessionStateUpdate.__struct_config__.tag == "state_update"
    assert not hasattr(v2, "StateUpdate")
    assert not hasattr(v2u, "StateUpdateSessionUpdate")


def test_types_nothing_decodes_are_not_exported() -> None:
    """Payloads only ever flattened into another struct (the state union of v2's
    state_update, ContentChunk under the three chunk updates) are not generated."""
    for name in ("RunningStateUpdate", "RequiresActionStateUpdate", "ContentChunk"):
        assert name not in v2.types.__all__
        assert not hasattr(v2, name)
    # where the unstable schema uses the state union as a field type, its variants decode
    assert "RunningStateUpdate" in v2u.types.__all__


def test_a_new_ref_to_a_payload_keeps_the_variant_name() -> None:
    """ElicitationAcceptAction, the payload of `accept`, gains a second use: the variant is
    still AcceptElicitationResponse, and the payload becomes a type of its own."""
    schema = copy.deepcopy(vendored("v2"))
    ref = {"$ref": "#/$defs/ElicitationAcceptAction"}
    schema["$defs"]["ElicitationLog"] = {"type": "object", "properties": {"accepted": ref}}
    before = variant_names(vendored("v2"), "v2")
    after = variant_names(schema, "v2")
    assert after == before
    assert after[("CreateElicitationResponse", "accept")] == "AcceptElicitationResponse"


def test_a_pinned_payload_name_that_becomes_shared_stops_generation() -> None:
    """`UserMessage` is the variant and its payload; a second use of the payload would need a
    second class of that name: generation stops and names the table to edit."""
    schema = copy.deepcopy(vendored("v2"))
    ref = {"$ref": "#/$defs/UserMessage"}
    schema["$defs"]["MessageLog"] = {"type": "object", "properties": {"first": ref}}
    with pytest.raises(ShapeError, match=r"'UserMessage'.*codegen/names\.py"):
        classify(schema, version="v2", unstable=False, source="", sha256="")


def with_session_update(schema: dict[str, Any], tag: str) -> dict[str, Any]:
    changed = copy.deepcopy(schema)
    variant = {
        "type": "object",
        "properties": {"sessionUpdate": {"type": "string", "const": tag}},
        "required": ["sessionUpdate"],
    }
    changed["$defs"]["SessionUpdate"]["anyOf"].insert(0, variant)
    return changed


def test_a_new_variant_is_named_by_the_rule_and_reported() -> None:
    old = vendored("v2")
    new = with_session_update(old, "goal_update")
    names, unpinned = names_sections(old, new, "v2", unstable=False)
    assert names.title == CLASS_NAMES
    assert names.added == ("GoalUpdateSessionUpdate (SessionUpdate.goal_update)",)
    assert names.removed == names.changed == ()
    assert unpinned.title == UNPINNED
    assert unpinned.added == ("SessionUpdate.goal_update -> GoalUpdateSessionUpdate",)
    module = classify(new, version="v2", unstable=False, source="", sha256="")
    assert module.unpinned == [("SessionUpdate", "goal_update", "GoalUpdateSessionUpdate")]


def test_a_renamed_class_is_reported_as_a_rename() -> None:
    """A new schema type named like the catch-all variant renames the catch-all."""
    old = vendored("v2")
    new = copy.deepcopy(old)
    new["$defs"]["UnknownSessionUpdate"] = {"type": "object", "properties": {}}
    names, _ = names_sections(old, new, "v2", unstable=False)
    assert names.changed == ("SessionUpdate.*: UnknownSessionUpdate -> OtherSessionUpdate",)


def test_identical_releases_report_no_names() -> None:
    names, unpinned = names_sections(vendored("v1"), vendored("v1"), "v1", unstable=False)
    assert names.is_empty and unpinned.is_empty
