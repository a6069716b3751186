"""Classes that are easily confused (codegen/lookalikes.py) name each other in their generated
docstrings, on every surface that has both, and only there."""

from __future__ import annotations

from types import ModuleType

import pytest

import acp_schema.v1 as v1
import acp_schema.v1.unstable as v1u
import acp_schema.v2 as v2
import acp_schema.v2.unstable as v2u
from codegen import ir
from codegen.lookalikes import LOOKALIKES, lookalike_note

SURFACES = [v1, v1u, v2, v2u]


@pytest.mark.parametrize("surface", SURFACES, ids=lambda m: m.__name__)
def test_tool_call_update_and_progress_name_each_other(surface: ModuleType) -> None:
    update_doc = " ".join(surface.ToolCallUpdate.__doc__.split())
    progress_doc = " ".join(surface.ToolCallProgress.__doc__.split())
    assert "Not to be confused with `ToolCallProgress`" in update_doc
    assert "Not to be confused with `ToolCallUpdate`" in progress_doc
    assert '"sessionUpdate": "tool_call_update"' in update_doc  # what the other one is
    assert "`RequestPermissionRequest.tool_call`" in progress_doc


@pytest.mark.parametrize("surface", SURFACES, ids=lambda m: m.__name__)
def test_every_pair_of_the_table_is_on_every_surface(surface: ModuleType) -> None:
    for pair in LOOKALIKES:
        for side, other in ((pair.first, pair.second), (pair.second, pair.first)):
            doc = " ".join(getattr(surface, side.name).__doc__.split())  # unwrapped
            assert f"Not to be confused with `{other.name}`, {other.what}." in doc


def test_no_note_when_the_other_class_is_not_generated() -> None:
    lone = ir.StructDef("ToolCallUpdate", "An update.", ())
    assert lookalike_note("ToolCallUpdate", {"ToolCallUpdate": lone}) is None
    assert lookalike_note("Plan", {"Plan": ir.StructDef("Plan", "A plan.", ())}) is None
