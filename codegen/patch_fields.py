"""Which fields have three-state patch semantics (omitted = unchanged, null = clear, value = replace).

The JSON Schema cannot say this: a patch field looks like any optional nullable
field. The upstream Rust types (`MaybeUndefined<T>`) and the descriptions do, so
the list is kept here, per protocol version. A type named here must exist in the
schema and its listed fields must be optional and admit null, or generation fails
with the type's JSON pointer: a release that renames or drops one stops generation
instead of silently losing the semantics.

An entry applies to the schema releases that have its type: FIRST_RELEASE names the
release that introduced a type added after the oldest release we generate from, and
`patch_fields_for` leaves the entry out for older releases.

`ALL` selects every optional field of the type that admits null.
"""

from __future__ import annotations

from typing import Final, Literal

ALL: Final = "*"

PatchSpec = dict[str, Literal["*"] | tuple[str, ...]]

PATCH_FIELDS: Final[dict[str, PatchSpec]] = {
    "v1": {
        "SessionInfoUpdate": ALL,
        "CompactionUpdate": ALL,
    },
    "v2": {
        "ToolCallUpdate": ALL,
        "UserMessage": ALL,
        "AgentMessage": ALL,
        "AgentThought": ALL,
        "TerminalUpdate": ALL,
        "SessionInfoUpdate": ALL,
        "CompactionUpdate": ALL,
        "UsageUpdate": ("cost",),
    },
}

# The @agentclientprotocol/sdk release whose schema first has the type (checked with npm pack).
FIRST_RELEASE: Final[dict[str, dict[str, str]]] = {
    "v1": {"CompactionUpdate": "1.4.0"},
}


def release_key(release: str) -> tuple[int, ...]:
    """'2.10.0' -> (2, 10, 0), so releases compare as numbers."""
    return tuple(int(part) for part in release.split("."))


def patch_fields_for(version: str, release: str) -> PatchSpec:
    """The entries of PATCH_FIELDS[version] that apply to schema release `release`."""
    first = FIRST_RELEASE.get(version, {})
    return {
        type_name: spec
        for type_name, spec in PATCH_FIELDS.get(version, {}).items()
        if type_name not in first or release_key(release) >= release_key(first[type_name])
    }
