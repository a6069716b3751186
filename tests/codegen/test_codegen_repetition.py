"""The generated modules say a shared fact once: the standard `_meta` description lives on the
`Metadata` alias (a `_meta` with its own description keeps it on the field), a union's
fallback metadata does not repeat the tags its variants declare, a union's variants are
listed once, `_meta`'s usual leniency is the runtime's default (a struct lists only the
leniency particular to it) and method-table rows name their values."""

from __future__ import annotations

import importlib
import inspect
import re
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

import acp_schema.v1.types as v1_types
import acp_schema.v2.methods as v2_methods
import acp_schema.v2.types as v2_types
from acp_schema._runtime.fallback import convert
from acp_schema._runtime.schema import (
    ON_ERROR,
    ON_NULL,
    SKIP_INVALID,
    UnionInfo,
    lenient_flags,
    variants_by_tag,
)
from codegen import ir
from codegen.__main__ import load_modules
from codegen.areas import assign
from codegen.classify import classify
from codegen.emit import ModuleEmitter, _environment
from helpers.paths import ROOT

SCHEMA_DIR = ROOT / "schema"
MODULES = load_modules(SCHEMA_DIR)


def flags_of(leniency: ir.Leniency) -> int:
    return (
        ON_ERROR * leniency.default_on_error
        | ON_NULL * leniency.default_on_null
        | SKIP_INVALID * leniency.skip_invalid_items
    )


def types_module(module: ir.Module) -> ModuleType:
    return importlib.import_module(
        f"acp_schema.{module.version}{'.unstable' if module.unstable else ''}.types"
    )


PATCH_META = "Omitted leaves the stored metadata unchanged."


def types_source(types: ModuleType) -> str:
    """The source of every definition of a surface: its `_types` package, all areas."""
    assert types.__file__ is not None
    areas = sorted((Path(types.__file__).parent / "_types").glob("*.py"))
    return "\n".join(path.read_text() for path in areas)


@pytest.mark.parametrize("module", [v1_types, v2_types])
def test_the_standard_meta_description_is_written_once(module: ModuleType) -> None:
    source = types_source(module)
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
    source = types_source(v2_types)
    assert '"tool_call_update": ToolCallProgress' not in source


@pytest.mark.parametrize("module", MODULES, ids=lambda m: f"{m.version}{'u' * m.unstable}")
def test_every_fields_leniency_is_the_schemas(module: ir.Module) -> None:
    """What the fallback applies (a struct's own entries, else the `_meta` default) is exactly
    each field's x-deserialize-* annotations, for every field of every schema struct."""
    generated = types_module(module)
    checked = 0
    for struct in module.structs:
        cls = getattr(generated, struct.name)
        fields = {f.name: f for f in msgspec.structs.fields(cls)}
        for field in struct.fields:
            assert lenient_flags(cls, fields[field.attr]) == flags_of(field.leniency), (
                f"{struct.name}.{field.attr}"
            )
            checked += 1
    assert checked > 400


def test_a_struct_lists_only_its_particular_leniency() -> None:
    source = types_source(v2_types)
    assert '"meta": ON_ERROR' not in source
    assert not hasattr(v2_types.AgentMessageChunk, "__acp_lenient__")  # `_meta` was its only one
    assert v2_types.AgentMessage.__acp_lenient__ == {"content": ON_ERROR | SKIP_INVALID}


def meta_schema(meta: dict[str, Any]) -> dict[str, Any]:
    return {
        "$defs": {
            "Thing": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "_meta": meta},
                "required": ["name"],
            }
        }
    }


@pytest.mark.parametrize(
    ("annotations", "lenient"),
    [
        ({"x-deserialize-default-on-error": True}, False),
        ({}, True),  # a `_meta` the schema does not make lenient says so: strict
        ({"x-deserialize-default-on-null": True}, True),
    ],
)
def test_a_meta_unlike_the_default_gets_its_own_entry(
    annotations: dict[str, bool], lenient: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    meta = {"type": ["object", "null"], "additionalProperties": True, **annotations}
    module = classify(meta_schema(meta), version="v9", unstable=False, source="x", sha256="0")
    emitter = ModuleEmitter(module, _environment())
    files = emitter.render_types()
    assert ("__acp_lenient__" in "".join(files.values())) == lenient
    name = f"v9_types_{len(annotations)}_{lenient}"
    # types.py looks its names up in the surface module's table (the rest of it is not needed)
    package = f"_TYPE_AREAS = {dict(emitter.type_sources(assign(module)))!r}\n"
    for path, text in {"__init__.py": package, **files}.items():
        (tmp_path / name / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name / path).write_text(text)
    monkeypatch.syspath_prepend(tmp_path)
    thing = importlib.import_module(f"{name}.types").Thing
    if annotations.get("x-deserialize-default-on-error"):
        assert convert({"name": "n", "_meta": 42}, thing) == thing(name="n")
    else:
        with pytest.raises(msgspec.ValidationError, match=r"\$\._meta"):
            convert({"name": "n", "_meta": 42}, thing)
    expected = {"meta": ON_NULL if annotations else 0} if lenient else {}
    assert getattr(thing, "__acp_lenient__", {}) == expected


def test_a_unions_variants_are_listed_once() -> None:
    source = types_source(v2_types)
    variants = "TextContent, ImageContent, AudioContent, ResourceLink, EmbeddedResource"
    assert len(re.findall(re.escape(variants), source)) == 1
    members, info = typing.get_args(v2_types.ContentBlock)
    assert typing.get_args(members) == (
        v2_types.TextContent,
        v2_types.ImageContent,
        v2_types.AudioContent,
        v2_types.ResourceLink,
        v2_types.EmbeddedResource,
    )
    assert info.unknown is v2_types.UnknownContentBlock


def test_method_table_rows_name_their_values() -> None:
    source = inspect.getsource(v2_methods)
    row = source[source.index("SESSION_CANCEL: Final") :]
    row = row[: row.index(")\n") + 1]
    for name in ("name", "side", "kind", "params", "result", "message", "handler"):
        assert f"    {name}=" in row, row
