"""A surface module imports what a program uses, when it first uses it (PEP 562): importing
`acp_schema.v2` imports none of its types, tables or handlers; a name imports the area module
that defines it (codegen/areas.py) and the areas it refers to, nothing else. Every public name
still resolves (`__all__` and `dir()` name them all), decoders built on any type or message
class resolve references across areas, and a looked-up name is an ordinary attribute."""

from __future__ import annotations

import importlib
import json
import pickle
from pathlib import Path
from types import ModuleType
from typing import Any

import msgspec
import pytest

import acp_schema
from codegen.__main__ import load_modules
from codegen.areas import assign, references
from helpers.paths import ROOT
from helpers.processes import bindings_only
from helpers.typecheck import mypy_strict_errors

MODULES = {
    m.version + (".unstable" if m.unstable else ""): m for m in load_modules(ROOT / "schema")
}
LABELS = sorted(MODULES)


def fresh(code: str) -> Any:
    """Run `code` in a new interpreter (nothing imported yet); what it prints, as JSON."""
    return json.loads(bindings_only(code).stdout)


LOADED = """
import json, sys
def loaded(prefix):
    return sorted(m.removeprefix(prefix) for m in sys.modules if m.startswith(prefix))
"""


def surface_module(label: str) -> ModuleType:
    return importlib.import_module(f"acp_schema.{label}")


def area_closure(label: str, name: str) -> list[str]:
    """The areas a definition's area imports, itself included (what using it may import)."""
    module = MODULES[label]
    areas = assign(module)
    defs = module.by_name()
    seen: set[str] = set()
    stack = [areas[name]]
    while stack:
        area = stack.pop()
        if area not in seen:
            seen.add(area)
            stack += [
                areas[r] for d in defs.values() if areas[d.name] == area for r in references(d)
            ]
    return sorted(f"_types.{area}" for area in seen)


def test_importing_a_surface_imports_none_of_its_modules() -> None:
    loaded = fresh(
        LOADED
        + """
import acp_schema.v2
print(json.dumps(loaded("acp_schema.v2.")))
"""
    )
    assert loaded == []


def test_a_type_imports_its_area_and_the_areas_it_refers_to_only() -> None:
    loaded = fresh(
        LOADED
        + """
from acp_schema.v2 import InitializeRequest
print(json.dumps(loaded("acp_schema.v2.")))
"""
    )
    expected = area_closure("v2", "InitializeRequest")
    assert loaded == ["_types", *expected]
    assert "_types.session_update" not in expected and "_types.elicitation_create" not in expected


def test_decoders_resolve_references_across_areas_on_first_use() -> None:
    """A decoder built straight from a lazily imported struct or message class (the first thing
    the program does) resolves every type it refers to, whichever area defines it."""
    update = {
        "sessionId": "s",
        "update": {
            "sessionUpdate": "agent_message_chunk",
            "content": {"type": "text", "text": "hi"},
            "messageId": "m",
        },
    }
    line = {"jsonrpc": "2.0", "method": "session/update", "params": update}
    decoded = fresh(
        f"""
import json, msgspec
import acp_schema.v2 as v2
notification = msgspec.json.Decoder(v2.UpdateSessionNotification).decode({json.dumps(update)!r})
message = msgspec.json.Decoder(v2.SessionUpdateMessage).decode({json.dumps(line)!r})
print(json.dumps([type(notification.update.content).__name__, type(message.params).__name__]))
"""
    )
    assert decoded == ["TextContent", "UpdateSessionNotification"]


@pytest.mark.parametrize("label", LABELS)
def test_every_public_name_resolves(label: str) -> None:
    module = surface_module(label)
    types = importlib.import_module(f"{module.__name__}.types")
    parts = [importlib.import_module(f"{module.__name__}.{p}") for p in ("handlers", "methods")]
    defined = {d.name for d in MODULES[label].definitions}
    assert defined <= set(types.__all__)
    expected = {
        "PROTOCOL_VERSION",
        "SURFACE",
        *types.__all__,
        *(n for p in parts for n in p.__all__),
    }
    assert set(module.__all__) == expected
    assert set(module.__all__) <= set(dir(module)) and set(types.__all__) <= set(dir(types))
    for name in module.__all__:
        assert getattr(module, name) is not None, name
        if name in types.__all__:
            assert getattr(types, name) is getattr(module, name), name
    assert module.SURFACE.module is module


def test_type_checkers_see_every_public_name_and_no_other(tmp_path: Path) -> None:
    """`mypy --strict` sees every name of a surface's `__all__` and its `types`' (which the
    generated code lists once, for the runtime: type checkers see them through star imports),
    and not the lazy machinery."""
    code = []
    for i, label in enumerate(LABELS):
        module = surface_module(label)
        types = importlib.import_module(f"{module.__name__}.types")
        code += [f"import {module.__name__} as m{i}", f"import {types.__name__} as t{i}"]
        code += [f"m{i}.{name}" for name in module.__all__]
        code += [f"t{i}.{name}" for name in types.__all__]
        code += [f"m{i}.TYPE_CHECKING", f"t{i}.TYPE_CHECKING"]  # imported, not exported
    errors = mypy_strict_errors("\n".join(code) + "\n", tmp_path)
    assert [e.split(": error: ")[1] for e in errors] == [
        message
        for label in LABELS
        for message in (
            f'Module "acp_schema.{label}{types}" does not explicitly export attribute '
            '"TYPE_CHECKING"  [attr-defined]'
            for types in ("", ".types")
        )
    ]


def test_an_unknown_name_is_an_attribute_error_naming_the_module() -> None:
    with pytest.raises(AttributeError, match=r"module 'acp_schema.v2' has no attribute 'Nope'"):
        acp_schema.v2.Nope  # type: ignore[attr-defined]  # noqa: B018
    with pytest.raises(ImportError, match="Nope"):
        from acp_schema.v2.types import Nope  # type: ignore[attr-defined]  # noqa: F401


def test_a_name_once_used_is_an_ordinary_attribute() -> None:
    loaded = fresh(
        """
import json
import acp_schema.v2 as v2
before = "ToolCallUpdate" in vars(v2)
tool_call = v2.ToolCallUpdate
print(json.dumps([before, vars(v2).get("ToolCallUpdate") is tool_call, "types" in vars(v2)]))
"""
    )
    assert loaded == [False, True, False]


def test_submodules_resolve_as_attributes() -> None:
    assert fresh(
        """
import json
import acp_schema.v2 as v2
print(json.dumps([v2.types.__name__, v2.methods.__name__, v2.handlers.__name__]))
"""
    ) == ["acp_schema.v2.types", "acp_schema.v2.methods", "acp_schema.v2.handlers"]


def test_values_of_area_classes_belong_to_their_surface_and_pickle() -> None:
    v2 = acp_schema.v2
    chunk = v2.AgentMessageChunk(content=v2.TextContent(text="hi"), message_id="m")
    assert type(chunk).__module__.startswith("acp_schema.v2._types.")
    assert acp_schema.surface_of(chunk) is v2.SURFACE
    assert acp_schema.surface_of(acp_schema.v2.unstable.AgentMessageChunk) is (
        acp_schema.v2.unstable.SURFACE
    )
    assert pickle.loads(pickle.dumps(chunk)) == chunk
    assert msgspec.json.decode(msgspec.json.encode(chunk), type=v2.AgentMessageChunk) == chunk


def test_what_a_name_imports_is_reported_by_importtime() -> None:
    """`python -X importtime` reports the areas a name imports, as for an `import` statement."""
    done = bindings_only("import acp_schema.v2; acp_schema.v2.PromptRequest", "-X", "importtime")
    reported = {line.rpartition("|")[2].strip() for line in done.stderr.splitlines()}
    assert {"acp_schema.v2._types", "acp_schema.v2._types.session"} <= reported
