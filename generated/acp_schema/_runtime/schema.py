# Hand-written part of acp_schema (not generated): edit it here; codegen copies it into builds.
"""Markers the generated types are built from (attached with `Annotated` or used in
`__post_init__`; msgspec ignores them, the fallback path reads them)."""

from __future__ import annotations

import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

import msgspec
from msgspec import UNSET

__all__ = [
    "ON_ERROR",
    "ON_NULL",
    "SKIP_INVALID",
    "OpenEnum",
    "OpenLiteral",
    "OpenVariant",
    "UnionInfo",
    "check_alternatives",
    "tag_guard",
]

# Leniency flags per field, from the schema's x-deserialize-* annotations.
ON_ERROR = 1
ON_NULL = 2
SKIP_INVALID = 4


class OpenVariant(dict[str, Any]):
    """A variant of an open union that this schema release does not know.

    It is the JSON object exactly as received (a dict), so it keeps all its data and
    encodes back unchanged. `tag` is its discriminator value, e.g. `_vendor_thing`.
    """

    tag_field: ClassVar[str] = ""

    @property
    def tag(self) -> str:
        return str(self[self.tag_field])

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict.__repr__(self)})"


@dataclass(frozen=True, slots=True)
class OpenEnum:
    """An enum whose unknown values are valid (extensions, future releases): the fallback path
    accepts any value of `base` for it (attached with `Annotated`, ignored by msgspec)."""

    base: type


_Values = TypeVar("_Values")

if typing.TYPE_CHECKING:
    OpenLiteral: typing.TypeAlias = _Values | str
else:

    class OpenLiteral:
        """`OpenLiteral[Literal[...]]`, an inline open enum: type checkers see
        `Literal[...] | str`, msgspec decodes the closed Literal (shared strings, no
        allocation) and the fallback path accepts any other string."""

        def __class_getitem__(cls, values: Any) -> Any:
            return typing.Annotated[values, OpenEnum(str)]


# Hashed by identity: typing hashes Annotated metadata, and `variants` is a dict.
@dataclass(frozen=True, slots=True, eq=False)
class UnionInfo:
    """How the fallback path resolves one union (attached with `Annotated`, ignored by msgspec)."""

    name: str
    tag_field: str | None
    variants: Mapping[str, type[Any]]  # by tag; a default variant may answer to its name too
    alternatives: tuple[Any, ...]  # untagged members, tried in schema order
    unknown: type[OpenVariant] | None


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
