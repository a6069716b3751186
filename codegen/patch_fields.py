"""Which fields have three-state patch semantics (omitted = unchanged, null = clear, value = replace).

The JSON Schema cannot say this: a patch field looks like any optional nullable
field. The upstream Rust types (`MaybeUndefined<T>`) and the descriptions do, so
the list is kept here, per protocol version. A type named here must exist in the
schema and its listed fields must be optional and admit null, or generation fails.

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
