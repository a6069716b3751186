"""codegen/areas.py: which `_types` area module each definition is generated into (the rules
in its docstring), and the order areas import each other in (a cycle is an error naming it)."""

from __future__ import annotations

import pytest

from codegen import ir
from codegen.areas import COMMON, MIN_AREA, area_order, assign, family, slug


def struct(name: str, *refs: str) -> ir.StructDef:
    fields = tuple(ir.Field(r.lower(), r.lower(), ir.Ref(r), True, "") for r in refs)
    return ir.StructDef(name, "", fields)


def method(name: str, params: str, result: str | None = None) -> ir.Method:
    return ir.Method(name, "agent", "request", params, result, "")


def module(definitions: list[ir.Definition], methods: list[ir.Method]) -> ir.Module:
    return ir.Module("v9", False, "x", "0", definitions, methods)


def own(prefix: str, count: int) -> list[ir.Definition]:
    """`count` definitions, the first referring to all the others."""
    rest = [struct(f"{prefix}{i}") for i in range(1, count)]
    return [struct(f"{prefix}0", *(d.name for d in rest)), *rest]


def test_method_and_family_names() -> None:
    assert slug("session/update") == "session_update"
    assert family("session/update") == "session"
    assert family("initialize") == "initialize"
    assert family("$/cancel_request") == "protocol"


def test_a_method_with_enough_types_of_its_own_gets_its_area() -> None:
    big = own("Big", MIN_AREA)
    small_a, small_b = own("A", 4), own("B", 4)
    shared = struct("Shared")
    defs = [*big, *small_a, *small_b, shared, struct("Error"), struct("Loose")]
    defs[0] = struct("Big0", *(d.name for d in big[1:]), "Shared")
    methods = [
        method("session/update", "Big0"),
        method("session/new", "A0", "Shared"),
        method("session/load", "B0"),
        method("terminal/create", "Shared"),
    ]
    areas = assign(module(defs, methods))
    assert {areas[d.name] for d in big} == {"session_update"}
    # too few of their own: their family's area, which has enough
    assert {areas[d.name] for d in small_a + small_b} == {"session"}
    assert areas["Shared"] == COMMON  # used across families
    assert areas["Loose"] == COMMON  # used by no method
    assert areas["Error"] == COMMON  # every error response's


def test_an_area_too_small_joins_common() -> None:
    defs = [*own("T", 3), *own("S", MIN_AREA)]
    areas = assign(module(defs, [method("terminal/create", "T0"), method("session/new", "S0")]))
    assert {areas[d.name] for d in defs if d.name.startswith("T")} == {COMMON}
    assert area_order(module(defs, []), areas) == [COMMON, "session_new"]


def test_areas_that_would_import_each_other_are_an_error() -> None:
    defs: list[ir.Definition] = [struct("A", "B"), struct("B"), struct("C", "D"), struct("D")]
    areas = {"A": "one", "B": "two", "C": "two", "D": "one"}
    with pytest.raises(ValueError, match="type areas import each other: one -> two -> one"):
        area_order(module(defs, []), areas)
