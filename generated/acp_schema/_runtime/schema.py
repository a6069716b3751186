# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""Markers the generated types are built from (attached with `Annotated` or used in
`__post_init__`; msgspec ignores them, the fallback path reads them)."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from typing import Any, ClassVar, TypeVar

import msgspec
from msgspec import UNSET

__all__ = [
    "LENIENT_BY_DEFAULT",
    "ON_ERROR",
    "ON_NULL",
    "SKIP_INVALID",
    "OpenEnum",
    "OpenIntLiteral",
    "OpenLiteral",
    "OpenVariant",
    "UnionInfo",
    "check_alternatives",
    "lenient_flags",
    "tag_guard",
    "variants_by_tag",
]

# Leniency flags per field, from the schema's x-deserialize-* annotations.
ON_ERROR = 1
ON_NULL = 2
SKIP_INVALID = 4

LENIENT_BY_DEFAULT: Mapping[str, int] = {"_meta": ON_ERROR}
"""The flags of a field by its wire name when its type's `__acp_lenient__` does not name it:
every `_meta` of the schema is `x-deserialize-default-on-error`, so the generated types list
only what differs (codegen.emit.LENIENT_BY_DEFAULT is the generator's copy of this rule)."""


def lenient_flags(struct: type, field: msgspec.structs.FieldInfo) -> int:
    """The leniency flags of one field of a generated struct: its type's `__acp_lenient__`
    entry (by attribute name), else the default for its wire name."""
    lenient: Mapping[str, int] = getattr(struct, "__acp_lenient__", {})
    flags = lenient.get(field.name)
    return LENIENT_BY_DEFAULT.get(field.encode_name, 0) if flags is None else flags


class OpenVariant(dict[str, Any]):
    """A variant of an open union that this schema release does not know.

    It is the JSON object exactly as received (a dict), so it keeps all its data and
    encodes back unchanged. `tag` is its discriminator value, e.g. `_vendor_thing`.
    """

    tag_field: ClassVar[str] = ""
    """The wire field naming the variant (set by each generated `Unknown*` class)."""

    @property
    def tag(self) -> str:
        """The variant's discriminator value, e.g. `_vendor_thing`."""
        return str(self[self.tag_field])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


class OpenEnum(
    msgspec.Struct, frozen=True
):  # a Struct, not a dataclass: defined in microseconds at import (cold start)
    """An enum whose unknown values are valid (extensions, future releases): the fallback path
    accepts any value of `base` for it (attached with `Annotated`, ignored by msgspec)."""

    base: type


_Values = TypeVar("_Values")

if typing.TYPE_CHECKING:
    OpenLiteral: typing.TypeAlias = _Values | str
    OpenIntLiteral: typing.TypeAlias = _Values | int
else:

    class OpenLiteral:
        """`OpenLiteral[Literal[...]]`, an inline open enum: type checkers see
        `Literal[...] | str`, msgspec decodes the closed Literal (shared strings, no
        allocation) and the fallback path accepts any other string."""

        def __class_getitem__(cls, values: Any) -> Any:
            return typing.Annotated[values, OpenEnum(str)]

    class OpenIntLiteral:
        """`OpenIntLiteral[Literal[...]]`: `OpenLiteral` of integers (type checkers see
        `Literal[...] | int`; the fallback path accepts any other integer)."""

        def __class_getitem__(cls, values: Any) -> Any:
            return typing.Annotated[values, OpenEnum(int)]


# Hashed by identity: typing hashes Annotated metadata, and `named_defaults` is a dict.
class UnionInfo(
    msgspec.Struct, frozen=True, eq=False
):  # a Struct, not a dataclass: defined in microseconds at import (cold start)
    """How the fallback path resolves one union (attached with `Annotated`, ignored by msgspec).

    The tagged variants are the annotated union's members: each declares its tag (msgspec's
    `tag`), so they are not repeated here (see `variants_by_tag`)."""

    name: str
    tag_field: str | None
    alternatives: tuple[Any, ...]  # untagged members, tried in schema order
    unknown: type[OpenVariant] | None
    # default variants (in `alternatives`) that also answer to their name as a tag
    named_defaults: Mapping[str, type[Any]] = msgspec.field(default_factory=dict)


def variants_by_tag(info: UnionInfo, members: Any) -> dict[str, type[Any]]:
    """The variant of each tag of the union `Annotated[members, info]`."""
    tagged = {
        member.__struct_config__.tag: member
        for member in typing.get_args(members) or (members,)
        if isinstance(member, type)
        and issubclass(member, msgspec.Struct)
        and isinstance(member.__struct_config__.tag, str)
        and not issubclass(member, _TagGuard)
    }
    return {**tagged, **info.named_defaults}


class _TagGuard(msgspec.Struct):
    def __post_init__(self) -> None:
        raise ValueError("no variant has this tag")


_TAG_GUARDS: dict[str, type[msgspec.Struct]] = {}


def tag_guard(tag_field: str) -> type[msgspec.Struct]:
    """A union member that never decodes, so a lone tagged variant's tag stays required.

    msgspec treats the tag of a single tagged struct as optional; in a union of two tagged
    structs it is required, and an object without it goes to the fallback path.
    """
    guard = _TAG_GUARDS.get(tag_field)
    if guard is None:
        guard = msgspec.defstruct(
            f"TagGuard_{tag_field}", [], bases=(_TagGuard,), tag_field=tag_field, tag="\x00guard"
        )
        _TAG_GUARDS[tag_field] = guard
    return guard


def check_alternatives(
    obj: object,
    tag_attr: str | None,
    alternatives: tuple[tuple[str | None, tuple[str, ...]], ...],
    exclusive: bool = False,
) -> None:
    """`__post_init__` check of a struct merged from a union: one alternative's fields are present.

    With a discriminator, the alternative it names must have its required fields; without
    one, at least one alternative must (exactly one for an `exclusive` oneOf).
    """
    if tag_attr is not None:
        tag = getattr(obj, tag_attr)
        for when, required in alternatives:
            if when == tag:
                _require(obj, required, f"{tag_attr} = {tag!r}")
        return
    present = sum(all(getattr(obj, a) is not UNSET for a in req) for _, req in alternatives)
    names = " or ".join("+".join(req) for _, req in alternatives)
    if present == 0:
        raise ValueError(f"Object must have {names}")
    if exclusive and present > 1:
        raise ValueError(f"Object must have exactly one of {names}")


def _require(obj: object, attrs: tuple[str, ...], context: str) -> None:
    for attr in attrs:
        if getattr(obj, attr) is UNSET:
            raise ValueError(f"Object missing required field `{attr}` (required when {context})")
