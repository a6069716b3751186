"""The generated modules say a shared fact once: the standard `_meta` description lives on the
`Metadata` alias (a `_meta` with its own description keeps it on the field), and a union's
fallback metadata does not repeat the tags its variants declare."""

from __future__ import annotations

import inspect
import typing

import pytest

import acp_schema.v1.types as v1_types
import acp_schema.v2.types as v2_types
from acp_schema._runtime.schema import UnionInfo, variants_by_tag

PATCH_META = "Omitted leaves the stored metadata unchanged."


@pytest.mark.parametrize("module", [v1_types, v2_types])
def test_the_standard_meta_description_is_written_once(module: object) -> None:
    source = inspect.getsource(module)  # type: ignore[arg-type]
    alias = 'Metadata: TypeAlias = dict[str, Any]\n"""\n'
    start = source.index(alias) + len(alias)
    doc = source[start : source.index('"""', start)].split("\n\n", 1)[1].strip()
    assert doc.startswith("The _meta property is reserved by ACP")
    as_field_doc = "\n".join(f"    {line}" if line else "" for line in doc.splitlines())
    assert as_field_doc not in source
    assert source.count("meta: Metadata | None | UnsetType") > 100


def test_a_meta_field_with_its_own_description_keeps_it() -> None:
    source = inspect.getsource(v2_types.SessionInfoUpdate)
    assert PATCH_META in source


def test_union_metadata_takes_the_tags_from_the_variants() -> None:
    members, info = typing.get_args(v2_types.SessionUpdate)
    assert isinstance(info, UnionInfo)
    variants = variants_by_tag(info, members)
    assert variants["tool_call_update"] is v2_types.ToolCallProgress
    assert variants["state_update"] is v2_types.SessionStateUpdate
    assert len(variants) == len(typing.get_args(members))
    source = inspect.getsource(v2_types)
    assert '"tool_call_update": ToolCallProgress' not in source
