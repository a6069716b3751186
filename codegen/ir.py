"""The generator's intermediate representation: plain data, no schema and no Python text.

The classifier (classify.py) builds it from a JSON Schema; the emitter (emit.py)
renders it with jinja2. Tests build hypothesis strategies from it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# --------------------------------------------------------------------------- types


@dataclass(frozen=True)
class Prim:
    """A JSON scalar or an untyped value."""

    kind: Literal["str", "int", "float", "bool", "null", "any"]
    ge: int | float | None = None
    le: int | float | None = None
    min_length: int | None = None
    format: str | None = None
    pattern: str | None = None


@dataclass(frozen=True)
class Ref:
    """A reference to another named definition."""

    name: str


@dataclass(frozen=True)
class ListOf:
    item: TypeRef
    min_items: int | None = None


@dataclass(frozen=True)
class MapOf:
    value: TypeRef


@dataclass(frozen=True)
class Nullable:
    inner: TypeRef


@dataclass(frozen=True)
class Const:
    """A single literal value (used for discriminator fields of merged variants)."""

    values: tuple[str, ...]
    open: bool = False


TypeRef = Prim | Ref | ListOf | MapOf | Nullable | Const

# --------------------------------------------------------------------------- definitions


@dataclass(frozen=True)
class Leniency:
    """Where the official SDKs tolerate bad data instead of failing the whole message."""

    default_on_error: bool = False
    default_on_null: bool = False
    skip_invalid_items: bool = False

    def __bool__(self) -> bool:
        return self.default_on_error or self.default_on_null or self.skip_invalid_items


@dataclass(frozen=True)
class Field:
    attr: str
    wire: str
    type: TypeRef
    required: bool
    doc: str
    leniency: Leniency = Leniency()
    three_state: bool = False
    default_json: object = None  # the schema's `default`, documented only

    @property
    def nullable(self) -> bool:
        return isinstance(self.type, Nullable) or self.type == Prim("any")


@dataclass(frozen=True)
class VariantCheck:
    """Required fields of one alternative of a union merged into a struct."""

    when_tag: str | None  # value of the merged discriminator, or None for untagged alternatives
    required_attrs: tuple[str, ...]


@dataclass(frozen=True)
class MergedChecks:
    """Validation that a merged struct satisfies exactly the union it was flattened from."""

    tag_attr: str | None
    exclusive: bool  # untagged oneOf: exactly one alternative may be present
    alternatives: tuple[VariantCheck, ...]


@dataclass(frozen=True)
class StructDef:
    name: str
    doc: str
    fields: tuple[Field, ...]
    tag_field: str | None = None
    tag_value: str | None = None
    merged: tuple[MergedChecks, ...] = ()
    source: str = ""  # JSON pointer of the schema node it came from


@dataclass(frozen=True)
class EnumValue:
    value: str | int
    doc: str
    title: str | None = None


@dataclass(frozen=True)
class EnumDef:
    name: str
    doc: str
    values: tuple[EnumValue, ...]
    open: bool
    base: Literal["str", "int"]


@dataclass(frozen=True)
class AliasDef:
    name: str
    doc: str
    target: TypeRef


@dataclass(frozen=True)
class UnknownVariant:
    """The catch-all branch of an open tagged union: keeps the raw object."""

    name: str
    doc: str


@dataclass(frozen=True)
class UnionDef:
    name: str
    doc: str
    tag_field: str | None
    variants: tuple[str, ...]  # names of tagged StructDefs, in schema order
    untagged: tuple[TypeRef, ...]  # alternatives without a discriminator, tried in order
    unknown: UnknownVariant | None
    # Beside a synthesized unknown variant: a default variant's title as a present tag
    # (v1 `"type": "stdio"`, the tag v2 gives it) names that default variant, not an unknown one.
    named_defaults: tuple[tuple[str, str], ...] = ()

    @property
    def members(self) -> tuple[TypeRef, ...]:
        return tuple(Ref(v) for v in self.variants) + self.untagged


Definition = StructDef | EnumDef | AliasDef | UnionDef


@dataclass(frozen=True)
class Method:
    name: str
    side: str  # the side that handles it: "agent", "client", "protocol" (both), "proxy"
    kind: Literal["request", "notification"]
    params: str | None
    result: str | None
    doc: str


@dataclass
class Module:
    """One generated protocol surface, e.g. v2 stable."""

    version: str  # "v1" / "v2"
    unstable: bool
    source: str  # e.g. "@agentclientprotocol/sdk@2.4.0 schema/v2/schema.json"
    sha256: str
    definitions: list[Definition] = field(default_factory=list)
    methods: list[Method] = field(default_factory=list)
    # (union, tag, class name) of the variants names.py does not pin (named by its rule)
    unpinned: list[tuple[str, str, str]] = field(default_factory=list)

    def by_name(self) -> dict[str, Definition]:
        return {d.name: d for d in self.definitions}

    @property
    def structs(self) -> list[StructDef]:
        return [d for d in self.definitions if isinstance(d, StructDef)]

    @property
    def unions(self) -> list[UnionDef]:
        return [d for d in self.definitions if isinstance(d, UnionDef)]
