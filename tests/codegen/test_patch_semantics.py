"""Three-state patch fields come from the schema's descriptions (codegen/patch_semantics.py);
the hand-kept table (codegen/patch_fields.py) is a cross-check that must agree for the vendored
release."""

from __future__ import annotations

import json
from typing import Any

import pytest

from codegen.lock import SCHEMA_FILES
from codegen.patch_fields import PATCH_FIELDS, PatchDifference, differences
from codegen.patch_semantics import admits_null, patch_fields, schema_patch_fields
from helpers.paths import ROOT

NULLABLE_STR = {"type": ["string", "null"]}


def vendored(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "schema" / name).read_text())
    return data


def described(text: str, prop: dict[str, Any] | None = None) -> dict[str, Any]:
    return {**(prop or NULLABLE_STR), "description": text}


def struct(doc: str = "", required: tuple[str, ...] = (), **props: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"type": "object", "properties": props, "required": list(required)}
    if doc:
        node["description"] = doc
    return node


# --- the vendored release -----------------------------------------------------


@pytest.mark.parametrize("name", SCHEMA_FILES)
def test_rule_and_table_agree_on_the_vendored_release(name: str) -> None:
    """A difference here means the upstream wording changed or the table is stale: read the
    descriptions, then fix codegen/patch_semantics.py or codegen/patch_fields.py."""
    assert [str(d) for d in differences(name, vendored(name))] == []


def test_the_table_covers_every_vendored_schema_file() -> None:
    assert sorted(PATCH_FIELDS) == sorted(SCHEMA_FILES)


def test_the_rule_finds_the_known_patch_fields() -> None:
    """Spot checks, independent of the table: one type per wording pattern."""
    found = schema_patch_fields(vendored("v2/schema.unstable.json"))
    assert found["CompactionUpdate"] == {"summary", "error", "_meta"}  # names them
    assert found["UserMessage"] == {"content", "_meta"}  # names one, `_meta` says it itself
    assert "toolCallId" not in found["ToolCallUpdate"]  # "Other fields have patch semantics"
    assert {"rawInput", "rawOutput", "locations", "name"} <= found["ToolCallUpdate"]
    assert found["SessionInfoUpdate"] == {"title", "updatedAt", "_meta"}  # all fields
    assert found["UsageUpdate"] == {"cost"}  # its `_meta`: "Omitted and `null` are equivalent"
    assert found["SessionMessage"] >= {"senderSessionId", "content"}  # fields say it themselves
    assert "PlanUpdate" not in found and "Cost" not in found


# --- the wording patterns -----------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Omission leaves the title unchanged, `null` unsets it, and a string replaces it.",
        "This field is optional and has patch semantics. Omission means no\n"
        "change, `null` clears the name, and a string replaces it.",
        "Omission leaves the kind unchanged, `null` resets it to `other`, and a value replaces it.",
        "Omitted leaves the last reported cost unchanged. `null` clears it. A value replaces it.",
        "Optional and nullable. Omitted means unchanged. `null` removes the\ncurrent report.",
        "Omitted leaves content unchanged. `null` or `[]` clears it.",
        # the protocol repository's main branch (after the 2.4.0 npm release)
        "Omitted means no metadata update; `null` is an explicit clear signal.",
    ],
)
def test_a_field_that_says_both_halves_is_three_state(text: str) -> None:
    assert patch_fields(struct(x=described(text))) == {"x"}


@pytest.mark.parametrize(
    "text",
    [
        "Omitting it or sending `null` both mean that the existing name is left unchanged.",
        "Omitted and `null` are equivalent and mean no metadata.",
        "Omission and `null` both mean absent.",
        "Omission leaves the title unchanged.",  # nothing about null
        "Set to null to clear.",  # nothing about omission, and the type says nothing
        "Complete replacement content for this message.",
    ],
)
def test_a_field_that_does_not_say_three_states_is_plain(text: str) -> None:
    assert patch_fields(struct(x=described(text))) == set()


def test_a_type_naming_its_patch_fields() -> None:
    doc = (
        "`summary`, `error`, and `_meta` have patch semantics: omission leaves the\n"
        "stored value unchanged, `null` clears it, and a concrete value replaces it."
    )
    node = struct(doc, ("id",), id={"type": "string"}, summary=NULLABLE_STR, error=NULLABLE_STR,
                  _meta=NULLABLE_STR, other=NULLABLE_STR)  # fmt: skip
    assert patch_fields(node) == {"summary", "error", "_meta"}
    one = struct("`content` has patch semantics: an omitted field ...", content=NULLABLE_STR)
    assert patch_fields(one) == {"content"}


def test_a_type_giving_its_other_fields_patch_semantics() -> None:
    doc = "Only `toolCallId` is required. Other fields have patch\nsemantics: omitted fields ..."
    node = struct(
        doc,
        ("toolCallId",),
        toolCallId=NULLABLE_STR,
        title=NULLABLE_STR,
        rawInput={"description": "any JSON"},
        count={"type": "integer"},  # not nullable: cannot be three-state
    )
    assert patch_fields(node) == {"title", "rawInput"}


@pytest.mark.parametrize(
    "doc",
    [
        "Update to session metadata. All fields are optional to support partial updates.",
        "Omitted fields leave the existing session info unchanged. `null` clears the\n"
        "corresponding value.",
    ],
)
def test_a_type_giving_all_its_fields_patch_semantics(doc: str) -> None:
    node = struct(doc, title=described("Set to null to clear."), _meta=NULLABLE_STR)
    assert patch_fields(node) == {"title", "_meta"}


def test_a_field_saying_omission_and_null_are_equivalent_wins_over_its_type() -> None:
    doc = "Only `id` is required. Other fields have patch semantics."
    same = described("Omitted and `null` are equivalent and mean no metadata.")
    node = struct(doc, ("id",), id=NULLABLE_STR, title=NULLABLE_STR, _meta=same)
    assert patch_fields(node) == {"title"}


def test_patch_wording_in_other_sentences_is_not_a_patch_type() -> None:
    later = struct("Later updates with the same ID patch that entity in place.", x=NULLABLE_STR)
    diff = struct("`patch` optionally carries renderable text.", patch=NULLABLE_STR)
    assert patch_fields(later) == set() and patch_fields(diff) == set()


@pytest.mark.parametrize(
    ("prop", "expected"),
    [
        ({"type": ["string", "null"]}, True),
        ({"type": "null"}, True),
        ({"anyOf": [{"$ref": "#/$defs/Kind"}, {"type": "null"}]}, True),
        ({"oneOf": [{"type": "integer"}, {"type": "null"}]}, True),
        ({"description": "any JSON value"}, True),
        (True, True),
        ({"type": "string"}, False),
        ({"$ref": "#/$defs/Kind"}, False),
        ({"allOf": [{"$ref": "#/$defs/Kind"}]}, False),
        ({"anyOf": [{"type": "integer"}, {"type": "string"}]}, False),
        ({"const": "x"}, False),
    ],
)
def test_admits_null(prop: Any, expected: bool) -> None:
    assert admits_null(prop) is expected


# --- the cross-check ----------------------------------------------------------


def test_differences_name_the_type_field_and_each_side(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(
        PATCH_FIELDS, "v2/schema.json", {"Patch": ("title", "gone"), "Missing": "*"}
    )
    schema = {
        "$defs": {
            "Patch": struct(
                title=described("Omission leaves it unchanged, `null` clears it."),
                size=described("Omitted means unchanged. `null` clears it."),
                note=NULLABLE_STR,
            )
        }
    }
    found = differences("v2/schema.json", schema)

    assert found == [
        PatchDifference(
            "v2/schema.json", "Missing", "", "has no such type", "lists it as a patch type"
        ),
        PatchDifference("v2/schema.json", "Patch", "gone", "has no such field", "lists it"),
        PatchDifference(
            "v2/schema.json",
            "Patch",
            "size",
            "describes it as a patch field (generated three-state)",
            "does not list it",
        ),
    ]
    assert str(found[2]) == (
        "v2/schema.json Patch.size: the schema describes it as a patch field (generated "
        "three-state); codegen/patch_fields.py does not list it"
    )
    schema["$defs"]["Patch"] = struct(title=NULLABLE_STR)
    assert [str(d) for d in differences("v2/schema.json", schema)][1:] == [
        "v2/schema.json Patch.gone: the schema has no such field; codegen/patch_fields.py lists it",
        "v2/schema.json Patch.title: the schema does not describe it as a patch field "
        "(generated as a plain optional field); codegen/patch_fields.py lists it",
    ]
