"""Hypothesis strategies for ACP JSON values, built from the generator's IR (lsprotocol style).

`IRStrategies(module).definition(name)` draws JSON values (dicts, lists, scalars) that
are valid for that definition under the schema the IR was classified from:

- required fields always; optional fields omitted, null (where nullable) or a value, so
  three-state patch fields see all three states;
- tagged variants carry their tag; open unions also produce unknown variants (tag
  `_vendor_...` plus extra keys), open enums and open discriminators `_custom_...` values;
- integer ranges, `minLength`, `pattern` and `minItems` from the IR;
- structs merged from a union (`StructDef.merged`) satisfy one alternative (exactly one
  for an exclusive `oneOf`).

Sizes stay small: references nest at most `MAX_DEPTH` levels before optional content is
left out, lists hold at most `MAX_LIST` items.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import UTC
from typing import Any

from hypothesis import strategies as st

from codegen import ir

MAX_DEPTH = 4
MAX_LIST = 3

JSON = Any
Strategy = st.SearchStrategy[Any]

# Marks an optional field left out of the object.
OMIT = object()

INT32 = (-(2**31), 2**31 - 1)
SAFE_INT = 2**53  # `any` values stay exactly representable in every JSON implementation

_keys = st.text(min_size=1, max_size=6)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-SAFE_INT, SAFE_INT)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=6)
)
ANY_JSON: Strategy = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=MAX_LIST) | st.dictionaries(_keys, inner, max_size=MAX_LIST)
    ),
    max_leaves=6,
)

# Values of string `format`s. The schema does not assert formats; realistic values anyway.
FORMATS: Mapping[str, Strategy] = {
    "uri": st.sampled_from(["https://example.com/a?b=1", "file:///tmp/x.txt", "urn:acp:1"]),
    "uri-reference": st.sampled_from(["/a/b", "https://example.com"]),
    "date-time": st.datetimes(timezones=st.just(UTC)).map(
        lambda d: d.isoformat().replace("+00:00", "Z")
    ),
    "uuid": st.uuids().map(str),
    "email": st.just("someone@example.com"),
    "regex": st.sampled_from(["^[a-z]+$", ".*", "\\d{3}"]),
}

# Open enum values and open discriminators that no schema release will ever define.
CUSTOM_VALUES: Strategy = st.text("abcxyz_", max_size=5).map(lambda s: "_custom_" + s)
VENDOR_TAGS: Strategy = st.text("abcxyz_", max_size=5).map(lambda s: "_vendor_" + s)


class IRStrategies:
    """Strategies for every definition of one IR module.

    `skip_members` leaves members out of unions: union name -> names of the referenced
    definitions (a variant struct or an untagged `Ref`) not to generate. Tests use it only
    for documented generator bugs, so the rest of the union keeps its coverage.
    """

    def __init__(self, module: ir.Module, skip_members: Mapping[str, frozenset[str]] | None = None):
        self.module = module
        self.defs = module.by_name()
        self.skip_members = skip_members or {}
        self._cache: dict[tuple[str, int], Strategy] = {}

    # ------------------------------------------------------------------ entry points

    def definition(self, name: str, depth: int = 0) -> Strategy:
        key = (name, min(depth, MAX_DEPTH))
        if key not in self._cache:
            self._cache[key] = st.deferred(lambda: self._definition(self.defs[name], key[1]))
        return self._cache[key]

    def type(self, t: ir.TypeRef, depth: int) -> Strategy:
        if isinstance(t, ir.Prim):
            return self.prim(t)
        if isinstance(t, ir.Ref):
            return self.definition(t.name, depth + 1)
        if isinstance(t, ir.ListOf):
            low = t.min_items or 0
            high = low if depth >= MAX_DEPTH else max(low, MAX_LIST)
            return st.lists(self.type(t.item, depth), min_size=low, max_size=high)
        if isinstance(t, ir.MapOf):
            size = 0 if depth >= MAX_DEPTH else MAX_LIST
            return st.dictionaries(_keys, self.type(t.value, depth), max_size=size)
        if isinstance(t, ir.Nullable):
            return st.none() | self.type(t.inner, depth)
        if isinstance(t, ir.Const):
            known = st.sampled_from(t.values)
            return known | CUSTOM_VALUES if t.open else known
        raise TypeError(f"unknown IR type {t!r}")

    # ------------------------------------------------------------------ definitions

    def _definition(self, d: ir.Definition, depth: int) -> Strategy:
        if isinstance(d, ir.StructDef):
            return self.struct(d, depth)
        if isinstance(d, ir.UnionDef):
            return self.union(d, depth)
        if isinstance(d, ir.EnumDef):
            return self.enum(d)
        return self.type(d.target, depth)

    @staticmethod
    def prim(t: ir.Prim) -> Strategy:
        if t.kind == "str":
            if t.pattern is not None:  # JSON Schema patterns search, they are not anchored
                return st.from_regex(t.pattern).filter(lambda s: len(s) >= (t.min_length or 0))
            if t.format in FORMATS:
                return FORMATS[t.format]
            return st.text(min_size=t.min_length or 0, max_size=max(8, t.min_length or 0))
        if t.kind == "int":
            return st.integers(min_value=t.ge, max_value=t.le)
        if t.kind == "float":
            return st.floats(min_value=t.ge, max_value=t.le, allow_nan=False, allow_infinity=False)
        if t.kind == "bool":
            return st.booleans()
        if t.kind == "null":
            return st.none()
        return ANY_JSON

    @staticmethod
    def enum(e: ir.EnumDef) -> Strategy:
        known = st.sampled_from([v.value for v in e.values])
        if not e.open:
            return known
        custom = CUSTOM_VALUES if e.base == "str" else st.integers(*INT32)
        return known | custom

    def union(self, u: ir.UnionDef, depth: int) -> Strategy:
        skip = self.skip_members.get(u.name, frozenset())
        members = [self.definition(v, depth + 1) for v in u.variants if v not in skip]
        members += [
            self.type(t, depth)
            for t in u.untagged
            if not (isinstance(t, ir.Ref) and t.name in skip)
        ]
        if u.unknown is not None:
            members.append(self.unknown_variant(u, depth + 1))
        return st.one_of(members)

    def unknown_variant(self, u: ir.UnionDef, depth: int) -> Strategy:
        """An object with a tag no release defines, the union's shared fields, and extra keys.

        The IR keeps no fields for the catch-all branch; what every known variant shares
        (the union's base object, e.g. `message` of `CreateElicitationRequest`) stands in for it.
        Beside a default variant, that variant's object stands in: the schema accepts an
        unknown tag there only as the default variant's object with an extra key.
        """
        assert u.tag_field is not None
        default = next((self.defs[t.name] for t in u.untagged if isinstance(t, ir.Ref)), None)
        base_struct = default if isinstance(default, ir.StructDef) else shared_base(u, self.defs)
        base = self.struct(base_struct, depth)
        extra = st.dictionaries(st.sampled_from(["vendorData", "vendorFlag"]), ANY_JSON, max_size=2)
        return st.builds(
            lambda obj, tag, more: {**obj, u.tag_field: tag, **more}, base, VENDOR_TAGS, extra
        )

    # ------------------------------------------------------------------ structs

    def struct(self, s: ir.StructDef, depth: int) -> Strategy:
        fields = {f.attr: f for f in s.fields}
        values = {f.attr: self._field_value(f, depth) for f in s.fields}
        required = {f.attr: self.type(f.type, depth) for f in s.fields}
        choosers = [self._alternative(check, fields, required) for check in s.merged]

        @st.composite
        def draw_struct(draw: Callable[[Strategy], Any]) -> dict[str, JSON]:
            drawn = {attr: draw(strategy) for attr, strategy in values.items()}
            for choose in choosers:
                drawn = choose(draw, drawn)
            obj = {fields[a].wire: v for a, v in drawn.items() if v is not OMIT}
            if s.tag_field is not None:
                obj = {s.tag_field: s.tag_value, **obj}
            return obj

        return draw_struct()

    def _field_value(self, f: ir.Field, depth: int) -> Strategy:
        """Optional fields: omitted, null (where the type admits it) or a value, about equally."""
        value = self.type(f.type, depth)
        if f.required:
            return value
        if depth >= MAX_DEPTH:
            return st.just(OMIT)
        return st.one_of(st.just(OMIT), *([st.none()] if f.nullable else []), value)

    @staticmethod
    def _alternative(
        check: ir.MergedChecks, fields: Mapping[str, ir.Field], required: Mapping[str, Strategy]
    ) -> Callable[[Callable[[Strategy], Any], dict[str, Any]], dict[str, Any]]:
        """Make drawn field values satisfy one alternative of a union merged into the struct.

        Tagged (`tag_attr`): the alternative the drawn tag selects gets its required fields.
        Untagged: one alternative is picked and gets its required fields; for an `exclusive`
        oneOf, fields only other alternatives require are left out so exactly one matches.
        """

        def fill(
            draw: Callable[[Strategy], Any], drawn: dict[str, Any], attrs: tuple[str, ...]
        ) -> None:
            for attr in attrs:
                if drawn[attr] is OMIT:
                    drawn[attr] = draw(required[attr])

        def choose(draw: Callable[[Strategy], Any], drawn: dict[str, Any]) -> dict[str, Any]:
            drawn = dict(drawn)
            if check.tag_attr is not None:
                tag = drawn[check.tag_attr]
                for alt in check.alternatives:
                    if alt.when_tag == tag:
                        fill(draw, drawn, alt.required_attrs)
                return drawn
            alt = draw(st.sampled_from(check.alternatives))
            if check.exclusive:
                others = {a for other in check.alternatives for a in other.required_attrs}
                for attr in others - set(alt.required_attrs):
                    if not fields[attr].required:
                        drawn[attr] = OMIT
            fill(draw, drawn, alt.required_attrs)
            return drawn

        return choose


def shared_base(u: ir.UnionDef, defs: Mapping[str, ir.Definition]) -> ir.StructDef:
    """The fields (and merged checks) every known variant of a tagged union has.

    A field is required if every variant requires it; where the variants disagree on its
    type it is left untyped.
    """
    variants = [defs[v] for v in u.variants]
    assert all(isinstance(v, ir.StructDef) for v in variants)
    structs: list[ir.StructDef] = variants  # type: ignore[assignment]
    by_wire = [{f.wire: f for f in s.fields} for s in structs]
    shared: list[ir.Field] = []
    for f in structs[0].fields if structs else ():
        same = [fields.get(f.wire) for fields in by_wire]
        if any(g is None for g in same):
            continue
        types = {g.type for g in same if g is not None}
        shared.append(
            ir.Field(
                attr=f.attr,
                wire=f.wire,
                type=f.type if len(types) == 1 else ir.Prim("any"),
                required=all(g is not None and g.required for g in same),
                doc="",
            )
        )
    attrs = {f.attr for f in shared}
    merged = tuple(
        check
        for check in (structs[0].merged if structs else ())
        if all(check in s.merged for s in structs)
        and all(a in attrs for alt in check.alternatives for a in alt.required_attrs)
    )
    return ir.StructDef(f"Unknown{u.name}", "", tuple(shared), merged=merged)
