"""Classes that are easily taken for one another: a reviewed table of pairs, and the note each
one's docstring gets naming the other.

Two classes of a surface can carry the same fields under names that do not tell them apart:
`ToolCallUpdate` (the fields of an update to a tool call, as a permission request carries
them) and `ToolCallProgress` (the `session/update` variant that sends them). The generator
appends "Not to be confused with `Other`, <what Other is>." to each class of a pair, in every
module that defines both; a module that lacks one of the two gets no note.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from . import ir

NOTE_WIDTH: Final = 92  # a class docstring is indented by 4, lines end by 96


@dataclass(frozen=True)
class Lookalike:
    name: str
    """The class name (as generated)."""
    what: str
    """What it is, as the other class's docstring says it (a phrase after "`name`, ")."""


@dataclass(frozen=True)
class LookalikePair:
    first: Lookalike
    second: Lookalike


LOOKALIKES: Final[tuple[LookalikePair, ...]] = (
    LookalikePair(
        Lookalike(
            "ToolCallUpdate",
            "the same fields on their own, as a permission request carries them "
            "(`RequestPermissionRequest.tool_call`)",
        ),
        Lookalike(
            "ToolCallProgress",
            'the `session/update` variant with these fields (`"sessionUpdate": '
            '"tool_call_update"`), what an agent sends to report on a tool call',
        ),
    ),
)


def lookalike_note(name: str, defs: Mapping[str, ir.Definition]) -> str | None:
    """The note for class `name` of a module defining `defs`: the others it is easily taken
    for, each named with what it is; None when none of them is defined there."""
    notes = []
    for pair in LOOKALIKES:
        for this, other in ((pair.first, pair.second), (pair.second, pair.first)):
            if this.name == name and other.name in defs:
                note = f"Not to be confused with `{other.name}`, {other.what}."
                notes.append(textwrap.fill(note, NOTE_WIDTH, break_on_hyphens=False))
    return "\n\n".join(notes) or None
