"""Which area module of a surface's `_types` package each schema definition is generated into.

Importing a surface imports no types; the first use of a name imports its area (and the areas
that area refers to), so a program pays for the types it uses. A definition goes where the
methods that use it (whose params or result reach it) are:

- used by one method that uses at least MIN_AREA definitions no other method uses: that
  method's own area (`session/update` -> `session_update`); `Error`, in every error response,
  counts as used by a method `$/error`;
- otherwise, used only by methods of one family (the method name before its `/`, e.g. `session`,
  `terminal`; `initialize` is its own family): that family's area;
- used across families, or by no method: `common`;
- an area that would hold fewer than MIN_AREA definitions holds none: they go to `common`.

A definition's references are used by at least the same methods, so they live in its own
area, its family's or `common`: areas import each other without cycles (checked here anyway).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping

from . import ir
from .classify import type_refs

MIN_AREA = 8
"""The fewest definitions an area holds (a smaller one costs more in module loading than
importing its few definitions with `common` does)."""
ERROR_RESPONSES = ("$/error", ("Error",))
"""The `error` of every JSON-RPC error response is the schema's `Error` (the method tables'
`ERROR_CODEC`): used as if by a method of the `protocol` family."""
COMMON = "common"
"""The area of the definitions several method families share."""


def references(d: ir.Definition) -> Iterator[str]:
    """The definitions `d` names directly (its fields' types, union members, alias target)."""
    if isinstance(d, ir.StructDef):
        for f in d.fields:
            yield from type_refs(f.type)
    elif isinstance(d, ir.AliasDef):
        yield from type_refs(d.target)
    elif isinstance(d, ir.UnionDef):
        for m in d.members:
            yield from type_refs(m)


def _closure(roots: Iterable[str], defs: Mapping[str, ir.Definition]) -> set[str]:
    seen: set[str] = set()
    stack = [r for r in roots if r in defs]
    while stack:
        name = stack.pop()
        if name not in seen:
            seen.add(name)
            stack.extend(r for r in references(defs[name]) if r in defs)
    return seen


def slug(name: str) -> str:
    """A module name for a method or family: `session/update` -> `session_update`, `$` ->
    `protocol`."""
    text = name.replace("$/", "").replace("$", "protocol").replace("/", "_")
    return "".join(c if c.isalnum() else "_" for c in text).strip("_").lower() or "protocol"


def family(method: str) -> str:
    """`session/update` -> `session`; `initialize` -> `initialize`; `$/cancel_request` ->
    `protocol`."""
    return slug(method.partition("/")[0] if "/" in method else method)


def assign(module: ir.Module) -> dict[str, str]:
    """Definition name -> area name, for every definition of `module`."""
    defs = module.by_name()
    users: dict[str, set[str]] = defaultdict(set)
    roots = [(m.name, (m.params, m.result)) for m in module.methods] + [ERROR_RESPONSES]
    for method, types in roots:
        for name in _closure((n for n in types if n is not None), defs):
            users[name].add(method)
    own: dict[str, int] = defaultdict(int)
    for names in users.values():
        if len(names) == 1:
            own[next(iter(names))] += 1
    areas: dict[str, str] = {}
    for name in defs:
        methods = users.get(name, set())
        families = {family(m) for m in methods}
        if len(methods) == 1 and own[next(iter(methods))] >= MIN_AREA:
            areas[name] = slug(next(iter(methods)))
        elif len(families) == 1:
            areas[name] = next(iter(families))
        else:
            areas[name] = COMMON
    sizes = Counter(areas.values())
    areas = {name: area if sizes[area] >= MIN_AREA else COMMON for name, area in areas.items()}
    if COMMON in {family(m.name) for m in module.methods} | {slug(m.name) for m in module.methods}:
        raise ValueError(f"a method or family is named {COMMON!r}, the shared types' area")
    return areas


def area_order(module: ir.Module, areas: Mapping[str, str]) -> list[str]:
    """The areas, each after the areas it imports from; ValueError naming a cycle."""
    defs = module.by_name()
    needs: dict[str, set[str]] = defaultdict(set)
    for name, area in areas.items():
        needs[area] |= {areas[r] for r in references(defs[name]) if areas[r] != area}
    ordered: list[str] = []
    state: dict[str, int] = {}

    def visit(area: str, path: tuple[str, ...]) -> None:
        if state.get(area) == 2:
            return
        if state.get(area) == 1:
            raise ValueError(f"type areas import each other: {' -> '.join(path)}")
        state[area] = 1
        for dep in sorted(needs[area]):
            visit(dep, (*path, dep))
        state[area] = 2
        ordered.append(area)

    for area in sorted(set(areas.values())):
        visit(area, (area,))
    return ordered
