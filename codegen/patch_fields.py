"""The three-state patch fields of the vendored schema release, by hand: a cross-check only.

The generator takes patch semantics from the schema's descriptions (codegen/patch_semantics.py).
This table says what a reader of the vendored release (schema/lock.json) expects the rule to
find, so that a change of wording upstream, or a rule that reads it wrong, shows up as a
difference instead of silently adding or dropping three-state fields:

- tests/test_patch_semantics.py fails when the rule and this table disagree on the vendored
  release (update this table with the release, after reading the descriptions);
- `python -m codegen` prints each difference as a warning naming the schema file, the type and
  field, and which side says what, and generates what the schema says. It never stops: a
  snapshot of an unreleased spec, or an older release, may differ from the table.

`ALL` selects every optional field of the type that admits null. Entries are per schema file;
types the unstable surface adds on top of the stable one are listed for the unstable file only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from .patch_semantics import admits_null, schema_patch_fields

ALL: Final = "*"

PatchSpec = Mapping[str, Literal["*"] | tuple[str, ...]]

_V1: Final[PatchSpec] = {
    "SessionInfoUpdate": ALL,
    "CompactionUpdate": ALL,
}
_V2: Final[PatchSpec] = {
    "ToolCallUpdate": ALL,
    "UserMessage": ALL,
    "AgentMessage": ALL,
    "AgentThought": ALL,
    "TerminalUpdate": ALL,
    "SessionInfoUpdate": ALL,
    "CompactionUpdate": ALL,
    "UsageUpdate": ("cost",),
}
_UNSTABLE: Final[PatchSpec] = {
    "SubagentUpdate": ALL,
    "SessionMessage": ALL,
}

PATCH_FIELDS: Final[dict[str, PatchSpec]] = {
    "v1/schema.json": _V1,
    "v1/schema.unstable.json": {**_V1, **_UNSTABLE},
    "v2/schema.json": _V2,
    "v2/schema.unstable.json": {**_V2, **_UNSTABLE},
}


@dataclass(frozen=True, order=True)
class PatchDifference:
    """One place where the schema's descriptions and PATCH_FIELDS disagree."""

    schema_file: str
    type_name: str
    field: str  # "" when the whole type is missing from the schema
    schema_says: str
    table_says: str

    def __str__(self) -> str:
        where = f"{self.type_name}.{self.field}" if self.field else self.type_name
        return (
            f"{self.schema_file} {where}: the schema {self.schema_says}; "
            f"codegen/patch_fields.py {self.table_says}"
        )


def table_patch_fields(schema: Mapping[str, Any], spec: PatchSpec) -> dict[str, frozenset[str]]:
    """`spec` resolved against a schema: $def name -> the wire names it selects."""
    defs = schema.get("$defs", {})
    resolved: dict[str, frozenset[str]] = {}
    for type_name, fields in spec.items():
        body = defs.get(type_name, {})
        properties = body.get("properties", {})
        required = set(body.get("required", ()))
        if fields == ALL:
            fields = tuple(
                name
                for name, prop in properties.items()
                if name not in required and admits_null(prop)
            )
        resolved[type_name] = frozenset(fields)
    return resolved


def differences(schema_file: str, schema: Mapping[str, Any]) -> list[PatchDifference]:
    """Where PATCH_FIELDS[schema_file] and the schema's descriptions disagree (sorted)."""
    spec = PATCH_FIELDS.get(schema_file, {})
    defs = schema.get("$defs", {})
    table = table_patch_fields(schema, spec)
    derived = schema_patch_fields(schema)
    found = [
        PatchDifference(schema_file, name, "", "has no such type", "lists it as a patch type")
        for name in spec
        if name not in defs
    ]
    for type_name in (table.keys() | derived.keys()) & defs.keys():
        listed, said = table.get(type_name, frozenset()), derived.get(type_name, frozenset())
        properties = defs[type_name].get("properties", {})
        for field in sorted(listed - said):
            schema_says = (
                "has no such field"
                if field not in properties
                else "does not describe it as a patch field (generated as a plain optional field)"
            )
            found.append(PatchDifference(schema_file, type_name, field, schema_says, "lists it"))
        for field in sorted(said - listed):
            found.append(
                PatchDifference(
                    schema_file,
                    type_name,
                    field,
                    "describes it as a patch field (generated three-state)",
                    "does not list it",
                )
            )
    return sorted(found)
